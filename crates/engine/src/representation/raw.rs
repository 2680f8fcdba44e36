//! Zero-copy reading and rewriting of serialized JSON objects.
//!
//! The store keeps every object as the bytes kube would write (compact, a built-in kind's
//! members in its Go struct's order and a custom resource's sorted, without
//! `metadata.resourceVersion`). Lists of thousands of objects are answered by
//! assembling those bytes rather than by parsing each object into a `Value` and writing it
//! again: this module finds members of an object without decoding them, splices the
//! resourceVersion into `metadata` and the served `apiVersion` over the stored one (the
//! versions of a CRD share one storage), and re-indents compact JSON as Go's
//! `MarshalIndent` does for `pretty` responses. Everything here takes untrusted-shaped bytes and answers
//! `None` rather than panicking when they are not what it expects.

use std::borrow::Cow;
use std::ops::Range;

/// Skips JSON whitespace from `pos`.
fn skip_ws(b: &[u8], mut pos: usize) -> usize {
    while pos < b.len() && matches!(b[pos], b' ' | b'\n' | b'\r' | b'\t') {
        pos += 1;
    }
    pos
}

/// The end (exclusive) of the string starting at `pos` (which must be `"`).
fn skip_string(b: &[u8], pos: usize) -> Option<usize> {
    let mut i = pos + 1;
    loop {
        // Jump to the next quote or backslash: most strings have no escapes.
        i += b.get(i..)?.iter().position(|c| *c == b'"' || *c == b'\\')?;
        if b[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// The end (exclusive) of the value starting at `pos` (after whitespace).
pub fn skip_value(b: &[u8], pos: usize) -> Option<usize> {
    let pos = skip_ws(b, pos);
    match *b.get(pos)? {
        b'"' => skip_string(b, pos),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = pos;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let mut i = pos;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                i += 1;
            }
            (i > pos).then_some(i)
        }
    }
}

/// One member of an object: its key as written (without quotes, escapes kept) and the
/// bytes of its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
}

/// The members of the object `obj`, in order; `None` when `obj` is not an object.
pub fn members(obj: &[u8]) -> Option<Vec<Member<'_>>> {
    let mut out = Vec::with_capacity(8);
    let mut pos = skip_ws(obj, 0);
    if obj.get(pos) != Some(&b'{') {
        return None;
    }
    pos = skip_ws(obj, pos + 1);
    if obj.get(pos) == Some(&b'}') {
        return Some(out);
    }
    loop {
        if obj.get(pos) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(obj, pos)?;
        let key = &obj[pos + 1..key_end - 1];
        pos = skip_ws(obj, key_end);
        if obj.get(pos) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(obj, pos + 1);
        let value_end = skip_value(obj, value_start)?;
        out.push(Member { key, value: &obj[value_start..value_end] });
        pos = skip_ws(obj, value_end);
        match obj.get(pos)? {
            b',' => pos = skip_ws(obj, pos + 1),
            b'}' => return Some(out),
            _ => return None,
        }
    }
}

/// The value of member `key` of the object `obj`, without decoding anything else.
pub fn get<'a>(obj: &'a [u8], key: &str) -> Option<&'a [u8]> {
    let key = key.as_bytes();
    let mut pos = skip_ws(obj, 0);
    if obj.get(pos) != Some(&b'{') {
        return None;
    }
    pos = skip_ws(obj, pos + 1);
    if obj.get(pos) == Some(&b'}') {
        return None;
    }
    loop {
        if obj.get(pos) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(obj, pos)?;
        let found = &obj[pos + 1..key_end - 1] == key;
        pos = skip_ws(obj, key_end);
        if obj.get(pos) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(obj, pos + 1);
        let value_end = skip_value(obj, value_start)?;
        if found {
            return Some(&obj[value_start..value_end]);
        }
        pos = skip_ws(obj, value_end);
        match obj.get(pos)? {
            b',' => pos = skip_ws(obj, pos + 1),
            _ => return None,
        }
    }
}

/// The value at a path of object keys.
pub fn get_path<'a>(obj: &'a [u8], path: &[impl AsRef<str>]) -> Option<&'a [u8]> {
    path.iter().try_fold(obj, |cur, key| get(cur, key.as_ref()))
}

/// A JSON string value decoded; `None` when `raw` is not a string.
pub fn string(raw: &[u8]) -> Option<String> {
    if raw.first() != Some(&b'"') {
        return None;
    }
    // A lone `"` has no inside.
    let inner = raw.get(1..raw.len() - 1)?;
    if !inner.contains(&b'\\') {
        return std::str::from_utf8(inner).ok().map(String::from);
    }
    serde_json::from_slice(raw).ok()
}

/// Appends `"resourceVersion":"<rv>"` as a member, with a comma when `first` is false.
fn push_rv_member(out: &mut Vec<u8>, rv: u64, first: bool) {
    if !first {
        out.push(b',');
    }
    out.extend_from_slice(b"\"resourceVersion\":\"");
    out.extend_from_slice(rv.to_string().as_bytes());
    out.push(b'"');
}

/// Writes the metadata object `meta` with `resourceVersion` set to `rv`, replacing any
/// present, where kube's encoder puts it: in sorted key position for a custom resource's
/// (unstructured, sorted) metadata, in `ObjectMeta`'s field order for a built-in kind's
/// (whose members, written in that order, are not sorted: every stored object has a
/// `uid` and a `creationTimestamp`).
pub fn write_metadata_with_rv(meta: &[u8], rv: u64, out: &mut Vec<u8>) -> Option<()> {
    let members = members(meta)?;
    let sorted = members.windows(2).all(|w| w[0].key <= w[1].key);
    let rank = |key: &[u8]| crate::meta::OBJECT_META_FIELDS.iter().position(|f| f.as_bytes() == key);
    let rv_rank = rank(b"resourceVersion");
    let after_rv = |key: &[u8]| if sorted { key > b"resourceVersion".as_slice() } else { rank(key) > rv_rank };
    out.push(b'{');
    let mut written = false;
    let mut first = true;
    for m in &members {
        if m.key == b"resourceVersion" {
            continue;
        }
        if !written && after_rv(m.key) {
            push_rv_member(out, rv, first);
            written = true;
            first = false;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(m.key);
        out.extend_from_slice(b"\":");
        out.extend_from_slice(m.value);
    }
    if !written {
        push_rv_member(out, rv, first);
    }
    out.push(b'}');
    Some(())
}

#[cfg(test)]
/// Writes the stored object `obj` with `metadata.resourceVersion` set to `rv`: what
/// `meta::from_stored` gives, without decoding the object. Falls back to copying the
/// object unchanged when it has no metadata object (never the case for stored objects).
pub fn write_with_rv(obj: &[u8], rv: u64, out: &mut Vec<u8>) {
    write_served(obj, None, Some(rv), out);
}

/// Whether the JSON string `raw` is `s`.
pub fn is_string(raw: &[u8], s: &str) -> bool {
    match raw.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")) {
        Some(inner) if !inner.contains(&b'\\') => inner == s.as_bytes(),
        _ => string(raw).as_deref() == Some(s),
    }
}

/// Appends `s` as a JSON string.
fn push_string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        out.extend_from_slice(serde_json::Value::from(s).to_string().as_bytes());
    }
}

/// Where `part`, a subslice of `obj`, lies in it.
fn span(obj: &[u8], part: &[u8]) -> Range<usize> {
    let start = part.as_ptr() as usize - obj.as_ptr() as usize;
    start..start + part.len()
}

/// One change [`write_served`] makes while copying an object.
enum Splice<'a> {
    /// The value of `apiVersion`, replaced.
    ApiVersion(&'a str),
    /// An `apiVersion` member put first, with a comma when other members follow.
    ApiVersionMember { api_version: &'a str, comma: bool },
    /// The `metadata` object, with its resourceVersion set.
    Metadata(u64),
}

/// How `obj` comes to say `apiVersion: api_version`: nothing to do (it does, or it is not
/// an object), its value replaced, or a member inserted first when it has none (kube
/// stores none such; sorted keys usually put `apiVersion` first too).
fn api_version_splice<'a>(obj: &[u8], api_version: &'a str) -> Option<(Range<usize>, Splice<'a>)> {
    match get(obj, "apiVersion") {
        Some(current) if is_string(current, api_version) => None,
        Some(current) => Some((span(obj, current), Splice::ApiVersion(api_version))),
        None => {
            let open = skip_ws(obj, 0);
            if obj.get(open) != Some(&b'{') {
                return None;
            }
            let comma = obj.get(skip_ws(obj, open + 1)) != Some(&b'}');
            Some((open + 1..open + 1, Splice::ApiVersionMember { api_version, comma }))
        }
    }
}

/// Writes the stored object `obj` as served: `apiVersion` set to `api_version` and
/// `metadata.resourceVersion` to `rv`, each when given, copying everything else as it is.
/// An object that already says `api_version` keeps its bytes; one without a metadata
/// object gets no resourceVersion; bytes that are no object are copied unchanged.
pub fn write_served(obj: &[u8], api_version: Option<&str>, rv: Option<u64>, out: &mut Vec<u8>) {
    let version = api_version.and_then(|v| api_version_splice(obj, v));
    let metadata = rv.and_then(|rv| {
        let meta = get(obj, "metadata").filter(|m| m.first() == Some(&b'{'))?;
        Some((span(obj, meta), Splice::Metadata(rv)))
    });
    let mut splices: Vec<(Range<usize>, Splice<'_>)> = version.into_iter().chain(metadata).collect();
    splices.sort_by_key(|(at, _)| at.start);
    let mut copied = 0;
    for (at, splice) in splices {
        // Two distinct members never overlap; the check only keeps odd input from panicking.
        let Some(before) = obj.get(copied..at.start) else { continue };
        out.extend_from_slice(before);
        match splice {
            Splice::ApiVersion(api_version) => push_string(out, api_version),
            Splice::ApiVersionMember { api_version, comma } => {
                out.extend_from_slice(b"\"apiVersion\":");
                push_string(out, api_version);
                if comma {
                    out.push(b',');
                }
            }
            Splice::Metadata(rv) => {
                let meta = &obj[at.clone()];
                let mark = out.len();
                if write_metadata_with_rv(meta, rv, out).is_none() {
                    out.truncate(mark);
                    out.extend_from_slice(meta);
                }
            }
        }
        copied = at.end;
    }
    out.extend_from_slice(obj.get(copied..).unwrap_or_default());
}

/// `obj` without its top-level `apiVersion` and `kind`, as the items of kube's typed
/// lists are written (their conversion from the internal list never sets them): borrowed
/// when it has neither (or is no object).
pub fn without_type_meta(obj: &[u8]) -> Cow<'_, [u8]> {
    let Some(members) = members(obj) else { return Cow::Borrowed(obj) };
    let is_type_meta = |m: &Member<'_>| m.key == b"apiVersion" || m.key == b"kind";
    if !members.iter().any(is_type_meta) {
        return Cow::Borrowed(obj);
    }
    let mut out = Vec::with_capacity(obj.len());
    out.push(b'{');
    for (i, m) in members.iter().filter(|m| !is_type_meta(m)).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(m.key);
        out.extend_from_slice(b"\":");
        out.extend_from_slice(m.value);
    }
    out.push(b'}');
    Cow::Owned(out)
}

/// `obj` with `apiVersion` set to `api_version`: borrowed when it already says so (or is
/// no object), so that reading an object at the version it is stored at copies nothing.
pub fn with_api_version<'a>(obj: &'a [u8], api_version: &str) -> Cow<'a, [u8]> {
    if api_version_splice(obj, api_version).is_none() {
        return Cow::Borrowed(obj);
    }
    let mut out = Vec::with_capacity(obj.len() + api_version.len());
    write_served(obj, Some(api_version), None, &mut out);
    Cow::Owned(out)
}

/// Re-indents compact (or any) JSON as Go's `json.MarshalIndent(v, "", "  ")`: two spaces
/// per level, `": "` after keys, empty objects and arrays kept as `{}` and `[]`.
pub fn pretty(json: &[u8], out: &mut Vec<u8>) {
    out.reserve(json.len() + json.len() / 2);
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        for _ in 0..depth {
            out.extend_from_slice(b"  ");
        }
    };
    while i < json.len() {
        let c = json[i];
        match c {
            b'"' => {
                let end = skip_string(json, i).unwrap_or(json.len());
                out.extend_from_slice(&json[i..end]);
                i = end;
                continue;
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                let next = skip_ws(json, i + 1);
                if json.get(next) == Some(&close) {
                    out.push(c);
                    out.push(close);
                    i = next + 1;
                    continue;
                }
                out.push(c);
                depth += 1;
                newline(out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(out, depth);
                out.push(c);
            }
            b',' => {
                out.push(b',');
                newline(out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => out.push(c),
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn members_and_get_skip_nested_values() {
        let doc = br#"{"a":{"x":[1,{"y":"}"}]},"b":"q\"uote","c":-1.5e3,"d":null}"#;
        let m = members(doc).expect("object");
        let keys: Vec<&[u8]> = m.iter().map(|m| m.key).collect();
        assert_eq!(keys, vec![&b"a"[..], b"b", b"c", b"d"]);
        assert_eq!(get(doc, "b"), Some(&br#""q\"uote""#[..]));
        assert_eq!(get(doc, "c"), Some(&b"-1.5e3"[..]));
        assert_eq!(get(doc, "d"), Some(&b"null"[..]));
        assert_eq!(get_path(doc, &["a", "x"]), Some(&br#"[1,{"y":"}"}]"#[..]));
        assert_eq!(get(doc, "zz"), None);
        assert_eq!(get(b"[1]", "a"), None);
        assert_eq!(members(b"{}").map(|m| m.len()), Some(0));
        assert_eq!(members(b"{\"a\":"), None);
        assert_eq!(string(br#""a\nb""#).as_deref(), Some("a\nb"));
    }

    #[test]
    fn typed_list_items_lose_their_type_meta() {
        let doc = br#"{"apiVersion":"v1","data":{"kind":"x"},"kind":"ConfigMap","metadata":{"name":"a"}}"#;
        assert_eq!(&*without_type_meta(doc), &br#"{"data":{"kind":"x"},"metadata":{"name":"a"}}"#[..]);
        assert!(matches!(without_type_meta(br#"{"metadata":{}}"#), Cow::Borrowed(_)));
        assert_eq!(&*without_type_meta(br#"{"kind":"K"}"#), &b"{}"[..]);
        assert_eq!(&*without_type_meta(b"[1]"), &b"[1]"[..]);
    }

    #[test]
    fn resource_version_lands_where_a_sorted_map_puts_it() {
        let obj = json!({"apiVersion": "v1", "kind": "K", "metadata": {"labels": {"a": "b"}, "name": "n", "uid": "u"}, "spec": {"x": 1}});
        let stored = serde_json::to_vec(&obj).expect("json");
        let mut out = Vec::new();
        write_with_rv(&stored, 42, &mut out);
        let mut expected = obj.clone();
        expected["metadata"]["resourceVersion"] = json!("42");
        assert_eq!(out, serde_json::to_vec(&expected).expect("json"));

        for meta in [json!({}), json!({"a": 1}), json!({"z": 1}), json!({"resourceVersion": "1", "z": 2})] {
            let mut out = Vec::new();
            write_metadata_with_rv(&serde_json::to_vec(&meta).expect("json"), 7, &mut out).expect("object");
            let mut expected = meta.clone();
            expected["resourceVersion"] = json!("7");
            assert_eq!(String::from_utf8_lossy(&out), expected.to_string());
        }
    }

    #[test]
    fn api_version_is_rewritten_in_place_with_or_without_the_resource_version() {
        let obj = json!({"apiVersion": "g.example.com/v1", "kind": "K",
            "metadata": {"name": "n"}, "spec": {"apiVersion": "nested/v1", "s": "\\\"apiVersion\\\""}});
        let stored = serde_json::to_vec(&obj).expect("json");
        let served = |api_version: Option<&str>, rv: Option<u64>| {
            let mut out = Vec::new();
            write_served(&stored, api_version, rv, &mut out);
            out
        };
        let mut expected = obj.clone();
        expected["apiVersion"] = json!("g.example.com/v1beta1");
        let expected_bytes = serde_json::to_vec(&expected).expect("json");
        assert_eq!(served(Some("g.example.com/v1beta1"), None), expected_bytes);
        assert_eq!(with_api_version(&stored, "g.example.com/v1beta1").as_ref(), expected_bytes);
        expected["metadata"]["resourceVersion"] = json!("12");
        assert_eq!(served(Some("g.example.com/v1beta1"), Some(12)), serde_json::to_vec(&expected).expect("json"));
        // Already at that version: the very same bytes, not a copy.
        assert_eq!(served(Some("g.example.com/v1"), None), stored);
        assert!(matches!(with_api_version(&stored, "g.example.com/v1"), Cow::Borrowed(_)));
        assert_eq!(served(None, None), stored);
        // A version that needs escaping is written as JSON.
        let odd: Value = serde_json::from_slice(&served(Some("a\"b"), None)).expect("json");
        assert_eq!(odd["apiVersion"], "a\"b");
    }

    #[test]
    fn api_version_rewrite_copes_with_odd_input() {
        let served = |obj: &[u8]| {
            let mut out = Vec::new();
            write_served(obj, Some("g/v2"), Some(3), &mut out);
            String::from_utf8_lossy(&out).into_owned()
        };
        assert_eq!(served(b"{}"), r#"{"apiVersion":"g/v2"}"#);
        assert_eq!(served(br#" {"kind":"K"}"#), r#" {"apiVersion":"g/v2","kind":"K"}"#);
        assert_eq!(
            served(br#"{"apiVersion":1,"metadata":{}}"#),
            r#"{"apiVersion":"g/v2","metadata":{"resourceVersion":"3"}}"#
        );
        assert_eq!(served(br#"{"apiVersion":"g\/v2"}"#), r#"{"apiVersion":"g\/v2"}"#, "escaped, yet the same");
        for odd in [
            &b""[..],
            b"[1]",
            b"null",
            b"\"",
            b"{",
            b"{\"apiVersion\"",
            b"{\"apiVersion\":\"x",
            b"{\"metadata\":{\"a\":}",
        ] {
            let _ = served(odd);
            let _ = with_api_version(odd, "g/v2");
        }
        assert_eq!(served(b"[1]"), "[1]");
        assert_eq!(string(b"\""), None);
    }

    #[test]
    fn pretty_matches_go_marshal_indent() {
        let v = json!({"a": [], "b": {}, "c": [1, {"d": "x,y:{"}], "e": "s"});
        let mut out = Vec::new();
        pretty(v.to_string().as_bytes(), &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"x,y:{\"\n    }\n  ],\n  \"e\": \"s\"\n}"
        );
        // serde_json's own pretty printer agrees.
        assert_eq!(out, serde_json::to_vec_pretty(&v).expect("json"));
    }
}
