//! The deleting verbs: delete of one object (finalizers, preconditions, propagation) and
//! deletecollection, page by page.

use super::Rest;
use super::options::{
    DELETE_COLLECTION_PAGE, DeleteOptions, FOREGROUND_FINALIZER, ListQuery, ORPHAN_FINALIZER, Propagation, WriteOptions,
};
use crate::meta;
use crate::resources::admit::{Attributes, Operation, delete_options_document};
use crate::status::{ApiError, GroupResource};
use serde_json::{Value, json};

/// The answer to a DELETE: the object (or kube's Status for a kind that answers one), and
/// whether it went rather than being only marked.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteOutcome {
    pub object: Value,
    pub deleted: bool,
}

impl Rest<'_> {
    /// DELETE one object. Finalizers (the object's own, plus `orphan` or
    /// `foregroundDeletion` for those propagation policies, and a kind's own deferral such
    /// as a namespace's) make it only marked with a deletionTimestamp; the engine's
    /// controllers finish the job. Answers with the object's last state, as kube does.
    pub async fn delete(
        &self,
        namespace: Option<&str>,
        name: &str,
        delete: &DeleteOptions,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        Ok(self.delete_outcome(namespace, name, delete, opts).await?.object)
    }

    /// [`Rest::delete`], with whether the object went (kube's handler answers 202 for one
    /// only marked under `orphanDependents=false`).
    pub async fn delete_outcome(
        &self,
        namespace: Option<&str>,
        name: &str,
        delete: &DeleteOptions,
        opts: &WriteOptions,
    ) -> Result<DeleteOutcome, ApiError> {
        let dry_run = opts.dry_run || delete.dry_run;
        let current = self.get(namespace, name).await?;
        let rv = meta::resource_version(&current).and_then(meta::parse_resource_version);
        self.check_delete_preconditions(name, &current, delete)?;
        // Admission of a delete: the object it deletes is the old one, there is no new one.
        let attrs = Attributes {
            options: delete_options_document(delete, dry_run),
            dry_run,
            ..self.admission_attributes(Operation::Delete, namespace, name, None, opts)
        };
        self.admission.mutate(&attrs, None, Some(&current)).await?;
        self.admission.validate(&attrs, None, Some(&current)).await?;
        let key = self.info().key(namespace, name);
        let stored_finalizers = meta::finalizers(&current);
        let updated = self.strategy.deletion_finalizers(&current, delete);
        let changed = updated.is_some();
        let held = !stored_finalizers.is_empty();
        let finalizers = updated.unwrap_or(stored_finalizers);
        let deferred = self.strategy.defers_deletion(&current);
        if finalizers.is_empty() && !deferred {
            // kube's store first writes the finalizers a delete changes; one that takes away
            // the last of them asks to delete now, and a dry run answers what that write's
            // update left untouched: the kind's empty object.
            if dry_run && held {
                return Ok(DeleteOutcome { object: self.emptied(), deleted: true });
            }
            let mut deleted = current;
            if !dry_run {
                let gone = self.store.delete(&key, rv).await.map_err(|e| self.store_error(e, name))?;
                // kube decodes the deleted object at the deletion's revision.
                meta::metadata_mut(&mut deleted)
                    .insert("resourceVersion".into(), Value::from(gone.revision.to_string()));
            }
            let object = if self.strategy.returns_deleted_object() { deleted } else { self.deleted_status(&deleted) };
            return Ok(DeleteOutcome { object, deleted: true });
        }
        let marked_only = |object| Ok(DeleteOutcome { object, deleted: false });
        let already_marked = meta::deletion_timestamp(&current).is_some();
        // kube's generic store marks an object with pending finalizers as deleting on every
        // DELETE, zeroing its grace period: a CRD's own first DELETE leaves that field out,
        // a second one writes it.
        let ungraced = current.pointer("/metadata/deletionGracePeriodSeconds").is_none();
        let regrace =
            already_marked && !finalizers.is_empty() && ungraced && self.strategy.marks_pending_deletion_again();
        if already_marked && !changed && !regrace {
            return marked_only(current);
        }
        let mut marked = current.clone();
        if changed {
            meta::set_finalizers(&mut marked, &finalizers);
        }
        if already_marked {
            // The generic store marks it again (kube's `markAsDeleting`): no grace period.
            meta::metadata_mut(&mut marked).insert("deletionGracePeriodSeconds".into(), Value::from(0));
        } else {
            self.strategy.prepare_for_deletion(&mut marked, self.now);
        }
        // A dry run answers the object as it would be marked, as kube's does.
        if dry_run {
            return marked_only(marked);
        }
        let kv = self.store.update(&key, self.stored(&marked)?, rv).await.map_err(|e| self.store_error(e, name))?;
        marked_only(self.read(&kv)?)
    }

    /// The kind's empty object as kube encodes it: a typed kind's zero struct, whose
    /// metadata always holds its `creationTimestamp`; a custom resource's type alone.
    fn emptied(&self) -> Value {
        let mut empty = self.strategy.zero_object();
        if !self.strategy.unstructured()
            && let Some(map) = empty.as_object_mut()
        {
            map.insert("metadata".into(), json!({"creationTimestamp": null}));
        }
        empty
    }

    /// What kube answers for an object deleted at once: a `Success` Status naming it.
    fn deleted_status(&self, obj: &Value) -> Value {
        let info = self.info();
        let mut details = serde_json::Map::new();
        details.insert("name".into(), Value::from(meta::name(obj).unwrap_or_default()));
        if !info.group.is_empty() {
            details.insert("group".into(), Value::from(info.group.clone()));
        }
        details.insert("kind".into(), Value::from(info.plural.clone()));
        if let Some(uid) = meta::uid(obj) {
            details.insert("uid".into(), Value::from(uid));
        }
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
    }

    /// `DeleteOptions.preconditions`: 409 when the object is not the one the client meant,
    /// worded as kube's `BeforeDelete`, which names the kind rather than the resource.
    fn check_delete_preconditions(&self, name: &str, current: &Value, delete: &DeleteOptions) -> Result<(), ApiError> {
        let info = self.info();
        if self.strategy.own_delete_preconditions() {
            return own_preconditions(&GroupResource::new(&info.group, &info.plural), name, current, delete);
        }
        let failed = |why: String| ApiError::conflict(&GroupResource::new(&info.group, &info.kind), name, &why);
        if let Some(want) = &delete.precondition_uid {
            let have = meta::uid(current).unwrap_or_default();
            if want != have {
                return Err(failed(format!(
                    "the UID in the precondition ({want}) does not match the UID in record ({have}). The object might have been deleted and then recreated"
                )));
            }
        }
        if let Some(want) = &delete.precondition_rv {
            let have = meta::resource_version(current).unwrap_or_default();
            if want != have {
                return Err(failed(format!(
                    "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({have}). The object might have been modified"
                )));
            }
        }
        Ok(())
    }

    /// DELETE a collection as kube's `Store.DeleteCollection` does: list (a page of
    /// `limit` when the client gives one, else every page of [`DELETE_COLLECTION_PAGE`]),
    /// delete each listed object on its own, and answer the list as it was read — the
    /// objects before their deletion, with the first page's metadata (`continue` and
    /// `remainingItemCount` included when the client's limit left some).
    pub async fn delete_collection(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
        delete: &DeleteOptions,
        opts: &WriteOptions,
    ) -> Result<Value, ApiError> {
        let client_limit = q.limit.filter(|l| *l > 0);
        let mut page_query = ListQuery { limit: Some(client_limit.unwrap_or(DELETE_COLLECTION_PAGE)), ..q.clone() };
        let mut answer: Option<Value> = None;
        let mut listed = Vec::new();
        loop {
            let page = self.list(namespace, &page_query).await?;
            let items = page.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
            for item in &items {
                let name = meta::name(item).unwrap_or_default().to_string();
                let ns = meta::namespace(item).map(String::from);
                match self.delete(ns.as_deref(), &name, delete, opts).await {
                    Ok(_) => {}
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e),
                }
            }
            listed.extend(items);
            let next = page["metadata"]["continue"].as_str().filter(|c| !c.is_empty()).map(String::from);
            let first = answer.get_or_insert(page);
            match next {
                Some(token) if client_limit.is_none() => page_query.continue_token = Some(token),
                _ => {
                    // A typed list's items carry no apiVersion and kind (see
                    // `KindNames::typed`); the engine's own readers of `list` want them.
                    if !self.strategy.unstructured() {
                        for item in listed.iter_mut().filter_map(Value::as_object_mut) {
                            item.remove("apiVersion");
                            item.remove("kind");
                        }
                    }
                    first["items"] = Value::Array(listed);
                    let mut list = answer.unwrap_or_default();
                    // An unstructured list (a custom resource's) always has its `continue`.
                    if self.strategy.unstructured()
                        && let Some(list_meta) = list.get_mut("metadata").and_then(Value::as_object_mut)
                    {
                        list_meta.entry("continue").or_insert_with(|| Value::from(""));
                    }
                    return Ok(list);
                }
            }
        }
    }
}

/// The preconditions as kube's namespace and CRD REST check them before their own delete:
/// in their words, naming the resource.
fn own_preconditions(
    resource: &GroupResource,
    name: &str,
    current: &Value,
    delete: &DeleteOptions,
) -> Result<(), ApiError> {
    let failed = |field: &str, want: &str, have: &str| {
        let why = format!("Precondition failed: {field} in precondition: {want}, {field} in object meta: {have}");
        ApiError::conflict(resource, name, &why)
    };
    if let Some(want) = &delete.precondition_uid {
        let have = meta::uid(current).unwrap_or_default();
        if want != have {
            return Err(failed("UID", want, have));
        }
    }
    if let Some(want) = &delete.precondition_rv {
        let have = meta::resource_version(current).unwrap_or_default();
        if want != have {
            return Err(failed("ResourceVersion", want, have));
        }
    }
    Ok(())
}

/// kube's `deletionFinalizersForGarbageCollection`: the finalizers a delete leaves, when it
/// changes them. The policy asked for wins over the `orphan` or `foregroundDeletion`
/// finalizer the object holds, which wins over the kind's default (background, which
/// needs none): both are removed, and the one the outcome needs is appended, so a
/// Background delete of an object held only by `orphan` deletes it at once.
pub fn deletion_finalizers(stored: &[String], propagation: Option<Propagation>) -> Option<Vec<String>> {
    let held = stored.iter().find_map(|f| match f.as_str() {
        ORPHAN_FINALIZER => Some(Propagation::Orphan),
        FOREGROUND_FINALIZER => Some(Propagation::Foreground),
        _ => None,
    });
    let policy_finalizer = match propagation.or(held) {
        Some(Propagation::Orphan) => Some(ORPHAN_FINALIZER),
        Some(Propagation::Foreground) => Some(FOREGROUND_FINALIZER),
        Some(Propagation::Background) | None => None,
    };
    let mut finalizers: Vec<String> =
        stored.iter().filter(|f| *f != ORPHAN_FINALIZER && *f != FOREGROUND_FINALIZER).cloned().collect();
    finalizers.extend(policy_finalizer.map(String::from));
    let set = |list: &[String]| list.iter().cloned().collect::<std::collections::BTreeSet<String>>();
    (set(stored) != set(&finalizers)).then_some(finalizers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fins(list: &[&str]) -> Vec<String> {
        list.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn a_delete_swaps_the_policy_finalizers_as_kube_does() {
        let (o, f, b) = (Some(Propagation::Orphan), Some(Propagation::Foreground), Some(Propagation::Background));
        // Added after the others; none for background.
        assert_eq!(deletion_finalizers(&fins(&["a"]), o), Some(fins(&["a", "orphan"])));
        assert_eq!(deletion_finalizers(&fins(&["a"]), b), None);
        assert_eq!(deletion_finalizers(&fins(&[]), None), None);
        // The policy asked for replaces the one held.
        assert_eq!(deletion_finalizers(&fins(&["foregroundDeletion", "a"]), o), Some(fins(&["a", "orphan"])));
        assert_eq!(deletion_finalizers(&fins(&["orphan"]), b), Some(fins(&[])));
        assert_eq!(deletion_finalizers(&fins(&["orphan", "a"]), f), Some(fins(&["a", "foregroundDeletion"])));
        // Without a policy, the one held stays where it is.
        assert_eq!(deletion_finalizers(&fins(&["orphan", "a"]), None), None);
        assert_eq!(deletion_finalizers(&fins(&["foregroundDeletion", "a"]), f), None);
    }
}
