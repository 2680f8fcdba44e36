//! A JSON path resolved against a schema node, as kube's `ValidFieldPath` does: the
//! `fieldPath` of an `x-kubernetes-validations` rule (registration refuses a path that does
//! not resolve, evaluation reports a failed rule at the path it names) and the `jsonPath` of
//! a `selectableFields` entry (without bracket notation).
//!
//! The path is JSON-path-like: `.name` for a property (or a map key), `['name']` with a
//! single-quoted, backslash-escaped string for either; a quoted string may hold the
//! delimiters `.`, `[` and `]`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{JSONSchemaProps, JSONSchemaPropsOrBool};

/// Why a `fieldPath` does not resolve (kube's wording; registration only says "must be a
/// valid path").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldPathError {
    #[error("unexpected end of JSON path")]
    UnexpectedEnd,
    #[error("array notation is not allowed")]
    ArrayNotation,
    #[error("expected single quoted string but got {0}")]
    NotQuoted(String),
    #[error("invalid string literal: invalid escape char {0}")]
    BadEscape(String),
    #[error("expected ] but got {0}")]
    NotClosed(String),
    #[error("expected [ or . but got: {0}")]
    Unexpected(String),
    #[error("does not refer to a valid field")]
    NoSuchField,
}

/// The tokens of Go's scanner: the delimiters alone, a single-quoted string up to its
/// closing quote (delimiters included), and the text between delimiters.
fn tokens(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let bytes = rest.as_bytes();
        let end = if bytes[0] == b'\'' {
            // An unterminated string runs to the end.
            (1..bytes.len()).find(|&i| bytes[i] == b'\'' && bytes[i - 1] != b'\\').map_or(rest.len(), |i| i + 1)
        } else {
            match rest.find(['.', '[', ']']) {
                Some(0) => 1,
                Some(i) => i,
                None => rest.len(),
            }
        };
        out.push(&rest[..end]);
        rest = &rest[end..];
    }
    out
}

/// Go's `unescapeSingleQuote`: `\a \b \f \n \r \t \v \' \\`, anything else refused.
fn unescape(s: &str) -> Result<String, FieldPathError> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        // A lone trailing backslash matches no escape and stays as it is.
        let Some(d) = chars.next() else {
            out.push(c);
            break;
        };
        out.push(match d {
            '\'' | '\\' => d,
            other => control_escape(other).ok_or_else(|| FieldPathError::BadEscape(format!("\\{other}")))?,
        });
    }
    Ok(out)
}

/// The control character a C-style escape letter stands for (`\n`, `\t`, ... `\v`), as
/// Go's and CEL's string escapes share them.
pub(crate) fn control_escape(letter: char) -> Option<char> {
    Some(match letter {
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\u{b}',
        _ => return None,
    })
}

/// Whether `['name']` may stand for `.name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Brackets {
    Allowed,
    Refused,
}

/// What a path resolves to.
#[derive(Debug, PartialEq)]
pub struct Resolved<'a> {
    /// The field path it names, relative to the node (`a.b`, `a[key]` for a map key; empty
    /// for an empty path).
    pub path: String,
    /// The schema at its end; `None` behind a map whose `additionalProperties` is a boolean.
    pub leaf: Option<&'a JSONSchemaProps>,
}

/// Resolves `path` against `node`, with the field path it names.
pub fn resolve(path: &str, node: &JSONSchemaProps) -> Result<String, FieldPathError> {
    resolve_in(path, node, Brackets::Allowed).map(|r| r.path)
}

/// Resolves `path` against `node`.
pub fn resolve_in<'a>(
    path: &str,
    node: &'a JSONSchemaProps,
    brackets: Brackets,
) -> Result<Resolved<'a>, FieldPathError> {
    let mut out = String::new();
    // `None` below a map whose values have no schema (`additionalProperties: true`).
    let mut schema = Some(node);
    let mut step = |name: &str, schema: &mut Option<&'a JSONSchemaProps>| -> Result<(), FieldPathError> {
        let current = schema.ok_or(FieldPathError::NoSuchField)?;
        if let Some(properties) = &current.properties {
            *schema = Some(properties.get(name).ok_or(FieldPathError::NoSuchField)?);
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(name);
        } else if let Some(additional) = &current.additional_properties {
            *schema = match additional {
                JSONSchemaPropsOrBool::Schema(values) => Some(values),
                JSONSchemaPropsOrBool::Bool(_) => None,
            };
            out.push_str(&format!("[{name}]"));
        } else {
            return Err(FieldPathError::NoSuchField);
        }
        Ok(())
    };
    let mut tokens = tokens(path).into_iter();
    while let Some(token) = tokens.next() {
        match token {
            "[" if brackets == Brackets::Refused => return Err(FieldPathError::ArrayNotation),
            "[" => {
                let quoted = tokens.next().ok_or(FieldPathError::UnexpectedEnd)?;
                let inner = quoted
                    .strip_prefix('\'')
                    .and_then(|q| q.strip_suffix('\''))
                    .filter(|_| quoted.len() >= 2)
                    .ok_or_else(|| FieldPathError::NotQuoted(quoted.to_string()))?;
                step(&unescape(inner)?, &mut schema)?;
                match tokens.next() {
                    Some("]") => {}
                    Some(other) => return Err(FieldPathError::NotClosed(other.to_string())),
                    None => return Err(FieldPathError::UnexpectedEnd),
                }
            }
            "." => step(tokens.next().ok_or(FieldPathError::UnexpectedEnd)?, &mut schema)?,
            other => return Err(FieldPathError::Unexpected(other.to_string())),
        }
    }
    Ok(Resolved { path: out, leaf: schema })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node() -> JSONSchemaProps {
        serde_json::from_value(json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"b.c": {"type": "string"}, "it's": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "free": {"type": "object", "additionalProperties": true},
            "l": {"type": "array", "items": {"type": "string"}}
        }}))
        .expect("schema")
    }

    #[test]
    fn paths_resolve_as_kube_resolves_them() {
        let n = node();
        assert_eq!(resolve("", &n).as_deref(), Ok(""));
        assert_eq!(resolve(".a['b.c']", &n).as_deref(), Ok("a.b.c"));
        assert_eq!(resolve("['a'].b.c", &n), Err(FieldPathError::NoSuchField));
        assert_eq!(resolve(r".a['it\'s']", &n).as_deref(), Ok("a.it's"));
        assert_eq!(resolve(".m.key", &n).as_deref(), Ok("m[key]"));
        assert_eq!(resolve(".m['k.x']", &n).as_deref(), Ok("m[k.x]"));
        assert_eq!(resolve(".free.k", &n).as_deref(), Ok("free[k]"));
        assert_eq!(resolve(".free.k.j", &n), Err(FieldPathError::NoSuchField));
    }

    #[test]
    fn what_does_not_resolve() {
        let n = node();
        assert_eq!(resolve(".nope", &n), Err(FieldPathError::NoSuchField));
        assert_eq!(resolve("a", &n), Err(FieldPathError::Unexpected("a".into())));
        assert_eq!(resolve("  ", &n), Err(FieldPathError::Unexpected("  ".into())));
        assert_eq!(resolve(".l[0]", &n), Err(FieldPathError::NotQuoted("0".into())));
        assert_eq!(resolve(".a\n", &n), Err(FieldPathError::NoSuchField));
        assert_eq!(resolve(".", &n), Err(FieldPathError::UnexpectedEnd));
        assert_eq!(resolve(".a['b.c'", &n), Err(FieldPathError::UnexpectedEnd));
        assert_eq!(resolve(r".a['\q']", &n), Err(FieldPathError::BadEscape(r"\q".into())));
    }
}
