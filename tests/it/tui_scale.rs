//! Many CRDs and many objects in the TUI's IO half, against a real engine (in memory,
//! through `kube::Client`) whose requests a wrapper writes down or holds (issue 31):
//! counts are one `limit=1` list each, never a whole collection; the registrations come
//! before any count; the resources list's first page reaches the screen while the rest of
//! the list is held back at the server.

use futures::StreamExt;
use kube::api::{Api, DynamicObject, PostParams};
use kubectl_crd::cluster::counts::CountTarget;
use kubectl_crd::cluster::registrations::find_crd;
use kubectl_crd::cluster::tui_ops::resource_of;
use kubectl_crd::cluster::{Connection, demo};
use kubectl_crd::tui::action::{Effect, Msg};
use kubectl_crd::tui::runtime::{perform, spawn};
use kubectl_crd::tui::watch::TableWatch;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// A client that writes down each request (`METHOD path?query`) and, when `held` is
/// given, holds every request for a list's next page (`continue=`) until it has a permit.
fn watched(inner: kube::Client, held: Option<Arc<Semaphore>>) -> (kube::Client, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(vec![]));
    let log = seen.clone();
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let inner = inner.clone();
        let held = held.clone().filter(|_| req.uri().query().is_some_and(|q| q.contains("continue=")));
        log.lock().expect("log").push(format!("{} {}", req.method(), req.uri()));
        async move {
            let _permit = match &held {
                Some(gate) => Some(gate.acquire().await.expect("gate open")),
                None => None,
            };
            inner.send(req).await
        }
    });
    (kube::Client::new(service, "default"), seen)
}

/// Waits for the next message, long enough for a loaded machine; never a figure.
async fn next<T>(what: &str, f: impl std::future::Future<Output = Option<T>>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f).await.unwrap_or_else(|_| panic!("no {what}")).expect(what)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_registrations_come_before_their_counts_which_are_one_limit_1_list_each() {
    let conn = Connection::in_memory(None).await.expect("engine");
    demo::load(conn.client(), |_| {}).await.expect("demo");
    let (client, seen) = watched(conn.client().clone(), None);

    let Some(Msg::Registrations(Ok(regs))) = perform(&client, Effect::LoadRegistrations).await else {
        panic!("no registrations")
    };
    assert_eq!(seen.lock().expect("log").len(), 1, "the CRDs alone: {:?}", seen.lock());
    let served: Vec<_> = regs.iter().filter(|r| r.resource.is_some()).collect();
    assert!(served.len() >= 3 && served.iter().all(|r| r.counting && r.count().is_none()), "{regs:?}");
    // The terminating registration's resources are still going while it terminates: wait
    // for the one its finalizer holds, so that the count and the list below see the same.
    if let Some(terminating) = served.iter().find(|r| r.name() == demo::TERMINATING_CRD) {
        let api = terminating.resource.clone().expect("served").api(conn.client(), None);
        let held = async {
            while api.list(&Default::default()).await.expect("list").items.len() > 1 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Some(())
        };
        next("the terminating resources gone", held).await;
    }

    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let targets = served.iter().filter_map(|r| CountTarget::of(&r.crd)).collect();
    spawn(&client, &tx, Effect::CountResources(targets));
    let mut counted = std::collections::HashMap::new();
    while counted.len() < served.len() {
        match next("count", rx.recv()).await {
            Msg::Counted { crd, count } => counted.insert(crd, count),
            other => panic!("{other:?}"),
        };
    }
    // Each count is what a whole list holds, read from one list of one item.
    for r in &served {
        let kind = r.resource.clone().expect("served");
        let all = kind.api(conn.client(), None).list(&Default::default()).await.expect("list");
        assert_eq!(counted[r.name()], Some(all.items.len() as u64), "{}", r.name());
    }
    let widgets = served.iter().find(|r| r.name() == "widgets.demo.example.com").expect("widgets");
    assert!(counted[widgets.name()] > Some(1), "more than one, so remainingItemCount was read");
    let requests = seen.lock().expect("log").clone();
    let counts: Vec<&String> = requests.iter().skip(1).collect();
    assert_eq!(counts.len(), served.len(), "one request per CRD: {requests:#?}");
    let limit_1 = |r: &str| r.split(['?', '&']).any(|p| p == "limit=1");
    assert!(counts.iter().all(|r| limit_1(r)), "{counts:#?}");

    // With more CRDs than a first page, the screen gets the first page (the watch brings the
    // rest), from one request.
    let crds: Api<kubectl_crd::cluster::registrations::Crd> = Api::all(conn.client().clone());
    for i in 0..120 {
        let crd = serde_json::from_value(serde_json::json!({
            "metadata": {"name": format!("kind{i:03}s.many.example.com")},
            "spec": {"group": "many.example.com", "scope": "Namespaced",
                "names": {"plural": format!("kind{i:03}s"), "kind": format!("Kind{i:03}")},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
        }))
        .expect("crd");
        crds.create(&PostParams::default(), &crd).await.expect("create crd");
    }
    seen.lock().expect("log").clear();
    let Some(Msg::FirstRegistrations(page)) = perform(&client, Effect::LoadRegistrations).await else {
        panic!("not a first page")
    };
    assert!(page.len() >= 50 && page.len() < 120, "{} CRDs in the first page", page.len());
    assert_eq!(seen.lock().expect("log").len(), 1, "one request: {:?}", seen.lock());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_page_is_shown_while_the_rest_of_the_list_is_held_at_the_server() {
    let conn = Connection::in_memory(None).await.expect("engine");
    demo::load(conn.client(), |_| {}).await.expect("demo");
    let crd = find_crd(conn.client(), "widgets").await.expect("widgets");
    let kind = resource_of(&crd).expect("served");
    let api: Api<DynamicObject> = kind.api(conn.client(), Some("bulk"));
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(conn.client().clone());
    let bulk = serde_json::from_value(serde_json::json!({"metadata": {"name": "bulk"}})).expect("ns");
    ns.create(&PostParams::default(), &bulk).await.expect("namespace");
    futures::stream::iter(0..600)
        .for_each_concurrent(16, |i| {
            let api = api.clone();
            async move {
                let obj = serde_json::from_value(serde_json::json!({
                    "apiVersion": "demo.example.com/v1", "kind": "Widget",
                    "metadata": {"name": format!("w-{i:04}")}, "spec": {"color": "red", "size": 1}
                }))
                .expect("widget");
                api.create(&PostParams::default(), &obj).await.expect("create");
            }
        })
        .await;

    let gate = Arc::new(Semaphore::new(0));
    let (client, seen) = watched(conn.client().clone(), Some(gate.clone()));
    let mut stream = TableWatch::new(client, kind, Some("bulk".into()), None, 1).into_stream();
    let Msg::Table { result: Ok(first), .. } = next("first page", stream.next()).await else { panic!("no table") };
    assert!(!first.rows.is_empty() && first.rows.len() < 600, "a first page: {} rows", first.rows.len());
    // The server's count of the rest comes with it, so the table is sized once.
    assert_eq!(first.remaining as usize, 600 - first.rows.len(), "remainingItemCount");

    // The screen shows it while the next page waits at the server.
    let screen = first_frame(crd, first.clone());
    assert!(
        screen.contains("w-0000") && screen.contains(&format!("[{}/{}]", first.rows.len(), first.rows.len())),
        "{screen}"
    );
    let more = tokio::spawn(async move {
        let mut rows = first.rows.len();
        loop {
            match stream.next().await {
                Some(Msg::Rows { rows: page, done, .. }) => {
                    rows += page.len();
                    if done {
                        return rows;
                    }
                }
                other => panic!("{other:?}"),
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!more.is_finished(), "the rest waits for the held page");
    assert!(seen.lock().expect("log").iter().any(|r| r.contains("continue=")), "page 2 was asked for");
    gate.add_permits(1_000);
    assert_eq!(next("the rest", async { more.await.ok() }).await, 600);
}

/// The resources screen of `crd` drawn with the first page of its list, as text.
fn first_frame(crd: kubectl_crd::cluster::registrations::Crd, page: kubectl_crd::tui::table::TableData) -> String {
    use crossterm::event::{Event, KeyCode, KeyEvent};
    use kubectl_crd::tui::state::{Connection as Conn, Namespaces, State, Target};
    let target =
        Target { connection: Conn::Local, context: "local".into(), server: "test".into(), shell: "kubectl crd".into() };
    let now = k8s_openapi::jiff::Timestamp::now();
    let theme = kubectl_crd::tui::theme::Theme { color: false };
    let mut s = State::new(target, Namespaces::One("bulk".into()), false, theme, now);
    s.size = (160, 40);
    let reg = kubectl_crd::tui::model::Registration::new(crd, None);
    kubectl_crd::tui::update::apply(&mut s, Msg::Registrations(Ok(vec![reg])));
    // Enter on the CRD opens its resources.
    kubectl_crd::tui::on_event(&mut s, Event::Key(KeyEvent::from(KeyCode::Enter)));
    let watch = s.next_watch;
    kubectl_crd::tui::update::apply(&mut s, Msg::Table { watch, result: Ok(page) });
    s.prepare();
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(160, 40)).expect("terminal");
    terminal.draw(|f| kubectl_crd::tui::view::draw(f, &s)).expect("draw");
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}
