//! A real etcd on loopback, for tests: one member ([`EtcdProcess`]) or a cluster of several
//! ([`EtcdCluster`], static `--initial-cluster`), on free ports, with data directories the
//! caller owns, stopped on drop; members can be killed and started again.
//!
//! Tests of the etcd backend must not pass without etcd: a missing binary is an error
//! naming the Debian package, and the tests that start one fail on it.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian's `etcd-server` package installs etcd.
pub const DEBIAN_ETCD: &str = "/usr/bin/etcd";

/// How long etcd may take to answer its health check after starting.
const READY: Duration = Duration::from_secs(20);

/// A running etcd (one member on 127.0.0.1; plain http, or https with client certificates).
#[derive(Debug)]
pub struct EtcdProcess {
    child: Option<Child>,
    dir: PathBuf,
    /// The member's name, and the `--initial-cluster` it was started with.
    name: String,
    initial_cluster: String,
    client_port: u16,
    peer_port: u16,
    tls: Option<ServerTls>,
    /// A plain http port for the health check (the client port itself with no TLS).
    health_port: u16,
}

/// etcd's serving certificate and the CA its clients' certificates must chain to (PEM).
#[derive(Debug, Clone)]
pub struct ServerTls {
    /// The serving certificate (for 127.0.0.1).
    pub cert_file: PathBuf,
    /// Its key.
    pub key_file: PathBuf,
    /// The CA that client certificates must be signed by (`--client-cert-auth`).
    pub client_ca_file: PathBuf,
}

impl EtcdProcess {
    /// Starts etcd with its data and log in `dir`, on free ports. `$ETCD_BIN` overrides
    /// the binary.
    pub fn start(dir: &Path) -> Result<Self, String> {
        Self::start_with(dir, None)
    }

    /// Starts etcd serving https with `tls` and checking client certificates.
    pub fn start_tls(dir: &Path, tls: ServerTls) -> Result<Self, String> {
        Self::start_with(dir, Some(tls))
    }

    fn start_with(dir: &Path, tls: Option<ServerTls>) -> Result<Self, String> {
        // A port found free may be taken before etcd binds it (by a test next door, or a
        // connection's local port): etcd then exits at once, and is started again on
        // other ports.
        let mut attempts = 0;
        loop {
            attempts += 1;
            let ports = free_ports(3)?;
            let (client_port, health_port, peer_port) = (ports[0], ports[1], ports[2]);
            let health_port = if tls.is_some() { health_port } else { client_port };
            let mut etcd = EtcdProcess {
                child: None,
                dir: dir.to_path_buf(),
                name: "test".into(),
                initial_cluster: format!("test=http://127.0.0.1:{peer_port}"),
                client_port,
                peer_port,
                tls: tls.clone(),
                health_port,
            };
            match etcd.restart() {
                Ok(()) => return Ok(etcd),
                Err(_) if attempts < START_ATTEMPTS && etcd.child.is_none() => {
                    let _ = std::fs::remove_dir_all(dir.join("data"));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process runs.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// The client URL (`http://127.0.0.1:PORT`, or https with TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.client_port)
    }

    /// Kills etcd (as a crash would) and waits for it to exit. The data stays.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts etcd again on the same data and ports (stopping it first if it runs).
    pub fn restart(&mut self) -> Result<(), String> {
        self.spawn()?;
        self.wait_healthy()
    }

    /// Starts the process (stopping it first if it runs), without waiting for it.
    fn spawn(&mut self) -> Result<(), String> {
        self.stop();
        let bin = binary()?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("etcd.log"))
            .map_err(|e| format!("etcd log: {e}"))?;
        let client = self.url();
        let peer = format!("http://127.0.0.1:{}", self.peer_port);
        let mut command = Command::new(&bin);
        let listen = match &self.tls {
            Some(tls) => {
                command.arg("--cert-file").arg(&tls.cert_file).arg("--key-file").arg(&tls.key_file);
                command.arg("--trusted-ca-file").arg(&tls.client_ca_file).arg("--client-cert-auth");
                format!("{client},http://127.0.0.1:{}", self.health_port)
            }
            None => client.clone(),
        };
        let child = command
            .args(["--name", &self.name, "--data-dir"])
            .arg(self.dir.join("data"))
            .args(["--listen-client-urls", &listen, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial_cluster, "--initial-cluster-state", "new"])
            .args(["--logger", "zap", "--log-outputs", "stderr"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        self.child = Some(child);
        Ok(())
    }

    /// Waits until etcd says it is healthy (which, for a member, needs a leader).
    fn wait_healthy(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY;
        while Instant::now() < deadline {
            if healthy(self.health_port) {
                return Ok(());
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                self.child = None;
                return Err(format!("etcd exited with {status}; see {}", self.dir.join("etcd.log").display()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("etcd not healthy after {READY:?}; see {}", self.dir.join("etcd.log").display()))
    }
}

/// A cluster of etcd members on loopback (plain http), each in a directory of its own.
#[derive(Debug)]
pub struct EtcdCluster {
    members: Vec<EtcdProcess>,
}

impl EtcdCluster {
    /// Starts `size` members under `dir` (`dir/member-0`, ...) as one cluster, and waits
    /// until every one is healthy.
    pub fn start(dir: &Path, size: usize) -> Result<Self, String> {
        let free = free_ports(2 * size)?;
        let ports: Vec<(u16, u16)> = free.chunks(2).map(|p| (p[0], p[1])).collect();
        let initial_cluster = ports
            .iter()
            .enumerate()
            .map(|(i, (_, peer))| format!("member-{i}=http://127.0.0.1:{peer}"))
            .collect::<Vec<_>>()
            .join(",");
        let mut members = Vec::new();
        for (i, &(client_port, peer_port)) in ports.iter().enumerate() {
            let member_dir = dir.join(format!("member-{i}"));
            std::fs::create_dir_all(&member_dir).map_err(|e| format!("{}: {e}", member_dir.display()))?;
            members.push(EtcdProcess {
                child: None,
                dir: member_dir,
                name: format!("member-{i}"),
                initial_cluster: initial_cluster.clone(),
                client_port,
                peer_port,
                tls: None,
                health_port: client_port,
            });
        }
        let mut cluster = EtcdCluster { members };
        // All at once: none is healthy before a quorum runs.
        for member in &mut cluster.members {
            member.spawn()?;
        }
        for member in &mut cluster.members {
            member.wait_healthy()?;
        }
        Ok(cluster)
    }

    /// Every member's client URL, in member order.
    pub fn urls(&self) -> Vec<String> {
        self.members.iter().map(EtcdProcess::url).collect()
    }

    /// Member `i`.
    pub fn member(&mut self, i: usize) -> Option<&mut EtcdProcess> {
        self.members.get_mut(i)
    }

    /// Kills every member; the data stays.
    pub fn stop(&mut self) {
        for member in &mut self.members {
            member.stop();
        }
    }

    /// Starts every member that is not running, and waits until all are healthy.
    pub fn start_stopped(&mut self) -> Result<(), String> {
        for member in self.members.iter_mut().filter(|m| !m.is_running()) {
            member.spawn()?;
        }
        for member in &mut self.members {
            member.wait_healthy()?;
        }
        Ok(())
    }
}

impl Drop for EtcdProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The etcd binary, or why there is none.
fn binary() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("ETCD_BIN") {
        return Ok(bin.into());
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("etcd"))
        .find(|p| p.is_file());
    let debian = Path::new(DEBIAN_ETCD);
    on_path.or_else(|| debian.is_file().then(|| debian.to_path_buf())).ok_or_else(|| {
        format!(
            "etcd is not installed ({DEBIAN_ETCD} is missing): the etcd tests need a real etcd; \
             install Debian's etcd-server package (`apt-get install etcd-server`) or set ETCD_BIN"
        )
    })
}

/// `n` distinct free ports (all held until each is known, so none comes twice).
fn free_ports(n: usize) -> Result<Vec<u16>, String> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}")))
        .collect::<Result<_, _>>()?;
    listeners.iter().map(|l| l.local_addr().map(|a| a.port()).map_err(|e| format!("no free port: {e}"))).collect()
}

/// How many times a single etcd is started on fresh ports when it exits at start-up.
const START_ATTEMPTS: usize = 5;

fn healthy(port: u16) -> bool {
    let Ok(mut conn) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = conn.set_read_timeout(Some(Duration::from_secs(1)));
    if conn.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = conn.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}
