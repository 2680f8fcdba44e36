//! The guided migration against the local engine (`--local=DIR`, the engine in the
//! `kubectl-crd` process over redb): 1,000 CronTabs in three namespaces, with status,
//! links between them and dependents of another kind, moved to a new group and kind; a rollback;
//! the plan; the refusals that stop a run before anything is deleted; the library API
//! the TUI wizard drives; TPR-era files.

use crate::support::migrate;

use kubectl_crd::cluster::identity::identify;
use kubectl_crd::migrate::plan::{Input, Request, Source};
use kubectl_crd::migrate::{Event, Migration, Phase, Step};
use migrate::*;
use std::path::Path;

fn local_args(dir: &Path) -> Vec<String> {
    vec![format!("--local={}", dir.display())]
}

async fn load(dir: &Path, n: usize) -> Fixture {
    let conn = open_local(dir).await;
    let fixture = populate(conn.client(), n).await;
    conn.close().await;
    fixture
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_crontabs_move_to_a_new_group_and_kind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 1000).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let journal = tmp.path().join("journal");

    let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    assert!(
        stdout.contains("✓ verify: 1000 object(s) and 500 dependent(s) checked against the new kind: 0 difference(s)"),
        "{stdout}"
    );
    assert!(stdout.contains("Done in"), "{stdout}");

    assert_local_state(&data, &fixture, NEW_GROUP, "Schedule", OLD_CRD).await;

    let out = cli(
        &[&format!("--local={}", data.display()), "migrate", "verify", "--journal", &journal.display().to_string()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 difference(s)"), "{}", text(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_after_a_completed_migration_restores_the_original_state() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 150).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let journal = tmp.path().join("journal");
    let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
    assert!(out.status.success(), "{}", text(&out));

    let j = journal.display().to_string();
    let out = cli(&[&local_args(&data)[0], "migrate", "rollback", "--journal", &j, "--yes"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "✓ verify-rollback: 150 object(s) and 75 dependent(s) checked against the old kind: 0 difference(s)"
        ),
        "{stdout}"
    );

    assert_local_state(&data, &fixture, OLD_GROUP, "CronTab", NEW_CRD).await;

    let out = cli(&[&local_args(&data)[0], "migrate", "verify", "--journal", &j], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let out = cli(&[&local_args(&data)[0], "migrate", "resume", "--journal", &j, "--yes"], &[]);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("nothing to resume"),
        "{}",
        text(&out)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_says_what_will_happen_and_changes_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 60).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let local = &local_args(&data)[0];
    let plan = ["migrate", "plan", "--from", OLD_CRD, "--to", &new.display().to_string(), "--controller", CONTROLLER]
        .map(String::from);
    let mut args = vec![local.clone()];
    args.extend(plan.iter().cloned());
    let out = cli(&strs(&args), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for says in [
        "Objects: 60",
        "team-a      20",
        "Dependents (objects whose ownerReferences point at them; kept and re-adopted): 30",
        "Run (ops.example.com/v1): 30",
        "ops/controllers/crontab-controller (controllers.ops.example.com): 2 replica(s)",
        "Name conflicts of the new CRD: none",
        "Dry run against the new schema: in 'run'",
        "Nothing was changed",
    ] {
        assert!(stdout.contains(says), "{says:?} in\n{stdout}");
    }
    args.extend(["-o", "json"].map(String::from));
    let out = cli(&strs(&args), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["objects"], 60);
    assert_eq!(doc["dependents"].as_array().map(Vec::len), Some(30));
    assert_eq!(doc["order"], "newFirst");
    assert_eq!(doc["validation"]["state"], "deferred");
    assert_eq!(doc["steps"][4]["step"], "delete-old-data");

    // With the new CRD there already, the plan dry-runs every object against it.
    let conn = open_local(&data).await;
    create_crd(conn.client(), &new_crd().build()).await;
    conn.close().await;
    let out = cli(&strs(&args), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["validation"]["state"], "checked", "{doc}");
    assert_eq!(doc["validation"]["objects"], 60);
    assert_eq!(doc["validation"]["rejected"], serde_json::json!([]));

    let conn = open_local(&data).await;
    let client = conn.client().clone();
    assert_kept(&client, &fixture, OLD_GROUP, "CronTab").await;
    assert_eq!(controller_replicas(&client).await, CONTROLLER_REPLICAS);
    drop(client);
    conn.close().await;
}

/// Asserts that a refused run left everything as it was.
async fn assert_untouched(data: &Path, fixture: &Fixture) {
    let conn = open_local(data).await;
    let client = conn.client().clone();
    assert_kept(&client, fixture, OLD_GROUP, "CronTab").await;
    assert_eq!(controller_replicas(&client).await, CONTROLLER_REPLICAS, "the controller is back");
    assert!(!crd_exists(&client, NEW_CRD).await, "the new CRD was removed again");
    let crds = kubectl_crd::cluster::registrations::list_crds(&client).await.expect("crds");
    assert!(crds.iter().all(|c| !c.spec.group.ends_with("migrate.kubectl-crd.io")), "no validation CRD is left");
    drop(client);
    conn.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_conflict_stops_the_run_before_anything_changes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 30).await;
    let conn = open_local(&data).await;
    create_crd(conn.client(), &crontab_like(NEW_GROUP, "Job").short_names(&["sched"]).build()).await;
    conn.close().await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let local = &local_args(&data)[0];
    let out = cli(&[local, "migrate", "plan", "--from", OLD_CRD, "--to", &new.display().to_string()], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("name conflict: resource name \"sched\" is held by jobs.batch.example.org"),
        "{}",
        text(&out)
    );
    let journal = tmp.path().join("journal");
    let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refused: the migration cannot start: name conflict") && stderr.contains("Nothing was deleted"),
        "{stderr}"
    );
    assert!(!journal.join("journal.json").exists(), "no journal for a run that did not start");
    assert_untouched(&data, &fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn objects_the_new_schema_rejects_stop_the_run_and_it_undoes_itself() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 30).await;
    let cases = [
        (
            new_crd().spec_field("replicas", serde_json::json!({"type": "integer", "maximum": 2})).build(),
            "the new schema refuses 12 of 30 object(s)",
        ),
        (new_crd().without_spec_field("image").build(), "the new schema would drop or change: spec.image: missing"),
    ];
    for (i, (doc, says)) in cases.iter().enumerate() {
        let new = write_json(tmp.path(), &format!("new-{i}.json"), doc);
        let journal = tmp.path().join(format!("journal-{i}"));
        let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(says), "{says:?} in {}", text(&out));
        assert!(stdout.contains("Undoing what the run changed (nothing was deleted)"), "{stdout}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("Nothing was deleted"), "{}", text(&out));
        let state: serde_json::Value =
            serde_json::from_slice(&std::fs::read(journal.join("journal.json")).expect("journal")).expect("json");
        assert_eq!(state["phase"], "rolledBack");
        assert!(state["refused"].as_str().is_some_and(|r| r.contains(says)), "{state}");
        assert_untouched(&data, &fixture).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_that_cannot_be_written_stops_the_run() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 30).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let journal = tmp.path().join("journal");
    // A full disk: the backup's first file is written to /dev/full (ENOSPC).
    let objects = journal.join("backup").join("objects");
    std::fs::create_dir_all(&objects).expect("mkdir");
    std::os::unix::fs::symlink("/dev/full", objects.join("team-a.yaml.tmp")).expect("symlink");
    let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write the backup in") && stderr.contains("No space left on device"), "{stderr}");
    assert!(stderr.contains("Nothing was deleted"), "{stderr}");
    assert_untouched(&data, &fixture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_library_api_drives_a_migration_step_by_step_with_events() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let conn = kubectl_crd::cluster::Connection::in_memory(None).await.expect("engine");
    let client = conn.client().clone();
    let fixture = populate(&client, 60).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let request = Request {
        from: Source::Crd { name: "ct".into() },
        to: Some(Input::read(&new).expect("read")),
        tpr_names: None,
        controllers: vec![CONTROLLER.into()],
        versions: Default::default(),
        into_namespace: None,
        validate: true,
    };
    let plan = Migration::plan(&client, &request).await.expect("plan");
    assert!(!plan.is_blocked(), "{:?}", plan.problems);
    assert_eq!((plan.objects, plan.dependents.len(), plan.old_crd_name.as_str()), (60, 30, OLD_CRD));
    let journal = tmp.path().join("journal");
    let here = identify(&client, conn.origin()).await.expect("identity");
    let mut m = Migration::create(&plan, &journal, &here).expect("journal");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let report = move |e: Event| {
        let _ = tx.send(e);
    };
    let mut ran = Vec::new();
    while let Some(step) = m.next_step() {
        let outcome = m.run_step(&client, &report).await.expect("step");
        assert_eq!(outcome.step, step);
        assert_eq!(outcome.phase_finished, step == Step::Verify);
        ran.push(step);
    }
    assert_eq!(ran, plan.steps.iter().map(|s| s.step).collect::<Vec<_>>());
    assert_eq!(m.state().phase, Phase::Completed);
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    for step in &ran {
        assert!(events.iter().any(|e| matches!(e, Event::Finished { step: s, .. } if s == step)), "{step} finished");
    }
    assert!(
        events.contains(&Event::Progress { step: Step::Recreate, done: 60, total: 60 }),
        "recreate reported its progress"
    );
    assert!(m.verify(&client).await.expect("verify").differences.is_empty());
    assert_eq!(Migration::open(&journal).expect("reopen").next_step(), None);
    assert_kept(&client, &fixture, NEW_GROUP, "Schedule").await;
    drop(client);
    conn.close().await;
}

fn asset(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/migrate").join(name)
}

/// Runs every step of a migration of the sample TPR export, on a fresh in-memory engine.
async fn migrate_tpr(to: Option<&str>) -> (kubectl_crd::cluster::Connection, kubectl_crd::migrate::Plan) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let conn = kubectl_crd::cluster::Connection::in_memory(None).await.expect("engine");
    let request = Request {
        from: Source::Files {
            registration: Input::read(&asset("cron-tab-tpr.yaml")).expect("tpr"),
            data: vec![Input::read(&asset("crontabs-export.yaml")).expect("export")],
        },
        to: to.map(|t| Input::read(&asset(t)).expect("to")),
        tpr_names: None,
        controllers: vec![],
        versions: Default::default(),
        into_namespace: None,
        validate: true,
    };
    let plan = Migration::plan(conn.client(), &request).await.expect("plan");
    assert!(!plan.is_blocked(), "{:?}", plan.problems);
    let here = identify(conn.client(), conn.origin()).await.expect("identity");
    let mut m = Migration::create(&plan, &tmp.path().join("journal"), &here).expect("journal");
    let silent = kubectl_crd::migrate::progress::silent();
    while m.next_step().is_some() {
        m.run_step(conn.client(), &silent).await.expect("step");
    }
    assert_eq!(m.state().phase, Phase::Completed);
    (conn, plan)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_party_resource_export_becomes_a_crd_with_its_objects() {
    use kube::api::{Api, DynamicObject};
    let (conn, plan) = migrate_tpr(None).await;
    let names = plan.tpr_names.clone().expect("derived names");
    assert_eq!(
        (names.kind.as_str(), names.plural.as_str(), names.group.as_str()),
        ("CronTab", "crontabs", "stable.example.com")
    );
    assert_eq!(plan.new_crd_name, "crontabs.stable.example.com");
    assert_eq!(plan.objects, 3);
    assert!(plan.namespaces.iter().any(|n| n.namespace == "storage" && !n.target_exists), "{:?}", plan.namespaces);
    let api: Api<DynamicObject> = Api::all_with(conn.client().clone(), &ar("stable.example.com", "CronTab"));
    let items = api.list(&Default::default()).await.expect("list").items;
    assert_eq!(items.len(), 3);
    let report = items.iter().find(|o| o.metadata.name.as_deref() == Some("nightly-report")).expect("nightly-report");
    assert_eq!(report.data["status"]["lastRun"], "2017-06-01T02:00:00Z");
    assert_eq!(report.metadata.labels.as_ref().and_then(|l| l.get("team")).map(String::as_str), Some("analytics"));
    let backup = items.iter().find(|o| o.metadata.name.as_deref() == Some("backup")).expect("backup");
    assert_eq!(backup.data["spec"]["retention"], 30);
    conn.close().await;

    // With the registration given as a v1beta1 CRD: converted, status through /status.
    let (conn, plan) = migrate_tpr(Some("crontab-crd-v1beta1.yaml")).await;
    assert!(plan.notes.iter().any(|n| n.contains("converted from apiextensions.k8s.io/v1beta1")), "{:?}", plan.notes);
    assert!(plan.to.status, "the v1beta1 subresources carried over");
    let api: Api<DynamicObject> =
        Api::namespaced_with(conn.client().clone(), "default", &ar("stable.example.com", "CronTab"));
    assert_eq!(
        api.get_status("nightly-report").await.expect("status").data["status"]["lastRun"],
        "2017-06-01T02:00:00Z"
    );
    conn.close().await;
}

#[test]
fn convert_prints_a_v1_crd_for_a_tpr_and_for_a_v1beta1_crd() {
    let tpr = asset("cron-tab-tpr.yaml").display().to_string();
    let out = cli(&["migrate", "convert", "--from", &tpr], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("# ThirdPartyResource cron-tab.stable.example.com: kind CronTab, plural crontabs"),
        "{stdout}"
    );
    let doc: serde_json::Value = serde_saphyr::from_str(&stdout).expect("yaml");
    assert_eq!(doc["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(doc["metadata"]["name"], "crontabs.stable.example.com");
    let out = cli(&["migrate", "convert", "--from", &tpr, "--kind", "Schedule"], &[]);
    let doc: serde_json::Value = serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("yaml");
    assert_eq!(doc["metadata"]["name"], "schedules.stable.example.com");
    let out = cli(&["migrate", "convert", "--from", &asset("crontab-crd-v1beta1.yaml").display().to_string()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("yaml");
    assert_eq!(doc["spec"]["versions"][0]["additionalPrinterColumns"][0]["jsonPath"], ".spec.cronSpec");
    assert_eq!(doc["spec"]["versions"][0]["subresources"]["status"], serde_json::json!({}));
}

#[test]
fn wrong_input_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let local = format!("--local={}", tmp.path().join("data").display());
    let out = cli(&[&local, "migrate", "run", "--from", OLD_CRD, "--to", "/nonexistent/new.yaml", "--yes"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/new.yaml: cannot read it"), "{}", text(&out));
    let out = cli(&[&local, "migrate", "run", "--from", OLD_CRD, "--to", "x.yaml"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --yes"), "{}", text(&out));
    let tpr = asset("cron-tab-tpr.yaml").display().to_string();
    let out = cli(&[&local, "migrate", "plan", "--from", &tpr, "--data", &tpr, "--to", &tpr], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out =
        cli(&[&local, "migrate", "resume", "--journal", &tmp.path().join("none").display().to_string(), "--yes"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// Runs a command line as `migrate` printed it, pasted into a shell (`kubectl crd` being
/// this build), with `extra` appended and journals under `xdg`; no kubeconfig anywhere, so
/// a command that lost `--local` fails.
fn paste(printed: &str, extra: &str, xdg: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let command =
        printed.strip_prefix("kubectl crd ").unwrap_or_else(|| panic!("not a kubectl crd command: {printed}"));
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(format!("exec '{}' {command} {extra}", env!("CARGO_BIN_EXE_kubectl-crd")))
        .env("XDG_DATA_HOME", xdg)
        .env("HOME", xdg)
        .env_remove("KUBECONFIG")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        sh.env(k, v);
    }
    sh.output().expect("sh runs")
}

/// The commands `migrate` prints for the user to paste — "Run it with" after a plan, and
/// "continue with ... resume" when an unfinished run is in the way — keep `--local=DIR`
/// (quoted: the path has a space) and act on the same data when pasted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printed_commands_keep_the_connection_and_work_when_pasted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("my data");
    let fixture = load(&data, 30).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let xdg = tmp.path().join("xdg");
    let local = format!("--local={}", data.display());
    let out = cli(
        &[&local, "migrate", "plan", "--from", OLD_CRD, "--to", &new.display().to_string(), "--controller", CONTROLLER],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let run =
        stdout.lines().find_map(|l| l.strip_prefix("Nothing was changed. Run it with: ")).expect("the run command");
    assert!(
        run.starts_with(&format!("kubectl crd --local=\"{}\" migrate run --from {OLD_CRD} ", data.display())),
        "{run}"
    );

    // Pasted, and killed before anything is deleted: the journal keeps the place.
    let out = paste(run, "--yes", &xdg, &[("KUBECTL_CRD_MIGRATE_CRASH_AT", "delete-old-data")]);
    assert_eq!(out.status.code(), None, "killed: {}", text(&out));
    // Pasted again: the unfinished run is in the way, and the command that goes on is printed.
    let out = paste(run, "--yes", &xdg, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let resume = stderr.split("continue with '").nth(1).and_then(|r| r.split('\'').next()).expect("the resume command");
    assert!(
        resume.starts_with(&format!("kubectl crd --local=\"{}\" migrate resume --journal ", data.display())),
        "{stderr}"
    );
    let out = paste(resume, "--yes", &xdg, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 difference(s)"), "{}", text(&out));
    assert_local_state(&data, &fixture, NEW_GROUP, "Schedule", OLD_CRD).await;
}

/// Another CRD took the short name the old one freed: `rollback` refuses before it
/// removes anything (the objects would otherwise be left in the backup alone), the journal
/// stays completed, and once the name is free again the rollback restores everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_checks_the_old_names_before_it_removes_anything() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 30).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let journal = tmp.path().join("journal");
    let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let squatter = crontab_like(OLD_GROUP, "Other").short_names(&["ct"]).build();
    let conn = open_local(&data).await;
    create_crd(conn.client(), &squatter).await;
    conn.close().await;

    let j = journal.display().to_string();
    let local = &local_args(&data)[0];
    let rollback = [local.as_str(), "migrate", "rollback", "--journal", &j, "--yes"];
    let out = cli(&rollback, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot roll back")
            && stderr.contains("resource name \"ct\" is held by others.stable.example.com")
            && stderr.contains("Nothing was deleted"),
        "{stderr}"
    );
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(journal.join("journal.json")).expect("journal")).expect("json");
    assert_eq!(state["phase"], "completed", "the journal is as it was");
    let conn = open_local(&data).await;
    let client = conn.client().clone();
    assert_kept(&client, &fixture, NEW_GROUP, "Schedule").await;
    assert!(crd_exists(&client, NEW_CRD).await, "the new CRD is kept");
    let crds: kube::Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        kube::Api::all(client.clone());
    crds.delete("others.stable.example.com", &Default::default()).await.expect("free the name");
    drop((client, crds));
    conn.close().await;

    let out = cli(&rollback, &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_local_state(&data, &fixture, OLD_GROUP, "CronTab", NEW_CRD).await;
}

/// `kubectl-crd` with journals under `xdg`, on the local engine in `data`.
fn on(data: &Path, xdg: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let local = format!("--local={}", data.display());
    let xdg = xdg.display().to_string();
    let mut all: Vec<(&str, &str)> = vec![("XDG_DATA_HOME", &xdg)];
    all.extend_from_slice(env);
    cli(&[&[local.as_str()], args].concat(), &all)
}

/// A journal belongs to the cluster it was made on: another cluster (here another local
/// engine, journals under the same data directory) neither finds it nor resumes it, even
/// named with --journal; its own cluster does both. A journal of an older version, which
/// records no cluster, is taken only when named with --this-cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn journals_belong_to_the_cluster_they_were_made_on() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (a, b, xdg) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("xdg"));
    let fixture = load(&a, 30).await;
    let other = load(&b, 9).await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let run = ["migrate", "run", "--from", OLD_CRD, "--to", &new.display().to_string(), "--yes"];
    let out = on(&a, &xdg, &run, &[("KUBECTL_CRD_MIGRATE_CRASH_AT", "recreate")]);
    assert_eq!(out.status.code(), None, "killed half-way: {}", text(&out));
    let journal = xdg.join("kubectl-crd/migrations").join(format!("{OLD_CRD}--to--{NEW_CRD}"));
    let j = journal.display().to_string();

    // On b: not found, not resumed when named, not even when claimed.
    for args in [&["migrate", "resume", "--yes"][..], &["migrate", "verify"], &["migrate", "rollback", "--yes"]] {
        let out = on(&b, &xdg, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("no migration"), "{args:?}: {}", text(&out));
    }
    for args in [
        &["migrate", "resume", "--journal", &j, "--yes"][..],
        &["migrate", "resume", "--journal", &j, "--this-cluster", "--yes"],
    ] {
        let out = on(&b, &xdg, args, &[]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let a_dir = std::fs::canonicalize(&a).expect("a").display().to_string();
        assert!(
            stderr.contains(&format!("belongs to another cluster, the local engine in {a_dir} (kube-system uid ")),
            "{stderr}"
        );
    }
    let out = on(&b, &xdg, &run, &[]);
    assert!(out.status.success(), "the same migration on b is its own: {}", text(&out));
    assert_local_state(&b, &other, NEW_GROUP, "Schedule", OLD_CRD).await;

    // On a: found and finished. (Two journals now: a's unfinished one is the one taken.)
    let out = on(&a, &xdg, &["migrate", "resume", "--yes"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_local_state(&a, &fixture, NEW_GROUP, "Schedule", OLD_CRD).await;

    // As an older version wrote it: no cluster recorded.
    let path = journal.join("journal.json");
    let mut state: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    assert!(state["cluster"]["dataDir"].is_string(), "{state}");
    state.as_object_mut().expect("object").remove("cluster");
    std::fs::write(&path, serde_json::to_vec(&state).expect("json")).expect("write");
    let out = on(&a, &xdg, &["migrate", "verify", "--journal", &j], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not record which cluster"), "{}", text(&out));
    let out = on(&a, &xdg, &["migrate", "verify", "--journal", &j, "--this-cluster"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let out = on(&a, &xdg, &["migrate", "verify", "--journal", &j], &[]);
    assert!(out.status.success(), "claimed, it records this cluster: {}", text(&out));
}

/// A migration whose new CRD takes the old one's name (a scope change) rolls back: the
/// checks before the first delete count the new CRD, which goes first, out of the way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scope_change_under_the_same_name_rolls_back() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let fixture = load(&data, 20).await;
    let mut doc = crontab_like(OLD_GROUP, "CronTab").short_names(&["ct"]).build();
    doc["spec"]["scope"] = serde_json::json!("Cluster");
    let new = write_json(tmp.path(), "cluster-scoped.json", &doc);
    let journal = tmp.path().join("journal");
    let out = cli(&strs(&run_args(&local_args(&data), &new, &journal)), &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("created once the old one is gone"), "{}", text(&out));
    let j = journal.display().to_string();
    let out = cli(&[&local_args(&data)[0], "migrate", "rollback", "--journal", &j, "--yes"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let conn = open_local(&data).await;
    let client = conn.client().clone();
    assert_kept(&client, &fixture, OLD_GROUP, "CronTab").await;
    drop(client);
    conn.close().await;
}
