//! The real `kubectl get` against `kubectl crd serve`: server-side Tables printed as
//! against kube-apiserver (printer columns, `-o wide` priority columns, CRDs and
//! namespaces), `--raw` answers, and `get -w` receiving Table watch events. Outputs are
//! compared whole, cell by cell, with the age columns masked.

use crate::support;

use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;
use support::cli::lines_of;
use support::kubectl::{Server, kubectl_for};

/// Writes `text` into the server's data directory and gives its path.
fn write(server: &Server, name: &str, text: &str) -> String {
    let path = server.dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path.display().to_string()
}

/// The widget CRD of reference 06 registered, and w1, w2, w3 as the recorded scenario
/// has them (reference 34).
fn with_widgets() -> Server {
    let server = Server::start();
    let crd = support::reference::load("06").request.body.expect("a body");
    let crd = write(&server, "crd.json", &String::from_utf8(crd).expect("utf8"));
    server.ok(&["apply", "--validate=false", "-f", &crd]);
    server.ok(&["wait", "--for=condition=Established", "crd/widgets.stable.example.com", "--timeout=20s"]);
    let widgets = r#"{"apiVersion": "v1", "kind": "List", "items": [
      {"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "default", "labels": {"app": "demo", "tier": "gold"}}, "spec": {"color": "blue", "replicas": 5, "size": 5}},
      {"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": "w2", "namespace": "default", "labels": {"app": "other"}}, "spec": {"color": "green", "replicas": 2, "size": 1}},
      {"apiVersion": "stable.example.com/v1", "kind": "Widget", "metadata": {"name": "w3", "namespace": "default", "labels": {"app": "demo"}}, "spec": {"color": "green", "size": 7}}]}"#;
    let file = write(&server, "widgets.json", widgets);
    // The CRD may still be settling into discovery right after Established.
    for attempt in 0.. {
        let out = server.kubectl(&["create", "--validate=false", "-f", &file]);
        if out.status.success() {
            break;
        }
        assert!(attempt < 50, "create widgets: {}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(Duration::from_millis(200));
    }
    server.ok(&[
        "patch",
        "widget",
        "w1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status": {"phase": "Ready", "replicas": 1, "selector": "app=demo"}}"#,
    ]);
    server
}

/// A printed table as cells, cut at the header's column starts (an empty cell stays an
/// empty string), the cells of the columns named in `masked` replaced by `<age>`.
fn cells(output: &str, masked: &[&str]) -> Vec<Vec<String>> {
    let mut lines = output.lines();
    let Some(header) = lines.next() else { return Vec::new() };
    let mut starts = vec![0];
    let bytes = header.as_bytes();
    for i in 1..bytes.len() {
        if bytes[i] != b' ' && bytes[i - 1] == b' ' && i >= 2 && bytes[i - 2] == b' ' {
            starts.push(i);
        }
    }
    let cut = |line: &str| -> Vec<String> {
        (0..starts.len())
            .map(|k| {
                let end = starts.get(k + 1).copied().unwrap_or(line.len()).min(line.len());
                line.get(starts[k].min(end)..end).unwrap_or("").trim().to_string()
            })
            .collect()
    };
    let head = cut(header);
    let masked: Vec<usize> =
        head.iter().enumerate().filter(|(_, h)| masked.contains(&h.as_str())).map(|(i, _)| i).collect();
    std::iter::once(head)
        .chain(lines.map(|l| {
            cut(l)
                .into_iter()
                .enumerate()
                .map(|(i, c)| if masked.contains(&i) { "<age>".to_string() } else { c })
                .collect()
        }))
        .collect()
}

fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect()
}

#[test]
fn get_prints_the_printer_columns_as_kube_apiserver_serves_them() {
    let server = with_widgets();
    assert_eq!(
        cells(&server.ok(&["get", "widgets"]), &["AGE"]),
        table(&[
            &["NAME", "COLOR", "REPLICAS", "AGE"],
            &["w1", "blue", "5", "<age>"],
            &["w2", "green", "2", "<age>"],
            &["w3", "green", "", "<age>"],
        ])
    );
    assert_eq!(
        cells(&server.ok(&["get", "wd", "-o", "wide"]), &["AGE"]),
        table(&[
            &["NAME", "COLOR", "REPLICAS", "PHASE", "AGE"],
            &["w1", "blue", "5", "Ready", "<age>"],
            &["w2", "green", "2", "", "<age>"],
            &["w3", "green", "", "", "<age>"],
        ])
    );
    assert_eq!(
        cells(&server.ok(&["get", "widget", "w2", "--show-labels"]), &["AGE"]),
        table(&[&["NAME", "COLOR", "REPLICAS", "AGE", "LABELS"], &["w2", "green", "2", "<age>", "app=other"]])
    );
    assert_eq!(cells(&server.ok(&["get", "widgets", "--no-headers", "-l", "app=demo"]), &[]).len(), 2);
}

#[test]
fn get_crd_and_get_ns_look_as_against_a_real_cluster() {
    let server = with_widgets();
    let crds = cells(&server.ok(&["get", "crd"]), &["CREATED AT"]);
    assert_eq!(crds, table(&[&["NAME", "CREATED AT"], &["widgets.stable.example.com", "<age>"]]));
    let created = server.ok(&["get", "crd", "widgets.stable.example.com", "--no-headers"]);
    let stamp = created.split_whitespace().nth(1).expect("a time");
    assert!(stamp.len() == 20 && stamp.ends_with('Z') && stamp.contains('T'), "{created}");
    assert_eq!(
        cells(&server.ok(&["get", "ns"]), &["AGE"]),
        table(&[
            &["NAME", "STATUS", "AGE"],
            &["default", "Active", "<age>"],
            &["kube-node-lease", "Active", "<age>"],
            &["kube-public", "Active", "<age>"],
            &["kube-system", "Active", "<age>"],
        ])
    );
}

#[test]
fn get_raw_and_output_formats() {
    let server = with_widgets();
    let path = "/apis/stable.example.com/v1/namespaces/default/widgets";
    let list: serde_json::Value = serde_json::from_str(&server.ok(&["get", "--raw", path])).expect("json");
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(3));
    let pretty = server.ok(&["get", "--raw", &format!("{path}/w1?pretty=true")]);
    assert!(pretty.starts_with("{\n  \"apiVersion\": \"stable.example.com/v1\",\n"), "{pretty}");
    let exported: serde_json::Value =
        serde_json::from_str(&server.ok(&["get", "--raw", &format!("{path}?export=1")])).expect("json");
    assert!(exported["items"][0]["metadata"].get("uid").is_none());
    assert!(exported["items"][0].get("status").is_none());
    let yaml = server.ok(&["get", "widget", "w1", "-o", "yaml"]);
    assert!(yaml.contains("  color: blue\n") && yaml.contains("  phase: Ready\n"), "{yaml}");
    let names = server.ok(&["get", "widgets", "-o", "name"]);
    assert_eq!(names, "widget.stable.example.com/w1\nwidget.stable.example.com/w2\nwidget.stable.example.com/w3\n");
    let custom = server.ok(&["get", "widgets", "-o", "custom-columns=N:.metadata.name,C:.spec.color"]);
    assert_eq!(cells(&custom, &[]), table(&[&["N", "C"], &["w1", "blue"], &["w2", "green"], &["w3", "green"]]));
}

/// `/api` names the server's address with its port, as kube-apiserver names its external
/// address, though kubectl speaks HTTP/2 and so sends no Host header.
#[test]
fn get_raw_api_names_the_server_address_and_port() {
    let server = Server::start();
    let url = server.ok(&["config", "view", "--minify", "-o", "jsonpath={.clusters[0].cluster.server}"]);
    let versions: serde_json::Value = serde_json::from_str(&server.ok(&["get", "--raw", "/api"])).expect("json");
    let address = &versions["serverAddressByClientCIDRs"][0]["serverAddress"];
    assert_eq!(address.as_str(), url.strip_prefix("https://"), "{versions}");
}

fn next_line(rx: &mpsc::Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(20)).expect("a line from kubectl get -w")
}

#[test]
fn get_watch_prints_table_events_as_they_happen() {
    let server = with_widgets();
    let mut watch = kubectl_for(&server.kubeconfig)
        .args(["get", "widgets", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");
    let rx = lines_of(&mut watch);
    let first: Vec<String> = (0..4).map(|_| next_line(&rx)).collect();
    assert_eq!(
        cells(&first.join("\n"), &["AGE"]),
        table(&[
            &["NAME", "COLOR", "REPLICAS", "AGE"],
            &["w1", "blue", "5", "<age>"],
            &["w2", "green", "2", "<age>"],
            &["w3", "green", "", "<age>"],
        ])
    );
    server.ok(&["patch", "widget", "w2", "--type=merge", "-p", r#"{"spec": {"color": "red"}}"#]);
    let changed = next_line(&rx);
    let row: Vec<&str> = changed.split_whitespace().collect();
    assert_eq!(&row[..3], ["w2", "red", "2"], "{changed}");
    let _ = watch.kill();
    let _ = watch.wait();
}
