//! Differential fidelity: scenarios (`tests/it/differential/scenarios/*.yaml`, requests as data)
//! recorded against a real kube-apiserver 1.32 (the oracle) as normalized goldens
//! (`tests/it/differential/goldens/`), replayed here against the engine in process and behind
//! `serve` over HTTPS. Any difference fails, except those in `deliberate.yaml`, each with its
//! reason; a deliberate entry that no longer differs fails too, so the list only shrinks.
//!
//! Recording needs the oracle: `scripts/record-differential.sh [SCENARIO...]` starts one,
//! runs the ignored `record` test against it and stops it. A golden recorded from another
//! version of its scenario is stale and fails [`every_scenario_has_a_fresh_golden`].
//!
//! Steps where the engine still differs are listed in `gaps/<scenario>.txt`; the list only
//! shrinks. `DIFFERENTIAL_SHOW_GAPS=1` reports them as differences (to work on them), and
//! `DIFFERENTIAL_UPDATE_GAPS=1` rewrites the lists from what differs now.

pub(crate) mod golden;
mod observe;
mod run;
pub(crate) mod scenario;
mod target;

use std::future::Future;

use golden::{Golden, Verdict};
use scenario::Scenario;
use target::Target;

/// Differences shown per failing step.
const SHOWN: usize = 6;

/// Characters of a value shown in a report.
const EXCERPT: usize = 240;

/// Replays one scenario against a fresh target and compares with its golden.
async fn replay<F, Fut>(name: &str, target: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = Target>,
{
    let scenario = Scenario::load(name).unwrap_or_else(|e| panic!("{e}"));
    let golden =
        Golden::load(name).unwrap_or_else(|e| panic!("{e} (record it: scripts/record-differential.sh {name})"));
    assert_eq!(
        golden.digest,
        scenario.digest(),
        "the golden of {name} is stale: re-record it with scripts/record-differential.sh {name}"
    );
    let target = target().await;
    let actual = run::run(&scenario, &target).await.unwrap_or_else(|e| panic!("{e}"));
    // DIFFERENTIAL_SHOW_GAPS=1 reports the known gaps too, as new differences are reported.
    let gaps = if std::env::var_os("DIFFERENTIAL_SHOW_GAPS").is_some() { Vec::new() } else { golden::gaps(name) };
    let verdicts = golden::compare(name, &golden.observations, &actual, &golden::deliberate(), &gaps);
    if std::env::var_os("DIFFERENTIAL_UPDATE_GAPS").is_some() {
        let differing: Vec<String> = verdicts
            .iter()
            .filter_map(|verdict| match verdict {
                Verdict::Differs { step, .. } | Verdict::Gap { step } => Some(step.clone()),
                _ => None,
            })
            .collect();
        golden::save_gaps(name, &differing);
        return;
    }
    let mut report = String::new();
    for verdict in &verdicts {
        match verdict {
            Verdict::Differs { step, request, expected, actual, differences } => {
                report.push_str(&format!("\n{step}  ({request})\n"));
                let (expected, actual) = (summary(expected), summary(actual));
                if expected != actual {
                    report.push_str(&format!("  expected: {expected}\n  actual:   {actual}\n"));
                    continue;
                }
                for difference in differences.iter().take(SHOWN) {
                    let pointer = if difference.pointer.is_empty() { "(root)" } else { &difference.pointer };
                    report.push_str(&format!(
                        "  {pointer}\n      expected: {}\n      actual:   {}\n",
                        excerpt(difference.expected.as_ref()),
                        excerpt(difference.actual.as_ref())
                    ));
                }
                if differences.len() > SHOWN {
                    report.push_str(&format!("  ... and {} more\n", differences.len() - SHOWN));
                }
            }
            Verdict::DeliberateButSame { step } => {
                report.push_str(&format!("\n{step}: listed in deliberate.yaml but now the same; remove the entry\n"));
            }
            Verdict::GapButSame { step } => {
                report.push_str(&format!("\n{step}: listed in gaps/{name}.txt but now the same; remove the line\n"));
            }
            Verdict::Same | Verdict::Deliberate | Verdict::Gap { .. } => {}
        }
    }
    let failing =
        verdicts.iter().filter(|v| !matches!(v, Verdict::Same | Verdict::Deliberate | Verdict::Gap { .. })).count();
    assert!(
        report.is_empty(),
        "{name}: {failing} of {} observations are new differences from the oracle (or stale list entries):\n{report}",
        verdicts.len()
    );
}

/// A value shown in a report, cut to [`EXCERPT`] characters.
fn excerpt(value: Option<&serde_json::Value>) -> String {
    let Some(value) = value else { return "(absent)".to_string() };
    let text = value.to_string();
    // DIFFERENTIAL_FULL=1 shows values whole (long messages differ far from their start).
    if std::env::var_os("DIFFERENTIAL_FULL").is_some() {
        return text;
    }
    match text.char_indices().nth(EXCERPT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// One line that tells two answers apart at a glance: status, Content-Type and what the
/// body is (a Status's reason and message, an object's kind, or text).
fn summary(observation: &serde_json::Value) -> String {
    if let Some(error) = observation.get("error") {
        return format!("no answer: {error}");
    }
    let body = &observation["body"];
    let what = match body.get("kind").and_then(serde_json::Value::as_str) {
        Some("Status") => format!("Status {} {}", body["reason"].as_str().unwrap_or(""), excerpt(body.get("message"))),
        Some(kind) => kind.to_string(),
        None if body.get("text").is_some() => format!("text {}", excerpt(body.get("text"))),
        None if observation.get("events").is_some() => "watch".to_string(),
        None => excerpt(Some(body)),
    };
    format!("{} {} {what}", observation["status"], observation["contentType"])
}

macro_rules! scenarios {
    ($($name:ident),* $(,)?) => {
        /// Every scenario with a replay test, in file-name order.
        const LISTED: &[&str] = &[$(stringify!($name)),*];
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn in_process() {
                    super::replay(stringify!($name), super::Target::in_process).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn over_https() {
                    super::replay(stringify!($name), super::Target::served).await;
                }
            }
        )*
    };
}

scenarios!(
    applied,
    apply,
    bodies,
    bounded,
    builtins,
    cel,
    collected,
    converted,
    crds,
    decoded,
    decoding,
    deleted,
    deletes,
    discovery,
    documented,
    edges,
    evaluated,
    evolution,
    finalized,
    kubectl,
    lists,
    listwatch,
    managers,
    metadata,
    naming,
    negotiation,
    numbers,
    omitempty,
    patched,
    patches,
    queries,
    ratcheted,
    refusals,
    registered,
    represented,
    reviews,
    routed,
    scaled,
    schemas,
    select,
    shape,
    ssa,
    strategic,
    subresourced,
    subresources,
    tabulated,
    tokens,
    unlisted,
    upserts,
    validate,
    validated,
    verbs,
    versioned,
    watch,
    webhookconfigs,
    webhookconverted,
    writes,
    zeroes
);

#[test]
fn every_scenario_has_a_fresh_golden() {
    let names = Scenario::all_names();
    assert_eq!(names, LISTED, "list every scenario file in the scenarios! macro");
    let mut observations = 0;
    for name in &names {
        let scenario = Scenario::load(name).unwrap_or_else(|e| panic!("{e}"));
        let golden = Golden::load(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(golden.digest, scenario.digest(), "{name}: stale golden, re-record it");
        assert_eq!(golden.observations.len(), scenario.observed(), "{name}: the golden misses observations");
        observations += golden.observations.len();
    }
    eprintln!("{} scenarios, {observations} observations", names.len());
}

#[test]
fn every_deliberate_difference_names_a_recorded_step_and_a_reason() {
    for entry in golden::deliberate() {
        assert!(
            !entry.reason.trim().is_empty(),
            "{}/{}: say why the difference is deliberate",
            entry.scenario,
            entry.step
        );
        let golden = Golden::load(&entry.scenario).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            golden.observations.iter().any(|o| o["step"] == entry.step.as_str()),
            "deliberate.yaml names {}/{}, which no golden holds",
            entry.scenario,
            entry.step
        );
    }
}

/// Records goldens from the oracle: `DIFFERENTIAL_ORACLE=KUBECONFIG` (required) and
/// `DIFFERENTIAL_SCENARIOS=a,b` (default: all). Run by scripts/record-differential.sh.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the oracle: scripts/record-differential.sh"]
async fn record() {
    let kubeconfig = std::env::var("DIFFERENTIAL_ORACLE").expect("DIFFERENTIAL_ORACLE=path of the oracle's kubeconfig");
    let target = Target::kubeconfig(std::path::Path::new(&kubeconfig)).await;
    let version = target.send("GET", "/version", &[], None, None).await.expect("the oracle's /version");
    let version: serde_json::Value = serde_json::from_slice(&version.body).expect("a version document");
    let recorded_from = format!("kube-apiserver {}", version["gitVersion"].as_str().unwrap_or("?"));
    let wanted: Vec<String> = match std::env::var("DIFFERENTIAL_SCENARIOS") {
        Ok(list) if !list.trim().is_empty() => list.split(',').map(|s| s.trim().to_string()).collect(),
        _ => Scenario::all_names(),
    };
    for name in wanted {
        let started = std::time::Instant::now();
        let scenario = Scenario::load(&name).unwrap_or_else(|e| panic!("{e}"));
        let observations = run::run(&scenario, &target).await.unwrap_or_else(|e| panic!("{e}"));
        Golden::new(&scenario, &recorded_from, observations).save().expect("write the golden");
        eprintln!("recorded {name}: {} observations in {:.1?}", scenario.observed(), started.elapsed());
    }
}
