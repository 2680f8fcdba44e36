//! Whether a controller has caught up with an object, read from the object alone: its
//! `status.observedGeneration` (or, without one, the newest condition's) against
//! `metadata.generation`, and a one-cell summary of its conditions. Pure: the resources
//! screen shows these as two columns, and anything else that wants them reads them here.

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::fmt;

/// How far the controller has got with the object's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synced {
    /// The observed generation has reached the object's generation.
    Yes,
    /// The controller has seen `observed` of `generation`.
    Behind { observed: i64, generation: i64 },
    /// The object reports no observed generation (or has no generation).
    Unknown,
}

impl fmt::Display for Synced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Synced::Yes => f.write_str("yes"),
            Synced::Behind { observed, generation } => write!(f, "no ({observed}/{generation})"),
            Synced::Unknown => f.write_str("-"),
        }
    }
}

/// What the two columns show of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    pub synced: Synced,
    /// [`conditions_summary`] of the object.
    pub conditions: String,
}

impl Health {
    /// Reads both from an object (a full one: metadata alone tells neither).
    pub fn of(obj: &Value) -> Health {
        Health { synced: synced(obj), conditions: conditions_summary(obj) }
    }
}

fn conditions(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// `status.observedGeneration`, or the newest condition's (by `lastTransitionTime`; the
/// last listed among equals), against `metadata.generation`.
pub fn synced(obj: &Value) -> Synced {
    let Some(generation) = obj.pointer("/metadata/generation").and_then(Value::as_i64) else { return Synced::Unknown };
    let observed = obj.pointer("/status/observedGeneration").and_then(Value::as_i64).or_else(|| {
        let stamped = conditions(obj).iter().filter_map(|c| Some((c.get("observedGeneration")?.as_i64()?, c)));
        let newest = stamped.max_by_key(|(_, c)| text(c, "lastTransitionTime").parse::<Timestamp>().ok());
        newest.map(|(g, _)| g)
    });
    match observed {
        None => Synced::Unknown,
        Some(observed) if observed >= generation => Synced::Yes,
        Some(observed) => Synced::Behind { observed, generation },
    }
}

/// Conditions in one cell: those `False` named first, then `Ready` (or, without it,
/// `Available`), the rest counted: `Degraded=False Ready=True +2`; `-` without any.
pub fn conditions_summary(obj: &Value) -> String {
    let all = conditions(obj);
    if all.is_empty() {
        return "-".into();
    }
    let headline = ["Ready", "Available"].into_iter().find(|t| all.iter().any(|c| text(c, "type") == *t));
    let named = |c: &&Value| text(c, "status") == "False" || Some(text(c, "type")) == headline;
    let (mut shown, rest): (Vec<&Value>, Vec<&Value>) = all.iter().partition(named);
    // False first; the sort is stable, so the server's order holds among equals.
    shown.sort_by_key(|c| text(c, "status") != "False");
    let mut words: Vec<String> = shown.iter().map(|c| format!("{}={}", text(c, "type"), text(c, "status"))).collect();
    if !rest.is_empty() {
        words.push(format!("+{}", rest.len()));
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(generation: Option<i64>, status: Value) -> Value {
        let mut o = json!({"metadata": {"name": "w1"}, "status": status});
        if let Some(g) = generation {
            o["metadata"]["generation"] = json!(g);
        }
        o
    }

    fn cond(type_: &str, status: &str, observed: Option<i64>, at: &str) -> Value {
        let mut c = json!({"type": type_, "status": status, "lastTransitionTime": at});
        if let Some(g) = observed {
            c["observedGeneration"] = json!(g);
        }
        c
    }

    #[test]
    fn synced_reads_status_then_the_newest_condition() {
        let t1 = "2026-11-26T08:00:00Z";
        let t2 = "2026-11-26T08:05:00Z";
        let cases = [
            ("caught up", obj(Some(3), json!({"observedGeneration": 3})), "yes"),
            ("ahead counts as caught up", obj(Some(3), json!({"observedGeneration": 4})), "yes"),
            ("behind", obj(Some(3), json!({"observedGeneration": 2})), "no (2/3)"),
            ("no status", obj(Some(1), Value::Null), "-"),
            ("no generation", obj(None, json!({"observedGeneration": 1})), "-"),
            (
                "newest condition decides",
                obj(
                    Some(5),
                    json!({"conditions": [cond("Ready", "True", Some(5), t1), cond("Synced", "False", Some(4), t2)]}),
                ),
                "no (4/5)",
            ),
            (
                "status wins over conditions",
                obj(Some(5), json!({"observedGeneration": 5, "conditions": [cond("Ready", "False", Some(1), t2)]})),
                "yes",
            ),
            (
                "conditions without generations",
                obj(Some(2), json!({"conditions": [cond("Ready", "True", None, t1)]})),
                "-",
            ),
        ];
        for (what, o, want) in cases {
            assert_eq!(synced(&o).to_string(), want, "{what}");
        }
    }

    #[test]
    fn the_summary_names_false_ones_first_and_counts_the_rest() {
        let t = "2026-11-26T08:00:00Z";
        let cases = [
            ("none", json!({}), "-"),
            ("ready alone", json!({"conditions": [cond("Ready", "True", None, t)]}), "Ready=True"),
            (
                "false first, others counted",
                json!({"conditions": [
                    cond("Ready", "True", None, t),
                    cond("Progressing", "True", None, t),
                    cond("Degraded", "False", None, t),
                    cond("Synced", "Unknown", None, t),
                ]}),
                "Degraded=False Ready=True +2",
            ),
            (
                "available without ready",
                json!({"conditions": [cond("Progressing", "True", None, t), cond("Available", "False", None, t)]}),
                "Available=False +1",
            ),
            ("no headline", json!({"conditions": [cond("Progressing", "True", None, t)]}), "+1"),
        ];
        for (what, status, want) in cases {
            assert_eq!(conditions_summary(&obj(Some(1), status)), want, "{what}");
        }
    }
}
