//! The warning kube's Secret strategy gives a `kubernetes.io/tls` Secret whose pair Go's
//! `tls.X509KeyPair` refuses, for what that refusal can be told from the PEM text: no PEM
//! at all, no certificate block, the inputs switched, no private key block.
//!
//! Go then parses the certificate's and the key's DER and matches them; a pair whose PEM
//! is sound but whose DER is not gets kube's warning and none from here (the engine has no
//! X.509 parser, and a warning is all that is at stake).

/// Go's `tls.X509KeyPair` refusal of `cert` and `key`, as far as the PEM shows it.
pub fn pem_problem(cert: &[u8], key: &[u8]) -> Option<String> {
    let mut found_cert = false;
    let mut skipped: Vec<String> = Vec::new();
    for block in blocks(cert) {
        if block == "CERTIFICATE" {
            found_cert = true;
        } else {
            skipped.push(block);
        }
    }
    if !found_cert {
        return Some(match skipped.as_slice() {
            [] => "tls: failed to find any PEM data in certificate input".into(),
            [one] if one.ends_with("PRIVATE KEY") => {
                "tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched".into()
            }
            _ => format!(
                "tls: failed to find \"CERTIFICATE\" PEM block in certificate input after skipping PEM blocks of the following types: [{}]",
                skipped.join(" ")
            ),
        });
    }
    skipped.clear();
    for block in blocks(key) {
        if block == "PRIVATE KEY" || block.ends_with(" PRIVATE KEY") {
            return None;
        }
        skipped.push(block);
    }
    Some(match skipped.as_slice() {
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

/// The types of the PEM blocks Go's `pem.Decode` finds in `data`, in order.
fn blocks(mut data: &[u8]) -> Vec<String> {
    let mut types = Vec::new();
    while let Some((block_type, rest)) = decode(data) {
        types.push(block_type);
        data = rest;
    }
    types
}

const BEGIN: &[u8] = b"\n-----BEGIN ";
const END: &[u8] = b"\n-----END ";
const DASHES: &[u8] = b"-----";

/// `pem.Decode`: the type of the next well-formed block, and what follows it.
fn decode(data: &[u8]) -> Option<(String, &[u8])> {
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
        if !valid_std_base64(&body) {
            continue;
        }
        let (_, after) = line(&rest[end + END.len() - 1..]);
        return Some((String::from_utf8_lossy(block_type).into_owned(), after));
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
        let problem = |c: &str, k: &str| pem_problem(c.as_bytes(), k.as_bytes());
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
        // A block whose body is no base64, or whose END names another type, is no block.
        assert!(problem("-----BEGIN CERTIFICATE-----\n%%%%\n-----END CERTIFICATE-----\n", KEY).is_some());
        assert!(problem("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERT-----\n", KEY).is_some());
        assert_eq!(problem(&format!("junk\n{CERT}"), KEY), None);
    }
}
