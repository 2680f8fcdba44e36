//! Registrations: CustomResourceDefinitions as the tools show them.
//!
//! The views are pure functions of a CRD ([`Registration::from_crd`], [`Description::from_crd`],
//! [`compare_names`], [`conditions`]) so the CLI, the TUI and tests share them; the IO is in
//! a few async functions: [`list_crds`] (and [`list_crd_summaries`], without the schemas),
//! [`find_crd`] and [`wait_for_established`]. Resource counts are taken by [`super::counts`].

use super::error::ClusterError;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionVersion,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, ApiResource, ListParams};
use serde::Serialize;
use std::time::Duration;

/// `apiextensions.k8s.io/v1` CustomResourceDefinition.
pub type Crd = CustomResourceDefinition;

/// Condition types of a CRD, as kube-apiserver names them.
pub const NAMES_ACCEPTED: &str = "NamesAccepted";
pub const ESTABLISHED: &str = "Established";
pub const TERMINATING: &str = "Terminating";

/// A condition's status, `Missing` when the CRD has no such condition (yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ConditionStatus {
    True,
    False,
    Unknown,
    Missing,
}

impl ConditionStatus {
    fn parse(s: &str) -> Self {
        match s {
            "True" => ConditionStatus::True,
            "False" => ConditionStatus::False,
            _ => ConditionStatus::Unknown,
        }
    }

    /// `True`, `False`, `Unknown`, or empty for a missing condition.
    pub fn as_str(self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
            ConditionStatus::Missing => "",
        }
    }
}

/// One version of a registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionSummary {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    pub status_subresource: bool,
    pub scale_subresource: bool,
}

/// One line of `kubectl crd list`: a registration and how many resources it holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Registration {
    pub name: String,
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub short_names: Vec<String>,
    pub scope: String,
    pub versions: Vec<VersionSummary>,
    pub established: ConditionStatus,
    pub names_accepted: ConditionStatus,
    pub terminating: bool,
    /// The reason of the first condition that is not as it should be (NamesAccepted or
    /// Established not True, Terminating True).
    pub reason: Option<String>,
    pub created: Option<Timestamp>,
    /// Custom resources stored, `None` when they cannot be counted (not served yet, or the
    /// list was refused).
    pub resources: Option<u64>,
}

impl Registration {
    /// The summary of `crd`, with `resources` counted elsewhere.
    pub fn from_crd(crd: &Crd, resources: Option<u64>) -> Self {
        let cond = |t: &str| condition(crd, t).map_or(ConditionStatus::Missing, |c| ConditionStatus::parse(&c.status));
        let names_accepted = cond(NAMES_ACCEPTED);
        let established = cond(ESTABLISHED);
        let terminating = cond(TERMINATING) == ConditionStatus::True;
        let reason_of = |t: &str| condition(crd, t).and_then(|c| c.reason.clone());
        let reason = if terminating {
            reason_of(TERMINATING)
        } else if names_accepted != ConditionStatus::True && names_accepted != ConditionStatus::Missing {
            reason_of(NAMES_ACCEPTED)
        } else if established != ConditionStatus::True && established != ConditionStatus::Missing {
            reason_of(ESTABLISHED)
        } else {
            None
        };
        Registration {
            name: crd.metadata.name.clone().unwrap_or_default(),
            group: crd.spec.group.clone(),
            kind: crd.spec.names.kind.clone(),
            plural: crd.spec.names.plural.clone(),
            short_names: crd.spec.names.short_names.clone().unwrap_or_default(),
            scope: crd.spec.scope.clone(),
            versions: crd.spec.versions.iter().map(version_summary).collect(),
            established,
            names_accepted,
            terminating,
            reason,
            created: crd.metadata.creation_timestamp.as_ref().map(|t| t.0),
            resources,
        }
    }

    /// The storage version's name.
    pub fn storage_version(&self) -> Option<&str> {
        self.versions.iter().find(|v| v.storage).map(|v| v.name.as_str())
    }
}

fn version_summary(v: &CustomResourceDefinitionVersion) -> VersionSummary {
    let sub = v.subresources.as_ref();
    VersionSummary {
        name: v.name.clone(),
        served: v.served,
        storage: v.storage,
        deprecated: v.deprecated.unwrap_or(false),
        status_subresource: sub.is_some_and(|s| s.status.is_some()),
        scale_subresource: sub.is_some_and(|s| s.scale.is_some()),
    }
}

/// The condition of type `type_`, if the CRD has it.
pub fn condition<'a>(
    crd: &'a Crd,
    type_: &str,
) -> Option<&'a k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionCondition> {
    crd.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)
}

/// One name of a registration: what the spec asks for beside what the server accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NameRow {
    /// `plural`, `singular`, `kind`, `listKind`, `shortNames` or `categories`.
    pub field: &'static str,
    pub spec: String,
    /// Empty when nothing has been accepted.
    pub accepted: String,
    pub differs: bool,
}

/// Spec names beside accepted names, one row per field, differences marked.
pub fn compare_names(crd: &Crd) -> Vec<NameRow> {
    let spec = &crd.spec.names;
    let accepted = crd.status.as_ref().and_then(|s| s.accepted_names.as_ref());
    type Field = (&'static str, fn(&CustomResourceDefinitionNames) -> String);
    let fields: [Field; 6] = [
        ("plural", |n| n.plural.clone()),
        ("singular", |n| n.singular.clone().unwrap_or_default()),
        ("kind", |n| n.kind.clone()),
        ("listKind", |n| n.list_kind.clone().unwrap_or_default()),
        ("shortNames", |n| n.short_names.clone().unwrap_or_default().join(",")),
        ("categories", |n| n.categories.clone().unwrap_or_default().join(",")),
    ];
    fields
        .iter()
        .map(|(field, get)| {
            let spec_value = get(spec);
            let accepted_value = accepted.map(get).unwrap_or_default();
            NameRow { field, differs: spec_value != accepted_value, spec: spec_value, accepted: accepted_value }
        })
        .collect()
}

/// A condition as shown to the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionView {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub last_transition_time: Option<Timestamp>,
}

/// The CRD's conditions in the order the server keeps them.
pub fn conditions(crd: &Crd) -> Vec<ConditionView> {
    let list = crd.status.as_ref().and_then(|s| s.conditions.as_ref());
    list.into_iter()
        .flatten()
        .map(|c| ConditionView {
            type_: c.type_.clone(),
            status: c.status.clone(),
            reason: c.reason.clone().unwrap_or_default(),
            message: c.message.clone().unwrap_or_default(),
            last_transition_time: c.last_transition_time.as_ref().map(|t| t.0),
        })
        .collect()
}

/// A printer column of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrinterColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    pub json_path: String,
    pub priority: i32,
    pub description: String,
}

/// The `/scale` mapping of one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScaleMapping {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    pub label_selector_path: Option<String>,
}

/// A top-level field of a version's schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchemaField {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    pub required: bool,
    pub description: String,
}

/// Everything `describe` shows about one version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionDetail {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    pub deprecation_warning: Option<String>,
    pub status_subresource: bool,
    pub scale: Option<ScaleMapping>,
    pub printer_columns: Vec<PrinterColumn>,
    pub schema_fields: Vec<SchemaField>,
}

/// `kubectl crd describe`: a registration in full.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Description {
    pub name: String,
    pub group: String,
    pub scope: String,
    pub created: Option<Timestamp>,
    pub deleting: bool,
    pub resources: Option<u64>,
    pub names: Vec<NameRow>,
    pub conditions: Vec<ConditionView>,
    pub versions: Vec<VersionDetail>,
}

impl Description {
    /// The description of `crd`, with `resources` counted elsewhere.
    pub fn from_crd(crd: &Crd, resources: Option<u64>) -> Self {
        Description {
            name: crd.metadata.name.clone().unwrap_or_default(),
            group: crd.spec.group.clone(),
            scope: crd.spec.scope.clone(),
            created: crd.metadata.creation_timestamp.as_ref().map(|t| t.0),
            deleting: crd.metadata.deletion_timestamp.is_some(),
            resources,
            names: compare_names(crd),
            conditions: conditions(crd),
            versions: crd.spec.versions.iter().map(version_detail).collect(),
        }
    }
}

fn version_detail(v: &CustomResourceDefinitionVersion) -> VersionDetail {
    let sub = v.subresources.as_ref();
    let schema = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref());
    let required = schema.and_then(|s| s.required.clone()).unwrap_or_default();
    let schema_fields = schema
        .and_then(|s| s.properties.as_ref())
        .into_iter()
        .flatten()
        .map(|(name, props)| SchemaField {
            name: name.clone(),
            type_: schema_type(props),
            required: required.contains(name),
            description: props.description.clone().unwrap_or_default(),
        })
        .collect();
    VersionDetail {
        name: v.name.clone(),
        served: v.served,
        storage: v.storage,
        deprecated: v.deprecated.unwrap_or(false),
        deprecation_warning: v.deprecation_warning.clone(),
        status_subresource: sub.is_some_and(|s| s.status.is_some()),
        scale: sub.and_then(|s| s.scale.as_ref()).map(|s| ScaleMapping {
            spec_replicas_path: s.spec_replicas_path.clone(),
            status_replicas_path: s.status_replicas_path.clone(),
            label_selector_path: s.label_selector_path.clone(),
        }),
        printer_columns: v
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| PrinterColumn {
                name: c.name.clone(),
                type_: c.type_.clone(),
                json_path: c.json_path.clone(),
                priority: c.priority.unwrap_or(0),
                description: c.description.clone().unwrap_or_default(),
            })
            .collect(),
        schema_fields,
    }
}

fn schema_type(props: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps) -> String {
    if props.x_kubernetes_int_or_string == Some(true) {
        return "int-or-string".into();
    }
    match props.type_.as_deref() {
        Some("array") => {
            let item = props.items.as_ref().and_then(|i| match i {
                k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaPropsOrArray::Schema(
                    s,
                ) => s.type_.clone(),
                _ => None,
            });
            format!("[]{}", item.unwrap_or_else(|| "any".into()))
        }
        Some(t) => t.to_string(),
        None if props.x_kubernetes_preserve_unknown_fields == Some(true) => "any".into(),
        None => String::new(),
    }
}

/// Every CRD, sorted by name.
pub async fn list_crds(client: &kube::Client) -> Result<Vec<Crd>, ClusterError> {
    let api: Api<Crd> = Api::all(client.clone());
    let mut crds = api.list(&ListParams::default()).await.map_err(|e| ClusterError::from_kube(e, None))?.items;
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(crds)
}

/// Every CRD, sorted by name, without its versions' schemas: what a listing of
/// registrations, a completion or a wait for endpoints reads. The schemas are nearly all
/// of a CRD's bytes, and typing them was most of `kubectl crd list`'s time with 2,000
/// CRDs (80 MB of JSON: 1.9 s, of which 0.25 s the transfer).
pub async fn list_crd_summaries(client: &kube::Client) -> Result<Vec<Crd>, ClusterError> {
    let request = kube::core::Request::new("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .list(&ListParams::default())
        .map_err(|e| ClusterError::from_kube(kube::Error::BuildRequest(e), None))?;
    let list: summary::List = client.request(request).await.map_err(|e| ClusterError::from_kube(e, None))?;
    let mut crds: Vec<Crd> = list.items.into_iter().map(summary::Crd::into_crd).collect();
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(crds)
}

/// A CRD as [`list_crd_summaries`] reads it: every field but the versions' schemas, which
/// the decoder skips over without building them.
mod summary {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
        CustomResourceColumnDefinition, CustomResourceConversion, CustomResourceDefinition,
        CustomResourceDefinitionNames, CustomResourceDefinitionSpec, CustomResourceDefinitionStatus,
        CustomResourceDefinitionVersion, CustomResourceSubresources, SelectableField,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct List {
        #[serde(default)]
        pub items: Vec<Crd>,
    }

    #[derive(Deserialize)]
    pub struct Crd {
        #[serde(default)]
        metadata: ObjectMeta,
        spec: Spec,
        #[serde(default)]
        status: Option<CustomResourceDefinitionStatus>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Spec {
        #[serde(default)]
        conversion: Option<CustomResourceConversion>,
        group: String,
        names: CustomResourceDefinitionNames,
        #[serde(default)]
        preserve_unknown_fields: Option<bool>,
        scope: String,
        #[serde(default)]
        versions: Vec<Version>,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Version {
        #[serde(default)]
        additional_printer_columns: Option<Vec<CustomResourceColumnDefinition>>,
        #[serde(default)]
        deprecated: Option<bool>,
        #[serde(default)]
        deprecation_warning: Option<String>,
        name: String,
        #[serde(default)]
        selectable_fields: Option<Vec<SelectableField>>,
        served: bool,
        storage: bool,
        #[serde(default)]
        subresources: Option<CustomResourceSubresources>,
    }

    impl Crd {
        pub fn into_crd(self) -> CustomResourceDefinition {
            let versions = self.spec.versions.into_iter().map(Version::into_version).collect();
            CustomResourceDefinition {
                metadata: self.metadata,
                spec: CustomResourceDefinitionSpec {
                    conversion: self.spec.conversion,
                    group: self.spec.group,
                    names: self.spec.names,
                    preserve_unknown_fields: self.spec.preserve_unknown_fields,
                    scope: self.spec.scope,
                    versions,
                },
                status: self.status,
            }
        }
    }

    impl Version {
        fn into_version(self) -> CustomResourceDefinitionVersion {
            CustomResourceDefinitionVersion {
                additional_printer_columns: self.additional_printer_columns,
                deprecated: self.deprecated,
                deprecation_warning: self.deprecation_warning,
                name: self.name,
                schema: None,
                selectable_fields: self.selectable_fields,
                served: self.served,
                storage: self.storage,
                subresources: self.subresources,
            }
        }
    }
}

/// The first `limit` CRDs by name, and whether there are more: what a screen needs first.
pub async fn first_crds(client: &kube::Client, limit: u32) -> Result<(Vec<Crd>, bool), ClusterError> {
    let api: Api<Crd> = Api::all(client.clone());
    let page = api.list(&ListParams::default().limit(limit)).await.map_err(|e| ClusterError::from_kube(e, None))?;
    let more = page.metadata.continue_.is_some_and(|c| !c.is_empty());
    let mut crds = page.items;
    crds.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok((crds, more))
}

/// The CRD a user means by `word`: its name (`plural.group`), or the plural, singular, kind
/// or a short name in its spec or accepted names (case-insensitive for the kind).
pub async fn find_crd(client: &kube::Client, word: &str) -> Result<Crd, ClusterError> {
    let api: Api<Crd> = Api::all(client.clone());
    if let Some(crd) = api.get_opt(word).await.map_err(|e| ClusterError::from_kube(e, None))? {
        return Ok(crd);
    }
    // Found among the summaries, then read whole: only the one CRD's schemas are typed.
    let crds = list_crd_summaries(client).await?;
    let lower = word.to_ascii_lowercase();
    let matches = |n: &CustomResourceDefinitionNames| {
        n.plural == lower
            || n.singular.as_deref() == Some(lower.as_str())
            || n.kind.eq_ignore_ascii_case(word)
            || n.short_names.iter().flatten().any(|s| s.eq_ignore_ascii_case(word))
    };
    let accepted = |c: &Crd| c.status.as_ref().and_then(|s| s.accepted_names.as_ref()).is_some_and(matches);
    // Accepted names first: they are what the server resolves.
    let found = crds.iter().find(|c| accepted(c)).or_else(|| crds.iter().find(|c| matches(&c.spec.names)));
    let unknown = || ClusterError::UnknownRegistration { name: word.to_string() };
    let name = found.and_then(|c| c.metadata.name.as_deref()).ok_or_else(unknown)?;
    // Gone since the list: as unknown as if it had not been listed.
    api.get_opt(name).await.map_err(|e| ClusterError::from_kube(e, None))?.ok_or_else(unknown)
}

/// The version whose endpoint lists a CRD's resources: the storage version if it is
/// served, else the first served one.
pub fn listing_version(crd: &Crd) -> Option<&str> {
    let versions = &crd.spec.versions;
    versions
        .iter()
        .find(|v| v.storage && v.served)
        .or_else(|| versions.iter().find(|v| v.served))
        .map(|v| v.name.as_str())
}

/// The endpoint of a CRD's resources under its accepted names, if it is served.
pub fn served_resource(crd: &Crd) -> Option<ApiResource> {
    let accepted = crd.status.as_ref()?.accepted_names.as_ref()?;
    let established = condition(crd, ESTABLISHED).is_some_and(|c| c.status == "True");
    if accepted.plural.is_empty() || !established {
        return None;
    }
    let version = listing_version(crd)?;
    Some(ApiResource {
        group: crd.spec.group.clone(),
        version: version.to_string(),
        api_version: format!("{}/{version}", crd.spec.group),
        kind: accepted.kind.clone(),
        plural: accepted.plural.clone(),
    })
}

/// How a wait for `Established` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Establishment {
    Established,
    /// The names were refused, so the CRD will not be established until they are freed.
    NamesNotAccepted {
        reason: String,
        message: String,
    },
}

/// Waits until the CRD `name` is Established, or its names are refused (which would keep
/// it waiting forever), for at most `timeout`.
pub async fn wait_for_established(
    client: &kube::Client,
    name: &str,
    timeout: Duration,
) -> Result<Establishment, ClusterError> {
    let api: Api<Crd> = Api::all(client.clone());
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = Duration::from_millis(10);
    loop {
        let crd = api.get(name).await.map_err(|e| {
            ClusterError::from_kube(e, Some(("customresourcedefinitions.apiextensions.k8s.io", name, None)))
        })?;
        if condition(&crd, ESTABLISHED).is_some_and(|c| c.status == "True") {
            return Ok(Establishment::Established);
        }
        if let Some(c) = condition(&crd, NAMES_ACCEPTED).filter(|c| c.status == "False") {
            return Ok(Establishment::NamesNotAccepted {
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
            });
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(ClusterError::WaitTimeout {
                what: format!("customresourcedefinition {name} becoming Established"),
                after: timeout,
            });
        }
        // Polling: a watch would need its own reconnection logic for one short wait.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(200));
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A CRD document for tests: `plural.group`, namespaced, one version `v1`.
    pub(crate) fn crd(plural: &str, kind: &str, short: &[&str], status: serde_json::Value) -> Crd {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.stable.example.com"), "creationTimestamp": "2026-11-22T02:36:54Z"},
            "spec": {
                "group": "stable.example.com",
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": kind.to_ascii_lowercase(), "kind": kind, "listKind": format!("{kind}List"), "shortNames": short},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "required": ["spec"], "properties": {
                        "spec": {"type": "object", "description": "What the user wants."},
                        "status": {"type": "object"},
                        "tags": {"type": "array", "items": {"type": "string"}}
                    }}},
                    "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
                    "additionalPrinterColumns": [{"name": "Color", "type": "string", "jsonPath": ".spec.color"}]
                }]
            },
            "status": status
        }))
        .expect("crd")
    }

    fn gadget_not_accepted() -> Crd {
        crd(
            "gadgets",
            "Gadget",
            &["wd"],
            json!({
                "acceptedNames": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
                "conditions": [
                    {"type": "NamesAccepted", "status": "False", "reason": "ShortNamesConflict", "message": "\"wd\" is already in use", "lastTransitionTime": "2026-11-22T02:36:55Z"},
                    {"type": "Established", "status": "False", "reason": "NotAccepted", "message": "not all names are accepted", "lastTransitionTime": "2026-11-22T02:36:55Z"}
                ]
            }),
        )
    }

    #[test]
    fn a_refused_short_name_shows_as_a_difference_and_a_reason() {
        let g = gadget_not_accepted();
        let rows = compare_names(&g);
        let short = rows.iter().find(|r| r.field == "shortNames").expect("shortNames row");
        assert_eq!((short.spec.as_str(), short.accepted.as_str(), short.differs), ("wd", "", true));
        assert!(rows.iter().filter(|r| r.field != "shortNames").all(|r| !r.differs), "{rows:?}");
        let summary = Registration::from_crd(&g, None);
        assert_eq!(summary.names_accepted, ConditionStatus::False);
        assert_eq!(summary.established, ConditionStatus::False);
        assert_eq!(summary.reason.as_deref(), Some("ShortNamesConflict"));
        assert!(served_resource(&g).is_none(), "not established, so no endpoint");
    }

    #[test]
    fn a_fresh_crd_has_nothing_accepted_and_missing_conditions() {
        let fresh = crd("widgets", "Widget", &[], json!({}));
        assert!(compare_names(&fresh).iter().filter(|r| !r.spec.is_empty()).all(|r| r.differs));
        let summary = Registration::from_crd(&fresh, None);
        assert_eq!((summary.established, summary.reason.clone()), (ConditionStatus::Missing, None));
        assert_eq!(summary.storage_version(), Some("v1"));
    }

    #[test]
    fn descriptions_carry_versions_columns_and_schema_fields() {
        let d = Description::from_crd(&gadget_not_accepted(), Some(3));
        let v = &d.versions[0];
        assert!(v.status_subresource);
        assert_eq!(v.scale.as_ref().map(|s| s.spec_replicas_path.as_str()), Some(".spec.replicas"));
        assert_eq!(v.printer_columns[0].name, "Color");
        let fields: Vec<(&str, &str, bool)> =
            v.schema_fields.iter().map(|f| (f.name.as_str(), f.type_.as_str(), f.required)).collect();
        assert_eq!(fields, vec![("spec", "object", true), ("status", "object", false), ("tags", "[]string", false)]);
        assert_eq!(d.conditions.len(), 2);
        assert_eq!(d.conditions[0].reason, "ShortNamesConflict");
    }
}
