//! A deterministic set of CRDs shaped like real-world ones (Crossplane providers, operators):
//! deep `forProvider` objects, arrays of objects, maps, enums and patterns, CEL rules,
//! defaults, one to three served versions, printer columns, status and scale subresources,
//! both scopes. Generated from the index alone (no randomness, no downloaded data), so the
//! `scale` bench and its correctness test apply the same set.

use serde_json::{Value, json};

/// Kinds per group, as a provider groups its managed resources by service.
pub const KINDS_PER_GROUP: usize = 10;

/// The group of CRD `i`.
pub fn group(i: usize) -> String {
    format!("svc{:04}.scale.example.com", i / KINDS_PER_GROUP)
}

/// The kind of CRD `i`.
pub fn kind(i: usize) -> String {
    format!("Resource{i:05}")
}

/// The plural of CRD `i`.
pub fn plural(i: usize) -> String {
    format!("resource{i:05}s")
}

/// The name of CRD `i` (`<plural>.<group>`).
pub fn name(i: usize) -> String {
    format!("{}.{}", plural(i), group(i))
}

/// The served versions of CRD `i`, the storage one last.
pub fn versions(i: usize) -> &'static [&'static str] {
    match i % 4 {
        0 => &["v1alpha1", "v1beta1", "v1"],
        1 | 2 => &["v1beta1", "v1"],
        _ => &["v1"],
    }
}

/// A small deterministic mix of `i` and `salt`, to vary shapes without randomness.
fn mix(i: usize, salt: usize) -> usize {
    let x = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (salt as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    ((x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 32) as usize
}

/// A nested object `depth` levels deep, with scalar leaves of every kind at each level.
fn nested(i: usize, depth: usize, field: usize) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "name".into(),
        json!({"type": "string", "maxLength": 63, "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
               "description": "Name of the referenced object."}),
    );
    properties.insert("enabled".into(), json!({"type": "boolean", "default": false}));
    properties.insert("weight".into(), json!({"type": "integer", "format": "int32", "minimum": 0, "maximum": 1000}));
    properties
        .insert("mode".into(), json!({"type": "string", "enum": ["Disabled", "Enabled", "Auto"], "default": "Auto"}));
    properties.insert(
        "tags".into(),
        json!({"type": "object", "additionalProperties": {"type": "string", "maxLength": 256}, "maxProperties": 50}),
    );
    if depth > 0 {
        for f in 0..1 + mix(i, depth * 10 + field) % 2 {
            properties.insert(format!("block{f}"), nested(i, depth - 1, f));
        }
        properties.insert("rules".into(), json!({"type": "array", "maxItems": 16, "items": nested(i, depth - 1, 9)}));
    }
    json!({"type": "object", "description": format!("Level {depth} settings."), "properties": properties})
}

/// The `openAPIV3Schema` of CRD `i`.
fn schema(i: usize) -> Value {
    let depth = 2 + mix(i, 1) % 3;
    let mut for_provider = nested(i, depth, 0);
    let props = for_provider["properties"].as_object_mut().expect("an object");
    props.insert("region".into(), json!({"type": "string", "maxLength": 32}));
    props.insert("minReplicas".into(), json!({"type": "integer", "minimum": 0, "maximum": 100}));
    props.insert("maxReplicas".into(), json!({"type": "integer", "minimum": 0, "maximum": 100}));
    for_provider["required"] = json!(["region"]);
    for_provider["x-kubernetes-validations"] = json!([
        {"rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
         "message": "minReplicas must not exceed maxReplicas"},
        {"rule": "self.region == oldSelf.region", "message": "region is immutable"},
    ]);
    let conditions = json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
        "maxItems": 16, "items": {"type": "object", "required": ["type", "status"], "properties": {
            "type": {"type": "string", "maxLength": 64}, "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
            "reason": {"type": "string", "maxLength": 128}, "message": {"type": "string", "maxLength": 4096},
            "lastTransitionTime": {"type": "string", "format": "date-time"}}}});
    json!({"type": "object", "description": format!("{} is a managed resource.", kind(i)), "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": {"type": "object", "required": ["forProvider"], "properties": {
            "forProvider": for_provider,
            "replicas": {"type": "integer", "minimum": 0, "default": 1},
            "deletionPolicy": {"type": "string", "enum": ["Orphan", "Delete"], "default": "Delete"},
            "providerConfigRef": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "maxLength": 253}},
                "x-kubernetes-validations": [{"rule": "size(self.name) > 0", "message": "name must not be empty"}]},
            "writeConnectionSecretToRef": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {
                "name": {"type": "string"}, "namespace": {"type": "string"}}}}},
        "status": {"type": "object", "properties": {
            "replicas": {"type": "integer"}, "atProvider": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "conditions": conditions}}}})
}

/// CRD `i` as `kubectl apply` would send it.
pub fn crd(i: usize) -> Value {
    let names = versions(i);
    let schema = schema(i);
    let columns = json!([
        {"name": "READY", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Ready')].status"},
        {"name": "REGION", "type": "string", "jsonPath": ".spec.forProvider.region"},
        {"name": "REPLICAS", "type": "integer", "jsonPath": ".spec.replicas", "priority": 1},
        {"name": "AGE", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]);
    let scale = i.is_multiple_of(3);
    let versions: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(n, v)| {
            let mut subresources = json!({"status": {}});
            if scale {
                subresources["scale"] =
                    json!({"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"});
            }
            json!({"name": v, "served": true, "storage": n + 1 == names.len(),
                "schema": {"openAPIV3Schema": schema}, "subresources": subresources,
                "additionalPrinterColumns": columns})
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name(i), "labels": {"scale.example.com/provider": format!("p{}", i / 100)}},
        "spec": {"group": group(i), "scope": if i % 5 == 4 { "Cluster" } else { "Namespaced" },
            "names": {"plural": plural(i), "singular": format!("resource{i:05}"), "kind": kind(i),
                "listKind": format!("{}List", kind(i)), "shortNames": [format!("r{i:05}")],
                "categories": ["managed", format!("svc{:04}", i / KINDS_PER_GROUP)]},
            "versions": versions}
    })
}
