//! The CEL types kube gives schema values (`SchemaDeclType`), named as its checker prints
//! them: objects by a generated root name plus their path (`selfType123.spec.obj`, list
//! items `.@idx`, map values `.@elem`), `list(string)`, `map(string, int)`, formats as
//! `timestamp`, `duration` and `bytes`, and `dyn` for int-or-string and untyped values.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A CEL type as the checker sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum CelType {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Timestamp,
    Duration,
    List(Box<CelType>),
    Map(Box<CelType>, Box<CelType>),
    /// An object with fixed properties (CEL-escaped names).
    Object(Arc<ObjectType>),
    /// `optional_type(T)`: `oldSelf` under `optionalOldSelf`, and what selecting or
    /// indexing into one gives.
    Optional(Box<CelType>),
    /// A type kube's libraries declare (`kubernetes.Quantity`, `net.IP`), by its name.
    Opaque(&'static str),
    /// `type(T)`: what `type(x)` gives and what a type's name (`int`) refers to.
    Type(Box<CelType>),
    /// Anything: checks pass and give `dyn`.
    Dyn,
    /// An expression that already failed: it raises no further errors.
    Error,
}

/// An object type: its name and its fields.
#[derive(Debug, PartialEq)]
pub struct ObjectType {
    pub name: String,
    pub fields: BTreeMap<String, CelType>,
}

impl CelType {
    /// Whether no check can refuse this type (`dyn`, or an earlier error).
    pub fn is_open(&self) -> bool {
        matches!(self, CelType::Dyn | CelType::Error)
    }

    /// Whether `null` is assignable to a value of this type (cel-go's legacy nullable
    /// types: messages, opaque types, timestamps and durations).
    pub fn is_nullable(&self) -> bool {
        matches!(
            self,
            CelType::Null
                | CelType::Object(_)
                | CelType::Optional(_)
                | CelType::Opaque(_)
                | CelType::Timestamp
                | CelType::Duration
        )
    }

    /// Whether the numeric types cross-compare (`CrossTypeNumericComparisons`).
    pub fn is_numeric(&self) -> bool {
        matches!(self, CelType::Int | CelType::Uint | CelType::Double)
    }

    /// Whether a value of `self` and one of `other` unify (type parameters bind to either).
    pub fn unifies(&self, other: &CelType) -> bool {
        match (self, other) {
            (a, b) if a.is_open() || b.is_open() => true,
            (CelType::Null, t) | (t, CelType::Null) => t.is_nullable(),
            // Types compare whatever they are types of.
            (CelType::Type(_), CelType::Type(_)) => true,
            (CelType::Optional(a), CelType::Optional(b)) => a.unifies(b),
            (CelType::List(a), CelType::List(b)) => a.unifies(b),
            (CelType::Map(ka, va), CelType::Map(kb, vb)) => ka.unifies(kb) && va.unifies(vb),
            (CelType::Object(a), CelType::Object(b)) => a.name == b.name,
            (a, b) => a == b,
        }
    }

    /// The type of a schema node named `name` (`x-kubernetes-embedded-resource` objects and
    /// the resource root get `apiVersion`, `kind` and `metadata.name`/`generateName`).
    pub fn of_schema(s: &JSONSchemaProps, name: &str, resource: bool) -> CelType {
        if s.x_kubernetes_int_or_string == Some(true) {
            return CelType::Dyn;
        }
        match s.type_.as_deref() {
            Some("boolean") => CelType::Bool,
            Some("integer") => CelType::Int,
            Some("number") => CelType::Double,
            Some("string") => match s.format.as_deref() {
                Some("date" | "date-time") => CelType::Timestamp,
                Some("duration") => CelType::Duration,
                Some("byte") => CelType::Bytes,
                _ => CelType::String,
            },
            Some("array") => {
                let item = s.items.as_ref().and_then(|i| match i {
                    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(s) => Some(s.as_ref()),
                    _ => None,
                });
                let item = item.map_or(CelType::Dyn, |i| Self::of_schema(i, &format!("{name}.@idx"), false));
                CelType::List(Box::new(item))
            }
            Some("object") => Self::object(s, name, resource || s.x_kubernetes_embedded_resource == Some(true)),
            _ => CelType::Dyn,
        }
    }

    /// Whether kube's `SchemaDeclType` gives values of `s` a type: an object leaves out
    /// the properties it gives none (a schema without a type, a list or map of them), so
    /// that a rule naming one is refused (`undefined field`).
    fn is_declared(s: &JSONSchemaProps) -> bool {
        if s.x_kubernetes_int_or_string == Some(true) {
            return true;
        }
        match s.type_.as_deref() {
            Some("array") => match &s.items {
                Some(JSONSchemaPropsOrArray::Schema(item)) => Self::is_declared(item),
                _ => false,
            },
            Some("object") => match &s.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(value)) => Self::is_declared(value),
                _ => true,
            },
            Some("string" | "boolean" | "number" | "integer") => true,
            _ => false,
        }
    }

    fn object(s: &JSONSchemaProps, name: &str, resource: bool) -> CelType {
        if let Some(JSONSchemaPropsOrBool::Schema(value)) = &s.additional_properties
            && s.properties.is_none()
        {
            let value = Self::of_schema(value, &format!("{name}.@elem"), false);
            return CelType::Map(Box::new(CelType::String), Box::new(value));
        }
        if matches!(s.additional_properties, Some(JSONSchemaPropsOrBool::Bool(true))) {
            return CelType::Map(Box::new(CelType::String), Box::new(CelType::Dyn));
        }
        let mut fields = BTreeMap::new();
        for (prop, schema) in s.properties.iter().flatten() {
            if resource && prop == "metadata" {
                continue;
            }
            if let Some(escaped) = escape(prop).filter(|_| Self::is_declared(schema)) {
                fields.insert(escaped, Self::of_schema(schema, &format!("{name}.{prop}"), false));
            }
        }
        if resource {
            fields.insert("apiVersion".into(), CelType::String);
            fields.insert("kind".into(), CelType::String);
            let metadata = ObjectType {
                name: format!("{name}.metadata"),
                fields: [("name".to_string(), CelType::String), ("generateName".to_string(), CelType::String)].into(),
            };
            fields.insert("metadata".into(), CelType::Object(Arc::new(metadata)));
        }
        CelType::Object(Arc::new(ObjectType { name: name.to_string(), fields }))
    }
}

impl fmt::Display for CelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CelType::Bool => f.write_str("bool"),
            CelType::Int => f.write_str("int"),
            CelType::Uint => f.write_str("uint"),
            CelType::Double => f.write_str("double"),
            CelType::String => f.write_str("string"),
            CelType::Bytes => f.write_str("bytes"),
            CelType::Null => f.write_str("null"),
            CelType::Timestamp => f.write_str("timestamp"),
            CelType::Duration => f.write_str("duration"),
            CelType::List(item) => write!(f, "list({item})"),
            CelType::Map(k, v) => write!(f, "map({k}, {v})"),
            CelType::Object(o) => f.write_str(&o.name),
            CelType::Optional(inner) => write!(f, "optional_type({inner})"),
            CelType::Opaque(name) => f.write_str(name),
            CelType::Type(of) => write!(f, "type({of})"),
            CelType::Dyn => f.write_str("dyn"),
            CelType::Error => f.write_str("!error!"),
        }
    }
}

const CEL_RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The field a reserved word names when written as itself (`self.namespace` for the
/// property `namespace`, declared as `__namespace__`): kube's checker and evaluator look
/// the escaped name up too (`recognizeKeywordAsFieldName`).
pub fn keyword_field(name: &str) -> Option<String> {
    CEL_RESERVED.contains(&name).then(|| format!("__{name}__"))
}

/// kube's `cel.Escape`: the CEL identifier of a property name, `None` for names CEL can
/// not reach (they are left out of `self`).
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if CEL_RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '_' if chars.peek() == Some(&'_') => {
                chars.next();
                out.push_str("__underscores__");
            }
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
    }
    Some(out)
}
