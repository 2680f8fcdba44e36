//! The terminal UI end to end: the real binary in a real terminal (tmux), on a local engine
//! loaded with the demo, driven by keys: browse → detail → resources → edit status through
//! a scripted editor → scale up from 0 → back → quit. The screen is read with
//! `capture-pane`, and the stored objects are read after the TUI has quit.

use kubectl_crd::cluster::objects::{ObjectRef, get_object};
use kubectl_crd::cluster::registrations::find_crd;
use kubectl_crd::cluster::tui_ops::resource_of;
use kubectl_crd::cluster::{ConnectOptions, Connection, Target};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of our own (its own socket), killed on drop.
struct Tmux {
    socket: PathBuf,
    /// The TUI's standard error, shown when a wait fails.
    stderr: PathBuf,
}

impl Tmux {
    /// Runs `command` in a new `width`×`height` session.
    fn start(dir: &Path, command: &str, width: u16, height: u16) -> Tmux {
        let t = Tmux { socket: dir.join("tmux.sock"), stderr: dir.join("stderr") };
        let status = t
            .tmux()
            .args(["new-session", "-d", "-s", "tui", "-x", &width.to_string(), "-y", &height.to_string()])
            .arg(command)
            .status()
            .expect("tmux is installed (.ci/run installs it)");
        assert!(status.success(), "tmux new-session failed");
        t
    }

    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket).env_remove("TMUX");
        c
    }

    /// Sends keys by tmux name (`Enter`, `Escape`, `+`), one at a time with a pause, as a
    /// person types (an Esc glued to the next key would read as Alt+key).
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            let status = self.tmux().args(["send-keys", "-t", "tui", k]).status().expect("send-keys");
            assert!(status.success());
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// Types text literally.
    fn type_text(&self, text: &str) {
        let status = self.tmux().args(["send-keys", "-t", "tui", "-l", text]).status().expect("send-keys");
        assert!(status.success());
        std::thread::sleep(Duration::from_millis(150));
    }

    fn screen(&self) -> String {
        let out = self.tmux().args(["capture-pane", "-p", "-t", "tui"]).output().expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until every needle is on screen; fails with the screen otherwise.
    fn wait_for(&self, needles: &[&str]) -> String {
        // Generous: the machine may be busy compiling beside us.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            if needles.iter().all(|n| screen.contains(n)) {
                return screen;
            }
            let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
            assert!(
                Instant::now() < deadline,
                "waited for {needles:?}; the screen shows:\n{screen}\nstderr:\n{stderr}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

/// An executable editor script: what a person would do in vi, scripted.
fn editor_script(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("editor.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write editor");
    let mut perms = std::fs::metadata(&path).expect("editor").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    path
}

/// The stored widget, read through a fresh connection to the data the TUI left.
fn stored_widget(data: &Path, name: &str) -> serde_json::Value {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let options = ConnectOptions {
            target: Target::Local { data_dir: data.to_path_buf() },
            namespace: None,
            request_timeout: None,
        };
        let conn = Connection::open(&options).await.expect("the TUI let go of the data");
        let crd = find_crd(conn.client(), "widgets").await.expect("widgets CRD");
        let resource = resource_of(&crd).expect("served");
        let obj = get_object(conn.client(), ObjectRef::new(&resource, "default", name)).await.expect("widget");
        let value = serde_json::to_value(obj).expect("json");
        conn.close().await;
        value
    })
}

#[test]
fn browse_edit_status_scale_from_zero_and_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let editor = editor_script(dir.path(), "sed -i 's/phase: Stopped/phase: Running/' \"$1\"");
    let command = format!(
        "KUBE_EDITOR={} {} --local={} tui --demo 2>{}; echo TUI-EXIT=$?; sleep 60",
        editor.display(),
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.path().join("stderr").display(),
    );
    let t = Tmux::start(dir.path(), &command, 130, 40);

    // Registrations, with the troubled ones marked in words.
    let screen = t.wait_for(&["customresourcedefinitions [", "widgets.demo.example.com", "gadgets.demo.example.com"]);
    assert!(screen.contains("local:") && screen.contains("ns: default"), "the header names the connection:\n{screen}");
    assert!(screen.contains("!  gadgets.demo.example.com") && screen.contains("NameConflict"), "{screen}");

    // Filter down to widgets, open its detail, then its resources.
    t.keys(&["/"]);
    t.type_text("^widgets");
    t.keys(&["Enter"]);
    t.wait_for(&["customresourcedefinitions [1/"]);
    t.keys(&["Enter"]);
    t.wait_for(&["Names (spec ⇄ accepted)", "Conditions", "Established", "schema"]);
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-001"]);

    // One widget at 0 replicas.
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["widgets/default/widget-001", "phase: Stopped", "resourceVersion"]);
    assert!(screen.contains("replicas: 0"), "{screen}");

    // Edit the status in the scripted editor: saved through /status.
    t.keys(&["E"]);
    t.wait_for(&["saved the status of widgets/default/widget-001", "phase: Running"]);

    // Scale up from 0 through /scale.
    t.keys(&["s"]);
    t.wait_for(&["scale (/scale)", "desired   0"]);
    t.keys(&["+"]);
    t.wait_for(&["set replicas to 1"]);
    t.keys(&["Enter"]);
    let screen = t.wait_for(&["scaled widgets widget-001 → 1"]);
    assert!(!screen.contains("scale (/scale)"), "the dialog closed:\n{screen}");
    t.wait_for(&["replicas: 1"]);

    // Back out to the registrations and quit.
    t.keys(&["Escape"]);
    t.wait_for(&["widgets(default)"]);
    t.keys(&["Escape"]);
    t.wait_for(&["Names (spec ⇄ accepted)"]);
    t.keys(&["Escape"]);
    t.wait_for(&["customresourcedefinitions ["]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);

    let widget = stored_widget(&data, "widget-001");
    assert_eq!(widget["status"]["phase"], "Running", "{widget:#}");
    assert_eq!(widget["spec"]["replicas"], 1, "{widget:#}");
}

#[test]
fn readonly_refuses_writes_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let command = format!(
        "{} --local={} tui --demo --readonly 2>{}; echo TUI-EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.path().join("stderr").display(),
    );
    let t = Tmux::start(dir.path(), &command, 120, 30);
    t.wait_for(&["READ-ONLY", "widgets.demo.example.com"]);
    t.keys(&[":"]);
    t.type_text("wd");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-001"]);
    for key in ["e", "E", "s"] {
        t.keys(&[key]);
        t.wait_for(&["read-only: writes are off"]);
    }
    t.keys(&["C-c"]);
    t.wait_for(&["TUI-EXIT=0"]);
}

/// A `kubectl crd serve` of the demo data, stopped on drop.
struct Served {
    child: std::process::Child,
}

impl Served {
    fn start(data: &Path) -> Served {
        let load = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
            .arg(format!("--local={}", data.display()))
            .arg("demo")
            .output()
            .expect("demo");
        assert!(load.status.success(), "demo: {}", String::from_utf8_lossy(&load.stderr));
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(data)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("serve");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).expect("ready line");
        assert!(line.contains("ready on"), "{line}");
        Served { child }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn kubectl(data: &Path, args: &[&str]) {
    let out = Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", data.join("kubeconfig"))
        .output()
        .expect("kubectl is installed (.ci/run installs it)");
    assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn rows_follow_the_watch_and_a_conflicting_edit_is_reapplied() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let _served = Served::start(&data);
    // The editor stands for a slow user: while it is open, someone else changes the size.
    let editor = editor_script(
        dir.path(),
        &format!(
            "KUBECONFIG={} kubectl patch widgets.demo.example.com widget-002 --type=merge -p '{{\"spec\":{{\"size\":9}}}}' >/dev/null\nsed -i 's/color: green/color: blue/' \"$1\"",
            data.join("kubeconfig").display()
        ),
    );
    // --local=DIR while serve holds DIR: the TUI goes through serve's kubeconfig.
    let command = format!(
        "KUBE_EDITOR={} {} --local={} tui 2>{}; echo TUI-EXIT=$?; sleep 60",
        editor.display(),
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.path().join("stderr").display(),
    );
    let t = Tmux::start(dir.path(), &command, 120, 30);
    t.wait_for(&["local (served)", "widgets.demo.example.com"]);
    t.keys(&[":"]);
    t.type_text("widgets");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-003"]);

    // Changes made with kubectl show up without a key press.
    kubectl(&data, &["delete", "widgets.demo.example.com", "widget-003"]);
    kubectl(&data, &["label", "widgets.demo.example.com", "widget-004", "seen=yes"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while t.screen().contains("widget-003") {
        assert!(Instant::now() < deadline, "the deleted row stays:\n{}", t.screen());
        std::thread::sleep(Duration::from_millis(100));
    }

    // Edit widget-002's spec while the server changes it: 409, shown, re-applied.
    t.keys(&["j", "Enter"]);
    t.wait_for(&["widgets/default/widget-002", "color: green"]);
    t.keys(&["e"]);
    let screen = t.wait_for(&["409 Conflict", "~ spec.size: 1 → 9", "Your edit is kept in"]);
    assert!(screen.contains("kubectl-crd-edits"), "{screen}");
    t.keys(&["r"]);
    t.wait_for(&["saved the spec of widgets/default/widget-002", "color: blue", "size: 9"]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
}
