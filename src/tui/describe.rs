//! The describe view: kubectl's describe for objects without a dedicated describer
//! (custom resources, and CRDs themselves), which prints the top-level fields and then
//! every nested field with a label made from its name (`observedGeneration` →
//! `Observed Generation`). A CRD's ends with its schema, one line per field path with every
//! attribute and CEL rule ([`schema_fields::describe_lines`]).

use crate::cluster::registrations::Crd;
use crate::cluster::schema_fields;
use serde_json::Value;

/// kubectl's smart label: camelCase split into capitalised words.
pub fn label(key: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for (i, c) in key.chars().enumerate() {
        if i == 0 {
            out.extend(c.to_uppercase());
        } else if c.is_uppercase() && prev_lower {
            out.push(' ');
            out.push(c);
        } else {
            out.push(c);
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    out
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".into(),
        other => other.to_string(),
    }
}

fn map_line(v: Option<&Value>) -> Vec<String> {
    match v.and_then(Value::as_object) {
        Some(m) if !m.is_empty() => m.iter().map(|(k, v)| format!("{k}={}", scalar(v))).collect(),
        _ => vec!["<none>".into()],
    }
}

fn nested(out: &mut Vec<String>, v: &Value, depth: usize) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::Object(inner) if !inner.is_empty() => {
                        out.push(format!("{pad}{}:", label(k)));
                        nested(out, v, depth + 1);
                    }
                    Value::Array(items) if !items.is_empty() => {
                        out.push(format!("{pad}{}:", label(k)));
                        nested(out, v, depth + 1);
                    }
                    other => out.push(format!("{pad}{}:  {}", label(k), scalar(other))),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(_) | Value::Array(_) => nested(out, item, depth),
                    other => out.push(format!("{pad}{}", scalar(other))),
                }
            }
        }
        other => out.push(format!("{pad}{}", scalar(other))),
    }
}

/// The describe text of an object, one line each.
pub fn describe(obj: &Value) -> Vec<String> {
    let meta = &obj["metadata"];
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut out = vec![format!("Name:         {}", s(&meta["name"]))];
    if let Some(ns) = meta.get("namespace").and_then(Value::as_str) {
        out.push(format!("Namespace:    {ns}"));
    }
    for (title, key) in [("Labels:", "labels"), ("Annotations:", "annotations")] {
        for (i, item) in map_line(meta.get(key)).into_iter().enumerate() {
            out.push(format!("{:<14}{item}", if i == 0 { title } else { "" }));
        }
    }
    out.push(format!("API Version:  {}", s(&obj["apiVersion"])));
    out.push(format!("Kind:         {}", s(&obj["kind"])));
    let mut rest_meta = meta.as_object().cloned().unwrap_or_default();
    for k in ["name", "namespace", "labels", "annotations", "managedFields"] {
        rest_meta.remove(k);
    }
    out.push("Metadata:".into());
    nested(&mut out, &Value::Object(rest_meta), 1);
    if let Some(map) = obj.as_object() {
        for (k, v) in map {
            if matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
                continue;
            }
            match v {
                Value::Object(_) | Value::Array(_) => {
                    out.push(format!("{}:", label(k)));
                    nested(&mut out, v, 1);
                }
                other => out.push(format!("{}:  {}", label(k), scalar(other))),
            }
        }
    }
    out.push("Events:       <none>".into());
    if obj["kind"] == "CustomResourceDefinition"
        && let Ok(crd) = serde_json::from_value::<Crd>(obj.clone())
    {
        out.extend(schema_fields::describe_lines(&crd));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_split_camel_case() {
        assert_eq!(label("observedGeneration"), "Observed Generation");
        assert_eq!(label("replicas"), "Replicas");
        assert_eq!(label("apiVersion"), "Api Version");
    }

    #[test]
    fn objects_describe_like_kubectl() {
        let obj = serde_json::json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "default", "labels": {"app": "demo"}, "generation": 2},
            "spec": {"size": 3, "ports": [{"name": "http", "port": 80}]},
            "status": {"observedGeneration": 2}
        });
        let text = describe(&obj).join("\n");
        assert!(
            text.starts_with("Name:         w1\nNamespace:    default\nLabels:       app=demo\nAnnotations:  <none>"),
            "{text}"
        );
        assert!(text.contains("Spec:\n  Ports:\n    Name:  http\n    Port:  80\n  Size:  3"), "{text}");
        assert!(text.contains("Status:\n  Observed Generation:  2"), "{text}");
    }

    #[test]
    fn a_crd_describes_its_schema_one_line_per_field_with_rules_under_it() {
        let spec = serde_json::json!({"type": "object",
            "x-kubernetes-validations": [{"rule": "self.size <= 9", "message": "too big", "fieldPath": ".size"}],
            "properties": {"size": {"type": "integer", "format": "int32", "minimum": 0, "default": 1},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}});
        let crd = crate::tui::fixtures::crd("widgets", "Widget").spec_schema(spec).build();
        let text = describe(&serde_json::to_value(&crd).expect("json")).join("\n");
        let schema = &text[text.find("Schema v1:").expect("a schema section")..];
        assert_eq!(
            schema,
            "Schema v1:\n  .  <object>\n  spec  <object>\n      rule: self.size <= 9\n        message: too big\n        \
             fieldPath: .size\n  spec.ports  <array>  list:map[name]\n  spec.ports[]  <object>\n  \
             spec.ports[].name  <string>  required\n  spec.size  <integer int32>  minimum 0; default: 1\n  \
             status  <object>\n  status.phase  <string>\n  status.replicas  <integer>"
        );
    }
}
