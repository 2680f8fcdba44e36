//! Request JSON rewritten into the text serde reads as Go's `encoding/json` reads the
//! original, where the two differ on what is valid JSON to both:
//! - a string's lone UTF-16 surrogate escape (`"\ud800"`) and its bytes that are no UTF-8
//!   are U+FFFD to Go, an error to serde;
//! - the number `-0` is the integer 0 to kube's unstructured decoder (it reads a number as
//!   an int64 when it can), and a float (-0.0) to serde.
//!
//! The rewrite keeps the text's length except for bytes that are no UTF-8 (each becomes
//! the three bytes of U+FFFD), so a body with none keeps every offset.

use std::borrow::Cow;

/// The four hex digits at `data[i..]` as a number.
fn hex4(data: &[u8], i: usize) -> Option<u32> {
    let digits = data.get(i..i + 4)?;
    std::str::from_utf8(digits).ok().and_then(|s| u32::from_str_radix(s, 16).ok())
}

/// The escape `\uXXXX` at `data[i..]` (at the backslash), when it is one.
fn unicode_escape(data: &[u8], i: usize) -> Option<u32> {
    (data.get(i) == Some(&b'\\') && data.get(i + 1) == Some(&b'u')).then(|| hex4(data, i + 2)).flatten()
}

/// `data` as Go's decoder reads it (see the module docs); borrowed when nothing changes.
pub fn as_go_reads(data: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    // What comes before a value: `-0` is a number token only there.
    let mut value_may_start = true;
    while i < data.len() {
        let b = data[i];
        if in_string {
            match b {
                b'"' => in_string = false,
                b'\\' => {
                    if let Some(unit) = unicode_escape(data, i) {
                        let high = (0xd800..0xdc00).contains(&unit);
                        let low = (0xdc00..0xe000).contains(&unit);
                        let paired = high && unicode_escape(data, i + 6).is_some_and(|u| (0xdc00..0xe000).contains(&u));
                        if paired {
                            if let Some(o) = out.as_mut() {
                                o.extend_from_slice(&data[i..i + 12]);
                            }
                            i += 12;
                            continue;
                        }
                        if high || low {
                            let o = out.get_or_insert_with(|| data[..i].to_vec());
                            o.extend_from_slice(b"\\ufffd");
                            i += 6;
                            continue;
                        }
                    }
                    // Any other escape: copy it whole (the escaped byte is no delimiter).
                    let end = (i + 2).min(data.len());
                    if let Some(o) = out.as_mut() {
                        o.extend_from_slice(&data[i..end]);
                    }
                    i = end;
                    continue;
                }
                b if b >= 0x80 => {
                    let width = match b {
                        0xc0..=0xdf => 2,
                        0xe0..=0xef => 3,
                        0xf0..=0xf7 => 4,
                        _ => 1,
                    };
                    let end = (i + width).min(data.len());
                    if std::str::from_utf8(&data[i..end]).is_ok() {
                        if let Some(o) = out.as_mut() {
                            o.extend_from_slice(&data[i..end]);
                        }
                        i = end;
                    } else {
                        let o = out.get_or_insert_with(|| data[..i].to_vec());
                        o.extend_from_slice("\u{fffd}".as_bytes());
                        i += 1;
                    }
                    continue;
                }
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b'-' if value_may_start
                    && data.get(i + 1) == Some(&b'0')
                    && !data.get(i + 2).is_some_and(|n| n.is_ascii_digit() || matches!(n, b'.' | b'e' | b'E')) =>
                {
                    let o = out.get_or_insert_with(|| data[..i].to_vec());
                    o.extend_from_slice(b" 0");
                    i += 2;
                    value_may_start = false;
                    continue;
                }
                _ => {}
            }
            if !b.is_ascii_whitespace() {
                value_may_start = matches!(b, b'[' | b',' | b':');
            }
        }
        if let Some(o) = out.as_mut() {
            o.push(b);
        }
        i += 1;
    }
    match out {
        Some(o) => Cow::Owned(o),
        None => Cow::Borrowed(data),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> String {
        String::from_utf8(as_go_reads(text.as_bytes()).into_owned()).expect("utf-8")
    }

    #[test]
    fn lone_surrogates_are_replacement_characters() {
        assert_eq!(read(r#"{"a":"\ud800x"}"#), r#"{"a":"\ufffdx"}"#);
        assert_eq!(read(r#"{"a":"x\udc00"}"#), r#"{"a":"x\ufffd"}"#);
        assert_eq!(read(r#"{"a":"\ud83d\ude00"}"#), r#"{"a":"\ud83d\ude00"}"#);
        assert_eq!(read(r#"{"a":"\ud800\u0041"}"#), r#"{"a":"\ufffd\u0041"}"#);
        assert_eq!(read(r#"{"a":"\udc00\ud800\udc00"}"#), r#"{"a":"\ufffd\ud800\udc00"}"#);
        assert_eq!(read(r#"{"a":"\\ud800"}"#), r#"{"a":"\\ud800"}"#);
        assert!(matches!(as_go_reads(br#"{"a":"\u00e9 ok"}"#), Cow::Borrowed(_)));
    }

    #[test]
    fn bytes_that_are_no_utf8_are_replacement_characters() {
        let out = as_go_reads(b"{\"a\":\"x\xffy\xed\xa0\x80\"}");
        assert_eq!(
            String::from_utf8(out.into_owned()).expect("utf-8"),
            "{\"a\":\"x\u{fffd}y\u{fffd}\u{fffd}\u{fffd}\"}"
        );
        assert!(matches!(as_go_reads("{\"a\":\"日本\"}".as_bytes()), Cow::Borrowed(_)));
    }

    #[test]
    fn minus_zero_is_the_integer_zero() {
        assert_eq!(
            read(r#"{"a":-0,"b":[-0, -0.0, -01, -0e1],"c":"-0"}"#),
            r#"{"a": 0,"b":[ 0, -0.0, -01, -0e1],"c":"-0"}"#
        );
        assert_eq!(read("-0"), " 0");
        assert_eq!(read(" -0 "), "  0 ");
        let v: serde_json::Value = serde_json::from_slice(&as_go_reads(br#"{"a": -0}"#)).expect("json");
        assert!(v["a"].is_u64());
    }
}
