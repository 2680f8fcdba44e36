//! `cargo bench --bench events`: whether the TUI's event stream (`w`) keeps up with 1,000
//! changes a second on one kind, as issue 29 asks, and whether its memory stays bounded.
//!
//! End to end on the local engine: a writer patches 100 widgets 1,000 times a second (two
//! field managers taking turns), the event stream's own watch ([`EventWatch`]) brings the
//! changes, and a loop shaped like the TUI's (wait for a message; apply it and every one
//! already waiting; draw when the TUI's [`Pacer`] says: at most 60 frames a second for
//! changes) applies them to the screen's state and draws on a 160×50 crossterm backend
//! writing into a sink. Each patch carries its write
//! time, so the delay from write to the event on screen is measured per event.
//!
//! Printed: changes written and shown per second, frames per second (target: never below
//! 30 — the worst one-second window is printed; at most 60 by design), frame time, write→screen delay (p50,
//! p99, max), and memory: the resident set after the log first fills to its bound and at
//! the end, with the events kept (their bound is `EVENT_LIMIT`). Beside them, the loop's
//! capacity measured in the same run on the same events without the server: events
//! applied per second with a frame after every 1,000/30 of them, as a ratio to the 1,000/s
//! asked. Figures only; the asserts are of correctness (every change arrives, the log
//! stays within its bound).

#[path = "shared/allocator.rs"]
mod allocator;
#[path = "shared/screen.rs"]
mod screen;
#[path = "shared/widget.rs"]
mod widget;

use futures::{FutureExt as _, StreamExt};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kubectl_crd::cluster::registrations::{Establishment, find_crd, wait_for_established};
use kubectl_crd::cluster::tui_ops::resource_of;
use kubectl_crd::cluster::watch::{ObjectEvent, ObjectEventType, Watching};
use kubectl_crd::tui::action::Msg;
use kubectl_crd::tui::event_watch::EventWatch;
use kubectl_crd::tui::events::{EVENT_LIMIT, EventsScreen};
use kubectl_crd::tui::pacing::Pacer;
use kubectl_crd::tui::state::{Screen, State};
use kubectl_crd::tui::{update, view};
use screen::{local_engine, state, terminal};
use serde_json::json;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const OBJECTS: usize = 100;
const RATE: u64 = 1_000;
const SECONDS: u64 = 15;
const STREAM: u64 = 1;

/// The event stream of the widgets in `bench`, open.
fn events_state(kind: kubectl_crd::cluster::ResourceType) -> State {
    let mut s = state();
    let what = Watching { namespace: Some("bench".into()), name: None, label_selector: None };
    s.stack.push(Screen::Events(Box::new(EventsScreen::new(kind, what, STREAM))));
    s
}

fn now_nanos() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

fn resident_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

fn kept(s: &State) -> usize {
    match s.screen() {
        Screen::Events(e) => e.log.len(),
        _ => 0,
    }
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    sorted.get((sorted.len() * p / 100).min(sorted.len().saturating_sub(1))).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Patches widgets at `RATE` a second for `SECONDS`; returns how many it wrote.
async fn write(api: Api<DynamicObject>) -> u64 {
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / RATE));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let total = RATE * SECONDS;
    for i in 0..total {
        tick.tick().await;
        let manager = if i.is_multiple_of(2) { "bench-a" } else { "bench-b" };
        let name = format!("w-{:05}", i as usize % OBJECTS);
        let body = json!({"spec": {"size": i % 10, "note": now_nanos().to_string()}});
        api.patch(&name, &PatchParams::apply(manager), &Patch::Merge(&body)).await.expect("patch");
    }
    total
}

/// The write time a change carries.
fn written_at(msg: &Msg) -> Option<u128> {
    let Msg::ObjectEvent { event: Ok(e), .. } = msg else { return None };
    if e.type_ != ObjectEventType::Modified {
        return None;
    }
    e.object.pointer("/spec/note")?.as_str()?.parse().ok()
}

struct Live {
    frames: Vec<Instant>,
    frame_times: Vec<Duration>,
    delays: Vec<Duration>,
    shown: u64,
    rss_full: f64,
    rss_end: f64,
    kept: usize,
    written: u64,
    took: Duration,
}

/// The TUI's loop over the event stream's watch while the writer runs; the writer starts
/// once the watch has brought every object's ADDED.
async fn live(client: kube::Client, kind: kubectl_crd::cluster::ResourceType, api: Api<DynamicObject>) -> Live {
    let mut s = events_state(kind.clone());
    let mut terminal = terminal();
    let what = Watching { namespace: Some("bench".into()), name: None, label_selector: None };
    let mut stream = EventWatch::new(client, kind, what, STREAM).into_stream();
    for _ in 0..OBJECTS {
        let added = stream.next().await.expect("ADDED");
        update::apply(&mut s, added);
    }
    let writes = RATE * SECONDS;
    let writer = tokio::spawn(write(api));
    let started = Instant::now();
    let mut out = Live {
        frames: vec![],
        frame_times: vec![],
        delays: vec![],
        shown: 0,
        rss_full: 0.0,
        rss_end: 0.0,
        kept: 0,
        written: 0,
        took: Duration::ZERO,
    };
    let deadline = Instant::now() + Duration::from_secs(SECONDS + 20);
    let mut pacer = Pacer::default();
    pacer.input();
    while out.shown < writes && Instant::now() < deadline {
        if pacer.due(Instant::now()) {
            let drawn = Instant::now();
            s.prepare();
            terminal.draw(|f| view::draw(f, &s)).expect("draw");
            pacer.drawn(Instant::now());
            out.frame_times.push(drawn.elapsed());
            out.frames.push(drawn);
        }
        let held = pacer.deadline();
        let first = tokio::select! {
            next = tokio::time::timeout(Duration::from_secs(5), stream.next()) => match next {
                Ok(Some(first)) => first,
                _ => break,
            },
            _ = tokio::time::sleep_until(held.unwrap_or(deadline).into()), if held.is_some() => continue,
        };
        pacer.changed();
        let mut msgs = vec![first];
        while msgs.len() < 10_000 {
            match stream.next().now_or_never().flatten() {
                Some(m) => msgs.push(m),
                None => break,
            }
        }
        for msg in msgs {
            if let Some(at) = written_at(&msg) {
                out.delays.push(Duration::from_nanos(now_nanos().saturating_sub(at) as u64));
                out.shown += 1;
            }
            update::apply(&mut s, msg);
        }
        if out.rss_full == 0.0 && kept(&s) >= EVENT_LIMIT {
            out.rss_full = resident_mib();
        }
    }
    out.took = started.elapsed();
    out.rss_end = resident_mib();
    out.kept = kept(&s);
    out.written = writer.await.expect("writer");
    out
}

/// The most and fewest frames drawn in any one-second window while events arrived.
fn frames_per_second(frames: &[Instant]) -> (usize, usize) {
    let (Some(first), Some(last)) = (frames.first(), frames.last()) else { return (0, 0) };
    let mut windows = vec![];
    let mut start = *first;
    while start + Duration::from_secs(1) <= *last {
        let end = start + Duration::from_secs(1);
        windows.push(frames.iter().filter(|f| **f >= start && **f < end).count());
        start += Duration::from_millis(250);
    }
    (windows.iter().copied().min().unwrap_or(0), windows.iter().copied().max().unwrap_or(0))
}

/// Events applied without the server.
const OFFLINE_EVENTS: u64 = 50_000;

/// What the loop does without the server, on events made as they are applied.
struct Capacity {
    /// Events applied per second with a frame after every `RATE / 30` of them.
    rate: f64,
    frame_p99: Duration,
    /// Resident memory when the log first holds `EVENT_LIMIT` events, and at the end.
    rss_full: f64,
    rss_end: f64,
}

/// The loop's capacity without the server: the same kind of events, applied with a frame
/// after every `RATE / 30` of them; made one at a time, so that the resident memory is
/// the TUI's (the engine idles meanwhile).
fn capacity(kind: kubectl_crd::cluster::ResourceType) -> Capacity {
    let mut s = events_state(kind);
    let mut terminal = terminal();
    let batch = RATE / 30;
    let event = |i: u64| {
        let manager = if i.is_multiple_of(2) { "bench-a" } else { "bench-b" };
        let mut object = widget::widget(i as usize % OBJECTS);
        object["metadata"]["namespace"] = json!("bench");
        object["metadata"]["resourceVersion"] = json!((i + 2).to_string());
        object["spec"]["size"] = json!(i % 10);
        object["metadata"]["managedFields"] = json!([{"manager": manager, "operation": "Update",
            "apiVersion": "stable.example.com/v1", "time": "2026-11-26T10:00:00Z",
            "fieldsV1": {"f:spec": {"f:size": {}, "f:note": {}}}}]);
        let type_ = if i < OBJECTS as u64 { ObjectEventType::Added } else { ObjectEventType::Modified };
        Msg::ObjectEvent { stream: STREAM, event: Ok(ObjectEvent { type_, object }) }
    };
    let started = Instant::now();
    let mut frame_times = vec![];
    let mut rss_full = 0.0;
    for i in 0..OFFLINE_EVENTS {
        update::apply(&mut s, event(i));
        if i.is_multiple_of(batch) {
            let drawn = Instant::now();
            s.prepare();
            terminal.draw(|f| view::draw(f, &s)).expect("draw");
            frame_times.push(drawn.elapsed());
        }
        if i == EVENT_LIMIT as u64 {
            rss_full = resident_mib();
        }
    }
    let took = started.elapsed();
    assert!(kept(&s) <= EVENT_LIMIT);
    frame_times.sort();
    Capacity {
        rate: OFFLINE_EVENTS as f64 / took.as_secs_f64(),
        frame_p99: percentile(&frame_times, 99),
        rss_full,
        rss_end: resident_mib(),
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let conn = local_engine(dir.path()).await;
        let client = conn.client().clone();
        let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
            Api::all(client.clone());
        crds.create(&PostParams::default(), &serde_json::from_value(widget::crd()).expect("crd")).await.expect("crd");
        let established = wait_for_established(&client, widget::CRD, Duration::from_secs(10)).await.expect("the CRD");
        assert!(matches!(established, Establishment::Established), "{established:?}");
        let crd = find_crd(&client, "widgets").await.expect("widgets");
        let kind = resource_of(&crd).expect("served");
        let api: Api<DynamicObject> = kind.api(&client, Some("bench"));
        for i in 0..OBJECTS {
            let obj = serde_json::from_value(widget::widget(i)).expect("widget");
            api.create(&PostParams::default(), &obj).await.expect("create");
        }

        let offline = capacity(kind.clone());
        let live = live(client.clone(), kind, api).await;
        let (took, written) = (live.took, live.written);
        assert_eq!(live.shown, written, "every change reaches the screen");
        assert!(live.kept <= EVENT_LIMIT, "the log keeps at most {EVENT_LIMIT} events: {}", live.kept);

        let mut delays = live.delays;
        delays.sort();
        let mut frame_times = live.frame_times;
        frame_times.sort();
        let (fewest, most) = frames_per_second(&live.frames);
        println!("event stream, {OBJECTS} widgets changed {RATE} times a second for {SECONDS} s (two field managers):");
        println!(
            "  changes shown: {} of {written} ({:.0}/s); frames: {} ({:.0}/s), fewest in any second {fewest} (target ≥ 30), most {most}",
            live.shown,
            live.shown as f64 / took.as_secs_f64(),
            live.frames.len(),
            live.frames.len() as f64 / took.as_secs_f64(),
        );
        println!(
            "  frame time p50 {:.2} ms, p99 {:.2} ms; write → screen p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            ms(percentile(&frame_times, 50)),
            ms(percentile(&frame_times, 99)),
            ms(percentile(&delays, 50)),
            ms(percentile(&delays, 99)),
            ms(delays.last().copied().unwrap_or_default()),
        );
        println!(
            "  memory (engine and TUI in one process): {:.1} MiB resident when the log first held {EVENT_LIMIT} events, {:.1} MiB after {written} ({} kept)",
            live.rss_full, live.rss_end, live.kept
        );
        println!(
            "  without the server: {:.0} events/s with 30 frames a second's worth drawn (frame p99 {:.2} ms): {:.1}x the {RATE}/s asked",
            offline.rate,
            ms(offline.frame_p99),
            offline.rate / RATE as f64
        );
        println!(
            "  the TUI's memory: {:.1} MiB resident when its log first held {EVENT_LIMIT} events, {:.1} MiB after {OFFLINE_EVENTS} (bounded: {:+.1} MiB)",
            offline.rss_full,
            offline.rss_end,
            offline.rss_end - offline.rss_full
        );
        drop(client);
        conn.close().await;
    });
}
