//! The server's TLS identity: a private CA and a serving certificate it signs, both made with
//! rcgen on the first start and kept in the data directory (`ca.crt`, `ca.key`, `tls.crt`,
//! `tls.key`; keys 0600). Keeping the CA is what lets a kubeconfig written yesterday trust
//! today's server. The serving certificate is reissued from the kept CA when it no longer
//! fits — a new listen host, or fewer than 30 days left — which we find out by verifying it
//! exactly as a client would (rustls' webpki verifier) rather than by parsing it. The
//! rustls `ServerConfig` offers ALPN `h2` and `http/1.1`, since kubectl speaks HTTP/2.

use super::files::{self, FileError};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SerialNumber,
};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use crate::datadir::{CA_CERT, CA_KEY, SERVING_CERT, SERVING_KEY};

const DAY: u64 = 24 * 60 * 60;
const CA_LIFETIME: Duration = Duration::from_secs(10 * 365 * DAY);
const SERVING_LIFETIME: Duration = Duration::from_secs(365 * DAY);
/// A serving certificate with less than this left is replaced on start.
const RENEW_BEFORE: Duration = Duration::from_secs(30 * DAY);
/// Certificates start this long before "now", for clients whose clock is a little behind.
const BACKDATE: Duration = Duration::from_secs(60 * 60);

/// Why the TLS identity could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error(transparent)]
    File(#[from] FileError),
    #[error("cannot generate a certificate for {names:?} (is every name a valid host name or IP address?)")]
    Generate {
        names: Vec<String>,
        #[source]
        source: rcgen::Error,
    },
    #[error(
        "{} and {} do not form a usable CA ({why}); delete ca.crt, ca.key, tls.crt and tls.key in {} to start over with a new CA",
        dir.join(CA_CERT).display(), dir.join(CA_KEY).display(), dir.display()
    )]
    BadCa { dir: PathBuf, why: String },
    #[error("cannot set up TLS: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The material the server needs: the CA for kubeconfigs, the chain and key for handshakes.
pub struct TlsMaterial {
    /// PEM of the CA certificate (what `certificate-authority-data` carries).
    pub ca_pem: Vec<u8>,
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

/// The names the serving certificate must hold: the loopback names always, plus the host
/// the user asked to listen on and the address it resolved to.
pub fn serving_names(listen_host: &str, bound: IpAddr) -> Vec<String> {
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    let host = listen_host.trim_start_matches('[').trim_end_matches(']');
    let bound = (!bound.is_unspecified()).then(|| bound.to_string());
    for name in [Some(host.to_string()), bound].into_iter().flatten() {
        // A wildcard address is not a name anyone connects to.
        let unspecified = name.parse::<IpAddr>().is_ok_and(|ip| ip.is_unspecified());
        if !name.is_empty() && !unspecified && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The CA and serving certificate kept in `dir`, made (or the serving one reissued) as needed
/// so that it is valid for every name in `names`.
pub fn load_or_create(dir: &Path, names: &[String]) -> Result<TlsMaterial, TlsError> {
    let (ca_pem, ca_key) = load_or_create_ca(dir)?;
    let ca_der = CertificateDer::from_pem_slice(&ca_pem)
        .map_err(|e| TlsError::BadCa { dir: dir.to_path_buf(), why: format!("ca.crt: {e}") })?;
    let renew_at = UnixTime::since_unix_epoch(unix_now().saturating_add(RENEW_BEFORE));
    if let Some((cert, key)) = load_serving(dir)?
        && fits(&ca_der, &cert, names, renew_at)
        && server_config(&cert, &key).is_ok()
    {
        return Ok(TlsMaterial { ca_pem, cert, key });
    }
    let (cert, key) = issue_serving(dir, &ca_key, names)?;
    if !fits(&ca_der, &cert, names, UnixTime::now()) {
        return Err(TlsError::BadCa { dir: dir.to_path_buf(), why: "ca.key did not sign for ca.crt".into() });
    }
    Ok(TlsMaterial { ca_pem, cert, key })
}

/// The rustls configuration for `material`.
pub fn server_config_for(material: &TlsMaterial) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    server_config(&material.cert, &material.key)
}

fn server_config(
    cert: &CertificateDer<'static>,
    key: &PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key.clone_key())?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Whether `cert`, checked as a client trusting only the CA would check it at time `at`,
/// is valid for every name.
fn fits(ca: &CertificateDer<'static>, cert: &CertificateDer<'static>, names: &[String], at: UnixTime) -> bool {
    let mut roots = rustls::RootCertStore::empty();
    if roots.add(ca.clone()).is_err() {
        return false;
    }
    let Ok(verifier) = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider()).build() else {
        return false;
    };
    names.iter().all(|name| {
        ServerName::try_from(name.as_str())
            .is_ok_and(|server_name| verifier.verify_server_cert(cert, &[], &server_name, &[], at).is_ok())
    })
}

/// The kept CA (PEM certificate and key), or a new one when either file is missing.
fn load_or_create_ca(dir: &Path) -> Result<(Vec<u8>, KeyPair), TlsError> {
    let (cert_path, key_path) = (dir.join(CA_CERT), dir.join(CA_KEY));
    if let (Some(cert), Some(key)) = (files::read_if_exists(&cert_path)?, files::read_if_exists(&key_path)?) {
        let bad = |why: String| TlsError::BadCa { dir: dir.to_path_buf(), why };
        let key = std::str::from_utf8(&key).map_err(|_| bad("ca.key is not PEM text".into()))?;
        let key = KeyPair::from_pem(key).map_err(|e| bad(format!("ca.key: {e}")))?;
        return Ok((cert, key));
    }
    let key = KeyPair::generate().map_err(|source| TlsError::Generate { names: vec![], source })?;
    let mut params = ca_params();
    set_validity(&mut params, CA_LIFETIME);
    params.serial_number = Some(random_serial());
    let cert = params.self_signed(&key).map_err(|source| TlsError::Generate { names: vec![], source })?;
    // Key first: a crash in between leaves no certificate, and the next start makes a new CA.
    files::write_atomic(&key_path, key.serialize_pem().as_bytes(), files::PRIVATE)?;
    files::write_atomic(&cert_path, cert.pem().as_bytes(), files::PUBLIC)?;
    Ok((cert.pem().into_bytes(), key))
}

/// The CA's identity. Fixed, so that an [`Issuer`] rebuilt from it and the kept key names
/// the same issuer as the kept certificate (rcgen cannot read a certificate back without
/// the x509-parser feature, and this way it does not need to).
fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = common_name("kubectl-crd-ca");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    params
}

/// The kept serving certificate and key, if both are there and readable.
fn load_serving(dir: &Path) -> Result<Option<(CertificateDer<'static>, PrivateKeyDer<'static>)>, TlsError> {
    let cert = files::read_if_exists(&dir.join(SERVING_CERT))?;
    let key = files::read_if_exists(&dir.join(SERVING_KEY))?;
    let (Some(cert), Some(key)) = (cert, key) else {
        return Ok(None);
    };
    // Unreadable serving material is simply replaced: only the CA is worth keeping.
    Ok(CertificateDer::from_pem_slice(&cert).ok().zip(PrivateKeyDer::from_pem_slice(&key).ok()))
}

fn issue_serving(
    dir: &Path,
    ca_key: &KeyPair,
    names: &[String],
) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), TlsError> {
    let generate = |source| TlsError::Generate { names: names.to_vec(), source };
    let key = KeyPair::generate().map_err(generate)?;
    let mut params = CertificateParams::new(names.to_vec()).map_err(generate)?;
    params.distinguished_name = common_name("kubectl-crd");
    params.is_ca = IsCa::NoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature, KeyUsagePurpose::KeyEncipherment];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    set_validity(&mut params, SERVING_LIFETIME);
    params.serial_number = Some(random_serial());
    let issuer = Issuer::new(ca_params(), ca_key);
    let cert = params.signed_by(&key, &issuer).map_err(generate)?;
    files::write_atomic(&dir.join(SERVING_KEY), key.serialize_pem().as_bytes(), files::PRIVATE)?;
    files::write_atomic(&dir.join(SERVING_CERT), cert.pem().as_bytes(), files::PUBLIC)?;
    let key = PrivateKeyDer::Pkcs8(key.serialize_der().into());
    Ok((cert.der().clone(), key))
}

fn common_name(name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, name);
    dn
}

/// A positive 128-bit serial whose DER encoding needs no padding byte.
fn random_serial() -> SerialNumber {
    let mut bytes: [u8; 16] = rand::random();
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    SerialNumber::from_slice(&bytes)
}

fn unix_now() -> Duration {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default()
}

/// Valid from a little before now for `lifetime`. Times are offsets from 1970 because rcgen
/// does not re-export its time type; they are clamped far below the year 9999, past which
/// X.509 times (and the `time` crate's arithmetic) stop.
fn set_validity(params: &mut CertificateParams, lifetime: Duration) {
    const LATEST: Duration = Duration::from_secs(7000 * 365 * DAY);
    let epoch = rcgen::date_time_ymd(1970, 1, 1);
    let now = unix_now();
    params.not_before = epoch + now.saturating_sub(BACKDATE).min(LATEST);
    params.not_after = epoch + now.saturating_add(lifetime).min(LATEST);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        serving_names("127.0.0.1", IpAddr::from([127, 0, 0, 1]))
    }

    fn read(dir: &Path, name: &str) -> Vec<u8> {
        std::fs::read(dir.join(name)).expect("file")
    }

    #[test]
    fn serving_names_add_the_listen_host_once() {
        assert_eq!(names(), ["localhost", "127.0.0.1", "::1"]);
        let wildcard = serving_names("0.0.0.0", IpAddr::from([0, 0, 0, 0]));
        assert_eq!(wildcard, ["localhost", "127.0.0.1", "::1"]);
        let named = serving_names("devbox.local", IpAddr::from([10, 0, 0, 7]));
        assert_eq!(named, ["localhost", "127.0.0.1", "::1", "devbox.local", "10.0.0.7"]);
        assert_eq!(serving_names("[::1]", IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1])).len(), 3);
    }

    #[test]
    fn first_start_creates_and_restart_reuses_everything() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create(dir.path(), &names()).expect("created");
        let crt = read(dir.path(), SERVING_CERT);
        let second = load_or_create(dir.path(), &names()).expect("loaded");
        assert_eq!(first.ca_pem, second.ca_pem);
        assert_eq!(first.ca_pem, read(dir.path(), CA_CERT));
        assert_eq!(crt, read(dir.path(), SERVING_CERT), "a fitting serving certificate is kept");
        #[cfg(unix)]
        for (file, mode) in [(CA_KEY, 0o600), (SERVING_KEY, 0o600), (CA_CERT, 0o644), (SERVING_CERT, 0o644)] {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(dir.path().join(file)).expect("meta");
            assert_eq!(meta.permissions().mode() & 0o777, mode, "{file}");
        }
        let config = server_config_for(&second).expect("config");
        assert_eq!(config.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
    }

    #[test]
    fn a_new_listen_host_reissues_the_serving_certificate_from_the_same_ca() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create(dir.path(), &names()).expect("created");
        let crt = read(dir.path(), SERVING_CERT);
        let wider = serving_names("devbox.local", IpAddr::from([10, 0, 0, 7]));
        let second = load_or_create(dir.path(), &wider).expect("reissued");
        assert_eq!(first.ca_pem, second.ca_pem);
        assert_ne!(crt, read(dir.path(), SERVING_CERT));
        let ca = CertificateDer::from_pem_slice(&second.ca_pem).expect("ca");
        assert!(fits(&ca, &second.cert, &wider, UnixTime::now()));
        assert!(!fits(&ca, &second.cert, &["elsewhere.example".to_string()], UnixTime::now()));
    }

    #[test]
    fn damaged_serving_files_are_replaced_but_a_foreign_ca_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        load_or_create(dir.path(), &names()).expect("created");
        std::fs::write(dir.path().join(SERVING_CERT), "garbage").expect("write");
        load_or_create(dir.path(), &names()).expect("serving certificate reissued");

        let other = tempfile::tempdir().expect("tempdir");
        load_or_create(other.path(), &names()).expect("created");
        std::fs::copy(other.path().join(CA_CERT), dir.path().join(CA_CERT)).expect("copy");
        let err = load_or_create(dir.path(), &names()).err().expect("mismatched CA");
        assert!(err.to_string().contains("start over"), "{err}");
    }
}
