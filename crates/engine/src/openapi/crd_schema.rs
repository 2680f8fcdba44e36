//! A CRD version's schema as the definitions kube-apiserver publishes for it.
//!
//! The steps are apiextensions-apiserver's OpenAPI builder's: keep what a structural
//! schema holds (dropping `example`, `externalDocs`, `$ref`, `definitions`, ...), unfold
//! `x-kubernetes-int-or-string` into its `anyOf`, for swagger 2.0 strip what kubectl's
//! client-side validation cannot cope with (`ToStructuralOpenAPIV2`), then add the
//! Kubernetes-native parts: `apiVersion`, `kind`, a `metadata` reference, the same for
//! embedded resources, `x-kubernetes-group-version-kind` and
//! `x-kubernetes-selectable-fields`. The list kind gets the standard list schema.

use super::json::{Escape, write_str, write_value};
use super::schema::{FIELD_ORDER, FLOAT_FIELDS, RULE_ORDER, V2_PREFIX, V3_PREFIX, is_omitted, reference};
use crate::registry::structural::is_structural;
use crate::representation::gofmt::go_json_float;
use bytes::Bytes;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};

pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
pub const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION: &str = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";
const EMBEDDED_API_VERSION_DESCRIPTION: &str = "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const EMBEDDED_KIND_DESCRIPTION: &str = "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

const PRESERVE_UNKNOWN: &str = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED: &str = "x-kubernetes-embedded-resource";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
const VALIDATIONS: &str = "x-kubernetes-validations";
/// `ValidationRule`'s fields by name.
const RULE_FIELDS_SORTED: [&str; 6] =
    ["fieldPath", "message", "messageExpression", "optionalOldSelf", "reason", "rule"];

/// Fields of a structural schema besides `items`, `properties`, `additionalProperties` and
/// the logical junctors (generic fields, value validations and extensions).
const KEPT: [&str; 28] = [
    "description",
    "type",
    "title",
    "default",
    "nullable",
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    PRESERVE_UNKNOWN,
    EMBEDDED,
    INT_OR_STRING,
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// What the builder needs to know about one served version of a CRD (spec names, as kube's
/// builder uses them).
#[derive(Debug, Clone, PartialEq)]
pub struct CrdVersion {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub list_kind: String,
    pub plural: String,
    /// Where `openAPIV3Schema` is, when the version has one.
    pub schema: Option<Schema>,
    /// `selectableFields[].jsonPath`.
    pub selectable_fields: Vec<String>,
}

/// Where a version's `openAPIV3Schema` is read from.
#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    /// Its text in the stored CRD's bytes (a slice of them): the schema is read when the
    /// version's definitions are written, on a writer thread, and dropped after — holding
    /// the schemas of thousands of CRDs as `serde_json` trees at once cost several times
    /// their JSON. Whether it is structural is found the first time and kept in
    /// `structural`, shared by every document written from this revision of the CRD.
    Stored { text: Bytes, structural: Arc<OnceLock<bool>> },
}

#[cfg(test)]
impl Schema {
    /// `schema` as a version's.
    pub fn of(schema: &Value) -> Schema {
        Schema::Stored { text: Bytes::from(schema.to_string()), structural: Arc::default() }
    }
}

impl CrdVersion {
    /// The version's `openAPIV3Schema`, when it has a structural one.
    pub fn schema(&self) -> Option<Value> {
        let Schema::Stored { text, structural } = self.schema.as_ref()?;
        let schema: Value = serde_json::from_slice(text).ok()?;
        let structural =
            *structural.get_or_init(|| JSONSchemaProps::deserialize(&schema).is_ok_and(|typed| is_structural(&typed)));
        structural.then_some(schema)
    }
}

/// The definition name kube-openapi gives a CRD kind: the group reversed, then version and
/// kind (`stable.example.com/v1.Widget` → `com.example.stable.v1.Widget`).
pub fn definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The OpenAPI flavour a definition is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Swagger 2.0 (`/openapi/v2`): `ToStructuralOpenAPIV2`'s reductions, `#/definitions/`.
    V2,
    /// OpenAPI v3: int-or-string unfolded, references with siblings wrapped in `allOf`.
    V3,
}

/// The kind's definition as JSON text (kube-openapi's field order), and the built-in
/// definitions it refers to; `schema` is the version's structural schema, if any
/// ([`CrdVersion::schema`]).
///
/// One pass over the CRD's schema, borrowing it: the steps kube applies one after another
/// to copies (structural, unfold, swagger 2.0 reductions, Kubernetes-native properties,
/// field order) are decided per node and written straight out — with thousands of CRDs the
/// copies were most of the documents' cost.
pub fn kind_definition(crd: &CrdVersion, schema: Option<&Value>, form: Form) -> (String, Vec<&'static str>) {
    let mut w = Writer { form, out: String::new(), refs: Vec::new() };
    let root = Root { gvk: gvk(crd, &crd.kind), selectable: selectable_fields(crd) };
    match schema {
        Some(schema) if !(form == Form::V2 && is_true(as_map(schema), PRESERVE_UNKNOWN)) => {
            w.node(schema, false, Some(&root));
        }
        // No (structural) schema, or a root preserving unknown fields in swagger 2.0:
        // properties would make kubectl reject every field the schema does not list.
        _ => {
            w.out.push_str("{\"type\":\"object\",\"x-kubernetes-group-version-kind\":");
            w.value(&root.gvk);
            w.out.push_str(",\"x-kubernetes-selectable-fields\":");
            w.value(&root.selectable);
            w.out.push('}');
        }
    }
    (w.out, w.refs)
}

/// The list kind's definition.
pub fn list_definition(crd: &CrdVersion) -> Value {
    let item = definition_name(&crd.group, &crd.version, &crd.kind);
    let mut out = object_map(json!({
        "description": format!("{} is a list of {}", crd.list_kind, crd.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"description": API_VERSION_DESCRIPTION, "type": "string"},
            "items": {
                "description": format!("List of {}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md", crd.plural),
                "type": "array",
                "items": reference(&item),
            },
            "kind": {"description": KIND_DESCRIPTION, "type": "string"},
            "metadata": described_ref(LIST_METADATA_DESCRIPTION, LIST_META),
        },
    }));
    out.insert("x-kubernetes-group-version-kind".into(), gvk(crd, &crd.list_kind));
    out.insert("x-kubernetes-selectable-fields".into(), selectable_fields(crd));
    Value::Object(out)
}

fn gvk(crd: &CrdVersion, kind: &str) -> Value {
    json!([{"group": crd.group, "kind": kind, "version": crd.version}])
}

fn selectable_fields(crd: &CrdVersion) -> Value {
    Value::Array(crd.selectable_fields.iter().map(|p| json!({"fieldPath": p.strip_prefix('.').unwrap_or(p)})).collect())
}

fn described_ref(description: &str, definition: &str) -> Value {
    let mut r = object_map(reference(definition));
    r.insert("description".into(), Value::String(description.into()));
    Value::Object(r)
}

fn object_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn as_map(v: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    match v {
        Value::Object(m) => m,
        _ => EMPTY.get_or_init(Map::new),
    }
}

fn is_true(s: &Map<String, Value>, key: &str) -> bool {
    s.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// What the root adds to its extensions.
struct Root {
    gvk: Value,
    selectable: Value,
}

/// A property of the written schema: the CRD's own, or one kube adds.
#[derive(Clone, Copy)]
enum Prop<'a> {
    Schema(&'a Value),
    /// `{description, type: string}`.
    Text(&'static str),
    /// `{description, $ref: ObjectMeta}`.
    Meta(&'static str),
}

/// An element of the written `required`.
#[derive(Clone, Copy)]
enum Req<'a> {
    Value(&'a Value),
    Added(&'static str),
}

/// `[{type: integer}, {type: string}]`, what int-or-string unfolds to.
const INT_OR_STRING_PATTERN: &str = r#"[{"type":"integer"},{"type":"string"}]"#;

struct Writer {
    form: Form,
    out: String,
    /// The built-in definitions written references point to.
    refs: Vec<&'static str>,
}

impl Writer {
    /// Strings as each document's encoder escapes them.
    fn escape(&self) -> Escape {
        match self.form {
            Form::V2 => Escape::Plain,
            Form::V3 => Escape::Html,
        }
    }

    fn str(&mut self, s: &str) {
        write_str(s, self.escape(), &mut self.out);
    }

    fn value(&mut self, v: &Value) {
        write_value(v, self.escape(), &mut self.out);
    }

    fn key(&mut self, first: &mut bool, key: &str) {
        if !std::mem::take(first) {
            self.out.push(',');
        }
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
    }

    /// One schema node: what a structural schema keeps of `src` (`nested` below a
    /// junctor, which keeps no `additionalProperties` and is not unfolded, reduced or
    /// given embedded fields), transformed for the form, in kube-openapi's field order.
    fn node(&mut self, src: &Value, nested: bool, root: Option<&Root>) {
        let m = as_map(src);
        let v2 = self.form == Form::V2;
        let preserve = is_true(m, PRESERVE_UNKNOWN);
        let nullable = is_true(m, "nullable");
        // What swagger 2.0 drops (`ToStructuralOpenAPIV2`).
        let drop_nullable = v2 && nullable;
        let drop_children = v2 && (nullable || preserve);
        let items = m.get("items").filter(|v| v.is_object() && !drop_children);
        let ty = m.get("type");
        let drop_type = drop_nullable
            || (v2 && items.is_none() && ty.and_then(Value::as_str) == Some("array"))
            || (v2 && preserve && ty.and_then(Value::as_str) == Some("object"));
        let own_props = m.get("properties").and_then(Value::as_object).filter(|_| !drop_children);
        let ap = m.get("additionalProperties").filter(|v| !nested && (v.is_boolean() || v.is_object()));
        let junctor = |k: &str| m.get(k).and_then(Value::as_array).filter(|_| !v2);
        let not = m.get("not").filter(|v| v.is_object() && !v2);
        // Kubernetes-native properties: the root's, then an embedded resource's.
        let embedded = !nested && is_true(m, EMBEDDED) && !(v2 && preserve);
        let mut added: Vec<(&'static str, Prop<'static>)> = Vec::new();
        if root.is_some() {
            added.extend([
                ("metadata", Prop::Meta(METADATA_DESCRIPTION)),
                ("apiVersion", Prop::Text(API_VERSION_DESCRIPTION)),
                ("kind", Prop::Text(KIND_DESCRIPTION)),
            ]);
        }
        if embedded {
            added.extend([
                ("apiVersion", Prop::Text(EMBEDDED_API_VERSION_DESCRIPTION)),
                ("kind", Prop::Text(EMBEDDED_KIND_DESCRIPTION)),
                ("metadata", Prop::Meta(METADATA_DESCRIPTION)),
            ]);
        }
        let props = (own_props.is_some() || !added.is_empty()).then(|| {
            let mut props: Vec<(&str, Prop)> =
                own_props.iter().flat_map(|p| p.iter()).map(|(k, v)| (k.as_str(), Prop::Schema(v))).collect();
            for (k, p) in &added {
                match props.binary_search_by(|(n, _)| (*n).cmp(k)) {
                    Ok(i) => props[i].1 = *p,
                    Err(i) => props.insert(i, (k, *p)),
                }
            }
            props
        });
        let required = self.required(m, own_props, ap, embedded);
        // v3: `x-kubernetes-int-or-string` spelled out as `anyOf`, or first in `allOf`.
        let (mut any_of_pattern, mut all_of_pattern) = (false, false);
        if !v2 && !nested && is_true(m, INT_OR_STRING) {
            let any_of = m.get("anyOf").and_then(Value::as_array);
            let all_of_first = m.get("allOf").and_then(Value::as_array).and_then(|a| a.first());
            let already = any_of.is_some_and(|a| is_pattern(a))
                || all_of_first.and_then(|f| f.get("anyOf")).and_then(Value::as_array).is_some_and(|a| is_pattern(a));
            if !already {
                if any_of.is_some() {
                    all_of_pattern = true;
                } else {
                    any_of_pattern = true;
                }
            }
        }

        let mut first = true;
        self.out.push('{');
        // The plain fields the node has, in kube-openapi's order: a node has a few of the
        // twenty there are, and looking each of those up was a tenth of a build.
        let mut plain: Vec<(usize, &str)> = m.keys().filter_map(|k| Some((plain_rank(k)?, k.as_str()))).collect();
        plain.sort_unstable();
        for (_, key) in plain {
            if (key == "type" && drop_type) || (key == "nullable" && drop_nullable) {
                continue;
            }
            self.kept(&mut first, m, key);
        }
        if let Some(required) = required.filter(|r| !r.is_empty()) {
            self.key(&mut first, "required");
            self.out.push('[');
            for (i, r) in required.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                match r {
                    Req::Value(v) => self.value(v),
                    Req::Added(s) => self.str(s),
                }
            }
            self.out.push(']');
        }
        if let Some(items) = items {
            self.key(&mut first, "items");
            self.node(items, nested, None);
        }
        for key in ["allOf", "oneOf", "anyOf"] {
            let list = junctor(key);
            let pattern = (key == "allOf" && all_of_pattern) || (key == "anyOf" && any_of_pattern);
            if pattern && key == "anyOf" {
                self.key(&mut first, key);
                self.out.push_str(INT_OR_STRING_PATTERN);
                continue;
            }
            if !pattern && list.is_none_or(|l| l.is_empty()) {
                continue;
            }
            self.key(&mut first, key);
            self.out.push('[');
            if pattern {
                self.out.push_str("{\"anyOf\":");
                self.out.push_str(INT_OR_STRING_PATTERN);
                self.out.push('}');
            }
            for (i, s) in list.into_iter().flatten().enumerate() {
                if i > 0 || pattern {
                    self.out.push(',');
                }
                self.node(s, true, None);
            }
            self.out.push(']');
        }
        if let Some(not) = not {
            self.key(&mut first, "not");
            self.node(not, true, None);
        }
        if let Some(props) = props.filter(|p| !p.is_empty()) {
            self.key(&mut first, "properties");
            self.out.push('{');
            for (i, (name, p)) in props.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                self.str(name);
                self.out.push(':');
                match p {
                    Prop::Schema(s) => self.node(s, nested, None),
                    Prop::Text(description) => {
                        self.out.push_str("{\"description\":");
                        self.str(description);
                        self.out.push_str(",\"type\":\"string\"}");
                    }
                    Prop::Meta(description) => self.meta(description),
                }
            }
            self.out.push('}');
        }
        match ap {
            Some(Value::Bool(b)) => {
                self.key(&mut first, "additionalProperties");
                self.out.push_str(if *b { "true" } else { "false" });
            }
            Some(ap) => {
                self.key(&mut first, "additionalProperties");
                self.node(ap, false, None);
            }
            None => {}
        }
        // Extensions, sorted (Go writes its extension map so), the root's among them.
        self.kept(&mut first, m, EMBEDDED);
        if let Some(root) = root {
            self.key(&mut first, "x-kubernetes-group-version-kind");
            self.value(&root.gvk);
        }
        for key in [INT_OR_STRING, "x-kubernetes-list-map-keys", "x-kubernetes-list-type", "x-kubernetes-map-type"] {
            self.kept(&mut first, m, key);
        }
        self.kept(&mut first, m, PRESERVE_UNKNOWN);
        if let Some(root) = root {
            self.key(&mut first, "x-kubernetes-selectable-fields");
            self.value(&root.selectable);
        }
        self.kept(&mut first, m, VALIDATIONS);
        self.out.push('}');
    }

    /// `required` as written: swagger 2.0 leaves out nullable properties (and all of it
    /// when additional properties are nullable); an embedded resource requires `kind` and
    /// `apiVersion`. `None` when there is no list (or not a list).
    fn required<'a>(
        &self,
        m: &'a Map<String, Value>,
        props: Option<&'a Map<String, Value>>,
        ap: Option<&'a Value>,
        embedded: bool,
    ) -> Option<Vec<Req<'a>>> {
        let listed = m.get("required").and_then(Value::as_array);
        let mut out: Vec<Req> = match listed {
            Some(list) if self.form == Form::V2 => {
                let nullable = |name: &str| {
                    props.and_then(|p| p.get(name)).and_then(|p| p.get("nullable")) == Some(&Value::Bool(true))
                };
                if ap.and_then(|ap| ap.get("nullable")) == Some(&Value::Bool(true)) {
                    Vec::new()
                } else {
                    list.iter().filter(|r| !r.as_str().is_some_and(nullable)).map(Req::Value).collect()
                }
            }
            Some(list) => list.iter().map(Req::Value).collect(),
            None if embedded => Vec::new(),
            None => return None,
        };
        if embedded {
            for field in ["kind", "apiVersion"] {
                let present = out.iter().any(|r| match r {
                    Req::Value(v) => v.as_str() == Some(field),
                    Req::Added(a) => *a == field,
                });
                if !present {
                    out.push(Req::Added(field));
                }
            }
        }
        Some(out)
    }

    /// A field kept as the CRD has it, unless kube would leave it out: Go omits zero
    /// values (and the boolean extensions are plain `bool`s there), and swagger 2.0 has no
    /// defaults.
    fn kept(&mut self, first: &mut bool, m: &Map<String, Value>, key: &str) {
        let Some(v) = m.get(key) else { return };
        let omitted = match key {
            "default" if self.form == Form::V2 => true,
            EMBEDDED | INT_OR_STRING => v == &Value::Bool(false),
            k if k.starts_with("x-") => false,
            _ => is_omitted(key, v),
        };
        if omitted {
            return;
        }
        self.key(first, key);
        match v {
            Value::Number(n) if FLOAT_FIELDS.contains(&key) => match n.as_f64() {
                Some(f) => self.out.push_str(&go_json_float(f)),
                None => self.value(v),
            },
            Value::Array(rules) if key == VALIDATIONS => {
                self.out.push('[');
                for (i, rule) in rules.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    let mut first = true;
                    self.out.push('{');
                    // v3 keeps `ValidationRule`'s field order; swagger 2.0 holds the rules
                    // as plain maps, written sorted.
                    let order = match self.form {
                        Form::V2 => RULE_FIELDS_SORTED,
                        Form::V3 => RULE_ORDER,
                    };
                    for k in order {
                        if let Some(x) = rule.get(k).filter(|x| !is_omitted(k, x)) {
                            self.key(&mut first, k);
                            self.value(x);
                        }
                    }
                    self.out.push('}');
                }
                self.out.push(']');
            }
            _ => self.value(v),
        }
    }

    /// `metadata`: a described reference to `ObjectMeta`.
    fn meta(&mut self, description: &str) {
        self.refs.push(OBJECT_META);
        self.out.push_str("{\"description\":");
        self.str(description);
        match self.form {
            Form::V2 => self.out.push_str(",\"$ref\":\""),
            Form::V3 => self.out.push_str(",\"allOf\":[{\"$ref\":\""),
        }
        self.out.push_str(match self.form {
            Form::V2 => V2_PREFIX,
            Form::V3 => V3_PREFIX,
        });
        self.out.push_str(OBJECT_META);
        self.out.push_str(match self.form {
            Form::V2 => "\"}",
            Form::V3 => "\"}]}",
        });
    }
}

/// Where `key` comes among the plain fields a structural schema keeps, in kube-openapi's
/// order (those before `required`); `None` for any other field.
fn plain_rank(key: &str) -> Option<usize> {
    static RANKS: std::sync::OnceLock<std::collections::HashMap<&'static str, usize>> = std::sync::OnceLock::new();
    let ranks = RANKS.get_or_init(|| {
        let plain = FIELD_ORDER.iter().take_while(|k| **k != "required").filter(|k| KEPT.contains(*k));
        plain.enumerate().map(|(rank, k)| (*k, rank)).collect()
    });
    ranks.get(key).copied()
}

/// Whether a junctor's schemas are, as a structural schema keeps them, exactly
/// `[{type: integer}, {type: string}]`.
fn is_pattern(list: &[Value]) -> bool {
    let just_type = |v: &Value, t: &str| {
        let Value::Object(m) = v else { return false };
        let kept = KEPT.iter().filter(|k| m.contains_key(**k)).count()
            + ["items", "properties", "not"].iter().filter(|k| m.get(**k).is_some_and(Value::is_object)).count()
            + ["allOf", "anyOf", "oneOf"].iter().filter(|k| m.get(**k).is_some_and(Value::is_array)).count();
        kept == 1 && m.get("type").and_then(Value::as_str) == Some(t)
    };
    list.len() == 2 && just_type(&list[0], "integer") && just_type(&list[1], "string")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(schema: Value) -> CrdVersion {
        CrdVersion {
            group: "stable.example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            plural: "widgets".into(),
            schema: Some(Schema::of(&schema)),
            selectable_fields: vec![".spec.color".into()],
        }
    }

    /// The kind's definition, read back.
    fn kind_def(crd: &CrdVersion, v2: bool) -> Value {
        let (text, _) = kind_definition(crd, crd.schema().as_ref(), if v2 { Form::V2 } else { Form::V3 });
        serde_json::from_str(&text).expect("JSON")
    }

    #[test]
    fn definition_names_reverse_the_group() {
        assert_eq!(definition_name("stable.example.com", "v1", "Widget"), "com.example.stable.v1.Widget");
    }

    #[test]
    fn the_kind_gets_type_meta_object_meta_and_its_markers() {
        let def = kind_def(
            &crd(
                json!({"type": "object", "example": {}, "properties": {"metadata": {"type": "object"}, "spec": {"type": "object", "externalDocs": {"url": "x"}}}}),
            ),
            true,
        );
        assert_eq!(
            def["properties"]["metadata"],
            json!({"description": METADATA_DESCRIPTION, "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
        );
        assert_eq!(def["properties"]["spec"], json!({"type": "object"}));
        assert_eq!(def["properties"]["kind"]["type"], "string");
        assert!(def.get("example").is_none());
        assert_eq!(
            def["x-kubernetes-group-version-kind"],
            json!([{"group": "stable.example.com", "kind": "Widget", "version": "v1"}])
        );
        assert_eq!(def["x-kubernetes-selectable-fields"], json!([{"fieldPath": "spec.color"}]));
    }

    #[test]
    fn int_or_string_unfolds_and_swagger_2_drops_junctors() {
        let schema = json!({"type": "object", "properties": {
            "port": {"x-kubernetes-int-or-string": true},
            "both": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        }});
        let v3 = kind_def(&crd(schema.clone()), false);
        assert_eq!(v3["properties"]["port"]["anyOf"], json!([{"type": "integer"}, {"type": "string"}]));
        assert!(v3["properties"]["both"].get("allOf").is_none());
        let v2 = kind_def(&crd(schema), true);
        assert_eq!(v2["properties"]["port"], json!({"x-kubernetes-int-or-string": true}));
    }

    #[test]
    fn swagger_2_reduces_what_kubectl_cannot_validate() {
        let schema = json!({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "string", "nullable": true},
            "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"c": {"type": "string"}}},
            "list": {"type": "array", "items": {"type": "object", "nullable": true, "properties": {"x": {"type": "string"}}}},
            "emb": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
        }});
        let v2 = kind_def(&crd(schema.clone()), true);
        let p = &v2["properties"];
        assert_eq!(v2["required"], json!(["b"]));
        assert_eq!(p["a"], json!({}));
        assert_eq!(p["b"], json!({"x-kubernetes-preserve-unknown-fields": true}));
        assert_eq!(p["list"], json!({"type": "array", "items": {}}));
        assert_eq!(
            p["emb"],
            json!({"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true})
        );
        let v3 = kind_def(&crd(schema), false);
        assert_eq!(v3["properties"]["emb"]["required"], json!(["kind", "apiVersion"]));
        assert_eq!(
            v3["properties"]["emb"]["properties"]["metadata"]["allOf"],
            json!([{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}])
        );
    }

    #[test]
    fn a_root_preserving_unknown_fields_is_a_bare_object_in_swagger_2() {
        let schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"spec": {"type": "object"}}});
        let v2 = kind_def(&crd(schema.clone()), true);
        assert_eq!(v2["type"], "object");
        assert!(v2.get("properties").is_none());
        assert!(kind_def(&crd(schema), false)["properties"].get("spec").is_some());
        let none = kind_def(&CrdVersion { schema: None, ..crd(json!({})) }, false);
        assert_eq!(none.as_object().map(|m| m.len()), Some(3));
    }

    #[test]
    fn the_list_kind_lists_items_of_the_kind() {
        let list = list_definition(&crd(json!({"type": "object"})));
        assert_eq!(list["description"], "WidgetList is a list of Widget");
        assert_eq!(list["properties"]["items"]["items"], json!({"$ref": "#/definitions/com.example.stable.v1.Widget"}));
        assert_eq!(list["x-kubernetes-group-version-kind"][0]["kind"], "WidgetList");
    }
}
