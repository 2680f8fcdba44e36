//! A parser for CEL expressions that keeps the source offset of every node where cel-go
//! reports it (the `.` of a selection, the `(` of a call, an operator, the `?` of a
//! conditional), which the `cel` crate's parser does not expose. It serves the type check
//! and the cost estimate, and it is the gate every rule passes before the `cel` crate
//! parses it: it enforces cel-go's limits (expression size, the two recursion limits) and
//! builds trees no deeper than cel-go's, so that no rule can exhaust a stack later.
//! Syntax it does not understand makes it give up ([`Failure::Unrecognized`]); the rule is
//! then not type-checked, and [`bounded`] decides whether the `cel` crate may see it.

use super::types::CelType;
use crate::schema::celcost::{EXPRESSION_SIZE_CODE_POINT_LIMIT, MAX_RECURSION_DEPTH};

/// One expression, the offset (bytes) cel-go reports it at, and its depth as cel-go's
/// parser counts it.
#[derive(Debug, Clone)]
pub struct Expr {
    /// Unique within one parse (the checker's type table is keyed by it).
    pub id: usize,
    pub pos: usize,
    /// The most selections, member calls, indexes, comparisons, arithmetic operators and
    /// conditionals on one path down from here: what cel-go's parser limits.
    pub depth: usize,
    pub kind: Kind,
}

impl Expr {
    /// Whether the expression refers to the variable `name` anywhere (cel-go's reference
    /// map holds it).
    pub fn references(&self, name: &str) -> bool {
        match &self.kind {
            Kind::Literal(..) => false,
            Kind::Ident(ident) => ident == name,
            Kind::Select(operand, _) => operand.references(name),
            Kind::Call { target, args, .. } => {
                target.as_ref().is_some_and(|t| t.references(name)) || args.iter().any(|a| a.references(name))
            }
            Kind::List(items) => items.iter().any(|i| i.references(name)),
            Kind::Map(entries) => entries.iter().any(|(k, v)| k.references(name) || v.references(name)),
        }
    }
}

/// The pseudo-function an optional entry of a list or map literal is parsed as: its value
/// must be an optional, and the literal holds what the optional holds.
pub const OPTIONAL_ENTRY: &str = "@optional_entry";

#[derive(Debug, Clone)]
pub enum Kind {
    /// A literal and its size as cel-go's estimator takes it (a string's code points, a
    /// byte string's bytes, 1 for the rest), with a string's value or an int's text as
    /// written (`None` for other literals).
    Literal(CelType, u64, Option<String>),
    Ident(String),
    Select(Box<Expr>, String),
    /// Functions and operators (`_==_`, `_[_]`, `@in`, `!_`, `_?_:_`), with their receiver.
    Call {
        function: String,
        target: Option<Box<Expr>>,
        args: Vec<Expr>,
    },
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Literal(CelType, u64, Option<String>),
    Ident(String),
    Punct(&'static str),
}

/// Two-character operators first, so that `<=` is not read as `<`.
const PUNCTS: [&str; 24] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", ",", "(", ")", "[", "]",
    "{", "}",
];

/// Why a source did not parse.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Over one of cel-go's limits: its message (reported at `<input>:-1:0`).
    Limit(String),
    /// Syntax this parser does not know, or a syntax error.
    Unrecognized,
}

/// cel-go's messages for its limits.
const TOO_DEEP: &str = "max recursion depth exceeded";
fn too_nested() -> Failure {
    Failure::Limit(format!("expression recursion limit exceeded: {MAX_RECURSION_DEPTH}"))
}

/// The size limit, checked before anything else as cel-go does.
fn size_limit(source: &str) -> Result<(), Failure> {
    let size = source.chars().count();
    if size > EXPRESSION_SIZE_CODE_POINT_LIMIT {
        return Err(Failure::Limit(format!(
            "expression code point size exceeds limit: size: {size}, limit {EXPRESSION_SIZE_CODE_POINT_LIMIT}"
        )));
    }
    Ok(())
}

/// Parses `source` within cel-go's limits.
pub fn parse(source: &str) -> Result<Expr, Failure> {
    size_limit(source)?;
    let tokens = lex(source).ok_or(Failure::Unrecognized)?;
    let mut p = Parser { tokens, at: 0, nesting: 0, next_id: 0 };
    let e = p.expr()?;
    if p.at == p.tokens.len() { Ok(e) } else { Err(Failure::Unrecognized) }
}

/// Whether a source [`parse`] did not recognize may be handed to the `cel` crate's
/// parser, whose recursion follows the parse tree: only when its bracket nesting and its
/// chains of operators and selections stay within cel-go's limits (the crate then reports
/// the syntax error). Otherwise the error cel-go's limits would most likely give.
pub fn bounded(source: &str) -> Result<(), Failure> {
    size_limit(source)?;
    let Some(tokens) = lex(source) else {
        // Not even tokens: count brackets, the only nesting possible.
        let mut depth = 0usize;
        for c in source.chars() {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth >= MAX_RECURSION_DEPTH {
                return Err(too_nested());
            }
        }
        return Ok(());
    };
    let (mut depth, mut chained) = (0usize, 0usize);
    for (tok, _) in &tokens {
        match tok {
            Tok::Punct("(" | "[" | "{") => depth += 1,
            Tok::Punct(")" | "]" | "}") => depth = depth.saturating_sub(1),
            // `||` and `&&` make flat parse trees; these make left-deep ones.
            Tok::Punct("||" | "&&" | "," | ":" | "?" | "!") => {}
            Tok::Punct(_) => chained += 1,
            _ => {}
        }
        if depth >= MAX_RECURSION_DEPTH {
            return Err(too_nested());
        }
    }
    if chained > MAX_RECURSION_DEPTH { Err(Failure::Limit(TOO_DEEP.into())) } else { Ok(()) }
}

fn lex(s: &str) -> Option<Vec<(Tok, usize)>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c.is_ascii_digit() {
            let (mut tok, end) = number(b, i)?;
            if let Tok::Literal(CelType::Int, _, text) = &mut tok {
                *text = Some(s[i..end].to_string());
            }
            out.push((tok, i));
            i = end;
        } else if c == b'"' || c == b'\'' {
            let end = string_end(b, i, false)?;
            let quoted = &s[i..end];
            out.push((Tok::Literal(CelType::String, string_size(quoted, false), unquote(quoted, false)), i));
            i = end;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &s[start..i];
            let quoted = matches!(b.get(i), Some(b'"' | b'\''));
            let prefix = word.to_ascii_lowercase();
            if quoted && matches!(prefix.as_str(), "r" | "b" | "rb" | "br") {
                let raw = prefix.contains('r');
                let end = string_end(b, i, raw)?;
                let quoted = &s[i..end];
                let (ty, value) = match prefix.contains('b') {
                    true => (CelType::Bytes, None),
                    false => (CelType::String, unquote(quoted, raw)),
                };
                out.push((Tok::Literal(ty, string_size(quoted, raw), value), start));
                i = end;
                continue;
            }
            let tok = match word {
                "true" | "false" => Tok::Literal(CelType::Bool, 1, None),
                "null" => Tok::Literal(CelType::Null, 1, None),
                "in" => Tok::Punct("in"),
                _ => Tok::Ident(word.to_string()),
            };
            out.push((tok, start));
        } else {
            let p = PUNCTS.iter().find(|p| s[i..].starts_with(**p))?;
            out.push((Tok::Punct(p), i));
            i += p.len();
        }
    }
    Some(out)
}

/// An int, uint or double literal at `i` and where it ends.
fn number(b: &[u8], mut i: usize) -> Option<(Tok, usize)> {
    let digits = |b: &[u8], mut i: usize, hex: bool| {
        while i < b.len() && (b[i].is_ascii_digit() || (hex && b[i].is_ascii_hexdigit())) {
            i += 1;
        }
        i
    };
    if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
        i = digits(b, i + 2, true);
    } else {
        i = digits(b, i, false);
        let mut float = false;
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i = digits(b, i + 1, false);
            float = true;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            i = digits(b, i, false);
            float = true;
        }
        if float {
            return Some((Tok::Literal(CelType::Double, 1, None), i));
        }
    }
    if matches!(b.get(i), Some(b'u' | b'U')) {
        return Some((Tok::Literal(CelType::Uint, 1, None), i + 1));
    }
    Some((Tok::Literal(CelType::Int, 1, None), i))
}

/// Where the string literal opening at `i` ends (single, double or triple quotes).
fn string_end(b: &[u8], i: usize, raw: bool) -> Option<usize> {
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < b.len() {
        if b[j] == b'\\' && !raw {
            j += 2;
            continue;
        }
        if b[j] == q && (!triple || (b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q))) {
            return Some(if triple { j + 3 } else { j + 1 });
        }
        if b[j] == b'\n' && !triple {
            return None;
        }
        j += 1;
    }
    None
}

/// The code points of a quoted literal's value (an escape sequence is one).
fn string_size(quoted: &str, raw: bool) -> u64 {
    let q = quoted.chars().next().unwrap_or('"');
    let triple = quoted.starts_with(&q.to_string().repeat(3)) && quoted.len() >= 6;
    let skip = if triple { 3 } else { 1 };
    let inner: Vec<char> = quoted.chars().collect();
    let inner = &inner[skip..inner.len().saturating_sub(skip).max(skip)];
    let mut count = 0u64;
    let mut i = 0;
    while i < inner.len() {
        if inner[i] == '\\' && !raw {
            i += match inner.get(i + 1) {
                Some('u') => 6,
                Some('U') => 10,
                Some('x' | 'X') => 4,
                Some('0'..='3') => 4,
                _ => 2,
            };
        } else {
            i += 1;
        }
        count += 1;
    }
    count
}

/// The value of a quoted string literal, its escapes decoded as cel-go's parser decodes
/// them; `None` for an escape this parser does not decode.
fn unquote(quoted: &str, raw: bool) -> Option<String> {
    let q = quoted.chars().next()?;
    let skip = if quoted.len() >= 6 && quoted.starts_with(&q.to_string().repeat(3)) { 3 } else { 1 };
    let inner = quoted.get(skip..quoted.len().checked_sub(skip)?)?;
    if raw {
        return Some(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let hex = |chars: &mut std::str::Chars, n: usize| {
            let digits: String = chars.by_ref().take(n).collect();
            u32::from_str_radix(&digits, 16).ok().filter(|_| digits.len() == n).and_then(char::from_u32)
        };
        out.push(match e {
            'a' | 'b' | 'f' | 'n' | 'r' | 't' | 'v' => crate::schema::fieldpath::control_escape(e)?,
            '\\' | '\'' | '"' | '`' | '?' => e,
            'x' | 'X' => hex(&mut chars, 2)?,
            'u' => hex(&mut chars, 4)?,
            'U' => hex(&mut chars, 8)?,
            '0'..='3' => {
                let digits: String = std::iter::once(e).chain(chars.by_ref().take(2)).collect();
                char::from_u32(u32::from_str_radix(&digits, 8).ok()?)?
            }
            _ => return None,
        });
    }
    Some(out)
}

struct Parser {
    tokens: Vec<(Tok, usize)>,
    at: usize,
    /// How many `expr` rules are open: cel-go's parse listener limits this.
    nesting: usize,
    next_id: usize,
}

/// Binary operators by precedence level, loosest first; the first two are the logical
/// ones, which cel-go balances.
const LEVELS: [&[(&str, &str)]; 5] = [
    &[("||", "_||_")],
    &[("&&", "_&&_")],
    &[("==", "_==_"), ("!=", "_!=_"), ("<=", "_<=_"), (">=", "_>=_"), ("<", "_<_"), (">", "_>_"), ("in", "@in")],
    &[("+", "_+_"), ("-", "_-_")],
    &[("*", "_*_"), ("/", "_/_"), ("%", "_%_")],
];

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at).map(|(t, _)| t)
    }

    fn pos(&self) -> usize {
        self.tokens.get(self.at).map_or(0, |(_, p)| *p)
    }

    fn eat(&mut self, p: &str) -> Option<usize> {
        let pos = self.pos();
        matches!(self.peek(), Some(Tok::Punct(t)) if *t == p).then(|| {
            self.at += 1;
            pos
        })
    }

    fn expect(&mut self, p: &str) -> Result<usize, Failure> {
        self.eat(p).ok_or(Failure::Unrecognized)
    }

    /// A node; `counted` when cel-go's parser counts it towards its depth limit.
    fn node(&mut self, pos: usize, kind: Kind, counted: bool) -> Result<Expr, Failure> {
        let below = match &kind {
            Kind::Literal(..) | Kind::Ident(_) => 0,
            Kind::Select(operand, _) => operand.depth,
            Kind::Call { target, args, .. } => {
                target.iter().map(|t| t.depth).chain(args.iter().map(|a| a.depth)).max().unwrap_or(0)
            }
            Kind::List(items) => items.iter().map(|i| i.depth).max().unwrap_or(0),
            Kind::Map(entries) => entries.iter().map(|(k, v)| k.depth.max(v.depth)).max().unwrap_or(0),
        };
        let depth = below + usize::from(counted);
        if depth > MAX_RECURSION_DEPTH {
            return Err(Failure::Limit(TOO_DEEP.into()));
        }
        self.next_id += 1;
        Ok(Expr { id: self.next_id, pos, depth, kind })
    }

    fn call(&mut self, function: &str, pos: usize, args: Vec<Expr>, counted: bool) -> Result<Expr, Failure> {
        self.node(pos, Kind::Call { function: function.to_string(), target: None, args }, counted)
    }

    fn expr(&mut self) -> Result<Expr, Failure> {
        self.nesting += 1;
        if self.nesting > MAX_RECURSION_DEPTH {
            return Err(too_nested());
        }
        let cond = self.binary(0)?;
        let e = if let Some(pos) = self.eat("?") {
            let then = self.binary(0)?;
            self.expect(":")?;
            let otherwise = self.expr()?;
            self.call("_?_:_", pos, vec![cond, then, otherwise], true)?
        } else {
            cond
        };
        self.nesting -= 1;
        Ok(e)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, Failure> {
        let Some(ops) = LEVELS.get(level) else { return self.unary() };
        let mut left = self.binary(level + 1)?;
        if level < 2 {
            let (token, function) = ops[0];
            let mut terms = vec![Some(left)];
            let mut positions = Vec::new();
            while let Some(pos) = self.eat(token) {
                positions.push(pos);
                terms.push(Some(self.binary(level + 1)?));
            }
            return match positions.len() {
                0 => terms.pop().flatten().ok_or(Failure::Unrecognized),
                n => self.balanced(function, &mut terms, &positions, 0, n - 1),
            };
        }
        'next: loop {
            for (token, function) in ops.iter() {
                if let Some(pos) = self.eat(token) {
                    let right = self.binary(level + 1)?;
                    left = self.call(function, pos, vec![left, right], true)?;
                    continue 'next;
                }
            }
            return Ok(left);
        }
    }

    /// cel-go's `logicManager`: a chain of `||` (or `&&`) as a balanced tree, so that
    /// long chains stay shallow: `terms[lo..=hi + 1]` joined by the operators at
    /// `positions[lo..=hi]`.
    fn balanced(
        &mut self,
        function: &str,
        terms: &mut [Option<Expr>],
        positions: &[usize],
        lo: usize,
        hi: usize,
    ) -> Result<Expr, Failure> {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            terms[mid].take().ok_or(Failure::Unrecognized)?
        } else {
            self.balanced(function, terms, positions, lo, mid - 1)?
        };
        let right = if mid == hi {
            terms[mid + 1].take().ok_or(Failure::Unrecognized)?
        } else {
            self.balanced(function, terms, positions, mid + 1, hi)?
        };
        self.call(function, positions[mid], vec![left, right], false)
    }

    /// `!`s or `-`s before a member: cel-go keeps one operator for an odd count, none
    /// for an even one.
    fn unary(&mut self) -> Result<Expr, Failure> {
        for (token, function) in [("!", "!_"), ("-", "-_")] {
            let Some(pos) = self.eat(token) else { continue };
            let mut count = 1;
            while self.eat(token).is_some() {
                count += 1;
            }
            let operand = self.member()?;
            if count % 2 == 0 {
                return Ok(operand);
            }
            // cel-go folds a negated number into the literal.
            if let (Kind::Literal(t @ (CelType::Int | CelType::Double), size, text), "-_") = (&operand.kind, function) {
                let kind = Kind::Literal(t.clone(), *size, text.as_ref().map(|digits| format!("-{digits}")));
                return self.node(pos, kind, false);
            }
            return self.call(function, pos, vec![operand], false);
        }
        self.member()
    }

    fn member(&mut self) -> Result<Expr, Failure> {
        let mut e = self.primary()?;
        loop {
            if let Some(pos) = self.eat(".") {
                let optional = self.eat("?").is_some();
                let field_pos = self.pos();
                let Some(Tok::Ident(field)) = self.peek().cloned() else { return Err(Failure::Unrecognized) };
                self.at += 1;
                if optional {
                    // cel-go's `_?._(operand, "field")`, at the `.`.
                    let size = field.chars().count() as u64;
                    let name = self.node(field_pos, Kind::Literal(CelType::String, size, Some(field)), false)?;
                    e = self.call("_?._", pos, vec![e, name], true)?;
                } else if let Some(open) = self.eat("(") {
                    let args = self.list_until(")")?;
                    let kind = Kind::Call { function: field, target: Some(Box::new(e)), args };
                    e = self.node(open, kind, true)?;
                } else {
                    e = self.node(pos, Kind::Select(Box::new(e), field), true)?;
                }
            } else if let Some(pos) = self.eat("[") {
                let function = if self.eat("?").is_some() { "_[?_]" } else { "_[_]" };
                let index = self.expr()?;
                self.expect("]")?;
                e = self.call(function, pos, vec![e, index], true)?;
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, Failure> {
        let pos = self.pos();
        let (tok, _) = self.tokens.get(self.at).cloned().ok_or(Failure::Unrecognized)?;
        self.at += 1;
        match tok {
            Tok::Literal(t, size, value) => self.node(pos, Kind::Literal(t, size, value), false),
            Tok::Ident(name) => match self.eat("(") {
                Some(open) => {
                    let args = self.list_until(")")?;
                    self.call(&name, open, args, false)
                }
                None => self.node(pos, Kind::Ident(name), false),
            },
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => {
                let mut items = Vec::new();
                while self.eat("]").is_none() {
                    items.push(self.entry()?);
                    if self.eat(",").is_none() {
                        self.expect("]")?;
                        break;
                    }
                }
                self.node(pos, Kind::List(items), false)
            }
            Tok::Punct("{") => {
                let mut entries = Vec::new();
                while self.eat("}").is_none() {
                    let optional = self.eat("?").is_some();
                    let key = self.expr()?;
                    self.expect(":")?;
                    let value = if optional { self.optional_entry()? } else { self.expr()? };
                    entries.push((key, value));
                    if self.eat(",").is_none() {
                        self.expect("}")?;
                        break;
                    }
                }
                self.node(pos, Kind::Map(entries), false)
            }
            _ => Err(Failure::Unrecognized),
        }
    }

    /// A list literal's item, `?x` being an optional one.
    fn entry(&mut self) -> Result<Expr, Failure> {
        if self.eat("?").is_some() { self.optional_entry() } else { self.expr() }
    }

    /// The value of an optional entry (`[?x]`, `{?k: x}`), as a call of [`OPTIONAL_ENTRY`]
    /// at the value, where cel-go reports a value that is no optional.
    fn optional_entry(&mut self) -> Result<Expr, Failure> {
        let value = self.expr()?;
        let pos = value.pos;
        self.call(OPTIONAL_ENTRY, pos, vec![value], false)
    }

    /// Comma-separated expressions up to `close` (a trailing comma allowed).
    fn list_until(&mut self, close: &str) -> Result<Vec<Expr>, Failure> {
        let mut items = Vec::new();
        while self.eat(close).is_none() {
            items.push(self.expr()?);
            if self.eat(",").is_none() {
                self.expect(close)?;
                break;
            }
        }
        Ok(items)
    }
}
