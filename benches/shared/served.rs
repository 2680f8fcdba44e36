//! The real `kubectl-crd serve` binary in a child process, as the engine benches start it
//! (over HTTPS on loopback, with its own CA and token), a client from its kubeconfig, and
//! the figures every bench prints (resident memory, milliseconds, percentiles).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server in a child process, killed when dropped.
pub struct Served {
    pub child: Child,
    pub ready_after: Duration,
    pub addr: std::net::SocketAddr,
    /// The data directory: kubeconfig, CA certificate and token.
    pub dir: tempfile::TempDir,
    /// The flags it was started with beyond the data directory, for a restart.
    extra: Vec<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

impl Served {
    /// Kills the server (no clean shutdown: what it recovers from is its log and redb) and
    /// starts it again on the same data; the time until it was ready.
    #[allow(dead_code)] // used by the scale bench only
    pub fn restart(&mut self) -> Duration {
        stop(&mut self.child);
        let extra: Vec<&str> = self.extra.iter().map(String::as_str).collect();
        let (child, ready_after, addr) = spawn(self.dir.path(), &extra);
        (self.child, self.ready_after, self.addr) = (child, ready_after, addr);
        ready_after
    }
}

/// Ends a server started in a child process.
pub fn stop(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// Starts `serve` on a fresh data directory; the start measured is the second one.
pub fn serve() -> Served {
    serve_with(&[])
}

/// As [`serve`], with `extra` flags (`--storage etcd ...`).
pub fn serve_with(extra: &[&str]) -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    // Issue TLS material once, so the measured start is a restart as users see it daily.
    stop(&mut spawn(dir.path(), extra).0);
    let (child, ready_after, addr) = spawn(dir.path(), extra);
    Served { child, ready_after, addr, dir, extra: extra.iter().map(|f| f.to_string()).collect() }
}

fn spawn(dir: &std::path::Path, extra: &[&str]) -> (Child, Duration, std::net::SocketAddr) {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kubectl-crd"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start serve");
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    out.read_line(&mut line).expect("ready line");
    let ready = start.elapsed();
    assert!(line.contains("ready"), "{line}");
    // "... ready on https://127.0.0.1:PORT (kubeconfig: ...)"
    let addr = line
        .split("https://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .expect("the ready line names the address");
    // Keep draining so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in out.lines() {});
    (child, ready, addr)
}

/// The resident memory of process `pid`, in MiB.
pub fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// CPU seconds a process has used (user and system), from `/proc/PID/stat`; 0 if gone.
#[allow(dead_code)] // used by the scale and etcd benches only
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are the 14th and 15th fields, the 12th and 13th after the name.
    (ticks(11) + ticks(12)) / clock_ticks_per_second()
}

/// Asked of `getconf` once, not at every reading.
#[allow(dead_code)] // as `cpu_seconds`
fn clock_ticks_per_second() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        let out = Command::new("getconf").arg("CLK_TCK").output().ok();
        out.and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok()).unwrap_or(100.0)
    })
}

/// The resident memory of process `pid` once it stops growing: a server that is ready
/// may still be building in the background (the garbage collector's graph is built from a
/// full list after start), so a reading right at ready undercounts. Polls until a
/// 3 s stretch adds less than 1 MiB, for two minutes at most.
pub fn settled_rss_mib(pid: u32) -> f64 {
    const STEP: Duration = Duration::from_millis(500);
    let mut last = rss_mib(pid);
    let mut still = 0;
    for _ in 0..240 {
        std::thread::sleep(STEP);
        let now = rss_mib(pid);
        still = if now - last < 1.0 { still + 1 } else { 0 };
        last = last.max(now);
        if still * STEP.as_millis() >= 3_000 {
            break;
        }
    }
    last
}

/// The `p` quantile of sorted durations.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// A duration as milliseconds, two decimals.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// A client from a kubeconfig; with `addr`, of another server on that address (one that
/// takes the engine's certificate).
pub async fn connect(kubeconfig: &std::path::Path, addr: Option<std::net::SocketAddr>) -> kube::Client {
    let mut config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig).expect("kubeconfig"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("config");
    if let Some(addr) = addr {
        config.cluster_url = format!("https://{addr}").parse().expect("server URL");
    }
    kube::Client::try_from(config).expect("client")
}
