//! Go's `base64.URLEncoding` decoding, for what kube's CEL conversion of a `byte` string
//! answers: the bytes, or the `CorruptInputError` offset that its error message
//! (`illegal base64 data at input byte N`) shows. kube converts with strfmt's `Base64`,
//! whose `UnmarshalText` reads the URL alphabet (`-`, `_`), though the `byte` format's
//! validation takes the standard one (`+`, `/`): a rule that reaches `+` or `/` fails.
//! Go skips `\r` and `\n` anywhere, needs padding, and is not strict about the unused
//! bits of the last quantum.

use base64::Engine as _;

/// The decoded bytes, or the offset of the first corrupt input byte as Go reports it.
pub fn decode(s: &str) -> Result<Vec<u8>, usize> {
    let src = s.as_bytes();
    let mut si = 0;
    while si < src.len() {
        si = quantum(src, si)?;
    }
    let clean: Vec<u8> = src.iter().copied().filter(|b| !matches!(b, b'\r' | b'\n')).collect();
    // Go ignores the unused bits of the last quantum, which the crate's default refuses.
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    lenient.decode(clean).map_err(|_| 0)
}

fn is_newline(b: u8) -> bool {
    matches!(b, b'\r' | b'\n')
}

fn is_alphabet(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Go's `decodeQuantum` reduced to its checks: where the next quantum starts, or the
/// corrupt offset.
fn quantum(src: &[u8], mut si: usize) -> Result<usize, usize> {
    let mut j = 0;
    while j < 4 {
        let Some(&b) = src.get(si) else {
            // Running out inside a quantum: Go blames where the quantum began.
            return if j == 0 { Ok(si) } else { Err(si - j) };
        };
        si += 1;
        if is_alphabet(b) {
            j += 1;
            continue;
        }
        if is_newline(b) {
            continue;
        }
        if b != b'=' || j < 2 {
            return Err(si - 1);
        }
        if j == 2 {
            // "==" is expected; the first '=' is consumed.
            while src.get(si).copied().is_some_and(is_newline) {
                si += 1;
            }
            match src.get(si) {
                None => return Err(src.len()),
                Some(&b'=') => si += 1,
                Some(_) => return Err(si - 1),
            }
        }
        while src.get(si).copied().is_some_and(is_newline) {
            si += 1;
        }
        // Padding ends the input: anything after it is trailing garbage.
        return if si < src.len() { Err(si) } else { Ok(si) };
    }
    Ok(si)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offsets as Go's decoder reports them.
    #[test]
    fn corrupt_offsets_are_gos() {
        assert_eq!(decode("aGk="), Ok(b"hi".to_vec()));
        assert_eq!(decode("aGk\n="), Ok(b"hi".to_vec()));
        assert_eq!(decode("aGl="), Ok(b"hi".to_vec()));
        assert_eq!(decode(""), Ok(vec![]));
        assert_eq!(decode("a"), Err(0));
        assert_eq!(decode("abcde"), Err(4));
        assert_eq!(decode("!!"), Err(0));
        assert_eq!(decode("ab!c"), Err(2));
        assert_eq!(decode("a==="), Err(1));
        assert_eq!(decode("ab="), Err(3));
        assert_eq!(decode("ab=c"), Err(2));
        assert_eq!(decode("abc=d"), Err(4));
        // The URL alphabet.
        assert_eq!(decode("v-8="), Ok(vec![0xbf, 0xef]));
        assert_eq!(decode("v+8="), Err(1));
        assert_eq!(decode("/AUh8g=="), Err(0));
    }
}
