//! A schema `pattern` as Go's `regexp` matches it, rewritten for the `regex` crate.
//!
//! kube matches patterns with Go's RE2, whose syntax the `regex` crate mostly shares; where
//! the two read the same text differently, the text is rewritten here so that it matches
//! what Go matches:
//! - `\d`, `\w`, `\s` (and `\D`, `\W`, `\S`, `\b`, `\B`) are ASCII in Go, Unicode in `regex`;
//! - `\Q...\E` quotes literally in Go, and `regex` does not know it;
//! - octal escapes (`\012`) are Go's, and `regex` wants a flag for them;
//! - a `{` that starts no repetition (`a{`, `{x}`) is a literal in Go, an error in `regex`;
//! - inside a class, `[`, `&&`, `--` and `~~` are literals in Go, nested classes and set
//!   operations in `regex`.
//!
//! Patterns Go does not compile never get here: registration refuses them
//! ([`super::go_regexp::check`]).

/// Go's ASCII Perl classes, as `regex` class bodies.
fn perl_class(c: char) -> Option<&'static str> {
    Some(match c {
        'd' => "[0-9]",
        'D' => "[^0-9]",
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        's' => r"[\t\n\f\r ]",
        'S' => r"[^\t\n\f\r ]",
        _ => return None,
    })
}

/// A literal character, escaped where `regex` could read it as syntax (not with a
/// blanket backslash: `\<` and `\>` are word boundaries to `regex`).
fn literal(c: char, out: &mut String) {
    if r"\.+*?()|[]{}^$#&-~".contains(c) {
        out.push('\\');
    }
    out.push(c);
}

/// Go's octal escape after the backslash: `\0`, `\01`, `\012`, `\12`, `\123` (up to three
/// digits). Returns the character and how many digits it took.
fn octal(rest: &[char]) -> Option<(char, usize)> {
    let n = rest.iter().take(3).take_while(|c| ('0'..='7').contains(*c)).count();
    // A lone `\1`..`\7` is a backreference, which Go refuses; `\0` alone is NUL.
    if n == 0 || (n == 1 && rest[0] != '0') {
        return None;
    }
    let value = rest[..n].iter().fold(0u32, |v, c| v * 8 + (*c as u32 - '0' as u32));
    char::from_u32(value).map(|c| (c, n))
}

/// Whether `rest` (just after a `{`) is a repetition Go reads: `{n}`, `{n,}` or `{n,m}`.
fn is_repeat(rest: &[char]) -> bool {
    let digits = |s: &[char]| s.iter().take_while(|c| c.is_ascii_digit()).count();
    let n = digits(rest);
    if n == 0 {
        return false;
    }
    match rest.get(n) {
        Some('}') => true,
        Some(',') => {
            let m = digits(&rest[n + 1..]);
            rest.get(n + 1 + m) == Some(&'}')
        }
        _ => false,
    }
}

/// Copies an escape that means the same in both (`\pL`, `\x{41}`, `\n`, `\.`) and returns
/// how many characters after the backslash it took.
fn copy_escape(rest: &[char], out: &mut String) -> usize {
    out.push('\\');
    let Some(&c) = rest.first() else { return 0 };
    out.push(c);
    let braced = |out: &mut String| match rest[1..].iter().position(|c| *c == '}') {
        Some(end) if rest.get(1) == Some(&'{') => {
            out.extend(&rest[1..=end + 1]);
            end + 2
        }
        _ => {
            out.extend(rest.get(1));
            2
        }
    };
    match c {
        'p' | 'P' => braced(out),
        'x' if rest.get(1) == Some(&'{') => braced(out),
        'x' => {
            out.extend(rest[1..].iter().take(2));
            1 + rest[1..].len().min(2)
        }
        _ => 1,
    }
}

/// One item of a class (a character, an escape, a POSIX class) from `chars[i]`, written
/// for `regex`; returns where the next item starts.
fn class_item(chars: &[char], i: usize, out: &mut String) -> usize {
    let rest = &chars[i + 1..];
    match chars[i] {
        '\\' => {
            if let Some(class) = rest.first().copied().and_then(perl_class) {
                // A nested class, which `regex` takes inside a class.
                out.push_str(class);
                i + 2
            } else if let Some((ch, n)) = octal(rest) {
                literal(ch, out);
                i + 1 + n
            } else {
                i + 1 + copy_escape(rest, out)
            }
        }
        '[' if rest.first() == Some(&':') => {
            // A POSIX class, `[:alpha:]`, the same in both.
            let end = rest.windows(2).position(|w| w == [':', ']']).map_or(rest.len(), |p| p + 2);
            out.push('[');
            out.extend(&rest[..end]);
            i + 1 + end
        }
        c => {
            literal(c, out);
            i + 1
        }
    }
}

/// The `regex` crate pattern that matches what Go's `regexp` matches for `pattern`.
pub fn to_rust(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    // Inside a class: where its items start (the first may be a literal `]`).
    let mut class_start: Option<usize> = None;
    while i < chars.len() {
        let c = chars[i];
        let rest = &chars[i + 1..];
        if let Some(start) = class_start {
            if c == ']' && i > start {
                out.push(']');
                class_start = None;
                i += 1;
                continue;
            }
            i = class_item(&chars, i, &mut out);
            if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|n| *n != ']') {
                out.push('-');
                i = class_item(&chars, i + 1, &mut out);
            }
            continue;
        }
        match c {
            '\\' => {
                let next = rest.first().copied();
                if next.is_some_and(|n| perl_class(n).is_some()) || octal(rest).is_some() {
                    i = class_item(&chars, i, &mut out);
                } else if next == Some('Q') {
                    let body = &chars[i + 2..];
                    let end = body.windows(2).position(|w| w == ['\\', 'E']).unwrap_or(body.len());
                    body[..end].iter().for_each(|c| literal(*c, &mut out));
                    i += 2 + (end + 2).min(body.len());
                } else if let Some(b @ ('b' | 'B')) = next {
                    out.push_str(if b == 'b' { r"(?-u:\b)" } else { r"(?-u:\B)" });
                    i += 2;
                } else {
                    i += 1 + copy_escape(rest, &mut out);
                }
            }
            '[' => {
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                class_start = Some(i);
            }
            '{' if !is_repeat(rest) => {
                out.push_str(r"\{");
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, s: &str) -> bool {
        regex::Regex::new(&to_rust(pattern)).map(|r| r.is_match(s)).unwrap_or_else(|e| panic!("{pattern}: {e}"))
    }

    #[test]
    fn perl_classes_and_word_boundaries_are_ascii_as_in_go() {
        assert!(matches(r"^\w+$", "a_1"));
        assert!(!matches(r"^\w+$", "abß"));
        assert!(!matches(r"^\d$", "٣"));
        assert!(matches(r"^\D$", "٣"));
        assert!(!matches(r"^\s$", "\u{a0}"));
        assert!(matches(r"^[\w-]+$", "a-b"));
        assert!(!matches(r"^[\w-]+$", "é"));
        assert!(matches(r"^[^\d]+$", "ab"));
        assert!(!matches(r"\bé", "é"));
        assert!(matches(r"a\b", "aé"));
    }

    #[test]
    fn go_literals_stay_literals() {
        assert!(matches(r"^\Qa.b\E$", "a.b"));
        assert!(!matches(r"^\Qa.b\E$", "axb"));
        assert!(matches(r"^\Q[x\Ey$", "[xy"));
        assert!(matches(r"^a{$", "a{"));
        assert!(matches(r"^{x}$", "{x}"));
        assert!(matches(r"^a{2}$", "aa"));
        assert!(matches(r"^a{1,}$", "aaa"));
        assert!(matches(r"^[[]$", "["));
        assert!(matches(r"^[a&&b]+$", "&"));
        assert!(matches(r"^[!--]$", "&"));
        assert!(matches(r"^[a-z-]$", "-"));
        assert!(matches(r"^a<b>$", "a<b>"));
        assert!(matches(r"^[]a]$", "]"));
        assert!(matches(r"^[^]a]$", "b"));
        assert!(matches(r"^[[:alpha:]]+$", "ab"));
        assert!(matches(r"^\101\0$", "A\0"));
        assert!(matches(r"^[\101-\103]$", "B"));
        assert!(matches(r"^\pL\p{Greek}\x41\x{42}$", "éΩAB"));
        assert!(matches(r"^a-b$", "a-b"));
        assert!(matches(r"^[a-c]$", "b"));
    }
}
