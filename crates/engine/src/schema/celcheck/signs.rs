//! Two readings of unary signs where the `cel` crate's parser differs from cel-go's, mended
//! in the source it is given (byte offsets kept, so its positions still point into the
//! rule as written):
//!
//! - a run of `-` or `!` before an operand: cel-go applies the operator once for an odd
//!   run and not at all for an even one (`--x` is `x`); the crate applies it once to any
//!   run. An even run is blanked, an odd one kept to its last operator.
//! - a negative hexadecimal literal (`-0x1`): cel-go reads it; the crate's literal reader
//!   fails ("invalid int literal"). It is written in decimal, padded with spaces, when that
//!   fits in the same bytes.

/// `source` with the signs the crate misreads rewritten (unchanged when there are none).
pub fn mend(source: &str) -> std::borrow::Cow<'_, str> {
    let suspect = ["--", "!!", "-0x", "-0X"].iter().any(|s| source.contains(s)) || has_spaced_run(source);
    if !suspect {
        return source.into();
    }
    let mut out = source.as_bytes().to_vec();
    let b = source.as_bytes();
    let mut i = 0;
    // Whether the last token ends an operand (so a `-` after it is a binary minus).
    let mut after_operand = false;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' | b'"' => {
                let raw = i > 0 && matches!(b[i - 1], b'r' | b'R');
                i = skip_string(b, i, raw);
                after_operand = true;
            }
            b'-' | b'!' => {
                let mut ops = Vec::new();
                let mut j = i;
                while j < b.len() {
                    if b[j] == c && !(c == b'!' && b.get(j + 1) == Some(&b'=')) {
                        ops.push(j);
                        j += 1;
                    } else if b[j].is_ascii_whitespace() {
                        j += 1;
                    } else {
                        break;
                    }
                }
                if ops.is_empty() {
                    // `!=`: an operator.
                    i += 2;
                    after_operand = false;
                    continue;
                }
                let unary = if c == b'-' && after_operand { &ops[1..] } else { &ops[..] };
                let blanked = if unary.len() % 2 == 0 { unary.len() } else { unary.len() - 1 };
                for &at in &unary[..blanked] {
                    out[at] = b' ';
                }
                let last = *ops.last().unwrap_or(&i);
                let kept_minus = c == b'-' && (unary.len() % 2 == 1 || unary.len() < ops.len());
                if kept_minus && b.get(j) == Some(&b'0') && matches!(b.get(j + 1), Some(b'x' | b'X')) && j == last + 1 {
                    decimal_in_place(b, &mut out, j);
                }
                i = j;
                after_operand = false;
                continue;
            }
            c if c.is_ascii_digit() => {
                let hex = c == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X'));
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_') {
                    let exponent = !hex && matches!(b[i], b'e' | b'E');
                    i += 1;
                    if exponent && matches!(b.get(i), Some(b'+' | b'-')) {
                        i += 1;
                    }
                }
                after_operand = true;
                continue;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b')' || c == b']' || c == b'}' || c >= 0x80 => {
                after_operand = true;
            }
            c if c.is_ascii_whitespace() => {}
            _ => after_operand = false,
        }
        i += 1;
    }
    // Only ASCII bytes were replaced by ASCII bytes: still UTF-8.
    String::from_utf8(out).map_or_else(|_| source.into(), Into::into)
}

/// Whether `source` has a run of `-` or `!` separated by spaces (`- -x`).
fn has_spaced_run(source: &str) -> bool {
    let b = source.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        matches!(c, b'-' | b'!') && {
            let next = b[i + 1..].iter().find(|n| !n.is_ascii_whitespace());
            next == Some(&c) && b.get(i + 1).is_some_and(u8::is_ascii_whitespace)
        }
    })
}

/// The offset after the string literal opening at `start` (triple-quoted or not; escapes
/// skipped unless raw).
fn skip_string(b: &[u8], start: usize, raw: bool) -> usize {
    let quote = b[start];
    let triple = b.get(start + 1) == Some(&quote) && b.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < b.len() {
        if b[i] == b'\\' && !raw {
            i += 2;
            continue;
        }
        if b[i] == quote && (!triple || (b.get(i + 1) == Some(&quote) && b.get(i + 2) == Some(&quote))) {
            return i + if triple { 3 } else { 1 };
        }
        i += 1;
    }
    b.len()
}

/// Rewrites the `0x…` of a `-0x…` (from `start`) as its decimal and spaces, when the
/// hexadecimal digits read and the decimal fits.
fn decimal_in_place(b: &[u8], out: &mut [u8], start: usize) {
    let digits_end = start + 2 + b[start + 2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
    let next = b.get(digits_end).copied();
    if next.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_') {
        return;
    }
    let Ok(text) = std::str::from_utf8(&b[start + 2..digits_end]) else { return };
    let Ok(value) = u64::from_str_radix(text, 16) else { return };
    let decimal = value.to_string();
    if decimal.len() > digits_end - start {
        return;
    }
    out[start..digits_end].fill(b' ');
    out[start..start + decimal.len()].copy_from_slice(decimal.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_runs_vanish_and_odd_runs_keep_one() {
        for (source, mended) in [
            ("--x == 1", "  x == 1"),
            ("---x", "  -x"),
            ("!!true", "  true"),
            ("a - -x", "a - -x"),
            ("a--x", "a--x"),
            ("a---x", "a-  x"),
            ("a != !b", "a != !b"),
            ("'--' + \"!!\"", "'--' + \"!!\""),
            ("1e-5 - -1", "1e-5 - -1"),
            ("- -x", "   x"),
            ("-0x1 + 1", "-1   + 1"),
            ("a-0x10", "a-16  "),
            ("--0x1", "  0x1"),
            ("x", "x"),
        ] {
            assert_eq!(mend(source), mended, "{source}");
        }
    }
}
