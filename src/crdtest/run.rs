//! Running cases: each is one object of a [`crate::validate::validate`] call. Cases are
//! grouped into calls that cannot disturb each other — one `strict` setting per call, and
//! an old object's identity only once per call (the old objects are created for real, and
//! any object with the same identity becomes an update of it) — and the calls run
//! concurrently, each on its own in-memory engine.

use super::{Case, judge};
use crate::cluster::apply::Document;
use crate::validate::{Checked, ValidateError, ValidateOptions, validate};
use serde_json::Value;
use std::collections::HashSet;

/// One case and how it went.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub name: String,
    /// The case file.
    pub file: String,
    pub checked: Checked,
    /// What differs from the expectation; empty when the case passed.
    pub failures: Vec<String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The CRDs' verdicts and the cases', in input order.
#[derive(Debug, Clone, Default)]
pub struct RunReport {
    pub crds: Vec<Checked>,
    pub outcomes: Vec<Outcome>,
}

/// A case with its objects read.
pub struct Ready<'a> {
    pub case: &'a Case,
    pub object: Document,
    pub old: Option<Document>,
}

/// Runs every case against `crds`.
pub async fn run(crds: &[Document], cases: &[Ready<'_>]) -> Result<RunReport, ValidateError> {
    let batches = batches(cases);
    let calls = batches.iter().map(|batch| {
        let objects: Vec<Document> = batch.iter().map(|&i| cases[i].object.clone()).collect();
        let olds: Vec<Document> = batch.iter().filter_map(|&i| cases[i].old.clone()).collect();
        let options = ValidateOptions { strict: batch.first().is_some_and(|&i| cases[i].case.strict) };
        async move { validate(crds, &objects, &olds, options).await }
    });
    let reports = futures::future::try_join_all(calls).await?;
    let mut report = RunReport::default();
    let mut checked: Vec<Option<Checked>> = vec![None; cases.len()];
    for (batch, answer) in batches.iter().zip(reports) {
        if report.crds.is_empty() {
            report.crds = answer.crds;
        }
        for (&i, verdict) in batch.iter().zip(answer.objects) {
            checked[i] = Some(verdict);
        }
    }
    if batches.is_empty() {
        // No case: the CRDs are still worth checking.
        report.crds = validate(crds, &[], &[], ValidateOptions::default()).await?.crds;
    }
    for (ready, verdict) in cases.iter().zip(checked) {
        let Some(checked) = verdict else { continue };
        report.outcomes.push(Outcome {
            name: ready.case.name.clone(),
            file: ready.case.file.clone(),
            failures: judge(&ready.case.expect, &checked),
            checked,
        });
    }
    Ok(report)
}

/// Indexes of `cases` per validate call: cases without an old object share a call per
/// `strict`; a case with one joins the first call of its `strict` whose old objects do not
/// have its identity yet.
fn batches(cases: &[Ready<'_>]) -> Vec<Vec<usize>> {
    let mut plain: [Vec<usize>; 2] = [Vec::new(), Vec::new()];
    let mut updates: Vec<(bool, HashSet<Identity>, Vec<usize>)> = Vec::new();
    for (i, ready) in cases.iter().enumerate() {
        let strict = ready.case.strict;
        if ready.old.is_none() {
            plain[usize::from(strict)].push(i);
            continue;
        }
        let id = identity(&ready.object);
        match updates.iter_mut().find(|(s, ids, _)| *s == strict && !ids.contains(&id)) {
            Some((_, ids, members)) => {
                ids.insert(id);
                members.push(i);
            }
            None => updates.push((strict, HashSet::from([id]), vec![i])),
        }
    }
    plain.into_iter().chain(updates.into_iter().map(|(_, _, members)| members)).filter(|b| !b.is_empty()).collect()
}

/// apiVersion, kind and name: the namespace is left out, which can only split calls more
/// than needed, never join two that would collide.
type Identity = (String, String, String);

fn identity(doc: &Document) -> Identity {
    let text = |pointer: &str| doc.value.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_string();
    (text("/apiVersion"), text("/kind"), text("/metadata/name"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crdtest::{Expect, Source};
    use serde_json::json;

    fn case(strict: bool) -> Case {
        Case {
            name: "c".into(),
            file: "f".into(),
            object: Source::Inline(json!({})),
            old_object: None,
            strict,
            expect: Expect::default(),
        }
    }

    fn doc(name: &str) -> Document {
        Document { origin: name.into(), value: json!({"apiVersion": "v1", "kind": "G", "metadata": {"name": name}}) }
    }

    #[test]
    fn calls_keep_strictness_apart_and_old_identities_unique() {
        let (lax, strict) = (case(false), case(true));
        let ready = |case, name: &str, old: bool| Ready { case, object: doc(name), old: old.then(|| doc(name)) };
        let cases = [
            ready(&lax, "a", false),
            ready(&strict, "a", false),
            ready(&lax, "b", true),
            ready(&lax, "b", true),
            ready(&lax, "c", true),
            ready(&lax, "a", false),
            ready(&strict, "b", true),
        ];
        assert_eq!(batches(&cases), vec![vec![0, 5], vec![1], vec![2, 4], vec![3], vec![6]]);
    }
}
