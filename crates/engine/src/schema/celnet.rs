//! `ip()`, `cidr()`, `isIP()` and `isCIDR()` of strings as kube's library reads them: with
//! Go's `netip.ParseAddr` and `netip.ParsePrefix` (no leading zeros in an octet or a prefix
//! length, no zone in a prefix), then kube's refusal of zones and IPv4-mapped IPv6
//! addresses, failing in their words (`IP Address "1.2.3" parse error during conversion
//! from string: ParseAddr("1.2.3"): IPv4 address too short`). What Go takes goes on to
//! kube-cel's functions, which make the values.

use super::celstd::{Handed, kube};
use crate::field::go_quote;
use kube_cel::cel::extractors::This;
use kube_cel::cel::objects::Value;
use kube_cel::cel::{Context, ExecutionError, ResolveResult};
use std::sync::Arc;

/// Adds the functions to `ctx` (after kube-cel's, which they replace).
pub fn register(ctx: &mut Context) {
    ctx.add_function("ip", ip);
    ctx.add_function("cidr", cidr);
    ctx.add_function("isIP", |s: Arc<String>| kube_ip(&s).is_ok());
    ctx.add_function("isCIDR", |s: Arc<String>| kube_cidr(&s).is_ok());
    ctx.add_function("ip.isCanonical", is_canonical);
    // kube converts a string argument as `ip()` and `cidr()` do; `containsCIDR` fails in
    // `cidr()`'s words, `containsIP` (returning its receiver's overload error) with
    // `no such overload`.
    ctx.add_function("containsIP", |This(this): This<Value>, other: Value| {
        let other = match other {
            Value::String(s) if kube_ip(&s).is_err() => return Err(ExecutionError::NoSuchOverload),
            Value::String(_) => ip(This(other))?,
            other => other,
        };
        kube(Handed::ContainsIp, vec![this, other])
    });
    ctx.add_function("containsCIDR", |This(this): This<Value>, other: Value| {
        let other = if let Value::String(_) = other { cidr(This(other))? } else { other };
        kube(Handed::ContainsCidr, vec![this, other])
    });
}

/// `ip.isCanonical()`: kube parses its string as `ip()` does, failing in the same words.
fn is_canonical(This(this): This<Value>) -> ResolveResult {
    if let Value::String(s) = &this {
        kube_ip(s).map_err(|e| ExecutionError::function_error("ip.isCanonical", e))?;
    }
    kube(Handed::IsCanonical, vec![this])
}

fn ip(This(this): This<Value>) -> ResolveResult {
    if let Value::String(s) = &this {
        kube_ip(s).map_err(|e| ExecutionError::function_error("ip", e))?;
    }
    kube(Handed::Ip, vec![this])
}

fn cidr(This(this): This<Value>) -> ResolveResult {
    if let Value::String(s) = &this {
        kube_cidr(s).map_err(|e| {
            ExecutionError::function_error(
                "cidr",
                format!("network address parse error during conversion from string: {e}"),
            )
        })?;
    }
    kube(Handed::Cidr, vec![this])
}

/// kube's `parseIPAddr`.
fn kube_ip(s: &str) -> Result<(), String> {
    let addr = parse_addr(s)
        .map_err(|e| format!("IP Address {} parse error during conversion from string: {e}", go_quote(s)))?;
    if addr.zone {
        return Err(format!("IP address {} with zone value is not allowed", go_quote(s)));
    }
    if addr.is_4in6() {
        return Err(format!("IPv4-mapped IPv6 address {} is not allowed", go_quote(s)));
    }
    Ok(())
}

/// kube's `parseCIDR`.
fn kube_cidr(s: &str) -> Result<(), String> {
    let addr =
        parse_prefix(s).map_err(|e| format!("network address parse error during conversion from string: {e}"))?;
    if addr.is_4in6() {
        return Err(format!("IPv4-mapped IPv6 address {} is not allowed", go_quote(s)));
    }
    Ok(())
}

/// An address Go parsed: its 16 bytes (an IPv4 one in the last 4), and whether it was one.
struct Addr {
    bytes: [u8; 16],
    v4: bool,
    zone: bool,
}

impl Addr {
    fn is_4in6(&self) -> bool {
        !self.v4 && self.bytes[..10].iter().all(|b| *b == 0) && self.bytes[10..12] == [0xff, 0xff]
    }
}

/// Go's `parseAddrError`: the input, what is wrong, and where.
fn addr_error(input: &str, msg: &str, at: Option<&str>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!("ParseAddr({}): {msg} (at {})", go_quote(input), go_quote(at)),
        _ => format!("ParseAddr({}): {msg}", go_quote(input)),
    }
}

/// Go's `netip.ParseAddr`.
fn parse_addr(s: &str) -> Result<Addr, String> {
    for b in s.bytes() {
        match b {
            b'.' => {
                let mut fields = [0u8; 4];
                parse_ipv4_fields(s, s, &mut fields)?;
                let mut bytes = [0u8; 16];
                bytes[12..].copy_from_slice(&fields);
                return Ok(Addr { bytes, v4: true, zone: false });
            }
            b':' => return parse_ipv6(s),
            b'%' => return Err(addr_error(s, "missing IPv6 address", None)),
            _ => {}
        }
    }
    Err(addr_error(s, "unable to parse IP", None))
}

/// Go's `parseIPv4Fields` of `part` (a tail of `input`, which errors name).
fn parse_ipv4_fields(input: &str, part: &str, fields: &mut [u8; 4]) -> Result<(), String> {
    let b = part.as_bytes();
    let (mut val, mut pos, mut digits) = (0u32, 0usize, 0);
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && val == 0 {
                    return Err(addr_error(input, "IPv4 field has octet with leading zero", None));
                }
                val = val * 10 + u32::from(c - b'0');
                digits += 1;
                if val > 255 {
                    return Err(addr_error(input, "IPv4 field has value >255", None));
                }
            }
            b'.' => {
                if i == 0 || i == b.len() - 1 || b[i - 1] == b'.' {
                    return Err(addr_error(input, "IPv4 field must have at least one digit", Some(&part[i..])));
                }
                if pos == 3 {
                    return Err(addr_error(input, "IPv4 address too long", None));
                }
                fields[pos] = val as u8;
                pos += 1;
                val = 0;
                digits = 0;
            }
            _ => return Err(addr_error(input, "unexpected character", Some(&part[i..]))),
        }
    }
    if pos < 3 {
        return Err(addr_error(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(())
}

/// Go's `parseIPv6`.
fn parse_ipv6(input: &str) -> Result<Addr, String> {
    let (mut s, zone) = match input.split_once('%') {
        Some((_, "")) => return Err(addr_error(input, "zone must be a non-empty string", None)),
        Some((addr, _)) => (addr, true),
        None => (input, false),
    };
    let address_end = s.len();
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if let Some(rest) = s.strip_prefix("::") {
        ellipsis = Some(0);
        s = rest;
        if s.is_empty() {
            return Ok(Addr { bytes: ip, v4: false, zone });
        }
    }
    let mut i = 0;
    while i < 16 {
        let (mut off, mut acc) = (0, 0u32);
        for &c in s.as_bytes() {
            let Some(d) = char::from(c).to_digit(16) else { break };
            acc = (acc << 4) + d;
            if off > 3 {
                return Err(addr_error(input, "each group must have 4 or less digits", Some(s)));
            }
            if acc > 0xffff {
                return Err(addr_error(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_error(input, "each colon-separated field must have at least one digit", Some(s)));
        }
        if s.as_bytes().get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_error(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            let mut fields = [0u8; 4];
            parse_ipv4_fields(input, &input[address_end - s.len()..address_end], &mut fields)?;
            ip[i..i + 4].copy_from_slice(&fields);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(input, "unexpected character, want colon", Some(s)));
        } else if s.len() == 1 {
            return Err(addr_error(input, "colon must be followed by more characters", Some(s)));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(at) = ellipsis else { return Err(addr_error(input, "address string too short", None)) };
        let n = 16 - i;
        ip.copy_within(at..i, at + n);
        ip[at..at + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(input, "the :: must expand to at least one field of zeros", None));
    }
    Ok(Addr { bytes: ip, v4: false, zone })
}

/// Go's `netip.ParsePrefix`: the address it holds, or its error.
fn parse_prefix(s: &str) -> Result<Addr, String> {
    let error = |msg: &str| format!("netip.ParsePrefix({}): {msg}", go_quote(s));
    let Some(slash) = s.rfind('/') else { return Err(error("no '/'")) };
    let addr = parse_addr(&s[..slash]).map_err(|e| error(&e))?;
    if addr.zone {
        return Err(error("IPv6 zones cannot be present in a prefix"));
    }
    let bits = &s[slash + 1..];
    let bad_bits = || error(&format!("bad bits after slash: {}", go_quote(bits)));
    // Go refuses a sign and leading zeros here, where `strconv.Atoi` would take them.
    if bits.len() > 1 && !bits.starts_with(|c: char| ('1'..='9').contains(&c)) {
        return Err(bad_bits());
    }
    let bits: i64 = bits.parse().map_err(|_| bad_bits())?;
    let max = if addr.v4 { 32 } else { 128 };
    if !(0..=max).contains(&bits) {
        return Err(error("prefix length out of range"));
    }
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle's words (after kube's `IP Address "..." parse error ...: `).
    #[test]
    fn addresses_fail_with_gos_words() {
        for (s, oracle) in [
            ("bad", r#"ParseAddr("bad"): unable to parse IP"#),
            ("", r#"ParseAddr(""): unable to parse IP"#),
            ("1.2.3", r#"ParseAddr("1.2.3"): IPv4 address too short"#),
            ("1.2.3.256", r#"ParseAddr("1.2.3.256"): IPv4 field has value >255"#),
            ("1.2.3.04", r#"ParseAddr("1.2.3.04"): IPv4 field has octet with leading zero"#),
            ("1.2..3", r#"ParseAddr("1.2..3"): IPv4 field must have at least one digit (at ".3")"#),
            ("1.2.3.4.5", r#"ParseAddr("1.2.3.4.5"): IPv4 address too long"#),
            ("1.2.3.x", r#"ParseAddr("1.2.3.x"): unexpected character (at "x")"#),
            ("1::2::3", r#"ParseAddr("1::2::3"): multiple :: in address (at ":3")"#),
            (":::", r#"ParseAddr(":::"): each colon-separated field must have at least one digit (at ":")"#),
            ("1:2:3:4:5:6:7:8:9", r#"ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#),
            ("12345::", r#"ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#),
            ("fe80::g", r#"ParseAddr("fe80::g"): each colon-separated field must have at least one digit (at "g")"#),
            ("%eth0", r#"ParseAddr("%eth0"): missing IPv6 address"#),
            ("1.2.3.4/8", r#"ParseAddr("1.2.3.4/8"): unexpected character (at "/8")"#),
            (" 1.2.3.4", r#"ParseAddr(" 1.2.3.4"): unexpected character (at " 1.2.3.4")"#),
            ("::1.2.3", r#"ParseAddr("::1.2.3"): IPv4 address too short"#),
            ("1:2", r#"ParseAddr("1:2"): address string too short"#),
        ] {
            assert_eq!(parse_addr(s).err().as_deref(), Some(oracle), "{s:?}");
        }
        assert_eq!(kube_ip("::1%eth0"), Err(r#"IP address "::1%eth0" with zone value is not allowed"#.into()));
        assert_eq!(
            kube_ip("::ffff:1.2.3.4"),
            Err(r#"IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed"#.into())
        );
        for good in ["1.2.3.4", "::1", "::", "fe80::1", "1:2:3:4:5:6:7:8", "::1.2.3.4", "1::"] {
            assert_eq!(kube_ip(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn prefixes_fail_with_gos_words() {
        for (s, oracle) in [
            ("bad", r#"netip.ParsePrefix("bad"): no '/'"#),
            ("1.2.3.4/", r#"netip.ParsePrefix("1.2.3.4/"): bad bits after slash: """#),
            ("1.2.3.4/33", r#"netip.ParsePrefix("1.2.3.4/33"): prefix length out of range"#),
            ("1.2.3.4/08", r#"netip.ParsePrefix("1.2.3.4/08"): bad bits after slash: "08""#),
            ("1.2.3.4/-1", r#"netip.ParsePrefix("1.2.3.4/-1"): bad bits after slash: "-1""#),
            ("x/8", r#"netip.ParsePrefix("x/8"): ParseAddr("x"): unable to parse IP"#),
            ("::1/129", r#"netip.ParsePrefix("::1/129"): prefix length out of range"#),
            ("::1%eth0/64", r#"netip.ParsePrefix("::1%eth0/64"): IPv6 zones cannot be present in a prefix"#),
        ] {
            assert_eq!(parse_prefix(s).err().as_deref(), Some(oracle), "{s:?}");
        }
        assert_eq!(
            kube_cidr("::ffff:1.2.3.4/96"),
            Err(r#"IPv4-mapped IPv6 address "::ffff:1.2.3.4/96" is not allowed"#.into())
        );
        for good in ["1.2.3.4/8", "0.0.0.0/0", "::/0", "fe80::/10", "1.2.3.4/0"] {
            assert_eq!(kube_cidr(good), Ok(()), "{good}");
        }
    }
}
