//! Whether Go's `regexp.Compile` takes a pattern, and if not, its error: kube checks every
//! `pattern` of a CRD schema so (`must be a valid regular expression, but isn't: ...`).
//!
//! Go's RE2 syntax differs from the `regex` crate's (`\Q...\E`, `\C`, octal escapes, the
//! 1,000 repeat bound, the Unicode names it knows), and kube shows Go's words, so this is
//! a walk of `regexp/syntax`'s parser (Go 1.24, Perl flags) that keeps only what decides
//! an error: the parse stack's shape (groups, alternations, what a repetition applies to)
//! and the counted repetitions nested in each item. Go's own limits on expressions of
//! millions of nodes (`expression too large`, `expression nests too deeply`) are not
//! checked.

/// Go's `syntax.ErrorCode` texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    InvalidCharRange,
    InvalidEscape,
    InvalidNamedCapture,
    InvalidPerlOp,
    InvalidRepeatOp,
    InvalidRepeatSize,
    MissingBracket,
    MissingParen,
    MissingRepeatArgument,
    TrailingBackslash,
    UnexpectedParen,
}

impl Code {
    fn text(self) -> &'static str {
        match self {
            Code::InvalidCharRange => "invalid character class range",
            Code::InvalidEscape => "invalid escape sequence",
            Code::InvalidNamedCapture => "invalid named capture",
            Code::InvalidPerlOp => "invalid or unsupported Perl syntax",
            Code::InvalidRepeatOp => "invalid nested repetition operator",
            Code::InvalidRepeatSize => "invalid repeat count",
            Code::MissingBracket => "missing closing ]",
            Code::MissingParen => "missing closing )",
            Code::MissingRepeatArgument => "missing argument to repetition operator",
            Code::TrailingBackslash => "trailing backslash at end of expression",
            Code::UnexpectedParen => "unexpected )",
        }
    }
}

/// Go's `*syntax.Error`: its code and the offending part of the expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("error parsing regexp: {}: `{expr}`", code.text())]
pub struct GoRegexpError {
    code: Code,
    expr: String,
}

fn fail<T>(code: Code, expr: &str) -> Result<T, GoRegexpError> {
    Err(GoRegexpError { code, expr: expr.to_string() })
}

/// The most copies a counted repetition may make, nested ones multiplied.
const MAX_REPEAT: u32 = 1000;

/// Go's Unicode categories (1.24: without the `Cn` and `LC` that 1.25 added).
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Co", "Cs", "L", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N", "Nd", "Nl", "No", "P",
    "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl", "Zp", "Zs",
];

/// Go's Unicode 15.0 scripts.
#[rustfmt::skip]
const SCRIPTS: &[&str] = &[
    "Adlam", "Ahom", "Anatolian_Hieroglyphs", "Arabic", "Armenian", "Avestan", "Balinese", "Bamum", "Bassa_Vah",
    "Batak", "Bengali", "Bhaiksuki", "Bopomofo", "Brahmi", "Braille", "Buginese", "Buhid", "Canadian_Aboriginal",
    "Carian", "Caucasian_Albanian", "Chakma", "Cham", "Cherokee", "Chorasmian", "Common", "Coptic", "Cuneiform",
    "Cypriot", "Cypro_Minoan", "Cyrillic", "Deseret", "Devanagari", "Dives_Akuru", "Dogra", "Duployan",
    "Egyptian_Hieroglyphs", "Elbasan", "Elymaic", "Ethiopic", "Georgian", "Glagolitic", "Gothic", "Grantha",
    "Greek", "Gujarati", "Gunjala_Gondi", "Gurmukhi", "Han", "Hangul", "Hanifi_Rohingya", "Hanunoo", "Hatran",
    "Hebrew", "Hiragana", "Imperial_Aramaic", "Inherited", "Inscriptional_Pahlavi", "Inscriptional_Parthian",
    "Javanese", "Kaithi", "Kannada", "Katakana", "Kawi", "Kayah_Li", "Kharoshthi", "Khitan_Small_Script", "Khmer",
    "Khojki", "Khudawadi", "Lao", "Latin", "Lepcha", "Limbu", "Linear_A", "Linear_B", "Lisu", "Lycian", "Lydian",
    "Mahajani", "Makasar", "Malayalam", "Mandaic", "Manichaean", "Marchen", "Masaram_Gondi", "Medefaidrin",
    "Meetei_Mayek", "Mende_Kikakui", "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Modi", "Mongolian", "Mro",
    "Multani", "Myanmar", "Nabataean", "Nag_Mundari", "Nandinagari", "New_Tai_Lue", "Newa", "Nko", "Nushu",
    "Nyiakeng_Puachue_Hmong", "Ogham", "Ol_Chiki", "Old_Hungarian", "Old_Italic", "Old_North_Arabian", "Old_Permic",
    "Old_Persian", "Old_Sogdian", "Old_South_Arabian", "Old_Turkic", "Old_Uyghur", "Oriya", "Osage", "Osmanya",
    "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa", "Phoenician", "Psalter_Pahlavi", "Rejang", "Runic",
    "Samaritan", "Saurashtra", "Sharada", "Shavian", "Siddham", "SignWriting", "Sinhala", "Sogdian", "Sora_Sompeng",
    "Soyombo", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa", "Tai_Le", "Tai_Tham", "Tai_Viet",
    "Takri", "Tamil", "Tangsa", "Tangut", "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta", "Toto",
    "Ugaritic", "Vai", "Vithkuqi", "Wancho", "Warang_Citi", "Yezidi", "Yi", "Zanabazar_Square",
];

/// The POSIX classes Go knows inside brackets (each also as `[:^name:]`).
const POSIX: &[&str] = &[
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "word",
    "xdigit",
];

/// One entry of the parse stack.
enum Item {
    /// `(` or `(?:`; what follows belongs to the group until its `)`.
    LeftParen,
    /// `|`, with the alternatives before it beneath.
    VerticalBar,
    /// A parsed expression: the counted repetitions it holds, outermost first, each with
    /// those it nests (all that `repeatIsValid` looks at).
    Expr(Vec<Repeat>),
}

/// The bounds of a counted repetition: min, and max (`None`: unbounded).
type Count = (u32, Option<u32>);

/// A counted repetition `{min,max}` (`max` `None`: unbounded) and those inside it.
struct Repeat {
    min: u32,
    max: Option<u32>,
    inner: Vec<Repeat>,
}

/// Go's `repeatIsValid`: nested counted repetitions make at most `n` copies.
fn repeats_fit(repeats: &[Repeat], n: u32) -> bool {
    repeats.iter().all(|r| {
        let m = r.max.unwrap_or(r.min);
        if r.max == Some(0) {
            return true;
        }
        m <= n && repeats_fit(&r.inner, n.checked_div(m).unwrap_or(n))
    })
}

/// Checks `pattern` as Go's `regexp.Compile` does.
pub fn check(pattern: &str) -> Result<(), GoRegexpError> {
    Parser { whole: pattern, stack: Vec::new() }.parse()
}

struct Parser<'a> {
    whole: &'a str,
    stack: Vec<Item>,
}

/// `s` without its first character.
fn after_first(s: &str) -> &str {
    let mut chars = s.chars();
    chars.next();
    chars.as_str()
}

/// The part of `from` before `rest` (a suffix of it).
fn consumed<'a>(from: &'a str, rest: &str) -> &'a str {
    &from[..from.len() - rest.len()]
}

impl Parser<'_> {
    fn parse(mut self) -> Result<(), GoRegexpError> {
        let mut t = self.whole;
        // The text from the previous repetition operator on, while nothing else came after it.
        let mut last_repeat: Option<&str> = None;
        while let Some(c) = t.chars().next() {
            let mut repeat = None;
            match c {
                '(' if t[1..].starts_with('?') => t = self.perl_flags(t)?,
                '(' => {
                    self.stack.push(Item::LeftParen);
                    t = &t[1..];
                }
                '|' => {
                    self.concat();
                    if !self.swap_vertical_bar() {
                        self.stack.push(Item::VerticalBar);
                    }
                    t = &t[1..];
                }
                ')' => {
                    self.right_paren()?;
                    t = &t[1..];
                }
                '[' => t = self.class(t)?,
                '*' | '+' | '?' => {
                    let after = &t[1..];
                    let after = self.repeat(None, t, after, last_repeat)?;
                    repeat = Some(t);
                    t = after;
                }
                '{' => match counted(t) {
                    None => {
                        self.literal();
                        t = &t[1..];
                    }
                    Some((None, after)) => return fail(Code::InvalidRepeatSize, consumed(t, after)),
                    Some((count, after)) => {
                        let after = self.repeat(count, t, after, last_repeat)?;
                        repeat = Some(t);
                        t = after;
                    }
                },
                '\\' => t = self.escape(t)?,
                _ => {
                    self.literal();
                    t = after_first(t);
                }
            }
            last_repeat = repeat;
        }
        self.concat();
        if self.swap_vertical_bar() {
            self.stack.pop();
        }
        self.alternate();
        if self.stack.len() != 1 {
            return fail(Code::MissingParen, self.whole);
        }
        Ok(())
    }

    fn literal(&mut self) {
        self.stack.push(Item::Expr(Vec::new()));
    }

    /// A repetition operator (`count`: `{min,max}`, else `*`, `+` or `?`) applied to the
    /// top of the stack; returns what follows it.
    fn repeat<'s>(
        &mut self,
        count: Option<Count>,
        before: &'s str,
        after: &'s str,
        last_repeat: Option<&str>,
    ) -> Result<&'s str, GoRegexpError> {
        let after = after.strip_prefix('?').unwrap_or(after);
        if let Some(last) = last_repeat {
            // `a**` is an error in Perl, not a doubled star.
            return fail(Code::InvalidRepeatOp, &last[..last.len() - after.len()]);
        }
        let operator = consumed(before, after);
        let Some(Item::Expr(inner)) = self.stack.last_mut() else {
            return fail(Code::MissingRepeatArgument, operator);
        };
        if let Some((min, max)) = count {
            let repeat = Repeat { min, max, inner: std::mem::take(inner) };
            let checked = min >= 2 || max.is_some_and(|m| m >= 2);
            let fits = !checked || repeats_fit(std::slice::from_ref(&repeat), MAX_REPEAT);
            *inner = vec![repeat];
            if !fits {
                return fail(Code::InvalidRepeatSize, operator);
            }
        }
        Ok(after)
    }

    /// Joins the expressions above the topmost `(` or `|` into one.
    fn concat(&mut self) {
        let mut joined = Vec::new();
        while let Some(Item::Expr(_)) = self.stack.last() {
            if let Some(Item::Expr(repeats)) = self.stack.pop() {
                joined.extend(repeats);
            }
        }
        self.stack.push(Item::Expr(joined));
    }

    /// Joins the alternatives above the topmost `(` into one (for what decides errors, as
    /// a concatenation does).
    fn alternate(&mut self) {
        self.concat();
    }

    /// If the top is an expression over a `|`, puts the `|` back on top.
    fn swap_vertical_bar(&mut self) -> bool {
        let n = self.stack.len();
        if n >= 2 && matches!(self.stack[n - 2], Item::VerticalBar) {
            self.stack.swap(n - 1, n - 2);
            return true;
        }
        false
    }

    fn right_paren(&mut self) -> Result<(), GoRegexpError> {
        self.concat();
        if self.swap_vertical_bar() {
            self.stack.pop();
        }
        self.alternate();
        let n = self.stack.len();
        if n < 2 || !matches!(self.stack[n - 2], Item::LeftParen) {
            return fail(Code::UnexpectedParen, self.whole);
        }
        let group = self.stack.pop();
        self.stack.pop();
        if let Some(group) = group {
            self.stack.push(group);
        }
        Ok(())
    }

    /// `(?flags)`, `(?flags:`, `(?P<name>` or `(?<name>`; returns what follows.
    fn perl_flags<'s>(&mut self, s: &'s str) -> Result<&'s str, GoRegexpError> {
        let named_p = s.len() > 4 && s[2..].starts_with("P<");
        let named = s.len() > 3 && s[2..].starts_with('<');
        if named_p || named {
            let start = if named_p { 4 } else { 3 };
            let Some(end) = s.find('>') else { return fail(Code::InvalidNamedCapture, s) };
            let name = &s[start..end];
            if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
                return fail(Code::InvalidNamedCapture, &s[..=end]);
            }
            self.stack.push(Item::LeftParen);
            return Ok(&s[end + 1..]);
        }
        let mut t = &s[2..];
        let mut negated = false;
        let mut saw_flag = false;
        while let Some(c) = t.chars().next() {
            t = after_first(t);
            match c {
                'i' | 'm' | 's' | 'U' => saw_flag = true,
                '-' if !negated => {
                    negated = true;
                    saw_flag = false;
                }
                ':' | ')' if !negated || saw_flag => {
                    if c == ':' {
                        self.stack.push(Item::LeftParen);
                    }
                    return Ok(t);
                }
                _ => break,
            }
        }
        fail(Code::InvalidPerlOp, consumed(s, t))
    }

    /// A backslash outside brackets; returns what follows it.
    fn escape<'s>(&mut self, t: &'s str) -> Result<&'s str, GoRegexpError> {
        let second = t[1..].chars().next();
        match second {
            Some('A' | 'b' | 'B' | 'z') => {
                self.literal();
                return Ok(&t[2..]);
            }
            Some('C') => return fail(Code::InvalidEscape, &t[..2]),
            Some('Q') => {
                let (literal, rest) = match t.find("\\E") {
                    Some(i) => (&t[2..i], &t[i + 2..]),
                    None => (&t[2..], ""),
                };
                for _ in literal.chars() {
                    self.literal();
                }
                return Ok(rest);
            }
            _ => {}
        }
        let rest = match unicode_class(t)? {
            Some(rest) => rest,
            None => match perl_class(t) {
                Some(rest) => rest,
                None => escape_char(t)?.1,
            },
        };
        self.literal();
        Ok(rest)
    }

    /// A bracketed class at the start of `s`; returns what follows it.
    fn class<'s>(&mut self, s: &'s str) -> Result<&'s str, GoRegexpError> {
        let mut t = &s[1..];
        if t.starts_with('^') {
            t = &t[1..];
        }
        let mut first = true;
        while t.is_empty() || !t.starts_with(']') || first {
            first = false;
            if t.len() > 2
                && t.starts_with("[:")
                && let Some(rest) = posix_class(t)?
            {
                t = rest;
                continue;
            }
            if let Some(rest) = unicode_class(t)? {
                t = rest;
                continue;
            }
            if let Some(rest) = perl_class(t) {
                t = rest;
                continue;
            }
            let range = t;
            let (lo, rest) = class_char(t, s)?;
            t = rest;
            if t.len() >= 2 && t.starts_with('-') && !t[1..].starts_with(']') {
                let (hi, rest) = class_char(&t[1..], s)?;
                t = rest;
                if hi < lo {
                    return fail(Code::InvalidCharRange, consumed(range, t));
                }
            }
        }
        self.literal();
        Ok(&t[1..])
    }
}

/// `{min}`, `{min,}` or `{min,max}` at the start of `s` and what follows it: `None` when
/// it is none of them (the `{` is a literal then); inside, `None` when its numbers are out
/// of bounds (above 1,000, or min over max), else min and max (`None`: unbounded).
fn counted(s: &str) -> Option<(Option<Count>, &str)> {
    let s = s.strip_prefix('{')?;
    let (min, s) = int(s)?;
    let (max, s) = match s.strip_prefix(',') {
        None => (Some(min), s),
        Some(s) if s.starts_with('}') => (None, s),
        Some(s) => {
            let (max, s) = int(s)?;
            (Some(max), s)
        }
    };
    let rest = s.strip_prefix('}')?;
    let bounded = |n: Option<u32>| n.filter(|n| *n <= MAX_REPEAT);
    let count = match (bounded(min), max.map(bounded)) {
        (Some(min), None) => Some((min, None)),
        (Some(min), Some(Some(max))) if min <= max => Some((min, Some(max))),
        _ => None,
    };
    Some((count, rest))
}

/// Go's `parseInt`: decimal digits without a leading zero; `None` inside when too big.
fn int(s: &str) -> Option<(Option<u32>, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits >= 2 && s.starts_with('0')) {
        return None;
    }
    let mut n: u32 = 0;
    let mut too_big = false;
    for b in s[..digits].bytes() {
        if n >= 100_000_000 {
            too_big = true;
            break;
        }
        n = n * 10 + u32::from(b - b'0');
    }
    Some(((!too_big).then_some(n), &s[digits..]))
}

/// `\d`, `\s`, `\w` and their negations; returns what follows.
fn perl_class(t: &str) -> Option<&str> {
    ["\\d", "\\D", "\\s", "\\S", "\\w", "\\W"].iter().any(|p| t.starts_with(p)).then(|| &t[2..])
}

/// `[:name:]` or `[:^name:]`: `None` when `t` holds no `:]` (the `[` is a character then).
fn posix_class(t: &str) -> Result<Option<&str>, GoRegexpError> {
    let Some(i) = t[2..].find(":]") else { return Ok(None) };
    let name = &t[..i + 4];
    let inner = &name[2..name.len() - 2];
    if POSIX.contains(&inner.strip_prefix('^').unwrap_or(inner)) {
        Ok(Some(&t[i + 4..]))
    } else {
        fail(Code::InvalidCharRange, name)
    }
}

/// `\pX`, `\p{Name}`, `\PX`, `\P{^Name}`: `None` when `s` is not one.
fn unicode_class(s: &str) -> Result<Option<&str>, GoRegexpError> {
    if !(s.starts_with("\\p") || s.starts_with("\\P")) {
        return Ok(None);
    }
    let t = &s[2..];
    let (seq, name, rest) = match t.chars().next() {
        Some('{') => {
            let Some(end) = s.find('}') else { return fail(Code::InvalidCharRange, s) };
            (&s[..=end], &s[3..end], &s[end + 1..])
        }
        Some(c) => {
            let len = 2 + c.len_utf8();
            (&s[..len], &s[2..len], &s[len..])
        }
        None => (s, "", ""),
    };
    let name = name.strip_prefix('^').unwrap_or(name);
    if name == "Any" || CATEGORIES.contains(&name) || SCRIPTS.contains(&name) {
        Ok(Some(rest))
    } else {
        fail(Code::InvalidCharRange, seq)
    }
}

/// One character of a bracketed class (`whole`: the class to the end of the pattern).
fn class_char<'s>(t: &'s str, whole: &str) -> Result<(char, &'s str), GoRegexpError> {
    match t.chars().next() {
        None => fail(Code::MissingBracket, whole),
        Some('\\') => escape_char(t),
        Some(c) => Ok((c, after_first(t))),
    }
}

/// Go's `parseEscape`: the character a backslash escape at the start of `s` stands for.
fn escape_char(s: &str) -> Result<(char, &str), GoRegexpError> {
    let t = &s[1..];
    let Some(c) = t.chars().next() else { return fail(Code::TrailingBackslash, "") };
    let mut t = after_first(t);
    let invalid = |t: &str| fail(Code::InvalidEscape, consumed(s, t));
    match c {
        '1'..='7' if !t.starts_with(|d: char| ('0'..='7').contains(&d)) => invalid(t),
        '0'..='7' => {
            let mut value = c as u32 - '0' as u32;
            for _ in 1..3 {
                match t.chars().next().filter(|d| ('0'..='7').contains(d)) {
                    Some(d) => {
                        value = value * 8 + (d as u32 - '0' as u32);
                        t = &t[1..];
                    }
                    None => break,
                }
            }
            Ok((char::from_u32(value).unwrap_or('\0'), t))
        }
        'x' => {
            let Some(first) = t.chars().next() else { return invalid(t) };
            t = after_first(t);
            if first == '{' {
                let mut value: u32 = 0;
                let mut digits = 0;
                loop {
                    let Some(d) = t.chars().next() else { return invalid(t) };
                    t = after_first(t);
                    if d == '}' {
                        break;
                    }
                    let Some(v) = d.to_digit(16) else { return invalid(t) };
                    value = value * 16 + v;
                    if value > 0x10FFFF {
                        return invalid(t);
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return invalid(t);
                }
                return Ok((char::from_u32(value).unwrap_or('\u{FFFD}'), t));
            }
            let second = t.chars().next();
            t = if second.is_some() { after_first(t) } else { t };
            match (first.to_digit(16), second.and_then(|c| c.to_digit(16))) {
                (Some(x), Some(y)) => Ok((char::from_u32(x * 16 + y).unwrap_or('\0'), t)),
                _ => invalid(t),
            }
        }
        'a' => Ok(('\u{7}', t)),
        'f' => Ok(('\u{c}', t)),
        'n' => Ok(('\n', t)),
        'r' => Ok(('\r', t)),
        't' => Ok(('\t', t)),
        'v' => Ok(('\u{b}', t)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c, t)),
        _ => invalid(t),
    }
}

#[cfg(test)]
#[path = "go_regexp_tests.rs"]
mod tests;
