//! `kubectl crd serve` as a child process on a free loopback port, and the real
//! `kubectl` pointed at the kubeconfig it wrote.
//!
//! With `KUBECTL_CRD_TEST_ORACLE=DIR` (the oracle kit holding `start.sh`, `stop.sh` and a
//! kube-apiserver, e.g. `../shared/oracle`) every test gets a fresh real kube-apiserver
//! instead, so the kubectl tests can be run against the reference to check that they
//! assert what kube does: `KUBECTL_CRD_TEST_ORACLE=../shared/oracle scripts/test.sh -E
//! 'test(/^kubectl_/)'`. Tests about the plugin itself (its TLS files, `kubectl crd`) have
//! nothing to compare there.
//!
//! With `KUBECTL_CRD_TEST_STORAGE=etcd` every `serve` keeps its objects in an etcd of its
//! own (Debian's `etcd-server`, on loopback), so the same tests check the etcd backend:
//! `KUBECTL_CRD_TEST_STORAGE=etcd scripts/test.sh -E 'test(/^kubectl_/)'`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// The real `kubectl` pointed at `kubeconfig`, with a discovery cache of that server's own.
///
/// kubectl caches discovery under `~/.kube/cache/discovery/HOST_PORT` for hours, and test
/// servers reuse loopback ports: a cache left by an earlier server on the same port (other
/// groups, versions or scopes) sends kubectl to paths this server does not serve. The cache
/// goes next to the kubeconfig, so it lives and dies with the server that wrote it.
pub fn kubectl_for(kubeconfig: &Path) -> Command {
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig").arg(kubeconfig).env("KUBECACHEDIR", cache_dir(kubeconfig));
    cmd
}

/// Where [`kubectl_for`] keeps the discovery cache for `kubeconfig`'s server.
pub fn cache_dir(kubeconfig: &Path) -> PathBuf {
    kubeconfig.parent().unwrap_or(Path::new(".")).join(".kube-cache")
}

/// What a [`Server`] runs.
enum Backend {
    /// `serve`, and the etcd it keeps its objects in when it does.
    Serve(Child, Option<kubectl_crd_engine::store::etcd_process::EtcdProcess>),
    /// The oracle kit's directory; the server's own directory is [`Server::dir`].
    Oracle(PathBuf),
}

/// A `serve` process (or a real kube-apiserver) on a free loopback port, stopped on drop.
pub struct Server {
    backend: Backend,
    pub kubeconfig: PathBuf,
    pub dir: tempfile::TempDir,
}

impl Server {
    pub fn start() -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(kit) = std::env::var_os("KUBECTL_CRD_TEST_ORACLE") {
            return Server::oracle(Path::new(&kit), dir);
        }
        let etcd = (std::env::var("KUBECTL_CRD_TEST_STORAGE").as_deref() == Ok("etcd")).then(|| {
            let etcd_dir = dir.path().join("etcd");
            std::fs::create_dir_all(&etcd_dir).expect("etcd dir");
            kubectl_crd_engine::store::etcd_process::EtcdProcess::start(&etcd_dir).unwrap_or_else(|e| panic!("{e}"))
        });
        let storage = match &etcd {
            Some(etcd) => vec!["--storage".to_string(), "etcd".into(), "--etcd-servers".into(), etcd.url()],
            None => vec![],
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .args(&storage)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start serve");
        let stdout = child.stdout.take().expect("stdout");
        let line = BufReader::new(stdout).lines().next().expect("a ready line").expect("utf8");
        assert!(line.contains("ready"), "{line}");
        Server { backend: Backend::Serve(child, etcd), kubeconfig: dir.path().join("kubeconfig"), dir }
    }

    /// A fresh kube-apiserver from the oracle kit at `kit`, its data in `dir`.
    fn oracle(kit: &Path, dir: tempfile::TempDir) -> Server {
        let started = Command::new(kit.join("start.sh")).arg(dir.path()).output().expect("run the oracle's start.sh");
        if !started.status.success() {
            // A start that failed half way may have left etcd running.
            let _ = Command::new(kit.join("stop.sh")).arg(dir.path()).output();
            panic!("the oracle did not start: {}", String::from_utf8_lossy(&started.stderr));
        }
        Server { backend: Backend::Oracle(kit.to_path_buf()), kubeconfig: dir.path().join("kubeconfig"), dir }
    }

    pub fn kubectl(&self, args: &[&str]) -> Output {
        kubectl_for(&self.kubeconfig).args(args).output().expect("kubectl runs")
    }

    /// `kubectl args` reading `input` on stdin: whether it succeeded, and its output (or its
    /// error text when it failed).
    pub fn with_stdin(&self, args: &[&str], input: &str) -> (bool, String) {
        use std::io::Write;
        let mut child = kubectl_for(&self.kubeconfig)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
        let out = child.wait_with_output().expect("kubectl ends");
        let text = String::from_utf8_lossy(if out.status.success() { &out.stdout } else { &out.stderr }).into_owned();
        (out.status.success(), text)
    }

    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(out.status.success(), "kubectl {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        match &mut self.backend {
            Backend::Serve(child, etcd) => {
                let _ = child.kill();
                let _ = child.wait();
                // Then its etcd (dropping it stops it).
                etcd.take();
            }
            Backend::Oracle(kit) => {
                let _ = Command::new(kit.join("stop.sh")).arg(self.dir.path()).output();
            }
        }
    }
}
