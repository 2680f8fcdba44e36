//! The field types server-side apply works with: which maps are structs (named fields),
//! which lists are `set`s or `map`s with keys and which are atomic.
//!
//! kube-apiserver builds these from the CRD's `openAPIV3Schema` (merged with ObjectMeta
//! for `metadata`); without a schema every value is "deduced" from its shape: objects are
//! granular maps, arrays atomic lists, everything else a scalar.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The type of one value.
#[derive(Debug, Clone, PartialEq)]
pub enum Schema {
    /// No schema: the value's own shape decides (structured-merge-diff's
    /// `__untyped_deduced_`).
    Deduced,
    Scalar(ScalarType),
    List(ListSchema),
    Map(MapSchema),
}

/// What a scalar must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarType {
    String,
    Numeric,
    Boolean,
    /// `x-kubernetes-int-or-string` and friends: any scalar.
    Untyped,
}

/// A list and how its items are identified.
#[derive(Debug, Clone, PartialEq)]
pub struct ListSchema {
    pub items: Box<Schema>,
    pub kind: ListKind,
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ListKind {
    /// Replaced as a whole (the default for CRDs).
    Atomic,
    /// Items are scalars identified by their value.
    Set,
    /// Items are maps identified by `keys` (`x-kubernetes-list-map-keys`); `defaults`
    /// stand in for key fields an item omits.
    Map { keys: Vec<String>, defaults: BTreeMap<String, Value> },
}

/// A struct (named `fields`) and/or a map (`rest` types every other key).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MapSchema {
    pub fields: BTreeMap<String, Schema>,
    /// The type of keys that are not named fields; `None`: such keys are not allowed.
    pub rest: Option<Box<Schema>>,
    /// `x-kubernetes-map-type: atomic`.
    pub atomic: bool,
}

/// The deduced map and list, shared by every value without a schema.
pub static DEDUCED_MAP: LazyLock<MapSchema> =
    LazyLock::new(|| MapSchema { fields: BTreeMap::new(), rest: Some(Box::new(Schema::Deduced)), atomic: false });
/// See [`DEDUCED_MAP`].
pub static DEDUCED_LIST: LazyLock<ListSchema> =
    LazyLock::new(|| ListSchema { items: Box::new(Schema::Deduced), kind: ListKind::Atomic });

static DEDUCED: Schema = Schema::Deduced;

impl MapSchema {
    /// The type of `key`, deduced when the schema does not know it.
    pub fn field(&self, key: &str) -> &Schema {
        self.declared(key).unwrap_or(&DEDUCED)
    }

    /// The type of `key` when the schema allows it.
    pub fn declared(&self, key: &str) -> Option<&Schema> {
        self.fields.get(key).or(self.rest.as_deref())
    }

    /// Whether `key` is a named field (not a map entry).
    pub fn is_named(&self, key: &str) -> bool {
        self.fields.contains_key(key)
    }
}

impl Schema {
    /// The type of a whole object of a kind: its schema's properties, with `apiVersion`,
    /// `kind` and ObjectMeta's `metadata` as kube adds them. `preserve_unknown` is the
    /// CRD's legacy `spec.preserveUnknownFields`, which like a node's own
    /// `x-kubernetes-preserve-unknown-fields` lets every object below it take unknown fields.
    pub fn for_kind(schema: Option<&JSONSchemaProps>, preserve_unknown: bool) -> Schema {
        Schema::Map(kind_root(schema, preserve_unknown))
    }

    /// The type of the child `pe` leads to.
    pub fn child(&self, pe: &super::path::PathElement) -> &Schema {
        use super::path::PathElement;
        match (self, pe) {
            (Schema::Map(m), PathElement::Field(name)) => m.field(name),
            (Schema::List(l), PathElement::Key(_) | PathElement::Value(_) | PathElement::Index(_)) => &l.items,
            _ => &DEDUCED,
        }
    }
}

/// The map [`Schema::for_kind`] types an object with.
fn kind_root(schema: Option<&JSONSchemaProps>, preserve_unknown: bool) -> MapSchema {
    let mut root = match schema.map(|s| from_props(s, preserve_unknown)) {
        Some(Schema::Map(m)) => m,
        _ => MapSchema { rest: Some(Box::new(Schema::Deduced)), ..Default::default() },
    };
    root.fields.insert("apiVersion".into(), Schema::Scalar(ScalarType::String));
    root.fields.insert("kind".into(), Schema::Scalar(ScalarType::String));
    root.fields.insert("metadata".into(), object_meta());
    root
}

fn from_props(s: &JSONSchemaProps, preserve_unknown: bool) -> Schema {
    // kube-openapi's converter hands `x-kubernetes-preserve-unknown-fields` down to every
    // schema written inline below it (properties, items, additionalProperties), so an
    // object anywhere under such a node takes fields its own properties do not declare.
    let preserve_unknown = preserve_unknown || s.x_kubernetes_preserve_unknown_fields == Some(true);
    // kube's OpenAPI writes an int-or-string as an `anyOf` without a type, which its
    // converter deduces: a map or a list passes here, for validation to refuse.
    if s.x_kubernetes_int_or_string == Some(true) {
        return Schema::Deduced;
    }
    match s.type_.as_deref().unwrap_or("") {
        "object" => Schema::Map(map_from_props(s, preserve_unknown)),
        "array" => {
            let items = match &s.items {
                Some(JSONSchemaPropsOrArray::Schema(item)) => from_props(item, preserve_unknown),
                _ => Schema::Deduced,
            };
            let kind = match s.x_kubernetes_list_type.as_deref() {
                Some("set") => ListKind::Set,
                Some("map") => {
                    let keys = s.x_kubernetes_list_map_keys.clone().unwrap_or_default();
                    let defaults = match &s.items {
                        Some(JSONSchemaPropsOrArray::Schema(item)) => keys
                            .iter()
                            .filter_map(|k| {
                                let d = item.properties.as_ref()?.get(k)?.default.as_ref()?;
                                Some((k.clone(), d.0.clone()))
                            })
                            .collect(),
                        _ => BTreeMap::new(),
                    };
                    ListKind::Map { keys, defaults }
                }
                _ => ListKind::Atomic,
            };
            Schema::List(ListSchema { items: Box::new(items), kind })
        }
        // kube-openapi's converter types only plain and `byte` strings as strings; any
        // other format is an untyped scalar.
        "string" => match s.format.as_deref().unwrap_or("") {
            "" | "byte" => Schema::Scalar(ScalarType::String),
            _ => Schema::Scalar(ScalarType::Untyped),
        },
        "integer" | "number" => Schema::Scalar(ScalarType::Numeric),
        "boolean" => Schema::Scalar(ScalarType::Boolean),
        // Untyped nodes (x-kubernetes-preserve-unknown-fields without a type).
        _ => Schema::Deduced,
    }
}

fn map_from_props(s: &JSONSchemaProps, preserve_unknown: bool) -> MapSchema {
    let mut fields: BTreeMap<String, Schema> =
        s.properties.iter().flatten().map(|(name, prop)| (name.clone(), from_props(prop, preserve_unknown))).collect();
    if s.x_kubernetes_embedded_resource == Some(true) {
        fields.insert("apiVersion".into(), Schema::Scalar(ScalarType::String));
        fields.insert("kind".into(), Schema::Scalar(ScalarType::String));
        fields.insert("metadata".into(), object_meta());
    }
    let rest = match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(item)) => Some(Box::new(from_props(item, preserve_unknown))),
        Some(JSONSchemaPropsOrBool::Bool(true)) => Some(Box::new(Schema::Deduced)),
        _ if preserve_unknown => Some(Box::new(Schema::Deduced)),
        // An object with no properties at all is an arbitrary map to kube's converter.
        _ if fields.is_empty() => Some(Box::new(Schema::Deduced)),
        _ => None,
    };
    MapSchema { fields, rest, atomic: s.x_kubernetes_map_type.as_deref() == Some("atomic") }
}

/// `metav1.ObjectMeta` as kube's OpenAPI types it: granular labels and annotations,
/// finalizers a `set`, ownerReferences a `map` keyed by uid with atomic items.
fn object_meta() -> Schema {
    use ScalarType::{Numeric, String as Str};
    let mut fields = BTreeMap::new();
    for name in ["name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"] {
        fields.insert(name.to_string(), Schema::Scalar(Str));
    }
    // OpenAPI's `date-time` strings, which structured-merge-diff takes as any scalar.
    for name in ["creationTimestamp", "deletionTimestamp"] {
        fields.insert(name.to_string(), Schema::Scalar(ScalarType::Untyped));
    }
    for name in ["generation", "deletionGracePeriodSeconds"] {
        fields.insert(name.to_string(), Schema::Scalar(Numeric));
    }
    let string_map =
        || Schema::Map(MapSchema { fields: BTreeMap::new(), rest: Some(Box::new(Schema::Scalar(Str))), atomic: false });
    fields.insert("labels".into(), string_map());
    fields.insert("annotations".into(), string_map());
    fields.insert(
        "finalizers".into(),
        Schema::List(ListSchema { items: Box::new(Schema::Scalar(Str)), kind: ListKind::Set }),
    );
    let mut owner = BTreeMap::new();
    for name in ["apiVersion", "kind", "name", "uid"] {
        owner.insert(name.to_string(), Schema::Scalar(Str));
    }
    for name in ["controller", "blockOwnerDeletion"] {
        owner.insert(name.to_string(), Schema::Scalar(ScalarType::Boolean));
    }
    fields.insert(
        "ownerReferences".into(),
        Schema::List(ListSchema {
            items: Box::new(Schema::Map(MapSchema { fields: owner, rest: None, atomic: true })),
            // kube's OpenAPI defaults `uid` to "" (a required string without omitempty), so
            // an applied owner reference without one is keyed `uid=""` and left to
            // validation, not refused as typed.
            kind: ListKind::Map {
                keys: vec!["uid".into()],
                defaults: BTreeMap::from([("uid".into(), Value::from(""))]),
            },
        }),
    );
    // Typed where an applied configuration carries entries kube's accessor cannot read (a
    // time that does not parse), which are then typed with the rest of it: a manager that
    // is a number is refused there, in structured-merge-diff's words.
    let mut entry = BTreeMap::new();
    for name in ["manager", "operation", "apiVersion", "fieldsType", "subresource"] {
        entry.insert(name.to_string(), Schema::Scalar(Str));
    }
    entry.insert("time".into(), Schema::Scalar(ScalarType::Untyped));
    // `FieldsV1` is an object of anything to OpenAPI.
    let any_map = MapSchema { fields: BTreeMap::new(), rest: Some(Box::new(Schema::Deduced)), atomic: false };
    entry.insert("fieldsV1".into(), Schema::Map(any_map));
    fields.insert(
        "managedFields".into(),
        Schema::List(ListSchema {
            items: Box::new(Schema::Map(MapSchema { fields: entry, rest: None, atomic: true })),
            kind: ListKind::Atomic,
        }),
    );
    Schema::Map(MapSchema { fields, rest: None, atomic: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn props(v: Value) -> JSONSchemaProps {
        serde_json::from_value(v).expect("schema")
    }

    #[test]
    fn a_crd_schema_becomes_structs_lists_and_maps() {
        let s = props(json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer"},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                              "x-kubernetes-list-map-keys": ["port", "protocol"],
                              "items": {"type": "object", "properties": {
                                  "port": {"type": "integer"},
                                  "protocol": {"type": "string", "default": "TCP"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                                 "additionalProperties": {"type": "string"}},
                    "anything": {"x-kubernetes-preserve-unknown-fields": true},
                    "port": {"x-kubernetes-int-or-string": true}
                }}
            }
        }));
        let Schema::Map(root) = Schema::for_kind(Some(&s), false) else { panic!("a map") };
        assert!(root.is_named("metadata") && root.is_named("apiVersion") && root.is_named("spec"));
        assert!(root.declared("unknown").is_none(), "a struct refuses unknown fields");
        let Schema::Map(spec) = root.field("spec") else { panic!("spec is a struct") };
        assert_eq!(spec.field("size"), &Schema::Scalar(ScalarType::Numeric));
        let Schema::List(ports) = spec.field("ports") else { panic!("a list") };
        assert_eq!(
            ports.kind,
            ListKind::Map {
                keys: vec!["port".into(), "protocol".into()],
                defaults: BTreeMap::from([("protocol".to_string(), json!("TCP"))])
            }
        );
        let Schema::List(tags) = spec.field("tags") else { panic!("a list") };
        assert_eq!(tags.kind, ListKind::Set);
        let Schema::List(args) = spec.field("args") else { panic!("a list") };
        assert_eq!(args.kind, ListKind::Atomic);
        let Schema::Map(selector) = spec.field("selector") else { panic!("a map") };
        assert!(selector.atomic && !selector.is_named("app") && selector.declared("app").is_some());
        assert_eq!(spec.field("anything"), &Schema::Deduced);
        // The oracle let a map through apply for an int-or-string, to refuse it in validation.
        assert_eq!(spec.field("port"), &Schema::Deduced);
    }

    /// The oracle's apply typed a date-time string as any scalar (`expected any scalar`)
    /// and a plain or `byte` string as a string.
    #[test]
    fn only_plain_and_byte_strings_are_strings() {
        for (format, typed) in [
            (None, ScalarType::String),
            (Some("byte"), ScalarType::String),
            (Some("date-time"), ScalarType::Untyped),
            (Some("uuid"), ScalarType::Untyped),
            (Some("int32"), ScalarType::Untyped),
        ] {
            let mut s = props(json!({"type": "string"}));
            s.format = format.map(String::from);
            assert_eq!(from_props(&s, false), Schema::Scalar(typed), "{format:?}");
        }
    }

    #[test]
    fn without_a_schema_only_the_envelope_is_typed() {
        let Schema::Map(root) = Schema::for_kind(None, false) else { panic!("a map") };
        assert_eq!(root.field("spec"), &Schema::Deduced);
        let Schema::Map(meta) = root.field("metadata") else { panic!("ObjectMeta") };
        let Schema::List(finalizers) = meta.field("finalizers") else { panic!("a list") };
        assert_eq!(finalizers.kind, ListKind::Set);
    }

    /// The oracle let an apply set `spec.o.c` and `spec.l[0].c` under a `spec` that
    /// preserves unknown fields, though neither `o` nor the items declare `c` (it then
    /// pruned them), while the sibling `strict`, beside the preserving `spec`, refused `c`.
    #[test]
    fn preserving_unknown_fields_reaches_every_object_below() {
        let s = props(json!({"type": "object", "properties": {
            "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                "o": {"type": "object", "properties": {"a": {"type": "string"}}},
                "l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}},
            "strict": {"type": "object", "properties": {"a": {"type": "string"}}}}}));
        let Schema::Map(root) = Schema::for_kind(Some(&s), false) else { panic!("a map") };
        let Schema::Map(spec) = root.field("spec") else { panic!("spec is a struct") };
        let Schema::Map(o) = spec.field("o") else { panic!("o is a struct") };
        assert_eq!(o.declared("c"), Some(&Schema::Deduced));
        let Schema::List(l) = spec.field("l") else { panic!("a list") };
        let Schema::Map(item) = l.items.as_ref() else { panic!("items are structs") };
        assert_eq!(item.declared("c"), Some(&Schema::Deduced));
        let Schema::Map(strict) = root.field("strict") else { panic!("strict is a struct") };
        assert!(strict.declared("c").is_none());
    }
}
