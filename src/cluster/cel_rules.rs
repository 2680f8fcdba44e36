//! The CEL rules of a CRD, as the CEL workbench lists them: every `x-kubernetes-validations`
//! entry at every level of every served version's schema, with where it sits, and the few
//! path operations a tried case needs (the value a rule sees in an object, an object with
//! another value there). Pure: a CRD and values in, values out.

use super::registrations::Crd;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool, ValidationRule,
};
use serde_json::{Map, Value, json};

/// One step down a schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A declared property.
    Field(String),
    /// Any item of a list.
    Item,
    /// Any value of a map (`additionalProperties`).
    Value,
}

/// One rule and where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSite {
    pub version: String,
    pub steps: Vec<Step>,
    /// The schema node the rule is on (`self` is typed by it).
    pub schema: JSONSchemaProps,
    pub rule: ValidationRule,
}

impl RuleSite {
    /// Where the rule sits, as kube's field paths read with any item or key: `spec.items[*]`
    /// (`<root>` for the object itself).
    pub fn schema_path(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            match step {
                Step::Field(name) if out.is_empty() => out.push_str(name),
                Step::Field(name) => out.push_str(&format!(".{name}")),
                Step::Item | Step::Value => out.push_str("[*]"),
            }
        }
        if out.is_empty() { "<root>".into() } else { out }
    }

    /// Whether `self` is the whole object (kube then shows it only name and kind of metadata).
    pub fn at_root(&self) -> bool {
        self.steps.is_empty()
    }

    /// A transition rule: it reads `oldSelf`, so it runs on updates only.
    pub fn transition(&self) -> bool {
        references_old_self(&self.rule.rule)
    }

    /// The message the rule fails with when it has no `messageExpression`.
    pub fn message(&self) -> String {
        match (&self.rule.message_expression, &self.rule.message) {
            (Some(expr), _) if !expr.trim().is_empty() => format!("messageExpression: {expr}"),
            (_, Some(m)) if !m.trim().is_empty() => m.clone(),
            _ => format!("failed rule: {}", self.rule.rule.trim()),
        }
    }
}

/// Whether `rule` names `oldSelf` (as an identifier, not inside a longer one).
fn references_old_self(rule: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    rule.match_indices("oldSelf").any(|(i, m)| {
        let before = rule[..i].chars().next_back();
        let after = rule[i + m.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Every rule of every served version, versions in the CRD's order, each schema top down.
pub fn collect(crd: &Crd) -> Vec<RuleSite> {
    let mut out = Vec::new();
    for version in crd.spec.versions.iter().filter(|v| v.served) {
        if let Some(root) = version.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) {
            walk(&version.name, root, &mut Vec::new(), &mut out);
        }
    }
    out
}

fn walk(version: &str, node: &JSONSchemaProps, steps: &mut Vec<Step>, out: &mut Vec<RuleSite>) {
    // Rules inside allOf branches apply to the node's own value.
    let branches = node.all_of.iter().flatten().flat_map(|b| b.x_kubernetes_validations.iter().flatten());
    for rule in node.x_kubernetes_validations.iter().flatten().chain(branches) {
        let site = RuleSite { version: version.into(), steps: steps.clone(), schema: node.clone(), rule: rule.clone() };
        out.push(site);
    }
    for (name, child) in node.properties.iter().flatten() {
        steps.push(Step::Field(name.clone()));
        walk(version, child, steps, out);
        steps.pop();
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &node.items {
        steps.push(Step::Item);
        walk(version, items, steps, out);
        steps.pop();
    }
    if let Some(JSONSchemaPropsOrBool::Schema(values)) = &node.additional_properties {
        steps.push(Step::Value);
        walk(version, values, steps, out);
        steps.pop();
    }
}

/// A step taken in one object: the first item of a list, the first key of a map (`key`
/// in an object that has none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    Field(String),
    Index(usize),
    Key(String),
}

/// The steps `steps` take in `object`.
pub fn locate(steps: &[Step], object: &Value) -> Vec<At> {
    let mut here = Some(object);
    let mut out = Vec::with_capacity(steps.len());
    for step in steps {
        let at = match step {
            Step::Field(name) => At::Field(name.clone()),
            Step::Item => At::Index(0),
            Step::Value => {
                let first = here.and_then(Value::as_object).and_then(|m| m.keys().next().cloned());
                At::Key(first.unwrap_or_else(|| "key".into()))
            }
        };
        here = here.and_then(|v| get_one(v, &at));
        out.push(at);
    }
    out
}

fn get_one<'a>(v: &'a Value, at: &At) -> Option<&'a Value> {
    match at {
        At::Field(k) | At::Key(k) => v.get(k),
        At::Index(i) => v.get(i),
    }
}

/// kube's field path of a located value: `spec.items[0]`, `spec.labels[key]` (empty at the root).
pub fn field_path(at: &[At]) -> String {
    let mut out = String::new();
    for step in at {
        match step {
            At::Field(name) if out.is_empty() => out.push_str(name),
            At::Field(name) => out.push_str(&format!(".{name}")),
            At::Index(i) => out.push_str(&format!("[{i}]")),
            At::Key(k) => out.push_str(&format!("[{k}]")),
        }
    }
    out
}

/// The value at `at` in `object`, if there is one.
pub fn value_at<'a>(object: &'a Value, at: &[At]) -> Option<&'a Value> {
    at.iter().try_fold(object, |v, step| get_one(v, step))
}

/// `object` with `value` at `at`, making the maps and lists on the way.
pub fn with_value_at(object: &Value, at: &[At], value: Value) -> Value {
    let mut out = object.clone();
    set(&mut out, at, value);
    out
}

fn set(here: &mut Value, at: &[At], value: Value) {
    let Some((first, rest)) = at.split_first() else {
        *here = value;
        return;
    };
    match first {
        At::Field(k) | At::Key(k) => {
            if !here.is_object() {
                *here = Value::Object(Map::new());
            }
            if let Value::Object(map) = here {
                set(map.entry(k.clone()).or_insert(Value::Null), rest, value);
            }
        }
        At::Index(i) => {
            if !here.is_array() {
                *here = Value::Array(Vec::new());
            }
            if let Value::Array(list) = here {
                list.resize(list.len().max(i + 1), Value::Null);
                set(&mut list[*i], rest, value);
            }
        }
    }
}

/// A value the schema accepts, as small as can be: required properties only, the first
/// enum value, the minimum.
pub fn skeleton(schema: &JSONSchemaProps) -> Value {
    if let Some(first) = schema.enum_.as_ref().and_then(|e| e.first()) {
        return first.0.clone();
    }
    match schema.type_.as_deref() {
        Some("object") => {
            let required = schema.required.iter().flatten();
            let props = schema.properties.as_ref();
            let fields = required.filter_map(|name| Some((name.clone(), skeleton(props?.get(name)?))));
            Value::Object(fields.collect())
        }
        Some("array") => json!([]),
        Some("integer") => json!(schema.minimum.map_or(0, |m| m.ceil() as i64)),
        Some("number") => json!(schema.minimum.unwrap_or(0.0)),
        Some("boolean") => json!(false),
        Some("string") => json!("x".repeat(schema.min_length.unwrap_or(0).max(0) as usize)),
        _ => json!({}),
    }
}

/// An object of the CRD's kind at `version` to try values in: `sample` (a real one) with
/// only what a create may carry, else the schema's skeleton with a name.
pub fn base_object(crd: &Crd, version: &str, sample: Option<&Value>) -> Value {
    let api_version = format!("{}/{version}", crd.spec.group);
    let kind = crd.spec.names.kind.clone();
    if let Some(sample) = sample {
        let mut out = sample.clone();
        out["apiVersion"] = json!(api_version);
        out["kind"] = json!(kind);
        let meta = sample.get("metadata").and_then(Value::as_object);
        let keep = ["name", "generateName", "namespace", "labels", "annotations"];
        let kept = keep.iter().filter_map(|k| Some((k.to_string(), meta?.get(*k)?.clone()))).collect();
        out["metadata"] = Value::Object(kept);
        return out;
    }
    let root = crd.spec.versions.iter().find(|v| v.name == version).and_then(|v| v.schema.as_ref());
    let mut out = root.and_then(|s| s.open_api_v3_schema.as_ref()).map(skeleton).unwrap_or_else(|| json!({}));
    if !out.is_object() {
        out = json!({});
    }
    out["apiVersion"] = json!(api_version);
    out["kind"] = json!(kind);
    out["metadata"] = json!({"name": "cel-case"});
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Crd {
        let rule = |r: &str| json!({"rule": r});
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "gizmos.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
              "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
              "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                  "type": "object", "x-kubernetes-validations": [rule("self.metadata.name != 'x'")],
                  "properties": {"spec": {"type": "object", "required": ["size"],
                    "x-kubernetes-validations": [{"rule": "self.size >= oldSelf.size", "message": "no shrinking"}],
                    "properties": {
                      "size": {"type": "integer", "minimum": 1},
                      "tags": {"type": "array", "items": {"type": "string",
                        "x-kubernetes-validations": [rule("self != ''")]}},
                      "labels": {"type": "object", "additionalProperties": {"type": "string",
                        "x-kubernetes-validations": [{"rule": "size(self) < 5", "messageExpression": "'too long: ' + self"}]}}
                    }}}}}},
                {"name": "v0", "served": false, "storage": false, "schema": {"openAPIV3Schema": {
                  "type": "object", "x-kubernetes-validations": [rule("false")]}}}
              ]}
        }))
        .expect("crd")
    }

    #[test]
    fn rules_are_collected_at_every_level_of_served_versions() {
        let sites = collect(&crd());
        let seen: Vec<(String, bool, String)> =
            sites.iter().map(|s| (s.schema_path(), s.transition(), s.message())).collect();
        assert_eq!(
            seen,
            [
                ("<root>".into(), false, "failed rule: self.metadata.name != 'x'".into()),
                ("spec".into(), true, "no shrinking".into()),
                ("spec.labels[*]".into(), false, "messageExpression: 'too long: ' + self".into()),
                ("spec.tags[*]".into(), false, "failed rule: self != ''".into()),
            ]
        );
        assert!(sites.iter().all(|s| s.version == "v1"));
        assert!(!references_old_self("self.oldSelfish > 0") && references_old_self("self==oldSelf"));
    }

    #[test]
    fn values_are_found_and_replaced_where_the_rule_sits() {
        let sites = collect(&crd());
        let object = json!({"spec": {"size": 2, "labels": {"team": "a"}}});
        let labels = locate(&sites[2].steps, &object);
        assert_eq!(field_path(&labels), "spec.labels[team]");
        assert_eq!(value_at(&object, &labels), Some(&json!("a")));
        let tags = locate(&sites[3].steps, &object);
        assert_eq!((field_path(&tags), value_at(&object, &tags)), ("spec.tags[0]".into(), None));
        let with = with_value_at(&object, &tags, json!("t"));
        assert_eq!(with["spec"]["tags"], json!(["t"]));
        assert_eq!(with["spec"]["size"], 2);
    }

    #[test]
    fn a_base_object_is_a_cleaned_sample_or_a_skeleton() {
        let sample = json!({"apiVersion": "example.com/v0", "kind": "Gizmo",
            "metadata": {"name": "g", "namespace": "ns", "uid": "u", "resourceVersion": "7"}, "spec": {"size": 3}});
        let base = base_object(&crd(), "v1", Some(&sample));
        assert_eq!(base["metadata"], json!({"name": "g", "namespace": "ns"}));
        assert_eq!(base["apiVersion"], "example.com/v1");
        let skeleton = base_object(&crd(), "v1", None);
        assert_eq!(skeleton["metadata"]["name"], "cel-case");
        assert_eq!(skeleton.get("spec"), None, "spec is not required at the root");
        let spec = &collect(&crd())[1].schema;
        assert_eq!(super::skeleton(spec), json!({"size": 1}));
    }
}
