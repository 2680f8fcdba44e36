//! `kubectl crd serve` as a child process on a free loopback port, and the real
//! `kubectl` pointed at the kubeconfig it wrote.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// A `serve` process on a free loopback port, killed on drop.
pub struct Server {
    child: Child,
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start serve");
        let stdout = child.stdout.take().expect("stdout");
        let line = BufReader::new(stdout).lines().next().expect("a ready line").expect("utf8");
        assert!(line.contains("ready"), "{line}");
        Server { child, kubeconfig: dir.path().join("kubeconfig"), dir }
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        Command::new("kubectl").arg("--kubeconfig").arg(&self.kubeconfig).args(args).output().expect("kubectl runs")
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(out.status.success(), "kubectl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
