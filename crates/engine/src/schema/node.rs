//! The compiled form of one `JSONSchemaProps` node.
//!
//! k8s-openapi models every Go field as an `Option`; a [`Node`] resolves them once to
//! Go's zero-value meaning, compiles `pattern` and the CEL rules, and strips the formats
//! kube does not validate (`StripUnsupportedFormatsPostProcess`). The structural spine
//! (`properties`, `items`, `additionalProperties`) drives pruning, defaulting, list-type,
//! embedded-metadata and CEL checks; the junctors (`allOf`, `anyOf`, `oneOf`, `not`) only
//! add value validations, exactly as in a structural schema.

use super::cel_rule::CompiledRule;
use super::celcheck;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// `additionalProperties`: absent, a boolean, or a schema for every other key.
#[derive(Debug, Default)]
pub enum Additional {
    #[default]
    Absent,
    Allows(bool),
    Schema(Box<Node>),
}

/// A compiled `pattern`: the source as written (messages quote it) and the regex, or the
/// compile error kube reports on every value.
#[derive(Debug)]
pub struct Pattern {
    pub source: String,
    pub regex: Result<regex::Regex, String>,
}

/// Regexes compiled so far, by pattern: generated CRDs repeat the same few patterns (a
/// name's, a label's) in hundreds of nodes, and each compiled regex takes tens of KiB.
/// A `Regex` clone shares its compiled program. Bounded: cleared when full.
static REGEXES: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, Result<regex::Regex, String>>>> =
    std::sync::LazyLock::new(Default::default);
const REGEXES_HELD: usize = 4096;

/// `pattern` compiled, shared with every node that has the same pattern.
fn shared_regex(pattern: &str) -> Result<regex::Regex, String> {
    let mut held = REGEXES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(compiled) = held.get(pattern) {
        return compiled.clone();
    }
    // Matched as Go matches it (ASCII `\w`, `\Q...\E`, literal `{`).
    let compiled = regex::Regex::new(&super::go_pattern::to_rust(pattern)).map_err(|e| e.to_string());
    if held.len() >= REGEXES_HELD {
        held.clear();
    }
    held.insert(pattern.to_string(), compiled.clone());
    compiled
}

/// One schema node with Go's zero values resolved.
#[derive(Debug, Default)]
pub struct Node {
    /// The `type` as written (`""` when unset).
    pub type_: String,
    /// The types the value validator accepts: `[type]`, `["integer", "string"]` for
    /// `x-kubernetes-int-or-string`, empty when untyped.
    pub types: Vec<String>,
    pub int_or_string: bool,
    pub nullable: bool,
    /// The format kube validates with (unsupported ones are stripped to `""`).
    pub format: String,
    /// The format as written, which decides the CEL type (`date-time` → timestamp).
    pub raw_format: String,
    pub enum_: Option<Vec<Value>>,
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: Option<Pattern>,
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
    pub properties: BTreeMap<String, Node>,
    pub additional_properties: Additional,
    pub items: Option<Box<Node>>,
    pub all_of: Vec<Node>,
    pub any_of: Vec<Node>,
    pub one_of: Vec<Node>,
    pub not: Option<Box<Node>>,
    pub default: Option<Value>,
    pub preserve_unknown_fields: bool,
    pub embedded_resource: bool,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    pub map_type: Option<String>,
    pub rules: Vec<CompiledRule>,
    /// The deepest nesting of any rule here or below (0: no rules), which bounds the stack
    /// their evaluation takes.
    pub cel_depth: usize,
    /// Whether this node or one under it (through properties, `additionalProperties` and
    /// items) is an `x-kubernetes-embedded-resource`: the walks for those skip the rest.
    pub embedded_below: bool,
    /// Whether this node or one under it (the same way) is a `set` or `map` list, whose
    /// items' uniqueness is checked.
    pub unique_lists_below: bool,
}

/// String formats kube-apiserver 1.32 validates, normalized without dashes as go-openapi
/// looks them up (`date-time` → `datetime`): apiextensions' `supportedFormats`, which has
/// no `quantity` (and no `k8s-short-name`/`k8s-long-name`, which came in 1.34).
const SUPPORTED_STRING_FORMATS: [&str; 24] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
];

/// Go's `StripUnsupportedFormatsPostProcess`: formats kube does not know are ignored.
/// It does not look at the type: `int32`, `int64`, `float` and `double` go (they are no
/// string formats), and a string format stays on any type (`date` on a boolean checks a
/// string value as a date).
fn supported_format(format: &str) -> String {
    let keep = SUPPORTED_STRING_FORMATS.contains(&format.replace('-', "").as_str());
    if keep { format.to_string() } else { String::new() }
}

impl Node {
    /// Compiles a schema node and everything under it.
    pub fn compile(s: &JSONSchemaProps) -> Node {
        let type_ = s.type_.clone().unwrap_or_default();
        let int_or_string = s.x_kubernetes_int_or_string.unwrap_or(false);
        let types = if int_or_string {
            vec!["integer".to_string(), "string".to_string()]
        } else if type_.is_empty() {
            vec![]
        } else {
            vec![type_.clone()]
        };
        let raw_format = s.format.clone().unwrap_or_default();
        let format = supported_format(&raw_format);
        let pattern =
            s.pattern.as_ref().filter(|p| !p.is_empty()).map(|p| Pattern { source: p.clone(), regex: shared_regex(p) });
        let compile_all = |v: &Option<Vec<JSONSchemaProps>>| v.iter().flatten().map(Node::compile).collect();
        let mut node = Node {
            types,
            int_or_string,
            nullable: s.nullable.unwrap_or(false),
            format,
            raw_format,
            enum_: s.enum_.as_ref().map(|e| e.iter().map(|j| j.0.clone()).collect()),
            maximum: s.maximum,
            exclusive_maximum: s.exclusive_maximum.unwrap_or(false),
            minimum: s.minimum,
            exclusive_minimum: s.exclusive_minimum.unwrap_or(false),
            multiple_of: s.multiple_of,
            max_length: s.max_length,
            min_length: s.min_length,
            pattern,
            max_items: s.max_items,
            min_items: s.min_items,
            unique_items: s.unique_items.unwrap_or(false),
            max_properties: s.max_properties,
            min_properties: s.min_properties,
            required: s.required.clone().unwrap_or_default(),
            properties: s.properties.iter().flatten().map(|(k, v)| (k.clone(), Node::compile(v))).collect(),
            additional_properties: match &s.additional_properties {
                None => Additional::Absent,
                Some(JSONSchemaPropsOrBool::Bool(b)) => Additional::Allows(*b),
                Some(JSONSchemaPropsOrBool::Schema(x)) => Additional::Schema(Box::new(Node::compile(x))),
            },
            items: match &s.items {
                Some(JSONSchemaPropsOrArray::Schema(x)) => Some(Box::new(Node::compile(x))),
                // Tuple items are not structural; kube refuses them at registration.
                Some(JSONSchemaPropsOrArray::Schemas(_)) | None => None,
            },
            all_of: compile_all(&s.all_of),
            any_of: compile_all(&s.any_of),
            one_of: compile_all(&s.one_of),
            not: s.not.as_deref().map(|n| Box::new(Node::compile(n))),
            default: s.default.as_ref().map(|d| d.0.clone()),
            preserve_unknown_fields: s.x_kubernetes_preserve_unknown_fields.unwrap_or(false),
            embedded_resource: s.x_kubernetes_embedded_resource.unwrap_or(false),
            list_type: s.x_kubernetes_list_type.clone(),
            list_map_keys: s.x_kubernetes_list_map_keys.clone().unwrap_or_default(),
            map_type: s.x_kubernetes_map_type.clone(),
            rules: s.x_kubernetes_validations.iter().flatten().map(|r| CompiledRule::compile(r, s)).collect(),
            cel_depth: 0,
            embedded_below: false,
            unique_lists_below: false,
            type_,
        };
        node.cel_depth = node.subtree_cel_depth();
        node.embedded_below = node.embedded_resource || node.structural_children().any(|c| c.embedded_below);
        node.unique_lists_below = matches!(node.list_type.as_deref(), Some("set" | "map"))
            || node.structural_children().any(|c| c.unique_lists_below);
        node
    }

    /// The nodes a value's fields and items are validated by: properties,
    /// `additionalProperties` and items.
    fn structural_children(&self) -> impl Iterator<Item = &Node> {
        self.properties.values().chain(self.additional_schema()).chain(self.items.as_deref())
    }

    /// Turns the rules kube's typed compile refuses (its validator compiles with the
    /// schema's types) into compile errors, which evaluation reports as `rule compile
    /// error`. Serving needs no such check (registration refuses those rules); a default is
    /// validated before that refusal is reported, so its schema does.
    pub fn type_check_rules(&mut self, s: &JSONSchemaProps) {
        let sources = s.x_kubernetes_validations.iter().flatten();
        for (rule, source) in self.rules.iter_mut().zip(sources) {
            if rule.program.is_ok()
                && !source.rule.trim().is_empty()
                && let Some(error) = celcheck::compile(source, s, false).error
            {
                rule.program = Err(error);
            }
        }
        for (key, child) in &mut self.properties {
            if let Some(schema) = s.properties.as_ref().and_then(|p| p.get(key)) {
                child.type_check_rules(schema);
            }
        }
        if let (Some(child), Some(JSONSchemaPropsOrArray::Schema(schema))) = (self.items.as_deref_mut(), &s.items) {
            child.type_check_rules(schema);
        }
        if let (Additional::Schema(child), Some(JSONSchemaPropsOrBool::Schema(schema))) =
            (&mut self.additional_properties, &s.additional_properties)
        {
            child.type_check_rules(schema);
        }
    }

    /// Turns a node into the validator kube builds for a default at registration, from the
    /// structural schema as written: formats none stripped (custom resources are validated
    /// with the formats kube supports only), and `x-kubernetes-int-or-string` only the
    /// extension, with the `type` as written (usually none, so that a default of any type
    /// passes it; a custom resource's value is checked against both types).
    pub fn as_default_validator(&mut self) {
        self.format = self.raw_format.clone();
        if self.int_or_string {
            self.types = if self.type_.is_empty() { Vec::new() } else { vec![self.type_.clone()] };
        }
        let children = self
            .properties
            .values_mut()
            .chain(self.items.as_deref_mut())
            .chain(match &mut self.additional_properties {
                Additional::Schema(s) => Some(s.as_mut()),
                _ => None,
            })
            .chain(&mut self.all_of)
            .chain(&mut self.any_of)
            .chain(&mut self.one_of)
            .chain(self.not.as_deref_mut());
        children.for_each(Node::as_default_validator);
    }

    /// [`Node::cel_depth`] from this node's rules and its children's depths.
    fn subtree_cel_depth(&self) -> usize {
        let own = self.rules.iter().map(|r| r.depth).max().unwrap_or(0);
        let children = self
            .properties
            .values()
            .chain(self.items.as_deref())
            .chain(self.additional_schema())
            .chain(&self.all_of)
            .chain(&self.any_of)
            .chain(&self.one_of)
            .chain(self.not.as_deref());
        children.map(|c| c.cel_depth).fold(own, usize::max)
    }

    /// The structural schema of a child field: its property, else `additionalProperties`.
    pub fn field(&self, key: &str) -> Option<&Node> {
        self.properties.get(key).or(match &self.additional_properties {
            Additional::Schema(s) => Some(s),
            _ => None,
        })
    }

    /// `additionalProperties` as a schema, when it is one.
    pub fn additional_schema(&self) -> Option<&Node> {
        match &self.additional_properties {
            Additional::Schema(s) => Some(s),
            _ => None,
        }
    }

    /// Whether this node or any node under it has `x-kubernetes-validations`.
    pub fn has_rules(&self) -> bool {
        !self.rules.is_empty()
            || self.properties.values().any(Node::has_rules)
            || self.items.as_deref().is_some_and(Node::has_rules)
            || self.additional_schema().is_some_and(Node::has_rules)
            || self.all_of.iter().any(Node::has_rules)
    }

    pub fn is_list_type(&self, t: &str) -> bool {
        self.list_type.as_deref() == Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: Value) -> Node {
        Node::compile(&serde_json::from_value(v).expect("schema"))
    }

    #[test]
    fn unsupported_formats_are_stripped_like_kube() {
        assert_eq!(node(json!({"type": "string", "format": "date-time"})).format, "date-time");
        assert_eq!(node(json!({"type": "string", "format": "int32"})).format, "");
        assert_eq!(node(json!({"type": "integer", "format": "int32"})).format, "");
        assert_eq!(node(json!({"type": "integer", "format": "date"})).format, "date");
        assert_eq!(node(json!({"type": "number", "format": "double"})).format, "");
        assert_eq!(node(json!({"type": "boolean", "format": "byte"})).format, "byte");
        assert_eq!(node(json!({"type": "string", "format": "email"})).raw_format, "email");
        assert_eq!(node(json!({"type": "string", "format": "quantity"})).format, "");
    }

    #[test]
    fn embedded_resources_and_unique_lists_are_marked_on_every_node_above_them() {
        let n = node(json!({"type": "object", "properties": {
            "spec": {"type": "object", "additionalProperties": {"type": "array", "items": {
                "type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "plain": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}}}}));
        let spec = &n.properties["spec"];
        let items = spec.additional_schema().and_then(|a| a.items.as_deref()).expect("items");
        assert!(n.embedded_below && spec.embedded_below && items.embedded_below);
        assert!(!n.properties["tags"].embedded_below && !n.properties["plain"].embedded_below);
        assert!(n.unique_lists_below && n.properties["tags"].unique_lists_below);
        assert!(!spec.unique_lists_below && !n.properties["plain"].unique_lists_below);
    }

    #[test]
    fn int_or_string_accepts_both_types() {
        let n = node(json!({"x-kubernetes-int-or-string": true}));
        assert_eq!(n.types, ["integer", "string"]);
        assert!(n.type_.is_empty());
    }
}
