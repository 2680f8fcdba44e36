//! Go's `time.Parse` for the three layouts kube reads times with: `2006-01-02` and
//! `2006-01-02T15:04:05` (what kube's CEL conversion reads `date` and `date-time` strings
//! with: the last layout strfmt tries, whose error it reports), and RFC 3339, through which
//! every `metav1.Time` goes (JSON, query parameters, a printer column of type date).
//!
//! Go's parser is looser than RFC 3339 where a user can reach it (a one-digit hour, a comma
//! before a fraction, a zone offset of `+24:00`) and stricter elsewhere (no lower-case `t`
//! or `z`, no space for the `T`, no leap second), so these are read element by element as Go
//! reads them, with Go's error words (a rule that reaches an unreadable value fails with
//! them). One pass over the bytes: a Table of ten thousand rows parses ten thousand times.

use super::formats::days_in_month;
use jiff::Timestamp;

/// `2006-01-02`, strfmt's full date.
pub const DATE: &str = "2006-01-02";
/// `2006-01-02T15:04:05`, the last of strfmt's date-time layouts.
pub const DATE_TIME: &str = "2006-01-02T15:04:05";
/// `time.RFC3339`, `metav1.Time`'s layout.
pub const RFC3339: &str = "2006-01-02T15:04:05Z07:00";
/// `metav1.RFC3339Micro`, `metav1.MicroTime`'s layout: exactly six digits of fraction.
pub const RFC3339_MICRO: &str = "2006-01-02T15:04:05.000000Z07:00";

/// One element of the layouts.
#[derive(Clone, Copy)]
enum Elem {
    Literal(&'static str),
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
    /// `.000000`: a period or comma and six digits.
    Micro,
    /// `Z07:00`: `Z` or a signed `hh:mm`.
    Zone,
}

/// The elements of a layout: a prefix of `2006-01-02T15:04:05`, then the RFC 3339 tails.
fn elements(layout: &str) -> impl Iterator<Item = Elem> {
    use Elem::*;
    const DATE_TIME_ELEMS: [Elem; 11] =
        [Year, Literal("-"), Month, Literal("-"), Day, Literal("T"), Hour, Literal(":"), Minute, Literal(":"), Second];
    let (head, tail): (&[Elem], &[Elem]) = match layout {
        DATE => (&DATE_TIME_ELEMS[..5], &[]),
        RFC3339 => (&DATE_TIME_ELEMS, &[Zone]),
        RFC3339_MICRO => (&DATE_TIME_ELEMS, &[Micro, Zone]),
        _ => (&DATE_TIME_ELEMS, &[]),
    };
    head.iter().chain(tail).copied()
}

fn layout_text(e: Elem) -> &'static str {
    match e {
        Elem::Literal(l) => l,
        Elem::Year => "2006",
        Elem::Month => "01",
        Elem::Day => "02",
        Elem::Hour => "15",
        Elem::Minute => "04",
        Elem::Second => "05",
        Elem::Micro => ".000000",
        Elem::Zone => "Z07:00",
    }
}

fn digit(s: &[u8], i: usize) -> Option<u32> {
    s.get(i).filter(|b| b.is_ascii_digit()).map(|b| u32::from(b - b'0'))
}

/// Go's `getnum`: one or two digits (`fixed`: exactly two).
fn number(s: &[u8], fixed: bool) -> Option<(u32, usize)> {
    let first = digit(s, 0)?;
    match digit(s, 1) {
        Some(second) => Some((first * 10 + second, 2)),
        None if fixed => None,
        None => Some((first, 1)),
    }
}

/// The fields of a parsed time, its zone offset in seconds east of UTC.
#[derive(Debug, Default, Clone, Copy)]
struct Fields {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
    offset: i64,
}

/// Go's `ParseError` text for `value` under `layout` ([`DATE`], [`DATE_TIME`],
/// [`RFC3339`] or [`RFC3339_MICRO`]), `None` when it parses.
pub fn parse_error(value: &str, layout: &str) -> Option<String> {
    read(value, layout).err()
}

/// A time as Go's `time.Parse(time.RFC3339, s)` reads it. `None` where Go fails, or where
/// the instant is beyond what a [`Timestamp`] holds (9999-12-31 in a zone behind UTC).
pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
    let f = read(s, RFC3339).ok()?;
    let days = days_from_civil(f.year, i64::from(f.month), i64::from(f.day));
    let seconds = days * 86_400 + i64::from(f.hour * 3600 + f.minute * 60 + f.second) - f.offset;
    Timestamp::new(seconds, i32::try_from(f.nanos).ok()?).ok()
}

/// A time Go's `time.Parse(time.RFC3339, s)` reads, rewritten as strict RFC 3339 with its
/// offset kept (`2020-01-01T1:00:00,5Z` is `2020-01-01T01:00:00.500000000+00:00`), for
/// readers that take only that; `None` where Go fails.
pub fn strict_rfc3339(s: &str) -> Option<String> {
    let f = read(s, RFC3339).ok()?;
    // RFC 3339 offsets stop short of a day; Go's `+24:00` is written as the UTC instant.
    if f.offset.abs() >= 86_400 {
        return parse_rfc3339(s).map(|t| t.to_string());
    }
    let sign = if f.offset < 0 { '-' } else { '+' };
    let (hours, minutes) = (f.offset.abs() / 3600, f.offset.abs() % 3600 / 60);
    Some(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:09}{sign}{hours:02}:{minutes:02}",
        f.year, f.month, f.day, f.hour, f.minute, f.second, f.nanos
    ))
}

/// Whether `t` is Go's zero `time.Time` (0001-01-01T00:00:00Z), which kube prints as
/// `<unknown>` where it would print an age.
pub fn is_zero(t: Timestamp) -> bool {
    /// 0001-01-01T00:00:00Z in Unix seconds.
    const ZERO_TIME_SECONDS: i64 = -62_135_596_800;
    t.as_second() == ZERO_TIME_SECONDS && t.subsec_nanosecond() == 0
}

/// The whole seconds of `now - then` as Go's `time.Since(then).Seconds()` truncates them:
/// a `time.Duration` saturates at about 292 years either way.
pub fn seconds_since(then: Timestamp, now: Timestamp) -> i64 {
    /// `math.MaxInt64` nanoseconds, in whole seconds.
    const MAX_DURATION_SECONDS: i64 = i64::MAX / 1_000_000_000;
    now.duration_since(then).as_secs().clamp(-MAX_DURATION_SECONDS, MAX_DURATION_SECONDS)
}

/// Go's `time.parse` of `value` under one of the layouts, element by element.
fn read(value: &str, layout: &str) -> Result<Fields, String> {
    let whole = quote(value.as_bytes());
    let cannot = |rest: &[u8], elem: &str| {
        format!("parsing time {whole} as \"{layout}\": cannot parse {} as \"{elem}\"", quote(rest))
    };
    let out_of_range = |what: &str| format!("parsing time {whole}: {what} out of range");
    let mut rest = value.as_bytes();
    let mut f = Fields::default();
    for elem in elements(layout) {
        if let Elem::Zone = elem {
            let (offset, len) = zone(rest).map_err(|range| match range {
                Some(what) => out_of_range(what),
                None => cannot(rest, layout_text(elem)),
            })?;
            f.offset = offset;
            rest = &rest[len..];
            continue;
        }
        let taken = match elem {
            Elem::Literal(l) => rest.starts_with(l.as_bytes()).then_some((0, l.len())),
            Elem::Year => (rest.len() >= 4 && rest[..4].iter().all(u8::is_ascii_digit))
                .then(|| (rest[..4].iter().fold(0, |n, b| n * 10 + u32::from(b - b'0')), 4)),
            Elem::Month | Elem::Day | Elem::Minute | Elem::Second => number(rest, true),
            Elem::Hour => number(rest, false),
            // Go's `parseNanoseconds` over `.` and six characters, read by `atoi` (so a
            // sign passes, and a negative fraction is out of range).
            Elem::Micro => {
                let text = rest.get(1..7).and_then(|d| std::str::from_utf8(d).ok());
                match text.filter(|_| matches!(rest[0], b'.' | b',')).map(str::parse::<i32>) {
                    Some(Ok(n)) if n < 0 => return Err(out_of_range("fractional second")),
                    Some(Ok(n)) => {
                        f.nanos = n.unsigned_abs() * 1000;
                        Some((0, 7))
                    }
                    _ => None,
                }
            }
            Elem::Zone => None,
        };
        let Some((n, len)) = taken else { return Err(cannot(rest, layout_text(elem))) };
        rest = &rest[len..];
        let range = match elem {
            Elem::Year => {
                f.year = i64::from(n);
                None
            }
            Elem::Month => {
                f.month = n;
                (!(1..=12).contains(&n)).then_some("month")
            }
            Elem::Day => {
                f.day = n;
                None
            }
            Elem::Hour => {
                f.hour = n;
                (n >= 24).then_some("hour")
            }
            Elem::Minute => {
                f.minute = n;
                (n >= 60).then_some("minute")
            }
            Elem::Second => {
                f.second = n;
                (n >= 60).then_some("second")
            }
            Elem::Literal(_) | Elem::Micro | Elem::Zone => None,
        };
        if let Some(what) = range {
            return Err(out_of_range(what));
        }
        // A fraction after the seconds is read although the layout has none, after a
        // period or a comma, to any length; digits past the ninth are dropped.
        let fraction_next = layout == RFC3339_MICRO;
        if matches!(elem, Elem::Second)
            && !fraction_next
            && matches!(rest.first(), Some(b'.' | b','))
            && digit(rest, 1).is_some()
        {
            let digits = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            let kept = &rest[1..1 + digits.min(9)];
            let nanos = kept.iter().fold(0u32, |n, b| n * 10 + u32::from(b - b'0'));
            f.nanos = nanos * 10u32.pow(9 - kept.len() as u32);
            rest = &rest[1 + digits..];
        }
    }
    if !rest.is_empty() {
        return Err(format!("parsing time {whole}: extra text: {}", quote(rest)));
    }
    if f.day < 1 || f.day > days_in_month(f.year, f.month) {
        return Err(out_of_range("day"));
    }
    Ok(f)
}

/// `Z07:00` at the start of `s`: the offset in seconds east of UTC and the bytes it took,
/// or what is out of range (`None`: it cannot be read), in Go's order of checks.
fn zone(s: &[u8]) -> Result<(i64, usize), Option<&'static str>> {
    if s.first() == Some(&b'Z') {
        return Ok((0, 1));
    }
    if s.len() < 6 || s[3] != b':' {
        return Err(None);
    }
    let hours = number(&s[1..3], true);
    let minutes = hours.and_then(|_| number(&s[4..6], true));
    let (h, m) = (hours.map_or(0, |n| n.0), minutes.map_or(0, |n| n.0));
    // Go's bounds are `> 24` and `> 60`: some write offsets of 24 hours or 60 minutes.
    let range = if m > 60 {
        Some("time zone offset minute")
    } else if h > 24 {
        Some("time zone offset hour")
    } else {
        None
    };
    let sign = match s[0] {
        b'+' => 1,
        b'-' => -1,
        _ => 0,
    };
    if range.is_some() || minutes.is_none() || sign == 0 {
        return Err(range);
    }
    Ok((sign * i64::from(h * 3600 + m * 60), 6))
}

/// Go's `time` package quoting in its parse errors: not `strconv.Quote`, but each byte of
/// a non-ASCII or control character as `\xNN`.
fn quote(text: &[u8]) -> String {
    let mut out = String::from('"');
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_ascii() && c >= ' ' {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            } else {
                let mut buf = [0; 4];
                c.encode_utf8(&mut buf).bytes().for_each(|b| out.push_str(&format!("\\x{b:02x}")));
            }
        }
        chunk.invalid().iter().for_each(|b| out.push_str(&format!("\\x{b:02x}")));
    }
    out.push('"');
    out
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
#[path = "go_time_tests.rs"]
mod tests;
