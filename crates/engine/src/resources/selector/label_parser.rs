//! Label selector text read as apimachinery's `labels.Parse` reads it: a byte lexer
//! (`Lexer`) feeding a recursive-descent parser (`Parser`), with Go's exact error
//! sentences, since clients and tests compare them verbatim.
//!
//! Everything here is pure and linear in the input: the lexer advances at least one byte
//! per token and the parser consumes at least one token per step, so no input can make it
//! loop or panic.

use super::LabelRequirement;
use crate::field::{FieldError, aggregate_message};
use crate::schema::names::{is_qualified_name, is_valid_label_value};
use std::collections::BTreeSet;

/// The lexer's tokens (Go's `Token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// A run of special symbols that is no operator. Go keeps it, though every single
    /// special symbol is an operator, so it cannot actually be produced.
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// Go's `string2token`: the literals that are tokens rather than identifiers.
fn token_of(literal: &[u8]) -> Option<Token> {
    Some(match literal {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Go's `Lexer`. It reads bytes and, like Go, takes a NUL byte for the end of the text
/// where a token starts (and as a silent separator inside one): `%00` in a query behaves
/// as it does against kube-apiserver.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    /// Only ever called right after a `read` that returned a byte, as in Go.
    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let mut buffer = Vec::new();
        loop {
            match self.read() {
                0 => break,
                b if is_special_symbol(b) || is_whitespace(b) => {
                    self.unread();
                    break;
                }
                b => buffer.push(b),
            }
        }
        let token = token_of(&buffer).unwrap_or(Token::Identifier);
        (token, String::from_utf8_lossy(&buffer).into_owned())
    }

    /// The longest run of special symbols that is an operator (`!=`, `==`, ...).
    fn scan_special_symbol(&mut self) -> (Token, String) {
        let mut buffer = Vec::new();
        let mut last: Option<(Token, usize)> = None;
        loop {
            match self.read() {
                0 => break,
                b if is_special_symbol(b) => {
                    buffer.push(b);
                    if let Some(token) = token_of(&buffer) {
                        last = Some((token, buffer.len()));
                    } else if last.is_some() {
                        self.unread();
                        break;
                    }
                }
                _ => {
                    self.unread();
                    break;
                }
            }
        }
        match last {
            Some((token, len)) => (token, String::from_utf8_lossy(&buffer[..len]).into_owned()),
            None => (Token::Error, format!("error expected: keyword found '{}'", String::from_utf8_lossy(&buffer))),
        }
    }

    fn lex(&mut self) -> (Token, String) {
        let mut b = self.read();
        while is_whitespace(b) {
            b = self.read();
        }
        match b {
            0 => (Token::EndOfString, String::new()),
            b if is_special_symbol(b) => {
                self.unread();
                self.scan_special_symbol()
            }
            _ => {
                self.unread();
                self.scan_id_or_keyword()
            }
        }
    }
}

/// Where a token is read: `in` and `notin` are operators only after a key
/// (`x in (in)` selects the value `in`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// The operators of `selection.Operator` a requirement can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Equals,
    NotEquals,
    GreaterThan,
    LessThan,
    Exists,
    DoesNotExist,
}

/// Go's `Parser`: the scanned tokens and a cursor that never passes the final
/// `EndOfString`.
struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn new(selector: &str) -> Self {
        let mut lexer = Lexer { s: selector.as_bytes(), pos: 0 };
        let mut items = Vec::new();
        loop {
            let (token, literal) = lexer.lex();
            items.push((token, literal));
            if token == Token::EndOfString {
                break;
            }
        }
        Parser { items, position: 0 }
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        let (token, literal) = match self.items.get(self.position).or(self.items.last()) {
            Some((token, literal)) => (*token, literal.clone()),
            None => (Token::EndOfString, String::new()),
        };
        match (context, token) {
            (Context::Values, Token::In | Token::NotIn) => (Token::Identifier, literal),
            _ => (token, literal),
        }
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        let item = self.lookahead(context);
        if self.position < self.items.len() {
            self.position += 1;
        }
        item
    }

    fn parse(&mut self) -> Result<Vec<LabelRequirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (token, literal) = self.lookahead(Context::Values);
            match token {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self.parse_requirement().map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (token, literal) = self.consume(Context::Values);
                    match token {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (next, literal) = self.lookahead(Context::Values);
                            if next != Token::Identifier && next != Token::DoesNotExist {
                                return Err(format!("found '{literal}', expected: identifier after ','"));
                            }
                        }
                        _ => return Err(format!("found '{literal}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => return Err(format!("found '{literal}', expected: !, identifier, or 'end of string'")),
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<LabelRequirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        let (operator, values) = match operator {
            Some(op @ (Operator::Exists | Operator::DoesNotExist)) => (op, Vec::new()),
            _ => {
                let op = self.parse_operator()?;
                let values = match op {
                    Operator::In | Operator::NotIn => self.parse_values()?,
                    _ => self.parse_exact_value()?,
                };
                (op, values.into_iter().collect())
            }
        };
        new_requirement(key, operator, values)
    }

    /// The key, with `Exists`/`DoesNotExist` when nothing but `,` or the end follows it.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut operator = None;
        let (mut token, mut literal) = self.consume(Context::Values);
        if token == Token::DoesNotExist {
            operator = Some(Operator::DoesNotExist);
            (token, literal) = self.consume(Context::Values);
        }
        if token != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        // The parser's field path is nil: Go prints it as `<nil>`.
        invalid_if("<nil>", &literal, is_qualified_name(&literal)).map_err(|e| e.to_string())?;
        let (next, _) = self.lookahead(Context::Values);
        if matches!(next, Token::EndOfString | Token::Comma) && operator.is_none() {
            operator = Some(Operator::Exists);
        }
        Ok((literal, operator))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (token, literal) = self.consume(Context::KeyAndOperator);
        Ok(match token {
            Token::In => Operator::In,
            Token::Equals | Token::DoubleEquals => Operator::Equals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => return Err(format!("found '{literal}', expected: in, notin, =, ==, !=, gt, lt")),
        })
    }

    /// `(a,b,c)`: a set, where empty members are the empty string (`()` is `{""}`).
    fn parse_values(&mut self) -> Result<BTreeSet<String>, String> {
        let (token, literal) = self.consume(Context::Values);
        if token != Token::OpenPar {
            return Err(format!("found '{literal}' expected: '('"));
        }
        let (token, literal) = self.lookahead(Context::Values);
        match token {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                match self.consume(Context::Values) {
                    (Token::ClosedPar, _) => Ok(set),
                    // Go reports the token seen before the list here.
                    _ => Err(format!("found '{literal}', expected: ')'")),
                }
            }
            Token::ClosedPar => {
                self.consume(Context::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{literal}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            let (token, literal) = self.consume(Context::Values);
            match token {
                Token::Identifier => {
                    set.insert(literal);
                    let (next, literal) = self.lookahead(Context::Values);
                    match next {
                        Token::Comma => {}
                        Token::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{literal}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    // `(,`, `,)` and `,,` each stand for the empty value.
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    match self.lookahead(Context::Values).0 {
                        Token::ClosedPar => {
                            set.insert(String::new());
                            return Ok(set);
                        }
                        // Go consumes the second comma of `,,` here, so `(x,,)` finds its
                        // `)` where it wants a value and is refused, while `(x,,,)` is not.
                        Token::Comma => {
                            self.consume(Context::Values);
                            set.insert(String::new());
                        }
                        _ => {}
                    }
                }
                _ => return Err(format!("found '{literal}', expected: ',', or identifier")),
            }
        }
    }

    fn parse_exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        if matches!(self.lookahead(Context::Values).0, Token::EndOfString | Token::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        match self.consume(Context::Values) {
            (Token::Identifier, literal) => Ok(BTreeSet::from([literal])),
            (_, literal) => Err(format!("found '{literal}', expected: identifier")),
        }
    }
}

/// A field error for `value` at `path` when a name check found problems.
fn invalid_if(path: &str, value: &str, problems: Vec<String>) -> Result<(), FieldError> {
    if problems.is_empty() { Ok(()) } else { Err(FieldError::invalid(path, value, problems.join("; "))) }
}

/// Go's `NewRequirement` for what the parser can hand it (one value for the exact and
/// ordered operators, a non-empty sorted set for `in`/`notin`, none otherwise): every
/// value problem, aggregated as `errors.NewAggregate` prints them.
fn new_requirement(key: String, operator: Operator, values: Vec<String>) -> Result<LabelRequirement, String> {
    let mut errors = Vec::new();
    let mut bound = 0i64;
    if matches!(operator, Operator::GreaterThan | Operator::LessThan) {
        for (i, v) in values.iter().enumerate() {
            match v.parse::<i64>() {
                Ok(n) => bound = n,
                Err(_) => errors.push(FieldError::invalid(
                    format!("values[{i}]"),
                    v.as_str(),
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                )),
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        if let Err(e) = invalid_if(&format!("values[{i}][{key}]"), v, is_valid_label_value(v)) {
            errors.push(e);
        }
    }
    if !errors.is_empty() {
        let mut seen = BTreeSet::new();
        errors.retain(|e| seen.insert(e.to_string()));
        return Err(aggregate_message(&errors));
    }
    let single = || values.first().cloned().unwrap_or_default();
    Ok(match operator {
        Operator::In => LabelRequirement::In(key, values.into_iter().collect()),
        Operator::NotIn => LabelRequirement::NotIn(key, values.into_iter().collect()),
        Operator::Equals => LabelRequirement::Equals(key, single()),
        Operator::NotEquals => LabelRequirement::NotEquals(key, single()),
        Operator::GreaterThan => LabelRequirement::GreaterThan(key, bound),
        Operator::LessThan => LabelRequirement::LessThan(key, bound),
        Operator::Exists => LabelRequirement::Exists(key),
        Operator::DoesNotExist => LabelRequirement::NotExists(key),
    })
}

/// `labels.Parse`: the requirements of `selector`, or Go's error sentence.
pub fn parse(selector: &str) -> Result<Vec<LabelRequirement>, String> {
    Parser::new(selector).parse()
}
