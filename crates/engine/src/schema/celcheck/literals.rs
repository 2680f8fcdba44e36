//! cel-go's AST validators, which kube enables since 1.29 and runs over a rule that
//! type-checked: constant arguments of `duration`, `timestamp` and `matches` must be
//! valid, list and map literals must be homogeneous (exactly, where the checker only
//! asked for assignable items), and a constant `format` string must fit the list literal
//! it formats. Then what creating the program refuses: a constant regex of `matches`,
//! `find` or `findAll` that Go's `regexp` does not compile.

use super::parse::{Expr, Kind};
use super::types::CelType;
use crate::schema::formats;
use std::collections::HashMap;

/// The issues of the validators, `(offset, message)` as the checker gives them.
pub fn validate(expr: &Expr, types: &HashMap<usize, CelType>) -> Vec<(usize, String)> {
    let mut v = Validator { types, issues: Vec::new() };
    v.walk(expr, false);
    v.issues
}

struct Validator<'a> {
    types: &'a HashMap<usize, CelType>,
    issues: Vec<(usize, String)>,
}

impl Validator<'_> {
    fn ty(&self, e: &Expr) -> CelType {
        self.types.get(&e.id).cloned().unwrap_or(CelType::Dyn)
    }

    /// Every node under `e`; `exempt` below a call of `format`, whose literals may mix types.
    fn walk(&mut self, e: &Expr, exempt: bool) {
        match &e.kind {
            Kind::Literal(..) | Kind::Ident(_) => {}
            Kind::Select(operand, _) => self.walk(operand, exempt),
            Kind::List(items) => {
                if !exempt {
                    self.homogeneous(items.iter());
                }
                items.iter().for_each(|i| self.walk(i, exempt));
            }
            Kind::Map(entries) => {
                if !exempt {
                    self.homogeneous(entries.iter().map(|(k, _)| k));
                    self.homogeneous_values(entries);
                }
                entries.iter().for_each(|(k, v)| {
                    self.walk(k, exempt);
                    self.walk(v, exempt);
                });
            }
            Kind::Call { function, target, args } => {
                self.call(e, function, target.as_deref(), args);
                let exempt = exempt || function == "format";
                target.iter().for_each(|t| self.walk(t, exempt));
                args.iter().for_each(|a| self.walk(a, exempt));
            }
        }
    }

    fn call(&mut self, e: &Expr, function: &str, target: Option<&Expr>, args: &[Expr]) {
        let Some(first) = args.first() else { return };
        let valid = match (function, &first.kind) {
            ("duration", Kind::Literal(CelType::String, _, Some(s))) => formats::parse_go_duration(s).is_some(),
            ("duration", Kind::Literal(..)) => false,
            ("timestamp", Kind::Literal(CelType::String, _, Some(s))) => is_rfc3339(s),
            ("timestamp", Kind::Literal(CelType::Int, ..)) => {
                int_literal(first).is_none_or(|n| (MIN_SECONDS..=MAX_SECONDS).contains(&n))
            }
            ("matches", Kind::Literal(CelType::String, _, Some(s))) => go_regex_error(s).is_none(),
            ("format", _) => {
                self.format(e, target, first, args.len());
                true
            }
            _ => true,
        };
        if !valid {
            self.issues.push((first.pos, format!("invalid {function} argument")));
        }
    }

    /// The literal's items (or keys) have exactly the first one's type. A part whose type
    /// came from an unbound type parameter (`optional.none()`, `[]`) is `dyn` here where
    /// cel-go knows better, so it is not compared.
    fn homogeneous<'e>(&mut self, mut items: impl Iterator<Item = &'e Expr>) {
        let Some(first) = items.next() else { return };
        let want = self.ty(first);
        for item in items {
            let t = self.ty(item);
            if !free(first) && !free(item) && t != want {
                self.issues.push((item.pos, format!("expected type '{want}' but found '{t}'")));
                return;
            }
        }
    }

    /// A map literal's values, each compared with the first (every mismatch reported).
    fn homogeneous_values(&mut self, entries: &[(Expr, Expr)]) {
        let Some(((_, first), rest)) = entries.split_first() else { return };
        let want = self.ty(first);
        for (_, v) in rest {
            let t = self.ty(v);
            if !free(first) && !free(v) && t != want {
                self.issues.push((v.pos, format!("expected type '{want}' but found '{t}'")));
            }
        }
    }

    /// cel-go's `stringFormatValidator`: a constant format string with a list literal.
    fn format(&mut self, call: &Expr, target: Option<&Expr>, list: &Expr, count: usize) {
        let (Some(Kind::Literal(CelType::String, _, Some(text))), Kind::List(items), 1) =
            (target.map(|t| &t.kind), &list.kind, count)
        else {
            return;
        };
        match check_format(text, items, &|e| self.ty(e)) {
            Err((Some(pos), message)) => self.issues.push((pos, message)),
            Err((None, message)) => self.issues.push((call.pos, message)),
            Ok(requested) if items.len() > requested => self.issues.push((
                call.pos,
                format!("too many arguments supplied to string.format (expected {requested}, got {})", items.len()),
            )),
            Ok(_) => {}
        }
    }
}

/// The seconds of years 1 and 9999, the range of CEL's timestamps.
const MIN_SECONDS: i64 = -62_135_596_800;
const MAX_SECONDS: i64 = 253_402_300_799;

/// The value of an int literal, when it fits.
pub(super) fn int_literal(e: &Expr) -> Option<i64> {
    let Kind::Literal(CelType::Int, _, Some(text)) = &e.kind else { return None };
    let (negative, digits) = text.strip_prefix('-').map_or((false, text.as_str()), |d| (true, d));
    let magnitude = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i128::from_str_radix(hex, 16).ok()?,
        None => digits.parse::<i128>().ok()?,
    };
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// Whether a type in `e` may come from a type parameter our checker left unbound.
fn free(e: &Expr) -> bool {
    match &e.kind {
        Kind::List(items) => items.is_empty() || items.iter().any(free),
        Kind::Map(entries) => entries.is_empty() || entries.iter().any(|(k, v)| free(k) || free(v)),
        Kind::Call { function, target, args } => {
            function == "none" || target.as_deref().is_some_and(free) || args.iter().any(free)
        }
        Kind::Select(operand, _) => free(operand),
        Kind::Literal(..) | Kind::Ident(_) => false,
    }
}

/// An issue of a format string: at the offending argument, or (`None`) at the call.
type FormatIssue = (Option<usize>, String);

/// cel-go's `parseFormatString` with its checking interpolator: how many arguments the
/// clauses use, or the first issue.
fn check_format(text: &str, items: &[Expr], ty: &dyn Fn(&Expr) -> CelType) -> Result<usize, FormatIssue> {
    let b = text.as_bytes();
    let (mut i, mut index) = (0, 0);
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        if i + 1 >= b.len() {
            return Err((None, "unexpected end of string".into()));
        }
        let Some(item) = items.get(index) else { return Err((None, format!("index {index} out of range"))) };
        let (read, clause) =
            clause(&b[i + 1..]).map_err(|e| (None, format!("could not parse formatting clause: {e}")))?;
        verify(clause, item, ty).map_err(|(pos, e)| (Some(pos), format!("error during formatting: {e}")))?;
        i += 1 + read;
        index += 1;
    }
    Ok(index)
}

/// The verb of a clause (after its `%`) and how many bytes it takes.
fn clause(b: &[u8]) -> Result<(usize, u8), String> {
    let mut i = 0;
    if b.first() == Some(&b'.') {
        i = 1;
        loop {
            match b.get(i) {
                None => return Err("error while parsing precision: could not find end of precision specifier".into()),
                Some(c) if c.is_ascii_digit() => i += 1,
                Some(_) => break,
            }
        }
        if i == 1 {
            return Err(
                "error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing \"\": invalid syntax"
                    .into(),
            );
        }
    }
    match b.get(i) {
        Some(verb @ (b's' | b'd' | b'f' | b'e' | b'b' | b'x' | b'X' | b'o')) => Ok((i + 1, *verb)),
        Some(other) => Err(format!("unrecognized formatting clause \"{}\"", char::from(*other))),
        None => Err("unrecognized formatting clause \"\"".into()),
    }
}

/// Whether the argument suits the clause (a `dyn` suits all), else where and why not.
fn verify(verb: u8, item: &Expr, ty: &dyn Fn(&Expr) -> CelType) -> Result<(), (usize, String)> {
    use CelType::*;
    let t = ty(item);
    let fits = |ok: &dyn Fn(&CelType) -> bool| t == Dyn || ok(&t);
    let (ok, message) = match verb {
        b's' => return verify_string(item, ty),
        b'd' => (fits(&|t| matches!(t, Int | Uint)), "decimal clause can only be used on integers"),
        b'f' => (fits(&|t| matches!(t, Double | String)), "fixed-point clause can only be used on doubles"),
        b'e' => (fits(&|t| matches!(t, Double | String)), "scientific clause can only be used on doubles"),
        b'b' => (fits(&|t| matches!(t, Int | Uint | Bool)), "only integers and bools can be formatted as binary"),
        b'o' => (fits(&|t| matches!(t, Int | Uint)), "octal clause can only be used on integers"),
        _ => (
            fits(&|t| matches!(t, Int | Uint | String | Bytes)),
            "only integers, byte buffers, and strings can be formatted as hex",
        ),
    };
    if ok { Ok(()) } else { Err((item.pos, format!("{message}, was given {}", type_name(&t)))) }
}

/// `%s` takes every kind of value but objects and library types, looking into literals.
fn verify_string(item: &Expr, ty: &dyn Fn(&Expr) -> CelType) -> Result<(), (usize, String)> {
    let t = ty(item);
    if matches!(t, CelType::Object(_) | CelType::Opaque(_) | CelType::Optional(_)) {
        return Err((
            item.pos,
            format!(
                "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given {}",
                type_name(&t)
            ),
        ));
    }
    match &item.kind {
        Kind::List(items) => items.iter().try_for_each(|i| verify_string(i, ty)),
        Kind::Map(entries) => entries.iter().try_for_each(|(k, v)| {
            verify_string(k, ty)?;
            verify_string(v, ty)
        }),
        _ => Ok(()),
    }
}

/// cel-go's `TypeName` of a type.
fn type_name(t: &CelType) -> String {
    match t {
        CelType::Null => "null_type".into(),
        CelType::Timestamp => "google.protobuf.Timestamp".into(),
        CelType::Duration => "google.protobuf.Duration".into(),
        CelType::List(_) => "list".into(),
        CelType::Map(..) => "map".into(),
        CelType::Optional(_) => "optional_type".into(),
        CelType::Type(_) => "type".into(),
        other => other.to_string(),
    }
}

/// Whether Go's `time.Parse(time.RFC3339, s)` reads `s`, within CEL's years 1 to 9999.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |from: usize, n: usize| b.get(from..from + n).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let number = |from: usize, n: usize| s.get(from..from + n).and_then(|d| d.parse::<u32>().ok()).unwrap_or(0);
    let shape = digits(0, 4)
        && b.get(4) == Some(&b'-')
        && digits(5, 2)
        && b.get(7) == Some(&b'-')
        && digits(8, 2)
        && b.get(10) == Some(&b'T')
        && digits(11, 2)
        && b.get(13) == Some(&b':')
        && digits(14, 2)
        && b.get(16) == Some(&b':')
        && digits(17, 2);
    if !shape {
        return false;
    }
    let (year, month, day) = (number(0, 4), number(5, 2), number(8, 2));
    let in_range = year >= 1
        && (1..=12).contains(&month)
        && day >= 1
        && day <= formats::days_in_month(i64::from(year), month)
        && number(11, 2) < 24
        && number(14, 2) < 60
        && number(17, 2) < 60;
    let mut rest = &s[19..];
    // Go reads a fraction after a comma too.
    if let Some(fraction) = rest.strip_prefix('.').or_else(|| rest.strip_prefix(',')) {
        let n = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &fraction[n..];
    }
    let zone = rest == "Z"
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':'
            // Go's bounds of a zone offset (the oracle takes `+24:00`).
            && rest[1..3].parse::<u32>().is_ok_and(|h| h <= 24)
            && rest[4..6].parse::<u32>().is_ok_and(|m| m <= 60)
            && rest[1..3].bytes().chain(rest[4..6].bytes()).all(|c| c.is_ascii_digit()));
    in_range && zone
}

/// What creating the program refuses: the first constant regex (of `matches`, `find`,
/// `findAll`) Go does not compile, as Go words it.
pub fn program_error(e: &Expr) -> Option<String> {
    let own = match &e.kind {
        Kind::Call { function, target, args } => {
            let pattern = match (function.as_str(), target.is_some(), args.as_slice()) {
                ("matches", false, [_, p]) => Some(p),
                ("matches" | "find" | "findAll", true, [p, ..]) => Some(p),
                _ => None,
            };
            match pattern.map(|p| &p.kind) {
                Some(Kind::Literal(CelType::String, _, Some(s))) => go_regex_error(s),
                _ => None,
            }
        }
        _ => None,
    };
    own.or_else(|| children(e).find_map(program_error))
}

fn children(e: &Expr) -> Box<dyn Iterator<Item = &Expr> + '_> {
    match &e.kind {
        Kind::Literal(..) | Kind::Ident(_) => Box::new(std::iter::empty()),
        Kind::Select(operand, _) => Box::new(std::iter::once(&**operand)),
        Kind::List(items) => Box::new(items.iter()),
        Kind::Map(entries) => Box::new(entries.iter().flat_map(|(k, v)| [k, v])),
        Kind::Call { target, args, .. } => Box::new(target.as_deref().into_iter().chain(args.iter())),
    }
}

/// Go's `regexp.Compile` error for `pattern` (`error parsing regexp: <code>: `<expr>``),
/// `None` when Go compiles it: the engine's walk of Go's parser, which also judges a
/// schema's `pattern`.
pub fn go_regex_error(pattern: &str) -> Option<String> {
    crate::schema::go_regexp::check(pattern).err().map(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_go_rfc3339() {
        for good in [
            "2020-01-01T00:00:00Z",
            "2020-01-01T00:00:00+01:00",
            "2020-01-01T00:00:00.123456789Z",
            "0001-01-01T00:00:00Z",
        ] {
            assert!(is_rfc3339(good), "{good}");
        }
        for bad in [
            "bad",
            "2020-01-01",
            "2020-01-01t00:00:00z",
            "0000-01-01T00:00:00Z",
            "10000-01-01T00:00:00Z",
            "2020-13-01T00:00:00Z",
            "2021-02-29T00:00:00Z",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    /// Go's messages (the oracle's `program instantiation failed` answers), from the
    /// engine's Go regexp parser.
    #[test]
    fn regexes_fail_as_go_fails() {
        let cases = [
            ("[", Some("missing closing ]: `[`")),
            (")", Some("unexpected ): `)`")),
            ("a**", Some("invalid nested repetition operator: `**`")),
            ("\\Q.*\\E", None),
            ("\\0", None),
        ];
        for (pattern, want) in cases {
            assert_eq!(go_regex_error(pattern), want.map(|w| format!("error parsing regexp: {w}")), "{pattern}");
        }
    }
}
