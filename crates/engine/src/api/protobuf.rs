//! Protobuf request bodies (`application/vnd.kubernetes.protobuf`) of the built-in kinds,
//! decoded to the JSON the rest of the engine speaks.
//!
//! Typed Kubernetes clients send built-in objects as protobuf: kubectl's `create
//! configmap|secret|serviceaccount|namespace` and `auth can-i`, controller-runtime's
//! client for every built-in type (DeleteOptions and webhook configurations included). kube-apiserver decodes them;
//! so does the engine, for the kinds it serves built in. Answers stay JSON, which those
//! clients accept (they send `Accept: application/vnd.kubernetes.protobuf, */*` or list
//! JSON). Custom resources have no protobuf form: kube answers 415, and so does this.
//!
//! A body is kube's envelope — the magic `k8s\0`, then a `runtime.Unknown` holding the
//! `apiVersion`/`kind` and the object's bytes — and each object is decoded with its
//! message's field numbers (from kube's `generated.proto`). Go's protobuf writes every
//! non-pointer field, zero or not; the JSON it stands for omits them, so zero strings,
//! numbers and booleans of non-pointer fields are dropped, as a round trip through kube's
//! Go types would.

use crate::status::ApiError;
use base64::Engine as _;
use serde_json::{Map, Value};

/// The media type of kube's protobuf encoding.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
const MAGIC: &[u8] = b"k8s\0";

/// A field's type.
#[derive(Clone, Copy)]
enum T {
    Str,
    Int,
    Bool,
    Msg(&'static Message),
    /// `metav1.Time`: whole seconds.
    Time,
    /// `metav1.MicroTime`.
    MicroTime,
    /// `map<string, string>`.
    StrMap,
    /// `map<string, bytes>`.
    BytesMap,
    /// `metav1.FieldsV1`: raw JSON.
    FieldsV1,
    /// `[]byte`: base64 in JSON.
    Bytes,
    /// A struct Go embeds with `json:",inline"`: its own message on the wire, its fields
    /// the parent's in JSON (a webhook rule's `Rule`).
    Inline(&'static Message),
}

/// One field of a message.
struct F {
    number: u64,
    name: &'static str,
    ty: T,
    repeated: bool,
    /// A pointer field in Go: written only when set, so a zero value is meaningful.
    pointer: bool,
}

const fn f(number: u64, name: &'static str, ty: T) -> F {
    F { number, name, ty, repeated: false, pointer: false }
}

const fn ptr(number: u64, name: &'static str, ty: T) -> F {
    F { number, name, ty, repeated: false, pointer: true }
}

const fn rep(number: u64, name: &'static str, ty: T) -> F {
    F { number, name, ty, repeated: true, pointer: false }
}

struct Message(&'static [F]);

static OBJECT_META: Message = Message(&[
    f(1, "name", T::Str),
    f(2, "generateName", T::Str),
    f(3, "namespace", T::Str),
    f(4, "selfLink", T::Str),
    f(5, "uid", T::Str),
    f(6, "resourceVersion", T::Str),
    f(7, "generation", T::Int),
    f(8, "creationTimestamp", T::Time),
    ptr(9, "deletionTimestamp", T::Time),
    ptr(10, "deletionGracePeriodSeconds", T::Int),
    f(11, "labels", T::StrMap),
    f(12, "annotations", T::StrMap),
    rep(13, "ownerReferences", T::Msg(&OWNER_REFERENCE)),
    rep(14, "finalizers", T::Str),
    rep(17, "managedFields", T::Msg(&MANAGED_FIELDS_ENTRY)),
]);

static OWNER_REFERENCE: Message = Message(&[
    f(1, "kind", T::Str),
    f(3, "name", T::Str),
    f(4, "uid", T::Str),
    f(5, "apiVersion", T::Str),
    ptr(6, "controller", T::Bool),
    ptr(7, "blockOwnerDeletion", T::Bool),
]);

static MANAGED_FIELDS_ENTRY: Message = Message(&[
    f(1, "manager", T::Str),
    f(2, "operation", T::Str),
    f(3, "apiVersion", T::Str),
    ptr(4, "time", T::Time),
    f(6, "fieldsType", T::Str),
    ptr(7, "fieldsV1", T::FieldsV1),
    f(8, "subresource", T::Str),
]);

static PRECONDITIONS: Message = Message(&[ptr(1, "uid", T::Str), ptr(2, "resourceVersion", T::Str)]);

static DELETE_OPTIONS: Message = Message(&[
    ptr(1, "gracePeriodSeconds", T::Int),
    ptr(2, "preconditions", T::Msg(&PRECONDITIONS)),
    ptr(3, "orphanDependents", T::Bool),
    ptr(4, "propagationPolicy", T::Str),
    rep(5, "dryRun", T::Str),
    ptr(6, "ignoreStoreReadErrorWithClusterBreakingPotential", T::Bool),
]);

static OBJECT_REFERENCE: Message = Message(&[
    f(1, "kind", T::Str),
    f(2, "namespace", T::Str),
    f(3, "name", T::Str),
    f(4, "uid", T::Str),
    f(5, "apiVersion", T::Str),
    f(6, "resourceVersion", T::Str),
    f(7, "fieldPath", T::Str),
]);

static LOCAL_OBJECT_REFERENCE: Message = Message(&[f(1, "name", T::Str)]);

static CONFIG_MAP: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(2, "data", T::StrMap),
    f(3, "binaryData", T::BytesMap),
    ptr(4, "immutable", T::Bool),
]);

static SECRET: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(2, "data", T::BytesMap),
    f(3, "type", T::Str),
    f(4, "stringData", T::StrMap),
    ptr(5, "immutable", T::Bool),
]);

static SERVICE_ACCOUNT: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    rep(2, "secrets", T::Msg(&OBJECT_REFERENCE)),
    rep(3, "imagePullSecrets", T::Msg(&LOCAL_OBJECT_REFERENCE)),
    ptr(4, "automountServiceAccountToken", T::Bool),
]);

static NAMESPACE_CONDITION: Message = Message(&[
    f(1, "type", T::Str),
    f(2, "status", T::Str),
    f(4, "lastTransitionTime", T::Time),
    f(5, "reason", T::Str),
    f(6, "message", T::Str),
]);

static NAMESPACE: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(2, "spec", T::Msg(&Message(&[rep(1, "finalizers", T::Str)]))),
    f(3, "status", T::Msg(&Message(&[f(1, "phase", T::Str), rep(2, "conditions", T::Msg(&NAMESPACE_CONDITION))]))),
]);

static EVENT_SOURCE: Message = Message(&[f(1, "component", T::Str), f(2, "host", T::Str)]);

static EVENT_SERIES: Message = Message(&[f(1, "count", T::Int), f(2, "lastObservedTime", T::MicroTime)]);

static CORE_EVENT: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(2, "involvedObject", T::Msg(&OBJECT_REFERENCE)),
    f(3, "reason", T::Str),
    f(4, "message", T::Str),
    f(5, "source", T::Msg(&EVENT_SOURCE)),
    f(6, "firstTimestamp", T::Time),
    f(7, "lastTimestamp", T::Time),
    f(8, "count", T::Int),
    f(9, "type", T::Str),
    f(10, "eventTime", T::MicroTime),
    ptr(11, "series", T::Msg(&EVENT_SERIES)),
    f(12, "action", T::Str),
    ptr(13, "related", T::Msg(&OBJECT_REFERENCE)),
    f(14, "reportingComponent", T::Str),
    f(15, "reportingInstance", T::Str),
]);

static EVENTS_V1_EVENT: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(2, "eventTime", T::MicroTime),
    ptr(3, "series", T::Msg(&EVENT_SERIES)),
    f(4, "reportingController", T::Str),
    f(5, "reportingInstance", T::Str),
    f(6, "action", T::Str),
    f(7, "reason", T::Str),
    f(8, "regarding", T::Msg(&OBJECT_REFERENCE)),
    ptr(9, "related", T::Msg(&OBJECT_REFERENCE)),
    f(10, "note", T::Str),
    f(11, "type", T::Str),
    f(12, "deprecatedSource", T::Msg(&EVENT_SOURCE)),
    f(13, "deprecatedFirstTimestamp", T::Time),
    f(14, "deprecatedLastTimestamp", T::Time),
    f(15, "deprecatedCount", T::Int),
]);

static LEASE: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(
        2,
        "spec",
        T::Msg(&Message(&[
            ptr(1, "holderIdentity", T::Str),
            ptr(2, "leaseDurationSeconds", T::Int),
            ptr(3, "acquireTime", T::MicroTime),
            ptr(4, "renewTime", T::MicroTime),
            ptr(5, "leaseTransitions", T::Int),
            ptr(6, "strategy", T::Str),
            ptr(7, "preferredHolder", T::Str),
        ])),
    ),
]);

static LABEL_SELECTOR: Message =
    Message(&[f(1, "matchLabels", T::StrMap), rep(2, "matchExpressions", T::Msg(&SELECTOR_REQUIREMENT))]);

static WEBHOOK_RULE: Message = Message(&[
    rep(1, "operations", T::Str),
    f(
        2,
        "rule",
        T::Inline(&Message(&[
            rep(1, "apiGroups", T::Str),
            rep(2, "apiVersions", T::Str),
            rep(3, "resources", T::Str),
            ptr(4, "scope", T::Str),
        ])),
    ),
]);

static WEBHOOK_CLIENT_CONFIG: Message = Message(&[
    ptr(
        1,
        "service",
        T::Msg(&Message(&[
            f(1, "namespace", T::Str),
            f(2, "name", T::Str),
            ptr(3, "path", T::Str),
            ptr(4, "port", T::Int),
        ])),
    ),
    f(2, "caBundle", T::Bytes),
    ptr(3, "url", T::Str),
]);

static MATCH_CONDITION: Message = Message(&[f(1, "name", T::Str), f(2, "expression", T::Str)]);

/// admissionregistration/v1 `ValidatingWebhook`; a `MutatingWebhook` numbers its
/// selectors and conditions otherwise.
static VALIDATING_WEBHOOK: Message = Message(&[
    f(1, "name", T::Str),
    f(2, "clientConfig", T::Msg(&WEBHOOK_CLIENT_CONFIG)),
    rep(3, "rules", T::Msg(&WEBHOOK_RULE)),
    ptr(4, "failurePolicy", T::Str),
    ptr(5, "namespaceSelector", T::Msg(&LABEL_SELECTOR)),
    ptr(6, "sideEffects", T::Str),
    ptr(7, "timeoutSeconds", T::Int),
    rep(8, "admissionReviewVersions", T::Str),
    ptr(9, "matchPolicy", T::Str),
    ptr(10, "objectSelector", T::Msg(&LABEL_SELECTOR)),
    rep(11, "matchConditions", T::Msg(&MATCH_CONDITION)),
]);

static MUTATING_WEBHOOK: Message = Message(&[
    f(1, "name", T::Str),
    f(2, "clientConfig", T::Msg(&WEBHOOK_CLIENT_CONFIG)),
    rep(3, "rules", T::Msg(&WEBHOOK_RULE)),
    ptr(4, "failurePolicy", T::Str),
    ptr(5, "namespaceSelector", T::Msg(&LABEL_SELECTOR)),
    ptr(6, "sideEffects", T::Str),
    ptr(7, "timeoutSeconds", T::Int),
    rep(8, "admissionReviewVersions", T::Str),
    ptr(9, "matchPolicy", T::Str),
    ptr(10, "reinvocationPolicy", T::Str),
    ptr(11, "objectSelector", T::Msg(&LABEL_SELECTOR)),
    rep(12, "matchConditions", T::Msg(&MATCH_CONDITION)),
]);

static VALIDATING_WEBHOOK_CONFIGURATION: Message =
    Message(&[f(1, "metadata", T::Msg(&OBJECT_META)), rep(2, "webhooks", T::Msg(&VALIDATING_WEBHOOK))]);

static MUTATING_WEBHOOK_CONFIGURATION: Message =
    Message(&[f(1, "metadata", T::Msg(&OBJECT_META)), rep(2, "webhooks", T::Msg(&MUTATING_WEBHOOK))]);

static SELECTOR_REQUIREMENT: Message =
    Message(&[f(1, "key", T::Str), f(2, "operator", T::Str), rep(3, "values", T::Str)]);

static SELECTOR_ATTRIBUTES: Message =
    Message(&[f(1, "rawSelector", T::Str), rep(2, "requirements", T::Msg(&SELECTOR_REQUIREMENT))]);

static RESOURCE_ATTRIBUTES: Message = Message(&[
    f(1, "namespace", T::Str),
    f(2, "verb", T::Str),
    f(3, "group", T::Str),
    f(4, "version", T::Str),
    f(5, "resource", T::Str),
    f(6, "subresource", T::Str),
    f(7, "name", T::Str),
    ptr(8, "fieldSelector", T::Msg(&SELECTOR_ATTRIBUTES)),
    ptr(9, "labelSelector", T::Msg(&SELECTOR_ATTRIBUTES)),
]);

static SELF_SUBJECT_ACCESS_REVIEW: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(
        2,
        "spec",
        T::Msg(&Message(&[
            ptr(1, "resourceAttributes", T::Msg(&RESOURCE_ATTRIBUTES)),
            ptr(2, "nonResourceAttributes", T::Msg(&Message(&[f(1, "path", T::Str), f(2, "verb", T::Str)]))),
        ])),
    ),
]);

static SELF_SUBJECT_RULES_REVIEW: Message =
    Message(&[f(1, "metadata", T::Msg(&OBJECT_META)), f(2, "spec", T::Msg(&Message(&[f(1, "namespace", T::Str)])))]);

/// Its status is the server's answer: kube's decoder reads it, and its REST ignores it.
static SELF_SUBJECT_REVIEW: Message = Message(&[f(1, "metadata", T::Msg(&OBJECT_META))]);

/// kube's REST keeps what it does not overwrite of the status it is sent. A user's `extra`
/// (a map of string lists) is not read.
static TOKEN_REVIEW: Message = Message(&[
    f(1, "metadata", T::Msg(&OBJECT_META)),
    f(2, "spec", T::Msg(&Message(&[f(1, "token", T::Str), rep(2, "audiences", T::Str)]))),
    f(
        3,
        "status",
        T::Msg(&Message(&[
            f(1, "authenticated", T::Bool),
            f(2, "user", T::Msg(&Message(&[f(1, "username", T::Str), f(2, "uid", T::Str), rep(3, "groups", T::Str)]))),
            f(3, "error", T::Str),
            rep(4, "audiences", T::Str),
        ])),
    ),
]);

/// The message of a kind the engine decodes from protobuf.
fn message_of(api_version: &str, kind: &str) -> Option<&'static Message> {
    Some(match (api_version, kind) {
        (_, "DeleteOptions") => &DELETE_OPTIONS,
        ("v1", "ConfigMap") => &CONFIG_MAP,
        ("v1", "Secret") => &SECRET,
        ("v1", "ServiceAccount") => &SERVICE_ACCOUNT,
        ("v1", "Namespace") => &NAMESPACE,
        ("v1", "Event") => &CORE_EVENT,
        ("events.k8s.io/v1", "Event") => &EVENTS_V1_EVENT,
        ("coordination.k8s.io/v1", "Lease") => &LEASE,
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => &VALIDATING_WEBHOOK_CONFIGURATION,
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => &MUTATING_WEBHOOK_CONFIGURATION,
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => &SELF_SUBJECT_ACCESS_REVIEW,
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => &SELF_SUBJECT_RULES_REVIEW,
        ("authentication.k8s.io/v1", "SelfSubjectReview") => &SELF_SUBJECT_REVIEW,
        ("authentication.k8s.io/v1", "TokenReview") => &TOKEN_REVIEW,
        _ => return None,
    })
}

/// Why a body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// Not kube's envelope, or truncated or malformed bytes.
    #[error("{0}")]
    Malformed(String),
    /// A kind without a protobuf form here (custom resources, kinds not served).
    #[error("no protobuf form for {0}")]
    Unsupported(String),
}

impl ProtobufError {
    /// kube's answer to an object body (of kind `kind`) so refused: 415 for a kind it
    /// cannot decode; bytes it cannot read are the decoder's error, which the handler
    /// words as any undecodable body (`transformDecodeError`, a 400 quoting the body).
    pub fn refusal(&self, kind: &str, body: &[u8]) -> ApiError {
        match self {
            ProtobufError::Malformed(m) => super::body::unrecognized(kind, m, body),
            ProtobufError::Unsupported(_) => super::body::unsupported_media_type(),
        }
    }

    /// kube's answer to `DeleteOptions` so refused: the delete handlers pass the decoder's
    /// error on as it is, a 500 without a reason.
    pub fn delete_refusal(&self) -> ApiError {
        match self {
            ProtobufError::Malformed(m) => ApiError::new(500, "", m.as_str()),
            ProtobufError::Unsupported(_) => super::body::unsupported_media_type(),
        }
    }
}

fn malformed(what: &str) -> ProtobufError {
    ProtobufError::Malformed(format!("protobuf: {what}"))
}

/// A reader over protobuf wire bytes.
struct Reader<'a> {
    buf: &'a [u8],
}

/// One field's wire value.
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, rest) = self.buf.split_first().ok_or_else(|| malformed("truncated varint"))?;
            self.buf = rest;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(malformed("varint too long"))
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtobufError> {
        if n > self.buf.len() {
            return Err(malformed("truncated field"));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    /// The next `(field number, value)`, or `None` at the end.
    fn field(&mut self) -> Result<Option<(u64, Wire<'a>)>, ProtobufError> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| malformed("length too large"))?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed
            }
            other => return Err(malformed(&format!("unsupported wire type {other}"))),
        };
        Ok(Some((key >> 3, value)))
    }
}

fn utf8(bytes: &[u8]) -> Result<String, ProtobufError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed("string is not UTF-8"))
}

/// `{seconds: 1, nanos: 2}` as kube's JSON writes it (`None`: the zero time).
fn time(bytes: &[u8], micro: bool) -> Result<Option<String>, ProtobufError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let (mut seconds, mut nanos) = (0i64, 0i64);
    let mut r = Reader { buf: bytes };
    while let Some((n, w)) = r.field()? {
        match (n, w) {
            (1, Wire::Varint(v)) => seconds = v as i64,
            (2, Wire::Varint(v)) => nanos = i64::from(v as i32),
            _ => {}
        }
    }
    // Time keeps whole seconds only (kube drops the nanoseconds on decode).
    let nanos = if micro { nanos } else { 0 };
    let t = k8s_openapi::jiff::Timestamp::new(seconds, nanos as i32).map_err(|_| malformed("time out of range"))?;
    let layout = if micro { "%Y-%m-%dT%H:%M:%S%.6fZ" } else { "%Y-%m-%dT%H:%M:%SZ" };
    k8s_openapi::jiff::fmt::strtime::format(layout, t).map(Some).map_err(|_| malformed("time out of range"))
}

/// A map entry `{1: key, 2: value}`.
fn map_entry(bytes: &[u8], binary: bool) -> Result<(String, Value), ProtobufError> {
    let (mut key, mut value) = (String::new(), Value::from(""));
    let mut r = Reader { buf: bytes };
    while let Some((n, w)) = r.field()? {
        match (n, w) {
            (1, Wire::Bytes(b)) => key = utf8(b)?,
            (2, Wire::Bytes(b)) if binary => value = Value::from(base64::engine::general_purpose::STANDARD.encode(b)),
            (2, Wire::Bytes(b)) => value = Value::from(utf8(b)?),
            _ => {}
        }
    }
    Ok((key, value))
}

/// Whether a decoded value is Go's zero value (what a non-pointer field always carries).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_i64() == Some(0),
        Value::Bool(b) => !b,
        Value::Array(a) => a.is_empty(),
        Value::Object(_) => false,
    }
}

fn decode_message(bytes: &[u8], message: &Message) -> Result<Map<String, Value>, ProtobufError> {
    let mut out = Map::new();
    let mut r = Reader { buf: bytes };
    while let Some((number, wire)) = r.field()? {
        let Some(field) = message.0.iter().find(|f| f.number == number) else { continue };
        let value = match (field.ty, wire) {
            (T::Str, Wire::Bytes(b)) => Value::from(utf8(b)?),
            (T::Int, Wire::Varint(v)) => Value::from(v as i64),
            (T::Bool, Wire::Varint(v)) => Value::from(v != 0),
            (T::Msg(m), Wire::Bytes(b)) => Value::Object(decode_message(b, m)?),
            (T::Inline(m), Wire::Bytes(b)) => {
                out.extend(decode_message(b, m)?);
                continue;
            }
            (T::Bytes, Wire::Bytes(b)) => Value::from(base64::engine::general_purpose::STANDARD.encode(b)),
            (T::Time, Wire::Bytes(b)) => time(b, false)?.map_or(Value::Null, Value::from),
            (T::MicroTime, Wire::Bytes(b)) => time(b, true)?.map_or(Value::Null, Value::from),
            (T::FieldsV1, Wire::Bytes(b)) => {
                let mut raw = Reader { buf: b };
                let mut fields = Value::Object(Map::new());
                while let Some((n, w)) = raw.field()? {
                    if let (1, Wire::Bytes(json)) = (n, w) {
                        fields = serde_json::from_slice(json).map_err(|_| malformed("fieldsV1 is not JSON"))?;
                    }
                }
                fields
            }
            (T::StrMap | T::BytesMap, Wire::Bytes(b)) => {
                let (k, v) = map_entry(b, matches!(field.ty, T::BytesMap))?;
                let entry = out.entry(field.name).or_insert_with(|| Value::Object(Map::new()));
                if let Some(map) = entry.as_object_mut() {
                    map.insert(k, v);
                }
                continue;
            }
            _ => return Err(malformed(&format!("field {} has the wrong wire type", field.name))),
        };
        if field.repeated {
            let entry = out.entry(field.name).or_insert_with(|| Value::Array(Vec::new()));
            if let Some(list) = entry.as_array_mut() {
                list.push(value);
            }
        } else if field.pointer || !is_zero(&value) {
            out.insert(field.name.into(), value);
        } else {
            out.remove(field.name);
        }
    }
    Ok(out)
}

/// Decodes a protobuf request body (kube's envelope) to the object's JSON.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    // kube's words for a body without the envelope's magic.
    let payload = body.strip_prefix(MAGIC).ok_or_else(|| {
        ProtobufError::Malformed(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]".into(),
        )
    })?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    let mut r = Reader { buf: payload };
    while let Some((n, w)) = r.field()? {
        match (n, w) {
            (1, Wire::Bytes(type_meta)) => {
                let mut t = Reader { buf: type_meta };
                while let Some((n, w)) = t.field()? {
                    match (n, w) {
                        (1, Wire::Bytes(b)) => api_version = utf8(b)?,
                        (2, Wire::Bytes(b)) => kind = utf8(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(b)) => raw = b,
            _ => {}
        }
    }
    let message =
        message_of(&api_version, &kind).ok_or_else(|| ProtobufError::Unsupported(format!("{api_version} {kind}")))?;
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::from(api_version));
    object.insert("kind".into(), Value::from(kind));
    object.extend(decode_message(raw, message)?);
    Ok(Value::Object(object))
}

/// Whether a request's `Content-Type` is kube's protobuf.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case(PROTOBUF))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tiny protobuf writer for the tests.
    #[derive(Default)]
    struct W(Vec<u8>);

    impl W {
        fn varint(&mut self, mut v: u64) {
            while v >= 0x80 {
                self.0.push((v as u8) | 0x80);
                v >>= 7;
            }
            self.0.push(v as u8);
        }
        fn bytes(mut self, n: u64, b: &[u8]) -> Self {
            self.varint(n << 3 | 2);
            self.varint(b.len() as u64);
            self.0.extend_from_slice(b);
            self
        }
        fn str(self, n: u64, s: &str) -> Self {
            self.bytes(n, s.as_bytes())
        }
        fn int(mut self, n: u64, v: i64) -> Self {
            self.varint(n << 3);
            self.varint(v as u64);
            self
        }
        fn msg(self, n: u64, m: W) -> Self {
            self.bytes(n, &m.0)
        }
    }

    fn envelope(api_version: &str, kind: &str, raw: W) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend(W::default().msg(1, W::default().str(1, api_version).str(2, kind)).msg(2, raw).0);
        out
    }

    #[test]
    fn a_webhook_configuration_inlines_its_rules_and_writes_its_ca_bundle_in_base64() {
        let rule = W::default().str(1, "CREATE").msg(2, W::default().str(1, "a.io").str(2, "v1").str(3, "widgets"));
        let service = W::default().str(1, "system").str(2, "webhook").int(4, 8443);
        let config = W::default().msg(1, service).bytes(2, b"pem");
        let selector = W::default().msg(1, W::default().str(1, "team").str(2, "a"));
        let hook = W::default()
            .str(1, "m.kb.io")
            .msg(2, config)
            .msg(3, rule)
            .str(6, "None")
            .str(8, "v1")
            .str(10, "IfNeeded")
            .msg(11, selector)
            .msg(12, W::default().str(1, "c").str(2, "true"));
        let raw = W::default().msg(1, W::default().str(1, "m")).msg(2, hook);
        let obj = decode(&envelope("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", raw))
            .expect("a webhook configuration");
        assert_eq!(
            obj["webhooks"][0],
            json!({
                "name": "m.kb.io",
                "clientConfig": {"service": {"namespace": "system", "name": "webhook", "port": 8443}, "caBundle": "cGVt"},
                "rules": [{"operations": ["CREATE"], "apiGroups": ["a.io"], "apiVersions": ["v1"], "resources": ["widgets"]}],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "reinvocationPolicy": "IfNeeded",
                "objectSelector": {"matchLabels": {"team": "a"}},
                "matchConditions": [{"name": "c", "expression": "true"}],
            })
        );
    }

    #[test]
    fn a_config_map_from_kubectl_create() {
        let meta = W::default().str(1, "settings").str(3, "").int(7, 0).msg(8, W::default());
        let entry = |k: &str, v: &str| W::default().str(1, k).str(2, v);
        let raw = W::default()
            .msg(1, meta)
            .msg(2, entry("a", "1"))
            .msg(2, entry("b", "2"))
            .msg(3, entry("bin", "\u{0}\u{1}"));
        let obj = decode(&envelope("v1", "ConfigMap", raw)).expect("decodes");
        assert_eq!(
            obj,
            json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                "data": {"a": "1", "b": "2"}, "binaryData": {"bin": "AAE="},
            })
        );
    }

    #[test]
    fn pointer_fields_keep_their_zero_values_and_times_are_formatted() {
        let time = W::default().int(1, 1_714_557_600).int(2, 123_456_789);
        let spec = W::default().str(1, "").int(2, 15).msg(4, time).int(5, 0);
        let obj = decode(&envelope("coordination.k8s.io/v1", "Lease", W::default().msg(2, spec))).expect("lease");
        assert_eq!(
            obj["spec"],
            json!({
                "holderIdentity": "", "leaseDurationSeconds": 15, "renewTime": "2024-05-01T10:00:00.123456Z", "leaseTransitions": 0
            })
        );
    }

    #[test]
    fn access_reviews_and_delete_options_decode() {
        let attrs = W::default().str(1, "default").str(2, "create").str(3, "").str(5, "widgets");
        let raw = W::default().msg(1, W::default()).msg(2, W::default().msg(1, attrs));
        let obj = decode(&envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", raw)).expect("ssar");
        assert_eq!(
            obj["spec"],
            json!({"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "widgets"}})
        );
        let raw = W::default().str(4, "Foreground").msg(2, W::default().str(1, "u-1"));
        let obj = decode(&envelope("v1", "DeleteOptions", raw)).expect("delete options");
        assert_eq!(obj["propagationPolicy"], "Foreground");
        assert_eq!(obj["preconditions"], json!({"uid": "u-1"}));
    }

    #[test]
    fn every_corruption_of_a_body_decodes_or_is_refused_without_a_panic() {
        let time = W::default().int(1, 1_714_557_600).int(2, 123_456_789);
        let spec = W::default().str(1, "holder").int(2, 15).msg(4, time).int(5, 0);
        let meta = W::default().str(1, "l").msg(11, W::default().msg(1, W::default().str(1, "a").str(2, "b")));
        let bodies = [
            envelope("coordination.k8s.io/v1", "Lease", W::default().msg(1, meta).msg(2, spec)),
            envelope("v1", "ConfigMap", W::default().msg(2, W::default().str(1, "k").str(2, "v"))),
        ];
        for body in &bodies {
            for cut in 0..body.len() {
                let _ = decode(&body[..cut]);
            }
            for at in 0..body.len() {
                for flip in [0x01, 0x07, 0x80, 0xff] {
                    let mut bad = body.clone();
                    bad[at] ^= flip;
                    if let Ok(obj) = decode(&bad) {
                        assert!(obj.is_object(), "{obj}");
                    }
                }
            }
        }
    }

    #[test]
    fn unknown_kinds_and_bad_bytes_are_refused() {
        let e = decode(&envelope("stable.example.com/v1", "Widget", W::default())).expect_err("no proto form");
        assert_eq!(e.refusal("Widget", b"").code, 415);
        let e = decode(b"{}").expect_err("no envelope");
        assert_eq!(
            e.refusal("Secret", b"{}").message,
            "the object provided is unrecognized (must be of type Secret): provided data does not appear to be a protobuf message, expected prefix [107 56 115 0] ({})"
        );
        assert_eq!((e.delete_refusal().code, e.delete_refusal().reason.as_str()), (500, ""));
        let mut truncated = envelope("v1", "ConfigMap", W::default().str(1, "x"));
        truncated.pop();
        assert!(matches!(decode(&truncated), Err(ProtobufError::Malformed(_))));
    }
}
