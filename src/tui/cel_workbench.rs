//! The CEL workbench (`c` on a CRD): its rules listed, one tried on values the user edits
//! in the editor, each try evaluated by the engine as validation evaluates it
//! ([`kubectl_crd_engine::cel::evaluate_rule`]) and kept as a `kubectl crd test` case that
//! `s` saves. The state and its step functions; the editor and the files are effects, the
//! drawing is [`crate::tui::view`]'s.

use crate::cluster::cel_rules::{self, At, RuleSite};
use crate::cluster::registrations::Crd;
use crate::crdtest::write::{Expected, NewCase, crd_document, to_yaml};
use kubectl_crd_engine::cel::{Outcome, Verdict, evaluate_rule};
use serde_json::Value;
use std::path::PathBuf;

/// A real object of the kind to start values from.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    Loading,
    /// There is none (or it could not be read: the text says why); skeletons stand in.
    Absent(String),
    Found(Value),
}

/// One value tried on one rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Tried {
    /// Index into the workbench's rules.
    pub rule: usize,
    pub self_value: Value,
    pub old_self: Option<Value>,
    pub outcome: Outcome,
    /// The try as a `kubectl crd test` case (the whole object).
    pub case: NewCase,
}

/// The workbench screen.
#[derive(Debug, Clone, PartialEq)]
pub struct CelWorkbench {
    pub crd: Box<Crd>,
    pub name: String,
    pub rules: Vec<RuleSite>,
    pub cursor: usize,
    pub offset: usize,
    pub sample: Sample,
    pub tried: Vec<Tried>,
}

impl CelWorkbench {
    pub fn new(crd: Crd) -> CelWorkbench {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let rules = cel_rules::collect(&crd);
        CelWorkbench { crd: Box::new(crd), name, rules, cursor: 0, offset: 0, sample: Sample::Loading, tried: vec![] }
    }

    pub fn current(&self) -> Option<&RuleSite> {
        self.rules.get(self.cursor)
    }

    /// The latest try of the rule under the cursor.
    pub fn last_try(&self) -> Option<&Tried> {
        self.tried.iter().rev().find(|t| t.rule == self.cursor)
    }

    /// The object cases of `site` start from: the sample, else a skeleton.
    fn base(&self, site: &RuleSite) -> Value {
        let sample = match &self.sample {
            Sample::Found(v) => Some(v),
            _ => None,
        };
        cel_rules::base_object(&self.crd, &site.version, sample)
    }

    /// Where `site`'s value is in `base`.
    fn at(site: &RuleSite, base: &Value) -> Vec<At> {
        cel_rules::locate(&site.steps, base)
    }

    /// The editor's text for the rule under the cursor: the last values tried on it, else
    /// the base object's value there, else the schema's skeleton.
    pub fn editor_text(&self) -> Option<String> {
        let site = self.current()?;
        let (self_value, old_self) = match self.last_try() {
            Some(t) => (t.self_value.clone(), t.old_self.clone()),
            None => {
                let base = self.base(site);
                let found = cel_rules::value_at(&base, &Self::at(site, &base)).filter(|v| !v.is_null()).cloned();
                let value = found.unwrap_or_else(|| cel_rules::skeleton(&site.schema));
                (value.clone(), Some(value))
            }
        };
        Some(editor_text(site, &self.name, &self_value, old_self.as_ref().filter(|_| site.transition())))
    }

    /// Evaluates the edited text on the rule `rule` and keeps the try.
    pub fn try_text(&mut self, rule: usize, text: &str) -> Result<&Tried, String> {
        let site = self.rules.get(rule).ok_or("the rule is gone")?;
        let (self_value, old_self) = parse_edited(text)?;
        let old_self = old_self.filter(|_| site.transition());
        let base = self.base(site);
        let at = Self::at(site, &base);
        let path = cel_rules::field_path(&at);
        let outcome = evaluate_rule(&site.schema, &site.rule, &path, site.at_root(), &self_value, old_self.as_ref());
        let expect = match outcome.verdict {
            Verdict::Passed | Verdict::Skipped => Expected::Valid,
            Verdict::Failed => Expected::Refused(outcome.causes.iter().map(|c| c.text()).collect()),
        };
        let case = NewCase {
            name: case_name(site, &outcome, &self_value, self.tried.len() + 1),
            object: cel_rules::with_value_at(&base, &at, self_value.clone()),
            old_object: old_self.as_ref().map(|old| cel_rules::with_value_at(&base, &at, old.clone())),
            expect,
        };
        self.tried.push(Tried { rule, self_value, old_self, outcome, case });
        self.tried.last().ok_or_else(|| "nothing tried".to_string())
    }

    /// Where `s` saves: a directory named after the CRD, with the CRD and the cases, so
    /// that `kubectl crd test DIR` runs them.
    pub fn save_dir(&self) -> PathBuf {
        PathBuf::from(format!("cel-{}", self.name))
    }

    /// The files `s` writes: the CRD, and the cases tried.
    pub fn files(&self) -> Vec<(PathBuf, String)> {
        let dir = self.save_dir();
        let crd = crd_document(&serde_json::to_value(&*self.crd).unwrap_or_default());
        let crd_text = serde_saphyr::to_string(&crd).unwrap_or_default();
        let cases: Vec<NewCase> = self.tried.iter().map(|t| t.case.clone()).collect();
        let comment = format!(
            "Cases tried in the CEL workbench of {} (kubectl crd tui).\nRun them: kubectl crd test {}",
            self.name,
            dir.display()
        );
        vec![
            (dir.join(format!("{}.crd.yaml", self.name)), crd_text),
            (dir.join(format!("{}.cel.test.yaml", self.name)), to_yaml(&cases, &comment)),
        ]
    }
}

/// `rule: value passes` and the like, numbered so that two tries never share a name.
fn case_name(site: &RuleSite, outcome: &Outcome, value: &Value, n: usize) -> String {
    let word = match outcome.verdict {
        Verdict::Passed => "passes",
        Verdict::Failed => "fails",
        Verdict::Skipped => "is skipped",
    };
    let mut shown = value.to_string();
    if shown.chars().count() > 60 {
        shown = shown.chars().take(59).collect::<String>() + "…";
    }
    format!("#{n} {} {word} with {shown}", site.schema_path())
}

/// The editor's file: what the rule is, then `self` (and `oldSelf` for a transition rule).
pub fn editor_text(site: &RuleSite, crd: &str, self_value: &Value, old_self: Option<&Value>) -> String {
    let mut doc = serde_json::Map::new();
    doc.insert("self".into(), self_value.clone());
    if let Some(old) = old_self {
        doc.insert("oldSelf".into(), old.clone());
    }
    let body = serde_saphyr::to_string(&Value::Object(doc)).unwrap_or_default();
    let old_note = if old_self.is_some() {
        "# oldSelf is the value before an update (a transition rule); remove it to try a create.\n"
    } else {
        ""
    };
    format!(
        "# CEL workbench: {crd} {} at {}\n# rule: {}\n# Edit self{}; save to evaluate. Lines starting with '#' are ignored.\n{old_note}{body}",
        site.version,
        site.schema_path(),
        site.rule.rule.replace('\n', " "),
        if old_self.is_some() { " and oldSelf" } else { "" },
    )
}

/// `self` and `oldSelf` from the editor's file.
pub fn parse_edited(text: &str) -> Result<(Value, Option<Value>), String> {
    let doc = kubectl_crd_engine::manifests::from_yaml(text)
        .map_err(|e| format!("the edited file is not valid YAML: {e}"))?;
    let Value::Object(mut map) = doc else { return Err("the edited file must hold self: (and oldSelf:)".into()) };
    let self_value = map.remove("self").ok_or("the edited file has no self:")?;
    Ok((self_value, map.remove("oldSelf")))
}

#[cfg(test)]
#[path = "cel_workbench_tests.rs"]
pub(crate) mod tests;
