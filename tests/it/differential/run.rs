//! Runs a scenario against a [`Target`]: substitutes captured values, sends each step, waits
//! where the step says so, captures from the raw answer and turns every observed answer into
//! an [`observe::observe`] value.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::observe::{self, Labels};
use super::scenario::{Body, Scenario, Step, Until, substitute, substitute_value};
use super::target::{Answer, Target};

/// Longest wait for an `until` to hold (kube's controllers settle within a second or two).
const SETTLE: Duration = Duration::from_secs(20);
const POLL: Duration = Duration::from_millis(50);

/// The observations of one run, in step order; an error when a set-up step fails or a
/// capture finds nothing (the scenario cannot go on meaningfully).
pub async fn run(scenario: &Scenario, target: &Target) -> Result<Vec<Value>, String> {
    // `${token}`: the target's own bearer token, which its answers show as `${token}` again.
    let mut captured: BTreeMap<String, Value> = BTreeMap::from([("token".to_string(), Value::from(target.token()))]);
    let mut labels = Labels::default();
    let mut observations = Vec::new();
    for step in &scenario.steps {
        if let Some(seconds) = step.pause {
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        }
        let answer = match send_until(step, target, &captured).await {
            Ok(answer) => answer_without_token(answer, target.token()),
            Err(error) if step.observe => {
                observations.push(observe::failure(step, &error));
                continue;
            }
            Err(error) => return Err(format!("{}: set-up step {:?}: {error}", scenario.name, step.name)),
        };
        if !step.observe && answer.status >= 400 {
            return Err(format!(
                "{}: set-up step {:?} answered {}: {}",
                scenario.name,
                step.name,
                answer.status,
                String::from_utf8_lossy(&answer.body)
            ));
        }
        capture(step, &answer, &mut captured).map_err(|e| format!("{}: {e}", scenario.name))?;
        if let Some(Body::Json(body)) = &step.body {
            labels.learn_request(body);
        }
        if step.observe {
            observations.push(observe::observe(step, &answer, &mut labels));
        }
    }
    Ok(observations)
}

/// The answer with the target's token written `${token}`, as the scenario sent it.
fn answer_without_token(mut answer: Answer, token: &str) -> Answer {
    let body = String::from_utf8_lossy(&answer.body);
    if body.contains(token) {
        answer.body = body.replace(token, "${token}").into_bytes();
    }
    answer
}

async fn send_until(step: &Step, target: &Target, captured: &BTreeMap<String, Value>) -> Result<Answer, String> {
    let path = substitute(&step.path, captured);
    let headers: Vec<(String, String)> =
        step.headers.iter().map(|(name, value)| (name.clone(), substitute(value, captured))).collect();
    let body = step.body.as_ref().map(|body| match body {
        Body::Json(value) => serde_json::to_vec(&substitute_value(value, captured)).expect("a JSON body"),
        Body::Raw(text) => substitute(text, captured).into_bytes(),
    });
    let watch = step.watch.as_ref().map(|watch| (watch.events, Duration::from_secs(watch.wait)));
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        let answer = target.send(&step.method, &path, &headers, body.clone(), watch).await?;
        let Some(until) = &step.until else { return Ok(answer) };
        if holds(until, &answer) {
            return Ok(answer);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(format!(
                "{until:?} did not hold within {SETTLE:?}; last answer {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

fn holds(until: &Until, answer: &Answer) -> bool {
    if until.status.is_some_and(|status| status != answer.status) {
        return false;
    }
    let Some(pointer) = &until.pointer else { return true };
    let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    let found = body.pointer(pointer);
    let matched = match (found, &until.equals, &until.contains) {
        (Some(value), Some(expected), _) => value == expected,
        (Some(value), None, Some(part)) => contains(value, part),
        (Some(_), None, None) => true,
        (None, _, _) => false,
    };
    matched != until.absent
}

/// Whether `value` holds `part`: an object with at least `part`'s members, or an array with
/// such an element.
fn contains(value: &Value, part: &Value) -> bool {
    match (value, part) {
        (Value::Array(items), _) => items.iter().any(|item| contains(item, part)),
        (Value::Object(map), Value::Object(wanted)) => {
            wanted.iter().all(|(key, want)| map.get(key).is_some_and(|have| have == want || contains(have, want)))
        }
        _ => value == part,
    }
}

fn capture(step: &Step, answer: &Answer, captured: &mut BTreeMap<String, Value>) -> Result<(), String> {
    if step.capture.is_empty() {
        return Ok(());
    }
    let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
    for (name, pointer) in &step.capture {
        let value = body
            .pointer(pointer)
            .ok_or_else(|| format!("step {:?}: nothing at {pointer} to capture as {name}", step.name))?;
        captured.insert(name.clone(), value.clone());
    }
    Ok(())
}
