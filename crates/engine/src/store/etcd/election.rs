//! The replicas sharing one etcd: which of them leads (runs the controllers that must run
//! once), and what each one serves.
//!
//! Every replica holds one etcd lease with a TTL, kept alive every [`TICK`]. Two keys ride
//! on it, so etcd deletes both when the replica dies or loses etcd for the TTL:
//! - its heartbeat, recording the revision up to which its CRD controller serves the CRDs
//!   (what the leader waits for before it sets `Established`);
//! - while it leads, the leader key, taken with a "create if absent" transaction.
//!
//! etcd's TTL rather than a Lease object renewed by rewriting `renewTime` (client-go's way):
//! expiry is decided by etcd's clock alone, so no replica's clock skew can make two leaders,
//! a renewal writes nothing (no revision, no watch event for every replica every few
//! seconds), and a dead replica's heartbeat goes by itself. Both keys hold
//! `coordination.k8s.io/v1` Lease objects under the engine's key for Leases in
//! `kube-system`, so `kubectl get leases -n kube-system` shows who leads and who serves;
//! their `renewTime` is when the key was written, the renewals being etcd's.
//!
//! A leader that cannot reach etcd steps down once a third of the TTL is left since its
//! last keep-alive, before etcd can let another replica take over.

use super::super::{Revision, StoreError};
use super::Etcd;
use super::wire::{self, method};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// The Leases' namespace and the prefix of their keys.
const LEASES: &str = "/registry/coordination.k8s.io/leases/kube-system/";
/// The leader key's Lease.
pub const LEADER: &str = "kubectl-crd-controllers";
/// Every replica's heartbeat Lease is named this and a random suffix.
pub const HEARTBEAT: &str = "kubectl-crd-serve-";
/// The heartbeat's annotation: up to which revision the replica serves the CRDs.
pub const SERVED_ANNOTATION: &str = "kubectl-crd.io/crds-served-revision";
/// How often a replica renews its lease and tries to lead.
const TICK: Duration = Duration::from_secs(1);
/// How long a replica's lease may go unrenewed before the leader stops waiting for it to
/// serve a CRD: three missed renewals. With the CRD controller's 1 s recheck, a CRD created
/// after a replica was killed is Established within kube's fixed 5 s wait (3.1 s measured);
/// a replica merely slow to renew (a loaded machine) is still waited for.
const STALE_AFTER: Duration = Duration::from_secs(3);

/// This replica among those of one etcd; the election stops when it is dropped (its keys
/// then expire with its etcd lease).
pub struct Election {
    heartbeat_key: String,
    leading: watch::Receiver<bool>,
    /// Whether the first campaign has been decided (led or not).
    campaigned: watch::Receiver<bool>,
    served: watch::Sender<Revision>,
    /// The etcd lease held now.
    lease: watch::Receiver<Option<u64>>,
    etcd: Arc<Etcd>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Election {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Election {
    /// Joins the replicas of `etcd` with a lease of `ttl`.
    pub(super) fn start(etcd: Arc<Etcd>, ttl: Duration) -> Self {
        let suffix: String = crate::meta::new_uid().chars().filter(|c| *c != '-').take(10).collect();
        // kube's form (host, then a unique part), with the process id so that an operator
        // (or a test) finds the process that leads.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_else(|_| "serve".into());
        let identity = format!("{}_{}_{suffix}", host.trim(), std::process::id());
        let heartbeat_key = format!("{LEASES}{HEARTBEAT}{suffix}");
        let (leading_tx, leading) = watch::channel(false);
        let (campaigned_tx, campaigned) = watch::channel(false);
        let (served, served_rx) = watch::channel(0);
        let (lease_tx, lease) = watch::channel(None);
        let member = Member {
            lease: lease_tx,
            etcd: Arc::clone(&etcd),
            identity,
            heartbeat_key: heartbeat_key.clone(),
            ttl,
            leading: leading_tx,
            campaigned: campaigned_tx,
            served: served_rx,
        };
        let task = tokio::spawn(member.run());
        Election { heartbeat_key, leading, campaigned, served, lease, etcd, task }
    }

    /// Leaves the replicas at once (a graceful stop): the election stops and the etcd lease
    /// is revoked, so its keys go now rather than when the lease expires, and another
    /// replica takes over within a tick.
    pub async fn resign(&self) {
        self.task.abort();
        let Some(lease) = *self.lease.borrow() else { return };
        if let Err(e) = self.etcd.grpc.call::<wire::Ignored>(method::LEASE_REVOKE, &wire::LeaseId { id: lease }).await {
            tracing::debug!("election: revoke: {e}");
        }
    }

    /// Whether this replica leads now, and its changes.
    pub fn leading(&self) -> watch::Receiver<bool> {
        self.leading.clone()
    }

    /// Returns once the first campaign is decided, so [`Election::leading`] says whether
    /// this replica leads rather than that it has not asked yet (or never, should the
    /// election stop first).
    pub async fn campaigned(&self) {
        let _ = self.campaigned.clone().wait_for(|c| *c).await;
    }

    /// Records that this replica serves the CRDs as of `revision` (written to its heartbeat).
    pub fn report_served(&self, revision: Revision) {
        self.served.send_if_modified(|r| {
            let newer = revision > *r;
            if newer {
                *r = revision;
            }
            newer
        });
    }

    /// The least revision another live replica reports serving (`None`: no other replica).
    /// A replica whose etcd lease went unrenewed for [`STALE_AFTER`] counts as dead: killed
    /// without a word, its heartbeat would otherwise hold every new CRD `Installing` until
    /// etcd expires the lease, up to the whole TTL later (kube waits a fixed 5 s). Only the
    /// laggards' leases are asked about, least served first, until a live one answers.
    pub async fn least_served_by_others(&self) -> Result<Option<Revision>, StoreError> {
        let mut others = self.others().await?;
        others.sort_unstable_by_key(|o| o.served);
        for other in others {
            let left: wire::TimeToLive = (self.etcd.grpc)
                .call(method::LEASE_TIME_TO_LIVE, &wire::LeaseId { id: other.lease })
                .await
                .map_err(|e| super::store_error(e, 0))?;
            if renewed_lately(&left) {
                return Ok(Some(other.served));
            }
        }
        Ok(None)
    }

    /// The other replicas' heartbeats, with the etcd leases they ride on.
    async fn others(&self) -> Result<Vec<Other>, StoreError> {
        let prefix = self.etcd.keys.etcd_key(&self.heartbeats());
        let own = self.etcd.keys.etcd_key(&self.heartbeat_key);
        let r: wire::RangeResponse = (self.etcd.grpc)
            .call(method::RANGE, &wire::Range::prefix(prefix))
            .await
            .map_err(|e| super::store_error(e, 0))?;
        let pointer = format!("/metadata/annotations/{}", SERVED_ANNOTATION.replace('/', "~1"));
        Ok(r.kvs
            .into_iter()
            .filter(|kv| kv.key != own)
            .map(|kv| {
                let lease: Value = serde_json::from_slice(&kv.value).unwrap_or_default();
                let served = lease.pointer(&pointer).and_then(Value::as_str);
                Other { served: served.and_then(|s| s.parse::<Revision>().ok()).unwrap_or(0), lease: kv.lease }
            })
            .collect())
    }

    /// The prefix of the heartbeat keys (whose changes the leader waits on).
    pub fn heartbeats(&self) -> String {
        format!("{LEASES}{HEARTBEAT}")
    }

    /// This replica's heartbeat key.
    pub fn heartbeat_key(&self) -> &str {
        &self.heartbeat_key
    }
}

/// Another replica's heartbeat: what it serves, and the etcd lease that keeps it.
struct Other {
    served: Revision,
    lease: u64,
}

/// Whether a lease was renewed at most [`STALE_AFTER`] ago. etcd truncates the seconds
/// left: a lease renewed a moment ago has one less than granted, and one with fewer than
/// `granted - STALE_AFTER` left went unrenewed for longer.
fn renewed_lately(left: &wire::TimeToLive) -> bool {
    left.ttl > 0 && left.ttl >= left.granted_ttl - STALE_AFTER.as_secs() as i64
}

/// The election's loop and what it needs.
struct Member {
    etcd: Arc<Etcd>,
    identity: String,
    heartbeat_key: String,
    ttl: Duration,
    leading: watch::Sender<bool>,
    campaigned: watch::Sender<bool>,
    served: watch::Receiver<Revision>,
    lease: watch::Sender<Option<u64>>,
}

impl Member {
    async fn run(mut self) {
        // Until the election is dropped (it holds the other end of `served`).
        while self.served.has_changed().is_ok() {
            let lease = match self.grant().await {
                Ok(lease) => lease,
                Err(e) => {
                    tracing::debug!("election: no etcd lease: {e}");
                    tokio::time::sleep(crate::store::RETRY_PAUSE).await;
                    continue;
                }
            };
            self.lease.send_replace(Some(lease));
            self.hold(lease).await;
            self.leading.send_replace(false);
        }
    }

    /// Keeps `lease` alive, the heartbeat current and tries to lead, until the lease is lost.
    /// A report of what is served is written as it comes; the renewal and the campaign go
    /// every [`TICK`] whatever the reports (a stream of them must not starve the renewal).
    async fn hold(&mut self, lease: u64) {
        let mut renewed = Instant::now();
        let mut written: Option<Revision> = None;
        let mut next_tick = Instant::now();
        loop {
            let served = *self.served.borrow_and_update();
            if written != Some(served) && self.write_heartbeat(lease, served).await.is_ok() {
                written = Some(served);
            }
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + TICK;
                match self.keep_alive(lease).await {
                    Ok(true) => renewed = Instant::now(),
                    // etcd let the lease go (this replica was away longer than the TTL).
                    Ok(false) => return,
                    Err(e) => tracing::debug!("election: keep-alive: {e}"),
                }
                if renewed.elapsed() > self.ttl {
                    return;
                }
                let leads = if renewed.elapsed() > self.ttl * 2 / 3 {
                    // etcd may expire the lease soon: stop leading before another can start.
                    false
                } else {
                    match self.campaign(lease).await {
                        Ok(leads) => leads,
                        Err(e) => {
                            tracing::debug!("election: campaign: {e}");
                            *self.leading.borrow()
                        }
                    }
                };
                self.leading.send_if_modified(|l| std::mem::replace(l, leads) != leads);
                self.campaigned.send_if_modified(|c| !std::mem::replace(c, true));
            }
            tokio::select! {
                _ = tokio::time::sleep_until(next_tick) => {}
                changed = self.served.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
            }
        }
    }

    async fn grant(&self) -> Result<u64, StoreError> {
        let grant = wire::LeaseGrant { ttl: self.ttl.as_secs().max(1) as i64 };
        let r: wire::LeaseResponse =
            self.etcd.grpc.call(method::LEASE_GRANT, &grant).await.map_err(|e| super::store_error(e, 0))?;
        Ok(r.id)
    }

    /// Whether the lease is still alive after renewing it.
    async fn keep_alive(&self, lease: u64) -> Result<bool, StoreError> {
        // One request on etcd's keep-alive stream, closed after it: etcd answers it, then
        // ends the stream.
        let r: wire::LeaseResponse = (self.etcd.grpc)
            .call(method::LEASE_KEEP_ALIVE, &wire::LeaseId { id: lease })
            .await
            .map_err(|e| super::store_error(e, 0))?;
        Ok(r.ttl > 0)
    }

    /// Takes the leader key if it is free; whether this replica holds it.
    async fn campaign(&self, lease: u64) -> Result<bool, StoreError> {
        let key = self.etcd.keys.etcd_key(&format!("{LEASES}{LEADER}"));
        let value = lease_object(LEADER, &self.identity, self.ttl, None);
        let r = self
            .etcd
            .txn(wire::Txn {
                compare: vec![wire::compare(&key, wire::Target::Create, wire::Cmp::Equal, 0)],
                success: vec![wire::put_leased(&key, &value, lease)],
                failure: vec![wire::get(&key, false)],
            })
            .await?;
        if r.succeeded {
            tracing::info!("election: {} leads the controllers", self.identity);
            return Ok(true);
        }
        let holder = r.first_kv().and_then(|kv| serde_json::from_slice::<Value>(&kv.value).ok());
        Ok(holder.as_ref().and_then(|h| h.pointer("/spec/holderIdentity")).and_then(Value::as_str)
            == Some(self.identity.as_str()))
    }

    async fn write_heartbeat(&self, lease: u64, served: Revision) -> Result<(), StoreError> {
        let key = self.etcd.keys.etcd_key(&self.heartbeat_key);
        let name = self.heartbeat_key.rsplit('/').next().unwrap_or_default();
        let value = lease_object(name, &self.identity, self.ttl, Some(served));
        self.etcd
            .txn(wire::Txn { compare: vec![], success: vec![wire::put_leased(&key, &value, lease)], failure: vec![] })
            .await?;
        Ok(())
    }
}

/// A `coordination.k8s.io/v1` Lease in `kube-system` held by `holder`, with the revision
/// served when it is a heartbeat.
fn lease_object(name: &str, holder: &str, ttl: Duration, served: Option<Revision>) -> Vec<u8> {
    let at = k8s_openapi::jiff::Timestamp::now();
    // A MicroTime, as Leases write their times.
    let now = at.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string();
    let mut metadata = json!({
        "name": name,
        "namespace": "kube-system",
        "uid": crate::meta::new_uid(),
        "creationTimestamp": crate::meta::format_time(at),
        "labels": { "app.kubernetes.io/managed-by": "kubectl-crd" },
    });
    if let Some(served) = served {
        metadata["annotations"] = json!({ SERVED_ANNOTATION: served.to_string() });
    }
    let lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": metadata,
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": ttl.as_secs(),
            "acquireTime": now,
            "renewTime": now,
        },
    });
    serde_json::to_vec(&lease).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_unrenewed_for_more_than_three_ticks_is_stale() {
        let left = |ttl, granted_ttl| wire::TimeToLive { ttl, granted_ttl };
        let cases = [
            (left(10, 10), true),
            (left(9, 10), true),
            (left(7, 10), true),
            (left(6, 10), false),
            (left(1, 10), false),
            (left(-1, 10), false),
            (left(-1, 0), false),
        ];
        for (left, live) in cases {
            assert_eq!(renewed_lately(&left), live, "{left:?}");
        }
    }
}
