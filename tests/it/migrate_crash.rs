//! Crash safety: the real `kubectl-crd --local=DIR migrate run` is killed with SIGKILL
//! (`KUBECTL_CRD_MIGRATE_CRASH_AT`) at every step boundary, after the work of a step but
//! before the journal records it, and in the middle of the delete, recreate and re-adopt
//! steps; `migrate resume` then finishes, `migrate verify` finds zero differences, and
//! every object, status, link and dependent is where it should be. The same for a
//! rollback killed half-way.

use crate::support::migrate;

use migrate::*;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

const OBJECTS: usize = 45;

fn local(dir: &Path) -> String {
    format!("--local={}", dir.display())
}

fn assert_killed(out: &std::process::Output, point: &str) {
    assert_eq!(out.status.signal(), Some(9), "the run should die with SIGKILL at {point}: {}", text(out));
}

fn assert_zero_differences(data: &Path, journal: &Path) {
    let out = cli(&[&local(data), "migrate", "verify", "--journal", &journal.display().to_string()], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(": 0 difference(s)"), "{}", text(&out));
}

/// Loads the fixture, runs a migration killed at `point`, resumes it, and checks it all.
async fn crash_then_resume(point: &str) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    let conn = open_local(&data).await;
    let fixture = populate(conn.client(), OBJECTS).await;
    conn.close().await;
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let journal = tmp.path().join("journal");

    let out = cli(&strs(&run_args(&[local(&data)], &new, &journal)), &[("KUBECTL_CRD_MIGRATE_CRASH_AT", point)]);
    assert_killed(&out, point);
    let out = cli(&[&local(&data), "migrate", "resume", "--journal", &journal.display().to_string(), "--yes"], &[]);
    assert!(out.status.success(), "resume after a crash at {point}: {}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("checked against the new kind: 0 difference(s)"),
        "{}",
        text(&out)
    );
    assert_zero_differences(&data, &journal);

    assert_local_state(&data, &fixture, NEW_GROUP, "Schedule", OLD_CRD).await;
}

macro_rules! crash_at {
    ($($name:ident => $point:expr),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                crash_then_resume($point).await;
            }
        )*
    };
}

crash_at! {
    before_stop_controllers => "stop-controllers",
    after_stopping_controllers_unrecorded => "stop-controllers:end",
    before_backup => "backup",
    after_backup_unrecorded => "backup:end",
    before_create_new_crd => "create-new-crd",
    after_create_new_crd_unrecorded => "create-new-crd:end",
    before_validate => "validate",
    in_the_middle_of_validate => "validate:20",
    before_delete_old_data => "delete-old-data",
    in_the_middle_of_delete_old_data => "delete-old-data:20",
    after_delete_old_data_unrecorded => "delete-old-data:end",
    before_delete_old_crd => "delete-old-crd",
    after_delete_old_crd_unrecorded => "delete-old-crd:end",
    before_recreate => "recreate",
    in_the_middle_of_recreate => "recreate:20",
    after_recreate_unrecorded => "recreate:end",
    before_readopt => "readopt",
    in_the_middle_of_readopt => "readopt:10",
    after_readopt_unrecorded => "readopt:end",
    before_restart_controllers => "restart-controllers",
    before_verify => "verify",
}

/// A rollback killed half-way through restoring the old objects resumes to the state the
/// cluster had before the migration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollback_killed_half_way_resumes_to_the_original_state() {
    for point in ["remove-new-data:20", "restore-old-data:20", "readopt-old:10"] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let data = tmp.path().join("data");
        let conn = open_local(&data).await;
        let fixture = populate(conn.client(), OBJECTS).await;
        conn.close().await;
        let new = write_json(tmp.path(), "new.json", &new_crd().build());
        let journal = tmp.path().join("journal");
        let j = journal.display().to_string();
        let out = cli(&strs(&run_args(&[local(&data)], &new, &journal)), &[]);
        assert!(out.status.success(), "{}", text(&out));

        let out = cli(
            &[&local(&data), "migrate", "rollback", "--journal", &j, "--yes"],
            &[("KUBECTL_CRD_MIGRATE_CRASH_AT", point)],
        );
        assert_killed(&out, point);
        let out = cli(&[&local(&data), "migrate", "resume", "--journal", &j, "--yes"], &[]);
        assert!(out.status.success(), "resume of a rollback killed at {point}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("checked against the old kind: 0 difference(s)"),
            "{}",
            text(&out)
        );
        assert_zero_differences(&data, &journal);

        assert_local_state(&data, &fixture, OLD_GROUP, "CronTab", NEW_CRD).await;
    }
}
