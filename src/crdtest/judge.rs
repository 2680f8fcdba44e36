//! Whether a verdict is what a case expects: pure, so every rule is a row of a table.

use super::{Expect, ExpectedCause};
use crate::validate::Checked;
use serde_json::Value;

/// What differs between `expect` and `checked`, a line each; empty when the case passes.
pub fn judge(expect: &Expect, checked: &Checked) -> Vec<String> {
    let mut out = Vec::new();
    match (expect.valid, checked.valid) {
        (true, false) => out.push(format!("expected valid, got: {}", checked.verdict())),
        (false, true) => out.push("expected a refusal, got valid".into()),
        _ => {}
    }
    if !checked.valid {
        let actual = causes(checked);
        if let Some(expected) = expect.causes.as_ref().filter(|e| !same_causes(e, &actual)) {
            let got = match &checked.status {
                Some(_) => show_actual(&actual),
                // Nothing answered (the kind is not served): why is worth more than `[]`.
                None => format!("no Status: {}", checked.verdict()),
            };
            out.push(format!("expected causes {}, got {got}", show_expected(expected)));
        }
        let message = checked.verdict();
        for part in expect.message_contains.iter().filter(|p| !message.contains(p.as_str())) {
            out.push(format!("expected the message to contain {part:?}, got: {message}"));
        }
    }
    if let Some(warnings) = expect.warnings.as_ref().filter(|w| **w != checked.warnings) {
        out.push(format!("expected warnings {warnings:?}, got {:?}", checked.warnings));
    }
    out
}

/// A refusal's causes as `(field, reason, message)`.
type Cause = (String, String, String);

fn causes(checked: &Checked) -> Vec<Cause> {
    let list = checked.status.as_ref().and_then(|s| s.pointer("/details/causes")).and_then(Value::as_array);
    let text = |c: &Value, k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    list.map(|l| l.iter().map(|c| (text(c, "field"), text(c, "reason"), text(c, "message"))).collect())
        .unwrap_or_default()
}

fn matches(expected: &ExpectedCause, (field, reason, message): &Cause) -> bool {
    expected.field == *field
        && expected.reason.as_ref().is_none_or(|r| r == reason)
        && expected.message.as_ref().is_none_or(|m| m == message)
}

/// Whether every expected cause matches its own actual cause, and none is left over.
fn same_causes(expected: &[ExpectedCause], actual: &[Cause]) -> bool {
    if expected.len() != actual.len() {
        return false;
    }
    let mut left: Vec<&Cause> = actual.iter().collect();
    expected.iter().all(|e| match left.iter().position(|a| matches(e, a)) {
        Some(i) => {
            left.swap_remove(i);
            true
        }
        None => false,
    })
}

fn show_expected(causes: &[ExpectedCause]) -> String {
    let one = |c: &ExpectedCause| {
        let mut text = c.field.clone();
        if let Some(reason) = &c.reason {
            text.push_str(&format!(" {reason}"));
        }
        if let Some(message) = &c.message {
            text.push_str(&format!(" {message:?}"));
        }
        text
    };
    format!("[{}]", causes.iter().map(one).collect::<Vec<_>>().join("; "))
}

fn show_actual(causes: &[Cause]) -> String {
    let one = |(field, reason, message): &Cause| format!("{field} {reason} {message:?}");
    format!("[{}]", causes.iter().map(one).collect::<Vec<_>>().join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(causes: Value) -> Checked {
        let status = json!({"kind": "Status", "message": "Gizmo.example.com \"g\" is invalid: spec.size: Invalid value: 9",
            "details": {"causes": causes}});
        Checked {
            origin: "o".into(),
            api_version: "example.com/v1".into(),
            kind: "Gizmo".into(),
            namespace: None,
            name: "g".into(),
            valid: false,
            warnings: vec![],
            status: Some(status),
            message: None,
            object: None,
        }
    }

    fn valid() -> Checked {
        Checked { valid: true, status: None, warnings: vec!["unknown field \"spec.x\"".into()], ..refused(json!([])) }
    }

    fn cause(field: &str, reason: Option<&str>, message: Option<&str>) -> ExpectedCause {
        ExpectedCause { field: field.into(), reason: reason.map(Into::into), message: message.map(Into::into) }
    }

    fn expect_causes(causes: Vec<ExpectedCause>) -> Expect {
        Expect { causes: Some(causes), ..Expect::default() }
    }

    #[test]
    fn verdicts_are_judged_against_the_expectation() {
        let size = json!([{"field": "spec.size", "reason": "FieldValueInvalid", "message": "Invalid value: 9"}]);
        let two = json!([{"field": "spec.a", "reason": "FieldValueRequired"}, {"field": "spec.a", "reason": "FieldValueInvalid"}]);
        let warned =
            Expect { valid: true, warnings: Some(vec!["unknown field \"spec.x\"".into()]), ..Expect::default() };
        let contains = |s: &str| Expect { message_contains: vec![s.into()], ..Expect::default() };
        let table: Vec<(&str, Expect, Checked, &str)> = vec![
            ("valid as expected", Expect { valid: true, ..Expect::default() }, valid(), ""),
            (
                "valid, but refused",
                Expect { valid: true, ..Expect::default() },
                refused(size.clone()),
                "expected valid, got: Gizmo",
            ),
            ("refused, but valid", Expect::default(), valid(), "expected a refusal, got valid"),
            ("any refusal", Expect::default(), refused(size.clone()), ""),
            ("field only", expect_causes(vec![cause("spec.size", None, None)]), refused(size.clone()), ""),
            (
                "all parts",
                expect_causes(vec![cause("spec.size", Some("FieldValueInvalid"), Some("Invalid value: 9"))]),
                refused(size.clone()),
                "",
            ),
            (
                "wrong reason",
                expect_causes(vec![cause("spec.size", Some("FieldValueRequired"), None)]),
                refused(size.clone()),
                "expected causes [spec.size FieldValueRequired], got [spec.size FieldValueInvalid \"Invalid value: 9\"]",
            ),
            ("a cause too few", expect_causes(vec![]), refused(size.clone()), "expected causes [], got"),
            (
                "a cause too many",
                expect_causes(vec![cause("spec.size", None, None), cause("spec.b", None, None)]),
                refused(size.clone()),
                "expected causes",
            ),
            (
                "same field twice, any order",
                expect_causes(vec![cause("spec.a", Some("FieldValueInvalid"), None), cause("spec.a", None, None)]),
                refused(two),
                "",
            ),
            ("message part", contains("spec.size: Invalid"), refused(size.clone()), ""),
            (
                "message part missing",
                contains("immutable"),
                refused(size),
                "expected the message to contain \"immutable\"",
            ),
            (
                "not served",
                expect_causes(vec![cause("spec.size", None, None)]),
                Checked { status: None, message: Some("no matches".into()), ..refused(json!([])) },
                "expected causes [spec.size], got no Status: no matches",
            ),
            ("warnings", warned.clone(), valid(), ""),
            ("warnings differ", Expect { warnings: Some(vec![]), ..warned }, valid(), "expected warnings [], got"),
        ];
        for (what, expect, checked, wanted) in table {
            let got = judge(&expect, &checked).join("\n");
            if wanted.is_empty() {
                assert_eq!(got, "", "{what}");
            } else {
                assert!(got.contains(wanted), "{what}: {got}");
            }
        }
    }
}
