//! The string formats kube-apiserver validates in custom resources (kube-openapi's
//! `strfmt` registry): `date`, `date-time`, `duration`, `byte`, `uuid`, `uri`, `email`,
//! `hostname`, IPs, `cidr`, `mac`, ISBNs, `creditcard`, `ssn`, colors, `bsonobjectid`
//! and `password`. `quantity` is no format to kube 1.32 (its CEL library reads quantities,
//! its schema validator does not), so a `format: quantity` string is never refused.
//!
//! Each check mirrors the Go function kube registers for the format (Go's `time.Parse`
//! layouts, `net.ParseIP`, govalidator's regexes, `resource.ParseQuantity`), including
//! their leniencies: an empty `date-time` is valid, `duration` accepts Scala-style
//! `"5 minutes"`, `ssn` needs the 11-character dashed form.

use regex::Regex;
use std::net::IpAddr;
use std::sync::LazyLock;

fn rx(pattern: &str) -> Regex {
    // The patterns are constants checked by the unit tests.
    Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("trivial regex"))
}

static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    rx(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$",
    )
});
static UUID: LazyLock<Regex> =
    LazyLock::new(|| rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID3: LazyLock<Regex> =
    LazyLock::new(|| rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"));
static UUID4: LazyLock<Regex> =
    LazyLock::new(|| rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"));
static UUID5: LazyLock<Regex> =
    LazyLock::new(|| rx(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"));
static BASE64: LazyLock<Regex> =
    LazyLock::new(|| rx(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"));
static HEXCOLOR: LazyLock<Regex> = LazyLock::new(|| rx(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGBCOLOR: LazyLock<Regex> = LazyLock::new(|| {
    let n = r"(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])";
    rx(&format!(r"^rgb\(\s*{n}\s*,\s*{n}\s*,\s*{n}\s*\)$"))
});
static SSN: LazyLock<Regex> = LazyLock::new(|| rx(r"^\d{3}[- ]?\d{2}[- ]?\d{4}$"));
static CREDITCARD: LazyLock<Regex> = LazyLock::new(|| {
    rx(
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$",
    )
});
static DURATION_PART: LazyLock<Regex> = LazyLock::new(|| rx(r"((\d+)\s*([A-Za-zµ]+))"));

/// Whether `value` is valid for a (supported, non-empty) `format`.
pub fn is_valid(format: &str, value: &str) -> bool {
    match format.replace('-', "").as_str() {
        "bsonobjectid" => value.len() == 24 && value.bytes().all(|b| b.is_ascii_hexdigit()),
        // govalidator's `IsRequestURI`: Go's `url.ParseRequestURI` takes it.
        "uri" => super::go_url::parse_request_uri(value).is_ok(),
        "email" => is_email(value),
        "hostname" => is_hostname(value),
        "ipv4" => is_sloppy_ipv4(value) || (value.parse::<IpAddr>().is_ok() && value.contains('.')),
        "ipv6" => value.parse::<IpAddr>().is_ok() && value.contains(':'),
        "cidr" => is_cidr(value),
        "mac" => is_mac(value),
        "uuid" => UUID.is_match(value),
        "uuid3" => UUID3.is_match(value),
        "uuid4" => UUID4.is_match(value),
        "uuid5" => UUID5.is_match(value),
        "isbn" => is_isbn10(value) || is_isbn13(value),
        "isbn10" => is_isbn10(value),
        "isbn13" => is_isbn13(value),
        "creditcard" => is_credit_card(value),
        "ssn" => value.len() == 11 && SSN.is_match(value),
        "hexcolor" => HEXCOLOR.is_match(value),
        "rgbcolor" => RGBCOLOR.is_match(value),
        "byte" => BASE64.is_match(value),
        "date" => parse_date(value).is_some(),
        // kube 1.32 wants a zone (the oracle refuses `2020-01-01T00:00:00` and `""`).
        "datetime" => read_date_time(value).is_some_and(|(_, zoned)| zoned),
        "duration" => parse_duration(value).is_some(),
        _ => true,
    }
}

pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        _ => 28,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// Go's `time.Parse("2006-01-02", s)`: `(year, month, day)`.
pub fn parse_date(s: &str) -> Option<(i64, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year = i64::from(digits(&s[0..4], 4)?);
    let month = digits(&s[5..7], 2)?;
    let day = digits(&s[8..10], 2)?;
    ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month)).then_some((year, month, day))
}

/// Whether an IPv4 address is one `netutils.ParseIPSloppy` reads: four dotted decimal
/// parts up to 255, leading zeros allowed (`01.2.3.4`, which Rust's parser refuses).
fn is_sloppy_ipv4(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) && p.parse::<u32>().is_ok_and(|n| n <= 255))
}

/// A `date-time` as kube's strfmt accepts it, normalized to RFC 3339 (a value without a
/// zone, which kube reads as UTC, gets `Z`).
pub fn parse_date_time(s: &str) -> Option<String> {
    read_date_time(s).map(|(text, _)| text)
}

/// [`parse_date_time`], and whether the value wrote its zone.
fn read_date_time(s: &str) -> Option<(String, bool)> {
    // The fixed-width part is ASCII, which also makes every slice below safe.
    if s.len() < 19 || !s.as_bytes()[..19].is_ascii() {
        return None;
    }
    let (date, rest) = s.split_at(10);
    parse_date(date)?;
    let b = rest.as_bytes();
    if !matches!(b[0], b'T' | b't') || b[3] != b':' || b[6] != b':' {
        return None;
    }
    let hour = digits(&rest[1..3], 2)?;
    let minute = digits(&rest[4..6], 2)?;
    let second = digits(&rest[7..9], 2)?;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut tail = &rest[9..];
    let mut fraction = "";
    if let Some(after) = tail.strip_prefix(['.', ',']) {
        let n = after.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        fraction = &after[..n];
        tail = &after[n..];
    }
    let zoned = !tail.is_empty();
    let zone = match tail {
        "" | "Z" | "z" => "Z".to_string(),
        offset => {
            if !offset.is_ascii() {
                return None;
            }
            let ob = offset.as_bytes();
            if ob.len() != 6 || !(ob[0] == b'+' || ob[0] == b'-') || ob[3] != b':' {
                return None;
            }
            let (h, m) = (digits(&offset[1..3], 2)?, digits(&offset[4..6], 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            offset.to_string()
        }
    };
    let fraction = if fraction.is_empty() { String::new() } else { format!(".{fraction}") };
    Some((format!("{date}T{:02}:{:02}:{:02}{fraction}{zone}", hour, minute, second), zoned))
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub(super) fn parse_go_duration(s: &str) -> Option<i128> {
    go_duration(s).ok()
}

/// Go's `time.ParseDuration`, in nanoseconds, or its error's words
/// (`time: invalid duration "x"`, `time: missing unit in duration "5"`, ...).
pub fn go_duration(s: &str) -> Result<i128, String> {
    let quoted = crate::field::go_quote;
    let invalid = || format!("time: invalid duration {}", quoted(s));
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let (int_part, after) = rest.split_at(int_len);
        let (frac_part, after) = match after.strip_prefix('.') {
            Some(a) => {
                let n = a.bytes().take_while(u8::is_ascii_digit).count();
                (&a[..n], &a[n..])
            }
            None => ("", after),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(invalid());
        }
        let unit_len = after.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let scale: i128 = match unit {
            "" => return Err(format!("time: missing unit in duration {}", quoted(s))),
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return Err(format!("time: unknown unit {} in duration {}", quoted(unit), quoted(s))),
        };
        let whole: i128 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| invalid())? };
        let mut nanos = whole.checked_mul(scale).ok_or_else(invalid)?;
        if !frac_part.is_empty() {
            let frac: f64 = format!("0.{frac_part}").parse().map_err(|_| invalid())?;
            nanos += (frac * scale as f64) as i128;
        }
        total = total.checked_add(nanos).ok_or_else(invalid)?;
        rest = after;
    }
    if total > i128::from(i64::MAX) {
        return Err(invalid());
    }
    Ok(if negative { -total } else { total })
}

/// kube-openapi's `ParseDuration`: Go's syntax, or else any `<n> <unit>` parts in Scala
/// style (`5 minutes`, `1 day`), in nanoseconds.
pub fn parse_duration(s: &str) -> Option<i128> {
    if let Some(d) = parse_go_duration(s) {
        return Some(d);
    }
    const UNITS: [(&[&str], i128); 8] = [
        (&["ns", "nano"], 1),
        (&["us", "µs", "micro"], 1_000),
        (&["ms", "milli"], 1_000_000),
        (&["s", "sec"], 1_000_000_000),
        (&["m", "min"], 60_000_000_000),
        (&["h", "hr", "hour"], 3_600_000_000_000),
        (&["d", "day"], 86_400_000_000_000),
        (&["w", "wk", "week"], 604_800_000_000_000),
    ];
    let mut total: i128 = 0;
    let mut ok = false;
    for caps in DURATION_PART.captures_iter(s) {
        let factor: i128 = caps.get(2)?.as_str().parse().ok()?;
        let unit = caps.get(3)?.as_str().trim().to_lowercase();
        for (variants, multiplier) in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || unit.eq_ignore_ascii_case(variant) {
                    ok = true;
                    total += factor * multiplier;
                }
            }
        }
    }
    ok.then_some(total)
}

/// Go's `net/mail.ParseAddress`, for the common forms `a@b.c` and `Name <a@b.c>`.
fn is_email(s: &str) -> bool {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.strip_suffix('>')) {
        (Some(open), Some(inner)) => &inner[open + 1..],
        (None, None) => s,
        _ => return false,
    };
    let Some((local, domain)) = addr.rsplit_once('@') else { return false };
    let atext = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii();
    let dot_atom = |s: &str| !s.is_empty() && s.split('.').all(|part| !part.is_empty() && part.chars().all(atext));
    let local_ok = if local.len() >= 2 && local.starts_with('"') && local.ends_with('"') {
        !local[1..local.len() - 1].contains('"')
    } else {
        dot_atom(local)
    };
    let domain_ok = if domain.starts_with('[') && domain.ends_with(']') { domain.len() > 2 } else { dot_atom(domain) };
    local_ok && domain_ok
}

fn is_hostname(s: &str) -> bool {
    HOSTNAME.is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, prefix)) = s.split_once('/') else { return false };
    let Ok(addr) = ip.parse::<IpAddr>() else { return false };
    let bits = if addr.is_ipv4() { 32 } else { 128 };
    !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()) && prefix.parse::<u32>().is_ok_and(|p| p <= bits)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx`, `xx-xx` or `xxxx.xxxx`.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let octets = |groups: usize, per: usize| [6, 8, 20].contains(&(groups * per));
    if s.contains('.') {
        let parts: Vec<&str> = s.split('.').collect();
        octets(parts.len(), 2) && parts.iter().all(|p| hex(p, 4))
    } else {
        let sep = if s.contains(':') { ':' } else { '-' };
        let parts: Vec<&str> = s.split(sep).collect();
        octets(parts.len(), 1) && parts.iter().all(|p| hex(p, 2))
    }
}

fn isbn_digits(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace() && *c != '-').collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    let shape = b.len() == 10 && b[..9].iter().all(u8::is_ascii_digit) && (b[9].is_ascii_digit() || b[9] == b'X');
    if !shape {
        return false;
    }
    let mut sum: u32 = b[..9].iter().enumerate().map(|(i, c)| (i as u32 + 1) * u32::from(c - b'0')).sum();
    sum += 10 * if b[9] == b'X' { 10 } else { u32::from(b[9] - b'0') };
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = b[..12].iter().enumerate().map(|(i, c)| if i % 2 == 0 { 1 } else { 3 } * u32::from(c - b'0')).sum();
    u32::from(b[12] - b'0') == (10 - sum % 10) % 10
}

fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    if !CREDITCARD.is_match(&digits) {
        return false;
    }
    let mut sum = 0;
    for (i, c) in digits.bytes().rev().enumerate() {
        let mut n = u32::from(c - b'0');
        if i % 2 == 1 {
            n *= 2;
            if n >= 10 {
                n = n % 10 + 1;
            }
        }
        sum += n;
    }
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(format: &str, good: &[&str], bad: &[&str]) {
        for v in good {
            assert!(is_valid(format, v), "{format} should accept {v:?}");
        }
        for v in bad {
            assert!(!is_valid(format, v), "{format} should refuse {v:?}");
        }
    }

    #[test]
    fn dates_and_times_follow_go_layouts() {
        valid(
            "date",
            &["2024-02-29", "2023-12-31"],
            &["2023-02-29", "2024-13-01", "24-01-01", "2024-1-01", "", "é024-01-01"],
        );
        valid(
            "date-time",
            // The oracle's answers (2026-11-28): a zone is needed, `t` and `z` may be lower case.
            &[
                "2024-01-02T03:04:05Z",
                "2024-01-02T03:04:05.123456789+02:00",
                "2020-01-01t00:00:00z",
                "2020-01-01T00:00:00,5Z",
            ],
            &[
                "",
                "2024-01-02T03:04:05",
                "2024-01-02",
                "2024-01-02 03:04:05Z",
                "2024-01-02T24:00:00Z",
                "2024-01-02T03:04:05+0200",
                "x",
                "2024-01-0éT03:04:05Z",
                "2024-01-02T03:04:05+é:00",
            ],
        );
        assert_eq!(parse_date_time("2024-01-02T03:04:05").as_deref(), Some("2024-01-02T03:04:05Z"));
    }

    #[test]
    fn durations_accept_go_and_scala_syntax() {
        valid(
            "duration",
            &["1h30m", "0", "1.5s", "-2ms", "5 minutes", "3 days", "1µs"],
            &["", "abc", "5 foos", "1.h.5"],
        );
        assert_eq!(parse_duration("1h30m"), Some(5_400_000_000_000));
        assert_eq!(parse_duration("2 hours"), Some(7_200_000_000_000));
    }

    #[test]
    fn identifiers_and_addresses() {
        valid("uuid", &["0bd3a1f6-5dc0-4e0b-9c4e-2b5c0b4e5d6f", "0BD3A1F65DC04E0B9C4E2B5C0B4E5D6F"], &["x", ""]);
        valid("uuid4", &["0bd3a1f6-5dc0-4e0b-9c4e-2b5c0b4e5d6f"], &["0bd3a1f6-5dc0-3e0b-9c4e-2b5c0b4e5d6f"]);
        valid("byte", &["aGVsbG8=", "YWJj"], &["", "abc", "a!b="]);
        valid(
            "ipv4",
            &["10.0.0.1", "::ffff:1.2.3.4", "01.2.3.4", "001.002.003.004"],
            &["10.0.0", "::1", "256.1.1.1", "1.2.3.+4", "1..2.3"],
        );
        valid("ipv6", &["::1", "fe80::1"], &["10.0.0.1", "x"]);
        valid("cidr", &["10.0.0.0/8", "fd00::/64"], &["10.0.0.0", "10.0.0.0/33"]);
        valid("mac", &["00:1a:2b:3c:4d:5e", "00-1A-2B-3C-4D-5E", "001a.2b3c.4d5e"], &["00:1a:2b", "zz:1a:2b:3c:4d:5e"]);
        valid("hostname", &["example.com", "a", "my-host.local"], &["-a", "a..b", "a b"]);
        valid("email", &["a@b.c", "Jo <jo@example.com>"], &["a", "a@", "@b"]);
        valid(
            "uri",
            &["http://example.com/x?y", "/just/a/path", "mailto:a@b", "*"],
            &["", "relative/path", "http://a b"],
        );
        valid("bsonobjectid", &["507f1f77bcf86cd799439011"], &["507f1f77"]);
    }

    #[test]
    fn numbers_codes_and_colors() {
        valid("isbn10", &["0321751043", "0-321-75104-3"], &["0321751044"]);
        valid("isbn13", &["978-0321751041"], &["978-0321751042"]);
        valid("creditcard", &["4111 1111 1111 1111"], &["4111 1111 1111 1112"]);
        valid("ssn", &["123-45-6789", "123 45 6789"], &["123456789", "12-345-6789"]);
        valid("hexcolor", &["#fff", "A0B1C2"], &["#ffff"]);
        valid("rgbcolor", &["rgb(255, 0, 10)"], &["rgb(256,0,0)"]);
        // No format to kube 1.32: the oracle stores `format: quantity` strings of any shape.
        valid("quantity", &["10Gi", "x", ""], &[]);
        valid("password", &["anything"], &[]);
    }
}
