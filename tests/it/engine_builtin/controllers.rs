//! A kube-runtime controller and leader election against the engine: reconciles, Events, Leases.

use super::*;

/// Leader election over a Lease, as client-go's `leaderelection` does it: acquire the
/// lease when nobody holds it or the holder let it expire, renew it while holding it,
/// and let optimistic concurrency decide between contenders.
struct Elector {
    leases: Api<Lease>,
    name: String,
    identity: String,
    duration_seconds: i32,
}

impl Elector {
    fn new(client: &kube::Client, identity: &str, duration_seconds: i32) -> Self {
        Elector {
            leases: Api::namespaced(client.clone(), "default"),
            name: "widget-controller".into(),
            identity: identity.into(),
            duration_seconds,
        }
    }

    /// One round: whether this contender holds the lease afterwards.
    async fn try_acquire_or_renew(&self) -> bool {
        let now = Timestamp::now();
        let Some(mut lease) = self.leases.get_opt(&self.name).await.expect("get lease") else {
            let lease = Lease {
                metadata: ObjectMeta { name: Some(self.name.clone()), ..Default::default() },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.identity.clone()),
                    lease_duration_seconds: Some(self.duration_seconds),
                    acquire_time: Some(MicroTime(now)),
                    renew_time: Some(MicroTime(now)),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return match self.leases.create(&PostParams::default(), &lease).await {
                Ok(_) => true,
                Err(kube::Error::Api(s)) if s.code == 409 => false,
                Err(e) => panic!("create lease: {e}"),
            };
        };
        let spec = lease.spec.get_or_insert_with(Default::default);
        let held_by_me = spec.holder_identity.as_deref() == Some(&self.identity);
        if !held_by_me {
            let duration = SignedDuration::from_secs(i64::from(spec.lease_duration_seconds.unwrap_or(0)));
            let renewed = spec.renew_time.as_ref().map(|t| t.0).expect("a held lease has a renew time");
            if renewed + duration > now {
                return false;
            }
            spec.holder_identity = Some(self.identity.clone());
            spec.acquire_time = Some(MicroTime(now));
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            spec.lease_duration_seconds = Some(self.duration_seconds);
        }
        spec.renew_time = Some(MicroTime(now));
        // The read resourceVersion is the precondition: of two contenders one wins.
        match self.leases.replace(&self.name, &PostParams::default(), &lease).await {
            Ok(_) => true,
            Err(kube::Error::Api(s)) if s.code == 409 => false,
            Err(e) => panic!("replace lease: {e}"),
        }
    }

    async fn holder(&self) -> Option<String> {
        self.leases.get(&self.name).await.expect("lease").spec?.holder_identity
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct ReconcileError(#[from] kube::Error);

struct Ctx {
    widgets: Api<DynamicObject>,
    recorder: Recorder,
    resource: ApiResource,
}

/// Marks each widget Ready through `/status` and records an Event about it.
async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let name = obj.name_any();
    if obj.data.pointer("/status/phase").and_then(Value::as_str) != Some("Ready") {
        ctx.widgets
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"phase": "Ready", "replicas": 1}})),
            )
            .await?;
        let event = Event {
            type_: EventType::Normal,
            reason: "Reconciled".into(),
            note: Some(format!("widget {name} is ready")),
            action: "Reconcile".into(),
            secondary: None,
        };
        ctx.recorder.publish(&event, &obj.object_ref(&ctx.resource)).await?;
    }
    Ok(Action::await_change())
}

fn error_policy(_obj: Arc<DynamicObject>, _err: &ReconcileError, _ctx: Arc<Ctx>) -> Action {
    Action::requeue(Duration::from_millis(50))
}

#[tokio::test]
async fn a_controller_reconciles_records_events_and_holds_a_lease() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;

    // The controller runs only as the leader, and keeps renewing.
    let alpha = Elector::new(&client, "alpha", 15);
    assert!(alpha.try_acquire_or_renew().await, "a free lease is acquired");
    let renewing = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(alpha.try_acquire_or_renew().await, "the holder renews");
        }
    });

    let reporter = Reporter { controller: "widget-controller".into(), instance: Some("alpha".into()) };
    let ctx = Arc::new(Ctx {
        widgets: api.clone(),
        recorder: Recorder::new(client.clone(), reporter),
        resource: widget_resource(),
    });
    let controller = Controller::new_with(api.clone(), watcher::Config::default(), widget_resource())
        .run(reconcile, error_policy, Arc::clone(&ctx))
        .for_each(|_| futures::future::ready(()));
    let controller = tokio::spawn(controller);

    for name in ["w1", "w2"] {
        api.create(&PostParams::default(), &widget(name)).await.expect("create widget");
    }
    for name in ["w1", "w2"] {
        eventually("the widget to be reconciled", async || {
            let w = api.get(name).await.ok()?;
            (w.data.pointer("/status/phase") == Some(&json!("Ready"))).then_some(())
        })
        .await;
    }
    let w1 = api.get("w1").await.expect("w1");
    assert_eq!(w1.data["spec"], json!({"color": "red", "replicas": 1}), "status writes leave spec alone");
    assert_eq!(w1.metadata.generation, Some(1), "a status write does not bump the generation");

    // Recording the same event again makes it a series (a merge patch of events.k8s.io).
    let again = Event {
        type_: EventType::Normal,
        reason: "Reconciled".into(),
        note: Some("widget w1 is ready".into()),
        action: "Reconcile".into(),
        secondary: None,
    };
    ctx.recorder.publish(&again, &w1.object_ref(&widget_resource())).await.expect("series");

    // kubectl describe's query: core v1 events of the object, by field selector.
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let uid = w1.metadata.uid.clone().expect("uid");
    let selector = format!(
        "involvedObject.kind=Widget,involvedObject.name=w1,involvedObject.namespace=default,involvedObject.uid={uid}"
    );
    let found = eventually("w1's events to be listed", async || {
        let list = core.list(&ListParams::default().fields(&selector)).await.ok()?;
        let e = list.items.into_iter().next()?;
        (e.series.as_ref().map(|s| s.count) == Some(Some(2))).then_some(e)
    })
    .await;
    assert_eq!(found.involved_object.name.as_deref(), Some("w1"));
    assert_eq!(found.involved_object.uid.as_deref(), Some(uid.as_str()));
    assert_eq!(found.message.as_deref(), Some("widget w1 is ready"));
    assert_eq!(found.reason.as_deref(), Some("Reconciled"));
    assert_eq!(found.reporting_component.as_deref(), Some("widget-controller"));
    assert_eq!(found.reporting_instance.as_deref(), Some("alpha"));
    assert_eq!(found.type_.as_deref(), Some("Normal"));
    assert!(found.event_time.is_some() && found.first_timestamp.is_none() && found.count.is_none());
    let all = core.list(&ListParams::default().fields("involvedObject.kind=Widget")).await.expect("list");
    assert_eq!(all.items.len(), 2, "one event per widget");
    let other = core.list(&ListParams::default().fields("involvedObject.name=w3")).await.expect("list");
    assert!(other.items.is_empty());

    // The same objects through events.k8s.io.
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let same = v1.get(&found.name_any()).await.expect("events.k8s.io view");
    assert_eq!(same.note.as_deref(), Some("widget w1 is ready"));
    assert_eq!(same.regarding.and_then(|r| r.name).as_deref(), Some("w1"));
    assert_eq!(same.series.map(|s| s.count), Some(2));
    assert_eq!(same.metadata.resource_version, found.metadata.resource_version);

    // The lease is still alpha's, and the controller never lost it.
    assert_eq!(Elector::new(&client, "beta", 15).holder().await.as_deref(), Some("alpha"));
    assert!(!Elector::new(&client, "beta", 15).try_acquire_or_renew().await, "a held lease is not taken");
    controller.abort();
    renewing.abort();
}

#[tokio::test]
async fn leader_election_has_one_holder_and_hands_over_after_expiry() {
    let (_engine, client) = engine().await;
    // Two contenders race for a free lease: exactly one wins.
    let alpha = Elector::new(&client, "alpha", 2);
    let beta = Elector::new(&client, "beta", 2);
    let (a, b) = tokio::join!(alpha.try_acquire_or_renew(), beta.try_acquire_or_renew());
    assert!(a ^ b, "one holder, not {a} and {b}");
    let (leader, follower) = if a { (alpha, beta) } else { (beta, alpha) };

    // While the leader renews, the follower never gets it.
    for _ in 0..8 {
        assert!(leader.try_acquire_or_renew().await, "the leader renews");
        assert!(!follower.try_acquire_or_renew().await, "the follower waits");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The leader stops renewing: after the lease duration the follower takes over.
    let started = std::time::Instant::now();
    let mut rounds = 0;
    while !follower.try_acquire_or_renew().await {
        rounds += 1;
        assert!(started.elapsed() < Duration::from_secs(8), "no takeover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(rounds > 0, "not before the lease expired");
    let lease = follower.leases.get("widget-controller").await.expect("lease");
    let spec = lease.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some(follower.identity.as_str()));
    assert_eq!(spec.lease_transitions, Some(1));
    assert!(!leader.try_acquire_or_renew().await, "the old leader has lost it");
}
