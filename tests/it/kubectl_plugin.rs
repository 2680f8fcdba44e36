//! The plugin as users meet it: the real `kubectl` binary finds `kubectl-crd` on PATH and
//! runs it as `kubectl crd ...`.

use crate::support::plugin::Plugin;
use std::process::Output;

fn kubectl(args: &[&str]) -> Output {
    Plugin::empty().kubectl(args).output().expect("the kubectl binary is installed (.ci/run installs it)")
}

fn text(o: &[u8]) -> String {
    String::from_utf8_lossy(o).into_owned()
}

#[test]
fn kubectl_runs_the_plugin_version() {
    let out = kubectl(&["crd", "version"]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!("kubectl-crd version: v{}", env!("CARGO_PKG_VERSION"))), "{stdout}");
    assert!(stdout.contains("Kubernetes API level: v1.32"), "{stdout}");
}

#[test]
fn kubectl_passes_flags_through_to_the_plugin() {
    let out = kubectl(&["crd", "version", "-o", "json"]);
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["pluginVersion"], format!("v{}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn help_says_kubectl_crd() {
    let out = kubectl(&["crd", "--help"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Usage: kubectl crd"), "{stdout}");
    for sub in [
        "serve",
        "tui",
        "list",
        "describe",
        "get",
        "apply",
        "spec",
        "status",
        "scale",
        "migrate",
        "demo",
        "version",
        "completion",
    ] {
        assert!(stdout.lines().any(|l| l.trim_start().starts_with(sub)), "help lists {sub}: {stdout}");
    }
}

#[test]
fn bad_flags_and_missing_subcommands_exit_2_with_a_reason() {
    let out = kubectl(&["crd", "version", "--request-timeout", "soon"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid --request-timeout \"soon\""), "{}", text(&out.stderr));

    let out = kubectl(&["crd", "frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unrecognized subcommand 'frobnicate'"), "{}", text(&out.stderr));

    let out = kubectl(&["crd", "scale"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("required"), "{}", text(&out.stderr));
}

#[test]
fn kubectl_lists_the_plugin() {
    let out = kubectl(&["plugin", "list", "--name-only"]);
    assert!(text(&out.stdout).lines().any(|l| l.trim() == "kubectl-crd"), "{}{}", text(&out.stdout), text(&out.stderr));
}

#[test]
fn subcommand_help_shows_its_own_flags_first_and_the_global_ones_apart() {
    for (sub, own) in [
        ("get", &["--sort-by", "--show-labels", "--watch", "--selector"][..]),
        ("delete", &["--cascade", "--dry-run", "--wait", "--timeout"][..]),
    ] {
        let out = kubectl(&["crd", sub, "--help"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let help = text(&out.stdout);
        let (first, global) = help
            .split_once("\nGlobal options (kubectl's, before or after the subcommand):\n")
            .unwrap_or_else(|| panic!("{sub} --help has no global heading: {help}"));
        assert!(first.contains("\nOptions:\n"), "{help}");
        for flag in own {
            assert!(first.contains(flag) && !global.contains(flag), "{sub}: {flag} among its own options: {help}");
        }
        for flag in ["--kubeconfig", "--context", "--namespace", "--output <FORMAT>", "--local", "--request-timeout"] {
            assert!(global.contains(flag) && !first.contains(flag), "{sub}: {flag} among the global options: {help}");
        }
    }
}
