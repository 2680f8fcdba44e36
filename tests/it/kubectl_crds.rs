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
