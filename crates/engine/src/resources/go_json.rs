//! Just enough of Go's `encoding/json` for the errors kube-apiserver quotes back to the
//! client: the syntax check of `Unmarshal` (request bodies, patches, secrets' docker
//! configs, continue tokens)
//! (a transcription of the state machine in Go's `scanner.go`, so the first bad byte and
//! the words around it are Go's) and, for continue tokens, the member-by-member decode into
//! `continueToken{v string; rv int64; start string}` with its type errors.
//!
//! The scanner is iterative with a bounded stack (Go's maximum nesting depth), so no input
//! recurses or grows without bound.

/// The decoded token, zero values for members that were absent or `null`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Token {
    pub v: String,
    pub rv: i64,
    pub start: String,
}

/// Go's nesting limit (`maxNestingDepth`).
const MAX_DEPTH: usize = 10_000;

/// What is open at each nesting level (Go's `parseState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// The scanner's states (Go's `step` functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside `true`, `false` or `null`: the bytes still expected.
    Literal(&'static [u8], &'static str),
}

/// Go's `quoteChar`: the byte as a rune in single quotes, escaped as `strconv.Quote`
/// escapes it.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_string(),
        b'"' => "'\"'".to_string(),
        0x07 => r"'\a'".to_string(),
        0x08 => r"'\b'".to_string(),
        0x0c => r"'\f'".to_string(),
        b'\n' => r"'\n'".to_string(),
        b'\r' => r"'\r'".to_string(),
        b'\t' => r"'\t'".to_string(),
        0x0b => r"'\v'".to_string(),
        b'\\' => r"'\\'".to_string(),
        c if c < 0x20 || c == 0x7f => format!(r"'\x{c:02x}'"),
        // C1 controls, the no-break space and the soft hyphen are not printable to Go.
        c if (0x80..=0xa0).contains(&c) || c == 0xad => format!(r"'\u{c:04x}'"),
        c => format!("'{}'", char::from(c)),
    }
}

fn syntax(c: u8, context: &str) -> String {
    format!("invalid character {} {context}", quote_char(c))
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// The syntax check `json.Unmarshal` runs before decoding anything (Go's `checkValid`).
pub fn check_valid(data: &[u8]) -> Result<(), String> {
    let mut scanner = Scanner { state: State::BeginValue, stack: Vec::new() };
    for &c in data {
        scanner.step(c)?;
    }
    // Go feeds a space at the end, which completes a number or a top-level value (or
    // fails a literal: `nul` is "invalid character ' ' in literal null").
    if scanner.state != State::EndTop {
        scanner.step(b' ')?;
        if scanner.state != State::EndTop {
            return Err("unexpected end of JSON input".to_string());
        }
    }
    Ok(())
}

struct Scanner {
    state: State,
    stack: Vec<Open>,
}

impl Scanner {
    /// Opens a value at `c` (`{` or `[`); Go's scanner names it when that is too deep.
    fn push(&mut self, c: u8, open: Open) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(syntax(c, "exceeded max depth"));
        }
        self.stack.push(open);
        Ok(())
    }

    /// Closes the innermost value; at the top level, only space may follow.
    fn pop(&mut self) {
        self.stack.pop();
        self.state = if self.stack.is_empty() { State::EndTop } else { State::EndValue };
    }

    fn step(&mut self, c: u8) -> Result<(), String> {
        match self.state {
            State::BeginValueOrEmpty if is_space(c) => {}
            State::BeginValueOrEmpty if c == b']' => return self.end_value(c),
            State::BeginValueOrEmpty => return self.begin_value(c),
            State::BeginValue => return self.begin_value(c),
            State::BeginStringOrEmpty if is_space(c) => {}
            State::BeginStringOrEmpty if c == b'}' => {
                if let Some(top) = self.stack.last_mut() {
                    *top = Open::ObjectValue;
                }
                return self.end_value(c);
            }
            State::BeginStringOrEmpty | State::BeginString => match c {
                c if is_space(c) => {}
                b'"' => self.state = State::InString,
                c => return Err(syntax(c, "looking for beginning of object key string")),
            },
            State::EndValue => return self.end_value(c),
            State::EndTop if is_space(c) => {}
            State::EndTop => return Err(syntax(c, "after top-level value")),
            State::InString => match c {
                b'"' => self.state = State::EndValue,
                b'\\' => self.state = State::InStringEsc,
                c if c < 0x20 => return Err(syntax(c, "in string literal")),
                _ => {}
            },
            State::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => self.state = State::InString,
                b'u' => self.state = State::InStringEscU(0),
                c => return Err(syntax(c, "in string escape code")),
            },
            State::InStringEscU(seen) => {
                if !c.is_ascii_hexdigit() {
                    return Err(syntax(c, "in \\u hexadecimal character escape"));
                }
                self.state = if seen == 3 { State::InString } else { State::InStringEscU(seen + 1) };
            }
            State::Neg => match c {
                b'0' => self.state = State::Zero,
                b'1'..=b'9' => self.state = State::One,
                c => return Err(syntax(c, "in numeric literal")),
            },
            State::One if c.is_ascii_digit() => {}
            State::One | State::Zero => match c {
                b'.' => self.state = State::Dot,
                b'e' | b'E' => self.state = State::E,
                c => return self.end_value(c),
            },
            State::Dot if c.is_ascii_digit() => self.state = State::Dot0,
            State::Dot => return Err(syntax(c, "after decimal point in numeric literal")),
            State::Dot0 => match c {
                c if c.is_ascii_digit() => {}
                b'e' | b'E' => self.state = State::E,
                c => return self.end_value(c),
            },
            State::E if c == b'+' || c == b'-' => self.state = State::ESign,
            State::E | State::ESign if c.is_ascii_digit() => self.state = State::E0,
            State::E | State::ESign => return Err(syntax(c, "in exponent of numeric literal")),
            State::E0 if c.is_ascii_digit() => {}
            State::E0 => return self.end_value(c),
            State::Literal(rest, word) => match rest.split_first() {
                Some((&want, rest)) if want == c => {
                    self.state = if rest.is_empty() { State::EndValue } else { State::Literal(rest, word) };
                }
                Some((&want, _)) => {
                    return Err(syntax(c, &format!("in literal {word} (expecting {})", quote_char(want))));
                }
                None => return self.end_value(c),
            },
        }
        Ok(())
    }

    fn begin_value(&mut self, c: u8) -> Result<(), String> {
        self.state = match c {
            c if is_space(c) => return Ok(()),
            b'{' => {
                self.push(c, Open::ObjectKey)?;
                State::BeginStringOrEmpty
            }
            b'[' => {
                self.push(c, Open::ArrayValue)?;
                State::BeginValueOrEmpty
            }
            b'"' => State::InString,
            b'-' => State::Neg,
            b'0' => State::Zero,
            b'1'..=b'9' => State::One,
            b't' => State::Literal(b"rue", "true"),
            b'f' => State::Literal(b"alse", "false"),
            b'n' => State::Literal(b"ull", "null"),
            c => return Err(syntax(c, "looking for beginning of value")),
        };
        Ok(())
    }

    fn end_value(&mut self, c: u8) -> Result<(), String> {
        let Some(&top) = self.stack.last() else {
            self.state = State::EndTop;
            return self.step(c);
        };
        if is_space(c) {
            self.state = State::EndValue;
            return Ok(());
        }
        match (top, c) {
            (Open::ObjectKey, b':') => {
                if let Some(t) = self.stack.last_mut() {
                    *t = Open::ObjectValue;
                }
                self.state = State::BeginValue;
            }
            (Open::ObjectKey, c) => return Err(syntax(c, "after object key")),
            (Open::ObjectValue, b',') => {
                if let Some(t) = self.stack.last_mut() {
                    *t = Open::ObjectKey;
                }
                self.state = State::BeginString;
            }
            (Open::ObjectValue, b'}') => self.pop(),
            (Open::ObjectValue, c) => return Err(syntax(c, "after object key:value pair")),
            (Open::ArrayValue, b',') => self.state = State::BeginValue,
            (Open::ArrayValue, b']') => self.pop(),
            (Open::ArrayValue, c) => return Err(syntax(c, "after array element")),
        }
        Ok(())
    }
}

/// A member value as decoding meets it; Go's type errors name the kind.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    Object,
    Array,
    String(String),
    /// The number's literal text, which a failed integer conversion quotes.
    Number(String),
    Bool,
    Null,
}

impl Member {
    fn kind(&self) -> &'static str {
        match self {
            Member::Object => "object",
            Member::Array => "array",
            Member::String(_) => "string",
            Member::Number(_) => "number",
            Member::Bool => "bool",
            Member::Null => "null",
        }
    }
}

/// Reads a document `check_valid` accepted; out-of-range reads end quietly instead of
/// panicking, though a valid document never makes them.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(is_space) {
            self.pos += 1;
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.data.get(at..at + 4)?;
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    }

    /// A string at `"`, unquoted as Go does: lone surrogates and bytes that are not
    /// UTF-8 become U+FFFD, one per byte.
    fn string(&mut self) -> String {
        let mut out = String::new();
        self.pos += 1;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\\' => self.escape(&mut out),
                c if c.is_ascii() => {
                    out.push(char::from(c));
                    self.pos += 1;
                }
                c => {
                    let width = match c {
                        0xf0..=0xf7 => 4,
                        0xe0..=0xef => 3,
                        _ => 2,
                    };
                    let rune = self.data.get(self.pos..self.pos + width).and_then(|b| std::str::from_utf8(b).ok());
                    match rune {
                        Some(r) => {
                            out.push_str(r);
                            self.pos += width;
                        }
                        None => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pos += 1;
                        }
                    }
                }
            }
        }
        out
    }

    fn escape(&mut self, out: &mut String) {
        let Some(c) = self.data.get(self.pos + 1).copied() else {
            self.pos += 1;
            return;
        };
        self.pos += 2;
        let simple = match c {
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4(self.pos).unwrap_or(0xfffd);
                self.pos += 4;
                let rune = if (0xd800..0xdc00).contains(&unit) {
                    // A high surrogate pairs with a following `\uDC00`-`\uDFFF`, else it
                    // stands alone and is replaced (the next escape is read on its own).
                    let low = (self.data.get(self.pos..self.pos + 2) == Some(b"\\u"))
                        .then(|| self.hex4(self.pos + 2))
                        .flatten()
                        .filter(|low| (0xdc00..0xe000).contains(low));
                    match low {
                        Some(low) => {
                            self.pos += 6;
                            char::from_u32(0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00))
                        }
                        None => None,
                    }
                } else {
                    char::from_u32(unit)
                };
                rune.unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            c => char::from(c),
        };
        out.push(simple);
    }

    /// Skips an object or array at its opening bracket.
    fn skip_composite(&mut self) {
        let mut depth = 0usize;
        let mut in_string = false;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match (in_string, c) {
                (true, b'\\') => self.pos += 1,
                (true, b'"') | (false, b'"') => in_string = !in_string,
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }

    fn member(&mut self) -> Member {
        self.skip_space();
        match self.peek() {
            Some(b'{') => {
                self.skip_composite();
                Member::Object
            }
            Some(b'[') => {
                self.skip_composite();
                Member::Array
            }
            Some(b'"') => Member::String(self.string()),
            Some(b't') | Some(b'f') => {
                self.pos += if self.peek() == Some(b't') { 4 } else { 5 };
                Member::Bool
            }
            Some(b'n') => {
                self.pos += 4;
                Member::Null
            }
            _ => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E')) {
                    self.pos += 1;
                }
                Member::Number(String::from_utf8_lossy(&self.data[start..self.pos]).into_owned())
            }
        }
    }
}

/// The members of `continueToken`, by their JSON names.
const FIELDS: [&str; 3] = ["v", "rv", "start"];

/// Go's field lookup: the exact name, else a case-insensitive match under Unicode simple
/// folding (where `ſ` is an `s` and the Kelvin sign a `k`).
fn field_of(key: &str) -> Option<&'static str> {
    let fold = |c: char| match c {
        '\u{17f}' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    };
    FIELDS
        .iter()
        .copied()
        .find(|name| *name == key)
        .or_else(|| FIELDS.iter().copied().find(|name| key.chars().map(fold).eq(name.chars().map(fold))))
}

/// Stores one member as Go's `literalStore` would, or the type error it would save.
fn store(token: &mut Token, field: &'static str, value: Member) -> Result<(), String> {
    let mismatch = |what: String, ty: &str| {
        Err(format!("json: cannot unmarshal {what} into Go struct field continueToken.{field} of type {ty}"))
    };
    match (field, value) {
        (_, Member::Null) => Ok(()),
        ("rv", Member::Number(n)) => match n.parse::<i64>() {
            Ok(rv) => {
                token.rv = rv;
                Ok(())
            }
            Err(_) => mismatch(format!("number {n}"), "int64"),
        },
        ("rv", other) => mismatch(other.kind().to_string(), "int64"),
        (field, Member::String(s)) => {
            if field == "v" {
                token.v = s;
            } else {
                token.start = s;
            }
            Ok(())
        }
        (_, other) => mismatch(other.kind().to_string(), "string"),
    }
}

/// `json.Unmarshal(data, &continueToken{})`: Go's syntax error, else its first type
/// error (decoding goes on past one, so later members still land), else the token.
pub fn unmarshal_token(data: &[u8]) -> Result<Token, String> {
    check_valid(data)?;
    let mut reader = Reader { data, pos: 0 };
    let mut token = Token::default();
    match reader.member() {
        Member::Null => return Ok(token),
        Member::Object => {}
        other => {
            return Err(format!("json: cannot unmarshal {} into Go value of type storage.continueToken", other.kind()));
        }
    }
    // Read the object's members again, from just inside its brace.
    reader.pos = data.iter().position(|&c| c == b'{').map_or(data.len(), |p| p + 1);
    let mut first_error = None;
    loop {
        reader.skip_space();
        match reader.peek() {
            Some(b'"') => {}
            Some(b',') => {
                reader.pos += 1;
                continue;
            }
            _ => break,
        }
        let key = reader.string();
        reader.skip_space();
        reader.pos += 1; // the `:`
        let value = reader.member();
        if let Some(field) = field_of(&key)
            && let Err(e) = store(&mut token, field, value)
        {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(token), Err)
}
