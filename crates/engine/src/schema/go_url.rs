//! Go's `net/url` parser (`url.Parse` and `url.ParseRequestURI`) and the accessors kube's
//! CEL URL library reads (`EscapedPath`, `Hostname`, `Port`, `Query`), with Go's error
//! words. The WHATWG rules of Rust's `url` crate differ from Go's in what they take (`*`,
//! a port past 65535, a bad escape, an opaque `mailto:`), so kube's `url()`/`isURL()` and
//! the schema's `uri` format are judged here.
//!
//! Decoded components are bytes, as Go's strings are: an escape may decode to a byte that
//! is no UTF-8 on its own.

use crate::field::go_quote;

/// A URL as Go's `url.URL` holds it (the fields kube reads).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoUrl {
    pub scheme: String,
    pub opaque: String,
    pub host: Vec<u8>,
    pub path: Vec<u8>,
    /// Set when the escaping written differs from Go's default escaping of `path`.
    pub raw_path: String,
    pub raw_query: String,
}

/// `url.ParseRequestURI`: an absolute URI or an absolute path (or `*`), the fragment kept
/// in the path or query as written. The error is Go's `*url.Error` text.
pub fn parse_request_uri(raw: &str) -> Result<GoUrl, String> {
    parse(raw, true).map_err(|e| url_error(raw, &e))
}

/// `url.Parse`: any URL reference, the fragment cut off and checked.
pub fn parse_reference(raw: &str) -> Result<GoUrl, String> {
    let (url, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let parsed = parse(url, false).map_err(|e| url_error(url, &e))?;
    unescape(fragment.as_bytes(), Mode::Fragment).map_err(|e| url_error(raw, &e))?;
    Ok(parsed)
}

fn url_error(url: &str, err: &str) -> String {
    format!("parse {}: {err}", go_quote(url))
}

/// Go's `encoding` modes of `shouldEscape` and `unescape`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

fn parse(raw: &str, via_request: bool) -> Result<GoUrl, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        url.path = b"*".to_vec();
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // A rootless path is opaque (RFC 3986).
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        // `cache_object:foo/bar` is no relative path (golang.org/issue/16822).
        if rest.split('/').next().unwrap_or_default().contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//") {
        let authority = &rest[2..];
        let (authority, path) = authority.find('/').map_or((authority, ""), |i| authority.split_at(i));
        url.host = parse_authority(authority)?;
        rest = path;
    }
    url.path = unescape(rest.as_bytes(), Mode::Path)?;
    if escape(&url.path) != rest {
        url.raw_path = rest.to_string();
    }
    Ok(url)
}

/// Go's `getScheme`: the leading scheme and what follows its colon, or no scheme.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the host, after checking the user information.
fn parse_authority(authority: &str) -> Result<Vec<u8>, String> {
    let Some(at) = authority.rfind('@') else { return parse_host(authority) };
    let host = parse_host(&authority[at + 1..])?;
    let userinfo = &authority[..at];
    let valid = userinfo.chars().all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    unescape(user.as_bytes(), Mode::UserPassword)?;
    unescape(password.as_bytes(), Mode::UserPassword)?;
    Ok(host)
}

/// Go's `parseHost`: a bracketed IP literal (with an RFC 6874 zone) or a name, each with an
/// optional `:port` of digits.
fn parse_host(host: &str) -> Result<Vec<u8>, String> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else { return Err("missing ']' in host".into()) };
        let colon_port = &host[close + 1..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
        if let Some(zone) = host[..close].find("%25") {
            let mut out = unescape(&host.as_bytes()[..zone], Mode::Host)?;
            out.extend(unescape(&host.as_bytes()[zone..close], Mode::Zone)?);
            out.extend(unescape(&host.as_bytes()[close..], Mode::Host)?);
            return Ok(out);
        }
    } else if let Some(colon) = host.rfind(':') {
        let colon_port = &host[colon..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    unescape(host.as_bytes(), Mode::Host)
}

/// Empty, or a colon and digits (any number of them: Go does not bound the port).
fn valid_optional_port(port: &str) -> bool {
    port.is_empty() || port.strip_prefix(':').is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => true,
            Mode::Fragment => false,
            Mode::Host | Mode::Zone => true,
        },
        b'!' | b'(' | b')' | b'*' if mode == Mode::Fragment => false,
        _ => true,
    }
}

/// Go's `strconv.Quote` of bytes that may not be UTF-8.
fn quote_bytes(b: &[u8]) -> String {
    let mut text = String::new();
    for chunk in b.utf8_chunks() {
        text.push_str(chunk.valid());
        for byte in chunk.invalid() {
            text.push_str(&format!("\u{0}{byte:02x}"));
        }
    }
    // The invalid bytes were marked with NUL so that quoting leaves them for `\x..`.
    go_quote(&text).replace("\\x00", "\\x")
}

fn hex(c: u8) -> Option<u8> {
    char::from(c).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// Go's `unescape`: `%XX` decoded, refusing a bad escape (and, in a host, an escaped ASCII
/// byte other than `%25` or a byte a host may not hold).
fn unescape(s: &[u8], mode: Mode) -> Result<Vec<u8>, String> {
    let escape_error = |e: &[u8]| format!("invalid URL escape {}", quote_bytes(e));
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'%' => {
                let (Some(hi), Some(lo)) = (s.get(i + 1).copied().and_then(hex), s.get(i + 2).copied().and_then(hex))
                else {
                    return Err(escape_error(&s[i..s.len().min(i + 3)]));
                };
                let escaped = &s[i..i + 3];
                let v = hi << 4 | lo;
                if mode == Mode::Host && hi < 8 && escaped != b"%25" {
                    return Err(escape_error(escaped));
                }
                if mode == Mode::Zone && escaped != b"%25" && v != b' ' && should_escape(v, Mode::Host) {
                    return Err(escape_error(escaped));
                }
                out.push(v);
                i += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!("invalid character {} in host name", quote_bytes(&[c])));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

/// Go's `escape` of a path.
fn escape(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len());
    for &c in path {
        if should_escape(c, Mode::Path) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Go's `validEncoded` for a path.
fn valid_encoded(s: &str) -> bool {
    s.bytes().all(|c| b"!$&'()*+,;=:@[]%".contains(&c) || !should_escape(c, Mode::Path))
}

/// Go's `splitHostPort`: the host without a valid `:port` and without IPv6 brackets.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, port) = match host_port.rfind(':') {
        Some(colon) if valid_optional_port(&host_port[colon..]) => (&host_port[..colon], &host_port[colon + 1..]),
        _ => (host_port, ""),
    };
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        host = inner;
    }
    (host, port)
}

impl GoUrl {
    /// `u.Host`.
    pub fn host(&self) -> String {
        String::from_utf8_lossy(&self.host).into_owned()
    }

    /// `u.Hostname()`.
    pub fn hostname(&self) -> String {
        split_host_port(&self.host()).0.to_string()
    }

    /// `u.Port()`.
    pub fn port(&self) -> String {
        split_host_port(&self.host()).1.to_string()
    }

    /// `u.EscapedPath()`: the path as written when that is a valid escaping of it, else
    /// Go's escaping.
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path)
            && unescape(self.raw_path.as_bytes(), Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == b"*" {
            return "*".into();
        }
        escape(&self.path)
    }

    /// `u.Query()`: `url.ParseQuery` of the raw query, the pairs it cannot read left out,
    /// values in the order written.
    pub fn query(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) =
                (unescape(key.as_bytes(), Mode::QueryComponent), unescape(value.as_bytes(), Mode::QueryComponent))
            else {
                continue;
            };
            let (key, value) =
                (String::from_utf8_lossy(&key).into_owned(), String::from_utf8_lossy(&value).into_owned());
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some((_, values)) => values.push(value),
                None => out.push((key, vec![value])),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// kube-apiserver 1.32's `isURL()` of each string (its `url.ParseRequestURI`).
    #[test]
    fn request_uris_are_judged_as_go_judges_them() {
        let accepted = [
            "*",
            "https://example.com:99999/",
            "http://[::1]:80/p",
            "/just/path",
            "mailto:me@example.com",
            "//example.com/p",
            "https://example.com?%zz",
            "http://[fe80::1%25en0]:8080/",
            "http://host:/",
            "http://h:99999999999999999999/",
            "a:b",
            "http://x.com/\u{e9}",
            "http://h/p?q=a b",
            "https://example.com/#frag",
        ];
        for s in accepted {
            assert!(parse_request_uri(s).is_ok(), "{s}");
        }
        let refused = [
            ("https://example.com/%zz", r#"parse "https://example.com/%zz": invalid URL escape "%zz""#),
            ("https://a b.com/", r#"parse "https://a b.com/": invalid character " " in host name"#),
            ("example.com", r#"parse "example.com": invalid URI for request"#),
            ("http://host:abc/", r#"parse "http://host:abc/": invalid port ":abc" after host"#),
            ("http://ex%41mple.com/", r#"parse "http://ex%41mple.com/": invalid URL escape "%41""#),
            ("", r#"parse "": empty url"#),
            (" http://x.com", r#"parse " http://x.com": invalid URI for request"#),
            ("http://[::1/", r#"parse "http://[::1/": missing ']' in host"#),
            ("https://example.com/a#%zz", r#"parse "https://example.com/a#%zz": invalid URL escape "%zz""#),
            ("*x", r#"parse "*x": invalid URI for request"#),
        ];
        for (s, want) in refused {
            assert_eq!(parse_request_uri(s).err().as_deref(), Some(want), "{s}");
        }
    }

    /// The accessors kube's URL library answers with, as the oracle answered them.
    #[test]
    fn accessors_read_as_go_reads_them() {
        let cases = [
            ("*", "", "", "", "", "*"),
            ("https://example.com:99999/", "https", "example.com:99999", "example.com", "99999", "/"),
            ("http://[::1]:80/p", "http", "[::1]:80", "::1", "80", "/p"),
            ("/just/path", "", "", "", "", "/just/path"),
            ("HTTPS://EX.com/P?q=1#f", "https", "EX.com", "EX.com", "", "/P"),
            ("mailto:me@example.com", "mailto", "", "", "", ""),
            ("//example.com/p", "", "example.com", "example.com", "", "/p"),
            ("https://example.com/%20", "https", "example.com", "example.com", "", "/%20"),
            ("http://[fe80::1%25en0]:8080/", "http", "[fe80::1%en0]:8080", "fe80::1%en0", "8080", "/"),
            ("http://host:/", "http", "host:", "host", "", "/"),
            ("http://[::1]:/", "http", "[::1]:", "::1", "", "/"),
            ("http://x.com/\u{e9}", "http", "x.com", "x.com", "", "/%C3%A9"),
            ("http://h/a%2Fb", "http", "h", "h", "", "/a%2Fb"),
            ("http:opaque?q", "http", "", "", "", ""),
        ];
        for (s, scheme, host, hostname, port, path) in cases {
            let u = parse_reference(s).expect(s);
            assert_eq!(
                (
                    u.scheme.as_str(),
                    u.host().as_str(),
                    u.hostname().as_str(),
                    u.port().as_str(),
                    u.escaped_path().as_str()
                ),
                (scheme, host, hostname, port, path),
                "{s}"
            );
        }
        let q = parse_reference("https://u:p@h:8080/path?x=1&x=2&y&=1&a=&&b;c=1&d=%zz&e+f=g+h").expect("url");
        let want = [("x", vec!["1", "2"]), ("y", vec![""]), ("", vec!["1"]), ("a", vec![""]), ("e f", vec!["g h"])];
        let want: Vec<(String, Vec<String>)> =
            want.iter().map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect())).collect();
        assert_eq!(q.query(), want);
    }
}
