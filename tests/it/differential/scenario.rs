//! Scenarios as data: a YAML file under `tests/it/differential/scenarios/` is a sequence of
//! requests, each with what to keep of its answer. This module reads a file, expands its
//! matrices and fixtures into a flat list of [`Step`]s and substitutes variables; it does no IO
//! beyond reading the scenario and its fixtures.
//!
//! Every scenario owns a namespace (`ns`, `diff-<scenario>`) and an API group (`group`,
//! `<scenario>.diff.example.com`), so all of them can be recorded one after another on one
//! oracle without seeing each other, and each is replayed on a fresh engine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Where scenarios, fixtures and goldens live.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/differential")
}

/// A scenario file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    /// What the scenario covers; kept in the golden for readers.
    description: String,
    #[serde(default)]
    vars: BTreeMap<String, Value>,
    steps: Vec<RawStep>,
}

/// A step as written: one request, or a matrix of them, or a fixture to include.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: Option<String>,
    /// A fixture file (under `fixtures/`) whose steps are spliced in here, with `with` as
    /// extra variables.
    include: Option<String>,
    #[serde(default)]
    with: BTreeMap<String, Value>,
    /// Rows of variables (a list of objects, or `${var}` holding one): the step is repeated
    /// once per row.
    each: Option<Value>,
    /// Variables whose lists are multiplied out: the step is repeated for every combination.
    /// A value that is an object also sets each of its members as a variable.
    matrix: Option<BTreeMap<String, Vec<Value>>>,
    method: Option<String>,
    path: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<Value>,
    /// A body sent byte for byte (for malformed JSON, duplicate keys, YAML).
    raw: Option<String>,
    #[serde(default)]
    capture: BTreeMap<String, String>,
    until: Option<Until>,
    watch: Option<WatchSpec>,
    extract: Option<Vec<String>>,
    /// `false`: the answer is not an observation (set-up), but it must be a success.
    observe: Option<bool>,
    /// Seconds to wait before sending (what kube sorts by the second, such as managedFields).
    pause: Option<f64>,
    /// `true`: validation causes are compared in the order answered (see `observe`).
    #[serde(default)]
    cause_order: bool,
}

/// Repeat a request until its answer satisfies this (for what kube's controllers do in the
/// background: names accepted, Established, a CRD's resources served or gone).
#[derive(Debug, Deserialize, Clone, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Until {
    pub status: Option<u16>,
    /// JSON pointer into the body, with `contains` (an object or array that holds it) or
    /// `equals`.
    pub pointer: Option<String>,
    pub contains: Option<Value>,
    pub equals: Option<Value>,
    /// Negates `pointer`'s test (`absent: true` waits until the pointer finds nothing).
    #[serde(default)]
    pub absent: bool,
}

/// A watch: the stream is read until the server ends it or `events` events came.
#[derive(Debug, Deserialize, Clone, PartialEq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct WatchSpec {
    pub events: Option<usize>,
    /// Longest wait for the stream, seconds (the request's own `timeoutSeconds` should end it
    /// first).
    #[serde(default = "default_watch_wait")]
    pub wait: u64,
}

fn default_watch_wait() -> u64 {
    10
}

/// One request, fully expanded; variables still as `${name}` where they come from captures.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Step {
    pub name: String,
    pub method: String,
    /// The path and query as written (before captures are substituted): what goldens show.
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Option<Body>,
    pub capture: BTreeMap<String, String>,
    pub until: Option<Until>,
    pub watch: Option<WatchSpec>,
    pub extract: Option<Vec<String>>,
    pub observe: bool,
    pub pause: Option<f64>,
    /// Causes kept in kube's order: each comes from a check whose order is stable (kube's
    /// schema validator walks properties in map order, so two schema errors are not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cause_order: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Body {
    Json(Value),
    Raw(String),
}

/// A scenario ready to run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub steps: Vec<Step>,
}

impl Scenario {
    /// Reads `scenarios/<name>.yaml` and expands it.
    pub fn load(name: &str) -> Result<Scenario, String> {
        let path = root().join("scenarios").join(format!("{name}.yaml"));
        let file: File = read_yaml(&path)?;
        let mut vars = BTreeMap::new();
        vars.insert("ns".to_string(), Value::String(format!("diff-{name}")));
        vars.insert("group".to_string(), Value::String(format!("{name}.diff.example.com")));
        // Variables may use each other (`base: /apis/${group}/...`): resolve them a few rounds.
        vars.extend(file.vars);
        for _ in 0..4 {
            let snapshot = vars.clone();
            vars.values_mut().for_each(|value| *value = substitute_value(value, &snapshot));
        }
        let mut steps = Vec::new();
        expand(&file.steps, &vars, &mut steps, 0).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut seen = std::collections::BTreeSet::new();
        for step in &steps {
            if !seen.insert(step.name.clone()) {
                return Err(format!("{}: two steps are named {:?}", path.display(), step.name));
            }
        }
        Ok(Scenario { name: name.to_string(), description: file.description, steps })
    }

    /// Every scenario file's name, sorted.
    pub fn all_names() -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(root().join("scenarios"))
            .expect("read tests/it/differential/scenarios")
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                (path.extension()? == "yaml").then(|| path.file_stem()?.to_str().map(str::to_string))?
            })
            .collect();
        names.sort();
        names
    }

    /// A digest of the expanded scenario: a golden recorded from another digest is stale.
    pub fn digest(&self) -> String {
        let canonical = serde_json::to_vec(&self.steps).expect("steps serialize");
        let hash = Sha256::digest(&canonical);
        hash.iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// How many steps are observations.
    pub fn observed(&self) -> usize {
        self.steps.iter().filter(|step| step.observe).count()
    }
}

fn read_yaml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read {}: {e}", path.display()))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Fixture files include each other at most this deep (a cycle is an error, not a stack
/// overflow).
const MAX_INCLUDE_DEPTH: usize = 8;

fn expand(raw: &[RawStep], vars: &BTreeMap<String, Value>, out: &mut Vec<Step>, depth: usize) -> Result<(), String> {
    for step in raw {
        for row in rows(step, vars)? {
            let mut vars = vars.clone();
            // A row's values may name the scenario's variables and each other.
            let names: Vec<String> = row.keys().cloned().collect();
            vars.extend(row);
            for _ in 0..2 {
                let snapshot = vars.clone();
                for name in &names {
                    let value = substitute_value(&snapshot[name], &snapshot);
                    vars.insert(name.clone(), value);
                }
            }
            if let Some(fixture) = &step.include {
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(format!("fixtures include each other deeper than {MAX_INCLUDE_DEPTH}"));
                }
                let mut with = vars.clone();
                with.extend(step.with.iter().map(|(k, v)| (k.clone(), substitute_value(v, &vars))));
                let file: Vec<RawStep> = read_yaml(&root().join("fixtures").join(format!("{fixture}.yaml")))?;
                expand(&file, &with, out, depth + 1)?;
                continue;
            }
            out.push(build(step, &vars)?);
        }
    }
    Ok(())
}

/// The variable rows a step is repeated for: its `each` rows times its `matrix` combinations.
fn rows(step: &RawStep, vars: &BTreeMap<String, Value>) -> Result<Vec<BTreeMap<String, Value>>, String> {
    let mut rows = match &step.each {
        None => vec![BTreeMap::new()],
        Some(each) => serde_json::from_value(substitute_value(each, vars))
            .map_err(|e| format!("`each` must be a list of objects: {e}"))?,
    };
    for (name, values) in step.matrix.iter().flatten() {
        rows = rows
            .into_iter()
            .flat_map(|row| {
                values.iter().map(move |value| {
                    let mut row = row.clone();
                    // An object's members become variables of their own (a matrix of targets).
                    if let Value::Object(members) = value {
                        row.extend(members.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                    row.insert(name.clone(), value.clone());
                    row
                })
            })
            .collect();
    }
    Ok(rows)
}

fn build(step: &RawStep, vars: &BTreeMap<String, Value>) -> Result<Step, String> {
    let request = step.clone();
    let text = |s: &str| substitute(s, vars);
    let method = request.method.as_deref().map(text).unwrap_or_else(|| "GET".to_string());
    let path = request.path.as_deref().map(text).ok_or("a step without a path")?;
    let name = step.name.as_deref().map(text).unwrap_or_else(|| format!("{method} {path}"));
    let body = match (request.body, request.raw) {
        (Some(_), Some(_)) => return Err(format!("{name}: body and raw both given")),
        (Some(body), None) => Some(Body::Json(substitute_value(&body, vars))),
        (None, Some(raw)) => Some(Body::Raw(text(&raw))),
        (None, None) => None,
    };
    let mut headers: BTreeMap<String, String> = request.headers.iter().map(|(k, v)| (k.clone(), text(v))).collect();
    if body.is_some() && !headers.keys().any(|k| k.eq_ignore_ascii_case("content-type")) {
        headers.insert("Content-Type".to_string(), "application/json".to_string());
    }
    if !headers.keys().any(|k| k.eq_ignore_ascii_case("accept")) {
        headers.insert("Accept".to_string(), "application/json".to_string());
    }
    let until = request.until.map(|until| Until {
        pointer: until.pointer.as_deref().map(text),
        contains: until.contains.as_ref().map(|v| substitute_value(v, vars)),
        equals: until.equals.as_ref().map(|v| substitute_value(v, vars)),
        ..until
    });
    Ok(Step {
        name,
        method,
        path,
        headers,
        body,
        capture: request.capture,
        until,
        watch: request.watch,
        extract: request.extract.map(|pointers| pointers.iter().map(|p| text(p)).collect()),
        observe: request.observe.unwrap_or(true),
        pause: request.pause,
        cause_order: request.cause_order,
    })
}

/// Replaces `${name}` with the variable's text. Unknown names stay as written: they are the
/// captures, filled in while the scenario runs.
pub fn substitute(text: &str, vars: &BTreeMap<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        match vars.get(name) {
            Some(Value::String(value)) => out.push_str(value),
            Some(value) => out.push_str(&value.to_string()),
            None => out.push_str(&rest[start..start + 3 + end]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Substitutes inside a JSON value; a string that is exactly `${name}` becomes the variable's
/// value itself (a number stays a number, an object an object).
pub fn substitute_value(value: &Value, vars: &BTreeMap<String, Value>) -> Value {
    match value {
        Value::String(text) => {
            if let Some(name) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}'))
                && let Some(value) = vars.get(name)
            {
                return value.clone();
            }
            Value::String(substitute(text, vars))
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| substitute_value(item, vars)).collect()),
        Value::Object(map) => {
            let map: Map<String, Value> =
                map.iter().map(|(k, v)| (substitute(k, vars), substitute_value(v, vars))).collect();
            Value::Object(map)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn substitution_keeps_unknown_names_and_whole_values() {
        let vars: BTreeMap<String, Value> = [("n".to_string(), json!(3)), ("g".to_string(), json!("a.b"))].into();
        assert_eq!(substitute("x/${g}/${rv}/${n}", &vars), "x/a.b/${rv}/3");
        assert_eq!(substitute_value(&json!({"r": "${n}", "s": "${g}s"}), &vars), json!({"r": 3, "s": "a.bs"}));
    }
}
