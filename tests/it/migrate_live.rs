//! The guided migration on the live path: `kubectl crd serve` in a child process over
//! HTTPS, and `kubectl-crd --kubeconfig KUBECONFIG migrate ...` talking to it like to any
//! cluster. 1,000 CronTabs in three namespaces, with status, links between them and
//! dependents of another kind, moved to a new group and kind, then rolled back.

use crate::support;
use crate::support::migrate;

use migrate::*;
use support::kubectl::Server;

async fn client_of(server: &Server) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::read_from(&server.kubeconfig).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
        .await
        .expect("config");
    kube::Client::try_from(config).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_crontabs_move_to_a_new_group_and_kind_over_https() {
    let server = Server::start();
    let client = client_of(&server).await;
    let fixture = populate(&client, 1000).await;
    let tmp = tempfile::tempdir().expect("tempdir");
    let new = write_json(tmp.path(), "new.json", &new_crd().build());
    let journal = tmp.path().join("journal");
    let target = vec!["--kubeconfig".to_string(), server.kubeconfig.display().to_string()];

    let mut plan = target.clone();
    plan.extend(["migrate", "plan", "--from", OLD_CRD, "--to", &new.display().to_string()].map(String::from));
    let out = cli(&strs(&plan), &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Objects: 1000"), "{}", text(&out));

    let out = cli(&strs(&run_args(&target, &new, &journal)), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("✓ verify: 1000 object(s) and 500 dependent(s) checked against the new kind: 0 difference(s)"),
        "{stdout}"
    );
    assert_kept(&client, &fixture, NEW_GROUP, "Schedule").await;
    assert!(!crd_exists(&client, OLD_CRD).await, "the old registration is gone");
    assert_eq!(controller_replicas(&client).await, CONTROLLER_REPLICAS);

    let j = journal.display().to_string();
    let mut verify = target.clone();
    verify.extend(["migrate", "verify", "--journal", &j].map(String::from));
    let out = cli(&strs(&verify), &[]);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains(": 0 difference(s)"),
        "{}",
        text(&out)
    );

    let mut rollback = target.clone();
    rollback.extend(["migrate", "rollback", "--journal", &j, "--yes"].map(String::from));
    let out = cli(&strs(&rollback), &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_kept(&client, &fixture, OLD_GROUP, "CronTab").await;
    assert!(!crd_exists(&client, NEW_CRD).await, "the new registration is gone after the rollback");
}
