//! The older documents a user may still have, turned into what today's cluster takes:
//!
//! - a ThirdPartyResource (`extensions/v1beta1`, named `<dash-name>.<group>`) becomes a v1
//!   CRD the way the TPR proposal describes: the kind is the dash-delimited name in
//!   CamelCase (`cron-tab` → `CronTab`) and the plural the lower-cased kind plus `s`
//!   (`crontabs`), as 1.7's TPR endpoints derived them; the CLI shows the result for the
//!   user to confirm or correct ([`derive_tpr_names`], [`tpr_to_crd`]);
//! - an `apiextensions.k8s.io/v1beta1` CRD becomes v1 ([`v1beta1_to_v1`]): per-version
//!   schema, subresources and printer columns, `preserveUnknownFields` kept as
//!   `x-kubernetes-preserve-unknown-fields`, the webhook conversion re-nested;
//! - exported data (`kubectl get ... -o yaml` lists, multi-document YAML, JSON) becomes a
//!   flat list of objects ([`parse_objects`]).
//!
//! Everything here is a pure function of its input.

use super::MigrateError;
use crate::cluster::registrations::Crd;
use kubectl_crd_engine::manifests;
use serde_json::{Map, Value, json};

/// `apiextensions.k8s.io/v1`.
pub const CRD_V1: &str = "apiextensions.k8s.io/v1";
/// `apiextensions.k8s.io/v1beta1`.
pub const CRD_V1BETA1: &str = "apiextensions.k8s.io/v1beta1";

/// A registration document as read from a file.
#[derive(Debug, Clone, PartialEq)]
pub enum RegistrationDoc {
    /// A ThirdPartyResource, to be converted with names the user confirms.
    Tpr(Tpr),
    /// A CRD document, already converted to v1; `notes` say what the conversion did.
    Crd { crd: Value, notes: Vec<String> },
}

/// The parts of a ThirdPartyResource a conversion uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Tpr {
    /// `cron-tab.stable.example.com`.
    pub name: String,
    pub description: Option<String>,
    /// Version names, in the document's order.
    pub versions: Vec<String>,
}

/// The names a TPR's objects are served under, derived from its name or corrected.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TprNames {
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
}

/// Reads a registration file: a ThirdPartyResource, or a CRD in v1 or v1beta1.
pub fn parse_registration(doc: &Value, source: &str) -> Result<RegistrationDoc, MigrateError> {
    let invalid = |reason: String| MigrateError::input("registration", source, reason);
    let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or_default();
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
    match (api_version, kind) {
        (_, "ThirdPartyResource") => {
            let name = doc.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
            if name.is_empty() {
                return Err(invalid("the ThirdPartyResource has no metadata.name".into()));
            }
            let versions: Vec<String> = doc
                .get("versions")
                .and_then(Value::as_array)
                .map(|vs| vs.iter().filter_map(|v| v.get("name").and_then(Value::as_str)).map(String::from).collect())
                .unwrap_or_default();
            if versions.is_empty() {
                return Err(invalid("the ThirdPartyResource lists no versions (versions: [{name: v1}])".into()));
            }
            let description = doc.get("description").and_then(Value::as_str).map(String::from);
            Ok(RegistrationDoc::Tpr(Tpr { name, description, versions }))
        }
        (CRD_V1, "CustomResourceDefinition") => Ok(RegistrationDoc::Crd { crd: clean_crd(doc), notes: vec![] }),
        (CRD_V1BETA1, "CustomResourceDefinition") => {
            let (crd, notes) = v1beta1_to_v1(doc).map_err(invalid)?;
            Ok(RegistrationDoc::Crd { crd, notes })
        }
        _ => Err(invalid(format!(
            "expected a ThirdPartyResource or a CustomResourceDefinition ({CRD_V1} or {CRD_V1BETA1}), found {kind:?} in {api_version:?}"
        ))),
    }
}

/// Reads the new CRD document (`--to`): v1 as is, v1beta1 converted. Checks that it
/// parses as a v1 CRD and that its name is `<plural>.<group>`.
pub fn parse_new_crd(doc: &Value, source: &str) -> Result<(Value, Vec<String>), MigrateError> {
    let (crd, notes) = match parse_registration(doc, source)? {
        RegistrationDoc::Crd { crd, notes } => (crd, notes),
        RegistrationDoc::Tpr(_) => {
            return Err(MigrateError::input(
                "new CRD",
                source,
                "it is a ThirdPartyResource; give the new registration as a CustomResourceDefinition ('kubectl crd migrate convert --from FILE' writes one)",
            ));
        }
    };
    check_crd(&crd, source)?;
    Ok((crd, notes))
}

/// Parses a v1 CRD document and checks its name against its names.
pub fn check_crd(crd: &Value, source: &str) -> Result<Crd, MigrateError> {
    let typed: Crd = serde_json::from_value(crd.clone()).map_err(|e| {
        MigrateError::input("new CRD", source, format!("not a valid {CRD_V1} CustomResourceDefinition: {e}"))
    })?;
    let expected = format!("{}.{}", typed.spec.names.plural, typed.spec.group);
    let name = typed.metadata.name.clone().unwrap_or_default();
    if name != expected {
        return Err(MigrateError::input(
            "new CRD",
            source,
            format!("metadata.name is {name:?} but must be {expected:?} (<plural>.<group>)"),
        ));
    }
    if !typed.spec.versions.iter().any(|v| v.storage) {
        return Err(MigrateError::input("new CRD", source, "no version has storage: true"));
    }
    Ok(typed)
}

/// The names 1.7 derived from a TPR's name: `cron-tab.stable.example.com` → kind
/// `CronTab`, plural `crontabs`, singular `crontab`, group `stable.example.com`.
pub fn derive_tpr_names(name: &str) -> Result<TprNames, String> {
    let Some((dashed, group)) = name.split_once('.') else {
        return Err(format!("{name:?} is not <kind-name>.<group> (like cron-tab.stable.example.com)"));
    };
    if !group.contains('.') {
        return Err(format!("the group {group:?} of {name:?} needs at least two segments (like stable.example.com)"));
    }
    if dashed.is_empty() || !dashed.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        return Err(format!("{dashed:?} is not a lower-case, dash-delimited name"));
    }
    let kind: String = dashed
        .split('-')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut chars = p.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect();
    Ok(names_for_kind(group, &kind))
}

/// Names for `kind` in `group` as TPRs derived them: plural is the lower-cased kind + `s`.
pub fn names_for_kind(group: &str, kind: &str) -> TprNames {
    let singular = kind.to_ascii_lowercase();
    TprNames { group: group.to_string(), kind: kind.to_string(), plural: format!("{singular}s"), singular }
}

/// The v1 CRD for a TPR under `names`: namespaced (TPRs were), every TPR version served,
/// the first one stored, and a schema that keeps every field (TPRs had none).
pub fn tpr_to_crd(tpr: &Tpr, names: &TprNames) -> Value {
    let mut schema = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    if let Some(d) = &tpr.description {
        schema["description"] = json!(d);
    }
    let versions: Vec<Value> = tpr
        .versions
        .iter()
        .enumerate()
        .map(|(i, v)| json!({"name": v, "served": true, "storage": i == 0, "schema": {"openAPIV3Schema": schema}}))
        .collect();
    json!({
        "apiVersion": CRD_V1,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{}", names.plural, names.group)},
        "spec": {
            "group": names.group,
            "names": {"kind": names.kind, "listKind": format!("{}List", names.kind), "plural": names.plural, "singular": names.singular},
            "scope": "Namespaced",
            "versions": versions,
        }
    })
}

/// A v1 CRD document without what the server fills in (status, uid, resourceVersion...).
pub fn clean_crd(doc: &Value) -> Value {
    let mut crd = doc.clone();
    if let Some(map) = crd.as_object_mut() {
        map.remove("status");
    }
    super::model::strip_server_fields(&mut crd);
    crd
}

/// Converts an `apiextensions.k8s.io/v1beta1` CRD to v1, saying what changed.
pub fn v1beta1_to_v1(doc: &Value) -> Result<(Value, Vec<String>), String> {
    let mut notes = vec![format!("converted from {CRD_V1BETA1} to {CRD_V1}")];
    let spec = doc.get("spec").and_then(Value::as_object).ok_or("the CRD has no spec")?;
    let top_schema = spec.get("validation").and_then(|v| v.get("openAPIV3Schema")).cloned();
    let top_sub = spec.get("subresources").cloned();
    let top_columns = spec.get("additionalPrinterColumns").cloned();
    let preserve = spec.get("preserveUnknownFields").and_then(Value::as_bool).unwrap_or(true);
    let mut versions: Vec<Value> = match spec.get("versions").and_then(Value::as_array) {
        Some(vs) if !vs.is_empty() => vs.clone(),
        _ => {
            let name = spec
                .get("version")
                .and_then(Value::as_str)
                .ok_or("the CRD has neither spec.version nor spec.versions")?;
            vec![json!({"name": name, "served": true, "storage": true})]
        }
    };
    let mut defaulted_schema = false;
    let mut typed_nodes = 0;
    for v in &mut versions {
        let v = v.as_object_mut().ok_or("spec.versions holds something that is not a mapping")?;
        let mut schema = v
            .remove("schema")
            .and_then(|s| s.get("openAPIV3Schema").cloned())
            .or_else(|| top_schema.clone())
            .unwrap_or_else(|| {
                defaulted_schema = true;
                json!({"type": "object"})
            });
        typed_nodes += fill_types(&mut schema);
        if let Some(s) = schema.as_object_mut() {
            s.entry("type").or_insert(json!("object"));
            if preserve || defaulted_schema {
                s.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            }
        }
        v.insert("schema".into(), json!({"openAPIV3Schema": schema}));
        if !v.contains_key("subresources")
            && let Some(sub) = &top_sub
        {
            v.insert("subresources".into(), sub.clone());
        }
        let columns = v.remove("additionalPrinterColumns").or_else(|| top_columns.clone());
        if let Some(Value::Array(cols)) = columns {
            let cols: Vec<Value> = cols.into_iter().map(rename_json_path).collect();
            v.insert("additionalPrinterColumns".into(), Value::Array(cols));
        }
    }
    if typed_nodes > 0 {
        notes.push(format!(
            "v1 needs a type on every schema node: {typed_nodes} node(s) with properties or items got type object or array"
        ));
    }
    if defaulted_schema {
        notes.push(
            "it had no schema: v1 needs one, so the schema keeps every field (x-kubernetes-preserve-unknown-fields)"
                .into(),
        );
    } else if preserve {
        notes.push(
            "v1beta1 kept unknown fields (preserveUnknownFields defaults to true): the v1 schema keeps them with x-kubernetes-preserve-unknown-fields at its root".into(),
        );
    }
    let mut new_spec = Map::new();
    for key in ["group", "names"] {
        if let Some(v) = spec.get(key) {
            new_spec.insert(key.into(), v.clone());
        }
    }
    new_spec.insert("scope".into(), spec.get("scope").cloned().unwrap_or_else(|| json!("Namespaced")));
    new_spec.insert("versions".into(), Value::Array(versions));
    if let Some(conversion) = spec.get("conversion").and_then(Value::as_object) {
        let strategy = conversion.get("strategy").and_then(Value::as_str).unwrap_or("None");
        let mut c = json!({"strategy": strategy});
        if strategy == "Webhook" {
            let review = conversion.get("conversionReviewVersions").cloned().unwrap_or_else(|| json!(["v1beta1"]));
            c["webhook"] = json!({"conversionReviewVersions": review});
            if let Some(client) = conversion.get("webhookClientConfig") {
                c["webhook"]["clientConfig"] = client.clone();
            }
            notes.push("the conversion webhook's settings moved under spec.conversion.webhook".into());
        }
        new_spec.insert("conversion".into(), c);
    }
    let mut out = json!({"apiVersion": CRD_V1, "kind": "CustomResourceDefinition", "spec": new_spec});
    out["metadata"] = doc.get("metadata").cloned().unwrap_or_else(|| json!({}));
    Ok((clean_crd(&out), notes))
}

/// Gives schema nodes that v1beta1 left untyped the type their keywords imply (v1
/// schemas must be structural); answers how many it typed.
fn fill_types(schema: &mut Value) -> usize {
    let Some(node) = schema.as_object_mut() else { return 0 };
    let mut n = 0;
    if !node.contains_key("type") && !node.contains_key("x-kubernetes-int-or-string") {
        let implied = if node.contains_key("properties") || node.contains_key("additionalProperties") {
            Some("object")
        } else if node.contains_key("items") {
            Some("array")
        } else {
            None
        };
        if let Some(t) = implied {
            node.insert("type".into(), json!(t));
            n += 1;
        }
    }
    for key in ["properties", "patternProperties", "definitions"] {
        if let Some(children) = node.get_mut(key).and_then(Value::as_object_mut) {
            n += children.values_mut().map(fill_types).sum::<usize>();
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = node.get_mut(key) {
            n += fill_types(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(list) = node.get_mut(key).and_then(Value::as_array_mut) {
            n += list.iter_mut().map(fill_types).sum::<usize>();
        }
    }
    n
}

fn rename_json_path(mut column: Value) -> Value {
    if let Some(c) = column.as_object_mut()
        && let Some(path) = c.remove("JSONPath")
    {
        c.insert("jsonPath".into(), path);
    }
    column
}

/// One YAML or JSON document; `what` names it in errors.
pub fn parse_document(text: &str, source: &str, what: &'static str) -> Result<Value, MigrateError> {
    let invalid = |reason: String| MigrateError::input(what, source, reason);
    let trimmed = text.trim_start();
    // JSON first when it looks like JSON; YAML (a superset, flow mappings included) otherwise.
    let json = trimmed.starts_with('{').then(|| serde_json::from_str::<Value>(text).ok()).flatten();
    // The YAML reader writes the numbers as kubectl sends them already.
    let mut docs: Vec<Value> = match json {
        Some(mut doc) => {
            manifests::numbers_as_sent(&mut doc);
            vec![doc]
        }
        None => manifests::from_yaml_documents(text).map_err(|e| invalid(format!("not valid YAML or JSON: {e}")))?,
    };
    docs.retain(|d| !d.is_null());
    match docs.len() {
        1 => Ok(docs.remove(0)),
        0 => Err(invalid("it is empty".into())),
        n => Err(invalid(format!("expected one document, found {n}"))),
    }
}

/// Every object in exported data: `kind: List` documents (and `*List` kinds) are
/// flattened; several documents may follow each other (YAML or JSON).
pub fn parse_objects(text: &str, source: &str) -> Result<Vec<Value>, MigrateError> {
    let invalid = |reason: String| MigrateError::input("exported data", source, reason);
    let docs = crate::cluster::apply::parse_documents(text, source).map_err(|e| match e {
        crate::cluster::ClusterError::InvalidInput { reason, .. } => invalid(reason),
        other => invalid(other.to_string()),
    })?;
    let out: Vec<Value> = docs.into_iter().map(|d| d.value).collect();
    for (i, obj) in out.iter().enumerate() {
        if obj.pointer("/metadata/name").and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(invalid(format!("object #{} has no metadata.name", i + 1)));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpr_names_follow_the_proposal() {
        let n = derive_tpr_names("cron-tab.stable.example.com").expect("derives");
        assert_eq!(
            n,
            TprNames {
                group: "stable.example.com".into(),
                kind: "CronTab".into(),
                plural: "crontabs".into(),
                singular: "crontab".into()
            }
        );
        assert_eq!(derive_tpr_names("database.example.io").expect("one word").kind, "Database");
        assert_eq!(derive_tpr_names("a-b-c.example.io").expect("three").plural, "abcs");
        for bad in ["crontab", "cron-tab.example", "Cron_Tab.stable.example.com", ".example.com"] {
            assert!(derive_tpr_names(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_tpr_becomes_a_namespaced_crd_that_keeps_every_field() {
        let doc = json!({"apiVersion": "extensions/v1beta1", "kind": "ThirdPartyResource",
            "metadata": {"name": "cron-tab.stable.example.com"}, "description": "cron jobs",
            "versions": [{"name": "v1"}, {"name": "v2"}]});
        let RegistrationDoc::Tpr(tpr) = parse_registration(&doc, "tpr.yaml").expect("parses") else { panic!("a TPR") };
        let crd = tpr_to_crd(&tpr, &derive_tpr_names(&tpr.name).expect("names"));
        let typed = check_crd(&crd, "derived").expect("a valid v1 CRD");
        assert_eq!(typed.metadata.name.as_deref(), Some("crontabs.stable.example.com"));
        assert_eq!(typed.spec.scope, "Namespaced");
        assert_eq!(typed.spec.names.list_kind.as_deref(), Some("CronTabList"));
        assert_eq!(crd["spec"]["versions"][0]["storage"], true);
        assert_eq!(crd["spec"]["versions"][1]["storage"], false);
        assert_eq!(
            crd["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }

    #[test]
    fn v1beta1_moves_schema_subresources_and_columns_into_each_version() {
        let doc = json!({"apiVersion": CRD_V1BETA1, "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.io", "uid": "u1", "resourceVersion": "5"},
            "spec": {"group": "example.io", "version": "v1",
                "names": {"plural": "widgets", "kind": "Widget"},
                "validation": {"openAPIV3Schema": {"properties": {"spec": {"properties": {"tags": {"items": {"type": "string"}}}}}}},
                "subresources": {"status": {}},
                "additionalPrinterColumns": [{"name": "Size", "type": "integer", "JSONPath": ".spec.size"}],
                "preserveUnknownFields": false},
            "status": {"acceptedNames": {}}});
        let (crd, notes) = v1beta1_to_v1(&doc).expect("converts");
        assert_eq!(crd["apiVersion"], CRD_V1);
        assert!(crd.get("status").is_none() && crd["metadata"].get("uid").is_none());
        let v = &crd["spec"]["versions"][0];
        assert_eq!(v["name"], "v1");
        assert_eq!(v["storage"], true);
        assert_eq!(v["schema"]["openAPIV3Schema"]["type"], "object");
        assert_eq!(v["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"], "object");
        assert_eq!(v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["tags"]["type"], "array");
        assert!(v["schema"]["openAPIV3Schema"].get("x-kubernetes-preserve-unknown-fields").is_none());
        assert_eq!(v["subresources"], json!({"status": {}}));
        assert_eq!(v["additionalPrinterColumns"][0]["jsonPath"], ".spec.size");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(notes.len(), 2, "{notes:?}");
        check_crd(&crd, "converted").expect("valid v1");
    }

    #[test]
    fn v1beta1_default_preserve_unknown_fields_and_webhook_conversion_carry_over() {
        let doc = json!({"apiVersion": CRD_V1BETA1, "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.io"},
            "spec": {"group": "example.io", "scope": "Cluster",
                "versions": [{"name": "v1", "served": true, "storage": true}],
                "names": {"plural": "widgets", "kind": "Widget"},
                "conversion": {"strategy": "Webhook", "webhookClientConfig": {"url": "https://x"}}}});
        let (crd, notes) = v1beta1_to_v1(&doc).expect("converts");
        assert_eq!(
            crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"], "https://x");
        assert_eq!(crd["spec"]["conversion"]["webhook"]["conversionReviewVersions"], json!(["v1beta1"]));
        assert_eq!(crd["spec"]["scope"], "Cluster");
        assert!(notes.iter().any(|n| n.contains("no schema")), "{notes:?}");
    }

    #[test]
    fn exported_lists_and_documents_flatten() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: a.io/v1, kind: A, metadata: {name: a}}\n- {apiVersion: a.io/v1, kind: A, metadata: {name: b}}\n---\n{apiVersion: a.io/v1, kind: A, metadata: {name: c}}\n";
        let objs = parse_objects(text, "data.yaml").expect("parses");
        assert_eq!(objs.len(), 3);
        let json =
            r#"{"kind": "CronTabList", "items": [{"apiVersion": "a.io/v1", "kind": "A", "metadata": {"name": "x"}}]}"#;
        assert_eq!(parse_objects(json, "d.json").expect("json").len(), 1);
        let e = parse_objects("apiVersion: a.io/v1\nkind: A\nmetadata: {}\n", "d.yaml").expect_err("no name");
        assert!(e.to_string().contains("no metadata.name"), "{e}");
        assert!(e.is_usage());
    }

    #[test]
    fn the_new_crd_name_must_match_its_names() {
        let mut crd = tpr_to_crd(
            &Tpr { name: "x".into(), description: None, versions: vec!["v1".into()] },
            &names_for_kind("example.io", "Gadget"),
        );
        crd["metadata"]["name"] = json!("gizmos.example.io");
        let e = parse_new_crd(&crd, "new.yaml").expect_err("wrong name");
        assert!(e.to_string().contains("must be \"gadgets.example.io\""), "{e}");
    }
}
