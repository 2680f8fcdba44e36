//! Several engines on one store: which one runs the controllers that must run once, and
//! whether every one serves a new CRD yet.
//!
//! On local storage the engine is alone: it always leads and nobody else needs to serve a
//! CRD. On etcd the replicas elect a leader through an etcd lease (see the store's
//! `Election`): only the leader writes CRD status (names, `Established`, the clean-up
//! finalizer) and runs the garbage collector and the namespace finalizer; every replica
//! publishes the CRDs it reads to its own routes and reports how far it got, and the leader
//! sets `Established` once every live replica serves the CRD (kube waits a fixed 5 s).

use crate::store::{Election, Revision};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::watch;

/// This engine among the engines of its store.
#[derive(Clone)]
pub enum Replicas {
    /// Local storage: the only engine; it leads for good.
    Alone(Arc<watch::Sender<bool>>),
    /// One of the replicas sharing an etcd.
    Etcd(Arc<Election>),
}

impl Replicas {
    /// The only engine of its store.
    pub fn alone() -> Self {
        Replicas::Alone(Arc::new(watch::channel(true).0))
    }

    /// Whether this engine leads, and its changes.
    pub fn leading(&self) -> watch::Receiver<bool> {
        match self {
            Replicas::Alone(leads) => leads.subscribe(),
            Replicas::Etcd(election) => election.leading(),
        }
    }

    /// Returns once [`Replicas::leading`] tells whether this engine leads: at once alone;
    /// on etcd, after its first campaign.
    pub async fn campaigned(&self) {
        if let Replicas::Etcd(election) = self {
            election.campaigned().await;
        }
    }

    /// Records that this engine serves the CRDs as stored at `revision`.
    pub fn report_served(&self, revision: Revision) {
        if let Replicas::Etcd(election) = self {
            election.report_served(revision);
        }
    }

    /// What the other engines report serving, read once for a whole pass.
    pub fn reports(&self) -> Reports<'_> {
        Reports { replicas: self, least: None }
    }

    /// Leaves the other engines (a graceful stop): on etcd, another replica leads at once.
    pub async fn resign(&self) {
        if let Replicas::Etcd(election) = self {
            election.resign().await;
        }
    }

    /// Whether `key` is another engine's report of what it serves.
    pub fn is_others_report(&self, key: &str) -> bool {
        match self {
            Replicas::Alone(_) => false,
            Replicas::Etcd(election) => key.starts_with(&election.heartbeats()) && key != election.heartbeat_key(),
        }
    }
}

/// The other engines' reports as one pass reads them: from etcd at the first question,
/// then as read (a pass may ask for every CRD it settles).
pub struct Reports<'a> {
    replicas: &'a Replicas,
    /// The least revision another engine serves: `Some(None)` when there is none.
    least: Option<Option<Revision>>,
}

impl Reports<'_> {
    /// Whether every other live engine serves the CRDs as stored at `revision`
    /// (`Revision::MAX`: whether there is no other engine). Unreadable reports say no.
    pub async fn all_serve(&mut self, revision: Revision) -> bool {
        let least = match (self.least, self.replicas) {
            (Some(least), _) => least,
            (None, Replicas::Alone(_)) => None,
            (None, Replicas::Etcd(election)) => election.least_served_by_others().await.unwrap_or(Some(0)),
        };
        self.least = Some(least);
        least.is_none_or(|least| least >= revision)
    }
}

/// Runs what `start` makes while this engine leads: started when it comes to lead, stopped
/// (dropped) when it stops, started afresh when it leads again.
pub async fn while_leading<F, Fut>(replicas: Replicas, mut start: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut leading = replicas.leading();
    loop {
        if leading.wait_for(|l| *l).await.is_err() {
            return;
        }
        tokio::select! {
            _ = start() => return,
            _ = leading.wait_for(|l| !*l) => tracing::info!("no longer leading: controllers stopped"),
        }
    }
}
