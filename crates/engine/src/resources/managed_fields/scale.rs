//! managedFields through `/scale`, as kube's `ScaleHandler` keeps them.
//!
//! kube does not track a scale write on the custom resource. It translates the entries
//! that own the replicas path (each at its own version's `specReplicasPath`, which a
//! CRD's versions may name differently) into entries of the `autoscaling/v1` Scale
//! (`ToSubresource`), runs the write's field manager on the Scale, and translates back
//! (`ToParent`). The round trip has consequences clients see, and this module reproduces
//! them rather than the intent:
//!
//! - an `Update` entry is identified by its apiVersion, which the trip changes, so an
//!   updater that owned the replicas comes back as two entries with the same manager: its
//!   own without the replicas, and one with only the replicas and no time. Those two
//!   cannot both be read back (the later, timed one wins), so the next write drops the
//!   replicas entry;
//! - a write that changes the replicas gives them to its manager, in an entry for the
//!   `scale` subresource with no time; one that sets them to 0 removes them from the
//!   Scale (Go omits a zero `spec.replicas`), so every manager loses them and its own
//!   manager gets nothing;
//! - when no entry owns the replicas, the Scale has no managedFields and kube's field
//!   manager leaves an object nobody tracks untracked: nothing changes.

use super::managers::{self, Managed, ManagerId, VersionedSet};
use super::path::PathElement;
use super::set::Set;
use serde_json::Value;

/// The Scale's own version, which the translated `Update` entries are identified by.
pub const SCALE_API_VERSION: &str = "autoscaling/v1";

/// `spec.replicas` of the Scale.
fn scale_replicas() -> Vec<PathElement> {
    vec![PathElement::Field("spec".into()), PathElement::Field("replicas".into())]
}

/// What a scale write does to the Scale's `spec.replicas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicasChange {
    Kept,
    /// Set to another value than 0.
    Set,
    /// Set to 0, which the Scale omits.
    Removed,
}

/// One scale write: who writes, through which version of the custom resource, and
/// what it does to the replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleWrite<'a> {
    /// The request's field manager (`unknown` when it has none).
    pub manager: &'a str,
    /// `group/version` of the custom resource the request went through.
    pub api_version: &'a str,
    /// The custom resource's replicas path (`specReplicasPath`).
    pub replicas: &'a [PathElement],
    /// Each version's replicas path (`None`: no `/scale`), as kube maps every entry by
    /// its own version; empty: every version of the group has `replicas`.
    pub versions: &'a [(String, Option<Vec<PathElement>>)],
    pub change: ReplicasChange,
}

impl ScaleWrite<'_> {
    /// The replicas path of an entry at `api_version`: `None` for a version kube cannot
    /// map (its entry is dropped), `Some(None)` for one without `/scale`.
    fn replicas_at(&self, api_version: &str) -> Option<Option<&[PathElement]>> {
        if self.versions.is_empty() {
            return (group(api_version) == group(self.api_version)).then_some(Some(self.replicas));
        }
        self.versions.iter().find(|(v, _)| v == api_version).map(|(_, path)| path.as_deref())
    }
}

pub(super) fn group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// The Scale's entries: one per custom resource entry owning the replicas, read back as
/// the Scale's field manager reads them (so `Update` entries now carry the Scale's
/// version in their identity, and two that differed only by version become one).
fn to_subresource(parent: &Managed, write: &ScaleWrite) -> Managed {
    let mut scale = Managed::default();
    for (id, vs) in &parent.fields {
        if !write.replicas_at(&vs.api_version).flatten().is_some_and(|path| vs.set.has(path)) {
            continue;
        }
        let set = Set::of(&[scale_replicas()]);
        scale
            .fields
            .insert(id.clone(), VersionedSet { set, api_version: SCALE_API_VERSION.into(), applied: vs.applied });
        if let Some(t) = parent.times.get(id) {
            scale.times.insert(id.clone(), t.clone());
        }
    }
    managers::encode(&scale)
        .and_then(|entries| entries.as_array().cloned())
        .and_then(|list| managers::decode(&list).ok())
        .unwrap_or_default()
}

/// The Scale's entries after the write: an update takes the replicas it changes from
/// every other manager (they own nothing else there) and keeps them under its own entry;
/// replicas it removes are nobody's (SMD's updater drops removed fields from every set).
fn update_scale(mut scale: Managed, write: &ScaleWrite) -> Managed {
    match write.change {
        ReplicasChange::Kept => return scale,
        ReplicasChange::Removed => {
            scale.fields.clear();
            return scale;
        }
        ReplicasChange::Set => {}
    }
    let manager = if write.manager.is_empty() { "unknown" } else { write.manager };
    let id = ManagerId::update(manager, SCALE_API_VERSION, Some("scale"));
    scale.fields.retain(|other, _| *other == id);
    let set = Set::of(&[scale_replicas()]);
    scale.fields.insert(id, VersionedSet { set, api_version: SCALE_API_VERSION.into(), applied: false });
    scale
}

/// kube's `ToParent`: the custom resource's entries with the replicas as the Scale's
/// entries say.
fn to_parent(parent: &Managed, mut scale: Managed, write: &ScaleWrite) -> Managed {
    let mut out = Managed::default();
    let replicas = Set::of(&[write.replicas.to_vec()]);
    for (id, vs) in &parent.fields {
        // Entries of a version kube cannot map are dropped.
        let Some(path) = write.replicas_at(&vs.api_version) else { continue };
        let kept = match path.filter(|path| vs.set.has(path)) {
            Some(path) if scale.fields.remove(id).is_none() => {
                let set = vs.set.difference(&Set::of(&[path.to_vec()]));
                (!set.is_empty()).then(|| VersionedSet { set, ..vs.clone() })
            }
            _ => Some(vs.clone()),
        };
        if let Some(vs) = kept {
            out.fields.insert(id.clone(), vs);
            if let Some(t) = parent.times.get(id) {
                out.times.insert(id.clone(), t.clone());
            }
        }
    }
    for (id, vs) in scale.fields {
        if !vs.set.has(&scale_replicas()) {
            continue;
        }
        let back =
            VersionedSet { set: replicas.clone(), api_version: write.api_version.to_string(), applied: vs.applied };
        if let Some(t) = parent.times.get(&id) {
            out.times.insert(id.clone(), t.clone());
        }
        out.fields.insert(id, back);
    }
    out
}

/// The managedFields a scale write leaves on the custom resource `live`, or `None` when
/// it has none.
pub fn after_scale_write(live: &Value, write: &ScaleWrite) -> Option<Value> {
    let parent = managers::live(live);
    let scale = to_subresource(&parent, write);
    // An untracked Scale stays untracked; the entries come back as they were read.
    let scale = if scale.fields.is_empty() { scale } else { update_scale(scale, write) };
    managers::encode(&to_parent(&parent, scale, write))
}

/// The Scale's managedFields as kube's `ToSubresource` hands them to the Scale's field
/// manager for an apply through `/scale`, or `None` when no entry owns the replicas.
pub fn scale_entries(live: &Value, write: &ScaleWrite) -> Option<Value> {
    managers::encode(&to_subresource(&managers::live(live), write))
}

/// The managedFields an apply through `/scale` leaves on the custom resource `live`: the
/// entries of the applied Scale `applied`, translated back (`ToParent`).
pub fn after_scale_apply(live: &Value, applied: &Value, write: &ScaleWrite) -> Option<Value> {
    managers::encode(&to_parent(&managers::live(live), managers::live(applied), write))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const V1: &str = "t.example.com/v1";

    fn entry(manager: &str, sub: Option<&str>, time: Option<&str>, fields: Value) -> Value {
        let mut e = json!({"apiVersion": V1, "fieldsType": "FieldsV1", "fieldsV1": fields,
            "manager": manager, "operation": "Update"});
        if let Some(s) = sub {
            e["subresource"] = json!(s);
        }
        if let Some(t) = time {
            e["time"] = json!(t);
        }
        e
    }

    fn created() -> Value {
        let fields = json!({"f:spec": {".": {}, "f:replicas": {}, "f:size": {}}});
        json!({"metadata": {"managedFields": [entry("c", None, Some("2026-11-26T01:20:43Z"), fields)]}})
    }

    fn scaled(live: &Value, manager: &str, change: ReplicasChange) -> Option<Value> {
        let replicas = scale_replicas();
        after_scale_write(live, &ScaleWrite { manager, api_version: V1, replicas: &replicas, versions: &[], change })
    }

    // Each case is what kube-apiserver 1.32 answered for the same writes.

    #[test]
    fn a_scale_write_that_changes_the_replicas_takes_them() {
        let size = json!({"f:spec": {".": {}, "f:size": {}}});
        assert_eq!(
            scaled(&created(), "sc", ReplicasChange::Set),
            Some(json!([
                entry("sc", Some("scale"), None, json!({"f:spec": {"f:replicas": {}}})),
                entry("c", None, Some("2026-11-26T01:20:43Z"), size.clone()),
            ]))
        );
        assert_eq!(
            scaled(&created(), "c", ReplicasChange::Set),
            Some(json!([
                entry("c", Some("scale"), None, json!({"f:spec": {"f:replicas": {}}})),
                entry("c", None, Some("2026-11-26T01:20:43Z"), size),
            ]))
        );
    }

    #[test]
    fn a_scale_write_that_keeps_the_replicas_splits_their_owner_in_two() {
        let split = json!([
            entry("c", None, None, json!({"f:spec": {"f:replicas": {}}})),
            entry("c", None, Some("2026-11-26T01:20:43Z"), json!({"f:spec": {".": {}, "f:size": {}}})),
        ]);
        assert_eq!(scaled(&created(), "sc", ReplicasChange::Kept), Some(split.clone()));
        // The two entries read back as one, the later: the replicas entry is lost, and
        // with nobody owning the replicas the next scale write tracks nothing.
        let after = json!({"metadata": {"managedFields": split}});
        let read_back = managers::encode(&managers::live(&after));
        let size_only =
            json!([entry("c", None, Some("2026-11-26T01:20:43Z"), json!({"f:spec": {".": {}, "f:size": {}}}))]);
        assert_eq!(read_back, Some(size_only.clone()));
        let untracked = json!({"metadata": {"managedFields": size_only.clone()}});
        assert_eq!(scaled(&untracked, "sc", ReplicasChange::Set), Some(size_only));
    }

    #[test]
    fn an_owner_of_only_the_replicas_leaves_a_bare_spec() {
        // The verbs scenario: `unknown` owned spec and its replicas, and a scale patch
        // that kept them leaves it owning `spec` alone.
        let fields =
            json!({"f:metadata": {"f:labels": {".": {}, "f:patched": {}}}, "f:spec": {".": {}, "f:replicas": {}}});
        let live =
            json!({"metadata": {"managedFields": [entry("unknown", None, Some("2026-11-26T01:20:43Z"), fields)]}});
        let out = scaled(&live, "unknown", ReplicasChange::Kept).expect("entries");
        assert_eq!(out[1]["fieldsV1"], json!({"f:metadata": {"f:labels": {".": {}, "f:patched": {}}}, "f:spec": {}}));
        assert_eq!(out[0]["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    }

    #[test]
    fn a_scale_write_to_zero_leaves_the_replicas_to_nobody() {
        let size = json!({"f:spec": {".": {}, "f:size": {}}});
        assert_eq!(
            scaled(&created(), "sc", ReplicasChange::Removed),
            Some(json!([entry("c", None, Some("2026-11-26T01:20:43Z"), size)]))
        );
        let only_replicas = json!({"f:spec": {"f:replicas": {}}});
        let live =
            json!({"metadata": {"managedFields": [entry("a", None, Some("2026-11-26T01:20:43Z"), only_replicas)]}});
        assert_eq!(scaled(&live, "sc", ReplicasChange::Removed), None);
    }

    /// The oracle, for a CRD whose v2 names its replicas `spec.count`: an entry at v2 owns
    /// the replicas through its own version's path, so a scale write through v1 takes
    /// `spec.count` from it and gives its writer v1's `spec.replicas`.
    #[test]
    fn each_entry_owns_the_replicas_at_its_own_versions_path() {
        const V2: &str = "t.example.com/v2";
        let (replicas, count) =
            (scale_replicas(), vec![PathElement::Field("spec".into()), PathElement::Field("count".into())]);
        let versions = [(V1.to_string(), Some(replicas.clone())), (V2.to_string(), Some(count))];
        let mut at_v2 =
            entry("c", None, Some("2026-11-26T01:20:43Z"), json!({"f:spec": {".": {}, "f:count": {}, "f:y": {}}}));
        at_v2["apiVersion"] = json!(V2);
        let live = json!({"metadata": {"managedFields": [at_v2.clone()]}});
        let write = ScaleWrite {
            manager: "sc",
            api_version: V1,
            replicas: &replicas,
            versions: &versions,
            change: ReplicasChange::Set,
        };
        at_v2["fieldsV1"] = json!({"f:spec": {".": {}, "f:y": {}}});
        assert_eq!(
            after_scale_write(&live, &write),
            Some(json!([entry("sc", Some("scale"), None, json!({"f:spec": {"f:replicas": {}}})), at_v2]))
        );
    }
}
