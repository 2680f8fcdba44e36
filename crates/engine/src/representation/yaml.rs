//! `application/yaml` responses, written as kube-apiserver writes them, and request
//! bodies read back ([`from_yaml`]).
//!
//! kube converts its JSON to YAML through go-yaml v2, so that is the style kept here:
//! keys in go-yaml's order (non-letters first, digit runs compared as numbers), sequences
//! inside mappings not indented, strings plain when they read back as the same string,
//! double-quoted when they would read back as something else (`"83"`, `"yes"`,
//! timestamps), single-quoted when only YAML syntax gets in the way (`'a: b'`), and
//! literal blocks for multi-line text, and a value's line folded at a space once it is past
//! 80 columns, as go-yaml's emitter folds it.

use super::gofmt::go_format_g;
use serde_json::Value;
use std::cmp::Ordering;

/// go-yaml's error for a flow collection (`[`, `{`) left open where a node is expected
/// (after `[`, `{`, `,` or `:`): the parser meets the end of the stream instead, on the
/// line go-yaml gives it (a last line without a newline counts as one more).
pub(crate) fn node_content_error(body: &[u8], parser_error: &str) -> Option<String> {
    if !parser_error.contains("unclosed bracket") {
        return None;
    }
    let text = std::str::from_utf8(body).ok()?;
    let last = text.trim_end().chars().last()?;
    if !matches!(last, '[' | '{' | ',' | ':') {
        return None;
    }
    let newlines = text.matches('\n').count();
    let line = newlines + usize::from(!text.ends_with('\n'));
    Some(format!("yaml: line {line}: did not find expected node content"))
}

/// The YAML document for `value`.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(m) if !m.is_empty() => write_mapping(value, 0, &mut out),
        Value::Array(a) if !a.is_empty() => write_sequence(value, 0, &mut out),
        other => {
            out.push_str(&scalar(other, 2, 0));
            out.push('\n');
        }
    }
    out
}

/// The bytes of go-yaml's longest simple key (`key: value`); a longer one is `? key`.
const MAX_SIMPLE_KEY: usize = 128;

/// go-yaml's `best_width`: past this column a value's next space becomes a line break.
const BEST_WIDTH: usize = 80;

/// The column the next character written to `out` lands on.
fn column(out: &str) -> usize {
    out.rsplit('\n').next().map_or(0, |line| line.chars().count())
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

/// go-yaml's `keyList.Less` on string keys.
fn key_order(a: &str, b: &str) -> Ordering {
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl { Ordering::Less } else { Ordering::Greater };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.saturating_mul(10).saturating_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.saturating_mul(10).saturating_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

fn is_block(v: &Value) -> bool {
    matches!(v, Value::Object(m) if !m.is_empty()) || matches!(v, Value::Array(a) if !a.is_empty())
}

fn write_mapping(value: &Value, level: usize, out: &mut String) {
    let Value::Object(map) = value else { return };
    let mut keys: Vec<&String> = map.keys().collect();
    // Go's sort: go-yaml's key order is not total, and Rust's sorts panic on such orders.
    super::go_sort::sort(&mut keys, |a, b| key_order(a, b) == Ordering::Less);
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            indent(out, level);
        }
        let value = &map[key.as_str()];
        if key.len() > MAX_SIMPLE_KEY && !key.contains('\n') {
            // go-yaml writes a longer key as a complex one, which folds like a value, and
            // starts a block value on the line of its `:`.
            out.push_str("? ");
            out.push_str(&string_scalar(key, level + 2, Some(column(out))));
            out.push('\n');
            indent(out, level);
            out.push(':');
            if !write_block_inline(value, level + 2, out) {
                write_value_after(value, level, true, out);
            }
            continue;
        }
        out.push_str(&string_scalar(key, level, None));
        out.push(':');
        write_value_after(value, level, true, out);
    }
}

fn write_sequence(value: &Value, level: usize, out: &mut String) {
    let Value::Array(items) = value else { return };
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            indent(out, level);
        }
        out.push('-');
        if !write_block_inline(item, level + 2, out) {
            out.push(' ');
            out.push_str(&scalar(item, level + 2, column(out)));
            out.push('\n');
        }
    }
}

/// A non-empty mapping or sequence started on the current line (after `- ` or a complex
/// key's `: `), its other entries at `level`; false for anything else, left unwritten.
fn write_block_inline(v: &Value, level: usize, out: &mut String) -> bool {
    match v {
        Value::Object(m) if !m.is_empty() => {
            out.push(' ');
            write_mapping(v, level, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push(' ');
            write_sequence(v, level, out);
        }
        _ => return false,
    }
    true
}

/// Writes a mapping value after `key:`.
fn write_value_after(v: &Value, level: usize, _in_map: bool, out: &mut String) {
    if !is_block(v) {
        out.push(' ');
        out.push_str(&scalar(v, level + 2, column(out)));
        out.push('\n');
        return;
    }
    out.push('\n');
    match v {
        // go-yaml does not indent a sequence under a mapping key.
        Value::Array(_) => {
            indent(out, level);
            write_sequence(v, level, out);
        }
        _ => {
            indent(out, level + 2);
            write_mapping(v, level + 2, out);
        }
    }
}

/// A value written from column `col`, its folded lines indented to `level`.
fn scalar(v: &Value, level: usize, col: usize) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => {
                let f = n.as_f64().unwrap_or(0.0);
                if f.is_nan() {
                    ".nan".into()
                } else if f.is_infinite() {
                    if f > 0.0 { ".inf".into() } else { "-.inf".into() }
                } else {
                    go_format_g(f)
                }
            }
        },
        Value::String(s) => string_scalar(s, level, Some(col)),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// Whether go-yaml's resolver reads `s` as something other than a string.
fn resolves_to_non_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True",
        "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", ".inf", ".Inf", ".INF", "+.inf",
        "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN", "<<",
    ];
    if SPECIAL.contains(&s) {
        return true;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return false;
    }
    let plain = s.replace('_', "");
    let unsigned = plain.trim_start_matches(['-', '+']);
    let is_int = !unsigned.is_empty()
        && (unsigned.bytes().all(|b| b.is_ascii_digit())
            || unsigned.strip_prefix("0x").is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
            || unsigned.strip_prefix("0b").is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b == b'0' || b == b'1')));
    let is_float = plain.parse::<f64>().is_ok() && plain.bytes().any(|b| b.is_ascii_digit());
    is_int || is_float || is_base60_float(s) || is_timestamp(s)
}

/// go-yaml's `isBase60Float`, which its encoder quotes for YAML 1.1 parsers:
/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$` (`1:20`, `190:20:30.15`, not an
/// address such as `127.0.0.1:8080`).
fn is_base60_float(s: &str) -> bool {
    let unsigned = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (whole, fraction) = match unsigned.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (unsigned, None),
    };
    let mut parts = whole.split(':');
    let head = parts.next().unwrap_or_default();
    let head_ok =
        head.starts_with(|c: char| c.is_ascii_digit()) && head.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let sexagesimal = |p: &str| match p.as_bytes() {
        [d] => d.is_ascii_digit(),
        [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
        _ => false,
    };
    let (mut groups, mut groups_ok) = (0, true);
    for p in parts {
        groups += 1;
        groups_ok &= sexagesimal(p);
    }
    head_ok && groups > 0 && groups_ok && fraction.is_none_or(|f| f.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
}

/// YAML 1.1 timestamps as go-yaml resolves them (`2001-12-14`, `2001-12-14T21:59:43Z`...).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 8 || !b[0..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let date_end = s.find(['T', 't', ' ']).unwrap_or(s.len());
    let date: Vec<&str> = s[..date_end].split('-').collect();
    if date.len() != 3 || !date.iter().all(|p| !p.is_empty() && p.len() <= 4 && p.bytes().all(|c| c.is_ascii_digit())) {
        return false;
    }
    date_end == s.len() || s[date_end + 1..].contains(':')
}

/// go-yaml's plain-scalar analysis: whether `s` can be written without quotes.
fn plain_allowed(s: &str) -> bool {
    let b = s.as_bytes();
    if s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    if b.first().is_some_and(|c| b" \t".contains(c)) || b.last().is_some_and(|c| b" \t".contains(c)) {
        return false;
    }
    let first = b[0];
    let followed_by_space = |i: usize| b.get(i + 1).is_none_or(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
    if b"#,[]{}&*!|>'\"%@`".contains(&first) {
        return false;
    }
    if matches!(first, b'?' | b':' | b'-') && followed_by_space(0) {
        return false;
    }
    for (i, c) in s.char_indices() {
        if c.is_control() || c == '\u{feff}' {
            return false;
        }
        if c == ':' && followed_by_space(i) {
            return false;
        }
        if c == '#' && i > 0 && matches!(b[i - 1], b' ' | b'\t') {
            return false;
        }
    }
    true
}

/// A scalar's text written from a column, folded as go-yaml's emitter folds: a space
/// past [`BEST_WIDTH`] after a non-space may become a line break indented to the scalar's
/// level. `fold` is the first column and that indent; `None` (a simple key) never folds.
struct Folded {
    out: String,
    col: usize,
    indent: Option<usize>,
    spaces: bool,
}

impl Folded {
    fn new(fold: Option<(usize, usize)>) -> Self {
        Folded { out: String::new(), col: fold.map_or(0, |(col, _)| col), indent: fold.map(|(_, i)| i), spaces: false }
    }

    fn text(&mut self, text: &str) {
        self.out.push_str(text);
        self.col += text.chars().count();
        self.spaces = false;
    }

    /// A space, or a break where `breakable` allows one; a break before another space
    /// is followed by `escape` (the double-quoted style's `\`).
    fn space(&mut self, breakable: bool, escape: Option<char>) {
        match self.indent {
            Some(indent) if breakable && !self.spaces && self.col > BEST_WIDTH => {
                self.out.push('\n');
                self.out.extend(std::iter::repeat_n(' ', indent));
                self.col = indent;
                if let Some(e) = escape {
                    self.out.push(e);
                    self.col += 1;
                }
            }
            _ => {
                self.out.push(' ');
                self.col += 1;
            }
        }
        self.spaces = true;
    }
}

/// A double-quoted scalar: go-yaml's escapes, folded inside the text (a space after the
/// break escaped).
fn double_quoted(s: &str, fold: Option<(usize, usize)>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut f = Folded::new(fold);
    f.text("\"");
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let inside = i > 0 && i + 1 < chars.len();
            f.space(inside, chars.get(i + 1).filter(|n| **n == ' ').map(|_| '\\'));
            continue;
        }
        match c {
            '"' => f.text("\\\""),
            '\\' => f.text("\\\\"),
            '\0' => f.text("\\0"),
            '\x07' => f.text("\\a"),
            '\x08' => f.text("\\b"),
            '\t' => f.text("\\t"),
            '\n' => f.text("\\n"),
            '\x0b' => f.text("\\v"),
            '\x0c' => f.text("\\f"),
            '\r' => f.text("\\r"),
            '\x1b' => f.text("\\e"),
            '\u{85}' => f.text("\\N"),
            '\u{a0}' => f.text("\\_"),
            '\u{2028}' => f.text("\\L"),
            '\u{2029}' => f.text("\\P"),
            c if c.is_control() || c == '\u{feff}' => {
                let n = c as u32;
                f.text(&if n <= 0xff { format!("\\x{n:02X}") } else { format!("\\u{n:04X}") });
            }
            c => f.text(c.encode_utf8(&mut [0; 4])),
        }
    }
    f.text("\"");
    f.out
}

/// A single-quoted scalar, folded inside the text where the break is followed by no space
/// (it has no escape to keep one).
fn single_quoted(s: &str, fold: Option<(usize, usize)>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut f = Folded::new(fold);
    f.text("'");
    for (i, &c) in chars.iter().enumerate() {
        match c {
            ' ' => f.space(i > 0 && i + 1 < chars.len() && chars[i + 1] != ' ', None),
            '\'' => f.text("''"),
            c => f.text(c.encode_utf8(&mut [0; 4])),
        }
    }
    f.text("'");
    f.out
}

/// A plain scalar, folded at a lone space.
fn plain(s: &str, fold: Option<(usize, usize)>) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut f = Folded::new(fold);
    for (i, &c) in chars.iter().enumerate() {
        match c {
            ' ' => f.space(chars.get(i + 1) != Some(&' '), None),
            c => f.text(c.encode_utf8(&mut [0; 4])),
        }
    }
    f.out
}

/// A literal block (`|`, `|-`, `|+`) for multi-line text at mapping `level`.
fn literal(s: &str, level: usize) -> String {
    let chomp = if !s.ends_with('\n') {
        "-"
    } else if s == "\n" || s.ends_with("\n\n") {
        "+"
    } else {
        ""
    };
    let indicator = if s.starts_with(' ') || s.starts_with('\n') { "2" } else { "" };
    let mut out = format!("|{indicator}{chomp}");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(' ', level.max(2)));
            out.push_str(line);
        }
    }
    out
}

/// A string at mapping `level`; a value (not a key) written from column `col` may fold.
fn string_scalar(s: &str, level: usize, col: Option<usize>) -> String {
    let key = col.is_none();
    let fold = col.map(|col| (col, level));
    if resolves_to_non_string(s) {
        return double_quoted(s, fold);
    }
    let multiline = s.contains('\n');
    // go-yaml allows no literal block after a space that ends a line or the text.
    if multiline && !key && !s.chars().any(|c| c.is_control() && c != '\n') && !s.ends_with(' ') && !s.contains(" \n") {
        return literal(s, level);
    }
    if !multiline && plain_allowed(s) {
        return plain(s, fold);
    }
    if !s.chars().any(|c| c.is_control() || c == '\u{feff}') {
        return single_quoted(s, fold);
    }
    double_quoted(s, fold)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_quoted_as_go_yaml_quotes_them() {
        let v = json!({"a": "yes", "b": "", "c": "2026-11-22T02:36:58Z", "d": "1.5", "e": "a: b", "f": "f:app",
            "g": "- x", "h": "83", "i": "plain text", "j": "@x", "k": "it's", "l": "tab\there", "m": "0x1f",
            "n": "app=demo", "o": "1:2"});
        assert_eq!(
            to_yaml(&v),
            "a: \"yes\"\nb: \"\"\nc: \"2026-11-22T02:36:58Z\"\nd: \"1.5\"\ne: 'a: b'\nf: f:app\ng: '- x'\nh: \"83\"\ni: plain text\nj: '@x'\nk: it's\nl: \"tab\\there\"\nm: \"0x1f\"\n\"n\": app=demo\no: \"1:2\"\n"
        );
    }

    #[test]
    fn only_go_yaml_s_base_60_floats_are_quoted_for_their_colons() {
        for quoted in ["1:2", "190:20:30.15", "-1:59", "1_0:5:00.", "+3:0"] {
            assert!(is_base60_float(quoted), "{quoted}");
        }
        for plain in ["127.0.0.1:18484", "1:60", "1:", ":1", "1:234", "a:1", "1:2:x", "1.5:2"] {
            assert!(!is_base60_float(plain), "{plain}");
        }
        assert_eq!(to_yaml(&json!({"a": "127.0.0.1:18484"})), "a: 127.0.0.1:18484\n");
    }

    #[test]
    fn sequences_sit_under_their_key_and_keys_sort_naturally() {
        let v = json!({"items": [{"b": 1, "a": [1, 2]}, "x"], "empty": {}, "none": [], "k10": 1, "k9": 2, ".": {}, "z": null, "f": 1.5});
        assert_eq!(
            to_yaml(&v),
            ".: {}\nempty: {}\nf: 1.5\nitems:\n- a:\n  - 1\n  - 2\n  b: 1\n- x\nk9: 2\nk10: 1\nnone: []\nz: null\n"
        );
    }

    /// kube-apiserver 1.32's YAML of these values (go-yaml v2 folds past column 80, and
    /// writes a key longer than 128 bytes as a complex key).
    #[test]
    fn long_values_fold_as_go_yaml_folds_them() {
        let w = |n: usize| vec!["word"; n].join(" ");
        let spec = json!({"spec": {"k": w(20), "items": [format!("a: {}", w(20))],
            "m": {"k": format!("\t{}  two", w(19))}, w(30): 1, "s": "a \nb", "t": "\n"}});
        assert_eq!(
            to_yaml(&spec),
            "spec:\n  items:\n  - 'a: word word word word word word word word word word word word word word word\n    word word word word word'\n  k: word word word word word word word word word word word word word word word word\n    word word word word\n  m:\n    k: \"\\tword word word word word word word word word word word word word word word\n      word word word word  two\"\n  s: \"a \\nb\"\n  t: |2+\n\n  ? word word word word word word word word word word word word word word word word\n    word word word word word word word word word word word word word word\n  : 1\n"
        );
    }

    /// These keys are no total order under go-yaml's `Less`: Rust's sort panicked on them
    /// and the answer was lost. kube-apiserver 1.32 wrote them in an order that changed from
    /// one GET to the next (Go iterates a map in random order before sorting its keys).
    #[test]
    fn keys_that_are_no_total_order_are_all_written() {
        let mut keys: Vec<String> = ["key74", "key46", "key15", "key73", "key6", "key85"].map(String::from).to_vec();
        for (k, n) in [("key12", 4), ("key3", 3), ("key2", 2), ("key27", 4), ("key70", 4), ("key87", 3), ("key55", 2)] {
            keys.push(k.repeat(n));
        }
        for (k, n) in [("key9", 4), ("key80", 4), ("key73", 2), ("key60", 2), ("key68", 2), ("key93", 4), ("key26", 4)]
        {
            keys.push(k.repeat(n));
        }
        keys.push(vec!["kw"; 50].join(" "));
        let map: serde_json::Map<String, Value> = keys.iter().map(|k| (k.clone(), Value::from(1))).collect();
        let text = to_yaml(&Value::Object(map.clone()));
        assert_eq!(text.lines().count(), keys.len() + 2, "{text}");
        for k in keys.iter().filter(|k| k.len() <= MAX_SIMPLE_KEY) {
            assert!(text.contains(&format!("{k}: 1\n")), "{k} in {text}");
        }
        assert_eq!(to_yaml(&Value::Object(map)), text);
    }

    /// kube-apiserver 1.32's YAML: a block value of a complex key starts on its `:` line.
    #[test]
    fn complex_keys_take_their_block_values_inline() {
        let (k1, k2) = ("k".repeat(130), "k".repeat(131));
        let v = json!({"spec": {k1.clone(): {"a": 1, "b": {"c": 2}}, k2.clone(): [1, [2, 3], {"d": 4}]}});
        assert_eq!(
            to_yaml(&v),
            format!(
                "spec:\n  ? {k1}\n  : a: 1\n    b:\n      c: 2\n  ? {k2}\n  : - 1\n    - - 2\n      - 3\n    - d: 4\n"
            )
        );
    }

    #[test]
    fn multi_line_text_is_a_literal_block() {
        assert_eq!(to_yaml(&json!({"s": "a\nb\n"})), "s: |\n  a\n  b\n");
        assert_eq!(to_yaml(&json!({"m": {"s": "a\n\nb"}})), "m:\n  s: |-\n    a\n\n    b\n");
    }
}
