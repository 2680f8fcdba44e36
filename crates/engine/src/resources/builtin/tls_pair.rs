//! The warning kube's Secret strategy gives a `kubernetes.io/tls` Secret whose pair Go's
//! `tls.X509KeyPair` refuses: first what the PEM text shows (no PEM at all, no certificate
//! block, the inputs switched, no private key block), then what the DER behind it does
//! ([`super::tls_der`]).

use base64::Engine as _;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};

/// Go's `base64.StdEncoding`, which takes stray bits after the last byte.
const STD_BASE64: GeneralPurpose =
    GeneralPurpose::new(&base64::alphabet::STANDARD, GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true));

/// Go's `tls.X509KeyPair` refusal of `cert` and `key`.
pub fn pair_problem(cert: &[u8], key: &[u8]) -> Option<String> {
    let (first_cert, key) = match pem_blocks(cert, key) {
        Ok(ders) => ders,
        Err(why) => return Some(why),
    };
    super::tls_der::der_problem(&first_cert, &key)
}

/// The DER of the first certificate block and of the key block, or Go's refusal of the PEM.
fn pem_blocks(cert: &[u8], key: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut first_cert = None;
    let mut skipped: Vec<String> = Vec::new();
    for (block, der) in blocks(cert) {
        if block == "CERTIFICATE" {
            first_cert.get_or_insert(der);
        } else {
            skipped.push(block);
        }
    }
    let Some(first_cert) = first_cert else {
        return Err(match skipped.as_slice() {
            [] => "tls: failed to find any PEM data in certificate input".into(),
            [one] if one.ends_with("PRIVATE KEY") => {
                "tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched".into()
            }
            _ => format!(
                "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: [{}]",
                skipped.join(" ")
            ),
        });
    };
    skipped.clear();
    for (block, der) in blocks(key) {
        if block == "PRIVATE KEY" || block.ends_with(" PRIVATE KEY") {
            return Ok((first_cert, der));
        }
        skipped.push(block);
    }
    Err(match skipped.as_slice() {
        [] => "tls: failed to find any PEM data in key input".into(),
        [one] if one == "CERTIFICATE" => {
            "tls: found a certificate rather than a key in the PEM for the private key".into()
        }
        _ => format!(
            "tls: failed to find PEM block with type ending in \"PRIVATE KEY\" in key input after skipping PEM blocks of the following types: [{}]",
            skipped.join(" ")
        ),
    })
}

/// A PEM block: its type and its DER.
type Block = (String, Vec<u8>);

/// The PEM blocks Go's `pem.Decode` finds in `data`, in order.
fn blocks(mut data: &[u8]) -> Vec<Block> {
    let mut found = Vec::new();
    while let Some((block, rest)) = decode(data) {
        found.push(block);
        data = rest;
    }
    found
}

const BEGIN: &[u8] = b"\n-----BEGIN ";
const END: &[u8] = b"\n-----END ";
const DASHES: &[u8] = b"-----";

/// `pem.Decode`: the type and DER of the next well-formed block, and what follows it.
fn decode(data: &[u8]) -> Option<(Block, &[u8])> {
    let mut rest = data;
    loop {
        rest = if rest.starts_with(&BEGIN[1..]) {
            &rest[BEGIN.len() - 1..]
        } else {
            &rest[find(rest, BEGIN)? + BEGIN.len()..]
        };
        let (type_line, after_type) = line(rest);
        rest = after_type;
        let Some(block_type) = type_line.strip_suffix(DASHES) else { continue };
        let mut headers = false;
        loop {
            if rest.is_empty() {
                return None;
            }
            let (l, next) = line(rest);
            if !l.contains(&b':') {
                break;
            }
            headers = true;
            rest = next;
        }
        let (end, trailer_at) = if !headers && rest.starts_with(&END[1..]) {
            (0, END.len() - 1)
        } else {
            let Some(end) = find(rest, END) else { continue };
            (end, end + END.len())
        };
        let trailer = &rest[trailer_at..];
        let trailer_len = block_type.len() + DASHES.len();
        if trailer.len() < trailer_len {
            continue;
        }
        let (end_line, rest_of_end_line) = trailer.split_at(trailer_len);
        if !end_line.starts_with(block_type) || !end_line.ends_with(DASHES) || !line(rest_of_end_line).0.is_empty() {
            continue;
        }
        let body: Vec<u8> =
            rest[..end].iter().copied().filter(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n')).collect();
        let Some(der) = valid_std_base64(&body).then(|| STD_BASE64.decode(&body).ok()).flatten() else { continue };
        let (_, after) = line(&rest[end + END.len() - 1..]);
        return Some(((String::from_utf8_lossy(block_type).into_owned(), der), after));
    }
}

/// Go's `getLine`: up to the next newline, without trailing spaces, tabs and returns.
fn line(data: &[u8]) -> (&[u8], &[u8]) {
    let (l, rest) = match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &data[data.len()..]),
    };
    let trimmed = l.iter().rposition(|b| !matches!(b, b' ' | b'\t' | b'\r')).map_or(&l[..0], |i| &l[..=i]);
    (trimmed, rest)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether Go's `base64.StdEncoding` decodes `data` (padded, standard alphabet; Go's
/// decoder also skips `\r` and `\n`, removed before this).
fn valid_std_base64(data: &[u8]) -> bool {
    if !data.len().is_multiple_of(4) {
        return false;
    }
    let pad = data.iter().rev().take_while(|&&b| b == b'=').count();
    if pad > 2 {
        return false;
    }
    let body = &data[..data.len() - pad];
    body.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const KEY: &str = "-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n";

    #[test]
    fn refusals_in_go_s_words() {
        let problem = |c: &str, k: &str| pem_blocks(c.as_bytes(), k.as_bytes()).err();
        // kube-apiserver 1.32's warning for a TLS Secret of text that is no PEM.
        assert_eq!(
            problem("notpem", "notpem").as_deref(),
            Some("tls: failed to find any PEM data in certificate input")
        );
        assert_eq!(
            problem(KEY, CERT).as_deref(),
            Some(
                "tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched"
            )
        );
        assert_eq!(problem(CERT, "x").as_deref(), Some("tls: failed to find any PEM data in key input"));
        assert_eq!(
            problem(CERT, CERT).as_deref(),
            Some("tls: found a certificate rather than a key in the PEM for the private key")
        );
        assert_eq!(problem(CERT, KEY), None);
        // Sound PEM over DER that is not a certificate: the DER's refusal.
        assert_eq!(pair_problem(CERT.as_bytes(), KEY.as_bytes()).as_deref(), Some("x509: malformed certificate"));
        // A block whose body is no base64, or whose END names another type, is no block.
        assert!(problem("-----BEGIN CERTIFICATE-----\n%%%%\n-----END CERTIFICATE-----\n", KEY).is_some());
        assert!(problem("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERT-----\n", KEY).is_some());
        assert_eq!(problem(&format!("junk\n{CERT}"), KEY), None);
    }
}
