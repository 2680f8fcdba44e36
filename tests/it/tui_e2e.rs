//! The terminal UI end to end: the real binary in a real terminal (tmux), on a local engine
//! loaded with the demo, driven by keys: browse → objects → detail → edit status through
//! a scripted editor → scale up from 0 → back → quit; refused edits reopened, deletes,
//! read-only, live rows and counts. The screen is read with `capture-pane`, and the stored
//! objects are read after the TUI has quit. The migration wizard's runs are in
//! `tui_wizard_e2e`, on the same helpers.

use crate::support::crd::CrdBuilder;
use crate::support::migrate;

use kube::api::{Api, DynamicObject};
use kubectl_crd::cluster::objects::{ObjectRef, get_object};
use kubectl_crd::cluster::registrations::find_crd;
use kubectl_crd::cluster::tui_ops::resource_of;
use migrate::open_local;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a screen may take to show what a test waits for. A bound for a broken TUI, not
/// a pace: waits end as soon as the screen shows the state. A step takes well under a
/// second on an idle machine; on 2 cores with a release build beside us (load 6) the slowest
/// took tens of seconds, so this leaves room for a machine busier still.
const SCREEN_WAIT: Duration = Duration::from_secs(180);

/// What the shell does once the program in the pane has exited: keep the pane, and the exit
/// line on it, until the test reads it (the tmux server is killed on drop).
pub(super) const KEEP_PANE: &str = "sleep 3600";

/// A tmux server of our own (its own socket), killed on drop.
pub(super) struct Tmux {
    socket: PathBuf,
    /// The TUI's standard error, shown when a wait fails.
    stderr: PathBuf,
}

impl Tmux {
    /// Runs `command` in a new `width`×`height` session, with `dir/tmp` as its `TMPDIR`:
    /// the edits the TUI keeps (a refused write, a composed CRD) stay in the test's
    /// directory and go with it.
    pub(super) fn start(dir: &Path, command: &str, width: u16, height: u16) -> Tmux {
        let t = Tmux { socket: dir.join("tmux.sock"), stderr: dir.join("stderr") };
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp).expect("the session's TMPDIR");
        let status = t
            .tmux()
            .args(["new-session", "-d", "-s", "tui", "-x", &width.to_string(), "-y", &height.to_string()])
            .arg("-e")
            .arg(format!("TMPDIR={}", tmp.display()))
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

    /// Sends keys by tmux name (`Enter`, `Escape`, `+`), in order. The TUI reads them in
    /// order whatever the machine's load, so no pause is needed between them, except after
    /// an Esc: glued to the next key it would read as Alt+key, and no pause is long enough
    /// on a busy machine. So an Esc ends a call, and the test waits for what it does on
    /// screen before sending more.
    pub(super) fn keys(&self, keys: &[&str]) {
        for (i, k) in keys.iter().enumerate() {
            assert!(*k != "Escape" || i + 1 == keys.len(), "wait for the screen after an Escape: {keys:?}");
            let status = self.tmux().args(["send-keys", "-t", "tui", k]).status().expect("send-keys");
            assert!(status.success());
        }
    }

    /// Types text literally.
    pub(super) fn type_text(&self, text: &str) {
        let status = self.tmux().args(["send-keys", "-t", "tui", "-l", text]).status().expect("send-keys");
        assert!(status.success());
    }

    pub(super) fn screen(&self) -> String {
        let out = self.tmux().args(["capture-pane", "-p", "-t", "tui"]).output().expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until every needle is on screen; fails with the screen otherwise.
    pub(super) fn wait_for(&self, needles: &[&str]) -> String {
        self.wait_until(&format!("{needles:?}"), |screen| needles.iter().all(|n| screen.contains(n)))
    }

    /// Waits until the screen satisfies `done` and has settled; fails with `what` and the
    /// screen otherwise. The screen is polled: tmux has no event for "the pane changed".
    /// A capture can land while a frame is half written (the TUI writes only the cells
    /// that changed, and tmux may parse part of it before the capture), showing the new
    /// frame's top over the old one's bottom; so a screen counts only when a second capture
    /// a moment later is the same.
    pub(super) fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + SCREEN_WAIT;
        let mut satisfied: Option<String> = None;
        loop {
            let screen = self.screen();
            if done(&screen) {
                if satisfied.as_deref() == Some(screen.as_str()) || Instant::now() >= deadline {
                    return screen;
                }
                satisfied = Some(screen);
                std::thread::sleep(Duration::from_millis(30));
                continue;
            }
            satisfied = None;
            let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
            assert!(Instant::now() < deadline, "waited for {what}; the screen shows:\n{screen}\nstderr:\n{stderr}");
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
pub(super) fn editor_script(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("editor.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write editor");
    let mut perms = std::fs::metadata(&path).expect("editor").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    path
}

/// Runs `read` on a fresh connection to the data the TUI left, then lets go of the data.
pub(super) fn read_local<T>(data: &Path, read: impl AsyncFnOnce(kube::Client) -> T) -> T {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let conn = open_local(data).await;
        // `read` takes the only clone of the client, so closing finds no other user.
        let value = read(conn.client().clone()).await;
        conn.close().await;
        value
    })
}

/// The stored widget.
fn stored_widget(data: &Path, name: &str) -> serde_json::Value {
    read_local(data, async |client| {
        let crd = find_crd(&client, "widgets").await.expect("widgets CRD");
        let resource = resource_of(&crd).expect("served");
        let obj = get_object(&client, ObjectRef::new(&resource, "default", name)).await.expect("widget");
        serde_json::to_value(obj).expect("json")
    })
}

/// The TUI on the demo loaded into `data`, editing with `editor`, its standard error in `dir`.
fn demo_command(dir: &Path, editor: &Path, data: &Path) -> String {
    format!(
        "KUBE_EDITOR={} {} --local={} tui --demo 2>{}; echo TUI-EXIT=$?; {KEEP_PANE}",
        editor.display(),
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.join("stderr").display(),
    )
}

/// Filters the registrations down to those `regex` matches (one) and waits for it.
pub(super) fn only(t: &Tmux, regex: &str) {
    t.keys(&["/"]);
    t.type_text(regex);
    t.keys(&["Enter"]);
    t.wait_for(&["customresourcedefinitions [1/"]);
}

#[test]
fn browse_edit_status_scale_from_zero_and_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let editor = editor_script(dir.path(), "sed -i 's/phase: Stopped/phase: Running/' \"$1\"");
    let command = demo_command(dir.path(), &editor, &data);
    let t = Tmux::start(dir.path(), &command, 130, 40);

    // Registrations, with the troubled ones marked in words.
    let screen = t.wait_for(&["customresourcedefinitions [", "widgets.demo.example.com", "gadgets.demo.example.com"]);
    assert!(screen.contains("local:") && screen.contains("ns: default"), "the header names the connection:\n{screen}");
    assert!(screen.contains("!  gadgets.demo.example.com") && screen.contains("NameConflict"), "{screen}");

    // Filter down to widgets: Enter lists its objects (as in k9s); back, `i` opens its
    // detail (the hints say so), and Enter there its objects again.
    only(&t, "^widgets");
    t.wait_for(&["<enter> objects", "<i> detail"]);
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-001"]);
    t.keys(&["Escape"]);
    t.wait_for(&["customresourcedefinitions [1/"]);
    t.keys(&["i"]);
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

/// A spec edit the server refuses (422: size above the schema's maximum) comes back in the
/// editor with the reason on top; fixed there, it saves. Refused again and the editor quit
/// without a change, it is abandoned, and the message says where the copy is.
#[test]
fn a_refused_edit_reopens_in_the_editor_and_an_unchanged_one_is_abandoned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let abandon = dir.path().join("abandon");
    let editor = editor_script(
        dir.path(),
        &format!(
            "if grep -q '^# NOT SAVED' \"$1\"; then\n  grep -q '422' \"$1\" || exit 3\n  [ -e {} ] && exit 0\n  sed -i 's/size: 99/size: 9/' \"$1\"\nelse\n  sed -i 's/size: [0-9]*/size: 99/' \"$1\"\nfi",
            abandon.display()
        ),
    );
    let command = demo_command(dir.path(), &editor, &data);
    let t = Tmux::start(dir.path(), &command, 130, 40);
    t.wait_for(&["widgets.demo.example.com"]);
    t.keys(&[":"]);
    t.type_text("wd");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-001"]);
    t.keys(&["Enter"]);
    t.wait_for(&["widgets/default/widget-001", "size:"]);
    t.keys(&["e"]);
    t.wait_for(&["saved the spec of widgets/default/widget-001", "size: 9"]);
    std::fs::write(&abandon, "").expect("abandon next time");
    t.keys(&["e"]);
    let screen = t.wait_for(&["edit abandoned", "your copy is kept in"]);
    assert!(screen.contains("422"), "the reason is said:\n{screen}");
    // Ctrl-D asks, naming what goes, and the screen follows the object out.
    t.keys(&["C-d"]);
    t.wait_for(&["Delete widget?", "default/widget-001", "y delete"]);
    t.keys(&["y"]);
    t.wait_for(&["DELETED"]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
    let gone = read_local(&data, async |client| {
        let crd = find_crd(&client, "widgets").await.expect("widgets CRD");
        let api: Api<DynamicObject> = resource_of(&crd).expect("served").api(&client, Some("default"));
        api.get_opt("widget-001").await.expect("get").is_none()
    });
    assert!(gone, "deleted");
}

#[test]
fn readonly_refuses_writes_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let command = format!(
        "{} --local={} tui --demo --readonly 2>{}; echo TUI-EXIT=$?; {KEEP_PANE}",
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.path().join("stderr").display(),
    );
    let t = Tmux::start(dir.path(), &command, 120, 30);
    t.wait_for(&["READ-ONLY", "widgets.demo.example.com"]);
    // `:ns` alone picks from the cluster's namespaces; Tab completes; an unknown one is refused.
    t.keys(&[":"]);
    t.type_text("ns");
    t.keys(&["Enter"]);
    t.wait_for(&["namespaces (Enter picks)", "team-a", "staging"]);
    t.keys(&["Escape"]);
    t.wait_until("the picker closed", |screen| !screen.contains("namespaces (Enter picks)"));
    t.keys(&[":"]);
    t.type_text("ns nowhere");
    t.keys(&["Enter"]);
    t.wait_for(&["namespace \"nowhere\" not found"]);
    t.keys(&[":"]);
    t.type_text("widg");
    t.keys(&["Tab"]);
    t.wait_for(&[":widget▏"]);
    t.keys(&["C-u"]);
    t.type_text("wd");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-001"]);
    for key in ["e", "E", "s", "C-d"] {
        t.keys(&[key]);
        t.wait_for(&["read-only: writes are off"]);
    }
    // Neither the hints nor the help offer writes.
    let screen = t.screen();
    assert!(!screen.contains("<e/E>") && !screen.contains("<ctrl-d>"), "{screen}");
    t.keys(&["?"]);
    let screen = t.wait_for(&["help: every key"]);
    assert!(!screen.contains("edit spec") && !screen.contains("Ctrl-D"), "{screen}");
    t.keys(&["Escape"]);
    t.wait_until("help closed", |screen| !screen.contains("help: every key"));
    t.keys(&["C-c"]);
    t.wait_for(&["TUI-EXIT=0"]);
}

/// The TUI in a 160×30 tmux pane, on a `serve` of the demo loaded into `dir/data`
/// (returned for kubectl), once it shows the registrations.
pub(super) fn tui_on_served(dir: &Path) -> (Served, Tmux, PathBuf) {
    tui_on_served_with(dir, None, (160, 30))
}

/// [`tui_on_served`] editing with `editor`, on a terminal of `size` (columns, rows), in
/// `dir` (where the TUI writes what it saves); the data is `dir/data` (its `kubeconfig`
/// reaches the server).
pub(super) fn tui_on_served_with(dir: &Path, editor: Option<&Path>, size: (u16, u16)) -> (Served, Tmux, PathBuf) {
    let data = dir.join("data");
    let served = Served::start(&data);
    // --local=DIR while serve holds DIR: the TUI goes through serve's kubeconfig.
    let command = format!(
        "cd {} && {}{} --local={} tui 2>{}; echo TUI-EXIT=$?; {KEEP_PANE}",
        dir.display(),
        editor.map(|e| format!("KUBE_EDITOR={} ", e.display())).unwrap_or_default(),
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.join("stderr").display(),
    );
    let t = Tmux::start(dir, &command, size.0, size.1);
    t.wait_for(&["local (served)", "widgets.demo.example.com"]);
    (served, t, data)
}

/// A `kubectl crd serve` of the demo data, stopped on drop.
pub(super) struct Served {
    child: std::process::Child,
}

impl Served {
    pub(super) fn start(data: &Path) -> Served {
        load_demo(data);
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

pub(super) fn kubectl(data: &Path, args: &[&str]) {
    let out = crate::support::kubectl::kubectl_for(&data.join("kubeconfig"))
        .args(args)
        .output()
        .expect("kubectl is installed (.ci/run installs it)");
    assert!(out.status.success(), "kubectl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn rows_follow_the_watch_and_a_conflicting_edit_is_reapplied() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The editor stands for a slow user: while it is open, someone else changes the size.
    let editor = editor_script(
        dir.path(),
        &format!(
            "KUBECONFIG={} KUBECACHEDIR={} kubectl patch widgets.demo.example.com widget-002 --type=merge -p '{{\"spec\":{{\"size\":9}}}}' >/dev/null\nsed -i 's/color: green/color: blue/' \"$1\"",
            dir.path().join("data/kubeconfig").display(),
            crate::support::kubectl::cache_dir(&dir.path().join("data/kubeconfig")).display()
        ),
    );
    let (_served, t, data) = tui_on_served_with(dir.path(), Some(&editor), (120, 30));

    // The registrations follow the cluster too: a CRD applied and deleted with kubectl
    // comes and goes without Ctrl-R, its resources counted as it comes.
    let crd_file = dir.path().join("gizmos.json");
    std::fs::write(&crd_file, gizmos_crd().to_string()).expect("write the CRD");
    kubectl(&data, &["apply", "-f", &crd_file.display().to_string()]);
    t.wait_for(&[NEW_CRD]);
    // Its conditions arrive as the engine's controller sets them, then its count (none yet).
    let healthy = |screen: &str| {
        let row = screen.lines().find(|l| l.contains(NEW_CRD)).unwrap_or_default();
        let cells: Vec<&str> = row.split_whitespace().collect();
        cells.contains(&"OK") && cells.windows(3).any(|w| w == ["True", "Accepted", "0"])
    };
    t.wait_until("the new CRD established", healthy);
    kubectl(&data, &["delete", "crd", NEW_CRD]);
    t.wait_until("the deleted CRD gone", |screen| !screen.contains(NEW_CRD));
    // The RESOURCES column follows the objects too.
    let count = |screen: &str, n: &str| {
        let row = screen.lines().find(|l| l.contains("widgets.demo.example.com")).unwrap_or_default();
        row.split_whitespace().any(|cell| cell == n)
    };
    assert!(count(&t.screen(), "180"), "{}", t.screen());
    kubectl(&data, &["delete", "widgets.demo.example.com", "widget-005"]);
    t.wait_until("the widgets counted again", |screen| count(screen, "179"));

    t.keys(&[":"]);
    t.type_text("widgets");
    t.keys(&["Enter"]);
    t.wait_for(&["widgets(default)", "widget-003"]);

    // Changes made with kubectl show up without a key press.
    kubectl(&data, &["delete", "widgets.demo.example.com", "widget-003"]);
    kubectl(&data, &["label", "widgets.demo.example.com", "widget-004", "seen=yes"]);
    t.wait_until("the deleted row gone", |screen| !screen.contains("widget-003"));

    // Edit widget-002's spec while the server changes it: 409, shown, re-applied.
    t.keys(&["j", "Enter"]);
    t.wait_for(&["widgets/default/widget-002", "color: green"]);
    t.keys(&["e"]);
    let screen = t.wait_for(&["409 Conflict", "~ spec.size: 1 → 9", "Your edit is kept in"]);
    assert!(screen.contains("kubectl-crd-edits"), "{screen}");
    let kept = std::fs::read_dir(dir.path().join("tmp/kubectl-crd-edits")).expect("the kept edits").count();
    assert_eq!(kept, 1, "the refused edit is kept in the session's TMPDIR");
    t.keys(&["r"]);
    t.wait_for(&["saved the spec of widgets/default/widget-002", "color: blue", "size: 9"]);

    // The resource screen is live: a change made with kubectl shows, and so does a delete.
    kubectl(
        &data,
        &["patch", "widgets.demo.example.com", "widget-002", "--type=merge", "-p", r#"{"spec":{"size":4}}"#],
    );
    t.wait_for(&["size: 4"]);
    kubectl(&data, &["delete", "widgets.demo.example.com", "widget-002"]);
    t.wait_for(&["DELETED", "default/widget-002 was deleted"]);
    t.keys(&["q"]);
    t.wait_for(&["TUI-EXIT=0"]);
}

pub(super) const NEW_CRD: &str = "gizmos.migrated.example.org";

/// Loads the demo into `data` with the real binary, as a user would before `tui`.
pub(super) fn load_demo(data: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
        .arg(format!("--local={}", data.display()))
        .arg("demo")
        .output()
        .expect("demo");
    assert!(out.status.success(), "demo: {}", String::from_utf8_lossy(&out.stderr));
}

/// The widgets' new CRD: another group, kind and plural, the same schema.
pub(super) fn gizmos_crd() -> serde_json::Value {
    let schema = serde_json::json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "size": {"type": "integer", "minimum": 0, "maximum": 10},
            "replicas": {"type": "integer", "minimum": 0}}},
        "status": {"type": "object", "properties": {
            "phase": {"type": "string"}, "replicas": {"type": "integer"},
            "selector": {"type": "string"}, "observedGeneration": {"type": "integer"}}}}});
    CrdBuilder::new("migrated.example.org", "Gizmo").list_kind().short_names(&["gz"]).status().schema(schema).build()
}

/// A mouse click selects the row under it (SGR mouse reports, as a terminal sends them with
/// mouse capture on); Enter then opens that CRD's objects.
#[test]
fn a_mouse_click_selects_the_row_under_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let command = format!(
        "{} --local={} tui --demo --readonly 2>{}; echo TUI-EXIT=$?; {KEEP_PANE}",
        env!("CARGO_BIN_EXE_kubectl-crd"),
        data.display(),
        dir.path().join("stderr").display(),
    );
    let t = Tmux::start(dir.path(), &command, 120, 30);
    let screen = t.wait_for(&["READ-ONLY", "widgets.demo.example.com"]);
    let rows: Vec<(usize, &str)> = screen
        .lines()
        .enumerate()
        .filter_map(|(i, line)| line.split_whitespace().find(|w| w.ends_with(".example.com")).map(|name| (i, name)))
        .collect();
    assert!(rows.len() >= 3, "the demo lists several CRDs:\n{screen}");
    let (row, name) = rows[rows.len() - 1];
    let plural = name.split('.').next().expect("a plural");
    // Press and release of the left button at column 5 of that row (1-based in SGR).
    t.type_text(&format!("\x1b[<0;5;{}M\x1b[<0;5;{}m", row + 1, row + 1));
    t.keys(&["Enter"]);
    t.wait_for(&[&format!("{plural}(")]);
}
