//! TUI benchmark: time to the first frame of a 10,000-resource list on the local engine,
//! and frame time while scrolling 100,000 rows. Targets: < 100 ms and < 16 ms.
//!
//! The first frame is measured the way the TUI makes it: the resources screen's list+watch
//! reads the server's Table (through the cluster layer, over the engine's service in
//! process), the state takes it, and the frame is drawn. Frames go to a crossterm backend
//! writing into a sink (escape sequences encoded, nothing printed), so the figures include
//! ratatui's diffing and the terminal encoding but not a terminal emulator's own drawing.
//!
//! Run: `cargo bench --bench tui`.

#[path = "shared/allocator.rs"]
mod allocator;
#[path = "shared/screen.rs"]
mod screen;

use crossterm::event::{Event, KeyCode, KeyEvent};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DynamicObject, PostParams};
use kubectl_crd::cluster::demo;
use kubectl_crd::cluster::registrations::find_crd;
use kubectl_crd::cluster::tui_ops::resource_of;
use kubectl_crd::tui::action::Msg;
use kubectl_crd::tui::state::State;
use kubectl_crd::tui::table::{Column, ObjKey, Row, TableData};
use kubectl_crd::tui::watch::TableWatch;
use kubectl_crd::tui::{on_event, update, view};
use std::time::{Duration, Instant};

use screen::{HEIGHT, Term, WIDTH, local_engine, state, terminal};

fn draw(terminal: &mut Term, state: &mut State) {
    state.prepare();
    terminal.draw(|f| view::draw(f, state)).expect("draw");
}

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration, Duration) {
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    let p99 = samples[(samples.len() * 99 / 100).min(samples.len() - 1)];
    (mean, p99, samples[samples.len() - 1])
}

async fn first_frame_10k() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conn = local_engine(dir.path()).await;
    let client = conn.client().clone();
    demo::load(&client, |_| {}).await.expect("demo");
    let crd = find_crd(&client, "widgets").await.expect("widgets");
    let resource = resource_of(&crd).expect("served");
    let api: Api<DynamicObject> = resource.api(&client, Some("bench"));
    let started = Instant::now();
    futures::stream::iter(0..10_000)
        .map(|i| {
            let api = api.clone();
            async move {
                let obj: DynamicObject = serde_json::from_value(serde_json::json!({
                    "apiVersion": resource_api(&api), "kind": "Widget",
                    "metadata": {"name": format!("w-{i:05}"), "labels": {"app": "bench"}},
                    "spec": {"color": "red", "size": i % 10, "replicas": i % 5}
                }))
                .expect("widget");
                api.create(&PostParams::default(), &obj).await.expect("create")
            }
        })
        .buffer_unordered(16)
        .for_each(|_| async {})
        .await;
    println!("setup: 10,000 widgets created in {:.1} s", started.elapsed().as_secs_f64());

    let mut first = vec![];
    let mut all = vec![];
    for round in 0..10 {
        let mut s = state();
        let mut terminal = terminal();
        // The resources screen, as Enter on the widgets' detail opens it.
        update::apply(
            &mut s,
            Msg::Registrations(Ok(vec![kubectl_crd::tui::model::Registration::new(crd.clone(), Some(10_000))])),
        );
        on_event(&mut s, Event::Key(KeyEvent::from(KeyCode::Enter)));
        on_event(&mut s, Event::Key(KeyEvent::from(KeyCode::Enter)));
        let watch = s.next_watch;
        let started = Instant::now();
        let mut stream =
            TableWatch::new(client.clone(), resource.clone(), Some("bench".into()), None, watch).into_stream();
        let msg = stream.next().await.expect("the first page");
        assert!(matches!(&msg, Msg::Table { result: Ok(_), .. }), "no table: {msg:?}");
        update::apply(&mut s, msg);
        draw(&mut terminal, &mut s);
        let first_frame = started.elapsed();
        loop {
            let msg = stream.next().await.expect("more rows");
            let done = matches!(msg, Msg::Rows { done: true, .. });
            update::apply(&mut s, msg);
            if done {
                break;
            }
        }
        draw(&mut terminal, &mut s);
        let everything = started.elapsed();
        let kubectl_crd::tui::state::Screen::Resources(r) = s.screen() else { panic!("not on resources") };
        assert_eq!(r.table.total(), 10_000);
        if round > 0 {
            // The first round warms the engine's caches.
            first.push(first_frame);
            all.push(everything);
        }
    }
    let (mean, p99, max) = stats(first);
    println!(
        "first frame of the resources screen over 10,000 widgets on the local engine (first page as Table + draw): mean {:.1} ms, max {:.1} ms (p99 {:.1} ms); target < 100 ms",
        ms(mean),
        ms(max),
        ms(p99)
    );
    let (mean, _, max) = stats(all);
    println!("all 10,000 rows listed and drawn: mean {:.1} ms, max {:.1} ms", ms(mean), ms(max));
    drop(client);
    conn.close().await;
}

fn resource_api(api: &Api<DynamicObject>) -> String {
    // The API version is in the resource URL: /apis/<group>/<version>/...
    let url = api.resource_url();
    let parts: Vec<&str> = url.trim_start_matches('/').split('/').collect();
    format!("{}/{}", parts[1], parts[2])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn scroll_100k() {
    let mut s = state();
    let crd = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "widgets.demo.example.com"},
        "spec": {"group": "demo.example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true}]},
        "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "conditions": [{"type": "Established", "status": "True"}, {"type": "NamesAccepted", "status": "True"}]}
    }))
    .expect("crd");
    update::apply(&mut s, Msg::Registrations(Ok(vec![kubectl_crd::tui::model::Registration::new(crd, Some(100_000))])));
    // Enter on the CRD lists its objects.
    on_event(&mut s, Event::Key(KeyEvent::from(KeyCode::Enter)));
    let col = |name: &str, type_: &str| Column {
        name: name.into(),
        type_: type_.into(),
        format: String::new(),
        description: String::new(),
        priority: 0,
    };
    let created = Timestamp::now();
    let table = TableData {
        columns: vec![col("Name", "string"), col("Color", "string"), col("Replicas", "integer"), col("Age", "date")],
        rows: (0..100_000)
            .map(|i| Row {
                key: ObjKey::new(Some("bench"), &format!("w-{i:06}")),
                cells: vec![
                    format!("w-{i:06}"),
                    ["red", "green", "blue"][i % 3].into(),
                    (i % 7).to_string(),
                    "1m".into(),
                ],
                created: Some(created),
            })
            .collect(),
        remaining: 0,
    };
    let watch = s.next_watch;
    let started = Instant::now();
    update::apply(&mut s, Msg::Table { watch, result: Ok(table) });
    let mut terminal = terminal();
    draw(&mut terminal, &mut s);
    println!("100,000 rows: taken and first drawn in {:.1} ms", ms(started.elapsed()));

    let mut samples = vec![];
    let keys = [KeyCode::Down, KeyCode::Down, KeyCode::PageDown, KeyCode::Down, KeyCode::Up];
    for i in 0..5_000 {
        let started = Instant::now();
        on_event(&mut s, Event::Key(KeyEvent::from(keys[i % keys.len()])));
        draw(&mut terminal, &mut s);
        samples.push(started.elapsed());
    }
    let (mean, p99, max) = stats(samples);
    println!(
        "scrolling 100,000 rows ({WIDTH}x{HEIGHT}, 5,000 frames of key + draw): mean {:.3} ms, p99 {:.3} ms, max {:.3} ms; target < 16 ms",
        ms(mean),
        ms(p99),
        ms(max)
    );
    let started = Instant::now();
    on_event(&mut s, Event::Key(KeyEvent::from(KeyCode::Char('C'))));
    draw(&mut terminal, &mut s);
    println!("sorting 100,000 rows by a column and drawing: {:.1} ms", ms(started.elapsed()));
}

fn main() {
    // `cargo test --benches` runs this with `--bench`-less arguments; keep it quick then.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let args: Vec<String> = std::env::args().collect();
    let quick = std::env::var_os("TUI_QUICK").is_some() || args.iter().any(|a| a == "--quick");
    let only_scale = args.iter().any(|a| a == "scale");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    if !only_scale {
        scroll_100k();
        rt.block_on(first_frame_10k());
    }
    let crds = env_count("TUI_CRDS").unwrap_or(if quick { 200 } else { 2_000 });
    let objects = env_count("TUI_OBJECTS").unwrap_or(if quick { 50_000 } else { 1_000_000 });
    rt.block_on(many::crds(crds));
    rt.block_on(many::objects(objects));
}

fn env_count(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.replace([',', '_'], "").parse().ok()
}

/// Issue 31: the registrations screen with thousands of CRDs, and the resources screen on
/// a kind with very many objects (`cargo bench --bench tui -- scale`; `--quick` or
/// `TUI_QUICK=1` for 200 CRDs and 50,000 objects instead of 2,000 and 1,000,000;
/// `TUI_CRDS`, `TUI_OBJECTS` for other counts). Each figure is printed next to its target,
/// judged as a ratio to a floor measured in the same run (these machines vary 2× between
/// sessions, so a time alone proves nothing):
/// - the registrations' first frame: against one list of the first 100 CRDs alone (it must
///   wait for nothing else: no count, not the other CRDs); `GET /version` beside it;
/// - the resources' first frame: against the same first frame on a list of 1,000 (it must
///   not grow with the count);
/// - a frame while scrolling or while the rest of a list streams in: against the same
///   frame on a small list (no per-frame work in proportion to the rows);
/// - a regex filter: against one plain pass of the same regex over the same cells (the
///   least any filter does).
///
/// The absolute targets (100 ms, 16 ms, 200 ms) are printed beside, for the record.
///
/// Measured 2026-11-26 (2 cores shared with three other builds, load about 11), release:
/// 2,000 CRDs: first frame 3.1 ms (1.31× listing the first 100 alone; listing all 2,000
/// alone takes 68 ms), every CRD shown and counted after 263 ms, `kubectl crd list`'s wait
/// 286 ms, 0.60 ms a frame scrolling them (1.29× with 100). Quick mode, 50,000 objects:
/// first frame 10.5 ms (2.6× the first frame of 1,000: the same first page of 200, so the
/// engine's page from a larger namespace; 1.2× in an earlier run), all rows in 0.9 s with
/// no frame over 8 ms, 0.33 ms a frame scrolling (0.97×), a regex filter 5.3 ms (2.3× a
/// plain pass of the regex; 1.6× in an earlier run), resident memory 1.7 KB a row while
/// the list streams (list buffers included). Full mode, 1,000,000 objects (same session):
/// 0.33 ms a frame scrolling (1.02× with 1,000, met); the regex filter 115 ms (3.3× a plain
/// pass, missed; under the 200 ms); first frame 97 ms (32× with 1,000, missed: the
/// engine's first page of 200 out of a million); all rows in 22 s with one frame of 478 ms
/// meanwhile (missed: most likely the row index's HashMap growing past a million keys,
/// which a capacity from `remainingItemCount` would avoid); 770 bytes a row resident; a
/// sort by a column 1.35 s.
///
/// Then the table takes its size from the first page's `remainingItemCount` (same day, 20:30,
/// load about 6): filling the table alone with 1,000,000 rows in pages of 500, the slowest
/// page (added and prepared) took 420 ms without the count (the index and the slots doubling
/// past 917,504 rows) and 6.6 ms with it.
///
/// Full mode again (2026-11-27, 17:42 and 17:50, the machine quiet, release): 2,000 CRDs:
/// first frame 1.90 ms (1.25× the first 100 alone, met), all shown and counted in 91 ms,
/// `kubectl crd list`'s wait 47 ms, 0.44 ms a frame scrolling (1.09×, met). 1,000,000
/// objects: first frame 2.87 ms (1.20× with 1,000, met; 32× in the run above), 0.33 ms a
/// frame scrolling (1.07×, met), the regex filter 56 ms (1.67× a plain pass, met; was
/// 3.3×), all rows in 9.4 s (was 22), 783 bytes a row. The
/// slowest frame while they stream in was 17.8 ms in one run (58× a frame scrolling 1,000,
/// missed) and 11.9 ms in the other (35×, met). The slow frames were pages of 5,000 rows
/// applied at once, 0.7 µs a row late in the load and up to 2.5 µs in its first pages (12.7
/// ms for the rows after the first 200, then 9.7, 8.5, ..., 3–4 ms from 60,000 rows on).
/// Pages of 2,000 did not help: the slowest frame was 23 ms, and the first frame 1.86× in
/// that run. The slowest of some 2,000 frames on two cores shared with the in-process
/// engine streaming the next page is mostly the scheduler's.
mod many {
    use super::{Term, draw, local_engine, ms, state, stats, terminal};
    use crossterm::event::{Event, KeyCode, KeyEvent};
    use futures::StreamExt;
    use kube::api::{Api, DynamicObject, PostParams};
    use kubectl_crd::cluster::counts::list_crds_with_counts;
    use kubectl_crd::cluster::registrations::{Crd, ESTABLISHED, condition, find_crd};
    use kubectl_crd::cluster::tui_ops::resource_of;
    use kubectl_crd::cluster::{ResourceType, demo};
    use kubectl_crd::tui::action::{Effect, Msg};
    use kubectl_crd::tui::crd_watch::crd_changes;
    use kubectl_crd::tui::runtime::{perform, spawn};
    use kubectl_crd::tui::state::{Screen, State};
    use kubectl_crd::tui::watch::TableWatch;
    use kubectl_crd::tui::{on_event, update};
    use std::time::{Duration, Instant};

    fn key(s: &mut State, code: KeyCode) {
        on_event(s, Event::Key(KeyEvent::from(code)));
    }

    /// The median of `GET /version` through `client`: a round trip's floor.
    async fn round_trip(client: &kube::Client) -> Duration {
        let mut samples = vec![];
        for _ in 0..200 {
            let started = Instant::now();
            client.apiserver_version().await.expect("version");
            samples.push(started.elapsed());
        }
        samples.sort();
        samples[samples.len() / 2]
    }

    fn judged(what: &str, d: Duration, floor: Duration, floor_name: &str, target: f64, absolute: &str) {
        let ratio = d.as_secs_f64() / floor.as_secs_f64().max(1e-9);
        let verdict = if ratio <= target { "met" } else { "MISSED" };
        println!(
            "  {what}: {:.2} ms = {ratio:.2}× {floor_name} ({:.3} ms); target ≤ {target}× ({verdict}); issue: {absolute}",
            ms(d),
            ms(floor)
        );
    }

    fn small_crd(i: usize) -> serde_json::Value {
        let (plural, kind, group) =
            (format!("kind{i:04}s"), format!("Kind{i:04}"), format!("g{:03}.scale.example.com", i / 10));
        serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": plural, "singular": format!("kind{i:04}"), "kind": kind},
                "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"size": {"type": "integer"}, "color": {"type": "string"}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
                    "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}]}
        })
    }

    async fn all_established(client: &kube::Client, n: usize) {
        let api: Api<Crd> = Api::all(client.clone());
        let started = Instant::now();
        loop {
            let list = api.list(&Default::default()).await.expect("crds");
            let ready =
                list.items.iter().filter(|c| condition(c, ESTABLISHED).is_some_and(|c| c.status == "True")).count();
            if ready >= n {
                println!("setup: {n} CRDs Established in {:.1} s", started.elapsed().as_secs_f64());
                return;
            }
            assert!(started.elapsed() < Duration::from_secs(1800), "{ready} of {n} Established after 30 min");
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The median of five lists of the CRDs through `client` (`limit` of them, or all),
    /// decoded as the TUI decodes them: the least a screen of them costs.
    async fn crd_list(client: &kube::Client, limit: Option<u32>) -> Duration {
        let api: Api<Crd> = Api::all(client.clone());
        let params = kube::api::ListParams { limit, ..Default::default() };
        let mut samples = vec![];
        for _ in 0..5 {
            let started = Instant::now();
            api.list(&params).await.expect("crds");
            samples.push(started.elapsed());
        }
        samples.sort();
        samples[samples.len() / 2]
    }

    /// The registrations screen: CRDs listed, state taken, drawn; then the counts that
    /// follow, each applied as it comes.
    async fn registrations_first_frame(
        client: &kube::Client,
        terminal: &mut Term,
        n: usize,
    ) -> (Duration, Duration, Duration, State) {
        // The floor in the same conditions (right after the last round's watch and counts).
        let page_floor = crd_list(client, Some(100)).await;
        let mut s = state();
        let started = Instant::now();
        let msg = perform(client, Effect::LoadRegistrations).await.expect("registrations");
        let effects = update::apply(&mut s, msg);
        draw(terminal, &mut s);
        let first = started.elapsed();
        // Then as the TUI's loop goes on: the CRD watch (whose list brings the CRDs after
        // the first page) and the counts, each message applied, frames paced.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut watch = None;
        run_effects(client, &tx, effects, &mut watch);
        let mut last_frame = Instant::now();
        let done = |s: &State| s.registrations.items.len() == n && s.registrations.items.iter().all(|r| !r.counting);
        while !done(&s) {
            let msg = match watch.as_mut() {
                Some(w) => tokio::select! {
                    Some(m) = rx.recv() => m,
                    Some(m) = w.next() => m,
                },
                None => rx.recv().await.expect("a count"),
            };
            let effects = update::apply(&mut s, msg);
            run_effects(client, &tx, effects, &mut watch);
            if last_frame.elapsed() >= kubectl_crd::tui::pacing::FRAME {
                draw(terminal, &mut s);
                last_frame = Instant::now();
            }
        }
        draw(terminal, &mut s);
        (page_floor, first, started.elapsed(), s)
    }

    /// The effects the registrations screen asks for, run as the TUI's loop runs them.
    fn run_effects(
        client: &kube::Client,
        tx: &tokio::sync::mpsc::UnboundedSender<Msg>,
        effects: Vec<Effect>,
        watch: &mut Option<futures::stream::BoxStream<'static, Msg>>,
    ) {
        for effect in effects {
            match effect {
                Effect::CountResources(_) => spawn(client, tx, effect),
                Effect::WatchRegistrations if watch.is_none() => *watch = Some(crd_changes(client.clone())),
                _ => {}
            }
        }
    }

    /// Key + draw frames on whatever list `s` shows: mean and p99.
    fn scroll(s: &mut State, terminal: &mut Term, frames: usize) -> (Duration, Duration) {
        let keys = [KeyCode::Down, KeyCode::Down, KeyCode::PageDown, KeyCode::Down, KeyCode::Up];
        let mut samples = vec![];
        for i in 0..frames {
            let started = Instant::now();
            key(s, keys[i % keys.len()]);
            draw(terminal, s);
            samples.push(started.elapsed());
        }
        let (mean, p99, _) = stats(samples);
        (mean, p99)
    }

    pub async fn crds(n: usize) {
        println!("\n{n} CRDs (registrations screen, kubectl crd list):");
        let dir = tempfile::tempdir().expect("tempdir");
        let conn = local_engine(dir.path()).await;
        let client = conn.client().clone();
        let api: Api<Crd> = Api::all(client.clone());
        let started = Instant::now();
        futures::stream::iter(0..n)
            .for_each_concurrent(16, |i| {
                let api = api.clone();
                async move {
                    let crd: Crd = serde_json::from_value(small_crd(i)).expect("crd");
                    api.create(&PostParams::default(), &crd).await.expect("create crd");
                }
            })
            .await;
        println!("setup: {n} CRDs created in {:.1} s", started.elapsed().as_secs_f64());
        all_established(&client, n).await;
        let floor = round_trip(&client).await;

        let mut terminal = terminal();
        let (mut floors, mut firsts, mut filled) = (vec![], vec![], vec![]);
        let mut last = None;
        for round in 0..6 {
            let (page_floor, first, all, s) = registrations_first_frame(&client, &mut terminal, n).await;
            if round > 0 {
                floors.push(page_floor);
                firsts.push(first);
                filled.push(all);
            }
            last = Some(s);
        }
        let (first, _, _) = stats(firsts);
        let (all, _, _) = stats(filled);
        let (page_floor, _, _) = stats(floors);
        let whole = crd_list(&client, None).await;
        judged(
            "first frame of the registrations (a first page of CRDs listed + drawn, counts pending)",
            first,
            page_floor,
            "one list of the first 100 CRDs alone",
            1.5,
            "≤ 100 ms",
        );
        println!(
            "    (for the record: {:.0}× GET /version, {:.3} ms; listing all {n} CRDs alone takes {:.1} ms, the least a screen waiting for all of them would wait)",
            first.as_secs_f64() / floor.as_secs_f64(),
            ms(floor),
            ms(whole)
        );
        println!(
            "  every CRD shown and counted (the watch's list brings those after the first page; one limit=1 list per CRD, 8 at a time; frames paced): {:.1} ms = {:.1}× GET /version",
            ms(all),
            all.as_secs_f64() / floor.as_secs_f64()
        );
        let started = Instant::now();
        let counted = list_crds_with_counts(&client).await.expect("counts");
        assert_eq!(counted.len(), n);
        let cli = started.elapsed();
        println!(
            "  kubectl crd list's wait (CRDs and every count, then one table): {:.1} ms = {:.1}× GET /version",
            ms(cli),
            cli.as_secs_f64() / floor.as_secs_f64()
        );

        // Scrolling: the same screen with 100 CRDs (more than a screenful) is the floor.
        let mut s = last.expect("a round");
        let (mean, p99) = scroll(&mut s, &mut terminal, 2_000);
        let mut few = state();
        let regs: Vec<_> = s.registrations.items.iter().take(100).cloned().collect();
        update::apply(&mut few, Msg::Registrations(Ok(regs)));
        let (floor_mean, _) = scroll(&mut few, &mut terminal, 2_000);
        judged(
            &format!("a frame scrolling {n} registrations (key + draw, mean; p99 {:.2} ms)", ms(p99)),
            mean,
            floor_mean,
            "the same with 100 (more than a screen, as many rows drawn)",
            1.5,
            "≤ 16 ms",
        );
        drop(client);
        conn.close().await;
    }

    /// Creates `n` widgets in namespace `ns`, `size` set so the rows differ.
    async fn create_widgets(api: &Api<DynamicObject>, n: usize) {
        futures::stream::iter(0..n)
            .for_each_concurrent(32, |i| {
                let api = api.clone();
                async move {
                    let color = ["red", "green", "blue"][i % 3];
                    let obj: DynamicObject = serde_json::from_value(serde_json::json!({
                        "apiVersion": "demo.example.com/v1", "kind": "Widget",
                        "metadata": {"name": format!("w-{i:07}")},
                        "spec": {"color": color, "size": i % 10, "replicas": i % 5}
                    }))
                    .expect("widget");
                    api.create(&PostParams::default(), &obj).await.expect("create");
                }
            })
            .await;
    }

    /// The resources screen of `kind` in `ns`: its first page drawn (timed), then every
    /// page after it taken and drawn (the slowest such frame is returned).
    async fn resources(
        client: &kube::Client,
        (crd, kind): (&Crd, &ResourceType),
        ns: &str,
        expected: usize,
        terminal: &mut Term,
    ) -> (Duration, Duration, Duration, State) {
        let mut s = state();
        let reg = kubectl_crd::tui::model::Registration::new(crd.clone(), None);
        update::apply(&mut s, Msg::Registrations(Ok(vec![reg])));
        key(&mut s, KeyCode::Enter);
        let watch = s.next_watch;
        let started = Instant::now();
        let mut stream = TableWatch::new(client.clone(), kind.clone(), Some(ns.into()), None, watch).into_stream();
        let msg = stream.next().await.expect("the first page");
        assert!(matches!(&msg, Msg::Table { result: Ok(_), .. }), "no table: {msg:?}");
        update::apply(&mut s, msg);
        draw(terminal, &mut s);
        let first = started.elapsed();
        let mut slowest = Duration::ZERO;
        while rows_of(&s) < expected {
            let msg = stream.next().await.expect("more rows");
            let frame = Instant::now();
            update::apply(&mut s, msg);
            draw(terminal, &mut s);
            slowest = slowest.max(frame.elapsed());
        }
        (first, slowest, started.elapsed(), s)
    }

    /// This process's resident memory.
    fn resident_mib() -> f64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:"));
        kib.and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok()).unwrap_or(0.0) / 1024.0
    }

    /// The small list the big one is judged against: more than the first page, so both
    /// first frames do the same work but for the list's length.
    const SMALL: usize = 1_000;

    fn rows_of(s: &State) -> usize {
        let Screen::Resources(r) = s.screen() else { panic!("not on resources") };
        r.table.total()
    }

    pub async fn objects(n: usize) {
        println!("\n{n} objects of one kind (resources screen):");
        let dir = tempfile::tempdir().expect("tempdir");
        let conn = local_engine(dir.path()).await;
        let client = conn.client().clone();
        demo::load(&client, |_| {}).await.expect("demo");
        let crd = find_crd(&client, "widgets").await.expect("widgets");
        let kind = resource_of(&crd).expect("served");
        let started = Instant::now();
        create_widgets(&kind.api(&client, Some("bench")), n).await;
        println!("setup: {n} widgets created in {:.1} s", started.elapsed().as_secs_f64());
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
        let small: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": "small"}})).expect("ns");
        namespaces.create(&PostParams::default(), &small).await.expect("namespace");
        create_widgets(&kind.api(&client, Some("small")), SMALL).await;
        let floor = round_trip(&client).await;

        let mut terminal = terminal();
        let (mut firsts, mut small_firsts) = (vec![], vec![]);
        let (mut slowest, mut whole) = (Duration::ZERO, vec![]);
        let (mut big, mut few) = (None, None);
        let before = resident_mib();
        for round in 0..4 {
            let (first, slow, all, s) = resources(&client, (&crd, &kind), "bench", n, &mut terminal).await;
            assert_eq!(rows_of(&s), n);
            if round == 0 {
                let grown = resident_mib() - before;
                println!(
                    "  resident memory grew {grown:.0} MiB while the screen took {n} rows ({:.0} bytes a row, list buffers included; the engine's own copy was there before)",
                    grown * 1024.0 * 1024.0 / n as f64
                );
            }
            let (small_first, _, _, f) = resources(&client, (&crd, &kind), "small", SMALL, &mut terminal).await;
            assert_eq!(rows_of(&f), SMALL);
            if round > 0 {
                firsts.push(first);
                small_firsts.push(small_first);
                slowest = slowest.max(slow);
                whole.push(all);
            }
            (big, few) = (Some(s), Some(f));
        }
        let (first, _, _) = stats(firsts);
        let (small_first, _, _) = stats(small_firsts);
        judged(
            &format!("first frame of {n} (first page as Table + draw)"),
            first,
            small_first,
            "the first frame of 1,000",
            1.5,
            "≤ 100 ms",
        );
        println!(
            "    (for the record: {:.0}× GET /version, {:.3} ms)",
            first.as_secs_f64() / floor.as_secs_f64(),
            ms(floor)
        );
        let (all, _, _) = stats(whole);
        println!(
            "  all {n} rows listed and drawn page by page: {:.0} ms; the slowest frame meanwhile {:.2} ms",
            ms(all),
            ms(slowest)
        );
        let (mut big, mut few) = (big.expect("big"), few.expect("few"));
        let (small_mean, _) = scroll(&mut few, &mut terminal, 2_000);
        let (mean, p99) = scroll(&mut big, &mut terminal, 2_000);
        judged(
            &format!("a frame scrolling {n} rows (key + draw, mean; p99 {:.2} ms)", ms(p99)),
            mean,
            small_mean,
            "the same with 1,000",
            1.5,
            "≤ 16 ms",
        );
        judged(
            &format!("the slowest frame while {n} rows streamed in"),
            slowest,
            small_mean,
            "a frame scrolling 1,000",
            50.0,
            "≤ 16 ms",
        );

        // A regex typed after `/` and Enter, drawn; against the same regex over every cell.
        let pattern = "w-00012";
        let started = Instant::now();
        key(&mut big, KeyCode::Char('/'));
        for c in pattern.chars() {
            key(&mut big, KeyCode::Char(c));
        }
        key(&mut big, KeyCode::Enter);
        draw(&mut terminal, &mut big);
        let filtered = started.elapsed();
        let Screen::Resources(r) = big.screen() else { panic!("not on resources") };
        assert!(r.table.shown() > 0 && r.table.shown() < n, "{} shown", r.table.shown());
        let regex = regex::Regex::new(&format!("(?i){pattern}")).expect("regex");
        let cells: Vec<Vec<String>> = (0..n)
            .map(|i| {
                vec![
                    format!("w-{i:07}"),
                    "bench".into(),
                    "red".into(),
                    "3".into(),
                    "4m".into(),
                    "True".into(),
                    "Ready=True".into(),
                ]
            })
            .collect();
        let started = Instant::now();
        let hits = cells.iter().filter(|row| row.iter().any(|c| regex.is_match(c))).count();
        let plain = started.elapsed();
        assert!(hits > 0);
        judged(
            &format!("filtering {n} rows by a regex (keys + Enter + draw)"),
            filtered,
            plain,
            "one plain pass of the regex over as many cells",
            2.0,
            "≤ 200 ms",
        );
        let started = Instant::now();
        key(&mut big, KeyCode::Esc);
        key(&mut big, KeyCode::Char('C'));
        draw(&mut terminal, &mut big);
        println!(
            "  sorting {n} rows by a column and drawing: {:.0} ms (for the record: a sort is asked for, once)",
            ms(started.elapsed())
        );
        drop(client);
        conn.close().await;
    }
}
