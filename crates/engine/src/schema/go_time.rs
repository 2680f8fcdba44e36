//! The error Go's `time.Parse` gives for a string that does not match the two layouts
//! kube's CEL conversion reads `date` (`2006-01-02`) and `date-time` strings with (the last
//! layout strfmt tries is `2006-01-02T15:04:05`, whose error it reports). A rule that
//! reaches such a value fails with these words (values kept by ratcheting).

use super::formats::days_in_month;
use crate::field::go_quote;

/// `2006-01-02`, strfmt's full date.
pub const DATE: &str = "2006-01-02";
/// `2006-01-02T15:04:05`, the last of strfmt's date-time layouts.
pub const DATE_TIME: &str = "2006-01-02T15:04:05";

/// One element of the two layouts.
#[derive(Clone, Copy)]
enum Elem {
    Literal(&'static str),
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

fn elements(layout: &str) -> &'static [Elem] {
    use Elem::*;
    const DATE_ELEMS: [Elem; 5] = [Year, Literal("-"), Month, Literal("-"), Day];
    const DATE_TIME_ELEMS: [Elem; 11] =
        [Year, Literal("-"), Month, Literal("-"), Day, Literal("T"), Hour, Literal(":"), Minute, Literal(":"), Second];
    if layout == DATE { &DATE_ELEMS } else { &DATE_TIME_ELEMS }
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

/// Go's `ParseError` text for `value` under `layout` ([`DATE`] or [`DATE_TIME`]), `None`
/// when it parses.
pub fn parse_error(value: &str, layout: &str) -> Option<String> {
    let whole = go_quote(value);
    let cannot = |rest: &[u8], elem: &str| {
        let rest = go_quote(&String::from_utf8_lossy(rest));
        format!("parsing time {whole} as {}: cannot parse {rest} as {}", go_quote(layout), go_quote(elem))
    };
    let out_of_range = |what: &str| format!("parsing time {whole}: {what} out of range");
    let mut rest = value.as_bytes();
    let (mut year, mut month, mut day) = (0i64, 0u32, 0u32);
    for &elem in elements(layout) {
        let taken = match elem {
            Elem::Literal(l) => rest.starts_with(l.as_bytes()).then_some((0, l.len())),
            Elem::Year => (rest.len() >= 4 && rest[..4].iter().all(u8::is_ascii_digit))
                .then(|| (rest[..4].iter().fold(0, |n, b| n * 10 + u32::from(b - b'0')), 4)),
            Elem::Month | Elem::Day | Elem::Minute | Elem::Second => number(rest, true),
            Elem::Hour => number(rest, false),
        };
        let Some((n, len)) = taken else { return Some(cannot(rest, layout_text(elem))) };
        rest = &rest[len..];
        let range = match elem {
            Elem::Year => {
                year = i64::from(n);
                None
            }
            Elem::Month => {
                month = n;
                (!(1..=12).contains(&n)).then_some("month")
            }
            Elem::Day => {
                day = n;
                None
            }
            Elem::Hour => (n >= 24).then_some("hour"),
            Elem::Minute => (n >= 60).then_some("minute"),
            Elem::Second => (n >= 60).then_some("second"),
            Elem::Literal(_) => None,
        };
        if let Some(what) = range {
            return Some(out_of_range(what));
        }
        // A fraction after the seconds is read although the layout has none.
        if matches!(elem, Elem::Second) && matches!(rest.first(), Some(b'.' | b',')) && digit(rest, 1).is_some() {
            let n = 1 + rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            rest = &rest[n..];
        }
    }
    if !rest.is_empty() {
        let extra = go_quote(&String::from_utf8_lossy(rest));
        return Some(format!("parsing time {whole}: extra text: {extra}"));
    }
    (day < 1 || day > days_in_month(year, month)).then(|| out_of_range("day"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go's words, as the oracle's CEL errors quote them.
    #[test]
    fn errors_are_gos() {
        assert_eq!(
            parse_error("2024-13-01", DATE).as_deref(),
            Some(r#"parsing time "2024-13-01": month out of range"#)
        );
        assert_eq!(
            parse_error("nope", DATE_TIME).as_deref(),
            Some(r#"parsing time "nope" as "2006-01-02T15:04:05": cannot parse "nope" as "2006""#)
        );
        assert_eq!(
            parse_error("2024-01-02", DATE_TIME).as_deref(),
            Some(r#"parsing time "2024-01-02" as "2006-01-02T15:04:05": cannot parse "" as "T""#)
        );
        assert_eq!(parse_error("2024-02-30", DATE).as_deref(), Some(r#"parsing time "2024-02-30": day out of range"#));
        assert_eq!(
            parse_error("2024-01-02T03:04:05Z", DATE_TIME).as_deref(),
            Some(r#"parsing time "2024-01-02T03:04:05Z": extra text: "Z""#)
        );
        assert_eq!(parse_error("2024-01-02T03:04:05.25", DATE_TIME), None);
        assert_eq!(parse_error("2024-01-02", DATE), None);
    }
}
