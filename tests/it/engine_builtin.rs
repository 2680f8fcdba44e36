//! The local cluster runs real controllers: the built-in kinds operators need beside their
//! CRDs (namespaces, events through both APIs, leases, configmaps, secrets,
//! serviceaccounts, self access reviews), driven through kube-rs in process. A kube-rs
//! `runtime::Controller` reconciles custom resources while holding a Lease, writes
//! status through `/status` and records Events with kube's event `Recorder`; every test
//! checks what the store holds afterwards, not just the answers.

mod controllers;

use crate::support;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SelfSubjectRulesReview,
    SelfSubjectRulesReviewSpec,
};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, Namespace, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event as EventV1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Resource, ResourceExt};
use kubectl_crd_engine::Engine;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::reference::load;

type Crd = k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

async fn engine() -> (Arc<Engine>, kube::Client) {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let client = kubectl_crd::cluster::connect::in_process_client(&engine, "default");
    (engine, client)
}

async fn eventually<T>(what: &str, mut probe: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..500 {
        if let Some(v) = probe().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what} never happened");
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other}"),
    }
}

fn widget_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("stable.example.com", "v1", "Widget"), "widgets")
}

/// The Widget CRD of reference 06 (status and scale subresources), established.
async fn widgets(client: &kube::Client, ns: &str) -> Api<DynamicObject> {
    let crds: Api<Crd> = Api::all(client.clone());
    let body = load("06").request.body.expect("body");
    let crd: Crd = serde_json::from_slice(&body).expect("crd");
    crds.create(&PostParams::default(), &crd).await.expect("create crd");
    eventually("the CRD to be established", async || {
        let crd = crds.get("widgets.stable.example.com").await.ok()?;
        crd.status?.conditions?.iter().any(|c| c.type_ == "Established" && c.status == "True").then_some(())
    })
    .await;
    Api::namespaced_with(client.clone(), ns, &widget_resource())
}

fn widget(name: &str) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": name}, "spec": {"color": "red", "replicas": 1}
    }))
    .expect("widget")
}

fn core_event(name: &str, ns: &str, involved: Value) -> CoreEvent {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": involved, "reason": "Scheduled", "message": "placed on node-1 ",
        "source": {"component": "scheduler"}, "firstTimestamp": "2024-05-01T10:00:00Z",
        "lastTimestamp": "2024-05-01T10:02:00Z", "count": 3, "type": "Normal",
    }))
    .expect("event")
}

#[tokio::test]
async fn events_are_one_storage_seen_through_two_apis() {
    let (engine, client) = engine().await;
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let mut v1_watch = watcher(v1.clone(), watcher::Config::default()).applied_objects().boxed();

    // Legacy style, through core v1: read back through events.k8s.io, converted.
    let involved = json!({"kind": "Widget", "name": "w1", "namespace": "default", "uid": "u-1"});
    let created = core.create(&PostParams::default(), &core_event("e1", "default", involved)).await.expect("create");
    assert_eq!(created.reporting_component.as_deref(), Some(""), "Go writes reportingComponent always");
    let seen = v1.get("e1").await.expect("events.k8s.io");
    assert_eq!(seen.note.as_deref(), Some("placed on node-1 "));
    assert_eq!(seen.regarding.as_ref().and_then(|r| r.uid.as_deref()), Some("u-1"));
    assert_eq!(seen.deprecated_count, Some(3));
    assert_eq!(seen.deprecated_source.as_ref().and_then(|s| s.component.as_deref()), Some("scheduler"));
    assert_eq!(
        seen.deprecated_first_timestamp.as_ref().map(|t| t.0.to_string()).as_deref(),
        Some("2024-05-01T10:00:00Z")
    );
    assert!(seen.event_time.is_none());
    let watched = tokio::time::timeout(Duration::from_secs(5), v1_watch.try_next()).await.expect("watch").expect("ok");
    assert_eq!(watched.map(|e| e.name_any()).as_deref(), Some("e1"), "a watch of events.k8s.io sees it");

    // A legacy recorder counts repeats with a strategic merge patch.
    let repeat = json!({"count": 4, "lastTimestamp": "2024-05-01T10:03:00Z", "message": "placed on node-1 "});
    let counted = core.patch("e1", &PatchParams::default(), &Patch::Strategic(repeat)).await.expect("repeat");
    assert_eq!(
        (counted.count, counted.last_timestamp.map(|t| t.0.to_string())),
        (Some(4), Some("2024-05-01T10:03:00Z".into()))
    );
    assert_eq!(v1.get("e1").await.expect("events.k8s.io").deprecated_count, Some(4));
    let watched = tokio::time::timeout(Duration::from_secs(5), v1_watch.try_next()).await.expect("watch").expect("ok");
    assert_eq!(watched.and_then(|e| e.deprecated_count), Some(4), "the watch sees the change, converted");

    // New style, through events.k8s.io: read back through core v1.
    let now = Timestamp::now();
    let new: EventV1 = serde_json::from_value(json!({
        "metadata": {"name": "e2", "namespace": "default"},
        "eventTime": MicroTime(now), "reportingController": "example.com/widgets", "reportingInstance": "w-0",
        "action": "Scale", "reason": "Scaled", "note": "to 3", "type": "Warning",
        "regarding": {"kind": "Widget", "name": "w2", "namespace": "default"},
    }))
    .expect("event");
    v1.create(&PostParams::default(), &new).await.expect("create events.k8s.io");
    let e2 = core.get("e2").await.expect("core view");
    assert_eq!(e2.message.as_deref(), Some("to 3"));
    assert_eq!(e2.reporting_component.as_deref(), Some("example.com/widgets"));
    assert_eq!(e2.involved_object.name.as_deref(), Some("w2"));
    let watched = tokio::time::timeout(Duration::from_secs(5), v1_watch.try_next()).await.expect("watch").expect("ok");
    assert_eq!(watched.map(|e| e.name_any()).as_deref(), Some("e2"));

    // A series grows through a patch; the rest is immutable through events.k8s.io.
    let series = json!({"series": {"count": 2, "lastObservedTime": MicroTime(now)}});
    let grown = v1.patch("e2", &PatchParams::default(), &Patch::Merge(&series)).await.expect("series");
    assert_eq!(grown.series.map(|s| s.count), Some(2));
    let err = api_error(
        v1.patch("e2", &PatchParams::default(), &Patch::Merge(json!({"note": "changed"})))
            .await
            .expect_err("immutable"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(err.message, "Event \"e2\" is invalid: message: Invalid value: \"changed\": field is immutable");
    assert_eq!(core.get("e2").await.expect("e2").message.as_deref(), Some("to 3"));

    // Field selectors in each API's own names; core's `source` falls back to the controller.
    let by = |sel: &str| ListParams::default().fields(sel);
    let names = |l: kube::core::ObjectList<CoreEvent>| l.items.iter().map(ResourceExt::name_any).collect::<Vec<_>>();
    assert_eq!(names(core.list(&by("involvedObject.name=w1")).await.expect("list")), ["e1"]);
    assert_eq!(names(core.list(&by("source=example.com/widgets")).await.expect("list")), ["e2"]);
    assert_eq!(names(core.list(&by("type=Normal,reason=Scheduled")).await.expect("list")), ["e1"]);
    let regarding = v1.list(&by("regarding.name=w2,reportingController=example.com/widgets")).await.expect("list");
    assert_eq!(regarding.items.iter().map(ResourceExt::name_any).collect::<Vec<_>>(), ["e2"]);
    let err = api_error(core.list(&by("note=x")).await.expect_err("unknown field"));
    assert_eq!((err.code, err.message.as_str()), (400, "field label not supported: note"));
    let err = api_error(v1.list(&by("involvedObject.name=w1")).await.expect_err("core's name"));
    assert_eq!(err.message, "field label not supported: involvedObject.name");

    // One storage: both APIs list the same two objects, and a delete through one is seen
    // through the other.
    let keys = engine.store().list("/registry/core/events/", &Default::default()).await.expect("store");
    assert_eq!(keys.items.len(), 2);
    assert!(
        engine.store().list("/registry/events.k8s.io/", &Default::default()).await.expect("store").items.is_empty()
    );
    v1.delete("e1", &DeleteParams::default()).await.expect("delete through events.k8s.io");
    assert!(core.get_opt("e1").await.expect("get").is_none());
}

#[tokio::test]
async fn config_maps_secrets_and_service_accounts_are_stored_and_validated() {
    let (engine, client) = engine().await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "settings"}, "data": {"mode": "fast"}, "binaryData": {"blob": "AAE="}, "immutable": true
    }))
    .expect("cm");
    cms.create(&PostParams::default(), &cm).await.expect("create cm");
    let err = api_error(
        cms.patch("settings", &PatchParams::default(), &Patch::Merge(json!({"data": {"mode": "slow"}})))
            .await
            .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "ConfigMap \"settings\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
    assert_eq!(cms.get("settings").await.expect("cm").data.expect("data")["mode"], "fast");

    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let secret: Secret =
        serde_json::from_value(json!({"metadata": {"name": "creds"}, "stringData": {"user": "admin"}}))
            .expect("secret");
    let created = secrets.create(&PostParams::default(), &secret).await.expect("create secret");
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert_eq!(created.data.expect("data")["user"].0, b"admin");
    assert!(created.string_data.is_none(), "stringData folds into data");
    let err = api_error(
        secrets
            .patch("creds", &PatchParams::default(), &Patch::Merge(json!({"type": "kubernetes.io/tls"})))
            .await
            .expect_err("type is immutable"),
    );
    assert!(err.message.contains("type: Invalid value: \"kubernetes.io/tls\": field is immutable"), "{}", err.message);
    let tls: Secret = serde_json::from_value(
        json!({"metadata": {"name": "tls"}, "type": "kubernetes.io/tls", "data": {"tls.crt": "eA=="}}),
    )
    .expect("tls");
    let err = api_error(secrets.create(&PostParams::default(), &tls).await.expect_err("no key"));
    assert_eq!(err.message, "Secret \"tls\" is invalid: data[tls.key]: Required value");
    let by_type = secrets.list(&ListParams::default().fields("type=Opaque")).await.expect("by type");
    assert_eq!(by_type.items.len(), 1);

    let sas: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let sa: ServiceAccount = serde_json::from_value(
        json!({"metadata": {"name": "builder"}, "secrets": [{"name": "creds", "namespace": "x"}]}),
    )
    .expect("sa");
    let sa = sas.create(&PostParams::default(), &sa).await.expect("create sa");
    assert_eq!(serde_json::to_value(sa.secrets).expect("json"), json!([{"name": "creds"}]));

    // Deleting the namespace deletes them with everything else.
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("ns"))
        .await
        .expect("ns");
    let team: Api<ConfigMap> = Api::namespaced(client.clone(), "team");
    team.create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "c"}})).expect("cm"))
        .await
        .expect("cm in team");
    namespaces.delete("team", &DeleteParams::default()).await.expect("delete ns");
    eventually("the namespace to go", async || namespaces.get_opt("team").await.ok()?.is_none().then_some(())).await;
    let left = engine.store().list("/registry/core/configmaps/team/", &Default::default()).await.expect("store");
    assert!(left.items.is_empty());
}

#[tokio::test]
async fn bad_input_is_refused_as_kube_apiserver_refuses_it_and_nothing_is_stored() {
    let (engine, client) = engine().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("ns"))
        .await
        .expect("ns");

    // An Event without an involvedObject, outside "default".
    let events: Api<CoreEvent> = Api::namespaced(client.clone(), "team");
    let orphan: CoreEvent = serde_json::from_value(json!({
        "metadata": {"name": "lost"}, "involvedObject": {}, "reason": "Nothing", "message": "about nothing"
    }))
    .expect("event");
    let err = api_error(events.create(&PostParams::default(), &orphan).await.expect_err("no involved object"));
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        "Event \"lost\" is invalid: involvedObject.namespace: Invalid value: \"\": does not match event.namespace"
    );
    let cause = &err.details.expect("details").causes[0];
    assert_eq!(cause.field, "involvedObject.namespace");

    // A Secret whose data is not base64: a decoding error, 400.
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "team");
    let raw = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "broken"}, "data": {"key": "abc$def"}});
    let request = http::Request::post("/api/v1/namespaces/team/secrets")
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(&raw).expect("json"))
        .expect("request");
    let err = client.request::<Secret>(request).await.expect_err("bad base64");
    let err = api_error(err);
    assert_eq!((err.code, err.reason.as_str()), (400, "BadRequest"));
    assert_eq!(
        err.message,
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3"
    );
    assert!(secrets.get_opt("broken").await.expect("get").is_none());

    // A Lease with a negative duration.
    let leases: Api<Lease> = Api::namespaced(client.clone(), "team");
    let lease: Lease = serde_json::from_value(json!({"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": -5}}))
        .expect("lease");
    let err = api_error(leases.create(&PostParams::default(), &lease).await.expect_err("negative"));
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            422,
            "Lease.coordination.k8s.io \"l\" is invalid: spec.leaseDurationSeconds: Invalid value: -5: must be greater than 0"
        )
    );

    // A strict events.k8s.io Event without its required fields.
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "team");
    let bare: EventV1 =
        serde_json::from_value(json!({"metadata": {"name": "bare"}, "regarding": {"namespace": "team"}})).expect("ev");
    let err = api_error(v1.create(&PostParams::default(), &bare).await.expect_err("strict"));
    assert_eq!(
        err.message,
        "Event \"bare\" is invalid: [eventTime: Required value, type: Invalid value: \"\": has invalid value: ]"
    );

    // In `team`: on etcd the replica's own heartbeat Lease lives in kube-system.
    for prefix in
        ["/registry/core/events/team/", "/registry/core/secrets/team/", "/registry/coordination.k8s.io/leases/team/"]
    {
        let left = engine.store().list(prefix, &Default::default()).await.expect("store");
        assert!(left.items.is_empty(), "nothing stored under {prefix}");
    }
}

#[tokio::test]
async fn self_access_reviews_allow_everything_and_store_nothing() {
    let (engine, client) = engine().await;
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some("default".into()),
                verb: Some("create".into()),
                group: Some("stable.example.com".into()),
                resource: Some("widgets".into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let answer = reviews.create(&PostParams::default(), &review).await.expect("review");
    let status = answer.status.expect("status");
    assert!(status.allowed && status.denied.is_none());
    assert_eq!(answer.spec.resource_attributes.and_then(|r| r.resource).as_deref(), Some("widgets"));

    let err = api_error(
        reviews.create(&PostParams::default(), &SelfSubjectAccessReview::default()).await.expect_err("empty"),
    );
    assert_eq!(err.code, 422);
    let err = api_error(reviews.list(&ListParams::default()).await.expect_err("create-only"));
    assert_eq!(err.code, 405);

    let rules: Api<SelfSubjectRulesReview> = Api::all(client.clone());
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec { namespace: Some("default".into()) },
        ..Default::default()
    };
    let answer = rules.create(&PostParams::default(), &review).await.expect("rules");
    let status = answer.status.expect("status");
    assert!(!status.incomplete);
    assert!(
        status
            .resource_rules
            .iter()
            .any(|r| r.verbs == ["*"] && r.resources.as_deref() == Some(&["*".to_string()][..]))
    );
    let stored = engine.store().list("/registry/authorization.k8s.io/", &Default::default()).await.expect("store");
    assert!(stored.items.is_empty());
}

#[tokio::test]
async fn discovery_serves_every_group_and_namespaces_are_watched_across_the_cluster() {
    let (_engine, client) = engine().await;
    let discovery = kube::discovery::Discovery::new(client.clone()).run().await.expect("discovery runs");
    let mut found: Vec<String> = Vec::new();
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            found.push(format!("{}/{} {}", ar.group, ar.plural, caps.operations.join(",")));
        }
    }
    for want in [
        "/configmaps",
        "/secrets",
        "/serviceaccounts",
        "/events",
        "/namespaces",
        "events.k8s.io/events",
        "coordination.k8s.io/leases",
        "authorization.k8s.io/selfsubjectaccessreviews",
        "authorization.k8s.io/selfsubjectrulesreviews",
    ] {
        assert!(found.iter().any(|f| f.starts_with(&format!("{want} "))), "{want} in {found:?}");
    }

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut events = watcher(namespaces.clone(), watcher::Config::default()).boxed();
    let mut seen: Vec<String> = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    // The watcher lists first; only then does the namespace come and go.
    loop {
        let next = tokio::time::timeout_at(deadline, events.try_next()).await.expect("in time").expect("watch ok");
        match next {
            Some(watcher::Event::InitApply(ns)) => seen.push(format!("init {}", ns.name_any())),
            Some(watcher::Event::InitDone) => break,
            _ => {}
        }
    }
    namespaces
        .create(&PostParams::default(), &serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("ns"))
        .await
        .expect("ns");
    namespaces.delete("team", &DeleteParams::default()).await.expect("delete");
    while !seen.contains(&"delete team".to_string()) {
        let next = tokio::time::timeout_at(deadline, events.try_next()).await.expect("in time").expect("watch ok");
        match next {
            Some(watcher::Event::Apply(ns)) => {
                let name = ns.name_any();
                let phase = ns.status.and_then(|s| s.phase).unwrap_or_default();
                seen.push(format!("apply {name} {phase}"));
            }
            Some(watcher::Event::Delete(ns)) => seen.push(format!("delete {}", ns.name_any())),
            _ => {}
        }
    }
    for want in ["init default", "init kube-system", "apply team Active", "apply team Terminating", "delete team"] {
        assert!(seen.contains(&want.to_string()), "{want} in {seen:?}");
    }
}

#[tokio::test]
async fn namespaces_and_service_accounts_answer_deletes_and_names_as_kube_does() {
    let (_engine, client) = engine().await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let dotted =
        Namespace { metadata: ObjectMeta { name: Some("a.b".into()), ..Default::default() }, ..Default::default() };
    let e = api_error(namespaces.create(&PostParams::default(), &dotted).await.expect_err("a dot"));
    assert_eq!(e.message, "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots");
    let long = "n".repeat(64);
    let too_long =
        Namespace { metadata: ObjectMeta { name: Some(long.clone()), ..Default::default() }, ..Default::default() };
    let e = api_error(namespaces.create(&PostParams::default(), &too_long).await.expect_err("too long"));
    assert!(e.message.contains("metadata.labels: Invalid value:"), "the name label fails too: {}", e.message);

    // An update without spec keeps the stored finalizers, so the DELETE answers the
    // Namespace, Terminating, rather than removing it at once.
    let ns =
        Namespace { metadata: ObjectMeta { name: Some("doomed".into()), ..Default::default() }, ..Default::default() };
    let created = namespaces.create(&PostParams::default(), &ns).await.expect("create");
    let mut update = Namespace { metadata: created.metadata.clone(), ..Default::default() };
    update.metadata.labels.get_or_insert_default().insert("more".into(), "yes".into());
    let updated = namespaces.replace("doomed", &PostParams::default(), &update).await.expect("update");
    assert_eq!(updated.spec.and_then(|s| s.finalizers), Some(vec!["kubernetes".to_string()]));
    let answer = namespaces.delete("doomed", &DeleteParams::default()).await.expect("delete");
    let terminating = answer.left().expect("the Namespace, not a Status");
    assert_eq!(terminating.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    assert!(terminating.metadata.finalizers.is_none(), "no empty finalizers list");

    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let sa =
        ServiceAccount { metadata: ObjectMeta { name: Some("sa".into()), ..Default::default() }, ..Default::default() };
    let created = accounts.create(&PostParams::default(), &sa).await.expect("create");
    let deleted = accounts.delete("sa", &DeleteParams::default()).await.expect("delete").left().expect("the object");
    assert_eq!(deleted.metadata.uid, created.metadata.uid);
    assert_ne!(deleted.metadata.resource_version, created.metadata.resource_version, "at the deletion's revision");

    let maps: Api<ConfigMap> = Api::namespaced(client, "default");
    let e = api_error(maps.list(&ListParams::default().fields("data.a=1")).await.expect_err("unknown field"));
    assert_eq!(e.message, "\"data.a\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"");
}
