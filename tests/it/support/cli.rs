//! What `cli_local` and `cli_live` share: a runner for the real
//! `kubectl-crd` binary (bounded in time, stdin optional, extra environment), a `serve`
//! process for the live side, output normalisation (ages, uids, resourceVersions,
//! timestamps), and the scenarios both sides run — the same expectations whether the
//! binary opens the engine in-process (`--local=DIR`) or talks HTTPS to `kubectl crd
//! serve` through a kubeconfig.
//!
//! Every scenario starts from the demo set (loaded with `kubectl crd demo`), whose content
//! is deterministic (see `assets/demo/generate.py`), so whole outputs can be compared.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_kubectl-crd");
const LIMIT: Duration = Duration::from_secs(60);

/// The `kubectl-crd` binary with the connection flags of one side (`--local=DIR` or
/// `--kubeconfig FILE`).
pub struct Crd {
    pub connection: Vec<String>,
    pub env: Vec<(String, String)>,
    /// The binary's `TMPDIR`: where an edit's file goes, and stays when a write is refused
    /// (as kubectl keeps it). Removed with the runner, so tests leave nothing in /tmp.
    tmp: tempfile::TempDir,
}

impl Crd {
    pub fn new(connection: &[&str]) -> Crd {
        Crd {
            connection: connection.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            tmp: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    /// The file a refused edit kept, as the error names it ("A copy of your changes has
    /// been stored to "PATH""), checked to be in this runner's temporary directory; its
    /// text.
    pub fn kept_edit(&self, stderr: &str) -> String {
        const SAID: &str = "A copy of your changes has been stored to \"";
        let start = stderr.find(SAID).unwrap_or_else(|| panic!("no kept copy named in: {stderr}")) + SAID.len();
        let path = &stderr[start..start + stderr[start..].find('"').expect("the quoted path ends")];
        assert!(Path::new(path).starts_with(self.tmp.path()), "{path} is not in the runner's TMPDIR");
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("the kept copy {path}: {e}"))
    }

    /// Runs `kubectl-crd <args> <connection flags>` (global flags go after the subcommand,
    /// which is the harder case for the parser).
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_with(args, None, &[])
    }

    /// Runs with standard input and extra environment.
    pub fn run_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .args(&self.connection)
            .env_remove("KUBECONFIG")
            .env("NO_COLOR", "1")
            .env("TMPDIR", self.tmp.path());
        for (k, v) in self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).chain(env.iter().copied()) {
            cmd.env(k, v);
        }
        output_bounded(cmd, stdin, LIMIT)
    }

    /// Stdout of a run that must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_success(args, &out)
    }

    pub fn ok_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> String {
        let out = self.run_with(args, stdin, env);
        assert_success(args, &out)
    }

    /// Stderr of a run that must fail with `code`.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        self.fails_with(args, None, &[], code)
    }

    pub fn fails_with(&self, args: &[&str], stdin: Option<&str>, env: &[(&str, &str)], code: i32) -> String {
        let out = self.run_with(args, stdin, env);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?} should exit {code}:\nstdout: {}\nstderr: {stderr}",
            String::from_utf8_lossy(&out.stdout)
        );
        stderr
    }
}

pub fn assert_success(args: &[&str], out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{args:?} failed ({}):\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The lines a child writes to stdout, read on a thread as they come (for watches).
pub fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Reads a pipe to its end on a thread.
fn collect(mut pipe: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        let _ = tx.send(bytes);
    });
    rx
}

fn wait_bounded(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        // Polling a child's exit: there is no readiness signal to wait on instead.
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs a command to completion, killing it if it takes longer than `limit`.
pub fn output_bounded(mut cmd: Command, stdin: Option<&str>, limit: Duration) -> Output {
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn kubectl-crd");
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    let stdout = collect(child.stdout.take().expect("stdout"));
    let stderr = collect(child.stderr.take().expect("stderr"));
    let status = wait_bounded(&mut child, limit).unwrap_or_else(|| {
        let _ = child.kill();
        panic!("{cmd:?} did not finish within {limit:?}")
    });
    let bytes = |rx: mpsc::Receiver<Vec<u8>>| rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default();
    Output { status, stdout: bytes(stdout), stderr: bytes(stderr) }
}

/// A `kubectl crd serve` on a free loopback port over `dir`, killed on drop.
pub struct Served {
    child: Child,
    pub url: String,
    pub kubeconfig: PathBuf,
}

impl Served {
    /// The process id of `serve`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn start(dir: &Path, extra: &[&str]) -> Served {
        let mut child = Command::new(BIN)
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start serve");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let line = BufReader::new(stdout).lines().next().and_then(Result::ok);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(line)) => line,
            _ => {
                let _ = child.kill();
                panic!("serve printed no ready line");
            }
        };
        let rest = line.strip_prefix("kubectl crd serve: ready on ").unwrap_or_else(|| panic!("not ready: {line}"));
        let (url, rest) = rest.split_once(" (kubeconfig: ").expect("kubeconfig in the ready line");
        let kubeconfig = PathBuf::from(rest.trim_end_matches(')'));
        Served { child, url: url.to_string(), kubeconfig }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a table cell is an age (`0s` … `59m59s`): tests run in seconds, not hours.
fn is_age(cell: &str) -> bool {
    let re = regex::Regex::new(r"^\d+(s|m|m\d+s)$").expect("regex");
    re.is_match(cell)
}

/// Replaces ages in a table with `<age>`, keeping every column where it was: cells are
/// separated by at least three spaces (kubectl's padding), and a replaced cell keeps its
/// width with its padding.
pub fn normalize_table(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut rest = line;
        let mut new_line = String::new();
        while !rest.is_empty() {
            let cell_end = rest.find("   ").unwrap_or(rest.len());
            let pad_end = cell_end + rest[cell_end..].chars().take_while(|c| *c == ' ').count();
            let (cell, pad) = (&rest[..cell_end], &rest[cell_end..pad_end]);
            if is_age(cell) {
                let width = cell.len() + pad.len();
                new_line.push_str("<age>");
                if pad_end < rest.len() {
                    new_line.push_str(&" ".repeat(width.saturating_sub(5).max(1)));
                }
            } else {
                new_line.push_str(cell);
                new_line.push_str(pad);
            }
            rest = &rest[pad_end..];
        }
        out.push_str(&new_line);
        out.push('\n');
    }
    out
}

/// Replaces the values that change from run to run in YAML or JSON output.
pub fn normalize_object(text: &str) -> String {
    let rules = [
        (r#"(?m)^(\s*"?(uid)"?:\s*)"?[0-9a-f-]{36}"?"#, "$1<uid>"),
        (r#"(?m)^(\s*"?(resourceVersion)"?:\s*)"\d+""#, "$1<rv>"),
        (r#"(?m)^(\s*"?(creationTimestamp|lastTransitionTime|time|deletionTimestamp)"?:\s*)"[0-9TZ:-]+""#, "$1<time>"),
    ];
    let mut out = text.to_string();
    for (pattern, replacement) in rules {
        out = regex::Regex::new(pattern).expect("regex").replace_all(&out, replacement).into_owned();
    }
    out
}

/// Asserts equality with a readable diff of the first differing line.
pub fn assert_text(actual: &str, expected: &str, what: &str) {
    if actual == expected {
        return;
    }
    let (a, e): (Vec<&str>, Vec<&str>) = (actual.lines().collect(), expected.lines().collect());
    let first = (0..a.len().max(e.len())).find(|&i| a.get(i) != e.get(i)).unwrap_or(0);
    panic!(
        "{what} differs at line {}:\n  expected: {:?}\n  actual:   {:?}\n--- expected ---\n{expected}--- actual ---\n{actual}",
        first + 1,
        e.get(first),
        a.get(first)
    );
}

/// Writes a file in `dir` and gives its path as a string.
pub fn write_file(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write test file");
    path.display().to_string()
}

pub mod scenarios;
