//! Label and field selectors, parsed as kube-apiserver parses them.
//!
//! Labels: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a`,
//! comma-separated requirements that must all hold. Fields: `path=value`, `path==value`,
//! `path!=value` over the paths a resource supports (`metadata.name`,
//! `metadata.namespace`, and a CRD's `selectableFields`).

use serde_json::Value;
use std::collections::BTreeSet;

/// One label requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed label selector: every requirement must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(pub Vec<LabelRequirement>);

/// A parsed field selector: every `(path, value, equal)` must match. Fields are read at
/// their dotted paths, or by the kind's own lookup when it has one.
#[derive(Debug, Clone, Default)]
pub struct FieldSelector(pub Vec<(String, String, bool)>, pub Option<super::FieldLookup>);

impl LabelSelector {
    /// Whether the selector matches every object (nothing was asked).
    pub fn is_everything(&self) -> bool {
        self.0.is_empty()
    }
}

impl FieldSelector {
    /// Whether the selector matches every object (nothing was asked).
    pub fn is_everything(&self) -> bool {
        self.0.is_empty()
    }
}

impl PartialEq for FieldSelector {
    /// Selectors are equal when they require the same things (the lookup is the kind's).
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for FieldSelector {}

/// A selector kube would refuse with 400 BadRequest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SelectorError(pub String);

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn valid_label_key(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    let prefix_ok = prefix.is_none_or(|p| {
        !p.is_empty()
            && p.len() <= 253
            && p.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'))
    });
    name_ok && prefix_ok
}

fn valid_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric()))
}

fn key(k: &str) -> Result<String, SelectorError> {
    let k = k.trim();
    if valid_label_key(k) { Ok(k.to_string()) } else { Err(SelectorError(format!("invalid label key \"{k}\""))) }
}

fn value(v: &str) -> Result<String, SelectorError> {
    let v = v.trim();
    if valid_label_value(v) { Ok(v.to_string()) } else { Err(SelectorError(format!("invalid label value: \"{v}\""))) }
}

fn set(list: &str) -> Result<BTreeSet<String>, SelectorError> {
    let inner = list
        .trim()
        .strip_prefix('(')
        .and_then(|s| s.strip_suffix(')'))
        .ok_or_else(|| SelectorError(format!("found '{list}', expected: '('")))?;
    inner.split(',').map(value).collect()
}

impl LabelSelector {
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(LabelSelector(reqs));
        }
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                return Err(SelectorError(format!("found '', expected: identifier in selector \"{s}\"")));
            }
            let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
            let req = if let Some(k) = part.strip_prefix('!') {
                LabelRequirement::NotExists(key(k)?)
            } else if let Some((k, v)) = part.split_once("!=") {
                LabelRequirement::NotEquals(key(k)?, value(v)?)
            } else if let Some((k, v)) = part.split_once("==") {
                LabelRequirement::Equals(key(k)?, value(v)?)
            } else if let Some((k, v)) = part.split_once('=') {
                LabelRequirement::Equals(key(k)?, value(v)?)
            } else if words.len() == 2 {
                let rest = words[1].trim_start();
                if let Some(list) = rest.strip_prefix("notin") {
                    LabelRequirement::NotIn(key(words[0])?, set(list)?)
                } else if let Some(list) = rest.strip_prefix("in") {
                    LabelRequirement::In(key(words[0])?, set(list)?)
                } else {
                    return Err(SelectorError(format!("unable to parse requirement: {part}")));
                }
            } else {
                LabelRequirement::Exists(key(part)?)
            };
            reqs.push(req);
        }
        Ok(LabelSelector(reqs))
    }

    /// Whether an object's labels satisfy every requirement.
    pub fn matches(&self, obj: &Value) -> bool {
        let labels = obj.get("metadata").and_then(|m| m.get("labels")).and_then(Value::as_object);
        let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            LabelRequirement::Equals(k, v) => get(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            LabelRequirement::In(k, vs) => get(k).is_some_and(|x| vs.contains(x)),
            LabelRequirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(x)),
            LabelRequirement::Exists(k) => get(k).is_some(),
            LabelRequirement::NotExists(k) => get(k).is_none(),
        })
    }
}

impl FieldSelector {
    /// Parses a field selector; `supported` lists the paths this resource can select on.
    pub fn parse(s: &str, supported: &[String]) -> Result<Self, SelectorError> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(FieldSelector(reqs, None));
        }
        for part in s.split(',') {
            let (path, value, equal) = if let Some((p, v)) = part.split_once("!=") {
                (p, v, false)
            } else if let Some((p, v)) = part.split_once("==") {
                (p, v, true)
            } else if let Some((p, v)) = part.split_once('=') {
                (p, v, true)
            } else {
                return Err(SelectorError(format!("invalid selector: '{s}'; can't understand '{part}'")));
            };
            let path = path.trim();
            if !supported.iter().any(|p| p == path) {
                return Err(SelectorError(format!("field label not supported: {path}")));
            }
            reqs.push((path.to_string(), value.trim().to_string(), equal));
        }
        Ok(FieldSelector(reqs, None))
    }

    /// The value an equality requirement demands of `path`, as apimachinery's
    /// `RequiresExactMatch` finds it (the first one, when several do).
    pub fn exact(&self, path: &str) -> Option<&str> {
        self.0.iter().find(|(p, _, equal)| *equal && p == path).map(|(_, v, _)| v.as_str())
    }

    /// The selector reading fields with `lookup` (`None`: at their dotted paths).
    pub fn with_lookup(self, lookup: Option<super::FieldLookup>) -> Self {
        FieldSelector(self.0, lookup)
    }

    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|(path, want, equal)| {
            let got = match self.1 {
                Some(read) => read(obj, path),
                None => field_at(obj, path),
            };
            let got = got.unwrap_or_default();
            (got == *want) == *equal
        })
    }
}

/// The value a field selector compares at a dotted path: a string as it is, anything
/// else as JSON.
pub fn field_at(obj: &Value, path: &str) -> Option<String> {
    lookup(obj, path).map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// Follows a dotted path (`spec.color`) into an object.
fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(obj, |v, seg| v.get(seg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "w1", "namespace": "default", "labels": labels}})
    }

    #[test]
    fn label_operators() {
        let o = obj(json!({"app": "demo", "tier": "web"}));
        let cases = [
            ("app=demo", true),
            ("app==demo", true),
            ("app!=demo", false),
            ("app in (demo, other)", true),
            ("tier notin (web)", false),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app=demo,tier=db", false),
            ("missing!=x", true),
            ("", true),
        ];
        for (sel, want) in cases {
            assert_eq!(LabelSelector::parse(sel).expect(sel).matches(&o), want, "{sel}");
        }
    }

    #[test]
    fn bad_selectors_are_refused() {
        assert!(LabelSelector::parse("app=(x").is_err());
        assert!(LabelSelector::parse("a b c").is_err());
        let fields = vec!["metadata.name".to_string()];
        assert_eq!(
            FieldSelector::parse("spec.size=3", &fields),
            Err(SelectorError("field label not supported: spec.size".into()))
        );
    }

    #[test]
    fn field_selectors() {
        let fields = vec!["metadata.name".to_string(), "metadata.namespace".to_string()];
        let o = obj(json!({}));
        let s = FieldSelector::parse("metadata.name=w1,metadata.namespace!=kube-system", &fields).expect("parse");
        assert!(s.matches(&o));
        assert!(!FieldSelector::parse("metadata.name==w2", &fields).expect("parse").matches(&o));
        let s = FieldSelector::parse("metadata.name!=a,metadata.name==b,metadata.name=c", &fields).expect("parse");
        assert_eq!((s.exact("metadata.name"), s.exact("metadata.namespace")), (Some("b"), None));
    }
}
