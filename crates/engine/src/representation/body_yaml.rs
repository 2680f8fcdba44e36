//! `application/yaml` request bodies as kube's YAML serializer reads them: go-yaml v2's
//! `YAMLToJSON` ([`super::go_yaml`]: YAML 1.1, and JSON from Go's encoder), then its strict
//! pass for the duplicate keys it reports.
//!
//! go-yaml reads the first document of a stream and ignores the rest; a repeated key keeps
//! its last value, and the strict pass names it (`line 7: key "replicas" already set in
//! map`), which kube turns into a warning (or, with `fieldValidation=Strict`, a 400).
//! Syntax errors are worded as go-yaml words them where the problem is known
//! (`yaml: line 4: did not find expected ',' or ']'`).

use super::go_yaml::{self, GoYaml};
use serde_json::Value;
use serde_saphyr::{Budget, DuplicateKeyPolicy, Error};

/// The nodes a body without aliases may hold. go-yaml counts none, so neither may the
/// engine refuse a body kube reads: one within kube's 3 MiB holds at most ~1.6M nodes
/// (two bytes each, `1,`).
const MAX_NODES: usize = 2_000_000;
/// go-yaml's refusal of a document whose aliases expand too far (a billion laughs): it
/// counts the nodes read inside aliases against all, which a body of 3 MiB without aliases
/// cannot breach, so saphyr's default bounds on expansion stand for it, in its words.
const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";
/// saphyr's budgets that only a document's aliases can breach within 3 MiB.
const ALIASING: [&str; 5] = ["Nodes", "Events", "Aliases", "RecordedAnchorEvents", "RecordedAnchorBytes"];

/// saphyr's budget for a body: without aliases (`aliased` false), as loose as go-yaml for
/// any body kube takes; with them, saphyr's bounds on expansion, but not its ratio of aliases
/// to anchors (go-yaml reads a thousand aliases of one anchor).
fn budget(aliased: bool) -> Budget {
    let mut budget = Budget::default();
    budget.enforce_alias_anchor_ratio = false;
    if !aliased {
        budget.max_nodes = MAX_NODES;
        budget.max_events = 3 * MAX_NODES;
        budget.max_aliases = 0;
    }
    budget
}

/// The budget a saphyr error says was breached (`Nodes`), whatever wraps it.
fn breach(e: &Error) -> Option<String> {
    let text = e.to_string();
    let (_, after) = text.split_once("budget breached: ")?;
    Some(after.split([' ', '{']).next().unwrap_or_default().to_string())
}

/// A YAML body read as kube reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlBody {
    pub object: Value,
    /// The strict pass's complaints about repeated keys, in go-yaml's words.
    pub duplicates: Vec<String>,
}

/// Reads the first YAML document of `body`; the error is go-yaml's (`yaml: ...`).
pub fn read(body: &[u8]) -> Result<YamlBody, String> {
    let mut doc = parse(body).map_err(|e| go_yaml_error(body, e))?;
    let mut duplicates = std::mem::take(&mut doc.repeated);
    // kube's warnings are told once each (keys on one line of a flow mapping repeat alike).
    let mut seen = std::collections::HashSet::new();
    duplicates.retain(|r| seen.insert(r.clone()));
    Ok(YamlBody { object: go_yaml::to_json(doc), duplicates })
}

/// The first document of `body`, repeated keys keeping their last value (the visitor names
/// them, as resolved).
fn parse(body: &[u8]) -> Result<GoYaml, Error> {
    // Most bodies have no alias: read them under the loose budget, the rest (met at their
    // first alias) again under the one that bounds expansion.
    match parse_within(body, budget(false)) {
        Err(e) if breach(&e).as_deref() == Some("Aliases") => parse_within(body, budget(true)),
        read => read,
    }
}

fn parse_within(body: &[u8], budget: Budget) -> Result<GoYaml, Error> {
    let mut options = go_yaml::options();
    options.duplicate_keys = DuplicateKeyPolicy::LastWins;
    options.budget = Some(budget);
    let single = serde_saphyr::from_slice_with_options::<GoYaml>(body, options.clone());
    if let Err(Error::MultipleDocuments { .. }) = single.as_ref().map_err(Error::without_snippet) {
        let docs = serde_saphyr::from_slice_multiple_with_options::<GoYaml>(body, options)?;
        return Ok(docs.into_iter().next().unwrap_or(GoYaml { value: Value::Null, repeated: Vec::new() }));
    }
    single
}

/// A parser error as go-yaml words it: `yaml: line N: <problem>`.
fn go_yaml_error(body: &[u8], e: Error) -> String {
    let e = e.without_snippet();
    if breach(e).is_some_and(|b| ALIASING.contains(&b.as_str())) {
        return EXCESSIVE_ALIASING.to_string();
    }
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    // A collection left open at the very end: go-yaml meets the end where a node should be.
    if let Some(at_end) = crate::representation::yaml::node_content_error(body, first) {
        return at_end;
    }
    // The parser says where in its own words, before or after the problem.
    let problem = match first.split_once(": ") {
        Some((place, rest)) if place.starts_with("line ") => rest,
        _ => first,
    };
    let problem = problem.split(" at line ").next().unwrap_or(problem);
    let problem = match problem {
        p if p.starts_with("unclosed") && p.ends_with("'{'") => "did not find expected ',' or '}'",
        p if p.starts_with("unclosed") && p.ends_with("'['") => "did not find expected ',' or ']'",
        p => p,
    };
    match e.location().map(|l| l.line()).filter(|l| *l > 0) {
        Some(line) => format!("yaml: line {line}: {problem}"),
        None => format!("yaml: {problem}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_document_is_read_and_the_rest_ignored() {
        let body = read(b"kind: Widget\nmetadata:\n  name: first\n---\nkind: Widget\nmetadata:\n  name: second\n")
            .expect("first document");
        assert_eq!(body.object, json!({"kind": "Widget", "metadata": {"name": "first"}}));
        assert!(body.duplicates.is_empty());
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_and_is_named() {
        let body = read(b"apiVersion: a/v1\nkind: Widget\nmetadata:\n  name: d\nspec:\n  replicas: 1\n  replicas: 2\n")
            .expect("decodes");
        assert_eq!(body.object["spec"], json!({"replicas": 2}));
        assert_eq!(body.duplicates, [r#"line 7: key "replicas" already set in map"#]);
    }

    #[test]
    fn syntax_errors_are_go_yaml_s() {
        // The oracle's words for this body.
        let e = read(b"apiVersion: a/v1\nkind: Widget\nmetadata:\n  name: [unclosed\n").expect_err("unclosed");
        assert_eq!(e, "yaml: line 4: did not find expected ',' or ']'");
        let e = read(b"apiVersion: [\n").expect_err("open at the end");
        assert_eq!(e, "yaml: line 1: did not find expected node content");
        let e = read(b"a: {b: 1\n").expect_err("unclosed");
        assert!(e.starts_with("yaml: line 1: did not find expected ',' or '}'"), "{e}");
    }

    /// The oracle reads a body of 300,000 items, or of 3,000 aliases of one anchor, and
    /// refuses a billion laughs for its aliasing.
    #[test]
    fn only_aliases_that_expand_too_far_are_refused() {
        let items = format!("l:\n{}", "- 1\n".repeat(300_000));
        assert_eq!(read(items.as_bytes()).expect("many items").object["l"].as_array().map(Vec::len), Some(300_000));
        let aliases = format!("a: &a {{x: 1}}\n{}", (0..3000).map(|i| format!("k{i}: *a\n")).collect::<String>());
        assert_eq!(read(aliases.as_bytes()).expect("aliases").object["k2999"], json!({"x": 1}));
        let mut laughs = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n".to_string();
        for (prev, name) in "abcdefgh".chars().zip("bcdefghi".chars()) {
            laughs += &format!("{name}: &{name} [{}]\n", vec![format!("*{prev}"); 9].join(", "));
        }
        assert_eq!(read(laughs.as_bytes()).expect_err("laughs"), EXCESSIVE_ALIASING);
    }
}
