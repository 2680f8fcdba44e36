//! Kubernetes JSONPath, as `additionalPrinterColumns` use it.
//!
//! A port of client-go's `util/jsonpath` parser and evaluator (the same grammar kubectl
//! and kube-apiserver's CRD table convertor use): `.a.b`, `['key']` (with `\.` for a dot
//! inside a key), `[0]`, `[-1]`, `[1:3]`, `[*]`, `[0,2]`, `.*`, `..name` and filters
//! `[?(@.type=="Ready")]`, with kube's quirks kept (a missing key is an empty result, a
//! filter comparing values of different types fails, `['a.b']` without escapes is three
//! fields). Evaluation runs over `serde_json::Value`; [`JsonPath::plain_prefix`] tells the
//! table code which leading fields it can find in raw bytes before decoding anything.
//!
//! The parser lives in [`super::jsonpath_parse`]; [`super::gofmt`] prints results as Go
//! does, because a printer column of type string shows exactly that text.

pub use super::jsonpath_parse::JsonPathError;
use super::jsonpath_parse::{Node, Param, Parser, err};
use crate::field::go_type;
use serde_json::Value;
use std::borrow::Cow;
use std::cmp::Ordering;

/// A parsed JSONPath template.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    root: Vec<Node>,
}

impl JsonPath {
    /// Parses a template such as `{.spec.replicas}` (text outside braces is literal).
    pub fn parse_template(text: &str) -> Result<Self, JsonPathError> {
        Ok(JsonPath { root: Parser::new(text).parse()? })
    }

    /// Parses a printer column's `jsonPath` (`.spec.x`, or `{.spec.x}` already braced),
    /// as the CRD table convertor does with `{` + path + `}`.
    pub fn parse_column(path: &str) -> Result<Self, JsonPathError> {
        let trimmed = path.trim();
        if trimmed.starts_with('{') && trimmed.ends_with('}') {
            Self::parse_template(trimmed)
        } else {
            Self::parse_template(&format!("{{{path}}}"))
        }
    }

    /// The leading plain object fields of a single-action template (`.status.conditions`
    /// of `{.status.conditions[?(@.type=="Ready")].status}`) and the number of nodes they
    /// cover. Looking those up needs no evaluation, so callers may find them in raw bytes
    /// and evaluate only the rest with [`JsonPath::find_from`].
    pub fn plain_prefix(&self) -> Option<Vec<&str>> {
        let [Node::List(nodes)] = self.root.as_slice() else { return None };
        Some(nodes.iter().map_while(|n| if let Node::Field(f) = n { Some(f.as_str()) } else { None }).collect())
    }

    /// The number of nodes of a single-action template made only of plain fields.
    pub fn plain_len(&self) -> Option<usize> {
        let [Node::List(nodes)] = self.root.as_slice() else { return None };
        nodes.iter().all(|n| matches!(n, Node::Field(_))).then_some(nodes.len())
    }

    /// Every result list, one per top-level node (client-go's `FindResults`), missing keys
    /// allowed.
    pub fn find<'a>(&self, data: &'a Value) -> Result<Vec<Vec<Cow<'a, Value>>>, JsonPathError> {
        self.root.iter().map(|node| walk(vec![Cow::Borrowed(data)], node)).collect()
    }

    /// Evaluates a single-action template on `value`, the value reached by its first
    /// `skip` plain fields (see [`JsonPath::plain_prefix`]). A template of several actions
    /// (`{.a} x {.b}`, which has no plain prefix, so `skip` is 0) gives its first node's
    /// results, as a printer column takes them, failing if any node fails.
    pub fn find_from<'a>(&self, value: &'a Value, skip: usize) -> Result<Vec<Cow<'a, Value>>, JsonPathError> {
        let [Node::List(nodes)] = self.root.as_slice() else {
            return Ok(self.find(value)?.into_iter().next().unwrap_or_default());
        };
        eval_list(vec![Cow::Borrowed(value)], nodes.get(skip..).unwrap_or(&[]))
    }
}

type Vals<'a> = Vec<Cow<'a, Value>>;

/// A child of `parent` found by `f`, borrowed when the parent is.
fn child<'a>(parent: &Cow<'a, Value>, f: impl Fn(&Value) -> Option<&Value>) -> Option<Cow<'a, Value>> {
    match parent {
        Cow::Borrowed(p) => f(p).map(Cow::Borrowed),
        Cow::Owned(p) => f(p).map(|v| Cow::Owned(v.clone())),
    }
}

/// Every direct child of a container (map values in key order, array items, the bytes of
/// a string as integers, as Go's reflection walks them).
fn children<'a>(value: &Cow<'a, Value>) -> Vals<'a> {
    match value.as_ref() {
        Value::Object(m) => (0..m.len()).filter_map(|i| child(value, |v| v.as_object()?.values().nth(i))).collect(),
        Value::Array(a) => (0..a.len()).filter_map(|i| child(value, |v| v.as_array()?.get(i))).collect(),
        Value::String(s) => s.bytes().map(|b| Cow::Owned(Value::from(b))).collect(),
        _ => vec![],
    }
}

fn walk<'a>(input: Vals<'a>, node: &Node) -> Result<Vals<'a>, JsonPathError> {
    match node {
        Node::List(nodes) => eval_list(input, nodes),
        Node::Text(t) => Ok(vec![Cow::Owned(Value::from(t.clone()))]),
        Node::Field(name) => Ok(input.iter().filter_map(|v| child(v, |v| v.as_object()?.get(name))).collect()),
        Node::Array(params) => eval_array(input, params),
        Node::Filter { left, right, op } => eval_filter(input, left, right, op),
        Node::Int(i) => Ok(input.iter().map(|_| Cow::Owned(Value::from(*i))).collect()),
        Node::Float(f) => Ok(input.iter().map(|_| Cow::Owned(Value::from(*f))).collect()),
        Node::Wildcard => Ok(input.iter().filter(|v| !v.is_null()).flat_map(children).collect()),
        Node::Recursive => Ok(eval_recursive(input)),
        Node::Union(lists) => {
            let mut out = Vec::new();
            for list in lists {
                out.extend(eval_list(input.clone(), list)?);
            }
            Ok(out)
        }
        Node::Identifier(name) => err(format!("unrecognized identifier {name}")),
        Node::Bool(b) => err(format!("unexpected Node {b}")),
    }
}

fn eval_list<'a>(input: Vals<'a>, nodes: &[Node]) -> Result<Vals<'a>, JsonPathError> {
    nodes.iter().try_fold(input, walk)
}

fn eval_array<'a>(input: Vals<'a>, params: &[Param; 3]) -> Result<Vals<'a>, JsonPathError> {
    let mut out = Vec::new();
    for value in &input {
        if value.is_null() {
            continue;
        }
        let Some(len) = value.as_array().map(|a| a.len() as i64) else {
            return err(format!("{} is not array or slice", go_type(value)));
        };
        let mut p = *params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        // Asking for no items ends the whole step, later inputs unread, as client-go does.
        if p[1].value == p[0].value {
            return Ok(out);
        }
        if p[0].value >= len || p[0].value < 0 {
            return err(format!("array index out of bounds: index {}, length {len}", p[0].value));
        }
        if p[1].value > len || p[1].value < 0 {
            return err(format!("array index out of bounds: index {}, length {len}", p[1].value - 1));
        }
        if p[0].value > p[1].value {
            return err(format!("starting index {} is greater than ending index {}", p[0].value, p[1].value));
        }
        // The third parameter is a step (client-go 1.32; before, it was a capacity).
        let step = match p[2] {
            Param { known: true, value, .. } if value <= 0 => return err("step must be > 0"),
            Param { known: true, value, .. } => value,
            _ => 1,
        };
        for i in (p[0].value..p[1].value).step_by(usize::try_from(step).unwrap_or(usize::MAX)) {
            if let Some(item) = child(value, |v| v.as_array()?.get(i as usize)) {
                out.push(item);
            }
        }
    }
    Ok(out)
}

fn eval_recursive(input: Vals<'_>) -> Vals<'_> {
    let mut out = Vec::new();
    for value in input {
        if value.is_null() {
            continue;
        }
        let kids = children(&value);
        if !kids.is_empty() {
            out.push(value);
            out.extend(eval_recursive(kids));
        }
    }
    out
}

fn eval_filter<'a>(input: Vals<'a>, left: &[Node], right: &[Node], op: &str) -> Result<Vals<'a>, JsonPathError> {
    let mut out = Vec::new();
    for value in &input {
        let Some(len) = value.as_array().map(Vec::len) else {
            return err(format!("{} is not array or slice and cannot be filtered", go_type(value)));
        };
        for i in 0..len {
            let Some(item) = child(value, |v| v.as_array()?.get(i)) else { continue };
            let lefts = eval_list(vec![item.clone()], left);
            if op == "exists" {
                if lefts.is_ok_and(|l| !l.is_empty()) {
                    out.push(item);
                }
                continue;
            }
            // An item the sides find nothing in is skipped; more than one result fails.
            let lefts = lefts?;
            let l = match lefts.as_slice() {
                [] => continue,
                [l] => l,
                _ => return err("can only compare one element at a time"),
            };
            let rights = eval_list(vec![item.clone()], right)?;
            let r = match rights.as_slice() {
                [] => continue,
                [r] => r,
                _ => return err("can only compare one element at a time"),
            };
            let pass = match op {
                "==" => go_equal(l, r)?,
                "!=" => !go_equal(l, r)?,
                "<" => go_compare(l, r)? == Ordering::Less,
                ">" => go_compare(l, r)? == Ordering::Greater,
                "<=" => go_compare(l, r)? != Ordering::Greater,
                ">=" => go_compare(l, r)? != Ordering::Less,
                other => return err(format!("unrecognized filter operator {other}")),
            };
            if pass {
                out.push(item);
            }
        }
    }
    Ok(out)
}

/// Go template's basic kinds for comparisons. Decoded JSON has no unsigned integers: a
/// number past int64 is a float64.
#[derive(PartialEq)]
enum Basic<'v> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'v str),
}

fn basic(v: &Value) -> Result<Basic<'_>, JsonPathError> {
    match v {
        Value::Bool(b) => Ok(Basic::Bool(*b)),
        Value::String(s) => Ok(Basic::Str(s)),
        Value::Number(n) => Ok(match n.as_i64() {
            Some(i) => Basic::Int(i),
            None => Basic::Float(n.as_f64().unwrap_or(f64::NAN)),
        }),
        _ => err("invalid type for comparison"),
    }
}

fn go_compare(l: &Value, r: &Value) -> Result<Ordering, JsonPathError> {
    let incompatible = || JsonPathError("incompatible types for comparison".into());
    Ok(match (basic(l)?, basic(r)?) {
        (Basic::Int(a), Basic::Int(b)) => a.cmp(&b),
        (Basic::Float(a), Basic::Float(b)) => a.partial_cmp(&b).ok_or_else(incompatible)?,
        (Basic::Str(a), Basic::Str(b)) => a.cmp(b),
        (Basic::Bool(_), Basic::Bool(_)) => return err("invalid type for comparison"),
        _ => return Err(incompatible()),
    })
}

fn go_equal(l: &Value, r: &Value) -> Result<bool, JsonPathError> {
    match (basic(l)?, basic(r)?) {
        (Basic::Bool(a), Basic::Bool(b)) => Ok(a == b),
        (Basic::Float(a), Basic::Float(b)) => Ok(a == b),
        _ => go_compare(l, r).map(|o| o == Ordering::Equal),
    }
}

#[cfg(test)]
#[path = "jsonpath_tests.rs"]
mod tests;
