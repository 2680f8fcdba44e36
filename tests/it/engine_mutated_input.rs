//! Mutated input against the engine's HTTP surface, in process. Valid requests from the
//! kube-apiserver recordings are changed at random places (seeded, so a failure replays)
//! and sent: each must get a success or a `metav1.Status` whose code is the HTTP status
//! (or kube's plain-text 404 for a path nothing serves), never a panic or a 500, and a
//! refused write must leave what is stored exactly as it was.

use crate::support;

use axum::body::Body;
use http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use kubectl_crd_engine::Engine;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const WIDGETS: &str = "/apis/stable.example.com/v1/namespaces/default/widgets";

/// splitmix64: small, seedable, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Values that have broken parsers before: wrong types, edges of number ranges, odd
/// strings, empty and nested containers.
fn random_value(rng: &mut Rng, depth: usize) -> Value {
    let long = "a".repeat(300);
    let leaves = [
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(-1),
        json!(1.5),
        json!(-0.0),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1e308),
        json!(""),
        json!("x"),
        json!("-"),
        json!("Upper Case"),
        json!("💥\u{0}\u{7f}"),
        json!("1"),
        json!("true"),
        json!("a=b,c in (d)"),
        json!(long),
        json!("spec.replicas"),
        json!(".status.selector"),
    ];
    match rng.below(if depth == 0 { 1 } else { 4 }) {
        0 => rng.pick(&leaves).clone(),
        1 => Value::Array((0..rng.below(3)).map(|_| random_value(rng, depth - 1)).collect()),
        _ => {
            let keys = ["a", "type", "items", "properties", "name", "replicas", "$ref", "x-kubernetes-list-type", ""];
            let mut map = Map::new();
            for _ in 0..rng.below(3) {
                map.insert((*rng.pick(&keys)).to_string(), random_value(rng, depth - 1));
            }
            Value::Object(map)
        }
    }
}

/// One step down a JSON document.
enum Step {
    Key(String),
    Index(usize),
}

/// Changes `v` at one random place: replaces a value, removes or adds a member, or
/// swaps a container for a leaf.
fn mutate(rng: &mut Rng, v: &mut Value) {
    // Choose the place first, descending while there is somewhere to go and stopping
    // early now and then; then take it mutably.
    let mut path = Vec::new();
    let mut at = &*v;
    while rng.below(4) != 0 {
        let step = match at {
            Value::Object(map) if !map.is_empty() => {
                Step::Key(map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default())
            }
            Value::Array(items) if !items.is_empty() => Step::Index(rng.below(items.len())),
            _ => break,
        };
        at = match &step {
            Step::Key(key) => &at[key.as_str()],
            Step::Index(i) => &at[*i],
        };
        path.push(step);
    }
    let mut node = v;
    for step in &path {
        node = match step {
            Step::Key(key) => node.get_mut(key.as_str()),
            Step::Index(i) => node.get_mut(*i),
        }
        .expect("the chosen path exists");
    }
    match (rng.below(4), &mut *node) {
        (0, Value::Object(map)) if !map.is_empty() => {
            let key = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            map.remove(&key);
        }
        (1, Value::Object(map)) => {
            let keys = ["type", "x-kubernetes-preserve-unknown-fields", "default", "extra", "nullable", "format"];
            map.insert((*rng.pick(&keys)).to_string(), random_value(rng, 2));
        }
        (0, Value::Array(items)) if !items.is_empty() => {
            items.remove(rng.below(items.len()));
        }
        (1, Value::Array(items)) if !items.is_empty() => {
            let copy = items[rng.below(items.len())].clone();
            items.push(copy);
        }
        _ => *node = random_value(rng, 2),
    }
}

/// One answer, with what the checks need.
struct Answer {
    status: StatusCode,
    content_type: String,
    body: Vec<u8>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

async fn send(engine: &Arc<Engine>, method: &str, uri: &str, content_type: &str, body: Vec<u8>) -> Answer {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::ACCEPT, "application/json")
        .body(Body::from(body))
        .expect("request");
    let res = engine.router().oneshot(req).await.expect("a response");
    let status = res.status();
    let content_type = res.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let body = res.into_body().collect().await.expect("body").to_bytes().to_vec();
    Answer { status, content_type, body }
}

/// The 500s kube-apiserver itself answers for a client's mistake (plain Go errors it passes
/// on); the engine answers them alike.
const KUBE_S_OWN_500S: [&str; 5] = [
    "failed to create typed patch object",
    "resourceVersion should not be set on objects to be created",
    "strconv.ParseUint: parsing",
    // A read at a resourceVersion that is no number (the oracle's, for a GET and a list).
    "resourceVersion: Invalid value: ",
    "Internal error occurred: Object 'apiVersion' is missing",
];

/// The rules every answer keeps: a success, kube's plain 404 for an unserved path (bare,
/// without a body or a type, for an OpenAPI v3 document nobody publishes, as kube's v3
/// handler answers), or a Status with the HTTP status as its code and a reason; never a
/// 500 but kube's own.
fn check(answer: &Answer, request: &str) {
    let status = answer.status.as_u16();
    let message = answer.json()["message"].as_str().unwrap_or_default().to_string();
    if status == 500 && KUBE_S_OWN_500S.iter().any(|m| message.starts_with(m)) {
        return;
    }
    assert!(status != 500, "500 for {request}: {}", String::from_utf8_lossy(&answer.body));
    if answer.status.is_success() {
        return;
    }
    if status == 404 && request.contains(" /openapi/v3") && answer.content_type.is_empty() && answer.body.is_empty() {
        return;
    }
    let plain_404 = status == 404 && answer.content_type.starts_with("text/plain");
    if request.contains(": HEAD ") {
        // No body to read: the headers must still say which of the two it is.
        assert!(plain_404 || answer.content_type == "application/json", "{request} -> {status}");
        return;
    }
    if plain_404 && answer.body == b"404 page not found\n" {
        return;
    }
    let body = answer.json();
    assert_eq!(answer.content_type, "application/json", "{request} -> {status}: {body}");
    assert_eq!(body["kind"], "Status", "{request} -> {status}: {body}");
    assert_eq!(body["status"], "Failure", "{request} -> {status}: {body}");
    assert_eq!(body["code"], status, "{request} -> {status}: {body}");
    assert!(body["reason"].as_str().is_some_and(|r| !r.is_empty()), "{request} -> {status}: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{request} -> {status}: {body}");
}

/// Every stored object of a collection as name and resourceVersion.
async fn stored(engine: &Arc<Engine>, collection: &str) -> Vec<(String, String)> {
    let list = send(engine, "GET", collection, "application/json", Vec::new()).await;
    assert_eq!(list.status, StatusCode::OK, "{}", String::from_utf8_lossy(&list.body));
    let items = list.json()["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .map(|i| {
            let meta = &i["metadata"];
            (meta["name"].as_str().unwrap_or("").into(), meta["resourceVersion"].as_str().unwrap_or("").into())
        })
        .collect()
}

fn recorded_body(prefix: &str) -> Value {
    let exchange = support::reference::load(prefix);
    serde_json::from_slice(&exchange.request.body.expect("a recorded body")).expect("json")
}

/// A fresh engine serving the recorded Widget CRD, with the recorded widget `w1` stored;
/// and that widget's body.
async fn widget_engine() -> (Arc<Engine>, Value) {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let crd = serde_json::to_vec(&recorded_body("06")).expect("json");
    let created = send(&engine, "POST", CRDS, "application/json", crd).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let widget = recorded_body("15");
    for _ in 0..500 {
        let served = send(&engine, "GET", WIDGETS, "application/json", Vec::new()).await;
        if served.status == StatusCode::OK {
            let body = serde_json::to_vec(&widget).expect("json");
            let created = send(&engine, "POST", WIDGETS, "application/json", body).await;
            assert_eq!(created.status, StatusCode::CREATED);
            return (engine, widget);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the Widget kind was never served");
}

#[tokio::test]
async fn mutated_crds_are_registered_or_refused_with_a_status_and_nothing_stored() {
    let engine = Engine::open(&crate::support::storage::test_storage()).await.expect("engine");
    let valid = recorded_body("06");
    let mut rng = Rng(0x0C_4D);
    let mut registered = 0;
    for round in 0..300 {
        let mut crd = valid.clone();
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut crd);
        }
        // A different name each round, where the mutation left one, so earlier
        // registrations do not turn every later one into a 409.
        if let Some(name) = crd.pointer_mut("/spec/names/plural").filter(|n| n.is_string()) {
            *name = json!(format!("widgets{round}"));
            if let Some(name) = crd.pointer_mut("/metadata/name").filter(|n| n.is_string()) {
                *name = json!(format!("widgets{round}.stable.example.com"));
            }
        }
        let before = stored(&engine, CRDS).await;
        let body = serde_json::to_vec(&crd).expect("json");
        let answer = send(&engine, "POST", CRDS, "application/json", body).await;
        let request = format!("round {round}: POST {crd}");
        check(&answer, &request);
        if answer.status.is_success() {
            registered += 1;
        } else {
            let after = stored(&engine, CRDS).await;
            // The CRD controller may have moved an earlier CRD's status meanwhile: compare names.
            let names = |s: &[(String, String)]| s.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
            assert_eq!(names(&before), names(&after), "{request} stored something");
        }
    }
    // Both outcomes were exercised, or the mutations were too tame or too wild to test much.
    assert!(registered > 10 && registered < 290, "{registered} of 300 mutated CRDs were registered");
}

#[tokio::test]
async fn mutated_crd_updates_apply_or_leave_the_registration_as_it_was() {
    let (engine, _) = widget_engine().await;
    let crd_uri = format!("{CRDS}/widgets.stable.example.com");
    let mut rng = Rng(0x0C_51);
    let mut outcomes = [0, 0];
    for round in 0..300 {
        let current = send(&engine, "GET", &crd_uri, "application/json", Vec::new()).await.json();
        let mut crd = current.clone();
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut crd);
        }
        let uri = format!("{crd_uri}{}", rng.pick(&["", "", "/status"]));
        let answer = send(&engine, "PUT", &uri, "application/json", serde_json::to_vec(&crd).expect("json")).await;
        let request = format!("round {round}: PUT {uri} {crd}");
        check(&answer, &request);
        outcomes[usize::from(answer.status.is_success())] += 1;
        if !answer.status.is_success() {
            // The controller may rewrite the status meanwhile; the spec is the request's alone.
            let after = send(&engine, "GET", &crd_uri, "application/json", Vec::new()).await.json();
            assert_eq!(current["spec"], after["spec"], "{request} changed the registration");
        }
    }
    assert!(outcomes[0] > 20 && outcomes[1] > 20, "refused / accepted: {outcomes:?}");
}

#[tokio::test]
async fn mutated_custom_resources_are_stored_or_refused_with_a_status_and_nothing_lost() {
    let (engine, valid) = widget_engine().await;
    let mut rng = Rng(0x0C_4E);
    let mut outcomes = [0, 0];
    for round in 0..400 {
        let before = stored(&engine, WIDGETS).await;
        let (method, uri, mut object) = if round % 2 == 0 {
            let mut object = valid.clone();
            object["metadata"]["name"] = json!(format!("m{round}"));
            ("POST", WIDGETS.to_string(), object)
        } else {
            // An update of w1 from what is stored, so the resourceVersion is current
            // unless the mutation changes it.
            let current = send(&engine, "GET", &format!("{WIDGETS}/w1"), "application/json", Vec::new()).await;
            let sub = *rng.pick(&["", "/status", "/scale"]);
            let mut object = current.json();
            if sub == "/scale" {
                let scale = send(&engine, "GET", &format!("{WIDGETS}/w1/scale"), "application/json", Vec::new()).await;
                object = scale.json();
            }
            ("PUT", format!("{WIDGETS}/w1{sub}"), object)
        };
        for _ in 0..=rng.below(3) {
            mutate(&mut rng, &mut object);
        }
        let answer = send(&engine, method, &uri, "application/json", serde_json::to_vec(&object).expect("json")).await;
        let request = format!("round {round}: {method} {uri} {object}");
        check(&answer, &request);
        outcomes[usize::from(answer.status.is_success())] += 1;
        if !answer.status.is_success() {
            assert_eq!(before, stored(&engine, WIDGETS).await, "{request} changed what is stored");
        }
    }
    assert!(outcomes[0] > 20 && outcomes[1] > 20, "refused / accepted: {outcomes:?}");
}

#[tokio::test]
async fn random_patches_apply_whole_or_leave_the_object_as_it_was() {
    let (engine, valid) = widget_engine().await;
    let mut rng = Rng(0x0C_4F);
    let paths = ["/spec/size", "/spec/color", "/spec", "/metadata/labels/app", "/metadata/name", "/status", "/spec/x"];
    let mut outcomes = [0, 0];
    for round in 0..400 {
        let sub = *rng.pick(&["", "", "/status", "/scale"]);
        let uri = format!("{WIDGETS}/w1{sub}?fieldManager=fuzz");
        let before = send(&engine, "GET", &format!("{WIDGETS}/w1"), "application/json", Vec::new()).await.json();
        let (content_type, body) = match rng.below(3) {
            0 => {
                let mut patch = json!({"spec": {"size": 4}, "metadata": {"labels": {"tier": "x"}}});
                mutate(&mut rng, &mut patch);
                ("application/merge-patch+json", serde_json::to_vec(&patch).expect("json"))
            }
            1 => {
                let ops: Vec<Value> = (0..=rng.below(3))
                    .map(|_| {
                        let mut op = json!({
                            "op": rng.pick(&["add", "remove", "replace", "move", "copy", "test", "bogus"]),
                            "path": rng.pick(&paths),
                            "from": rng.pick(&paths),
                            "value": random_value(&mut rng, 2),
                        });
                        if rng.below(4) == 0 {
                            mutate(&mut rng, &mut op);
                        }
                        op
                    })
                    .collect();
                ("application/json-patch+json", serde_json::to_vec(&ops).expect("json"))
            }
            _ => {
                let mut applied = valid.clone();
                mutate(&mut rng, &mut applied);
                // Apply takes YAML; JSON is YAML.
                ("application/apply-patch+yaml", serde_json::to_vec(&applied).expect("json"))
            }
        };
        let answer = send(&engine, "PATCH", &uri, content_type, body.clone()).await;
        let request = format!("round {round}: PATCH {uri} ({content_type}) {}", String::from_utf8_lossy(&body));
        check(&answer, &request);
        outcomes[usize::from(answer.status.is_success())] += 1;
        if !answer.status.is_success() {
            let after = send(&engine, "GET", &format!("{WIDGETS}/w1"), "application/json", Vec::new()).await.json();
            assert_eq!(before, after, "{request} changed the object");
        }
    }
    assert!(outcomes[0] > 20 && outcomes[1] > 20, "refused / accepted: {outcomes:?}");
}

#[tokio::test]
async fn random_paths_queries_and_bodies_are_answered_with_a_status() {
    let (engine, widget) = widget_engine().await;
    let mut rng = Rng(0x0C_50);
    let bases = [
        WIDGETS,
        "/apis/stable.example.com/v1/namespaces/default/widgets/w1",
        "/apis/stable.example.com/v1/namespaces/default/widgets/w1/status",
        "/apis/stable.example.com/v1/namespaces/default/widgets/w1/scale",
        "/apis/stable.example.com/v1/widgets",
        CRDS,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.stable.example.com",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.stable.example.com/status",
        "/api/v1/namespaces/default/configmaps",
        "/api/v1/namespaces",
        "/api/v1/namespaces/default",
        "/apis",
        "/api",
        "/apis/stable.example.com/v1",
        "/openapi/v2",
        "/openapi/v3",
        "/version",
    ];
    let segments = ["v2", "w2", "status", "scale", "..", "%2F", "", "x", "namespaces", "default"];
    let queries = [
        "labelSelector=app%3Ddemo",
        "labelSelector=a+in+(b,",
        "labelSelector=!",
        "labelSelector=a%3D%3D%3Db",
        "fieldSelector=metadata.name%3Dw1",
        "fieldSelector=spec.size%3D3",
        "fieldSelector=%3D",
        "limit=-1",
        "limit=abc",
        "limit=1&continue=garbage",
        "resourceVersion=abc",
        "resourceVersion=0&resourceVersionMatch=Exact",
        "resourceVersionMatch=Nope",
        "dryRun=Some",
        "dryRun=All",
        "fieldManager=",
        "fieldManager=fuzz&force=true",
        "fieldValidation=Bogus",
        "fieldValidation=Strict",
        "propagationPolicy=Sideways",
        "gracePeriodSeconds=-5",
        "includeObject=Maybe",
        "pretty=1",
    ];
    let content_types = [
        "application/json",
        "application/yaml",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/apply-patch+yaml",
        "application/strategic-merge-patch+json",
        "text/plain",
        "application/vnd.kubernetes.protobuf",
        "",
        "a/b;c",
    ];
    for round in 0..600 {
        let mut path: Vec<&str> = rng.pick(&bases).split('/').collect();
        match rng.below(6) {
            0 => path.push(*rng.pick(&segments)),
            1 => {
                let i = 1 + rng.below(path.len() - 1);
                path[i] = *rng.pick(&segments);
            }
            _ => {}
        }
        let mut uri = path.join("/");
        if rng.below(2) == 0 {
            uri = format!("{uri}?{}", rng.pick(&queries));
        }
        let mut method = *rng.pick(&["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]);
        // Deleting the CRD or a namespace empties the widgets in the background, which
        // would read as this request's doing; everything else may be deleted.
        if method == "DELETE" && path.iter().any(|s| *s == "customresourcedefinitions" || *s == "namespaces") {
            method = "GET";
        }
        let body = match rng.below(4) {
            0 => Vec::new(),
            1 => serde_json::to_vec(&random_value(&mut rng, 3)).expect("json"),
            2 => {
                let mut object = widget.clone();
                mutate(&mut rng, &mut object);
                serde_json::to_vec(&object).expect("json")
            }
            _ => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
        };
        let content_type = *rng.pick(&content_types);
        let before = stored(&engine, WIDGETS).await;
        let mut answer = send(&engine, method, &uri, content_type, body).await;
        if method == "HEAD" && answer.status == StatusCode::INTERNAL_SERVER_ERROR {
            // A HEAD's 500 has no body to say whether it is one of kube's own: the same
            // GET's says it.
            let get = send(&engine, "GET", &uri, content_type, Vec::new()).await;
            if get.status == StatusCode::INTERNAL_SERVER_ERROR {
                answer = get;
            }
        }
        let request = format!("round {round}: {method} {uri} ({content_type})");
        check(&answer, &request);
        if !answer.status.is_success() {
            assert_eq!(before, stored(&engine, WIDGETS).await, "{request} changed what is stored");
        } else if method == "DELETE" {
            // Bring w1 back (it may be what went), so later rounds have it to work on.
            let body = serde_json::to_vec(&widget).expect("json");
            check(&send(&engine, "POST", WIDGETS, "application/json", body).await, "recreating w1");
        }
    }
}
