//! The plugin as kubectl users meet it: the real `kubectl` binary with a PATH whose first
//! directory holds the freshly built `kubectl-crd` and `krew/kubectl_complete-crd` (as krew
//! installs them), running `kubectl crd ... --local=DIR` against the local engine.

use super::cli::{BIN, output_bounded};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// A PATH with the plugin first, and a data directory for `--local`.
pub struct Plugin {
    bin: tempfile::TempDir,
    pub data: tempfile::TempDir,
    path: String,
}

impl Plugin {
    /// The plugin over an empty local engine.
    pub fn empty() -> Plugin {
        let bin = tempfile::tempdir().expect("tempdir");
        std::os::unix::fs::symlink(PathBuf::from(BIN), bin.path().join("kubectl-crd")).expect("link the plugin");
        let completer = Path::new(env!("CARGO_MANIFEST_DIR")).join("krew/kubectl_complete-crd");
        std::os::unix::fs::symlink(completer, bin.path().join("kubectl_complete-crd")).expect("link the completer");
        let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
        Plugin { bin, data: tempfile::tempdir().expect("tempdir"), path }
    }

    /// The plugin over a local engine with the demo set loaded.
    pub fn with_demo() -> Plugin {
        let p = Plugin::empty();
        p.ok(&["demo"]);
        p
    }

    /// `--local=DIR` of this plugin's data.
    pub fn local(&self) -> String {
        format!("--local={}", self.data.path().display())
    }

    /// The directory that holds the plugin (first on PATH).
    pub fn bin_dir(&self) -> &Path {
        self.bin.path()
    }

    /// `kubectl ARGS` with the plugin on PATH and no kubeconfig (nothing live is reached).
    pub fn kubectl(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.args(args).env("PATH", &self.path).env("KUBECONFIG", "/nonexistent/kubeconfig").env("NO_COLOR", "1");
        cmd
    }

    /// `kubectl crd ARGS --local=DIR`.
    pub fn crd(&self, args: &[&str]) -> Command {
        let mut cmd = self.kubectl(&["crd"]);
        cmd.args(args).arg(self.local());
        cmd
    }

    /// Runs `kubectl crd ARGS --local=DIR` to its end.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        output_bounded(self.crd(args), stdin, LIMIT)
    }

    /// Stdout of a run that must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, None);
        super::cli::assert_success(args, &out)
    }

    /// (stdout, stderr) of a run that must exit with `code`.
    pub fn exits(&self, args: &[&str], code: i32) -> (String, String) {
        let out = self.run(args, None);
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
        assert_eq!(out.status.code(), Some(code), "{args:?}:\nstdout: {stdout}\nstderr: {stderr}");
        (stdout, stderr)
    }
}
