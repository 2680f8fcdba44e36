//! The Go types of the built-in kinds, as far as decoding and field management see them.
//!
//! kube-apiserver decodes a built-in kind into its Go struct, so a body is judged by that
//! struct rather than by a schema: a value of the wrong JSON type fails the whole body
//! with `json: cannot unmarshal …` (400), a field the struct lacks is dropped (a warning,
//! or an error under `fieldValidation=Strict`), and the field manager types the object
//! with the kind's OpenAPI (structs, atomic `ObjectReference`s, lists keyed by `name`)
//! and compares it with the struct's zero value, in which non-pointer structs are `{}`.
//! One description per kind drives all three, so they cannot disagree.

use crate::resources::managed_fields::schema::{ListKind, ListSchema, MapSchema, ScalarType, Schema};
use crate::schema::go_time;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One Go type.
#[derive(Debug)]
pub enum GoType {
    String,
    Int32,
    Int64,
    Float64,
    Bool,
    /// `metav1.Time`: RFC 3339 text, checked by [`GoStruct::time_error`].
    Time,
    /// `metav1.MicroTime`: RFC 3339 with microseconds, checked likewise.
    MicroTime,
    /// A named string type (`v1.SecretType`, `types.UID`): a string Go names otherwise.
    Named(&'static str),
    /// `[]byte`: base64 in JSON (checked elsewhere).
    Bytes,
    /// Raw JSON kept as it came (`FieldsV1`); Go writes it with the keys its writer chose,
    /// sorted for every writer the engine meets.
    Raw,
    /// apiextensions' `v1.JSON`: any JSON value, held raw like [`GoType::Raw`].
    Json,
    /// `map[string]T`.
    Map(&'static GoType),
    /// `[]T`; `keys` name a list keyed by those fields (`+listType=map`), else atomic;
    /// `name` is the Go type's own name when it has one (`v1.ValidationRules`).
    Slice {
        items: &'static GoType,
        keys: &'static [&'static str],
        name: Option<&'static str>,
    },
    Struct(&'static GoStruct),
    /// One of the CRD schema's unions ([`SchemaOr`]) over a struct.
    Union(SchemaOr, &'static GoStruct),
}

/// A Go struct: its name (as `json` errors print it) and fields, in the struct's order
/// (the order `json.Marshal` writes them in).
#[derive(Debug)]
pub struct GoStruct {
    /// `v1.ObjectReference`: the package and type, as Go's `reflect.Type.String()`.
    pub name: &'static str,
    pub fields: &'static [Field],
    /// `+structType=atomic`: owned as a whole.
    pub atomic: bool,
}

/// One field of a struct.
#[derive(Debug)]
pub struct Field {
    pub json: &'static str,
    pub ty: GoType,
    /// A value field (not a pointer) without `omitempty`: in the zero object as its type's
    /// zero value (`{}` for a struct, `false`, `0`, `""`), which a null also decodes to.
    pub in_zero: bool,
    /// A value field (not a pointer) tagged `omitempty`: Go's decoding then encoding
    /// drops it when it holds its type's zero value (`""`, `0`, `false`, `[]`, `{}`).
    pub omit_empty: bool,
    /// A pointer field tagged `omitempty`: a `null` decodes to nil, which is left out; a
    /// zero value is kept (a pointer to it).
    pub omit_nil: bool,
}

impl Field {
    /// Whether Go's decoding then encoding leaves out the field holding `v`.
    fn left_out(&self, v: &Value) -> bool {
        (self.omit_empty && is_go_zero(v, &self.ty)) || (self.omit_nil && v.is_null())
    }
}

/// The CRD schema's unions: types whose `UnmarshalJSON` takes a struct or another shape.
/// An error inside one is reported at the union's place, with the type that failed inside
/// it (Go's `addErrorContext` puts the outer decoder's struct and path on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaOr {
    /// `JSONSchemaPropsOrArray`: an object or a list of them; anything else is ignored.
    Array,
    /// `JSONSchemaPropsOrBool`: a bool or an object; anything else is refused in its words.
    Bool,
    /// `JSONSchemaPropsOrStringArray`: an object or a list of strings; anything else is
    /// ignored.
    Strings,
}

/// A field that keeps whatever it holds: a pointer, or a value without `omitempty`.
pub(crate) const fn field(json: &'static str, ty: GoType) -> Field {
    Field { json, ty, in_zero: false, omit_empty: false, omit_nil: false }
}

/// A pointer field tagged `omitempty` (see [`Field::omit_nil`]).
pub(crate) const fn pointer(json: &'static str, ty: GoType) -> Field {
    Field { json, ty, in_zero: false, omit_empty: false, omit_nil: true }
}

/// A value field tagged `omitempty` (see [`Field::omit_empty`]).
pub(crate) const fn omit_empty(json: &'static str, ty: GoType) -> Field {
    Field { json, ty, in_zero: false, omit_empty: true, omit_nil: false }
}

/// `[]T` of an atomic list without a Go name of its own.
pub(crate) const fn list(items: &'static GoType) -> GoType {
    GoType::Slice { items, keys: &[], name: None }
}

/// A non-pointer scalar field without `omitempty` (`bool`, a number, a string), present
/// in the kind's zero value as its zero.
pub(crate) const fn value(json: &'static str, ty: GoType) -> Field {
    Field { json, ty, in_zero: true, omit_empty: false, omit_nil: false }
}

/// A non-pointer struct field, present (as `{}`) in the kind's zero value.
pub(crate) const fn value_struct(json: &'static str, s: &'static GoStruct) -> Field {
    Field { json, ty: GoType::Struct(s), in_zero: true, omit_empty: false, omit_nil: false }
}

/// Whether `value` is Go's zero value of `ty` as an `omitempty` field leaves it out. A
/// `null` is: Go decodes it into a pointer as nil, and into a value as no change (its
/// zero). A time (a struct, which `omitempty` never leaves out) is declared `omitempty`
/// only behind a pointer.
fn is_go_zero(value: &Value, ty: &GoType) -> bool {
    match (ty, value) {
        (_, Value::Null) => true,
        (GoType::String | GoType::Named(_) | GoType::Bytes, Value::String(s)) => s.is_empty(),
        (GoType::Int32 | GoType::Int64 | GoType::Float64, Value::Number(n)) => n.as_f64() == Some(0.0),
        (GoType::Bool, Value::Bool(b)) => !b,
        (GoType::Slice { .. }, Value::Array(a)) => a.is_empty(),
        (GoType::Map(_), Value::Object(o)) => o.is_empty(),
        _ => false,
    }
}

pub(crate) const fn atomic_struct(name: &'static str, fields: &'static [Field]) -> GoStruct {
    GoStruct { name, fields, atomic: true }
}

pub(crate) const fn plain_struct(name: &'static str, fields: &'static [Field]) -> GoStruct {
    GoStruct { name, fields, atomic: false }
}

pub(crate) static STRING: GoType = GoType::String;
static BYTES: GoType = GoType::Bytes;

pub static OBJECT_REFERENCE: GoStruct = atomic_struct(
    "v1.ObjectReference",
    &[
        omit_empty("kind", GoType::String),
        omit_empty("namespace", GoType::String),
        omit_empty("name", GoType::String),
        omit_empty("uid", GoType::Named("types.UID")),
        omit_empty("apiVersion", GoType::String),
        omit_empty("resourceVersion", GoType::String),
        omit_empty("fieldPath", GoType::String),
    ],
);
static OBJECT_REFERENCE_TYPE: GoType = GoType::Struct(&OBJECT_REFERENCE);
static LOCAL_OBJECT_REFERENCE: GoStruct =
    atomic_struct("v1.LocalObjectReference", &[omit_empty("name", GoType::String)]);
static LOCAL_OBJECT_REFERENCE_TYPE: GoType = GoType::Struct(&LOCAL_OBJECT_REFERENCE);
pub static EVENT_SOURCE: GoStruct =
    plain_struct("v1.EventSource", &[omit_empty("component", GoType::String), omit_empty("host", GoType::String)]);
/// events.k8s.io/v1's series: both fields always written.
static EVENT_SERIES: GoStruct =
    plain_struct("v1.EventSeries", &[field("count", GoType::Int32), field("lastObservedTime", GoType::MicroTime)]);
/// core v1's series: `omitempty` on both, which leaves out a zero count (a time, a struct
/// by value, is still written: `null` for its zero).
static CORE_EVENT_SERIES: GoStruct =
    plain_struct("v1.EventSeries", &[omit_empty("count", GoType::Int32), field("lastObservedTime", GoType::MicroTime)]);

pub static CONFIG_MAP: GoStruct = plain_struct(
    "ConfigMap",
    &[
        pointer("immutable", GoType::Bool),
        omit_empty("data", GoType::Map(&STRING)),
        omit_empty("binaryData", GoType::Map(&BYTES)),
    ],
);

pub static SECRET: GoStruct = plain_struct(
    "Secret",
    &[
        pointer("immutable", GoType::Bool),
        omit_empty("data", GoType::Map(&BYTES)),
        omit_empty("stringData", GoType::Map(&STRING)),
        omit_empty("type", GoType::Named("v1.SecretType")),
    ],
);

static SCALE_SPEC: GoStruct = plain_struct("ScaleSpec", &[field("replicas", GoType::Int32)]);
static SCALE_STATUS: GoStruct =
    plain_struct("ScaleStatus", &[field("replicas", GoType::Int32), field("selector", GoType::String)]);

static NAMESPACE_SPEC: GoStruct = plain_struct(
    "NamespaceSpec",
    &[omit_empty("finalizers", GoType::Slice { items: &GoType::Named("v1.FinalizerName"), keys: &[], name: None })],
);
static NAMESPACE_CONDITION: GoStruct = plain_struct(
    "NamespaceCondition",
    &[
        field("type", GoType::Named("v1.NamespaceConditionType")),
        field("status", GoType::Named("v1.ConditionStatus")),
        field("lastTransitionTime", GoType::Time),
        omit_empty("reason", GoType::String),
        omit_empty("message", GoType::String),
    ],
);
static NAMESPACE_CONDITION_TYPE: GoType = GoType::Struct(&NAMESPACE_CONDITION);
static NAMESPACE_STATUS: GoStruct = plain_struct(
    "NamespaceStatus",
    &[
        omit_empty("phase", GoType::Named("v1.NamespacePhase")),
        omit_empty("conditions", GoType::Slice { items: &NAMESPACE_CONDITION_TYPE, keys: &["type"], name: None }),
    ],
);

/// core v1 Namespace.
pub static NAMESPACE: GoStruct =
    plain_struct("Namespace", &[value_struct("spec", &NAMESPACE_SPEC), value_struct("status", &NAMESPACE_STATUS)]);

/// `autoscaling/v1` Scale, the body of `/scale`.
pub static SCALE: GoStruct =
    plain_struct("Scale", &[value_struct("spec", &SCALE_SPEC), value_struct("status", &SCALE_STATUS)]);

static OWNER_REFERENCE: GoStruct = plain_struct(
    "v1.OwnerReference",
    &[
        field("apiVersion", GoType::String),
        field("kind", GoType::String),
        field("name", GoType::String),
        field("uid", GoType::Named("types.UID")),
        field("controller", GoType::Bool),
        field("blockOwnerDeletion", GoType::Bool),
    ],
);
static OWNER_REFERENCE_TYPE: GoType = GoType::Struct(&OWNER_REFERENCE);
static MANAGED_FIELDS_ENTRY: GoStruct = plain_struct(
    "v1.ManagedFieldsEntry",
    &[
        field("manager", GoType::String),
        field("operation", GoType::Named("v1.ManagedFieldsOperationType")),
        field("apiVersion", GoType::String),
        field("time", GoType::Time),
        field("fieldsType", GoType::String),
        field("fieldsV1", GoType::Raw),
        field("subresource", GoType::String),
    ],
);
static MANAGED_FIELDS_ENTRY_TYPE: GoType = GoType::Struct(&MANAGED_FIELDS_ENTRY);

/// `metav1.ObjectMeta`, for the order of its fields (its decoding is checked elsewhere).
pub static OBJECT_META: GoStruct = plain_struct(
    "v1.ObjectMeta",
    &[
        field("name", GoType::String),
        field("generateName", GoType::String),
        field("namespace", GoType::String),
        field("selfLink", GoType::String),
        field("uid", GoType::Named("types.UID")),
        field("resourceVersion", GoType::String),
        field("generation", GoType::Int64),
        field("creationTimestamp", GoType::Time),
        field("deletionTimestamp", GoType::Time),
        field("deletionGracePeriodSeconds", GoType::Int64),
        field("labels", GoType::Map(&STRING)),
        field("annotations", GoType::Map(&STRING)),
        field("ownerReferences", GoType::Slice { items: &OWNER_REFERENCE_TYPE, keys: &["uid"], name: None }),
        field("finalizers", GoType::Slice { items: &STRING, keys: &[], name: None }),
        field("managedFields", GoType::Slice { items: &MANAGED_FIELDS_ENTRY_TYPE, keys: &[], name: None }),
    ],
);

pub static SERVICE_ACCOUNT: GoStruct = plain_struct(
    "ServiceAccount",
    &[
        omit_empty("secrets", GoType::Slice { items: &OBJECT_REFERENCE_TYPE, keys: &["name"], name: None }),
        omit_empty("imagePullSecrets", GoType::Slice { items: &LOCAL_OBJECT_REFERENCE_TYPE, keys: &[], name: None }),
        pointer("automountServiceAccountToken", GoType::Bool),
    ],
);

static LEASE_SPEC: GoStruct = plain_struct(
    "v1.LeaseSpec",
    &[
        pointer("holderIdentity", GoType::String),
        pointer("leaseDurationSeconds", GoType::Int32),
        pointer("acquireTime", GoType::MicroTime),
        pointer("renewTime", GoType::MicroTime),
        pointer("leaseTransitions", GoType::Int32),
        pointer("strategy", GoType::Named("v1.CoordinatedLeaseStrategy")),
        pointer("preferredHolder", GoType::String),
    ],
);
pub static LEASE: GoStruct = plain_struct("Lease", &[value_struct("spec", &LEASE_SPEC)]);

pub static CORE_EVENT: GoStruct = plain_struct(
    "Event",
    &[
        value_struct("involvedObject", &OBJECT_REFERENCE),
        omit_empty("reason", GoType::String),
        omit_empty("message", GoType::String),
        value_struct("source", &EVENT_SOURCE),
        field("firstTimestamp", GoType::Time),
        field("lastTimestamp", GoType::Time),
        omit_empty("count", GoType::Int32),
        omit_empty("type", GoType::String),
        field("eventTime", GoType::MicroTime),
        pointer("series", GoType::Struct(&CORE_EVENT_SERIES)),
        omit_empty("action", GoType::String),
        pointer("related", GoType::Struct(&OBJECT_REFERENCE)),
        field("reportingComponent", GoType::String),
        field("reportingInstance", GoType::String),
    ],
);

pub static EVENTS_V1_EVENT: GoStruct = plain_struct(
    "Event",
    &[
        field("eventTime", GoType::MicroTime),
        pointer("series", GoType::Struct(&EVENT_SERIES)),
        omit_empty("reportingController", GoType::String),
        omit_empty("reportingInstance", GoType::String),
        omit_empty("action", GoType::String),
        omit_empty("reason", GoType::String),
        value_struct("regarding", &OBJECT_REFERENCE),
        pointer("related", GoType::Struct(&OBJECT_REFERENCE)),
        omit_empty("note", GoType::String),
        omit_empty("type", GoType::String),
        value_struct("deprecatedSource", &EVENT_SOURCE),
        field("deprecatedFirstTimestamp", GoType::Time),
        field("deprecatedLastTimestamp", GoType::Time),
        omit_empty("deprecatedCount", GoType::Int32),
    ],
);

/// The fields every kind's struct has besides its own.
const ENVELOPE: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// What a custom resource's `metadata` (or an embedded resource's) fails to decode with,
/// as apiextensions-apiserver decodes it on its own into an `ObjectMeta`: a time that does
/// not parse (its `UnmarshalJSON` stops the decoder), else the first value of the wrong
/// type, placed from the metadata's root (`ObjectMeta.labels`, `OwnerReference.
/// ownerReferences.controller`).
pub fn object_meta_error(meta: &Value) -> Option<String> {
    static META: GoType = GoType::Struct(&OBJECT_META);
    match meta {
        Value::Null => None,
        Value::Object(_) => {
            value_time_error(meta, &META, "", "").or_else(|| mismatch(meta, &META, "", "").map(|e| e.to_string()))
        }
        other => {
            Some(format!("json: cannot unmarshal {} into Go value of type {}", json_kind(other), OBJECT_META.name))
        }
    }
}

impl GoStruct {
    pub fn get(&self, json: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.json == json)
    }

    /// The name Go's errors give the struct holding a field: without its package.
    pub fn short_name(&self) -> &'static str {
        self.name.rsplit('.').next().unwrap_or(self.name)
    }

    /// The first time that does not parse, worded as `metav1.Time`'s and `MicroTime`'s
    /// decoders word it. First in the object's key order: Go meets a sorted document's
    /// (a YAML body's, a merge patch's) so; a JSON body's own order is `doc_order`'s.
    pub fn time_error(&'static self, obj: &Value) -> Option<String> {
        static META: GoType = GoType::Struct(&OBJECT_META);
        obj.as_object()?.iter().find_map(|(key, v)| match key.as_str() {
            "metadata" => value_time_error(v, &META, self.short_name(), "metadata"),
            _ => self.get(key).and_then(|f| value_time_error(v, &f.ty, self.short_name(), f.json)),
        })
    }

    /// The kind's zero value as kube's converter writes it: its non-pointer structs `{}`,
    /// theirs within them too (a field the zero value has is changed, not added, so its
    /// owner gets no `"."`).
    pub fn zero_object(&self, api_version: &str, kind: &str) -> Value {
        let mut obj = self.zero_structs();
        obj.insert("apiVersion".into(), Value::from(api_version));
        obj.insert("kind".into(), Value::from(kind));
        Value::Object(obj)
    }

    fn zero_structs(&self) -> Map<String, Value> {
        self.fields.iter().filter(|f| f.in_zero).map(|f| (f.json.to_string(), go_zero(&f.ty))).collect()
    }

    /// The field types of a whole object of this kind, for managedFields.
    pub fn schema(&'static self) -> Schema {
        let mut root = match Schema::for_kind(None, false) {
            Schema::Map(m) => m,
            _ => MapSchema::default(),
        };
        root.rest = None;
        if let Schema::Map(own) = struct_schema(self, &mut Vec::new()) {
            root.fields.extend(own.fields);
        }
        Schema::Map(root)
    }

    /// Drops what the struct has no field for, as kube's decoder does, answering the
    /// dropped fields' paths (`spec`, `metadata.foo`, `secrets[0].bar`); and the empty
    /// `omitempty` fields its encoder leaves out (unreported: nothing was lost).
    pub fn prune(&'static self, obj: &mut Value) -> Vec<String> {
        let mut dropped = Vec::new();
        let Some(map) = obj.as_object_mut() else { return dropped };
        // Reported in the order the decoder meets them: the body's, which is sorted for
        // every client that writes maps (kubectl, kube-rs's dynamic objects).
        let keys: Vec<String> = map.keys().cloned().collect();
        for key in keys {
            match (key.as_str(), self.get(&key)) {
                ("metadata", _) => {
                    if let Some(meta) = map.get_mut("metadata") {
                        let reset = meta.get("managedFields").and_then(Value::as_array).is_some_and(Vec::is_empty);
                        crate::schema::object_meta::coerce(meta, "metadata", &mut dropped);
                        // A typed kind decodes `managedFields: []` into an empty slice that
                        // is not nil, which tells its field manager to reset the entries (a
                        // custom resource's round trip through ObjectMeta makes it nil).
                        if reset && let Some(m) = meta.as_object_mut() {
                            m.insert("managedFields".into(), Value::Array(Vec::new()));
                        }
                    }
                }
                (k, _) if ENVELOPE.contains(&k) => {}
                (_, Some(f)) => {
                    if let Some(v) = map.get_mut(&key) {
                        zero_null_value_struct(v, f);
                        let mut path = key.clone();
                        prune_value(v, &f.ty, &mut path, &mut dropped);
                        if f.left_out(v) {
                            map.remove(&key);
                        }
                    }
                }
                (_, None) => {
                    map.remove(&key);
                    dropped.push(key);
                }
            }
        }
        dropped
    }

    /// The times of `obj` at Go's zero instant as `null`, which `metav1.Time` and
    /// `MicroTime` write for it. Only when storing: decoded, such a time is not the zero
    /// struct (its location is `Local`), so kube's validation sees it set.
    pub fn null_zero_times(&'static self, obj: &mut Value) {
        null_zero_times_in(obj, &GoType::Struct(self));
    }

    /// Go's decoding of a null item of a slice, or value of a map, of structs: the
    /// struct's zero value, written `{}` here (a typed model refuses the null).
    pub fn zero_null_items(&'static self, obj: &mut Value) {
        if let Some(map) = obj.as_object_mut() {
            zero_nulls_in_struct(map, self);
        }
    }

    /// Why a body does not decode into this struct: a time that does not parse (Go's
    /// decoder stops there), else a value of the wrong type (which it saves and goes on).
    pub fn decode_error(&'static self, obj: &Value) -> Option<String> {
        self.time_error(obj).or_else(|| self.type_error(obj))
    }

    /// The first value of the wrong JSON type, worded as Go's `json.UnmarshalTypeError`:
    /// `json: cannot unmarshal number into Go struct field ConfigMap.data of type string`.
    /// First in the object's key order, as [`GoStruct::time_error`].
    pub fn type_error(&'static self, obj: &Value) -> Option<String> {
        static META: GoType = GoType::Struct(&OBJECT_META);
        let found = obj.as_object()?.iter().find_map(|(key, value)| match key.as_str() {
            "metadata" => mismatch(value, &META, self.name, "metadata"),
            _ => self.get(key).and_then(|f| mismatch(value, &f.ty, self.name, f.json)),
        });
        found.map(|e| e.to_string())
    }
}

/// The field types of `s`. `within` holds the structs being typed around it: a struct
/// met again inside itself (`JSONSchemaProps`) is typed as deduced there, since a field
/// type is a tree. Only the CRD's schemas recurse, and they sit in `versions`, an atomic
/// list whose insides no field set reaches.
fn struct_schema(s: &'static GoStruct, within: &mut Vec<&'static GoStruct>) -> Schema {
    if within.iter().any(|outer| std::ptr::eq(*outer, s)) {
        return Schema::Deduced;
    }
    within.push(s);
    let fields: BTreeMap<String, Schema> =
        s.fields.iter().map(|f| (f.json.to_string(), type_schema(&f.ty, within))).collect();
    within.pop();
    Schema::Map(MapSchema { fields, rest: None, atomic: s.atomic })
}

fn type_schema(ty: &'static GoType, within: &mut Vec<&'static GoStruct>) -> Schema {
    match ty {
        GoType::String | GoType::Named(_) | GoType::Bytes => Schema::Scalar(ScalarType::String),
        // OpenAPI's `date-time` strings, which structured-merge-diff takes as any scalar.
        GoType::Time | GoType::MicroTime => Schema::Scalar(ScalarType::Untyped),
        GoType::Int32 | GoType::Int64 | GoType::Float64 => Schema::Scalar(ScalarType::Numeric),
        GoType::Raw | GoType::Json => Schema::Deduced,
        GoType::Bool => Schema::Scalar(ScalarType::Boolean),
        GoType::Map(items) => Schema::Map(MapSchema {
            fields: BTreeMap::new(),
            rest: Some(Box::new(type_schema(items, within))),
            atomic: false,
        }),
        GoType::Slice { items, keys, .. } => {
            let kind = if keys.is_empty() {
                ListKind::Atomic
            } else {
                ListKind::Map { keys: keys.iter().map(|k| k.to_string()).collect(), defaults: BTreeMap::new() }
            };
            Schema::List(ListSchema { items: Box::new(type_schema(items, within)), kind })
        }
        GoType::Struct(s) | GoType::Union(_, s) => struct_schema(s, within),
    }
}

/// Drops what `ty` lacks from `value`, noting each dropped field's path. `path` is one
/// buffer the walk extends and truncates: a path is written out only for what is dropped,
/// not for every field of an object (a large CRD has thousands).
fn prune_value(value: &mut Value, ty: &'static GoType, path: &mut String, dropped: &mut Vec<String>) {
    use std::fmt::Write;
    let len = path.len();
    match (ty, value) {
        // A union decodes itself with a decoder of its own, which is not strict: what
        // it drops goes unreported (the oracle warned of none).
        (GoType::Union(_, s), value) => prune_union(value, s),
        (GoType::Struct(s), Value::Object(map)) => prune_struct(map, s, path, dropped),
        (GoType::Slice { items, .. }, Value::Array(list)) => {
            for (i, item) in list.iter_mut().enumerate() {
                let _ = write!(path, "[{i}]");
                prune_value(item, items, path, dropped);
                path.truncate(len);
            }
        }
        // Go's strict decoder names a map entry like a field.
        (GoType::Map(items), Value::Object(map)) => {
            for (k, v) in map.iter_mut() {
                path.push('.');
                path.push_str(k);
                prune_value(v, items, path, dropped);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn null_zero_times_in(value: &mut Value, ty: &GoType) {
    use crate::schema::go_time::{is_zero, parse_rfc3339};
    match (ty, value) {
        (GoType::Time | GoType::MicroTime, value) if value.as_str().and_then(parse_rfc3339).is_some_and(is_zero) => {
            *value = Value::Null;
        }
        (GoType::Struct(s) | GoType::Union(_, s), Value::Object(map)) => {
            for f in s.fields {
                if let Some(v) = map.get_mut(f.json) {
                    null_zero_times_in(v, &f.ty);
                }
            }
        }
        (GoType::Slice { items, .. }, Value::Array(list)) => list.iter_mut().for_each(|v| null_zero_times_in(v, items)),
        (GoType::Map(items), Value::Object(map)) => map.values_mut().for_each(|v| null_zero_times_in(v, items)),
        _ => {}
    }
}

/// Go's zero value of a value field, as its encoder writes it.
fn go_zero(ty: &GoType) -> Value {
    match ty {
        GoType::Struct(s) => Value::Object(s.zero_structs()),
        GoType::Bool => Value::Bool(false),
        GoType::Int32 | GoType::Int64 | GoType::Float64 => Value::from(0),
        GoType::String | GoType::Named(_) => Value::from(""),
        _ => Value::Null,
    }
}

/// Go decodes a null into a value field (not a pointer) as no change, leaving its zero,
/// which its encoder writes (`{}` for a struct); the field manager then sees nothing set.
fn zero_null_value_struct(v: &mut Value, f: &Field) {
    if f.in_zero && v.is_null() {
        *v = go_zero(&f.ty);
    }
}

/// Drops what `s` lacks from `map`, and its `omitempty` fields' empty values.
fn prune_struct(map: &mut Map<String, Value>, s: &'static GoStruct, path: &mut String, dropped: &mut Vec<String>) {
    let len = path.len();
    map.retain(|key, v| match s.get(key) {
        Some(f) => {
            zero_null_value_struct(v, f);
            path.push('.');
            path.push_str(key);
            prune_value(v, &f.ty, path, dropped);
            path.truncate(len);
            !f.left_out(v)
        }
        None => {
            dropped.push(format!("{path}.{key}"));
            false
        }
    });
}

fn zero_nulls_in_struct(map: &mut Map<String, Value>, s: &'static GoStruct) {
    for (key, value) in map.iter_mut() {
        if let Some(f) = s.get(key) {
            zero_nulls(value, &f.ty);
        }
    }
}

/// [`GoStruct::zero_null_items`] within `value` of type `ty`.
fn zero_nulls(value: &mut Value, ty: &'static GoType) {
    let item = |item: &mut Value, ty: &'static GoType| match (ty, &item) {
        (GoType::Struct(_), Value::Null) => *item = Value::Object(Map::new()),
        _ => zero_nulls(item, ty),
    };
    match (ty, value) {
        (GoType::Struct(s), Value::Object(map)) | (GoType::Union(_, s), Value::Object(map)) => {
            zero_nulls_in_struct(map, s)
        }
        (GoType::Union(SchemaOr::Array, s), Value::Array(items)) => {
            for v in items {
                match v {
                    Value::Null => *v = Value::Object(Map::new()),
                    Value::Object(map) => zero_nulls_in_struct(map, s),
                    _ => {}
                }
            }
        }
        (GoType::Slice { items, .. }, Value::Array(list)) => list.iter_mut().for_each(|v| item(v, items)),
        (GoType::Map(items), Value::Object(map)) => map.values_mut().for_each(|v| item(v, items)),
        _ => {}
    }
}

/// Prunes a union's value (an object of `s`, or a list of them) without reporting.
fn prune_union(value: &mut Value, s: &'static GoStruct) {
    let (mut path, mut unreported) = (String::new(), Vec::new());
    match value {
        Value::Object(map) => prune_struct(map, s, &mut path, &mut unreported),
        Value::Array(items) => {
            for map in items.iter_mut().filter_map(Value::as_object_mut) {
                prune_struct(map, s, &mut path, &mut unreported);
            }
        }
        _ => {}
    }
}

/// `struct_name` and `path` place the value as [`mismatch`] does: Go's decoder puts its
/// place on the type error a time's own `UnmarshalJSON` returns.
fn value_time_error(value: &Value, ty: &'static GoType, struct_name: &str, path: &str) -> Option<String> {
    match ty {
        GoType::Struct(s) | GoType::Union(_, s) => {
            let map = value.as_object()?;
            s.fields.iter().find_map(|f| {
                let path = if path.is_empty() { f.json.to_string() } else { format!("{path}.{}", f.json) };
                map.get(f.json).and_then(|v| value_time_error(v, &f.ty, s.short_name(), &path))
            })
        }
        GoType::Slice { items, .. } => {
            value.as_array()?.iter().find_map(|v| value_time_error(v, items, struct_name, path))
        }
        _ => match value {
            Value::String(_) | Value::Null => time_value_error(value, ty),
            other if matches!(ty, GoType::Time | GoType::MicroTime) => Some(
                Mismatch::Type {
                    what: json_kind(other).into(),
                    struct_name: struct_name.into(),
                    path: path.into(),
                    ty: "string".into(),
                }
                .to_string(),
            ),
            _ => None,
        },
    }
}

/// A `Time` or `MicroTime` that does not unmarshal from `value`, in their words.
pub fn time_value_error(value: &Value, ty: &GoType) -> Option<String> {
    let layout = match ty {
        GoType::Time => go_time::RFC3339,
        GoType::MicroTime => go_time::RFC3339_MICRO,
        _ => return None,
    };
    match value {
        Value::Null => None,
        Value::String(s) => go_time::parse_error(s, layout),
        other => Some(format!("json: cannot unmarshal {} into Go value of type string", json_kind(other))),
    }
}

/// Go's name of a type in `json` errors.
pub fn go_name(ty: &GoType) -> String {
    match ty {
        GoType::String => "string".into(),
        GoType::Int32 => "int32".into(),
        GoType::Int64 => "int64".into(),
        GoType::Float64 => "float64".into(),
        GoType::Bool => "bool".into(),
        GoType::Time => "v1.Time".into(),
        GoType::MicroTime => "v1.MicroTime".into(),
        GoType::Named(name) => (*name).into(),
        GoType::Bytes => "[]uint8".into(),
        GoType::Raw => "json.RawMessage".into(),
        GoType::Json => "v1.JSON".into(),
        GoType::Map(items) => format!("map[string]{}", go_name(items)),
        GoType::Slice { name: Some(name), .. } => (*name).into(),
        GoType::Slice { items, .. } => format!("[]{}", go_name(items)),
        GoType::Struct(s) | GoType::Union(_, s) => s.name.into(),
    }
}

/// How Go's `json` names a JSON value it cannot store.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// A value Go's decoder refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mismatch {
    /// `json.UnmarshalTypeError`: what the JSON held, the struct holding the field and the
    /// field's dotted path from the object's root, and the Go type it could not fill.
    Type { what: String, struct_name: String, path: String, ty: String },
    /// An `UnmarshalJSON`'s own error, quoted as it is.
    Words(&'static str),
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mismatch::Type { what, struct_name, path, ty } => {
                write!(f, "json: cannot unmarshal {what} into Go struct field {struct_name}.{path} of type {ty}")
            }
            Mismatch::Words(words) => f.write_str(words),
        }
    }
}

/// [`mismatch`] for a value a [`SchemaOr`] union over `s` reads.
fn union_mismatch(
    value: &Value,
    union: SchemaOr,
    s: &'static GoStruct,
    struct_name: &str,
    path: &str,
) -> Option<Mismatch> {
    let schema = GoType::Struct(s);
    let inner = match (union, value) {
        (SchemaOr::Bool, Value::Bool(_)) => None,
        (_, Value::Object(_)) => mismatch(value, &schema, "", ""),
        (SchemaOr::Array, Value::Array(items)) => items.iter().find_map(|v| mismatch(v, &schema, "", "")),
        (SchemaOr::Strings, Value::Array(items)) => items.iter().find_map(|v| mismatch(v, &STRING, "", "")),
        (SchemaOr::Bool, _) => return Some(Mismatch::Words("boolean or JSON schema expected")),
        (SchemaOr::Array | SchemaOr::Strings, _) => None,
    };
    // Go's decoder puts its own place on a type error from inside: the union's.
    inner.map(|e| match e {
        Mismatch::Type { what, ty, .. } => {
            Mismatch::Type { what, struct_name: struct_name.to_string(), path: path.to_string(), ty }
        }
        words => words,
    })
}

/// `struct_name` is the innermost Go struct holding the field; `path` the dotted fields
/// from the object's root, as Go prints them.
fn mismatch(value: &Value, ty: &GoType, struct_name: &str, path: &str) -> Option<Mismatch> {
    let wrong = || {
        let what = match (value, ty) {
            // Go names a number an integer cannot hold by its text.
            (Value::Number(n), GoType::Int32 | GoType::Int64) => format!("number {n}"),
            _ => json_kind(value).to_string(),
        };
        Some(Mismatch::Type { what, struct_name: struct_name.to_string(), path: path.to_string(), ty: go_name(ty) })
    };
    match (ty, value) {
        // A null leaves any Go value as it is.
        (_, Value::Null) => None,
        (GoType::String | GoType::Bytes, Value::String(_)) => None,
        // Go's decoder fills a `[]byte` from a JSON list of bytes too.
        (GoType::Bytes, Value::Array(list)) => list.iter().find_map(|v| {
            let byte = match v {
                Value::Null => true,
                Value::Number(n) => n.as_u64().is_some_and(|b| b <= 255),
                _ => false,
            };
            let what = match v {
                Value::Number(n) => format!("number {n}"),
                other => json_kind(other).to_string(),
            };
            (!byte).then(|| Mismatch::Type {
                what,
                struct_name: struct_name.to_string(),
                path: path.to_string(),
                ty: "uint8".into(),
            })
        }),
        (GoType::Bool, Value::Bool(_)) => None,
        (GoType::Float64, Value::Number(_)) => None,
        (GoType::Int32, Value::Number(n)) => {
            let fits = n.as_i64().is_some_and(|i| i32::try_from(i).is_ok());
            if fits { None } else { wrong() }
        }
        (GoType::Int64, Value::Number(n)) => {
            if n.as_i64().is_some() {
                None
            } else {
                wrong()
            }
        }
        (GoType::Raw | GoType::Json, _) => None,
        (GoType::Named(_), Value::String(_)) => None,
        // Times decode themselves; see `time_error`.
        (GoType::Time | GoType::MicroTime, _) => None,
        (GoType::Map(items), Value::Object(map)) => map.values().find_map(|v| mismatch(v, items, struct_name, path)),
        (GoType::Slice { items, .. }, Value::Array(list)) => {
            list.iter().find_map(|v| mismatch(v, items, struct_name, path))
        }
        (GoType::Struct(s), Value::Object(map)) => map.iter().find_map(|(k, v)| {
            let f = s.get(k)?;
            let path = if path.is_empty() { f.json.to_string() } else { format!("{path}.{}", f.json) };
            mismatch(v, &f.ty, s.short_name(), &path)
        }),
        (GoType::Union(union, s), _) => union_mismatch(value, *union, s, struct_name, path),
        _ => wrong(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The byte-level writers (`meta`'s member orders, used where metadata is copied
    /// from stored bytes) and these types describe the same structs.
    #[test]
    fn metadata_structs_list_their_fields_as_the_byte_writers_order_them() {
        let names = |st: &GoStruct| st.fields.iter().map(|f| f.json).collect::<Vec<_>>();
        assert_eq!(names(&OBJECT_META), crate::meta::OBJECT_META_FIELDS);
        assert_eq!(names(&OWNER_REFERENCE), crate::meta::OWNER_REFERENCE_FIELDS);
        assert_eq!(names(&MANAGED_FIELDS_ENTRY), crate::meta::MANAGED_FIELDS_ENTRY_FIELDS);
    }

    #[test]
    fn a_value_of_the_wrong_type_is_named_as_go_names_it() {
        assert_eq!(
            CONFIG_MAP.type_error(&json!({"data": {"a": 1}})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field ConfigMap.data of type string")
        );
        // Go names the struct holding the field without its package (the oracle's
        // `LeaseSpec.spec.leaseDurationSeconds`), and a field's type with it.
        assert_eq!(
            CORE_EVENT.type_error(&json!({"involvedObject": {"name": true}})).as_deref(),
            Some("json: cannot unmarshal bool into Go struct field ObjectReference.involvedObject.name of type string")
        );
        assert_eq!(
            SECRET.type_error(&json!({"type": 5})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field Secret.type of type v1.SecretType")
        );
        assert_eq!(
            SECRET.type_error(&json!({"metadata": {"labels": {"a": 1}}})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string")
        );
        assert_eq!(
            LEASE.type_error(&json!({"spec": {"leaseDurationSeconds": 1.5}})).as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32"
            )
        );
        assert_eq!(
            SECRET.type_error(&json!({"data": "x"})).as_deref(),
            Some("json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8")
        );
        assert_eq!(CONFIG_MAP.type_error(&json!({"data": {"a": "1"}, "spec": 3, "immutable": null})), None);
        // A sorted document (a YAML body, a merge patch) meets `data` before `metadata`,
        // and Go stops at a time that does not parse, which wins over any wrong type.
        let both = json!({"data": [], "metadata": {"labels": 5, "creationTimestamp": "x"}});
        assert_eq!(
            CONFIG_MAP.type_error(&both).as_deref(),
            Some("json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string")
        );
        assert!(CONFIG_MAP.decode_error(&both).is_some_and(|e| e.starts_with("parsing time")));
    }

    #[test]
    fn fields_the_struct_lacks_are_dropped_with_their_paths() {
        let mut obj = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a", "bogus": 1},
                             "spec": {"a": 1}, "secrets": [{"name": "s", "extra": true}]});
        // In the order the decoder meets them in a body with sorted keys, as the oracle
        // reports them.
        assert_eq!(SERVICE_ACCOUNT.prune(&mut obj), ["metadata.bogus", "secrets[0].extra", "spec"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a"},
                               "secrets": [{"name": "s"}]})
        );
        // Deeper: each path is its own, whatever was walked before it.
        let mut crd = json!({"spec": {"names": {"kind": "W", "x": 1}, "versions": [{"name": "a"}, {"name": "b", "y": 2}],
                                      "z": 3}});
        assert_eq!(
            crate::resources::crd_struct::CUSTOM_RESOURCE_DEFINITION.prune(&mut crd),
            ["spec.names.x", "spec.versions[1].y", "spec.z"]
        );
    }

    /// The oracle: a ConfigMap patched with `managedFields: []` loses its entries (Go's
    /// decoder makes an empty slice that is not nil, a reset); other empty metadata goes.
    #[test]
    fn an_empty_managed_fields_list_survives_decoding_as_a_reset() {
        let mut obj = json!({"metadata": {"name": "a", "managedFields": [], "labels": {}, "finalizers": []}});
        CONFIG_MAP.prune(&mut obj);
        assert_eq!(obj, json!({"metadata": {"name": "a", "managedFields": []}}));
    }

    #[test]
    fn a_null_struct_value_decodes_as_the_empty_struct() {
        let mut lease = json!({"spec": null});
        assert!(LEASE.prune(&mut lease).is_empty());
        assert_eq!(lease, json!({"spec": {}}));
        let mut event = json!({"involvedObject": {"name": "p"}, "source": null});
        CORE_EVENT.prune(&mut event);
        assert_eq!(event["source"], json!({}));
    }

    #[test]
    fn zero_objects_hold_value_structs() {
        assert_eq!(
            CORE_EVENT.zero_object("v1", "Event"),
            json!({"apiVersion": "v1", "kind": "Event", "involvedObject": {}, "source": {}})
        );
        assert_eq!(
            LEASE.zero_object("coordination.k8s.io/v1", "Lease"),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "spec": {}})
        );
    }

    #[test]
    fn object_references_are_atomic_and_service_account_secrets_keyed_by_name() {
        let Schema::Map(sa) = SERVICE_ACCOUNT.schema() else { panic!("a struct") };
        let Schema::List(secrets) = sa.field("secrets") else { panic!("a list") };
        assert_eq!(secrets.kind, ListKind::Map { keys: vec!["name".into()], defaults: BTreeMap::new() });
        assert!(matches!(&*secrets.items, Schema::Map(m) if m.atomic));
        assert!(sa.declared("spec").is_none());
        assert!(sa.is_named("metadata"));
    }

    /// The oracle's words for times it refuses (builtins golden).
    #[test]
    fn times_are_refused_in_go_s_words() {
        let lease = |spec: Value| LEASE.decode_error(&json!({"spec": spec}));
        assert_eq!(
            lease(json!({"renewTime": 1})).as_deref(),
            Some("json: cannot unmarshal number into Go struct field LeaseSpec.spec.renewTime of type string")
        );
        assert_eq!(
            lease(json!({"renewTime": "2024-01-01T00:00:00Z"})).as_deref(),
            Some(
                r#"parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#
            )
        );
        assert_eq!(
            lease(json!({"renewTime": "2024-01-01T00:00:00.1234567Z"})).as_deref(),
            Some(
                r#"parsing time "2024-01-01T00:00:00.1234567Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "7Z" as "Z07:00""#
            )
        );
        assert_eq!(
            lease(json!({"renewTime": "é"})).as_deref(),
            Some(r#"parsing time "\xc3\xa9" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "\xc3\xa9" as "2006""#)
        );
        assert_eq!(lease(json!({"renewTime": "2024-01-01T00:00:00.123456+02:00"})), None);
        assert_eq!(
            CONFIG_MAP.decode_error(&json!({"metadata": {"managedFields": [{"time": 1}]}})).as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field ManagedFieldsEntry.metadata.managedFields.time of type string"
            )
        );
    }
}
