//! `kubectl crd delete`, run by the real `kubectl` against the local engine with the demo
//! set: the lines, streams and exit codes are kubectl's, as measured with kubectl against
//! a real kube-apiserver holding the same objects (names, `TYPE/NAME`, `-l`, `--all`,
//! `--dry-run`, `--cascade`, `-o name`, a missing object among others, a finalizer that
//! outlasts `--timeout`, and a CRD).

use crate::support::plugin::Plugin;

#[test]
fn delete_prints_and_exits_as_kubectl_delete() {
    let p = Plugin::with_demo();
    let deleted = |name: &str| format!("clusterpolicy.demo.example.com \"{name}\" deleted\n");
    assert_eq!(p.exits(&["delete", "cpol", "policy-05"], 0), (deleted("policy-05"), String::new()));
    // A missing object is said on stderr; the others still go, and the exit code is 1.
    let (stdout, stderr) = p.exits(&["delete", "cpol", "policy-06", "nope", "policy-07"], 1);
    assert_eq!(stdout, format!("{}{}", deleted("policy-06"), deleted("policy-07")));
    assert_eq!(stderr, "Error from server (NotFound): clusterpolicies.demo.example.com \"nope\" not found\n");
    assert_eq!(
        p.exits(&["delete", "cpol/policy-08", "cpol/policy-11"], 0).0,
        format!("{}{}", deleted("policy-08"), deleted("policy-11"))
    );
    assert_eq!(
        p.exits(&["delete", "cpol", "policy-09", "--dry-run=client"], 0).0,
        "clusterpolicy.demo.example.com \"policy-09\" deleted (dry run)\n"
    );
    assert_eq!(
        p.exits(&["delete", "cpol", "policy-09", "--dry-run=server"], 0).0,
        "clusterpolicy.demo.example.com \"policy-09\" deleted (server dry run)\n"
    );
    assert_eq!(
        p.exits(&["delete", "cpol", "policy-09", "-o", "name"], 0).0,
        "clusterpolicy.demo.example.com/policy-09\n"
    );
    // Selectors: "No resources found" goes to stdout, as kubectl delete prints it.
    assert_eq!(p.exits(&["delete", "wd", "-l", "tier=none"], 0), ("No resources found\n".into(), String::new()));
    let gold = p.exits(&["delete", "wd", "-l", "tier=gold", "-n", "team-a", "--cascade=foreground"], 0).0;
    assert!(gold.lines().count() > 1 && gold.lines().all(|l| l.ends_with("\" deleted")), "{gold}");
    assert_eq!(p.ok(&["get", "wd", "-n", "team-a", "-l", "tier=gold", "-o", "name"]), "");
    let all = p.exits(&["delete", "db", "--all", "-n", "team-b"], 0).0;
    assert!(all.starts_with("database.demo.example.com \""), "{all}");
    // The command line is checked first (exit code 2, as every usage error of the plugin).
    for (args, says) in [
        (&["delete", "cpol"][..], "error: resource(s) were provided, but no name was specified"),
        (
            &["delete", "cpol", "policy-10", "-l", "a=b"][..],
            "error: name cannot be provided when a selector is specified",
        ),
        (&["delete", "cpol", "policy-10", "--cascade=bogus"][..], "error: invalid cascade value (bogus). Must be"),
    ] {
        let (_, stderr) = p.exits(args, 2);
        assert!(stderr.starts_with(says), "{args:?}: {stderr}");
    }
    let (_, stderr) = p.exits(&["delete", "cpol", "policy-10", "--cascade=true", "--wait=false"], 0);
    assert_eq!(
        stderr,
        "warning: --cascade=true is deprecated (boolean value) and can be replaced with --cascade=background.\n"
    );

    // --wait (the default) waits for finalizers; past --timeout kubectl says so and exits 1.
    let held = "apiVersion: demo.example.com/v1\nkind: Widget\nmetadata: {name: held, finalizers: [example.com/hold]}\nspec: {color: red, size: 1}\n";
    let out = p.run(&["apply", "-f", "-"], Some(held));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (stdout, stderr) = p.exits(&["delete", "wd", "held", "--timeout=1s"], 1);
    assert_eq!(stdout, "widget.demo.example.com \"held\" deleted\n");
    assert_eq!(stderr, "error: timed out waiting for the condition on widgets/held\n");
    assert_eq!(p.exits(&["delete", "wd", "held", "--wait=false"], 0).0, "widget.demo.example.com \"held\" deleted\n");

    // A CRD goes with its custom resources; the type is then unknown.
    assert_eq!(
        p.exits(&["delete", "crd", "clusterpolicies.demo.example.com"], 0).0,
        "customresourcedefinition.apiextensions.k8s.io \"clusterpolicies.demo.example.com\" deleted\n"
    );
    let (_, stderr) = p.exits(&["get", "cpol"], 1);
    assert!(stderr.starts_with("error: the server doesn't have a resource type \"cpol\""), "{stderr}");
}
