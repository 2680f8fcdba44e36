//! Server-side defaults and the REST strategy's preparation of a CRD before it is validated
//! and stored.
//!
//! kube-apiserver fills a few fields on every decode (`SetDefaults_*` in
//! `apis/apiextensions/v1/defaults.go`) and then lets the strategy reset what a client may
//! not set: on create the status is emptied and `status.storedVersions` seeded with the
//! storage version; on update the status is kept from the stored object and the generation
//! bumps when the spec changes; a `/status` write keeps the stored spec. Validation runs
//! after these steps, so `validate_crd_create` expects a prepared object.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionStatus,
};

/// `spec.conversion.strategy` values.
pub const CONVERSION_NONE: &str = "None";
pub const CONVERSION_WEBHOOK: &str = "Webhook";
/// `spec.scope` values.
pub const SCOPE_NAMESPACED: &str = "Namespaced";
pub const SCOPE_CLUSTER: &str = "Cluster";
/// The port a conversion webhook `service` defaults to.
pub const DEFAULT_WEBHOOK_PORT: i32 = 443;

/// Applies the defaults kube fills in on decode: `names.singular` (lowercased kind),
/// `names.listKind` (`<Kind>List`), `conversion.strategy: None`, a conversion webhook
/// service port of 443, and `status.storedVersions` from the storage version when empty.
/// Fields the client set are never overwritten.
pub fn apply_defaults(crd: &mut CustomResourceDefinition) {
    let names = &mut crd.spec.names;
    if names.singular.as_deref().unwrap_or_default().is_empty() {
        names.singular = Some(names.kind.to_lowercase());
    }
    if names.list_kind.as_deref().unwrap_or_default().is_empty() && !names.kind.is_empty() {
        names.list_kind = Some(format!("{}List", names.kind));
    }
    let conversion = crd
        .spec
        .conversion
        .get_or_insert_with(|| CustomResourceConversion { strategy: CONVERSION_NONE.to_string(), webhook: None });
    let service = conversion.webhook.as_mut().and_then(|w| w.client_config.as_mut()).and_then(|c| c.service.as_mut());
    if let Some(service) = service {
        service.port.get_or_insert(DEFAULT_WEBHOOK_PORT);
    }
    let storage = storage_version(crd).map(str::to_string);
    if let Some(storage) = storage {
        let status = crd.status.get_or_insert_with(CustomResourceDefinitionStatus::default);
        if status.stored_versions.as_ref().is_none_or(Vec::is_empty) {
            status.stored_versions = Some(vec![storage]);
        }
    }
}

/// The name of the first version marked `storage: true`.
pub fn storage_version(crd: &CustomResourceDefinition) -> Option<&str> {
    crd.spec.versions.iter().find(|v| v.storage).map(|v| v.name.as_str())
}

/// The status a freshly created CRD carries (reference 06): no conditions, empty accepted
/// names (kube serializes them as `{"plural": "", "kind": ""}`), and the storage version
/// as the only stored version.
fn initial_status(crd: &CustomResourceDefinition) -> CustomResourceDefinitionStatus {
    CustomResourceDefinitionStatus {
        accepted_names: Some(CustomResourceDefinitionNames::default()),
        conditions: None,
        observed_generation: None,
        stored_versions: Some(storage_version(crd).map(|v| vec![v.to_string()]).unwrap_or_default()),
    }
}

/// The create half of kube's CRD strategy: a client cannot set status, so it is reset;
/// `metadata.generation` starts at 1.
pub fn prepare_for_create(crd: &mut CustomResourceDefinition) {
    crd.status = Some(initial_status(crd));
    crd.metadata.generation = Some(1);
}

/// The update half of kube's CRD strategy: status comes from the stored object, the
/// generation bumps when the spec changed, and a new storage version is appended to
/// `status.storedVersions` (it is never removed here; only a status write may do that).
pub fn prepare_for_update(new: &mut CustomResourceDefinition, old: &CustomResourceDefinition) {
    new.status = old.status.clone();
    let old_generation = old.metadata.generation.unwrap_or(0);
    new.metadata.generation = Some(if new.spec == old.spec { old_generation } else { old_generation + 1 });
    let storage = storage_version(new).map(str::to_string);
    if let Some(storage) = storage {
        let status = new.status.get_or_insert_with(CustomResourceDefinitionStatus::default);
        let stored = status.stored_versions.get_or_insert_with(Vec::new);
        if !stored.contains(&storage) {
            stored.push(storage);
        }
    }
}

/// The `/status` strategy: the stored spec wins. Metadata is kept as sent, as kube does
/// (its `ResetObjectMetaForStatus` call passes the new metadata twice); the deletion
/// finalizer depends on this to drop its finalizer through a status write.
pub fn prepare_for_status_update(new: &mut CustomResourceDefinition, old: &CustomResourceDefinition) {
    new.spec = old.spec.clone();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::{CrdBuilder, VersionBuilder};

    #[test]
    fn defaults_fill_only_what_is_missing() {
        struct Case {
            name: &'static str,
            crd: CustomResourceDefinition,
            singular: &'static str,
            list_kind: Option<&'static str>,
        }
        let cases = [
            Case {
                name: "singular and listKind from kind",
                crd: CrdBuilder::new("widgets", "stable.example.com").kind("Widget").build(),
                singular: "widget",
                list_kind: Some("WidgetList"),
            },
            Case {
                name: "given names kept",
                crd: CrdBuilder::new("widgets", "stable.example.com")
                    .kind("Widget")
                    .singular("wdgt")
                    .list_kind("Widgets")
                    .build(),
                singular: "wdgt",
                list_kind: Some("Widgets"),
            },
            Case {
                name: "no kind: no listKind, empty singular",
                crd: CrdBuilder::new("widgets", "stable.example.com").build(),
                singular: "",
                list_kind: None,
            },
        ];
        for mut case in cases {
            apply_defaults(&mut case.crd);
            let names = &case.crd.spec.names;
            assert_eq!(names.singular.as_deref(), Some(case.singular), "{}", case.name);
            assert_eq!(names.list_kind.as_deref(), case.list_kind, "{}", case.name);
            let strategy = case.crd.spec.conversion.as_ref().map(|c| c.strategy.as_str());
            assert_eq!(strategy, Some(CONVERSION_NONE), "{}", case.name);
        }
    }

    #[test]
    fn defaults_keep_a_webhook_conversion_and_default_its_port() {
        let mut crd =
            CrdBuilder::new("widgets", "stable.example.com").kind("Widget").webhook_service("conv", "ns").build();
        apply_defaults(&mut crd);
        let conversion = crd.spec.conversion.as_ref().expect("conversion");
        assert_eq!(conversion.strategy, CONVERSION_WEBHOOK);
        let port = conversion
            .webhook
            .as_ref()
            .and_then(|w| w.client_config.as_ref())
            .and_then(|c| c.service.as_ref())
            .and_then(|s| s.port);
        assert_eq!(port, Some(DEFAULT_WEBHOOK_PORT));
    }

    #[test]
    fn create_resets_status_like_reference_06() {
        let mut crd = CrdBuilder::new("widgets", "stable.example.com")
            .kind("Widget")
            .accepted_names_from_spec()
            .established_at(5)
            .build();
        apply_defaults(&mut crd);
        prepare_for_create(&mut crd);
        let wire = serde_json::to_value(&crd.status).expect("serializes");
        assert_eq!(wire, serde_json::json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}));
        assert_eq!(crd.metadata.generation, Some(1));
    }

    #[test]
    fn update_keeps_status_bumps_generation_on_spec_change_and_appends_storage() {
        let mut old = CrdBuilder::new("widgets", "stable.example.com").kind("Widget").build();
        apply_defaults(&mut old);
        prepare_for_create(&mut old);

        let mut same = old.clone();
        same.status = None;
        prepare_for_update(&mut same, &old);
        assert_eq!(same.metadata.generation, Some(1));
        assert_eq!(same.status, old.status);

        let mut moved = old.clone();
        moved.spec.versions = vec![
            VersionBuilder::new("v1").served(true).storage(false).build(),
            VersionBuilder::new("v2").served(true).storage(true).build(),
        ];
        prepare_for_update(&mut moved, &old);
        assert_eq!(moved.metadata.generation, Some(2));
        let stored = moved.status.as_ref().and_then(|s| s.stored_versions.clone());
        assert_eq!(stored, Some(vec!["v1".to_string(), "v2".to_string()]));
    }

    #[test]
    fn status_update_keeps_the_stored_spec() {
        let old = CrdBuilder::new("widgets", "stable.example.com").kind("Widget").build();
        let mut new = CrdBuilder::new("widgets", "stable.example.com").kind("Gadget").label("tier", "x").build();
        prepare_for_status_update(&mut new, &old);
        assert_eq!(new.spec, old.spec);
        assert!(new.metadata.labels.is_some(), "metadata is kept as sent");
    }
}
