//! The DER half of Go's `tls.X509KeyPair`, behind sound PEM: the certificate's outline and
//! public key as `x509.ParseCertificate` reads them, the private key as `tls` tries PKCS#1,
//! PKCS#8 and SEC 1 in turn, and whether the two belong together, in crypto/x509's and
//! crypto/tls's words.
//!
//! Go parses every byte of a certificate (names, times, extensions); this reads the frame
//! up to the public key and the outer signature, so a certificate broken only in its names
//! or extensions goes without the warning kube gives. Go derives an EC key's public point
//! from its scalar; that needs curve arithmetic, so the point the key carries (OpenSSL
//! always writes it) stands for it, and a key without one is taken to match.

use ring::signature::{Ed25519KeyPair, KeyPair as _};

const SEQUENCE: u8 = 0x30;
const INTEGER: u8 = 0x02;
const BIT_STRING: u8 = 0x03;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const NULL: &[u8] = &[0x05, 0x00];
const EXPLICIT_0: u8 = 0xa0;
const EXPLICIT_1: u8 = 0xa1;

const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
const OID_EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
const OID_X25519: &[u8] = &[0x2b, 0x65, 0x6e];

/// The named curves Go knows, with the byte size of a coordinate (and of a scalar).
const CURVES: &[(&[u8], usize)] = &[
    (&[0x2b, 0x81, 0x04, 0x00, 0x21], 28),                   // P-224
    (&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07], 32), // P-256
    (&[0x2b, 0x81, 0x04, 0x00, 0x22], 48),                   // P-384
    (&[0x2b, 0x81, 0x04, 0x00, 0x23], 66),                   // P-521
];

/// A public key as the certificate gives it.
#[derive(Debug, PartialEq)]
enum Public {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The uncompressed point.
    Ec(Vec<u8>),
    Ed25519(Vec<u8>),
    /// One Go parses but `tls` does not take (X25519, DSA), or one it does not know.
    Other,
}

/// A private key as `tls` takes it, reduced to its public half.
#[derive(Debug, PartialEq)]
enum Private {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// The point the key carries, if it does.
    Ec(Option<Vec<u8>>),
    Ed25519(Vec<u8>),
}

/// Go's refusal of the first certificate's DER `cert` with the private key's DER `key`.
pub fn der_problem(cert: &[u8], key: &[u8]) -> Option<String> {
    let public = match certificate_key(cert) {
        Ok(public) => public,
        Err(why) => return Some(why.into()),
    };
    let private = match private_key(key) {
        Ok(private) => private,
        Err(why) => return Some(why.into()),
    };
    let matches = match (&public, &private) {
        (Public::Rsa { n, e }, Private::Rsa { n: pn, e: pe }) => n == pn && e == pe,
        (Public::Ec(point), Private::Ec(carried)) => carried.as_ref().is_none_or(|c| c == point),
        (Public::Ed25519(k), Private::Ed25519(pk)) => k == pk,
        (Public::Other, _) => return Some("tls: unknown public key algorithm".into()),
        _ => return Some("tls: private key type does not match public key type".into()),
    };
    (!matches).then(|| "tls: private key does not match public key".into())
}

/// `x509.ParseCertificate` as far as the public key, and the outer signature.
fn certificate_key(der: &[u8]) -> Result<Public, &'static str> {
    let mut input = Der(der);
    let mut cert = input.read(SEQUENCE).map(Der).ok_or("x509: malformed certificate")?;
    let mut tbs = cert.read(SEQUENCE).map(Der).ok_or("x509: malformed tbs certificate")?;
    if tbs.peek() == Some(EXPLICIT_0) {
        let version = tbs.read(EXPLICIT_0).and_then(|v| Der(v).read_all(INTEGER)).ok_or("x509: malformed version")?;
        match small_int(version) {
            Some(0..=2) => {}
            Some(v) if v >= 0 => return Err("x509: invalid version"),
            _ => return Err("x509: malformed version"),
        }
    }
    tbs.read(INTEGER).ok_or("x509: malformed serial number")?;
    tbs.read(SEQUENCE).ok_or("x509: malformed signature algorithm identifier")?;
    tbs.read(SEQUENCE).ok_or("x509: malformed issuer")?;
    tbs.read(SEQUENCE).ok_or("x509: malformed validity")?;
    tbs.read(SEQUENCE).ok_or("x509: malformed subject")?;
    let mut spki = tbs.read(SEQUENCE).map(Der).ok_or("x509: malformed spki")?;
    let mut algorithm = spki.read(SEQUENCE).map(Der).ok_or("x509: malformed public key algorithm identifier")?;
    let key = spki.read(BIT_STRING).and_then(bit_string).ok_or("x509: malformed subjectPublicKey")?;
    let oid = algorithm.read(OID).ok_or("x509: malformed public key algorithm identifier")?;
    let public = public_key(oid, algorithm.rest(), key)?;
    cert.read(SEQUENCE).ok_or("x509: malformed algorithm identifier")?;
    cert.read(BIT_STRING).and_then(bit_string).ok_or("x509: malformed signature")?;
    if !input.rest().is_empty() {
        return Err("x509: trailing data");
    }
    Ok(public)
}

/// x509's `parsePublicKey` for the algorithms `tls` takes.
fn public_key(oid: &[u8], params: &[u8], key: &[u8]) -> Result<Public, &'static str> {
    match oid {
        OID_RSA => {
            if params != NULL {
                return Err("x509: RSA key missing NULL parameters");
            }
            let mut seq = Der(key).read_all(SEQUENCE).map(Der).ok_or("x509: invalid RSA public key")?;
            let n = seq.read(INTEGER).ok_or("x509: invalid RSA modulus")?;
            let e = seq.read(INTEGER).filter(|e| e.len() <= 8).ok_or("x509: invalid RSA public exponent")?;
            if !positive(n) {
                return Err("x509: RSA modulus is not a positive number");
            }
            if !positive(e) {
                return Err("x509: RSA public exponent is not a positive number");
            }
            Ok(Public::Rsa { n: magnitude(n), e: magnitude(e) })
        }
        OID_EC => {
            let curve = Der(params).read_all(OID).ok_or("x509: invalid ECDSA parameters")?;
            let size = curve_size(curve).ok_or("x509: unsupported elliptic curve")?;
            if key.len() != 1 + 2 * size || key[0] != 4 {
                return Err("x509: failed to unmarshal elliptic curve point");
            }
            Ok(Public::Ec(key.to_vec()))
        }
        OID_ED25519 => {
            if !params.is_empty() {
                return Err("x509: Ed25519 key encoded with illegal parameters");
            }
            if key.len() != 32 {
                return Err("x509: wrong Ed25519 public key size");
            }
            Ok(Public::Ed25519(key.to_vec()))
        }
        _ => Ok(Public::Other),
    }
}

/// `tls`'s `parsePrivateKey`: PKCS#1, then PKCS#8, then SEC 1.
fn private_key(der: &[u8]) -> Result<Private, &'static str> {
    if let Some(key) = pkcs1(der) {
        return Ok(key);
    }
    match pkcs8(der) {
        Some(Some(key)) => return Ok(key),
        Some(None) => return Err("tls: found unknown private key type in PKCS#8 wrapping"),
        None => {}
    }
    sec1(der, None).ok_or("tls: failed to parse private key")
}

/// `x509.ParsePKCS1PrivateKey`: version, n, e, d, p, q (all positive), the optional CRT
/// values and extra primes, nothing after.
fn pkcs1(der: &[u8]) -> Option<Private> {
    let mut seq = Der(Der(der).read_all(SEQUENCE)?);
    let version = small_int(seq.read(INTEGER)?)?;
    if !(0..=1).contains(&version) {
        return None;
    }
    let n = seq.read(INTEGER)?;
    let e = seq.read(INTEGER).filter(|e| e.len() <= 8)?;
    let (d, p, q) = (seq.read(INTEGER)?, seq.read(INTEGER)?, seq.read(INTEGER)?);
    if ![n, e, d, p, q].iter().all(|i| positive(i)) {
        return None;
    }
    for _ in 0..3 {
        if seq.peek() == Some(INTEGER) {
            seq.read(INTEGER)?;
        }
    }
    if seq.peek() == Some(SEQUENCE) {
        seq.read(SEQUENCE)?;
    }
    seq.rest().is_empty().then(|| Private::Rsa { n: magnitude(n), e: magnitude(e) })
}

/// `x509.ParsePKCS8PrivateKey`: `None` if it refuses, `Some(None)` for a key `tls` does not
/// take (X25519).
fn pkcs8(der: &[u8]) -> Option<Option<Private>> {
    let mut seq = Der(Der(der).read_all(SEQUENCE)?);
    small_int(seq.read(INTEGER)?)?;
    let mut algorithm = Der(seq.read(SEQUENCE)?);
    let oid = algorithm.read(OID)?;
    let params = algorithm.rest();
    let inner = seq.read(OCTET_STRING)?;
    match oid {
        OID_RSA => pkcs1(inner).map(Some),
        OID_EC => {
            let curve = Der(params).read_all(OID);
            sec1(inner, curve).map(Some)
        }
        OID_ED25519 | OID_X25519 => {
            let seed = Der(inner).read_all(OCTET_STRING).filter(|s| s.len() == 32 && params.is_empty())?;
            if oid == OID_X25519 {
                return Some(None);
            }
            let pair = Ed25519KeyPair::from_seed_unchecked(seed).ok()?;
            Some(Some(Private::Ed25519(pair.public_key().as_ref().to_vec())))
        }
        _ => None,
    }
}

/// `x509.ParseECPrivateKey` (SEC 1), on the curve PKCS#8 named if it did.
fn sec1(der: &[u8], outer_curve: Option<&[u8]>) -> Option<Private> {
    let mut seq = Der(Der(der).read_all(SEQUENCE)?);
    if small_int(seq.read(INTEGER)?)? != 1 {
        return None;
    }
    let scalar = seq.read(OCTET_STRING)?;
    let own_curve = match seq.peek() {
        Some(EXPLICIT_0) => Some(Der(seq.read(EXPLICIT_0)?).read_all(OID)?),
        _ => None,
    };
    let carried = match seq.peek() {
        Some(EXPLICIT_1) => Some(Der(seq.read(EXPLICIT_1)?).read_all(BIT_STRING).and_then(bit_string)?),
        _ => None,
    };
    let size = curve_size(outer_curve.or(own_curve)?)?;
    if scalar.len() > size || scalar.iter().all(|b| *b == 0) {
        return None;
    }
    Some(Private::Ec(carried.filter(|p| p.first() == Some(&4)).map(<[u8]>::to_vec)))
}

fn curve_size(oid: &[u8]) -> Option<usize> {
    CURVES.iter().find(|(c, _)| *c == oid).map(|(_, size)| *size)
}

/// A BIT STRING's bytes, if whole (Go's keys and signatures are).
fn bit_string(content: &[u8]) -> Option<&[u8]> {
    let (&unused, bits) = content.split_first()?;
    (unused == 0 || (unused < 8 && !bits.is_empty() && bits[bits.len() - 1] & ((1 << unused) - 1) == 0)).then_some(bits)
}

/// A DER INTEGER's content that is above zero (Go's `big.Int.Sign() > 0`).
fn positive(int: &[u8]) -> bool {
    !int.is_empty() && int[0] & 0x80 == 0 && int.iter().any(|b| *b != 0)
}

/// An INTEGER's magnitude without leading zeros, for comparing.
fn magnitude(int: &[u8]) -> Vec<u8> {
    let start = int.iter().position(|b| *b != 0).unwrap_or(int.len());
    int[start..].to_vec()
}

/// A small INTEGER's value; `None` for an empty or long one.
fn small_int(int: &[u8]) -> Option<i64> {
    if int.is_empty() || int.len() > 8 {
        return None;
    }
    let negative = int[0] & 0x80 != 0;
    Some(int.iter().fold(if negative { -1 } else { 0 }, |acc, b| (acc << 8) | i64::from(*b)))
}

/// DER elements read one after another, as Go's `cryptobyte` reads them: one-byte tags,
/// definite minimal lengths.
struct Der<'a>(&'a [u8]);

impl<'a> Der<'a> {
    fn peek(&self) -> Option<u8> {
        self.0.first().copied()
    }

    fn rest(&self) -> &'a [u8] {
        self.0
    }

    /// The content of the next element if its tag is `tag`.
    fn read(&mut self, tag: u8) -> Option<&'a [u8]> {
        let (&found, after) = self.0.split_first()?;
        if found != tag || found & 0x1f == 0x1f {
            return None;
        }
        let (&first, after) = after.split_first()?;
        let (len, after) = match first {
            0..=0x7f => (usize::from(first), after),
            0x81..=0x84 => {
                let count = usize::from(first & 0x7f);
                let bytes = after.get(..count)?;
                let len = bytes.iter().fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
                // Not minimal: a long form for a short length, or a leading zero.
                if len < 0x80 || bytes[0] == 0 {
                    return None;
                }
                (len, &after[count..])
            }
            _ => return None,
        };
        let content = after.get(..len)?;
        self.0 = &after[len..];
        Some(content)
    }

    /// The content of the one element there is, if its tag is `tag`.
    fn read_all(mut self, tag: u8) -> Option<&'a [u8]> {
        let content = self.read(tag)?;
        self.0.is_empty().then_some(content)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SEQUENCE { children }`.
    fn seq(children: &[&[u8]]) -> Vec<u8> {
        tlv(SEQUENCE, &children.concat())
    }

    fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        if content.len() < 0x80 {
            out.push(content.len() as u8);
        } else {
            out.extend([0x82, (content.len() >> 8) as u8, content.len() as u8]);
        }
        out.extend(content);
        out
    }

    fn int(v: &[u8]) -> Vec<u8> {
        tlv(INTEGER, v)
    }

    /// A certificate whose only real part is its public key.
    fn cert(algorithm: &[u8], key: &[u8]) -> Vec<u8> {
        let spki = seq(&[algorithm, &tlv(BIT_STRING, &[&[0][..], key].concat())]);
        let sig_alg = seq(&[&tlv(OID, &[1])]);
        let tbs = seq(&[&tlv(EXPLICIT_0, &int(&[2])), &int(&[1]), &sig_alg, &seq(&[]), &seq(&[]), &seq(&[]), &spki]);
        seq(&[&tbs, &sig_alg, &tlv(BIT_STRING, &[0, 1])])
    }

    fn rsa_cert(n: u8) -> Vec<u8> {
        cert(&seq(&[&tlv(OID, OID_RSA), NULL]), &seq(&[&int(&[n]), &int(&[3])]))
    }

    fn rsa_key(n: u8) -> Vec<u8> {
        seq(&[&int(&[0]), &int(&[n]), &int(&[3]), &int(&[5]), &int(&[7]), &int(&[11])])
    }

    #[test]
    fn pairs_are_refused_in_go_s_words() {
        assert_eq!(der_problem(&rsa_cert(77), &rsa_key(77)), None);
        let problem = |cert: &[u8], key: &[u8]| der_problem(cert, key).unwrap_or_default();
        assert_eq!(problem(b"\x30\x01", &rsa_key(77)), "x509: malformed certificate");
        assert_eq!(problem(&[rsa_cert(77), vec![0]].concat(), &rsa_key(77)), "x509: trailing data");
        assert_eq!(problem(&rsa_cert(77), &rsa_key(78)), "tls: private key does not match public key");
        assert_eq!(problem(&rsa_cert(77), b"\x30\x00"), "tls: failed to parse private key");
        let point = [&[4u8][..], &[1; 64]].concat();
        let p256 = tlv(OID, CURVES[1].0);
        let ec_cert = cert(&seq(&[&tlv(OID, OID_EC), &p256]), &point);
        let ec_key = |carried: &[u8]| {
            seq(&[
                &int(&[1]),
                &tlv(OCTET_STRING, &[9; 32]),
                &tlv(EXPLICIT_0, &p256),
                &tlv(EXPLICIT_1, &tlv(BIT_STRING, &[&[0][..], carried].concat())),
            ])
        };
        assert_eq!(der_problem(&ec_cert, &ec_key(&point)), None);
        assert_eq!(problem(&ec_cert, &ec_key(&[4, 2, 2])), "tls: private key does not match public key");
        assert_eq!(problem(&ec_cert, &rsa_key(77)), "tls: private key type does not match public key type");
        assert_eq!(problem(&rsa_cert(77), &ec_key(&point)), "tls: private key type does not match public key type");
        let x25519 =
            seq(&[&int(&[0]), &seq(&[&tlv(OID, OID_X25519)]), &tlv(OCTET_STRING, &tlv(OCTET_STRING, &[7; 32]))]);
        assert_eq!(problem(&rsa_cert(77), &x25519), "tls: found unknown private key type in PKCS#8 wrapping");
        let dsa_cert = cert(&seq(&[&tlv(OID, &[0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x01])]), &[1]);
        assert_eq!(problem(&dsa_cert, &rsa_key(77)), "tls: unknown public key algorithm");
    }
}
