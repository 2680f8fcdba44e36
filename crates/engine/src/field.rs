//! Field errors: one validation failure at one field path, worded as kube-apiserver words it.
//!
//! Mirrors apimachinery's `validation/field` package so that every validator in the engine
//! (CRD registration, custom-resource schemas, subresources) produces the same messages and
//! `Status` causes as the real server. Validators collect a `Vec<FieldError>`; the HTTP edge
//! turns the list into one 422 (see [`crate::status`]).

use serde_json::Value;
use std::fmt;

/// The kind of a field error; decides the cause `reason` and the message's leading words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    NotFound,
    Required,
    Duplicate,
    Invalid,
    NotSupported,
    Forbidden,
    TooLong,
    TooMany,
    Internal,
    TypeInvalid,
}

impl ErrorType {
    /// The `reason` of a `metav1.StatusCause`.
    pub fn cause_reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The words a message starts with (`Invalid value`, `Required value`, ...).
    pub fn words(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
        }
    }

    /// Types whose message never shows the offending value.
    fn omits_value(self) -> bool {
        matches!(
            self,
            ErrorType::Required | ErrorType::Forbidden | ErrorType::TooLong | ErrorType::Internal | ErrorType::TooMany
        )
    }
}

/// One validation failure: where, what kind, the offending value and a detail sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub error_type: ErrorType,
    /// Dotted path as kube prints it: `spec.versions[0].name`, `metadata.labels[app]`.
    pub field: String,
    /// The offending value; `None` when the message shows no value.
    pub value: Option<Value>,
    pub detail: String,
}

impl FieldError {
    fn new(error_type: ErrorType, field: impl Into<String>, value: Option<Value>, detail: impl Into<String>) -> Self {
        FieldError { error_type, field: field.into(), value, detail: detail.into() }
    }
    pub fn invalid(field: impl Into<String>, value: impl Into<Value>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, Some(value.into()), detail)
    }
    /// An invalid value with no JSON form (a Go struct kube prints with `%#v`), shown as the
    /// text `shown`.
    pub fn invalid_shown(field: impl Into<String>, shown: &str, detail: &str) -> Self {
        Self::new(ErrorType::Invalid, field, None, format!("{shown}: {detail}"))
    }
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, None, detail)
    }
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, None, detail)
    }
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(ErrorType::Duplicate, field, Some(value.into()), "")
    }
    pub fn not_found(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(ErrorType::NotFound, field, Some(value.into()), "")
    }
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        Self::new(ErrorType::TooLong, field, None, format!("may not be more than {max} bytes"))
    }
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        Self::new(ErrorType::TooMany, field, None, format!("{actual}: must have at most {max} items"))
    }
    pub fn internal(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Internal, field, None, detail)
    }
    pub fn type_invalid(field: impl Into<String>, value: impl Into<Value>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::TypeInvalid, field, Some(value.into()), detail)
    }
    /// `Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported<S: AsRef<str>>(field: impl Into<String>, value: impl Into<Value>, supported: &[S]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s.as_ref())).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, Some(value.into()), detail)
    }

    /// The message without the field path, as in a `StatusCause.message`.
    pub fn body(&self) -> String {
        let mut s = self.error_type.words().to_string();
        if !self.error_type.omits_value()
            && let Some(v) = &self.value
        {
            s.push_str(": ");
            s.push_str(&format_value(v));
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() { write!(f, "{}", self.body()) } else { write!(f, "{}: {}", self.field, self.body()) }
    }
}

/// The aggregate kube prints after `is invalid: `: one error alone, several in brackets.
pub fn aggregate_message(errors: &[FieldError]) -> String {
    // apimachinery's `aggregate.Error`: each message once, brackets only around several.
    let mut unique: Vec<String> = Vec::with_capacity(errors.len());
    for e in errors {
        let message = e.to_string();
        if !unique.contains(&message) {
            unique.push(message);
        }
    }
    match unique.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// A value as Go's field errors print it: strings quoted (`%q`), numbers and bools bare,
/// anything else as compact JSON. A nil value is the string "null" to Go's `ErrorBody`, and
/// so quoted like any string.
pub fn format_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Null => "\"null\"".to_string(),
        other => other.to_string(),
    }
}

/// The Go type (`%T`) of a JSON value decoded into unstructured content, as kube's
/// messages name it: a number is an int64 when it is an integer that fits one, else a
/// float64 (`9223372036854775808` included).
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if !n.is_i64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%q` for the strings that appear in API messages.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Go's other single-letter escapes.
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Builds field paths the way apimachinery's `field.Path` does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    pub fn root(name: &str) -> Self {
        Path(name.to_string())
    }
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() { Path(name.to_string()) } else { Path(format!("{}.{}", self.0, name)) }
    }
    pub fn index(&self, i: usize) -> Self {
        Path(format!("{}[{}]", self.0, i))
    }
    pub fn key(&self, k: &str) -> Self {
        Path(format!("{}[{}]", self.0, k))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Path> for String {
    fn from(p: Path) -> String {
        p.0
    }
}

impl From<&Path> for String {
    fn from(p: &Path) -> String {
        p.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_aggregate_prints_each_distinct_error_once() {
        let twice = [
            FieldError::invalid("reason", "x", "field is immutable"),
            FieldError::invalid("reason", "x", "field is immutable"),
        ];
        assert_eq!(aggregate_message(&twice), "reason: Invalid value: \"x\": field is immutable");
        let two = [twice[0].clone(), FieldError::required("type", "")];
        assert_eq!(aggregate_message(&two), "[reason: Invalid value: \"x\": field is immutable, type: Required value]");
    }

    #[test]
    fn messages_match_kube_apiserver_wording() {
        let e = FieldError::invalid(
            "metadata.name",
            "gizmo.stable.example.com",
            "must be spec.names.plural+\".\"+spec.group",
        );
        assert_eq!(
            e.to_string(),
            "metadata.name: Invalid value: \"gizmo.stable.example.com\": must be spec.names.plural+\".\"+spec.group"
        );
        let e = FieldError::not_supported("spec.color", "purple", &["red", "green", "blue"]);
        assert_eq!(e.body(), "Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\"");
        let e = FieldError::invalid("spec.size", json!(42), "spec.size in body should be less than or equal to 10");
        assert_eq!(e.body(), "Invalid value: 42: spec.size in body should be less than or equal to 10");
        assert_eq!(FieldError::required("spec.group", "").to_string(), "spec.group: Required value");
    }

    #[test]
    fn aggregate_brackets_only_several() {
        let a = FieldError::required("a", "");
        let b = FieldError::required("b", "x");
        assert_eq!(aggregate_message(std::slice::from_ref(&a)), "a: Required value");
        assert_eq!(aggregate_message(&[a.clone(), b.clone()]), "[a: Required value, b: Required value: x]");
        // Repeated messages are printed once, as Go's aggregate prints them.
        assert_eq!(aggregate_message(&[a.clone(), a.clone()]), "a: Required value");
        assert_eq!(aggregate_message(&[a.clone(), b, a]), "[a: Required value, b: Required value: x]");
    }

    #[test]
    fn paths_render_like_field_path() {
        let p = Path::root("spec").child("versions").index(0).child("name");
        assert_eq!(p.as_str(), "spec.versions[0].name");
        assert_eq!(Path::root("metadata").child("labels").key("app").as_str(), "metadata.labels[app]");
    }
}
