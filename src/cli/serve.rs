//! `kubectl crd serve`, stage one: what the user typed ([`ServeArgs`]) checked once and
//! turned into the server's validated [`ServeOptions`], defaults filled in; then
//! [`crate::serve`] runs them.

use super::args::{ServeArgs, StorageKind};
use crate::datadir::KUBECONFIG_FILE;
use crate::serve::options::{self, OptionsError, ServeOptions, Transport};
use kubectl_crd_engine::store::{EtcdConfig, EtcdTls};
use std::io::Write;
use std::path::PathBuf;

/// Checks the arguments. `default_data_dir` is used when `--data-dir` is not given.
pub fn options(args: &ServeArgs, default_data_dir: Option<PathBuf>) -> Result<ServeOptions, OptionsError> {
    let listen = options::parse_listen(&args.listen)?;
    let data_dir = args.data_dir.clone().or(default_data_dir).ok_or(OptionsError::NoDataDir)?;
    let kubeconfig = args.write_kubeconfig.clone().unwrap_or_else(|| data_dir.join(KUBECONFIG_FILE));
    // The ready line shows this path for copying into KUBECONFIG; relative would only
    // work from here.
    let kubeconfig = std::path::absolute(&kubeconfig).unwrap_or(kubeconfig);
    let transport = if args.insecure_http { Transport::Http } else { Transport::Https };
    let storage = match args.storage {
        StorageKind::Etcd => options::StorageKind::Etcd(etcd_config(args)?),
        other => {
            if let Some(flag) = etcd_flag(args) {
                return Err(OptionsError::EtcdFlagWithoutEtcd { flag });
            }
            if other == StorageKind::Memory { options::StorageKind::Memory } else { options::StorageKind::Redb }
        }
    };
    Ok(ServeOptions { listen, data_dir, kubeconfig, storage, transport })
}

/// The first etcd flag given, if any (they mean nothing without `--storage etcd`).
fn etcd_flag(args: &ServeArgs) -> Option<&'static str> {
    [
        (!args.etcd_servers.is_empty(), "--etcd-servers"),
        (args.etcd_cafile.is_some(), "--etcd-cafile"),
        (args.etcd_certfile.is_some(), "--etcd-certfile"),
        (args.etcd_keyfile.is_some(), "--etcd-keyfile"),
        (args.etcd_prefix != DEFAULT_ETCD_PREFIX, "--etcd-prefix"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag))
}

const DEFAULT_ETCD_PREFIX: &str = "/registry";

fn etcd_config(args: &ServeArgs) -> Result<EtcdConfig, OptionsError> {
    let endpoints: Vec<String> =
        args.etcd_servers.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    if endpoints.is_empty() {
        return Err(OptionsError::NoEtcdServers);
    }
    if args.etcd_certfile.is_some() != args.etcd_keyfile.is_some() {
        return Err(OptionsError::EtcdCertWithoutKey);
    }
    let tls = (args.etcd_cafile.is_some() || args.etcd_certfile.is_some()).then(|| EtcdTls {
        ca_file: args.etcd_cafile.clone(),
        cert_file: args.etcd_certfile.clone(),
        key_file: args.etcd_keyfile.clone(),
    });
    Ok(EtcdConfig { prefix: args.etcd_prefix.clone(), tls, ..EtcdConfig::new(endpoints) })
}

/// Runs the server the arguments describe until a signal stops it.
pub fn run(args: &ServeArgs, out: &mut dyn Write) -> Result<(), crate::serve::ServeError> {
    let options = options(args, crate::datadir::default_local_dir())?;
    crate::serve::run(&options, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_in_the_data_dir_and_kubeconfig() {
        let args = ServeArgs {
            listen: "127.0.0.1:0".into(),
            data_dir: None,
            write_kubeconfig: None,
            storage: StorageKind::Redb,
            insecure_http: true,
            etcd_servers: vec![],
            etcd_cafile: None,
            etcd_certfile: None,
            etcd_keyfile: None,
            etcd_prefix: DEFAULT_ETCD_PREFIX.into(),
        };
        let opts = options(&args, Some(PathBuf::from("/var/lib/crd"))).expect("valid");
        assert_eq!(opts.data_dir, PathBuf::from("/var/lib/crd"));
        assert_eq!(opts.kubeconfig, PathBuf::from("/var/lib/crd/kubeconfig"));
        assert_eq!(opts.transport, Transport::Http);
        assert_eq!(options(&args, None), Err(OptionsError::NoDataDir));
    }

    #[test]
    fn etcd_flags_become_the_engine_s_etcd_config() {
        let base = ServeArgs {
            listen: "127.0.0.1:0".into(),
            data_dir: Some("/d".into()),
            write_kubeconfig: None,
            storage: StorageKind::Etcd,
            insecure_http: false,
            etcd_servers: vec![],
            etcd_cafile: None,
            etcd_certfile: None,
            etcd_keyfile: None,
            etcd_prefix: DEFAULT_ETCD_PREFIX.into(),
        };
        assert_eq!(options(&base, None), Err(OptionsError::NoEtcdServers));
        let args = ServeArgs {
            etcd_servers: vec!["https://a:2379".into(), "https://b:2379".into()],
            etcd_cafile: Some("/ca.pem".into()),
            etcd_prefix: "/team".into(),
            ..base
        };
        let options::StorageKind::Etcd(config) = options(&args, None).expect("valid").storage else {
            panic!("etcd storage")
        };
        assert_eq!(config.endpoints, ["https://a:2379", "https://b:2379"]);
        assert_eq!(config.prefix, "/team");
        assert_eq!(config.tls.and_then(|t| t.ca_file), Some(PathBuf::from("/ca.pem")));
        let cert_alone = ServeArgs { etcd_certfile: Some("/c.pem".into()), ..args };
        assert_eq!(options(&cert_alone, None), Err(OptionsError::EtcdCertWithoutKey));
        let redb_with_servers =
            ServeArgs { storage: StorageKind::Redb, etcd_keyfile: Some("/k.pem".into()), ..cert_alone };
        assert_eq!(
            options(&redb_with_servers, None),
            Err(OptionsError::EtcdFlagWithoutEtcd { flag: "--etcd-servers" })
        );
    }
}
