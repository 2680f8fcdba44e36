//! `kubectl crd get` with kubectl's habits, run by the real `kubectl` against the local
//! engine with the demo set: `--show-labels`, `--sort-by`, `--field-selector`,
//! `-o jsonpath=`/`-o custom-columns=`, blank cells where kubectl leaves them blank, and
//! `-w` with `--output-watch-events`. The expected texts were checked against kubectl on a
//! real kube-apiserver with the same objects.

use crate::support::cli::{Served, lines_of, normalize_table};
use crate::support::kubectl::kubectl_for;
use crate::support::plugin::Plugin;
use std::process::Stdio;
use std::time::Duration;

#[test]
fn labels_sorting_selectors_and_templates_print_as_kubectl_prints_them() {
    let p = Plugin::with_demo();
    let sorted = normalize_table(&p.ok(&["get", "wd", "-l", "tier=gold", "--show-labels", "--sort-by=.spec.replicas"]));
    let lines: Vec<&str> = sorted.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "NAME         COLOR   DESIRED   CURRENT   PHASE      AGE   LABELS",
            "widget-001   red     0         0         Stopped    <age> app=widget-001,tier=gold",
            "widget-010   red     0         0         Stopped    <age> app=widget-010,tier=gold",
        ],
        "{sorted}"
    );
    let desired: Vec<u32> =
        lines[1..].iter().map(|l| l.split_whitespace().nth(2).and_then(|d| d.parse().ok()).expect("DESIRED")).collect();
    assert!(desired.windows(2).all(|w| w[0] <= w[1]), "sorted by .spec.replicas: {sorted}");

    assert_eq!(
        p.ok(&["get", "wd", "--field-selector", "metadata.name=widget-002", "-o", "name"]),
        "widget.demo.example.com/widget-002\n"
    );
    assert_eq!(
        p.ok(&[
            "get",
            "wd/widget-001",
            "-o",
            "custom-columns=NAME:.metadata.name,PHASE:status.phase,TIER:{.metadata.labels.tier},NOTE:.spec.note"
        ]),
        "NAME         PHASE     TIER   NOTE\nwidget-001   Stopped   gold   <none>\n"
    );
    assert_eq!(p.ok(&["get", "wd", "widget-002", "-o", "jsonpath={.spec.color}{\"\\n\"}"]), "green\n");
    assert_eq!(
        p.ok(&["get", "wd", "-l", "app in (widget-001,widget-002)", "-o", "jsonpath={.items[*].metadata.name}"]),
        "widget-001 widget-002"
    );

    // An empty list: kubectl says so for tables only; custom columns print their header.
    let none = ["get", "wd", "-l", "tier=none"];
    assert_eq!(p.exits(&none, 0), (String::new(), "No resources found in default namespace.\n".into()));
    assert_eq!(
        p.exits(&[&none[..], &["-o", "custom-columns=N:.metadata.name"]].concat(), 0),
        ("N\n".into(), String::new())
    );
    assert_eq!(p.exits(&[&none[..], &["-o", "name"]].concat(), 0), (String::new(), String::new()));
    assert!(p.ok(&[&none[..], &["-o", "json"]].concat()).contains("\"items\": [],"));

    // A template that does not parse is refused before anything is read.
    let (_, stderr) = p.exits(&["get", "wd", "-o", "jsonpath={.metadata.name"], 2);
    assert_eq!(stderr, "error: error parsing jsonpath {.metadata.name, unclosed action\n");
    let (_, stderr) = p.exits(&["get", "wd", "-o", "custom-columns=NAME"], 2);
    assert!(stderr.contains("expected <header>:<json-path-expr>"), "{stderr}");
    // kubectl prints nothing when no object has the field it sorts by.
    let (stdout, stderr) = p.exits(&["get", "wd", "--sort-by", "{.spec.nothere}"], 0);
    assert_eq!((stdout.as_str(), stderr.as_str()), ("", "No resources found in default namespace.\n"));

    // A printer column with no value is a blank cell, as kubectl prints a server's Table.
    let bare = "apiVersion: demo.example.com/v1\nkind: Widget\nmetadata: {name: bare}\nspec: {color: red, size: 1}\n";
    let out = p.run(&["apply", "-f", "-"], Some(bare));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        normalize_table(&p.ok(&["get", "wd", "bare"])),
        "NAME   COLOR   DESIRED   CURRENT   PHASE   AGE\nbare   red                                 <age>\n"
    );
}

/// `kubectl crd ARGS` running in the background, and its stdout lines as they come.
fn background(p: &Plugin, args: &[&str]) -> (std::process::Child, std::sync::mpsc::Receiver<String>) {
    let mut child = p.crd(args).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("kubectl crd");
    let lines = lines_of(&mut child);
    (child, lines)
}

#[test]
fn watch_prints_the_list_then_each_change_under_the_header() {
    let p = Plugin::with_demo();
    // The server holds the data, so the watcher and the writer both reach it with --local.
    let served = Served::start(p.data.path(), &[]);
    let (mut watcher, lines) =
        background(&p, &["get", "wd", "-w", "--output-watch-events", "-l", "app in (widget-002,widget-003)"]);
    let next = || lines.recv_timeout(Duration::from_secs(30)).expect("a line from the watch");
    let mut seen: Vec<String> = (0..3).map(|_| next()).collect();
    // In JSON, kubectl writes each event on a line of its own, its type first.
    let (mut events, event_lines) =
        background(&p, &["get", "wd", "widget-002", "-w", "--output-watch-events", "-o", "json"]);
    let next_event = || event_lines.recv_timeout(Duration::from_secs(30)).expect("an event");
    let added = next_event();
    p.ok(&["scale", "wd", "widget-002", "--replicas", "9"]);
    seen.push(next());
    let modified = next_event();
    let _ = events.kill();
    let _ = events.wait();
    for (line, event, replicas) in [(added, "ADDED", 2), (modified, "MODIFIED", 9)] {
        assert!(line.starts_with(&format!("{{\"type\":\"{event}\",\"object\":{{\"apiVersion\":")), "{line}");
        let parsed: serde_json::Value = serde_json::from_str(&line).expect("one event a line");
        assert_eq!(parsed["object"]["spec"]["replicas"], replicas, "{line}");
    }
    let deleted =
        kubectl_for(&served.kubeconfig).args(["delete", "wd", "widget-003"]).output().expect("kubectl delete");
    assert!(deleted.status.success(), "{}", String::from_utf8_lossy(&deleted.stderr));
    seen.push(next());
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert_eq!(
        normalize_table(&(seen.join("\n") + "\n")),
        "\
EVENT      NAME         COLOR   DESIRED   CURRENT   PHASE   AGE
ADDED      widget-002   green   2         2         Ready   <age>
ADDED      widget-003   blue    3         3         Ready   <age>
MODIFIED   widget-002   green   9         2         Ready   <age>
DELETED    widget-003   blue    3         3         Ready   <age>
"
    );
}

#[test]
fn watch_warns_that_it_does_not_sort_events() {
    let p = Plugin::with_demo();
    let mut watcher = p
        .crd(&["get", "wd", "-w", "--sort-by=.spec.replicas", "-l", "tier=none"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl crd get -w");
    let stderr = watcher.stderr.take().expect("stderr");
    let first = std::io::BufRead::lines(std::io::BufReader::new(stderr)).next();
    let _ = watcher.kill();
    let _ = watcher.wait();
    assert_eq!(
        first.and_then(Result::ok).as_deref(),
        Some("warning: --watch requested, --sort-by will be ignored for watch events received")
    );
}
