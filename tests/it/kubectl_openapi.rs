//! The real `kubectl` against `kubectl crd serve`, using OpenAPI as users do: `explain`
//! from the CRD's schema, `apply` and `create` with kubectl's default validation (no
//! `--validate=false`), server-side strict validation of unknown fields, and client-side
//! validation against `/openapi/v2` (protobuf) for what the server cannot vouch for
//! (`kind: List`).
//!
//! Each test gives kubectl its own `--cache-dir`, so no test sees another's cached
//! discovery or OpenAPI documents.

use crate::support;
use crate::support::crd::CrdBuilder;

use serde_json::{Value, json};
use std::process::Output;
use support::kubectl::Server;

/// A served `kubectl` with a private cache directory.
struct Kubectl {
    server: Server,
    cache: tempfile::TempDir,
}

impl Kubectl {
    fn start() -> Kubectl {
        Kubectl { server: Server::start(), cache: tempfile::tempdir().expect("cache dir") }
    }

    fn run(&self, args: &[&str]) -> Output {
        let cache = self.cache.path().display().to_string();
        let mut all = vec!["--cache-dir", cache.as_str()];
        all.extend_from_slice(args);
        self.server.kubectl(&all)
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "kubectl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "kubectl {args:?} should fail: {}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// Writes `doc` to a file kubectl can read.
    fn file(&self, name: &str, doc: &Value) -> String {
        let path = self.cache.path().join(name);
        std::fs::write(&path, serde_json::to_vec_pretty(doc).expect("json")).expect("write");
        path.display().to_string()
    }

    /// Applies a CRD (with kubectl's default validation) and waits until it is served.
    fn register(&self, crd: &Value) {
        let name = crd["metadata"]["name"].as_str().expect("name");
        let file = self.file(&format!("{name}.json"), crd);
        self.ok(&["apply", "-f", &file]);
        self.ok(&["wait", "--for=condition=Established", &format!("crd/{name}"), "--timeout=20s"]);
        // kube-apiserver publishes a new CRD's discovery and OpenAPI a moment after Established
        // (the engine at once): explain and validation read them, so wait until both list it.
        let group_version = format!("apis/{}/{}", crd["spec"]["group"].as_str().expect("group"), served_version(crd));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let plural = format!("\"name\":\"{}\"", crd["spec"]["names"]["plural"].as_str().expect("plural"));
        while !self.ok(&["get", "--raw", "/openapi/v3"]).contains(&group_version)
            || !self.ok(&["get", "--raw", &format!("/{group_version}")]).contains(&plural)
        {
            assert!(std::time::Instant::now() < deadline, "{group_version} never listed in discovery and /openapi/v3");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The first served version of `crd`.
fn served_version(crd: &Value) -> &str {
    let versions = crd["spec"]["versions"].as_array().expect("versions");
    let served = versions.iter().find(|v| v["served"] == true).expect("a served version");
    served["name"].as_str().expect("a version name")
}

/// The CronTab CRD of the Kubernetes documentation, with descriptions for `explain`.
fn crontab_crd() -> Value {
    let field = |ty: &str, description: &str| json!({"type": ty, "description": description});
    let schema = json!({
        "type": "object",
        "description": "CronTab runs an image on a schedule.",
        "properties": {"spec": {
            "type": "object",
            "description": "What to run and when.",
            "properties": {
                "cronSpec": field("string", "The schedule, in cron format."),
                "image": field("string", "The image to run."),
                "replicas": {"type": "integer", "minimum": 1, "description": "How many copies run at each tick."},
            },
        }},
    });
    CrdBuilder::new("stable.example.com", "CronTab").short_names(&["ct"]).schema(schema).build()
}

fn crontab(name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    })
}

#[test]
fn explain_describes_a_crd_field_and_the_whole_kind() {
    let k = Kubectl::start();
    k.register(&crontab_crd());

    let field = k.ok(&["explain", "crontab.spec.replicas"]);
    for expected in
        ["KIND:       CronTab", "VERSION:    v1", "FIELD: replicas <integer>", "How many copies run at each tick."]
    {
        assert!(field.contains(expected), "{expected:?} in:\n{field}");
    }

    let recursive = k.ok(&["explain", "crontabs", "--recursive"]);
    for expected in
        ["CronTab runs an image on a schedule.", "cronSpec\t<string>", "image\t<string>", "replicas\t<integer>"]
    {
        assert!(recursive.contains(expected), "{expected:?} in:\n{recursive}");
    }
    // ObjectMeta comes from the built-in definitions the schema refers to.
    assert!(
        recursive.contains("metadata\t<ObjectMeta>") && recursive.contains("labels\t<map[string]string>"),
        "{recursive}"
    );

    // Built-in kinds and the swagger 2.0 (protobuf) document explain too.
    let namespace = k.ok(&["explain", "namespace.spec.finalizers"]);
    assert!(namespace.contains("FIELD: finalizers <[]string>"), "{namespace}");
    let v2 = k.ok(&["explain", "crontab.spec", "--output", "plaintext-openapiv2"]);
    assert!(v2.contains("RESOURCE: spec <Object>") && v2.contains("cronSpec\t<string>"), "{v2}");
}

#[test]
fn apply_and_create_validate_on_the_server_without_validate_false() {
    let k = Kubectl::start();
    k.register(&crontab_crd());
    let daily =
        k.file("daily.json", &crontab("daily", json!({"cronSpec": "0 0 * * *", "image": "busybox", "replicas": 1})));
    let out = k.run(&["apply", "-f", &daily, "-v=6"]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("crontab.stable.example.com/daily created"));
    // kubectl found `fieldValidation` in the kind's OpenAPI v3 PATCH operation, so it
    // leaves validation to the server instead of downloading /openapi/v2.
    assert!(log.contains("/openapi/v3/apis/stable.example.com/v1?hash="), "{log}");
    assert!(log.contains("fieldValidation=Strict"), "{log}");
    assert!(!log.contains("/openapi/v2"), "{log}");

    let hourly = k.file("hourly.json", &crontab("hourly", json!({"cronSpec": "0 * * * *", "image": "busybox"})));
    assert!(k.ok(&["create", "-f", &hourly]).contains("crontab.stable.example.com/hourly created"));
    // A second apply patches (computing a merge patch: custom kinds take no strategic one).
    let changed =
        k.file("daily.json", &crontab("daily", json!({"cronSpec": "0 1 * * *", "image": "busybox", "replicas": 1})));
    assert!(k.ok(&["apply", "-f", &changed]).contains("crontab.stable.example.com/daily configured"));
    assert_eq!(k.ok(&["get", "crontab", "daily", "-o", "jsonpath={.spec.cronSpec}"]), "0 1 * * *");
}

#[test]
fn apply_with_strict_validation_refuses_an_unknown_field() {
    let k = Kubectl::start();
    k.register(&crontab_crd());
    let typo = k.file("typo.json", &crontab("typo", json!({"cronSpec": "* * * * *", "foo": "bar"})));
    let err = k.fails(&["apply", "--validate=strict", "-f", &typo]);
    assert!(err.contains(r#"strict decoding error: unknown field "spec.foo""#), "{err}");
    let absent = k.run(&["get", "crontab", "typo"]);
    assert!(!absent.status.success(), "nothing was stored");
}

#[test]
fn a_list_is_validated_client_side_against_openapi_v2() {
    let k = Kubectl::start();
    k.register(&crontab_crd());
    let list = |items: Vec<Value>| json!({"apiVersion": "v1", "kind": "List", "items": items});
    // kubectl cannot ask the server about `kind: List`: it validates each item itself
    // against /openapi/v2, which it only reads as protocol buffers.
    let bad = k.file(
        "bad-list.json",
        &list(vec![
            crontab("a", json!({"cronSpec": "* * * * *"})),
            crontab("b", json!({"cronSpec": "* * * * *", "bogus": 1})),
        ]),
    );
    let err = k.fails(&["apply", "-f", &bad]);
    assert!(err.contains(r#"unknown field "bogus" in com.example.stable.v1.CronTab.spec"#), "{err}");

    let good = k.file("good-list.json", &list(vec![crontab("a", json!({"cronSpec": "* * * * *"}))]));
    assert!(k.ok(&["apply", "-f", &good]).contains("crontab.stable.example.com/a created"));
}
