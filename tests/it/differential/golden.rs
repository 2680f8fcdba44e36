//! Goldens: the normalized observations the oracle produced for a scenario, committed under
//! `tests/it/differential/goldens/<scenario>.json` with the digest of the scenario they were
//! recorded from, and the one list of deliberate differences (`deliberate.yaml`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::scenario::{Scenario, root};
use crate::support::compare::{Difference, diff_json};

#[derive(Debug, Serialize, Deserialize)]
pub struct Golden {
    pub scenario: String,
    pub description: String,
    /// The [`Scenario::digest`] it was recorded from.
    pub digest: String,
    /// What answered, e.g. `kube-apiserver v1.32.13`.
    pub recorded_from: String,
    pub observations: Vec<Value>,
}

fn path(name: &str) -> PathBuf {
    root().join("goldens").join(format!("{name}.json"))
}

impl Golden {
    pub fn new(scenario: &Scenario, recorded_from: &str, observations: Vec<Value>) -> Golden {
        Golden {
            scenario: scenario.name.clone(),
            description: scenario.description.clone(),
            digest: scenario.digest(),
            recorded_from: recorded_from.to_string(),
            observations,
        }
    }

    pub fn load(name: &str) -> Result<Golden, String> {
        let path = path(name);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn save(&self) -> Result<(), String> {
        let path = path(&self.scenario);
        let mut text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        text.push('\n');
        std::fs::create_dir_all(root().join("goldens")).map_err(|e| e.to_string())?;
        std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))
    }
}

/// A difference we keep on purpose: where kube-apiserver answers badly (a 500 for bad input)
/// and we answer better. `pointers` limits it to parts of the observation; without them the
/// whole observation may differ.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deliberate {
    pub scenario: String,
    pub step: String,
    #[serde(default)]
    pub pointers: Vec<String>,
    pub reason: String,
    /// The difference depends on when a background controller the oracle lacks gets there,
    /// so the step may also match.
    #[serde(default)]
    pub racy: bool,
}

pub fn deliberate() -> Vec<Deliberate> {
    let path = root().join("deliberate.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The known gaps of a scenario: steps where the engine still answers otherwise than the
/// oracle, one step name a line in `gaps/<scenario>.txt`. The list is the to-do list of
/// fidelity work; it can only shrink: a listed step that now matches fails the replay until
/// its line goes.
pub fn gaps(scenario: &str) -> Vec<String> {
    let path = root().join("gaps").join(format!("{scenario}.txt"));
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(String::from).collect()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("read {}: {e}", path.display()),
    }
}

/// Writes the steps that differ now as the scenario's gaps (`DIFFERENTIAL_UPDATE_GAPS=1`).
pub fn save_gaps(scenario: &str, steps: &[String]) {
    let dir = root().join("gaps");
    let path = dir.join(format!("{scenario}.txt"));
    if steps.is_empty() {
        let _ = std::fs::remove_file(&path);
        return;
    }
    std::fs::create_dir_all(&dir).expect("create tests/it/differential/gaps");
    let mut text = format!("# Steps of {scenario} where the engine still differs from the oracle (fidelity to-do).\n");
    steps.iter().for_each(|step| text.push_str(&format!("{step}\n")));
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
}

/// How one observation compared.
#[derive(Debug)]
pub enum Verdict {
    Same,
    Differs {
        step: String,
        request: String,
        expected: Value,
        actual: Value,
        differences: Vec<Difference>,
    },
    /// Differs, and is listed as a known gap.
    Gap {
        step: String,
    },
    /// Listed as a known gap but now the same: the line must go.
    GapButSame {
        step: String,
    },
    /// Listed as deliberate and differing only where the list allows.
    Deliberate,
    /// Listed as deliberate but no longer differs: the entry must go.
    DeliberateButSame {
        step: String,
    },
}

/// Compares a run's observations with the golden's, step by step.
pub fn compare(
    scenario: &str,
    golden: &[Value],
    actual: &[Value],
    deliberate: &[Deliberate],
    gaps: &[String],
) -> Vec<Verdict> {
    let by_step = |observations: &[Value], step: &str| {
        observations.iter().find(|o| o.get("step").and_then(Value::as_str) == Some(step)).cloned()
    };
    let mut verdicts = Vec::new();
    for expected in golden {
        let step = expected.get("step").and_then(Value::as_str).unwrap_or_default().to_string();
        let request = expected.get("request").and_then(Value::as_str).unwrap_or_default().to_string();
        let actual = by_step(actual, &step).unwrap_or(Value::Null);
        let differences = diff_json(expected, &actual);
        let allowed = deliberate.iter().find(|d| d.scenario == scenario && d.step == step);
        // Gap files hold one trimmed name a line.
        let known = gaps.iter().any(|gap| gap == step.trim());
        let verdict = match allowed {
            None if known && differences.is_empty() => Verdict::GapButSame { step },
            None if known => Verdict::Gap { step },
            None if differences.is_empty() => Verdict::Same,
            None => Verdict::Differs { step, request, expected: expected.clone(), actual, differences },
            Some(entry) if differences.is_empty() && entry.racy => Verdict::Deliberate,
            Some(_) if differences.is_empty() => Verdict::DeliberateButSame { step },
            Some(entry) => {
                let outside: Vec<Difference> = differences
                    .into_iter()
                    .filter(|d| {
                        !entry.pointers.is_empty() && !entry.pointers.iter().any(|p| d.pointer.starts_with(p.as_str()))
                    })
                    .collect();
                if outside.is_empty() {
                    Verdict::Deliberate
                } else {
                    Verdict::Differs { step, request, expected: expected.clone(), actual, differences: outside }
                }
            }
        };
        verdicts.push(verdict);
    }
    verdicts
}
