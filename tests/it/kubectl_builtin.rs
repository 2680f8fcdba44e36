//! The built-in kinds driven by the real `kubectl` (v1.32) against `kubectl crd serve`:
//! `get events` and `describe` of a custom resource listing its events (recorded through
//! both Event APIs), `auth can-i` and `auth whoami`, `get leases,cm,secrets,sa` with
//! objects made by kubectl's own typed `create` commands (protobuf bodies), and bad input
//! refused as kube-apiserver refuses it. Output is compared as text, ages masked.

use crate::support;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use support::kubectl::Server;

/// A server with the Widget CRD of reference 06 established and widget `w1` created.
fn server_with_w1() -> Server {
    let server = Server::start();
    let crd = support::reference::load("06").request.body.expect("a body");
    let path = server.dir.path().join("06.json");
    std::fs::write(&path, crd).expect("write");
    server.ok(&["apply", "--validate=false", "-f", &path.display().to_string()]);
    server.ok(&["wait", "--for=condition=Established", "crd/widgets.stable.example.com", "--timeout=20s"]);
    create(&server, "apiVersion: stable.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  color: red\n");
    server
}

/// `kubectl create -f -` with `yaml`; the output, or the error text when it fails.
fn create_result(server: &Server, yaml: &str) -> (bool, String) {
    server.with_stdin(&["create", "-f", "-"], yaml)
}

fn create(server: &Server, yaml: &str) -> String {
    let (ok, text) = create_result(server, yaml);
    assert!(ok, "kubectl create failed: {text}");
    text
}

/// A time `ago` before now, as kube writes `metav1.Time` (or `MicroTime`).
fn ago(seconds: i64, micro: bool) -> String {
    let t = Timestamp::now() - SignedDuration::from_secs(seconds);
    t.strftime(if micro { "%Y-%m-%dT%H:%M:%S%.6fZ" } else { "%Y-%m-%dT%H:%M:%SZ" }).to_string()
}

/// The cells of kubectl's aligned tables (several blocks when several kinds are listed),
/// split at the header's column starts, the `masked` columns replaced by `<age>`.
fn tables(output: &str, masked: &[&str]) -> Vec<Vec<Vec<String>>> {
    output
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let lines: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
            let header = lines[0];
            let bytes = header.as_bytes();
            let mut starts = vec![bytes.iter().position(|b| *b != b' ').unwrap_or(0)];
            for i in starts[0] + 1..bytes.len() {
                if bytes[i] != b' ' && bytes[i - 1] == b' ' && i >= 2 && bytes[i - 2] == b' ' {
                    starts.push(i);
                }
            }
            let headers: Vec<String> = cells_at(header, &starts);
            lines
                .iter()
                .enumerate()
                .map(|(row, line)| {
                    cells_at(line, &starts)
                        .into_iter()
                        .enumerate()
                        .map(|(i, cell)| {
                            let age = row > 0 && masked.contains(&headers[i].as_str()) && !cell.starts_with('-');
                            if age { "<age>".into() } else { cell }
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

fn cells_at(line: &str, starts: &[usize]) -> Vec<String> {
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| {
            let end = starts.get(i + 1).copied().unwrap_or(line.len()).min(line.len());
            line.get(start.min(line.len())..end).unwrap_or_default().trim().to_string()
        })
        .collect()
}

fn table(rows: &[&[&str]]) -> Vec<Vec<String>> {
    rows.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect()
}

/// The events of the widget, one through each API, referring to it by uid.
fn record_events(server: &Server) {
    let uid = server.ok(&["get", "widget", "w1", "-o", "jsonpath={.metadata.uid}"]);
    let regarding = format!(
        "  apiVersion: stable.example.com/v1\n  kind: Widget\n  name: w1\n  namespace: default\n  uid: {uid}\n"
    );
    let legacy = format!(
        "apiVersion: v1\nkind: Event\nmetadata:\n  name: w1.created\ninvolvedObject:\n{regarding}reason: Created\nmessage: created by hand\ntype: Normal\nsource:\n  component: tester\nfirstTimestamp: \"{}\"\nlastTimestamp: \"{}\"\ncount: 2\n",
        ago(40 * 60, false),
        ago(20 * 60, false),
    );
    assert_eq!(create(server, &legacy), "event/w1.created created\n");
    let new = format!(
        "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata:\n  name: w1.reconciled\neventTime: \"{}\"\nreportingController: example.com/widgets\nreportingInstance: widgets-0\naction: Reconcile\nreason: Reconciled\nnote: widget is ready\ntype: Normal\nregarding:\n{regarding}",
        ago(30 * 60, true),
    );
    assert_eq!(create(server, &new), "event.events.k8s.io/w1.reconciled created\n");
    // An event about something else, which describe must not list.
    create(
        server,
        "apiVersion: v1\nkind: Event\nmetadata:\n  name: other.1\ninvolvedObject:\n  kind: Widget\n  name: w2\n  namespace: default\nreason: Other\nmessage: not about w1\ntype: Warning\n",
    );
}

#[test]
fn kubectl_gets_events_and_describes_a_custom_resource_with_its_events() {
    let server = server_with_w1();
    record_events(&server);

    assert_eq!(
        tables(&server.ok(&["get", "events"]), &["LAST SEEN"]),
        [table(&[
            &["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
            &["<age>", "Warning", "Other", "widget/w2", "not about w1"],
            &["<age>", "Normal", "Created", "widget/w1", "created by hand"],
            &["<age>", "Normal", "Reconciled", "widget/w1", "widget is ready"],
        ])]
    );
    // The ages are kube's: a legacy event's last timestamp, a new one's event time.
    let ages = server.ok(&["get", "events", "--field-selector", "involvedObject.name=w1", "--no-headers"]);
    let ages: Vec<&str> = ages.lines().map(|l| l.split_whitespace().next().unwrap_or_default()).collect();
    assert_eq!(ages, ["20m", "30m"]);
    assert_eq!(
        tables(
            &server.ok(&["get", "ev.events.k8s.io", "-o", "wide", "--field-selector", "regarding.name=w1"]),
            &["LAST SEEN", "FIRST SEEN"]
        ),
        [table(&[
            &["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"],
            &["<age>", "Normal", "Created", "widget/w1", "", "tester", "created by hand", "<age>", "2", "w1.created"],
            &[
                "<age>",
                "Normal",
                "Reconciled",
                "widget/w1",
                "",
                "example.com/widgets, widgets-0",
                "widget is ready",
                "<age>",
                "1",
                "w1.reconciled"
            ],
        ])]
    );

    // describe lists the widget's events (and only them), oldest last-seen first.
    let described = server.ok(&["describe", "widget", "w1"]);
    let events = described.split("Events:\n").nth(1).expect("an Events section");
    let rows: Vec<Vec<String>> = tables(events, &["Age"]).into_iter().flatten().collect();
    assert_eq!(
        rows,
        table(&[
            &["Type", "Reason", "Age", "From", "Message"],
            &["----", "------", "----", "----", "-------"],
            &["Normal", "Reconciled", "<age>", "example.com/widgets", "widget is ready"],
            &["Normal", "Created", "<age>", "tester", "created by hand"],
        ])
    );
    assert!(events.contains(" 20m (x2 over 40m) "), "a repeated event shows its count: {events}");
}

/// `kubectl auth whoami` asks authentication.k8s.io for a SelfSubjectReview: the engine's
/// one user, as `serve`'s kubeconfig names it, in the groups that let it do everything.
#[test]
fn kubectl_auth_whoami_names_the_engine_s_user() {
    let server = server_with_w1();
    assert_eq!(
        tables(&server.ok(&["auth", "whoami"]), &[]),
        [table(&[
            &["ATTRIBUTE", "VALUE"],
            &["Username", "kubectl-crd"],
            &["Groups", "[system:masters system:authenticated]"],
        ])]
    );
    let review: serde_json::Value =
        serde_json::from_str(&server.ok(&["auth", "whoami", "-o", "json"])).expect("a SelfSubjectReview");
    assert_eq!(review["kind"], "SelfSubjectReview");
    assert_eq!(review["status"]["userInfo"]["username"], "kubectl-crd");
}

#[test]
fn kubectl_auth_can_i_answers_yes() {
    let server = server_with_w1();
    assert_eq!(server.ok(&["auth", "can-i", "create", "widgets"]), "yes\n");
    assert_eq!(server.ok(&["auth", "can-i", "delete", "leases", "-n", "kube-system"]), "yes\n");
    assert_eq!(server.ok(&["auth", "can-i", "*", "*"]), "yes\n");
    // As kube-apiserver lists them for an admin in system:masters (checked against the oracle).
    let list = server.ok(&["auth", "can-i", "--list", "-n", "default"]);
    assert_eq!(
        tables(&list, &[]),
        [table(&[
            &["Resources", "Non-Resource URLs", "Resource Names", "Verbs"],
            &["*.*", "[]", "[]", "[*]"],
            &["", "[*]", "[]", "[*]"],
            &["selfsubjectreviews.authentication.k8s.io", "[]", "[]", "[create]"],
            &["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"],
            &["selfsubjectrulesreviews.authorization.k8s.io", "[]", "[]", "[create]"],
            &["", "[/api/*]", "[]", "[get]"],
            &["", "[/api]", "[]", "[get]"],
            &["", "[/apis/*]", "[]", "[get]"],
            &["", "[/apis]", "[]", "[get]"],
            &["", "[/healthz]", "[]", "[get]"],
            &["", "[/healthz]", "[]", "[get]"],
            &["", "[/livez]", "[]", "[get]"],
            &["", "[/livez]", "[]", "[get]"],
            &["", "[/openapi/*]", "[]", "[get]"],
            &["", "[/openapi]", "[]", "[get]"],
            &["", "[/readyz]", "[]", "[get]"],
            &["", "[/readyz]", "[]", "[get]"],
            &["", "[/version/]", "[]", "[get]"],
            &["", "[/version/]", "[]", "[get]"],
            &["", "[/version]", "[]", "[get]"],
            &["", "[/version]", "[]", "[get]"],
        ])]
    );
}

#[test]
fn kubectl_gets_leases_configmaps_secrets_and_serviceaccounts() {
    let server = Server::start();
    // kubectl's typed create commands send protobuf.
    assert_eq!(
        server.ok(&["create", "configmap", "settings", "--from-literal=a=1", "--from-literal=b=2"]),
        "configmap/settings created\n"
    );
    assert_eq!(
        server.ok(&["create", "secret", "generic", "creds", "--from-literal=user=admin"]),
        "secret/creds created\n"
    );
    let (cert, key) = (server.dir.path().join("tls.crt"), server.dir.path().join("tls.key"));
    let cert = format!("--cert={}", cert.display());
    let key = format!("--key={}", key.display());
    assert_eq!(server.ok(&["create", "secret", "tls", "serving", &cert, &key]), "secret/serving created\n");
    assert_eq!(server.ok(&["create", "serviceaccount", "builder"]), "serviceaccount/builder created\n");
    create(
        &server,
        "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: widget-controller\nspec:\n  holderIdentity: alpha\n  leaseDurationSeconds: 15\n",
    );

    assert_eq!(
        tables(&server.ok(&["get", "leases,cm,secrets,sa"]), &["AGE"]),
        [
            table(&[&["NAME", "HOLDER", "AGE"], &["lease.coordination.k8s.io/widget-controller", "alpha", "<age>"]]),
            table(&[&["NAME", "DATA", "AGE"], &["configmap/settings", "2", "<age>"]]),
            table(&[
                &["NAME", "TYPE", "DATA", "AGE"],
                &["secret/creds", "Opaque", "1", "<age>"],
                &["secret/serving", "kubernetes.io/tls", "2", "<age>"],
            ]),
            table(&[&["NAME", "SECRETS", "AGE"], &["serviceaccount/builder", "0", "<age>"]]),
        ]
    );
    assert_eq!(server.ok(&["get", "secret", "creds", "-o", "jsonpath={.data.user}"]), "YWRtaW4=");
    assert_eq!(server.ok(&["get", "cm", "settings", "-o", "jsonpath={.data.b}"]), "2");
    assert_eq!(server.ok(&["get", "secrets", "--field-selector", "type=Opaque", "-o", "name"]), "secret/creds\n");
    assert_eq!(server.ok(&["delete", "cm", "settings"]), "configmap \"settings\" deleted\n");
    assert_eq!(server.ok(&["get", "cm", "-o", "name"]), "");
}

#[test]
fn kubectl_bad_input_is_refused_as_kube_apiserver_refuses_it() {
    let server = Server::start();
    server.ok(&["create", "namespace", "team"]);
    let cases = [
        (
            "apiVersion: v1\nkind: Event\nmetadata:\n  name: lost\n  namespace: team\nreason: Nothing\nmessage: about nothing\n",
            "The Event \"lost\" is invalid: involvedObject.namespace: Invalid value: \"\": does not match event.namespace\n",
        ),
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\n  namespace: team\ndata:\n  key: abc$def\n",
            "Error from server (BadRequest): error when creating \"STDIN\": Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3\n",
        ),
        (
            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: l\n  namespace: team\nspec:\n  leaseDurationSeconds: -1\n",
            "The Lease \"l\" is invalid: spec.leaseDurationSeconds: Invalid value: -1: must be greater than 0\n",
        ),
    ];
    for (yaml, refusal) in cases {
        assert_eq!(create_result(&server, yaml), (false, refusal.to_string()));
    }
    let out = server.kubectl(&["get", "events,secrets,leases", "-n", "team"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "No resources found in team namespace.\n");
}
