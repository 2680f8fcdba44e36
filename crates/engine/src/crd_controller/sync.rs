//! One round of the controller over the queued CRDs, oldest first: the leader decides
//! names and conditions (pure, in `registry::names`), runs clean-ups, publishes, then writes
//! the decided statuses together; another replica only publishes.

use super::cache::{Cache, installing};
use super::clean_up::{Step, clean_up};
use super::publish::{Built, publish, publish_stored};
use crate::coordination::{Replicas, Reports};
use crate::kinds::Kinds;
use crate::meta;
use crate::registry::conditions::{self, ESTABLISHED};
use crate::registry::names;
use crate::resources::crds::CrdStrategy;
use crate::resources::custom::SchemaSource;
use crate::resources::generate_name::RANDOM;
use crate::resources::rest::{Held, Rest, Subresource, WriteOptions};
use crate::store::{Revision, Store};
use futures::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionStatus,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

/// How many status writes of one round are in flight at once: each waits for its commit,
/// and the store commits those that wait together as one (written one by one, 2,000 new
/// CRDs waited for 2,000 commits in turn).
const WRITES_IN_FLIGHT: usize = 64;

/// What a round left to do.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Left {
    /// A write failed: the CRDs concerned are queued again, to be retried after a pause.
    pub retry: bool,
}

/// A status decided for a CRD, to be written.
struct Decided {
    name: String,
    /// The revision the status was decided from.
    from: Revision,
    /// The object stored at `from`: the write sends it with `status`, and the update takes
    /// it for the stored object rather than parsing the bytes again.
    stored: Value,
    status: Value,
}

/// Looks at every queued CRD: publishes it and, on the leader (`Some`), writes what it
/// needs.
pub(super) async fn round(
    store: &dyn Store,
    strategy: &CrdStrategy,
    kinds: &Kinds,
    leader: Option<&Replicas>,
    cache: &mut Cache,
) -> Left {
    let rest = Rest {
        store,
        strategy,
        now: Timestamp::now(),
        scale: None,
        names: &RANDOM,
        admission: &crate::resources::admit::NoAdmission,
    };
    let since = store.current_revision().await.unwrap_or(0);
    let queued = cache.take_queue();
    let mut left = Left::default();
    let Some(replicas) = leader else {
        for name in &queued {
            if let Some(held) = cache.get(name) {
                publish_stored(kinds, name, &held.kv, since);
            }
        }
        return left;
    };
    let mut reports = replicas.reports();
    let mut decided = Vec::new();
    for name in queued {
        let Some(held) = cache.get(&name) else { continue };
        let (crd, kv) = (std::sync::Arc::clone(&held.crd), held.kv.clone());
        // Like kube's naming controller, names are settled for a CRD being deleted too (it
        // may take a name another let go); its clean-up goes on once they are.
        let status = decide(&crd, &cache.group(&crd.spec.group), &mut reports, rest.now).await;
        if status.is_none() && crd.metadata.deletion_timestamp.is_some() {
            publish_stored(kinds, &name, &kv, since);
            match clean_up(&rest, kinds, &crd, &meta::from_stored(&kv)).await {
                Ok(Step::WroteCrd) => cache.wrote(&name, None, false),
                Ok(Step::Waiting) => {}
                Err(e) => {
                    tracing::warn!("CRD controller: cleaning up {name}: {e}");
                    cache.queue(&name);
                    left.retry = true;
                }
            }
            continue;
        }
        let Some(status) = status else {
            publish_stored(kinds, &name, &kv, since);
            continue;
        };
        // Serve first, then announce: whoever sees `Established` (a watch reports the
        // write before the write returns) must find the kind routed. The stored bytes are
        // parsed once, for the write to send; the CRD published is the cache's, which left
        // out the schemas, and its schemas are read from that JSON (the cache holds only
        // CRDs that decoded whole), typed only when a kind is first used.
        let stored = meta::from_stored(&kv);
        let announced = CustomResourceDefinition { status: Some(status.clone()), ..(*crd).clone() };
        publish(kinds, &name, &announced, since, Built::NotStored, SchemaSource::Stored(&stored));
        let status_json = serde_json::to_value(&status).unwrap_or(Value::Null);
        // The CRDs after this one decide against the names it now holds, as a later round
        // would after its write.
        cache.decide(&name, status);
        decided.push(Decided { name, from: kv.mod_revision, stored, status: status_json });
    }
    let rest = &rest;
    let mut writes = futures::stream::iter(decided)
        .map(|d| async move {
            // Copied when sent, not when decided: a burst decides thousands at once.
            let mut updated = d.stored.clone();
            if let Some(map) = updated.as_object_mut() {
                map.insert("status".into(), d.status);
            }
            let held = Held { object: &d.stored, revision: d.from };
            let opts = WriteOptions::internal();
            let written = rest.update_held(None, &d.name, updated, held, Subresource::Status, &opts).await;
            (d.name, d.from, written)
        })
        .buffer_unordered(WRITES_IN_FLIGHT);
    while let Some((name, from, written)) = writes.next().await {
        match written {
            // Nothing to write after all (the strategy kept what was stored): no event
            // will come, so the CRD must not wait for one.
            Ok(written) if meta::resource_version(&written).and_then(|rv| rv.parse().ok()) == Some(from) => {
                kinds.set_built_from(&name, None);
                cache.reload(&name, false);
            }
            Ok(written) => {
                let rv = meta::resource_version(&written);
                // What was published is what is stored now (the write was conditional on
                // the revision read): nothing is decoded or rebuilt when the watch brings it.
                kinds.set_built_from(&name, rv);
                cache.wrote(&name, rv.and_then(|rv| rv.parse::<Revision>().ok()), true);
            }
            Err(e) => {
                // Another writer came first (its change will queue the CRD), or the store
                // failed: either way, decide again from what is stored.
                if e.code != 409 {
                    tracing::warn!("CRD controller: writing the status of {name}: {e}");
                    left.retry = true;
                }
                kinds.set_built_from(&name, None);
                cache.reload(&name, true);
            }
        }
    }
    left
}

/// The status `crd` needs, given the CRDs of its group, or `None` when it has it.
async fn decide(
    crd: &CustomResourceDefinition,
    group: &[std::sync::Arc<CustomResourceDefinition>],
    reports: &mut Reports<'_>,
    now: Timestamp,
) -> Option<CustomResourceDefinitionStatus> {
    match names::sync_names(crd, group, now) {
        Some(mut status) => {
            hold_until_served(&mut status, crd, reports, now).await;
            Some(status)
        }
        None if installing(crd) => establish_once_served(crd, reports, now).await,
        None => None,
    }
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
