//! kubectl's printers that take a template: `-o jsonpath=TEMPLATE`, `-o
//! custom-columns=SPEC`, and the `--sort-by` order, over objects as JSON values.
//!
//! The JSONPath is the engine's port of client-go's (the one that computes CRD printer
//! columns), and values print as client-go prints them: `jsonpath` with
//! `JSONPath.PrintResults` ([`print_text`]), custom columns with `fmt.Sprint`
//! ([`plain_v`]). Parsing happens once, in stage two of argument parsing
//! ([`super::config`]), so a bad template is a usage error before anything is read.

use kubectl_crd_engine::gofmt::plain_v;
use kubectl_crd_engine::gofmt::print_text;
use kubectl_crd_engine::jsonpath::JsonPath;
use serde_json::Value;
use std::cmp::Ordering;

/// A template, sort key or custom-columns spec that is wrong, in kubectl's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TemplateError(pub String);

/// A parsed `-o` template.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    /// `-o jsonpath=...`, with the text as given (for messages).
    JsonPath { raw: String, path: JsonPath },
    /// `-o custom-columns=HEADER:PATH,...`.
    CustomColumns(Vec<Column>),
}

/// One custom column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub header: String,
    pub path: JsonPath,
}

/// Parses `-o jsonpath=` (`custom_columns` false) or `-o custom-columns=`, in kubectl's words
/// when it is wrong.
pub fn parse(raw: &str, custom_columns: bool) -> Result<Template, TemplateError> {
    parse_spec(raw, custom_columns).map_err(TemplateError)
}

fn parse_spec(raw: &str, custom_columns: bool) -> Result<Template, String> {
    if !custom_columns {
        if raw.is_empty() {
            return Err("template format specified but no template given: write -o jsonpath='{.metadata.name}'".into());
        }
        let path = JsonPath::parse_template(raw).map_err(|e| format!("error parsing jsonpath {raw}, {e}"))?;
        return Ok(Template::JsonPath { raw: raw.to_string(), path });
    }
    if raw.is_empty() {
        return Err(
            "custom-columns format specified but no custom columns given: write -o custom-columns=NAME:.metadata.name"
                .into(),
        );
    }
    let columns = raw
        .split(',')
        .map(|part| {
            let Some((header, path)) = part.split_once(':') else {
                return Err(format!("unexpected custom-columns spec: {part}, expected <header>:<json-path-expr>"));
            };
            Ok(Column { header: header.to_string(), path: relaxed(path).map_err(|e| e.0)? })
        })
        .collect::<Result<_, _>>()?;
    Ok(Template::CustomColumns(columns))
}

/// kubectl's `RelaxedJSONPathExpression`: `a.b`, `.a.b`, `{a.b}` and `{.a.b}` all mean
/// `{.a.b}` (custom columns and `--sort-by`).
pub fn relaxed(raw: &str) -> Result<JsonPath, TemplateError> {
    let inner = match raw.strip_prefix('{') {
        Some(rest) => rest.strip_suffix('}'),
        None => Some(raw),
    };
    let inner = inner.map(|i| i.strip_prefix('.').unwrap_or(i)).filter(|i| !i.is_empty() && !i.contains(['{', '}']));
    let Some(inner) = inner else {
        return Err(TemplateError(format!(
            "unexpected path string {raw:?}, expected a 'name1.name2' or '.name1.name2' or '{{name1.name2}}' or '{{.name1.name2}}'"
        )));
    };
    JsonPath::parse_template(&format!("{{.{inner}}}"))
        .map_err(|e| TemplateError(format!("error parsing jsonpath {raw}, {e}")))
}

/// The text `-o jsonpath` prints for `data` (an object, or a `List` of them).
pub fn jsonpath_text(raw: &str, path: &JsonPath, data: &Value) -> Result<String, TemplateError> {
    let results = path.find(data).map_err(|e| TemplateError(format!("error executing jsonpath {raw:?}: {e}")))?;
    let mut out = String::new();
    for list in results {
        let texts: Vec<String> = list.iter().map(|v| print_text(v)).collect();
        out.push_str(&texts.join(" "));
    }
    Ok(out)
}

/// One object's cells under custom columns: the values found joined by `,`, `<none>` when
/// nothing is found (as kubectl prints them).
pub fn custom_cells(columns: &[Column], object: &Value) -> Vec<String> {
    columns
        .iter()
        .map(|c| {
            let results = c.path.find(object).unwrap_or_default();
            if results.first().is_none_or(Vec::is_empty) {
                return "<none>".to_string();
            }
            results.iter().flatten().map(|v| plain_v(v)).collect::<Vec<_>>().join(",")
        })
        .collect()
}

/// The order `--sort-by` puts `objects` in (indices), or `None` when no object has the
/// field (kubectl then prints nothing). Objects without it come first; equal keys keep
/// the server's order.
pub fn sort_order(path: &JsonPath, objects: &[Value]) -> Option<Vec<usize>> {
    let keys: Vec<Option<Value>> = objects
        .iter()
        .map(|o| path.find(o).ok().and_then(|r| r.into_iter().next()).and_then(|l| l.into_iter().next()))
        .map(|v| v.map(|v| v.into_owned()))
        .collect();
    if !objects.is_empty() && keys.iter().all(Option::is_none) {
        return None;
    }
    let mut order: Vec<usize> = (0..objects.len()).collect();
    order.sort_by(|&a, &b| match (&keys[a], &keys[b]) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => compare(x, y),
    });
    Some(order)
}

/// kubectl's `isLess` on decoded values: numbers by value, strings in natural order
/// (`sortorder.NaturalLess`: digit runs by number), `false` before `true`; values of
/// different types are left as they are.
fn compare(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x.as_f64().partial_cmp(&y.as_f64()).unwrap_or(Ordering::Equal),
        },
        (Value::String(x), Value::String(y)) => natural(x, y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        _ => Ordering::Equal,
    }
}

/// `sortorder.NaturalLess` as an ordering.
fn natural(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (da, db) = (a[i].is_ascii_digit(), b[j].is_ascii_digit());
        if da != db {
            // Digits before other characters.
            return if da { Ordering::Less } else { Ordering::Greater };
        }
        if !da {
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
            continue;
        }
        let skip_zeros = |s: &[u8], mut k: usize| {
            while k < s.len() && s[k] == b'0' {
                k += 1;
            }
            k
        };
        let digits_end = |s: &[u8], mut k: usize| {
            while k < s.len() && s[k].is_ascii_digit() {
                k += 1;
            }
            k
        };
        let (nz_a, nz_b) = (skip_zeros(a, i), skip_zeros(b, j));
        let (end_a, end_b) = (digits_end(a, nz_a), digits_end(b, nz_b));
        let by_number = (end_a - nz_a).cmp(&(end_b - nz_b)).then_with(|| a[nz_a..end_a].cmp(&b[nz_b..end_b]));
        // Equal numbers: the one with fewer leading zeros first.
        let by_zeros = (nz_a - i).cmp(&(nz_b - j));
        match by_number.then(by_zeros) {
            Ordering::Equal => (i, j) = (end_a, end_b),
            other => return other,
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn columns(spec: &str) -> Vec<Column> {
        match parse(spec, true).expect("spec") {
            Template::CustomColumns(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn templates_are_checked_in_kubectl_s_words() {
        let e = parse("{.metadata.name", false).expect_err("unclosed");
        assert_eq!(e.to_string(), "error parsing jsonpath {.metadata.name, unclosed action");
        let e = parse("", false).expect_err("empty");
        assert!(e.to_string().starts_with("template format specified but no template given"), "{e}");
        let e = parse("NAME", true).expect_err("no path");
        assert_eq!(e.to_string(), "unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>");
        assert!(relaxed("{.a}.b}").is_err());
        for same in ["spec.color", ".spec.color", "{spec.color}", "{.spec.color}"] {
            assert_eq!(relaxed(same).expect(same), relaxed(".spec.color").expect("plain"), "{same}");
        }
    }

    #[test]
    fn values_print_as_client_go_prints_them() {
        let obj = json!({"metadata": {"name": "w1"}, "spec": {"tags": ["a", "b"], "n": 5, "m": {"k": 1.5}}});
        let Template::JsonPath { raw, path } = parse("{.metadata.name}{\"\\t\"}{.spec.tags[*]}", false).expect("path")
        else {
            panic!("a jsonpath")
        };
        assert_eq!(jsonpath_text(&raw, &path, &obj).expect("text"), "w1\ta b");
        let cols = columns("NAME:.metadata.name,TAGS:.spec.tags[*],N:spec.n,M:{.spec.m},NONE:.status.phase");
        assert_eq!(custom_cells(&cols, &obj), ["w1", "a,b", "5", "map[k:1.5]", "<none>"]);
    }

    #[test]
    fn sort_order_is_kubectl_s() {
        let objs: Vec<Value> = [json!({"n": 10, "s": "w10"}), json!({"s": "w9"}), json!({"n": 9, "s": "w009"})].into();
        assert_eq!(sort_order(&relaxed(".n").expect("n"), &objs), Some(vec![1, 2, 0]));
        assert_eq!(sort_order(&relaxed(".s").expect("s"), &objs), Some(vec![1, 2, 0]));
        assert_eq!(sort_order(&relaxed(".missing").expect("m"), &objs), None);
        assert_eq!(natural("a2", "a10"), Ordering::Less);
        assert_eq!(natural("a02", "a2"), Ordering::Greater);
        assert_eq!(natural("ab", "a"), Ordering::Greater);
    }
}
