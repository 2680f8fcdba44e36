//! Case files written by tools (the TUI's CEL workbench saves the cases it tried): cases
//! in, the YAML [`super::parse`] reads out. Pure; the caller writes the file.

use serde_json::{Map, Value, json};

/// A case to write.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCase {
    pub name: String,
    pub object: Value,
    /// For an update (transition rules see it as `oldSelf`).
    pub old_object: Option<Value>,
    pub expect: Expected,
}

/// What a written case expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    Valid,
    /// Refused, the Status message holding each of these (`field: message` of each cause):
    /// substrings rather than the exact causes, so that a case stays true when the object
    /// has problems the case is not about.
    Refused(Vec<String>),
}

/// The case file holding `cases`, `comment` (one or more lines) on top. Names are made
/// unique (a file with the same name twice does not parse).
pub fn to_yaml(cases: &[NewCase], comment: &str) -> String {
    let mut names: Vec<String> = Vec::with_capacity(cases.len());
    let mut items = Vec::with_capacity(cases.len());
    for case in cases {
        let mut name = case.name.clone();
        let mut n = 2;
        while names.contains(&name) {
            name = format!("{} ({n})", case.name);
            n += 1;
        }
        names.push(name.clone());
        let mut item = Map::new();
        item.insert("name".into(), json!(name));
        item.insert("object".into(), case.object.clone());
        if let Some(old) = &case.old_object {
            item.insert("oldObject".into(), old.clone());
        }
        let expect = match &case.expect {
            Expected::Valid => json!({"valid": true}),
            Expected::Refused(found) => json!({"messageContains": found}),
        };
        item.insert("expect".into(), expect);
        items.push(Value::Object(item));
    }
    let header: String = comment.lines().map(|l| format!("# {l}\n")).collect();
    format!("{header}{}", serde_saphyr::to_string(&Value::Array(items)).unwrap_or_default())
}

/// A CRD as read from a cluster, as a file to register it from: no status, and only the
/// metadata a create takes.
pub fn crd_document(crd: &Value) -> Value {
    let mut out = crd.clone();
    if let Some(map) = out.as_object_mut() {
        map.remove("status");
    }
    let meta = crd.get("metadata").and_then(Value::as_object);
    let kept: Map<String, Value> = ["name", "labels", "annotations"]
        .iter()
        .filter_map(|k| Some((k.to_string(), meta?.get(*k)?.clone())))
        .collect();
    out["metadata"] = Value::Object(kept);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crdtest::{Source, parse};

    #[test]
    fn written_cases_parse_back() {
        let object =
            json!({"apiVersion": "example.com/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {"size": 1}});
        let cases = [
            NewCase { name: "a".into(), object: object.clone(), old_object: None, expect: Expected::Valid },
            NewCase {
                name: "a".into(),
                object: object.clone(),
                old_object: Some(object.clone()),
                expect: Expected::Refused(vec!["spec: Invalid value: \"object\": it's \"odd\"".into()]),
            },
        ];
        let text = to_yaml(&cases, "tried in the CEL workbench\nrun: kubectl crd test .");
        assert!(text.starts_with("# tried in the CEL workbench\n# run: kubectl crd test .\n"), "{text}");
        let parsed = parse(&text, "g.test.yaml").expect("parses");
        assert_eq!(parsed.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["a", "a (2)"]);
        assert!(parsed[0].expect.valid && parsed[0].old_object.is_none());
        assert_eq!(parsed[1].object, Source::Inline(object.clone()));
        assert_eq!(parsed[1].old_object, Some(Source::Inline(object)));
        assert_eq!(parsed[1].expect.message_contains, ["spec: Invalid value: \"object\": it's \"odd\""]);
        assert!(!parsed[1].expect.valid);
    }

    #[test]
    fn a_crd_document_keeps_what_a_create_takes() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gizmos.example.com", "uid": "u", "resourceVersion": "3", "labels": {"a": "b"}},
            "spec": {"group": "example.com"}, "status": {"conditions": []}});
        let doc = crd_document(&crd);
        assert_eq!(doc["metadata"], json!({"name": "gizmos.example.com", "labels": {"a": "b"}}));
        assert_eq!(doc.get("status"), None);
        assert_eq!(doc["spec"], crd["spec"]);
    }
}
