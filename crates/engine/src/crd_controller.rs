//! The CRD controllers as one thin loop: read, decide (pure, in `registry`), write.
//!
//! After every change to any CRD it makes one pass over all of them, oldest first (so
//! the first registration keeps a contested name): add the cleanup finalizer; settle
//! accepted names, `NamesAccepted` and `Established`; for a CRD being deleted, mark it
//! `Terminating`, delete its custom resources, then drop the finalizer so it goes; and
//! publish what each CRD serves to the routing table, ahead of the write that announces
//! it (`Established`, or the CRD gone), so whoever sees the announcement finds the routes
//! already changed. A pass that writes triggers the next one through the watch, so the
//! state converges; a restart resumes unfinished clean-ups because the pass starts from
//! what is stored.
//!
//! With several replicas on one etcd ([`Replicas`]) every replica publishes, but only the
//! leader writes; a newly accepted CRD stays `Established=False/Installing` (and routed)
//! until every live replica reports serving it, and the leader's pass re-runs when one does.

use crate::coordination::{Replicas, Reports};
use crate::kinds::{CUSTOM_VERBS, Kinds, ServedKind};
use crate::meta;
use crate::registry::conditions::{self, ESTABLISHED, NAMES_ACCEPTED, TERMINATING};
use crate::registry::names;
use crate::resources::builtin::storage_version_hash;
use crate::resources::crds::{CLEANUP_FINALIZER, CrdStrategy};
use crate::resources::custom::CustomResourceStrategy;
use crate::resources::generate_name::RANDOM;
use crate::resources::rest::{ListQuery, Rest, Subresource, WriteOptions};
use crate::resources::scale::ScalePaths;
use crate::resources::{ResourceInfo, Strategy};
use crate::store::{KeyValue, ListOptions, Revision, Store, StoreError};
use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// How often the leader looks again at the replicas' reports while a CRD installs, should
/// a report's change have been missed (etcd unreadable when it came).
const INSTALL_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs the loop until the store closes. `passed` is told after each pass the revision up
/// to which CRDs were read and their kinds published: after the first one, an engine
/// opened over existing data serves them; after a CRD write, its change is served once
/// `passed` reaches the write's revision. Only the leader of `replicas` writes.
pub async fn run(
    store: Arc<dyn Store>,
    kinds: Arc<Kinds>,
    passed: tokio::sync::watch::Sender<Option<Revision>>,
    replicas: Replicas,
) {
    let strategy = CrdStrategy::default();
    let prefix = strategy.info().prefix();
    let mut leading = replicas.leading();
    let mut decoded = Decoded::default();
    loop {
        let from = match store.current_revision().await {
            Ok(from) => from,
            Err(StoreError::Closed) => return,
            // etcd is down: the pass waits for it to be back.
            Err(_) => {
                tokio::time::sleep(crate::store::RETRY_PAUSE).await;
                continue;
            }
        };
        let leader = leading.borrow_and_update().then_some(&replicas);
        let waiting = match pass(store.as_ref(), &strategy, &kinds, leader, &mut decoded).await {
            Ok(waiting) => waiting,
            Err(e) => {
                tracing::warn!("CRD controller pass: {e}");
                Waiting::default()
            }
        };
        passed.send_replace(Some(from));
        replicas.report_served(from);
        // Wait for the next relevant change after the state this pass read: any CRD
        // change, or, while a clean-up waits on finalizers, any custom resource change.
        let mut changes = match store.watch("/registry/", from).await {
            Ok(changes) => changes,
            Err(StoreError::Closed) => return,
            // More was written while the pass ran than the history holds (a burst of large
            // CRDs: 2,000 of 40 KiB outgrow its 64 MiB). Nothing is lost, since a pass reads
            // everything afresh; returning here left every later CRD unestablished for good.
            Err(StoreError::Expired { .. }) => continue,
            Err(_) => {
                tokio::time::sleep(crate::store::RETRY_PAUSE).await;
                continue;
            }
        };
        // Set once: a stream of other changes must not keep putting it off.
        let recheck = tokio::time::sleep(INSTALL_RECHECK);
        tokio::pin!(recheck);
        loop {
            tokio::select! {
                change = changes.next() => match change {
                    Some(Ok(e)) if waiting.cleaning || e.key.starts_with(&prefix) => break,
                    // Another replica serves more: an installing CRD may be established.
                    Some(Ok(e)) if waiting.installing && replicas.is_others_report(&e.key) => break,
                    Some(Ok(_)) => {}
                    Some(Err(_)) => break,
                    None => return,
                },
                // Coming to lead, or ceasing to: the next pass writes, or only publishes.
                Ok(()) = leading.changed() => break,
                // The replicas' reports could not be read: look again.
                _ = &mut recheck, if waiting.installing => break,
            }
        }
    }
}

/// What a pass left to wait for.
#[derive(Debug, Default, Clone, Copy)]
struct Waiting {
    /// A clean-up is under way (custom resources with finalizers of their own).
    cleaning: bool,
    /// A CRD is installing: not every replica serves it yet.
    installing: bool,
}

/// The CRDs as the last pass decoded them, by store key, with the revision each was read
/// at. A pass decodes only the CRDs written since: decoding all 2,000 of a large set on
/// every pass took seconds and gigabytes. The copies kept are [`light`] and shared with the
/// pass (copying 2,000 of them was most of a pass, which every CRD write waits for);
/// publishing reads the schemas from the stored bytes, and only when the CRD changed.
#[derive(Default)]
struct Decoded {
    by_key: HashMap<String, (Revision, Arc<CustomResourceDefinition>)>,
}

impl Decoded {
    /// The CRD stored as `kv`, from the last pass when it is unchanged since.
    fn get(&mut self, kv: &KeyValue) -> Option<Arc<CustomResourceDefinition>> {
        if let Some((revision, crd)) = self.by_key.get(&kv.key)
            && *revision == kv.mod_revision
        {
            return Some(Arc::clone(crd));
        }
        let crd = Arc::new(light(decode(kv)?));
        self.by_key.insert(kv.key.clone(), (kv.mod_revision, Arc::clone(&crd)));
        Some(crd)
    }

    /// Notes the CRD this pass wrote at `revision`, so the next pass does not decode it.
    fn wrote(&mut self, key: &str, revision: Revision, crd: &Arc<CustomResourceDefinition>) {
        self.by_key.insert(key.to_string(), (revision, Arc::clone(crd)));
    }
}

/// The CRD stored as `kv`, whole, at its revision.
fn decode(kv: &KeyValue) -> Option<CustomResourceDefinition> {
    let mut crd: CustomResourceDefinition = serde_json::from_slice(&kv.value).ok()?;
    crd.metadata.resource_version = Some(kv.mod_revision.to_string());
    Some(crd)
}

/// What names decisions and clean-ups read of a CRD: it leaves out the versions' schemas,
/// the managed fields (which mirror the spec's shape) and the annotations (`kubectl apply`
/// keeps a copy of the whole CRD in one), which together are nearly all of its bytes.
fn light(mut crd: CustomResourceDefinition) -> CustomResourceDefinition {
    for v in &mut crd.spec.versions {
        v.schema = None;
    }
    crd.metadata.managed_fields = None;
    crd.metadata.annotations = None;
    crd
}

/// One pass: publishes every CRD; the leader (`Some`) also writes what they need.
async fn pass(
    store: &dyn Store,
    strategy: &CrdStrategy,
    kinds: &Kinds,
    leader: Option<&Replicas>,
    decoded: &mut Decoded,
) -> Result<Waiting, crate::status::ApiError> {
    let rest = Rest { store, strategy, now: Timestamp::now(), scale: None, names: &RANDOM };
    let list = rest.list_raw(None, &ListQuery::default()).await?;
    let served_since = store.current_revision().await.unwrap_or(0);
    let present: HashSet<&str> = list.items.iter().map(|kv| kv.key.as_str()).collect();
    decoded.by_key.retain(|key, _| present.contains(key.as_str()));
    let mut crds: Vec<(Arc<CustomResourceDefinition>, &KeyValue)> =
        list.items.iter().filter_map(|kv| Some((decoded.get(kv)?, kv))).collect();
    // Creation order: the store's create revision is not in the object, so use creationTimestamp then name.
    crds.sort_by(|(a, _), (b, _)| {
        let ka = (&a.metadata.creation_timestamp, &a.metadata.name);
        let kb = (&b.metadata.creation_timestamp, &b.metadata.name);
        ka.cmp(&kb)
    });
    let (mut crds, kvs): (Vec<Arc<CustomResourceDefinition>>, Vec<&KeyValue>) = crds.into_iter().unzip();
    let mut waiting = Waiting::default();
    let mut reports = leader.map(Replicas::reports);
    for i in 0..crds.len() {
        let name = crds[i].metadata.name.clone().unwrap_or_default();
        let kv = kvs[i];
        let Some(reports) = reports.as_mut() else {
            publish_stored(kinds, &name, kv, served_since);
            continue;
        };
        if crds[i].metadata.deletion_timestamp.is_some() {
            publish_stored(kinds, &name, kv, served_since);
            clean_up(&rest, kinds, &crds[i], &meta::from_stored(kv)).await?;
            waiting.cleaning = true;
            continue;
        }
        // The whole list as the others: `sync_names` skips the CRD's own entry, and cloning
        // every other CRD for each one was quadratic in the CRDs' size.
        let mut decided = names::sync_names(&crds[i], &crds, rest.now);
        if let Some(status) = decided.as_mut() {
            hold_until_served(status, &crds[i], reports, rest.now).await;
        } else if installing(&crds[i]) {
            decided = establish_once_served(&crds[i], reports, rest.now).await;
        }
        if let Some(status) = decided {
            waiting.installing |= installs(&status);
            let mut updated = meta::from_stored(kv);
            if let Some(map) = updated.as_object_mut() {
                map.insert("status".into(), serde_json::to_value(&status).unwrap_or(Value::Null));
            }
            // Serve first, then announce: whoever sees `Established` (a watch reports the
            // write before this call returns) must find the kind routed. Should the write
            // fail, the next pass publishes again from what is stored.
            let Some(whole) = decode(kv) else { continue };
            let announced = CustomResourceDefinition { status: Some(status.clone()), ..whole };
            publish(kinds, &name, &announced, served_since, Built::NotStored);
            let written = rest.update(None, &name, updated, Subresource::Status, &WriteOptions::internal()).await?;
            // What was published is what is stored now (the write was conditional on the
            // revision read): the next pass neither decodes nor rebuilds it.
            Arc::make_mut(&mut crds[i]).status = Some(status);
            if let Some(rv) = meta::resource_version(&written) {
                kinds.set_built_from(&name, Some(rv));
                // The names were written at this revision: an installing CRD waits for
                // every replica to serve at least that far.
                Arc::make_mut(&mut crds[i]).metadata.resource_version = Some(rv.to_string());
                if let Ok(revision) = rv.parse() {
                    decoded.wrote(&kv.key, revision, &crds[i]);
                }
            }
            // The CRDs after this one decide against the names it now holds, as the pass
            // its write triggers would: one pass settles a whole burst of new CRDs rather
            // than one pass (a list of every CRD) per new CRD.
            continue;
        }
        waiting.installing |= installing(&crds[i]);
        publish_stored(kinds, &name, kv, served_since);
    }
    // CRDs that are gone serve nothing.
    let names: HashSet<&str> = crds.iter().filter_map(|c| c.metadata.name.as_deref()).collect();
    for served in kinds.custom_names() {
        if !names.contains(served.as_str()) {
            kinds.set_custom(&served, Vec::new());
        }
    }
    Ok(waiting)
}

/// Whether a CRD's names are accepted and it waits for every replica to serve them.
fn installing(crd: &CustomResourceDefinition) -> bool {
    crd.status.as_ref().is_some_and(installs)
}

fn installs(status: &CustomResourceDefinitionStatus) -> bool {
    let conditions = status.conditions.as_deref().unwrap_or_default();
    conditions::find_condition(conditions, ESTABLISHED)
        .is_some_and(|c| c.reason.as_deref() == Some(conditions::reason::INSTALLING))
        && conditions::find_condition(conditions, NAMES_ACCEPTED).is_some_and(|c| c.status == conditions::STATUS_TRUE)
}

/// A CRD about to be established while other replicas run is `Installing` instead: none
/// of them serves the names it is being given yet.
async fn hold_until_served(
    status: &mut CustomResourceDefinitionStatus,
    crd: &CustomResourceDefinition,
    reports: &mut Reports<'_>,
    now: Timestamp,
) {
    let was = conditions::is_crd_condition_true(crd, ESTABLISHED);
    let becomes = conditions::find_condition(status.conditions.as_deref().unwrap_or_default(), ESTABLISHED)
        .is_some_and(|c| c.status == conditions::STATUS_TRUE);
    if was || !becomes || reports.all_serve(Revision::MAX).await {
        return;
    }
    let held = conditions::condition(
        ESTABLISHED,
        conditions::STATUS_FALSE,
        conditions::reason::INSTALLING,
        conditions::message::INITIAL_NAMES_ACCEPTED,
    );
    conditions::set_status_condition(status, held, now);
}

/// The status establishing an installing CRD, once every other live replica serves it as
/// stored (its names were written at its resourceVersion).
async fn establish_once_served(
    crd: &CustomResourceDefinition,
    reports: &mut Reports<'_>,
    now: Timestamp,
) -> Option<CustomResourceDefinitionStatus> {
    let written = crd.metadata.resource_version.as_deref()?.parse::<Revision>().ok()?;
    if !reports.all_serve(written).await {
        return None;
    }
    let mut status = crd.status.clone()?;
    let established = conditions::condition(
        ESTABLISHED,
        conditions::STATUS_TRUE,
        conditions::reason::INITIAL_NAMES_ACCEPTED,
        conditions::message::INITIAL_NAMES_ACCEPTED,
    );
    conditions::set_status_condition(&mut status, established, now);
    Some(status)
}

/// Publishes the CRD stored as `kv` unless its kinds were built from that very revision
/// (decoding it whole only then).
fn publish_stored(kinds: &Kinds, name: &str, kv: &KeyValue, since: u64) {
    if kinds.built_from(name, &kv.mod_revision.to_string()) {
        return;
    }
    if let Some(crd) = decode(kv) {
        publish(kinds, name, &crd, since, Built::Stored);
    }
}

/// Whether a CRD about to be published is the one stored at its resourceVersion.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Built {
    Stored,
    /// With a status not written yet: its resourceVersion does not say what it holds.
    NotStored,
}

/// Routes what `crd` serves (as terminating once it is being deleted), with its Table
/// layouts, first served at `since` — unless they were built from this very CRD already
/// (an unchanged CRD in a later pass, or in an engine forked with its kinds), since
/// building them compiles the schemas and CEL rules of every version.
fn publish(kinds: &Kinds, name: &str, crd: &CustomResourceDefinition, since: u64, built: Built) {
    let rv = crd.metadata.resource_version.as_deref().filter(|_| built == Built::Stored);
    if rv.is_some_and(|rv| kinds.built_from(name, rv)) {
        return;
    }
    kinds.set_custom(name, served_kinds(crd, crd.metadata.deletion_timestamp.is_some()));
    kinds.set_tables(name, printer_tables(crd, since));
    kinds.set_built_from(name, rv);
}

/// The Table layout of each served version: its `additionalPrinterColumns`.
fn printer_tables(crd: &CustomResourceDefinition, since: u64) -> Vec<crate::kinds::CustomTable> {
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    crd.spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| crate::kinds::CustomTable {
            group: crd.spec.group.clone(),
            version: v.name.clone(),
            plural: plural.clone(),
            convertor: Arc::new(crate::representation::table::TableConvertor::custom_resource(
                v.additional_printer_columns.as_deref().unwrap_or_default(),
            )),
            since,
        })
        .collect()
}

/// The kinds an established CRD serves: one per served version. An installing one is served
/// too (as kube serves a CRD from `NamesAccepted`): `Established` announces it once every
/// replica does.
fn served_kinds(crd: &CustomResourceDefinition, terminating: bool) -> Vec<ServedKind> {
    if !conditions::is_crd_condition_true(crd, ESTABLISHED) && !installing(crd) {
        return Vec::new();
    }
    // Every served version lists the hash of the storage version (references 05 and 13).
    let kind = crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.kind.clone()).unwrap_or_default();
    let hash =
        crd.spec.versions.iter().find(|v| v.storage).map(|v| storage_version_hash(&crd.spec.group, &v.name, &kind));
    crd.spec
        .versions
        .iter()
        .filter(|v| v.served)
        .map(|v| ServedKind {
            strategy: Arc::new(CustomResourceStrategy::new(crd, v)),
            verbs: CUSTOM_VERBS.to_vec(),
            scale: v.subresources.as_ref().and_then(|s| s.scale.as_ref()).map(ScalePaths::from_crd),
            storage_version_hash: hash.clone(),
            terminating,
            installing: installing(crd),
            deprecation_warning: deprecation_warning(crd, v),
        })
        .collect()
}

/// The warning kube-apiserver sends with every answer at a deprecated version: the CRD's
/// own, or `<group>/<version> <Kind> is deprecated`.
fn deprecation_warning(crd: &CustomResourceDefinition, version: &CustomResourceDefinitionVersion) -> Option<String> {
    if !version.deprecated.unwrap_or(false) {
        return None;
    }
    Some(
        version
            .deprecation_warning
            .clone()
            .unwrap_or_else(|| format!("{}/{} {} is deprecated", crd.spec.group, version.name, crd.spec.names.kind)),
    )
}

/// Deletion: `Terminating`, every custom resource deleted, then the finalizer dropped.
async fn clean_up(
    rest: &Rest<'_>,
    kinds: &Kinds,
    crd: &CustomResourceDefinition,
    obj: &Value,
) -> Result<(), crate::status::ApiError> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let in_progress = conditions::find_condition(conditions::crd_conditions(crd), TERMINATING).is_some_and(|c| {
        c.status == conditions::STATUS_TRUE
            && c.reason.as_deref() == Some(conditions::reason::INSTANCE_DELETION_IN_PROGRESS)
    });
    if !in_progress {
        let mut status = crd.status.clone().unwrap_or_default();
        conditions::set_status_condition(
            &mut status,
            conditions::condition(
                TERMINATING,
                conditions::STATUS_TRUE,
                conditions::reason::INSTANCE_DELETION_IN_PROGRESS,
                conditions::message::INSTANCE_DELETION_IN_PROGRESS,
            ),
            rest.now,
        );
        let mut updated = obj.clone();
        if let Some(map) = updated.as_object_mut() {
            map.insert("status".into(), serde_json::to_value(&status).unwrap_or(Value::Null));
        }
        rest.update(None, &name, updated, Subresource::Status, &WriteOptions::internal()).await?;
        return Ok(());
    }
    let plural =
        crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).map(|n| n.plural.clone()).unwrap_or_default();
    let mut remaining = 0;
    if !plural.is_empty() {
        let prefix = ResourceInfo::store_prefix(&crd.spec.group, &plural);
        let page = rest
            .store
            .list(&prefix, &ListOptions::default())
            .await
            .map_err(|e| crate::status::ApiError::internal(e.to_string()))?;
        for kv in page.items {
            let mut cr = meta::from_stored(&kv);
            if meta::finalizers(&cr).is_empty() {
                let _ = rest.store.delete(&kv.key, Some(kv.mod_revision)).await;
            } else {
                remaining += 1;
                if meta::deletion_timestamp(&cr).is_none() {
                    meta::mark_as_deleting(&mut cr, rest.now);
                    let _ = rest.store.update(&kv.key, meta::to_stored(&cr), Some(kv.mod_revision)).await;
                }
            }
        }
    }
    if remaining > 0 {
        // Objects held by their own finalizers; their removal triggers another pass.
        return Ok(());
    }
    let mut done = obj.clone();
    let fins: Vec<String> = meta::finalizers(obj).into_iter().filter(|f| f != CLEANUP_FINALIZER).collect();
    meta::set_finalizers(&mut done, &fins);
    if fins.is_empty() {
        // This write deletes the CRD: stop serving first, so whoever sees it gone finds
        // its kinds gone too. Should the write fail, the next pass serves them again.
        kinds.set_custom(&name, Vec::new());
    }
    rest.update(None, &name, done, Subresource::Main, &WriteOptions::internal()).await?;
    Ok(())
}
