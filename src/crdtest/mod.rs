//! `kubectl crd test` as a library: test cases for CRDs, written in YAML beside them, run
//! through [`crate::validate`] (the engine's own server-side dry runs; nothing is checked
//! twice) and judged against what they expect.
//!
//! The format ([`parse`]): a case file is named `*.test.yaml` (or `.test.yml`); each YAML
//! document in it is one case, or a list of cases:
//!
//! ```yaml
//! - name: size above the maximum is refused
//!   object:                      # inline, or {file: gizmo.yaml} relative to this file
//!     apiVersion: example.com/v1
//!     kind: Gizmo
//!     metadata: {name: big}
//!     spec: {size: 9}
//!   oldObject: {file: old.yaml}  # optional: the check is then an update (oldSelf)
//!   strict: false                # optional: unknown fields refuse the object
//!   expect:
//!     causes:                    # the exact set; reason and message are optional
//!       - {field: spec.size, reason: FieldValueInvalid}
//! ```
//!
//! `expect` holds `valid: true`; or, for a refusal, `causes`, `messageContains` (substrings
//! of the Status message) or `valid: false` alone; `warnings` (the exact list) may go with
//! any of them. Parsing is pure ([`parse`]); files named by `file:` are read by
//! [`resolve`]; [`judge`] compares a verdict with the expectation; [`run`] does it all.

mod judge;
mod run;
pub mod write;

pub use judge::judge;
pub use run::{Outcome, Ready, RunReport, run};

use crate::cluster::apply::Document;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Whether `path` names a case file.
pub fn is_case_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".test.yaml") || n.ends_with(".test.yml"))
}

/// A case file that cannot be used, and why.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    #[error("{file}: not valid YAML: {reason}")]
    Yaml { file: String, reason: String },
    #[error("{file} (document {document}): {reason}")]
    Malformed { file: String, document: usize, reason: String },
    #[error("{file}: case {case:?}: {reason}")]
    Case { file: String, case: String, reason: String },
}

/// One test case, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    /// The case file.
    pub file: String,
    pub object: Source,
    pub old_object: Option<Source>,
    pub strict: bool,
    pub expect: Expect,
}

/// An object inline, or the file holding it.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Inline(Value),
    File(PathBuf),
}

/// What a case expects.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Expect {
    /// Whether the object is accepted.
    pub valid: bool,
    /// The exact set of causes of the refusal.
    pub causes: Option<Vec<ExpectedCause>>,
    /// Substrings of the refusal's message.
    pub message_contains: Vec<String>,
    /// The exact warnings.
    pub warnings: Option<Vec<String>>,
}

/// One expected cause: its field, and its reason and message when given.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedCause {
    pub field: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawCase {
    name: String,
    object: Value,
    #[serde(default)]
    old_object: Option<Value>,
    #[serde(default)]
    strict: bool,
    expect: RawExpect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawExpect {
    #[serde(default)]
    valid: Option<bool>,
    #[serde(default)]
    causes: Option<Vec<ExpectedCause>>,
    #[serde(default)]
    message_contains: Option<Vec<String>>,
    #[serde(default)]
    warnings: Option<Vec<String>>,
}

/// The cases of the case file `file` holding `text`.
pub fn parse(text: &str, file: &str) -> Result<Vec<Case>, CaseError> {
    let documents = serde_saphyr::from_multiple::<Value>(text)
        .map_err(|e| CaseError::Yaml { file: file.to_string(), reason: e.to_string() })?;
    let mut cases = Vec::new();
    for (i, document) in documents.into_iter().enumerate() {
        let malformed = |reason: String| CaseError::Malformed { file: file.to_string(), document: i + 1, reason };
        let items = match document {
            Value::Null => continue,
            Value::Array(items) => items,
            one @ Value::Object(_) => vec![one],
            _ => {
                return Err(malformed(
                    "expected a case (a mapping with name, object and expect) or a list of them".into(),
                ));
            }
        };
        for item in items {
            let raw: RawCase = serde_json::from_value(item).map_err(|e| malformed(e.to_string()))?;
            cases.push(case(raw, file)?);
        }
    }
    let mut names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if let Some(twice) = names.windows(2).find(|w| w[0] == w[1]) {
        let reason = "two cases have this name".to_string();
        return Err(CaseError::Case { file: file.to_string(), case: twice[0].to_string(), reason });
    }
    Ok(cases)
}

fn case(raw: RawCase, file: &str) -> Result<Case, CaseError> {
    let wrong =
        |reason: &str| CaseError::Case { file: file.to_string(), case: raw.name.clone(), reason: reason.into() };
    let expect = raw.expect;
    let refused = expect.causes.is_some() || expect.message_contains.is_some();
    let valid = match expect.valid {
        Some(true) if refused => return Err(wrong("expect has valid: true with causes or messageContains")),
        Some(valid) => valid,
        None if refused => false,
        None if expect.warnings.is_some() => true,
        None => return Err(wrong("expect says nothing: give valid, causes, messageContains or warnings")),
    };
    let object = source(raw.object).map_err(|why| wrong(&format!("object: {why}")))?;
    let old_object = raw.old_object.map(source).transpose().map_err(|why| wrong(&format!("oldObject: {why}")))?;
    Ok(Case {
        name: raw.name,
        file: file.to_string(),
        object,
        old_object,
        strict: raw.strict,
        expect: Expect {
            valid,
            causes: expect.causes,
            message_contains: expect.message_contains.unwrap_or_default(),
            warnings: expect.warnings,
        },
    })
}

/// `{file: PATH}` is a reference; any other mapping is the object itself.
fn source(value: Value) -> Result<Source, &'static str> {
    match value {
        Value::Object(map) if map.len() == 1 && map.contains_key("file") => match map.get("file") {
            Some(Value::String(path)) => Ok(Source::File(PathBuf::from(path))),
            _ => Err("file: must be a path"),
        },
        Value::Object(_) => Ok(Source::Inline(value)),
        _ => Err("expected an object, or {file: PATH}"),
    }
}

/// A case's objects as documents: inline ones as they are, files (relative to the case
/// file's directory) read with `read`, which answers a file's text.
pub fn resolve(
    case: &Case,
    read: &dyn Fn(&Path) -> Result<String, String>,
) -> Result<(Document, Option<Document>), CaseError> {
    let load = |source: &Source, what: &str| -> Result<Document, CaseError> {
        let wrong = |reason: String| CaseError::Case { file: case.file.clone(), case: case.name.clone(), reason };
        match source {
            Source::Inline(value) => {
                Ok(Document { origin: format!("{} ({what} of {:?})", case.file, case.name), value: value.clone() })
            }
            Source::File(path) => {
                let path = Path::new(&case.file).parent().unwrap_or(Path::new("")).join(path);
                let text = read(&path).map_err(|e| wrong(format!("{what}: cannot read {}: {e}", path.display())))?;
                let mut values = serde_saphyr::from_multiple::<Value>(&text)
                    .map_err(|e| wrong(format!("{what}: {} is not valid YAML: {e}", path.display())))?;
                values.retain(|v| !v.is_null());
                match <[Value; 1]>::try_from(values) {
                    Ok([value @ Value::Object(_)]) => Ok(Document { origin: path.display().to_string(), value }),
                    _ => Err(wrong(format!("{what}: {} must hold exactly one object", path.display()))),
                }
            }
        }
    };
    Ok((load(&case.object, "object")?, case.old_object.as_ref().map(|o| load(o, "oldObject")).transpose()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(text: &str) -> Result<Case, CaseError> {
        parse(text, "dir/g.test.yaml").map(|mut cases| {
            assert_eq!(cases.len(), 1);
            cases.remove(0)
        })
    }

    #[test]
    fn a_document_is_a_case_or_a_list_of_cases() {
        let text = "name: a\nobject: {kind: G}\nexpect: {valid: true}\n---\n\
                    - name: b\n  object: {file: b.yaml}\n  oldObject: {kind: G}\n  strict: true\n  expect:\n    causes: [{field: spec.x, reason: FieldValueInvalid}]\n    messageContains: [x]\n";
        let cases = parse(text, "dir/g.test.yaml").expect("parses");
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].object, Source::Inline(json!({"kind": "G"})));
        assert!(cases[0].expect.valid && !cases[0].strict);
        let b = &cases[1];
        assert_eq!(b.object, Source::File("b.yaml".into()));
        assert!(b.strict && !b.expect.valid && b.old_object.is_some());
        assert_eq!(
            b.expect.causes,
            Some(vec![ExpectedCause {
                field: "spec.x".into(),
                reason: Some("FieldValueInvalid".into()),
                message: None
            }])
        );
        assert_eq!(b.expect.message_contains, ["x"]);
    }

    #[test]
    fn malformed_cases_say_where_and_what() {
        let table = [
            ("name: a\nobject: {kind: G}\nexpect: {}\n", "case \"a\": expect says nothing"),
            ("name: a\nobject: {kind: G}\nexpect: {valid: true, causes: []}\n", "valid: true with causes"),
            ("name: a\nobject: {kind: G}\nexpct: {valid: true}\n", "(document 1): unknown field `expct`"),
            ("name: a\nobject: 3\nexpect: {valid: true}\n", "object: expected an object"),
            ("name: a\nobject: {file: 3}\nexpect: {valid: true}\n", "object: file: must be a path"),
            ("- 3\n", "(document 1)"),
            ("name: [\n", "not valid YAML"),
            (
                "- {name: a, object: {}, expect: {valid: true}}\n- {name: a, object: {}, expect: {valid: true}}\n",
                "two cases",
            ),
        ];
        for (text, wanted) in table {
            let err = one(text).expect_err(text).to_string();
            assert!(err.starts_with("dir/g.test.yaml") && err.contains(wanted), "{text}: {err}");
        }
    }

    #[test]
    fn files_are_read_relative_to_the_case_file() {
        let case = one("name: a\nobject: {file: o.yaml}\noldObject: {kind: Old}\nexpect: {valid: true}\n").expect("ok");
        let read = |p: &Path| {
            if p == Path::new("dir/o.yaml") { Ok("kind: G\n".to_string()) } else { Err(format!("no {}", p.display())) }
        };
        let (object, old) = resolve(&case, &read).expect("resolves");
        assert_eq!(object.value, json!({"kind": "G"}));
        assert_eq!(old.expect("old").value, json!({"kind": "Old"}));
        let two = |_: &Path| Ok("kind: A\n---\nkind: B\n".to_string());
        assert!(resolve(&case, &two).expect_err("two").to_string().contains("exactly one object"));
        let missing = one("name: a\nobject: {file: x.yaml}\nexpect: {valid: true}\n").expect("ok");
        assert!(resolve(&missing, &read).expect_err("missing").to_string().contains("cannot read dir/x.yaml"));
    }

    #[test]
    fn case_files_are_named_test_yaml() {
        assert!(is_case_file(Path::new("a/gizmo.test.yaml")) && is_case_file(Path::new("t.test.yml")));
        assert!(!is_case_file(Path::new("a/gizmo.yaml")) && !is_case_file(Path::new("test.yaml")));
    }
}
