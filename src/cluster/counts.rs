//! How many custom resources each CRD holds, without reading them.
//!
//! One request per CRD is unavoidable (the API has no count endpoint), so each is as small
//! as the API allows: a metadata-only list of `limit=1`, whose `metadata.remainingItemCount`
//! says how many more there are (kube-apiserver sets it whenever it cuts a list short and
//! no selector was given). Only a server that leaves it out is paged through, metadata only.
//! Counts run at most [`COUNT_CONCURRENCY`] at a time in the whole process (the TUI starts
//! counts from several places: the first list, the watch's new CRDs, the clock) and come
//! out as they are known ([`count_each`]), so a screen of 2,000 CRDs never waits on them.

use super::error::ClusterError;
use super::registrations::{Crd, Registration, list_crd_summaries, served_resource};
use futures::StreamExt;
use futures::stream::BoxStream;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};

/// How many count requests are in flight at once.
pub const COUNT_CONCURRENCY: usize = 8;
/// The permits for them, shared by every [`count_each`] stream.
static IN_FLIGHT: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(COUNT_CONCURRENCY);
/// Page size when a server gives no `remainingItemCount` and the list must be paged.
const COUNT_PAGE: u32 = 500;

/// How many custom resources a CRD holds in every namespace. `None` when the CRD serves no
/// endpoint yet.
pub async fn count_resources(client: &kube::Client, crd: &Crd) -> Result<Option<u64>, ClusterError> {
    match served_resource(crd) {
        Some(ar) => count_at(client, &ar).await.map(Some),
        None => Ok(None),
    }
}

/// How many objects the endpoint `ar` holds in every namespace.
async fn count_at(client: &kube::Client, ar: &ApiResource) -> Result<u64, ClusterError> {
    let api: Api<DynamicObject> = Api::all_with(client.clone(), ar);
    let mut params = ListParams::default().limit(1);
    let mut total = 0u64;
    loop {
        let page = api.list_metadata(&params).await.map_err(|e| ClusterError::from_kube(e, None))?;
        if let Some(n) = known_count(page.items.len(), &page.metadata) {
            return Ok(total + n);
        }
        total += page.items.len() as u64;
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = ListParams::default().limit(COUNT_PAGE).continue_token(&token),
            None => return Ok(total),
        }
    }
}

/// How many objects a page of `items` and the ones after it hold, when its metadata says:
/// `remainingItemCount` more, or none when the list is complete. `None`: the server left
/// the count out of an incomplete list (kube does when a selector applies).
pub fn known_count(items: usize, meta: &kube::api::ListMeta) -> Option<u64> {
    match meta.remaining_item_count {
        Some(remaining) => Some(items as u64 + u64::try_from(remaining).unwrap_or(0)),
        None if meta.continue_.as_deref().is_none_or(str::is_empty) => Some(items as u64),
        None => None,
    }
}

/// What counting one CRD's resources needs: its name and its endpoint (not the CRD, which
/// may be large and would be copied for nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct CountTarget {
    pub crd: String,
    pub endpoint: ApiResource,
}

impl CountTarget {
    /// The target of `crd`, if it serves resources to count.
    pub fn of(crd: &Crd) -> Option<CountTarget> {
        Some(CountTarget { crd: crd.metadata.name.clone().unwrap_or_default(), endpoint: served_resource(crd)? })
    }
}

/// Counts the resources of each target, [`COUNT_CONCURRENCY`] at a time at most, yielding
/// `(CRD name, count)` as each is known (in no particular order); a count that fails is
/// `None`.
pub fn count_each(client: &kube::Client, targets: Vec<CountTarget>) -> BoxStream<'static, (String, Option<u64>)> {
    let client = client.clone();
    futures::stream::iter(targets)
        .map(move |target| {
            let client = client.clone();
            async move {
                // Never closed, so the permit always comes.
                let _permit = IN_FLIGHT.acquire().await.ok();
                (target.crd, count_at(&client, &target.endpoint).await.ok())
            }
        })
        .buffer_unordered(COUNT_CONCURRENCY)
        .boxed()
}

/// Every CRD, sorted by name, with how many custom resources it holds (`None` when they
/// cannot be counted).
pub async fn list_crds_with_counts(client: &kube::Client) -> Result<Vec<(Crd, Option<u64>)>, ClusterError> {
    let crds = list_crd_summaries(client).await?;
    let targets = crds.iter().filter_map(CountTarget::of).collect();
    let mut counts: std::collections::HashMap<String, Option<u64>> = count_each(client, targets).collect().await;
    Ok(crds
        .into_iter()
        .map(|crd| {
            let n = crd.metadata.name.as_ref().and_then(|name| counts.remove(name)).flatten();
            (crd, n)
        })
        .collect())
}

/// Every registration with its resource count.
pub async fn list_registrations(client: &kube::Client) -> Result<Vec<Registration>, ClusterError> {
    let crds = list_crds_with_counts(client).await?;
    Ok(crds.iter().map(|(crd, n)| Registration::from_crd(crd, *n)).collect())
}
