//! A parser for CEL expressions that keeps the source offset of every node where cel-go
//! reports it (the `.` of a selection, the `(` of a call, an operator, the `?` of a
//! conditional), which the `cel` crate's parser does not expose. It only serves the type
//! check: anything it does not understand makes it give up (`None`), and the rule is then
//! not type-checked.

use super::types::CelType;

/// One expression and the offset (bytes) cel-go reports it at.
#[derive(Debug, Clone)]
pub struct Expr {
    pub pos: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Literal(CelType),
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
    Literal(CelType),
    Ident(String),
    Punct(&'static str),
}

/// Two-character operators first, so that `<=` is not read as `<`.
const PUNCTS: [&str; 24] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "+", "-", "*", "/", "%", "!", "?", ":", ".", ",", "(", ")", "[", "]",
    "{", "}",
];

/// Parses `source`, or `None` when it uses syntax this parser does not know.
pub fn parse(source: &str) -> Option<Expr> {
    let tokens = lex(source)?;
    let mut p = Parser { tokens, at: 0, depth: 0 };
    let e = p.expr()?;
    (p.at == p.tokens.len()).then_some(e)
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
            let (tok, end) = number(b, i)?;
            out.push((tok, i));
            i = end;
        } else if c == b'"' || c == b'\'' {
            let end = string_end(b, i, false)?;
            out.push((Tok::Literal(CelType::String), i));
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
                let end = string_end(b, i, prefix.contains('r'))?;
                let ty = if prefix.contains('b') { CelType::Bytes } else { CelType::String };
                out.push((Tok::Literal(ty), start));
                i = end;
                continue;
            }
            let tok = match word {
                "true" | "false" => Tok::Literal(CelType::Bool),
                "null" => Tok::Literal(CelType::Null),
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
            return Some((Tok::Literal(CelType::Double), i));
        }
    }
    if matches!(b.get(i), Some(b'u' | b'U')) {
        return Some((Tok::Literal(CelType::Uint), i + 1));
    }
    Some((Tok::Literal(CelType::Int), i))
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

/// cel-go's parser limits nesting too; deeper expressions are left unchecked.
const MAX_DEPTH: usize = 100;

struct Parser {
    tokens: Vec<(Tok, usize)>,
    at: usize,
    depth: usize,
}

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

    fn call(function: &str, pos: usize, args: Vec<Expr>) -> Expr {
        Expr { pos, kind: Kind::Call { function: function.to_string(), target: None, args } }
    }

    fn expr(&mut self) -> Option<Expr> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return None;
        }
        let cond = self.binary(0)?;
        let e = if let Some(pos) = self.eat("?") {
            let then = self.binary(0)?;
            self.eat(":")?;
            let otherwise = self.expr()?;
            Self::call("_?_:_", pos, vec![cond, then, otherwise])
        } else {
            cond
        };
        self.depth -= 1;
        Some(e)
    }

    /// Binary operators by precedence level, loosest first.
    fn binary(&mut self, level: usize) -> Option<Expr> {
        const LEVELS: [&[(&str, &str)]; 5] = [
            &[("||", "_||_")],
            &[("&&", "_&&_")],
            &[
                ("==", "_==_"),
                ("!=", "_!=_"),
                ("<=", "_<=_"),
                (">=", "_>=_"),
                ("<", "_<_"),
                (">", "_>_"),
                ("in", "@in"),
            ],
            &[("+", "_+_"), ("-", "_-_")],
            &[("*", "_*_"), ("/", "_/_"), ("%", "_%_")],
        ];
        let Some(ops) = LEVELS.get(level) else { return self.unary() };
        let mut left = self.binary(level + 1)?;
        'next: loop {
            for (token, function) in ops.iter() {
                if let Some(pos) = self.eat(token) {
                    let right = self.binary(level + 1)?;
                    left = Self::call(function, pos, vec![left, right]);
                    continue 'next;
                }
            }
            return Some(left);
        }
    }

    fn unary(&mut self) -> Option<Expr> {
        for (token, function) in [("!", "!_"), ("-", "-_")] {
            if let Some(pos) = self.eat(token) {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return None;
                }
                let operand = self.unary()?;
                self.depth -= 1;
                // cel-go folds a negated number into the literal.
                if let (Kind::Literal(t @ (CelType::Int | CelType::Double)), "-_") = (&operand.kind, function) {
                    return Some(Expr { pos, kind: Kind::Literal(t.clone()) });
                }
                return Some(Self::call(function, pos, vec![operand]));
            }
        }
        self.member()
    }

    fn member(&mut self) -> Option<Expr> {
        let mut e = self.primary()?;
        loop {
            if let Some(pos) = self.eat(".") {
                let Some(Tok::Ident(field)) = self.peek().cloned() else { return None };
                self.at += 1;
                if let Some(open) = self.eat("(") {
                    let args = self.list_until(")")?;
                    e = Expr { pos: open, kind: Kind::Call { function: field, target: Some(Box::new(e)), args } };
                } else {
                    e = Expr { pos, kind: Kind::Select(Box::new(e), field) };
                }
            } else if let Some(pos) = self.eat("[") {
                let index = self.expr()?;
                self.eat("]")?;
                e = Self::call("_[_]", pos, vec![e, index]);
            } else {
                return Some(e);
            }
        }
    }

    fn primary(&mut self) -> Option<Expr> {
        let pos = self.pos();
        let (tok, _) = self.tokens.get(self.at)?.clone();
        self.at += 1;
        match tok {
            Tok::Literal(t) => Some(Expr { pos, kind: Kind::Literal(t) }),
            Tok::Ident(name) => match self.eat("(") {
                Some(open) => {
                    let args = self.list_until(")")?;
                    Some(Self::call(&name, open, args))
                }
                None => Some(Expr { pos, kind: Kind::Ident(name) }),
            },
            Tok::Punct("(") => {
                let e = self.expr()?;
                self.eat(")")?;
                Some(e)
            }
            Tok::Punct("[") => Some(Expr { pos, kind: Kind::List(self.list_until("]")?) }),
            Tok::Punct("{") => {
                let mut entries = Vec::new();
                while self.eat("}").is_none() {
                    let key = self.expr()?;
                    self.eat(":")?;
                    entries.push((key, self.expr()?));
                    if self.eat(",").is_none() {
                        self.eat("}")?;
                        break;
                    }
                }
                Some(Expr { pos, kind: Kind::Map(entries) })
            }
            _ => None,
        }
    }

    /// Comma-separated expressions up to `close` (a trailing comma allowed).
    fn list_until(&mut self, close: &str) -> Option<Vec<Expr>> {
        let mut items = Vec::new();
        while self.eat(close).is_none() {
            items.push(self.expr()?);
            if self.eat(",").is_none() {
                self.eat(close)?;
                break;
            }
        }
        Some(items)
    }
}
