//! `kubectl crd serve`, stage one: what the user typed ([`ServeArgs`]) checked once and
//! turned into the server's validated [`ServeOptions`], defaults filled in; then
//! [`crate::serve`] runs them.

use super::args::{ServeArgs, StorageKind};
use crate::datadir::KUBECONFIG_FILE;
use crate::serve::options::{self, OptionsError, ServeOptions, Transport};
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
        StorageKind::Memory => options::StorageKind::Memory,
        StorageKind::Redb => options::StorageKind::Redb,
    };
    Ok(ServeOptions { listen, data_dir, kubeconfig, storage, transport })
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
        };
        let opts = options(&args, Some(PathBuf::from("/var/lib/crd"))).expect("valid");
        assert_eq!(opts.data_dir, PathBuf::from("/var/lib/crd"));
        assert_eq!(opts.kubeconfig, PathBuf::from("/var/lib/crd/kubeconfig"));
        assert_eq!(opts.transport, Transport::Http);
        assert_eq!(options(&args, None), Err(OptionsError::NoDataDir));
    }
}
