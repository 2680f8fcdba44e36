//! Value validation: kube-openapi's `SchemaValidator` as kube-apiserver runs it on a
//! custom resource, with its results mapped to field errors the way
//! `kubeOpenAPIResultToFieldErrors` maps them.
//!
//! The walk keeps kube-openapi's conventions because they show in the messages: paths are
//! built with `.` for fields and map keys and `[i]` for list items, every message says
//! `in body`, and per node the checks run in kube-openapi's order (type, junctors,
//! string, format, number, list, enum, object). String checks stop at the first failure,
//! a `minProperties`/`maxProperties` failure hides the node's field errors, and errors
//! that are not a field's own (junctor failures) land on the `<nil>` path with an empty
//! value, exactly as kube-apiserver prints them.
//!
//! On update, a value equal to its correlated old value is not validated at all: kube
//! ratchets such errors into warnings (`CRDValidationRatcheting`).

use super::correlate;
use super::formats;
use super::gofmt::{GoNumber, go_int64, with_value};
use super::node::{Additional, Node};
use crate::field::{ErrorType, FieldError, go_quote};
use crate::representation::gofmt::{go_format_g, go_json_float};
use serde_json::{Number, Value};

/// Errors of one validation, and kube-openapi's match count (how many checks ran), which
/// picks the alternative whose errors an `anyOf`/`oneOf` failure reports.
#[derive(Debug, Default)]
pub struct Outcome {
    pub errors: Vec<FieldError>,
    matches: usize,
}

impl Outcome {
    fn merge(&mut self, other: Outcome) {
        self.errors.extend(other.errors);
        self.matches += other.matches;
    }

    fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// kube's error path for a kube-openapi name: without the leading dot, `<nil>` at the root.
fn err_path(name: &str) -> String {
    let trimmed = name.strip_prefix('.').unwrap_or(name);
    if trimmed.is_empty() { "<nil>".into() } else { trimmed.into() }
}

fn invalid(name: &str, v: &Value, detail: String) -> FieldError {
    with_value(ErrorType::Invalid, err_path(name), v, detail)
}

/// An error kube-openapi does not attach to a field (junctor failures): kube prints it on
/// the `<nil>` path with an empty value.
fn composite(detail: String) -> FieldError {
    FieldError { error_type: ErrorType::Invalid, field: "<nil>".into(), value: Some(Value::from("")), detail }
}

/// `Too many: 3: must have at most 2 items` ("items" even for one, as kube words it).
pub fn too_many(field: impl Into<String>, actual: usize, max: i64) -> FieldError {
    let detail = format!("{actual}: must have at most {max} items");
    FieldError { error_type: ErrorType::TooMany, field: field.into(), value: None, detail }
}

/// Validates `value`, found at kube-openapi path `name` (`""` for the root), against
/// `node`. `old` is the correlated old value on update.
pub fn validate(node: &Node, name: &str, value: &Value, old: Option<&Value>) -> Outcome {
    if old.is_some_and(|o| correlate::equal(Some(node), value, o)) {
        return Outcome { errors: vec![], matches: 1 };
    }
    let mut out = Outcome::default();
    if value.is_null() {
        out.errors.extend(type_error(node, name, value));
        out.errors.extend(enum_error(node, name, value));
        out.matches += 2;
        return out;
    }
    if !node.types.is_empty() || !node.format.is_empty() {
        out.errors.extend(type_error(node, name, value));
        out.matches += 1;
    }
    out.merge(junctors(node, name, value, old));
    match value {
        Value::String(s) => {
            out.errors.extend(string_error(node, name, s));
            out.matches += 1;
            if !node.format.is_empty() && !formats::is_valid(&node.format, s) {
                out.errors.push(type_invalid(name, &node.format, s));
            }
            out.matches += usize::from(!node.format.is_empty());
        }
        Value::Number(n) => {
            out.errors.extend(number_errors(node, name, n));
            out.matches += 1;
        }
        Value::Array(items) => {
            out.merge(array(node, name, items, old));
            out.matches += 1;
        }
        _ => {}
    }
    out.errors.extend(enum_error(node, name, value));
    out.matches += 1;
    if let Value::Object(map) = value {
        out.merge(object(node, name, map, old));
        out.matches += 1;
    }
    out.matches += 1;
    out
}

/// The JSON type and Go format kube-openapi infers for an unstructured value.
fn schema_info(v: &Value) -> (&'static str, &'static str) {
    match v {
        Value::Bool(_) => ("boolean", ""),
        Value::String(_) => ("string", ""),
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(_) => ("integer", "int64"),
            GoNumber::Float(_) => ("number", "float64"),
        },
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
        Value::Null => ("null", ""),
    }
}

/// go-openapi's `IsFloat64AJSONInteger`: integral within the JSON-safe range, allowing a
/// relative error of 1e-9.
fn is_json_integer(f: f64) -> bool {
    const LIMIT: f64 = 9_007_199_254_740_992.0;
    if !f.is_finite() || !(-LIMIT..=LIMIT).contains(&f) {
        return false;
    }
    let g = f.trunc();
    if f == g {
        return true;
    }
    let diff = (f - g).abs();
    if g == 0.0 {
        return false;
    }
    diff / (f.abs() + g.abs()) < 1e-9
}

/// `spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"`.
fn type_invalid(name: &str, expected: &str, got: &str) -> FieldError {
    let detail = format!("{name} in body must be of type {expected}: {}", go_quote(got));
    FieldError { error_type: ErrorType::TypeInvalid, field: err_path(name), value: Some(Value::from(got)), detail }
}

/// kube-openapi's `typeValidator`, including how formats interact with types.
fn type_error(node: &Node, name: &str, v: &Value) -> Option<FieldError> {
    let contains = |t: &str| node.types.iter().any(|x| x == t);
    let joined = node.types.join(",");
    if v.is_null() {
        return (!node.types.is_empty() && !node.nullable).then(|| type_invalid(name, &joined, "null"));
    }
    let (sch_type, go_format) = schema_info(v);
    let is_float_int = sch_type == "number" && v.as_f64().is_some_and(is_json_integer) && contains("integer");
    let is_int_float = sch_type == "integer" && contains("number");
    let string_or_slice = v.is_string() || v.is_array();
    let type_ok = contains(sch_type) || is_float_int || is_int_float;
    let format_ok = type_ok || go_format == node.format;
    if !string_or_slice && !node.format.is_empty() && !format_ok {
        return Some(type_invalid(name, &node.format, go_format));
    }
    let numeric = contains("number") || contains("integer");
    if !numeric && !node.format.is_empty() && string_or_slice {
        return None;
    }
    (!type_ok).then(|| type_invalid(name, &joined, sch_type))
}

/// `maxLength`, `minLength`, `pattern`: only the first failure is reported.
fn string_error(node: &Node, name: &str, s: &str) -> Option<FieldError> {
    let len = s.chars().count() as i64;
    if let Some(max) = node.max_length.filter(|max| len > *max) {
        // kube 1.32's words are `may not be more than 1 bytes`, plural even for one.
        return Some(FieldError::too_long(err_path(name), usize::try_from(max).unwrap_or(0)));
    }
    if let Some(min) = node.min_length.filter(|min| len < *min) {
        return Some(invalid(name, &Value::from(s), format!("{name} in body should be at least {min} chars long")));
    }
    let pattern = node.pattern.as_ref()?;
    let shown = match &pattern.regex {
        Ok(re) if re.is_match(s) => return None,
        Ok(_) => pattern.source.clone(),
        Err(e) => format!("{}, but pattern is invalid: {e}", pattern.source),
    };
    Some(invalid(name, &Value::from(s), format!("{name} in body should match '{shown}'")))
}

/// `multipleOf`, `minimum`, `maximum`, compared natively: integers against the bound
/// converted as Go's `int64(bound)` does (and printed as one), floats as floats.
fn number_errors(node: &Node, name: &str, n: &Number) -> Vec<FieldError> {
    let data = GoNumber::of(n);
    let value = Value::Number(n.clone());
    let mut errs = Vec::new();
    if let Some(factor) = node.multiple_of {
        // An integer is checked against the factor truncated to an integer (kube-openapi's
        // `MultipleOfInt`), so a fractional factor below 1 is "not positive" for integers.
        let int_factor = match data {
            GoNumber::Int(_) => Some(go_int64(factor)),
            GoNumber::Float(_) => None,
        };
        if factor <= 0.0 || int_factor.is_some_and(|f| f <= 0) {
            // kube reports the factor as the bad value.
            let (shown, bad) = match int_factor {
                Some(f) => (f.to_string(), Value::from(f)),
                None => (go_format_g(factor), Value::from(factor)),
            };
            let detail = format!("factor MultipleOf declared for {name} must be positive: {shown}");
            errs.push(invalid(name, &bad, detail));
        } else {
            let shown = match (&data, int_factor) {
                (GoNumber::Int(i), Some(f)) => (*i % f != 0).then(|| f.to_string()),
                _ => {
                    let d = data.as_f64();
                    let mult = if factor < 1.0 { 1.0 / factor * d } else { d / factor };
                    (!is_json_integer(mult)).then(|| go_format_g(factor))
                }
            };
            if let Some(shown) = shown {
                errs.push(invalid(name, &value, format!("{name} in body should be a multiple of {shown}")));
            }
        }
    }
    let bound_text = |b: f64| match data {
        GoNumber::Int(_) => go_int64(b).to_string(),
        GoNumber::Float(_) => go_format_g(b),
    };
    let cmp = |b: f64| -> std::cmp::Ordering {
        match data {
            GoNumber::Int(i) => i.cmp(&go_int64(b)),
            GoNumber::Float(f) => f.partial_cmp(&b).unwrap_or(std::cmp::Ordering::Equal),
        }
    };
    if let Some(min) = node.minimum {
        let shown = bound_text(min);
        let failed = if node.exclusive_minimum { cmp(min).is_le() } else { cmp(min).is_lt() };
        if failed {
            let words = if node.exclusive_minimum { "greater than" } else { "greater than or equal to" };
            errs.push(invalid(name, &value, format!("{name} in body should be {words} {shown}")));
        }
    }
    if let Some(max) = node.maximum {
        let shown = bound_text(max);
        let failed = if node.exclusive_maximum { cmp(max).is_ge() } else { cmp(max).is_gt() };
        if failed {
            let words = if node.exclusive_maximum { "less than" } else { "less than or equal to" };
            errs.push(invalid(name, &value, format!("{name} in body should be {words} {shown}")));
        }
    }
    errs
}

/// Items, then `minItems`, `maxItems`, `uniqueItems`.
fn array(node: &Node, name: &str, items: &[Value], old: Option<&Value>) -> Outcome {
    let mut out = Outcome::default();
    if let Some(item_schema) = node.items.as_deref() {
        for (i, item) in items.iter().enumerate() {
            let old_item = correlate::item(Some(node), old, item);
            out.merge(validate(item_schema, &format!("{name}[{i}]"), item, old_item));
        }
    }
    let size = items.len();
    if let Some(min) = node.min_items.filter(|min| (size as i64) < *min) {
        out.errors.push(invalid(name, &Value::from(size), format!("{name} in body should have at least {min} items")));
    }
    if let Some(max) = node.max_items.filter(|max| size as i64 > *max) {
        out.errors.push(too_many(err_path(name), size, max));
    }
    if node.unique_items && items.iter().enumerate().any(|(i, v)| items[..i].contains(v)) {
        out.errors.push(invalid(name, &Value::from(""), format!("{name} in body shouldn't contain duplicates")));
    }
    out
}

/// Whether `data` equals an enum value after Go's type conversion to the enum value's
/// type (`reflect.Value.Convert`): `1.0` matches `1`, and so does `1.7`.
fn enum_matches(data: &Value, allowed: &Value) -> bool {
    match (data, allowed) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Number(d), Value::Number(e)) => match (GoNumber::of(d), GoNumber::of(e)) {
            (GoNumber::Int(a), GoNumber::Int(b)) => a == b,
            (GoNumber::Float(a), GoNumber::Int(b)) => go_int64(a) == b,
            (GoNumber::Int(a), GoNumber::Float(b)) => a as f64 == b,
            (GoNumber::Float(a), GoNumber::Float(b)) => a == b,
        },
        // Go converts an integer to the string of that code point.
        (Value::Number(d), Value::String(e)) => match GoNumber::of(d) {
            GoNumber::Int(a) => {
                let c = u32::try_from(a).ok().and_then(char::from_u32).unwrap_or('\u{FFFD}');
                c.to_string() == *e
            }
            GoNumber::Float(_) => false,
        },
        (a, b) => a == b,
    }
}

/// Go's `json.Marshal` of an enum value (strings are listed as they are).
pub fn go_json(v: &Value) -> String {
    match v {
        Value::Number(n) => match GoNumber::of(n) {
            GoNumber::Int(i) => i.to_string(),
            GoNumber::Float(f) => go_json_float(f),
        },
        Value::Array(items) => format!("[{}]", items.iter().map(go_json).collect::<Vec<_>>().join(",")),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::from(k.as_str()), go_json(&map[k.as_str()]))).collect();
            format!("{{{}}}", inner.join(","))
        }
        other => other.to_string(),
    }
}

/// `Unsupported value: "c": supported values: "a", "b"`.
fn enum_error(node: &Node, name: &str, v: &Value) -> Option<FieldError> {
    let allowed = node.enum_.as_ref().filter(|e| !e.is_empty())?;
    if allowed.iter().any(|e| enum_matches(v, e)) {
        return None;
    }
    let supported: Vec<String> = allowed
        .iter()
        .map(|e| match e {
            Value::String(s) => go_quote(s),
            other => go_quote(&go_json(other)),
        })
        .collect();
    let detail = format!("supported values: {}", supported.join(", "));
    Some(with_value(ErrorType::NotSupported, err_path(name), v, detail))
}

/// `minProperties`/`maxProperties` (which hide everything else), unknown fields under
/// `additionalProperties: false`, map values, fields, then `required`.
fn object(node: &Node, name: &str, map: &serde_json::Map<String, Value>, old: Option<&Value>) -> Outcome {
    let mut out = Outcome::default();
    let count = map.len();
    // The count is one error among the others: the properties are still validated (the
    // oracle reports both).
    if let Some(min) = node.min_properties.filter(|min| (count as i64) < *min) {
        out.errors.push(invalid(
            name,
            &Value::from(count),
            format!("{name} in body should have at least {min} properties"),
        ));
    }
    if let Some(max) = node.max_properties.filter(|max| count as i64 > *max) {
        out.errors.push(too_many(err_path(name), count, max));
    }
    let child_name = |key: &str| if name.is_empty() { key.to_string() } else { format!("{name}.{key}") };
    match &node.additional_properties {
        Additional::Allows(false) => {
            for key in map.keys().filter(|k| !node.properties.contains_key(*k)) {
                let detail = format!("{name}.{key} in body is a forbidden property");
                out.errors.push(invalid(name, &Value::from(key.as_str()), detail));
            }
        }
        Additional::Schema(schema) => {
            for (key, v) in map.iter().filter(|(k, _)| !node.properties.contains_key(*k)) {
                let old_v = correlate::field(Some(node), old, key);
                out.merge(validate(schema, &format!("{name}.{key}"), v, old_v));
            }
        }
        Additional::Absent | Additional::Allows(true) => {}
    }
    for (key, prop) in &node.properties {
        if let Some(v) = map.get(key) {
            out.merge(validate(prop, &child_name(key), v, correlate::field(Some(node), old, key)));
        }
    }
    for key in node.required.iter().filter(|k| !map.contains_key(*k)) {
        out.errors.push(FieldError::required(err_path(&format!("{name}.{key}")), ""));
    }
    out
}

/// `anyOf`, `oneOf`, `allOf`, `not`: each alternative validates the same value at the same
/// path; failures report the junctor's message plus the best alternative's errors.
fn junctors(node: &Node, name: &str, v: &Value, old: Option<&Value>) -> Outcome {
    let mut main = Outcome::default();
    let quoted = go_quote(name);
    if !node.any_of.is_empty() {
        let mut best: Option<Outcome> = None;
        let mut succeeded = false;
        for alternative in &node.any_of {
            let r = validate(alternative, name, v, old);
            if r.is_valid() {
                succeeded = true;
                main.matches += r.matches;
                best = None;
                break;
            }
            if best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if !succeeded {
            main.errors.push(composite(format!("{quoted} must validate at least one schema (anyOf)")));
        }
        if let Some(b) = best {
            main.merge(b);
        }
    }
    if !node.one_of.is_empty() {
        let mut best: Option<Outcome> = None;
        let mut validated = 0;
        for alternative in &node.one_of {
            let r = validate(alternative, name, v, old);
            if r.is_valid() {
                validated += 1;
                best = None;
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.matches > b.matches) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let found = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {validated} valid alternatives")
            };
            main.errors.push(composite(format!("{quoted} must validate one and only one schema (oneOf). {found}")));
            if let Some(b) = best {
                main.merge(b);
            }
        }
    }
    if !node.all_of.is_empty() {
        let mut validated = 0;
        for part in &node.all_of {
            let r = validate(part, name, v, old);
            validated += usize::from(r.is_valid());
            main.merge(r);
        }
        if validated != node.all_of.len() {
            let none = if validated == 0 { ". None validated" } else { "" };
            main.errors.push(composite(format!("{quoted} must validate all the schemas (allOf){none}")));
        }
    }
    if let Some(not) = node.not.as_deref()
        && validate(not, name, v, old).is_valid()
    {
        main.errors.push(composite(format!("{quoted} must not validate the schema (not)")));
    }
    main.matches += 1;
    main
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
