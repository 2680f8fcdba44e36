//! The few file operations `serve` needs, done one careful way: the data directory is created
//! private (0700), and every file we write — keys, token, certificates, kubeconfig — is written
//! to a temporary file next to its target and renamed over it, so a reader (kubectl, a second
//! start) never sees half a file, and secrets are never readable by others even for a moment.
//! Modes are a Unix notion; elsewhere files get the platform's defaults.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Mode for secrets: keys, the token, the kubeconfig.
pub const PRIVATE: u32 = 0o600;
/// Mode for public material: certificates.
pub const PUBLIC: u32 = 0o644;

/// A file operation that failed, with the path and what we were doing.
#[derive(Debug, thiserror::Error)]
#[error("cannot {action} {} (check its permissions, or choose another --data-dir)", path.display())]
pub struct FileError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl FileError {
    fn new(action: &'static str, path: &Path, source: io::Error) -> Self {
        FileError { action, path: path.to_path_buf(), source }
    }
}

/// Creates `dir` and its parents; a directory we create is private to the user.
pub fn create_dir(dir: &Path) -> Result<(), FileError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| FileError::new("create the directory", dir, e))
}

/// Reads a file, `None` when it does not exist.
pub fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>, FileError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FileError::new("read", path, e)),
    }
}

/// Writes `bytes` to `path` atomically (temporary file in the same directory, then rename)
/// with `mode` from the first byte on.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> Result<(), FileError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    create_dir(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}-{:016x}", std::process::id(), rand::random::<u64>()));
    let written = write_new(&tmp, bytes, mode).and_then(|()| std::fs::rename(&tmp, path));
    written.map_err(|e| {
        // Best effort: a leftover temporary file is harmless but untidy.
        let _ = std::fs::remove_file(&tmp);
        FileError::new("write", path, e)
    })
}

fn write_new(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_sets_the_mode() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub").join("secret");
        write_atomic(&path, b"one", PRIVATE).expect("first write");
        write_atomic(&path, b"two", PRIVATE).expect("second write");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, PRIVATE, "{mode:o}");
        }
        let leftovers: Vec<_> = std::fs::read_dir(path.parent().expect("parent")).expect("ls").collect();
        assert_eq!(leftovers.len(), 1, "no temporary files remain");
    }

    #[test]
    fn missing_file_reads_as_none() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(read_if_exists(&dir.path().join("nope")).expect("no error").is_none());
    }
}
