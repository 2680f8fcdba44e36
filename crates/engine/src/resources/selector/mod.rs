//! Label and field selectors, parsed as kube-apiserver parses them.
//!
//! Labels: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a` (exists), `!a`,
//! `a>1`, `a<1`, comma-separated requirements that must all hold. Fields: `path=value`,
//! `path==value`, `path!=value` over the paths a resource supports (`metadata.name`,
//! `metadata.namespace`, and a CRD's `selectableFields`).
//!
//! The text is read by two small parsers that mirror apimachinery's, error sentences
//! included ([`label_parser`], [`field_parser`]); this module holds what they produce and
//! how it matches objects.

mod field_parser;
mod label_parser;
#[cfg(test)]
mod parser_tests;

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
    /// `key>n`: the label holds an integer greater than `n`.
    GreaterThan(String, i64),
    /// `key<n`: the label holds an integer less than `n`.
    LessThan(String, i64),
}

/// A label value as an integer, as `Gt`/`Lt` read it (Go's `strconv.ParseInt`); a label
/// that is no integer matches neither.
fn int_label(value: Option<&str>) -> Option<i64> {
    value.and_then(|v| v.parse().ok())
}

/// A parsed label selector: every requirement must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(pub Vec<LabelRequirement>);

/// A parsed field selector: every `(path, value, equal)` must match. Fields are read at
/// their dotted paths, or by the kind's own lookup when it has one.
#[derive(Debug, Clone, Default)]
pub struct FieldSelector(pub Vec<field_parser::Term>, pub Option<super::FieldLookup>);

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

impl LabelSelector {
    /// Parses a label selector as kube's `labels.Parse` does (see [`label_parser`]).
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        label_parser::parse(s).map(LabelSelector).map_err(SelectorError)
    }

    /// A structured `metav1.LabelSelector` (`matchLabels`, `matchExpressions`), as kube's
    /// `LabelSelectorAsSelector` reads it; an empty one selects everything.
    pub fn from_structured(selector: &Value) -> Result<Self, String> {
        let mut requirements = Vec::new();
        let labels = selector.get("matchLabels").and_then(Value::as_object);
        for (key, value) in labels.into_iter().flatten() {
            requirements.push(LabelRequirement::Equals(key.clone(), value.as_str().unwrap_or_default().to_string()));
        }
        let expressions = selector.get("matchExpressions").and_then(Value::as_array);
        for expression in expressions.into_iter().flatten() {
            let key = expression.get("key").and_then(Value::as_str).unwrap_or_default().to_string();
            let values: BTreeSet<String> = expression
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect();
            let operator = expression.get("operator").and_then(Value::as_str).unwrap_or_default();
            let requirement = match operator {
                "In" | "NotIn" if values.is_empty() => {
                    return Err("for 'in', 'notin' operators, values set can't be empty".into());
                }
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Err("values set must be empty for exists and does not exist".into());
                }
                "In" => LabelRequirement::In(key, values),
                "NotIn" => LabelRequirement::NotIn(key, values),
                "Exists" => LabelRequirement::Exists(key),
                "DoesNotExist" => LabelRequirement::NotExists(key),
                other => {
                    return Err(format!("{} is not a valid label selector operator", crate::field::go_quote(other)));
                }
            };
            requirements.push(requirement);
        }
        Ok(LabelSelector(requirements))
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
            LabelRequirement::GreaterThan(k, n) => int_label(get(k)).is_some_and(|v| v > *n),
            LabelRequirement::LessThan(k, n) => int_label(get(k)).is_some_and(|v| v < *n),
        })
    }
}

impl FieldSelector {
    #[cfg(test)]
    /// Parses a field selector as kube does (see [`field_parser`]); `supported` lists the
    /// paths this resource can select on.
    pub fn parse(s: &str, supported: &[String]) -> Result<Self, SelectorError> {
        let selector = Self::parse_terms(s)?;
        selector.check_supported(supported)?;
        Ok(selector)
    }

    /// Parses a field selector without asking whether the resource supports its fields:
    /// kube decodes the text before it validates the list options, and checks the fields
    /// after ([`FieldSelector::check_supported`]).
    pub fn parse_terms(s: &str) -> Result<Self, SelectorError> {
        field_parser::parse(s).map(|terms| FieldSelector(terms, None)).map_err(SelectorError)
    }

    /// The first field (in sorted order) that is not one of `supported`, for kinds that
    /// word kube's `ConvertFieldLabel` refusal their own way.
    pub fn unsupported(&self, supported: &[String]) -> Option<&str> {
        self.0.iter().map(|(field, _, _)| field.as_str()).find(|f| !supported.iter().any(|s| s == f))
    }

    #[cfg(test)]
    /// Whether every field is one of `supported` (kube's `ConvertFieldLabel`).
    pub fn check_supported(&self, supported: &[String]) -> Result<(), SelectorError> {
        field_parser::check_supported(&self.0, supported).map_err(SelectorError)
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
