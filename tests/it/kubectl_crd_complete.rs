//! Completion as kubectl users get it: `kubectl crd <TAB>` makes kubectl run
//! `kubectl_complete-crd` from PATH (krew installs it beside the plugin), which answers in
//! Cobra's `__complete` format. Driven here with `kubectl __complete crd ...`, the request
//! kubectl's own shell completion sends, against the local engine with the demo set.
//! Also: `kubectl crd completion SHELL` into a closed pipe exits quietly.

use crate::support::plugin::Plugin;
use std::process::Stdio;

/// The candidates (without descriptions) and the directive of `kubectl __complete crd WORDS`.
fn complete(p: &Plugin, words: &[&str]) -> (Vec<String>, String) {
    let mut args = vec!["__complete", "crd"];
    args.extend(words);
    let out = p.kubectl(&args).output().expect("kubectl __complete");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines: Vec<String> = text.lines().map(|l| l.split('\t').next().unwrap_or_default().to_string()).collect();
    let directive = lines.pop().unwrap_or_default();
    (lines, directive)
}

#[test]
fn kubectl_completes_subcommands_types_and_names_through_kubectl_complete_crd() {
    let p = Plugin::with_demo();
    let local = p.local();
    let (subcommands, directive) = complete(&p, &[""]);
    assert_eq!(directive, ":4", "no file names after kubectl crd");
    for sub in ["get", "delete", "list", "describe", "scale", "status", "apply", "tui"] {
        assert!(subcommands.iter().any(|s| s == sub), "{sub} in {subcommands:?}");
    }
    assert!(!subcommands.iter().any(|s| s.starts_with("__")), "{subcommands:?}");
    assert_eq!(complete(&p, &["st"]).0, ["status"]);
    assert_eq!(complete(&p, &["status", ""]).0, ["get", "set", "patch", "edit"]);

    let (types, _) = complete(&p, &[&local, "get", ""]);
    for plural in ["widgets", "databases", "clusterpolicies", "customresourcedefinitions"] {
        assert!(types.iter().any(|t| t == plural), "{plural} in {types:?}");
    }
    let (names, directive) = complete(&p, &[&local, "get", "wd", "widget-00"]);
    assert_eq!(names, (1..=9).map(|n| format!("widget-00{n}")).collect::<Vec<_>>());
    assert_eq!(directive, ":4");
    // delete takes several names, scale one.
    assert_eq!(complete(&p, &[&local, "delete", "wd", "widget-001", "widget-00"]).0.len(), 9);
    assert_eq!(complete(&p, &[&local, "scale", "wd", "widget-001", ""]).0, Vec::<String>::new());
    assert_eq!(complete(&p, &[&local, "scale", "wd/widget-01"]).0[..2], ["wd/widget-010", "wd/widget-011"]);
    assert_eq!(complete(&p, &[&local, "describe", "wid"]).0, ["widgets.demo.example.com"]);
    assert_eq!(complete(&p, &[&local, "get", "wd", "-n", "team-"]).0, ["team-a", "team-b", "team-c"]);
    assert_eq!(complete(&p, &["get", "wd", "--show-l"]).0, ["--show-labels"]);
    // Without a reachable cluster there is nothing to offer, and nothing is printed but the directive.
    assert_eq!(complete(&p, &["get", "wd", ""]), (Vec::new(), ":4".to_string()));
}

#[test]
fn completion_scripts_into_a_closed_pipe_do_not_panic() {
    let p = Plugin::empty();
    for shell in ["bash", "zsh", "fish"] {
        let mut child = p
            .kubectl(&["crd", "completion", shell])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl crd completion");
        // Closed before anything is written, as `| head -1` closes it after one line.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("waits");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && !stderr.contains("panicked"), "{shell}: {:?} {stderr}", out.status);
    }
}
