//! Stage two of `serve`'s arguments: [`ServeOptions`], validated, with defaults filled in
//! (`cli` builds them from what the user typed). Also the pure address arithmetic the
//! lifecycle needs: parsing `--listen`, and the URL a client should use for the address the
//! listener actually got (port 0 becomes the real port, a wildcard host becomes loopback).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;

/// A command line that does not describe a server we can start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionsError {
    #[error("invalid --listen {value:?}: {why}. Write HOST:PORT, e.g. 127.0.0.1:6443 (port 0 picks a free port)")]
    BadListen { value: String, why: &'static str },
    #[error("no --data-dir given and this system has no default data directory; give one with --data-dir DIR")]
    NoDataDir,
    #[error("--storage etcd needs --etcd-servers URL[,URL...], e.g. http://127.0.0.1:2379")]
    NoEtcdServers,
    #[error("{flag} is for --storage etcd")]
    EtcdFlagWithoutEtcd { flag: &'static str },
    #[error("--etcd-certfile and --etcd-keyfile go together")]
    EtcdCertWithoutKey,
}

/// `--listen` as typed: a host (IP address or name, IPv6 without brackets) and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenAddr {
    pub host: String,
    pub port: u16,
}

impl ListenAddr {
    /// The host as an IP address, when it is one.
    pub fn ip(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

/// Whether the server speaks TLS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Https,
    /// `--insecure-http`: plain HTTP, no certificates and no authentication — kubectl
    /// sends credentials only over TLS (kubernetes/kubectl#744), so a token would lock it
    /// out. Like kube-apiserver's old insecure port, it is for loopback addresses only.
    Http,
}

impl Transport {
    fn scheme(self) -> &'static str {
        match self {
            Transport::Https => "https",
            Transport::Http => "http",
        }
    }
}

/// Where the served engine keeps its objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageKind {
    /// Nothing survives the server.
    Memory,
    /// redb in `DIR/store.redb`.
    Redb,
    /// An etcd v3 cluster (DIR keeps only the certificates and the token).
    Etcd(kubectl_crd_engine::store::EtcdConfig),
}

/// Everything `serve` needs to start, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    pub listen: ListenAddr,
    /// Holds the store, the certificates and the token.
    pub data_dir: PathBuf,
    /// Where the kubeconfig is written.
    pub kubeconfig: PathBuf,
    pub storage: StorageKind,
    pub transport: Transport,
}

/// Parses `HOST:PORT`; IPv6 hosts go in brackets (`[::1]:6443`).
pub fn parse_listen(raw: &str) -> Result<ListenAddr, OptionsError> {
    let bad = |why| OptionsError::BadListen { value: raw.to_string(), why };
    let (host, port) = raw.trim().rsplit_once(':').ok_or_else(|| bad("there is no port"))?;
    let port = port.parse::<u16>().map_err(|_| bad("the port is not a number from 0 to 65535"))?;
    let host = match host.strip_prefix('[') {
        Some(inner) => {
            let inner = inner.strip_suffix(']').ok_or_else(|| bad("a '[' without its ']'"))?;
            inner.parse::<Ipv6Addr>().map_err(|_| bad("only an IPv6 address goes in brackets"))?;
            inner
        }
        None if host.contains(':') => return Err(bad("IPv6 addresses go in brackets, e.g. [::1]:6443")),
        None if host.is_empty() => {
            return Err(bad("there is no host; use 127.0.0.1 for this machine only, or 0.0.0.0 for every interface"));
        }
        None => host,
    };
    Ok(ListenAddr { host: host.to_string(), port })
}

/// The URL clients use for a listener bound to `bound`: a wildcard address becomes the
/// loopback address of its family, since that is where a local client finds it.
pub fn server_url(transport: Transport, bound: SocketAddr) -> String {
    let ip = match bound.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("{}://{}", transport.scheme(), SocketAddr::new(ip, bound.port()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listen(host: &str, port: u16) -> ListenAddr {
        ListenAddr { host: host.to_string(), port }
    }

    #[test]
    fn listen_addresses_in_every_accepted_form() {
        assert_eq!(parse_listen("127.0.0.1:6443"), Ok(listen("127.0.0.1", 6443)));
        assert_eq!(parse_listen("[::1]:0"), Ok(listen("::1", 0)));
        assert_eq!(parse_listen("localhost:8443"), Ok(listen("localhost", 8443)));
        assert_eq!(parse_listen(" 0.0.0.0:6443 "), Ok(listen("0.0.0.0", 6443)));
        assert_eq!(listen("::1", 0).ip(), Some(IpAddr::V6(Ipv6Addr::LOCALHOST)));
        assert_eq!(listen("localhost", 0).ip(), None);
    }

    #[test]
    fn listen_mistakes_say_what_is_wrong() {
        for (raw, says) in [
            ("6443", "no port"),
            ("127.0.0.1:http", "not a number"),
            ("127.0.0.1:70000", "not a number"),
            (":6443", "no host"),
            ("::1:6443", "brackets"),
            ("[::1:6443", "without its ']'"),
            ("[localhost]:6443", "only an IPv6"),
        ] {
            let err = parse_listen(raw).expect_err(raw);
            let text = err.to_string();
            assert!(text.contains(says) && text.contains("127.0.0.1:6443"), "{raw}: {text}");
        }
    }

    #[test]
    fn urls_use_the_real_port_and_loopback_for_wildcards() {
        let url = |t, a: &str| server_url(t, a.parse().expect("addr"));
        assert_eq!(url(Transport::Https, "127.0.0.1:43111"), "https://127.0.0.1:43111");
        assert_eq!(url(Transport::Http, "0.0.0.0:8080"), "http://127.0.0.1:8080");
        assert_eq!(url(Transport::Https, "[::]:6443"), "https://[::1]:6443");
        assert_eq!(url(Transport::Https, "[fe80::1]:6443"), "https://[fe80::1]:6443");
    }
}
