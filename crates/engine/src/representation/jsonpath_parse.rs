//! The parser of [`super::jsonpath`]: client-go's `util/jsonpath/parser.go`, rune for
//! rune, so that a path parses (or fails) exactly as kube-apiserver parses it, into the
//! nodes the evaluator walks.

/// Why a path did not parse or evaluate (kube's wording where it has one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JsonPathError(pub String);

pub(super) fn err<T>(msg: impl Into<String>) -> Result<T, JsonPathError> {
    Err(JsonPathError(msg.into()))
}

/// One `[start:end:step]` parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Param {
    pub value: i64,
    pub known: bool,
    pub derived: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Node {
    List(Vec<Node>),
    Text(String),
    Field(String),
    Array([Param; 3]),
    Filter { left: Vec<Node>, right: Vec<Node>, op: String },
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    Identifier(String),
}

pub(super) struct Parser<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    width: usize,
}

fn is_terminator(r: Option<char>) -> bool {
    match r {
        None => true,
        Some(c) => matches!(c, ' ' | '\t' | '\r' | '\n' | '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}'),
    }
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

/// Parses `text` as the inside of one action and returns its nodes (client-go's
/// `parseAction`).
pub(super) fn parse_action(text: &str) -> Result<Vec<Node>, JsonPathError> {
    let root = Parser::new(&format!("{{{text}}}")).parse()?;
    match root.into_iter().next() {
        Some(Node::List(nodes)) => Ok(nodes),
        _ => err(format!("invalid action {text}")),
    }
}

impl<'a> Parser<'a> {
    pub(super) fn new(input: &'a str) -> Self {
        Parser { input, pos: 0, start: 0, width: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.input[self.pos..]
    }

    fn next(&mut self) -> Option<char> {
        match self.rest().chars().next() {
            Some(c) => {
                self.width = c.len_utf8();
                self.pos += self.width;
                Some(c)
            }
            None => {
                self.width = 0;
                None
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn consume(&mut self) -> &'a str {
        let text = &self.input[self.start..self.pos];
        self.start = self.pos;
        text
    }

    pub(super) fn parse(mut self) -> Result<Vec<Node>, JsonPathError> {
        let mut root = Vec::new();
        loop {
            match self.rest().find('{') {
                Some(offset) => {
                    self.pos += offset;
                    if self.pos > self.start {
                        root.push(Node::Text(self.consume().to_string()));
                    }
                    self.pos += 1;
                    self.consume();
                    let mut list = Vec::new();
                    self.inside_action(&mut list)?;
                    root.push(Node::List(list));
                }
                None => {
                    self.pos = self.input.len();
                    if self.pos > self.start {
                        root.push(Node::Text(self.consume().to_string()));
                    }
                    return Ok(root);
                }
            }
        }
    }

    fn inside_action(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            let rest = self.rest();
            if rest.starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(());
            }
            if rest.starts_with("[?(") {
                self.filter(cur)?;
                continue;
            }
            if rest.starts_with("..") {
                self.recursive(cur)?;
                continue;
            }
            match self.next() {
                None | Some('\r' | '\n') => return err("unclosed action"),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.array(cur)?,
                Some(q @ ('"' | '\'')) => self.quote(cur, q)?,
                Some('.') => self.field(cur),
                Some(c) if c == '+' || c == '-' || c.is_ascii_digit() => {
                    self.backup();
                    self.number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.identifier(cur);
                }
                Some(c) => return err(format!("unrecognized character in action: U+{:04X} '{c}'", c as u32)),
            }
        }
    }

    fn identifier(&mut self, cur: &mut Vec<Node>) {
        loop {
            let r = self.next();
            if is_terminator(r) {
                self.backup();
                break;
            }
        }
        match self.consume() {
            "true" => cur.push(Node::Bool(true)),
            "false" => cur.push(Node::Bool(false)),
            other => cur.push(Node::Identifier(other.to_string())),
        }
    }

    fn recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        if cur.last() == Some(&Node::Recursive) {
            return err("invalid multiple recursive descent");
        }
        self.pos += 2;
        self.consume();
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.field(cur);
        }
        Ok(())
    }

    fn number(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || c.is_ascii_digit() => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let text = self.consume();
        if let Ok(i) = text.parse::<i64>() {
            cur.push(Node::Int(i));
        } else if let Ok(f) = text.parse::<f64>() {
            cur.push(Node::Float(f));
        } else {
            return err(format!("cannot parse number {text}"));
        }
        Ok(())
    }

    fn array(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated array"),
                Some(']') => break,
                _ => {}
            }
        }
        let text = self.consume();
        let mut text = &text[1..text.len() - 1];
        if text == "*" {
            text = ":";
        }
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() > 1 {
            let union = parts.iter().map(|p| parse_action(&format!("[{}]", p.trim()))).collect::<Result<_, _>>()?;
            cur.push(Node::Union(union));
            return Ok(());
        }
        if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') && !text[1..text.len() - 1].contains('\'')
        {
            cur.extend(parse_action(&format!(".{}", &text[1..text.len() - 1]))?);
            return Ok(());
        }
        let groups = slice_groups(text).ok_or_else(|| JsonPathError(format!("invalid array index {text}")))?;
        let mut params = [Param { value: 0, known: false, derived: false }; 3];
        for i in 0..3 {
            let mut g = groups[i];
            if !g.is_empty() {
                if i > 0 {
                    g = &g[1..];
                }
                if i > 0 && g.is_empty() {
                    params[i].known = false;
                } else {
                    params[i].known = true;
                    params[i].value =
                        g.parse().map_err(|_| JsonPathError(format!("array index {g} is not a number")))?;
                }
            } else if i == 1 {
                params[i] = Param { value: params[0].value + 1, known: true, derived: true };
            }
        }
        cur.push(Node::Array(params));
        Ok(())
    }

    fn filter(&mut self, cur: &mut Vec<Node>) -> Result<(), JsonPathError> {
        self.pos += 3;
        self.consume();
        let (mut begin, mut end, mut pair) = (false, false, '\0');
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated filter"),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    if self.input.as_bytes().get(self.pos.wrapping_sub(2)) != Some(&b'\\') && q == pair {
                        end = true;
                    }
                }
                Some(')') if begin == end => break,
                _ => {}
            }
        }
        if self.next() != Some(']') {
            return err("unclosed array expect ]");
        }
        let text = self.consume();
        let text = &text[..text.len() - 2];
        match split_comparison(text) {
            None => cur.push(Node::Filter { left: parse_action(text)?, right: vec![], op: "exists".into() }),
            Some((left, op, right)) => {
                cur.push(Node::Filter { left: parse_action(left)?, right: parse_action(right)?, op: op.to_string() })
            }
        }
        Ok(())
    }

    fn quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), JsonPathError> {
        loop {
            match self.next() {
                None | Some('\n') => return err("unterminated quoted string"),
                Some(c) if c == end && self.input.as_bytes().get(self.pos.wrapping_sub(2)) != Some(&b'\\') => break,
                _ => {}
            }
        }
        let value = self.consume();
        let text =
            unquote(value).ok_or_else(|| JsonPathError(format!("unquote string {value} error invalid syntax")))?;
        cur.push(Node::Text(text));
        Ok(())
    }

    fn field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        loop {
            match self.next() {
                Some('\\') => {
                    self.next();
                }
                r if is_terminator(r) => {
                    self.backup();
                    break;
                }
                _ => {}
            }
        }
        let value = self.consume();
        if value == "*" {
            cur.push(Node::Wildcard);
        } else {
            cur.push(Node::Field(value.replace('\\', "")));
        }
    }
}

/// The three groups of `^(-?[\d]*)(:-?[\d]*)?(:-?[\d]*)?$`.
fn slice_groups(text: &str) -> Option<[&str; 3]> {
    fn number_end(s: &str, from: usize) -> usize {
        let b = s.as_bytes();
        let mut i = from;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    }
    let first = number_end(text, 0);
    let mut groups = [&text[..first], "", ""];
    let mut pos = first;
    for group in groups.iter_mut().skip(1) {
        if text.as_bytes().get(pos) == Some(&b':') {
            let end = number_end(text, pos + 1);
            *group = &text[pos..end];
            pos = end;
        }
    }
    (pos == text.len()).then_some(groups)
}

/// `^([^!<>=]+)([!<>=]+)(.+?)$`: left side, operator, right side.
fn split_comparison(text: &str) -> Option<(&str, &str, &str)> {
    let is_op = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let op_start = text.find(is_op)?;
    if op_start == 0 || text.contains('\n') {
        return None;
    }
    let after = &text[op_start..];
    let mut op_len = after.find(|c: char| !is_op(c)).unwrap_or(after.len());
    if op_len == after.len() {
        // The right side must keep at least one character.
        if op_len < 2 {
            return None;
        }
        op_len -= 1;
    }
    Some((&text[..op_start], &after[..op_len], &after[op_len..]))
}

/// Go's `strconv.Unquote`, extended to single-quoted strings of any length.
fn unquote(s: &str) -> Option<String> {
    let quote = s.chars().next()?;
    if s.len() < 2 || !s.ends_with(quote) || !matches!(quote, '"' | '\'') {
        return None;
    }
    let inner = &s[1..s.len() - 1];
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        let hex = |chars: &mut std::str::Chars, n: usize| -> Option<u32> {
            let digits: String = chars.by_ref().take(n).collect();
            if digits.len() != n {
                return None;
            }
            u32::from_str_radix(&digits, 16).ok()
        };
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' => out.push('\\'),
            '\'' | '"' => out.push(e),
            'x' => out.push(char::from_u32(hex(&mut chars, 2)?)?),
            'u' => out.push(char::from_u32(hex(&mut chars, 4)?)?),
            'U' => out.push(char::from_u32(hex(&mut chars, 8)?)?),
            '0'..='7' => {
                let rest: String = chars.by_ref().take(2).collect();
                let v = u32::from_str_radix(&format!("{e}{rest}"), 8).ok().filter(|v| *v <= 255)?;
                out.push(char::from_u32(v)?);
            }
            _ => return None,
        }
    }
    Some(out)
}
