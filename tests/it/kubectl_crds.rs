//! CRD registration driven by the real `kubectl` against `kubectl crd serve` over HTTPS,
//! as users run it (kubectl validates against the engine's OpenAPI).

use crate::support;

use support::kubectl::Server;

/// Writes a reference exchange's request body (a CRD) to a file kubectl can apply.
fn crd_file(dir: &std::path::Path, prefix: &str) -> String {
    let ex = support::reference::load(prefix);
    let path = dir.join(format!("{prefix}.json"));
    std::fs::write(&path, ex.request.body.expect("a body")).expect("write");
    path.display().to_string()
}

#[test]
fn kubectl_registers_waits_describes_and_deletes_a_crd() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let widget = crd_file(dir.path(), "06");
    assert!(server.ok(&["apply", "-f", &widget]).contains("widgets.stable.example.com created"));
    server.ok(&["wait", "--for=condition=Established", "crd/widgets.stable.example.com", "--timeout=20s"]);
    assert!(server.ok(&["get", "crd"]).contains("widgets.stable.example.com"));

    let resources = server.ok(&["api-resources"]);
    let widgets = resources.lines().find(|l| l.starts_with("widgets ")).expect("widgets in api-resources");
    assert!(
        widgets.contains(" wd ") && widgets.contains("stable.example.com/v1") && widgets.contains("Widget"),
        "{widgets}"
    );
    let verbs = server.ok(&["api-resources", "-o", "wide"]);
    assert!(
        verbs
            .lines()
            .any(|l| l.starts_with("widgets ")
                && l.contains("delete,deletecollection,get,list,patch,create,update,watch")),
        "{verbs}"
    );

    let described = server.ok(&["describe", "crd", "widgets.stable.example.com"]);
    for expected in ["NoConflicts", "InitialNamesAccepted", "Established", "NamesAccepted"] {
        assert!(described.contains(expected), "describe shows {expected}: {described}");
    }

    // Two CRDs competing for a short name: the second is not accepted.
    let gadget = crd_file(dir.path(), "09");
    server.ok(&["apply", "-f", &gadget]);
    server.ok(&["wait", "--for=condition=NamesAccepted=False", "crd/gadgets.stable.example.com", "--timeout=20s"]);
    let reason = server.ok(&[
        "get",
        "crd",
        "gadgets.stable.example.com",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"NamesAccepted\")].reason}",
    ]);
    assert_eq!(reason, "ShortNamesConflict");

    assert!(server.ok(&["delete", "crd", "widgets.stable.example.com"]).contains("deleted"));
    let gone = server.kubectl(&["get", "crd", "widgets.stable.example.com"]);
    assert!(!gone.status.success() && String::from_utf8_lossy(&gone.stderr).contains("NotFound"));
    // The gadget takes over the freed short name.
    server.ok(&["wait", "--for=condition=Established", "crd/gadgets.stable.example.com", "--timeout=20s"]);
}

#[test]
fn kubectl_sees_a_refused_crd_with_kube_apiserver_s_message() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = crd_file(dir.path(), "11");
    let out = server.kubectl(&["create", "-f", &bad]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "metadata.name: Invalid value: \"gizmo.stable.example.com\": must be spec.names.plural+\".\"+spec.group"
        ),
        "{stderr}"
    );
    assert!(!server.ok(&["get", "crd", "-o", "name"]).contains("gizmo"), "nothing was stored");
}

/// The ETag and whether kubectl's disk cache answered, of the aggregated `/apis` a
/// `kubectl api-resources -v=9` run (which refreshes discovery) asked for.
fn apis_revalidation(server: &Server) -> (String, bool) {
    let out = server.kubectl(&["api-resources", "-v=9"]);
    assert!(out.status.success(), "api-resources: {}", String::from_utf8_lossy(&out.stderr));
    let log = String::from_utf8_lossy(&out.stderr);
    let mut lines = log.lines().skip_while(|l| !(l.contains("/apis?timeout") && l.contains(" 200 OK in ")));
    assert!(lines.next().is_some(), "no answer to GET /apis in:\n{log}");
    let headers: Vec<&str> =
        lines.take_while(|l| !l.contains("GET https://") && !l.contains("Response Body")).collect();
    let header = |name: &str| {
        let prefix = format!("{name}: ");
        headers.iter().find_map(|l| l.split_once("] ").and_then(|(_, h)| h.trim_start().strip_prefix(&prefix)))
    };
    let etag = header("Etag").unwrap_or_else(|| panic!("no ETag on /apis in {headers:?}")).to_string();
    (etag, header("X-From-Cache") == Some("1"))
}

#[test]
fn kubectl_revalidates_aggregated_discovery_by_its_etag() {
    let server = Server::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let (first, cached) = apis_revalidation(&server);
    assert!(!cached, "a fresh cache has nothing to answer with");
    assert!(first.len() == 130 && first.starts_with('"'), "kube's ETag is a quoted SHA-512: {first}");
    // Unchanged: the server's 304 lets the cache answer.
    assert_eq!(apis_revalidation(&server), (first.clone(), true));
    server.ok(&["apply", "-f", &crd_file(dir.path(), "06")]);
    server.ok(&["wait", "--for=condition=Established", "crd/widgets.stable.example.com", "--timeout=20s"]);
    let (after, cached) = apis_revalidation(&server);
    assert_ne!(after, first, "a new CRD changes the document");
    assert!(!cached, "a changed document is sent again");
    assert!(server.ok(&["api-resources", "--api-group=stable.example.com"]).contains("widgets"));
}
