//! The string functions whose answers in kube-cel differ from cel-go's (the strings
//! extension kube 1.32 serves, and regular expressions): `charAt`, `indexOf`, `replace`,
//! `lastIndexOf` and `substring` count code points and fail as cel-go does (`index out of
//! range: 10`, `invalid substring range. start: 2, end: 1`, a negative offset refused, an
//! offset past the end found nowhere), `replace` with a negative count replaces all; a pattern Go's `regexp` refuses fails with Go's
//! words (`error parsing regexp: missing closing ): ...`).
//!
//! `indexOf` and `lastIndexOf` of lists, and the matching itself, stay kube-cel's.

use super::celstd::{Handed, kube};
use crate::schema::go_regexp;
use kube_cel::cel::extractors::{Arguments, This};
use kube_cel::cel::objects::Value;
use kube_cel::cel::{Context, ExecutionError, FunctionContext, ResolveResult};
use std::sync::Arc;

/// Adds the functions to `ctx` (after kube-cel's, which they replace).
pub fn register(ctx: &mut Context) {
    ctx.add_function("charAt", char_at);
    ctx.add_function("indexOf", index_of);
    ctx.add_function("lastIndexOf", last_index_of);
    ctx.add_function("substring", substring);
    ctx.add_function("replace", replace);
    ctx.add_function("split", split);
    ctx.add_function("matches", matches);
    ctx.add_function("find", find);
    ctx.add_function("findAll", find_all);
}

fn error(function: &str, words: String) -> ExecutionError {
    ExecutionError::function_error(function, words)
}

fn out_of_range(function: &str, i: i64) -> ExecutionError {
    error(function, format!("index out of range: {i}"))
}

fn string(s: String) -> Value {
    Value::String(Arc::new(s))
}

/// An index into `len` code points (`None` when negative or past the end).
fn within(i: i64, len: usize) -> Option<usize> {
    usize::try_from(i).ok().filter(|i| *i <= len)
}

fn char_at(This(this): This<Arc<String>>, i: i64) -> ResolveResult {
    let chars: Vec<char> = this.chars().collect();
    let at = within(i, chars.len()).ok_or_else(|| out_of_range("charAt", i))?;
    Ok(string(chars.get(at).map(char::to_string).unwrap_or_default()))
}

fn substring(This(this): This<Arc<String>>, Arguments(args): Arguments) -> ResolveResult {
    let chars: Vec<char> = this.chars().collect();
    let (start, end) = match args.as_slice() {
        [Value::Int(start)] => (*start, None),
        [Value::Int(start), Value::Int(end)] => (*start, Some(*end)),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    if let Some(end) = end
        && start > end
    {
        return Err(error("substring", format!("invalid substring range. start: {start}, end: {end}")));
    }
    let from = within(start, chars.len()).ok_or_else(|| out_of_range("substring", start))?;
    let to = match end {
        Some(end) => within(end, chars.len()).ok_or_else(|| out_of_range("substring", end))?,
        None => chars.len(),
    };
    Ok(string(chars[from..to].iter().collect()))
}

/// An `indexOf`-like call on a string: its code points, those searched for, the offset.
struct Search {
    chars: Vec<char>,
    sub: Vec<char>,
    offset: Option<i64>,
}

/// The search of an `indexOf`-like call; `None` for a list's.
fn search(this: &Value, args: &[Value]) -> Result<Option<Search>, ExecutionError> {
    let Value::String(s) = this else { return Ok(None) };
    let (sub, offset) = match args {
        [Value::String(sub)] => (sub, None),
        [Value::String(sub), Value::Int(offset)] => (sub, Some(*offset)),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    Ok(Some(Search { chars: s.chars().collect(), sub: sub.chars().collect(), offset }))
}

fn found(at: Option<usize>) -> Value {
    Value::Int(at.and_then(|i| i64::try_from(i).ok()).unwrap_or(-1))
}

/// Go's `strings.Replace`: `n` replacements at most, all when `n` is negative.
fn replace(This(this): This<Arc<String>>, Arguments(args): Arguments) -> ResolveResult {
    let (from, to, n) = match args.as_slice() {
        [Value::String(from), Value::String(to)] => (from, to, -1),
        [Value::String(from), Value::String(to), Value::Int(n)] => (from, to, *n),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    Ok(string(match usize::try_from(n) {
        Ok(n) => this.replacen(from.as_str(), to, n),
        Err(_) => this.replace(from.as_str(), to),
    }))
}

/// cel-go's `indexOfOffset`.
fn index_of(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    let Some(Search { chars, sub, offset }) = search(&this, &args)? else {
        return kube(Handed::IndexOf, [this].into_iter().chain(args.iter().cloned()).collect());
    };
    let offset = offset.unwrap_or(0);
    if sub.is_empty() {
        return Ok(Value::Int(offset));
    }
    let start = usize::try_from(offset).map_err(|_| out_of_range("indexOf", offset))?;
    if start >= chars.len() {
        return Ok(Value::Int(-1));
    }
    Ok(found((start..chars.len()).find(|&i| chars[i..].starts_with(&sub))))
}

/// cel-go's `lastIndexOf`/`lastIndexOfOffset` (the offset is where a match may start).
fn last_index_of(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    let Some(Search { chars, sub, offset }) = search(&this, &args)? else {
        return kube(Handed::LastIndexOf, [this].into_iter().chain(args.iter().cloned()).collect());
    };
    let len = i64::try_from(chars.len()).unwrap_or(i64::MAX);
    if sub.is_empty() {
        return Ok(Value::Int(offset.unwrap_or(len)));
    }
    let offset = offset.unwrap_or(len - 1);
    let start = usize::try_from(offset).map_err(|_| out_of_range("lastIndexOf", offset))?;
    if start >= chars.len() || sub.len() > chars.len() {
        return Ok(Value::Int(-1));
    }
    let start = start.min(chars.len() - sub.len());
    Ok(found((0..=start).rev().find(|&i| chars[i..].starts_with(&sub))))
}

/// A pattern as Go's `regexp` compiles it, or Go's error.
fn go_pattern(function: &str, pattern: &str, prefix: &str) -> Result<(), ExecutionError> {
    go_regexp::check(pattern).map_err(|e| error(function, format!("{prefix}{e}")))
}

/// `split(sep)` and `split(sep, n)`: Go's `strings.SplitN` (`n < 0`: every piece; `0`: none).
/// An empty separator splits between characters, the last piece keeping the rest, where
/// the crate's splits also before the first and after the last.
fn split(This(this): This<Arc<String>>, Arguments(args): Arguments) -> ResolveResult {
    let (sep, n) = match args.as_slice() {
        [Value::String(sep)] => (sep, -1),
        [Value::String(sep), Value::Int(n)] => (sep, *n),
        _ => return Err(ExecutionError::NoSuchOverload),
    };
    let limit = usize::try_from(n).ok();
    let pieces: Vec<&str> = match (sep.is_empty(), limit) {
        (_, Some(0)) => Vec::new(),
        (true, limit) => {
            let count = this.chars().count();
            let n = limit.map_or(count, |n| n.min(count));
            let mut pieces: Vec<&str> = Vec::with_capacity(n);
            let mut rest = this.as_str();
            for _ in 1..n {
                let Some(c) = rest.chars().next() else { break };
                pieces.push(&rest[..c.len_utf8()]);
                rest = &rest[c.len_utf8()..];
            }
            if n > 0 {
                pieces.push(rest);
            }
            pieces
        }
        (false, None) => this.split(sep.as_str()).collect(),
        (false, Some(n)) => this.splitn(n, sep.as_str()).collect(),
    };
    Ok(Value::List(Arc::new(pieces.into_iter().map(|p| Value::String(Arc::new(p.to_string()))).collect())))
}

/// A pattern Go takes, as the `regex` crate reads it: Go's `\Q...\E` quotes a literal
/// (to the end when there is no `\E`), which the crate does not know, and its `\d`, `\w`
/// and `\s` are ASCII. Go refuses `\Q`
/// in a character class, so classes are copied as they are.
fn rust_pattern(pattern: &str) -> Arc<String> {
    let mut out = String::with_capacity(pattern.len());
    let mut rest = pattern;
    let mut in_class = false;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        match c {
            '\\' if !in_class && rest.starts_with('Q') => {
                let (literal, after) = rest[1..].split_once("\\E").unwrap_or((&rest[1..], ""));
                out.push_str(&regex::escape(literal));
                rest = after;
            }
            '\\' => {
                let Some(next) = rest.chars().next() else {
                    out.push(c);
                    continue;
                };
                rest = &rest[next.len_utf8()..];
                match perl_class(next) {
                    Some(class) => out.push_str(class),
                    None => {
                        out.push(c);
                        out.push(next);
                    }
                }
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first (after a `^`) is a member, not the end.
                let lead = usize::from(rest.starts_with('^'));
                let lead = lead + usize::from(rest[lead..].starts_with(']'));
                out.push_str(&rest[..lead]);
                rest = &rest[lead..];
            }
            '[' if rest.starts_with(':') => {
                let end = rest.find(":]").map_or(0, |at| at + 2);
                out.push(c);
                out.push_str(&rest[..end]);
                rest = &rest[end..];
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            c => out.push(c),
        }
    }
    Arc::new(out)
}

/// Go's Perl classes, which are ASCII (the crate's are Unicode), as classes that nest in
/// another class too.
fn perl_class(letter: char) -> Option<&'static str> {
    Some(match letter {
        'd' => "[0-9]",
        'D' => "[^0-9]",
        'w' => "[0-9A-Za-z_]",
        'W' => "[^0-9A-Za-z_]",
        's' => "[\\t\\n\\f\\r ]",
        'S' => "[^\\t\\n\\f\\r ]",
        _ => return None,
    })
}

fn matches(ftx: &FunctionContext, This(this): This<Arc<String>>, pattern: Arc<String>) -> ResolveResult {
    go_pattern("matches", &pattern, "")?;
    kube_cel::cel::functions::matches(ftx, This(this), rust_pattern(&pattern)).map(Value::Bool)
}

fn find(This(this): This<Value>, pattern: Arc<String>) -> ResolveResult {
    go_pattern("find", &pattern, "Illegal regex: ")?;
    kube(Handed::Find, vec![this, Value::String(rust_pattern(&pattern))])
}

fn find_all(This(this): This<Value>, Arguments(args): Arguments) -> ResolveResult {
    let mut args = args.to_vec();
    if let Some(Value::String(pattern)) = args.first_mut() {
        go_pattern("findAll", pattern, "Illegal regex: ")?;
        *pattern = rust_pattern(pattern);
    }
    let handed = if args.len() == 2 { Handed::FindAllN } else { Handed::FindAll };
    kube(handed, [this].into_iter().chain(args).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(expr: &str) -> Result<Value, String> {
        super::super::celstd::run_with(register, expr)
    }

    /// The oracle's answers (its words from `... evaluating rule: ...`).
    #[test]
    fn strings_fail_with_cel_gos_words() {
        for (expr, oracle) in [
            ("'abc'.charAt(10)", "index out of range: 10"),
            ("'abc'.charAt(-1)", "index out of range: -1"),
            ("'abc'.substring(2, 1)", "invalid substring range. start: 2, end: 1"),
            ("'abc'.substring(5)", "index out of range: 5"),
            ("'abc'.substring(-1)", "index out of range: -1"),
            ("'abc'.substring(1, 10)", "index out of range: 10"),
            ("'abc'.indexOf('b', -1)", "index out of range: -1"),
            ("'('.matches('(')", "error parsing regexp: missing closing ): `(`"),
            ("'('.find('(')", "Illegal regex: error parsing regexp: missing closing ): `(`"),
        ] {
            assert_eq!(eval(expr), Err(oracle.to_string()), "{expr}");
        }
    }

    #[test]
    fn strings_are_searched_as_cel_go_searches() {
        for (expr, want) in [
            ("'abc'.lastIndexOf('b', 10)", Value::Int(-1)),
            ("'abc'.indexOf('b', 10)", Value::Int(-1)),
            ("'abcb'.lastIndexOf('b')", Value::Int(3)),
            ("'abcb'.lastIndexOf('b', 2)", Value::Int(1)),
            ("'abc'.lastIndexOf('abc')", Value::Int(0)),
            ("'abc'.lastIndexOf('')", Value::Int(3)),
            ("'ééb'.indexOf('b')", Value::Int(2)),
            ("'abc'.charAt(3)", string(String::new())),
            ("'aéc'.substring(1, 2)", string("é".into())),
            ("[1, 2, 1].lastIndexOf(1)", Value::Int(2)),
            ("[1, 2].indexOf(2)", Value::Int(1)),
            ("'a1b22'.findAll('[0-9]+')", Value::List(Arc::new(vec![string("1".into()), string("22".into())]))),
            ("'abc'.matches('b')", Value::Bool(true)),
            ("'aaa'.replace('a', 'b', -1)", string("bbb".into())),
            ("'aaa'.replace('a', 'b', 0)", string("aaa".into())),
            ("'aaa'.replace('a', 'b', 2)", string("bba".into())),
            ("'ab'.replace('', '-')", string("-a-b-".into())),
            ("'日本'.split('') == ['日', '本'] && 'abc'.split('', 2) == ['a', 'bc']", Value::Bool(true)),
            (
                "''.split('') == [] && 'ab'.split('', 0) == [] && 'a,b,c'.split(',', 2) == ['a', 'b,c']",
                Value::Bool(true),
            ),
            // Go's Perl classes are ASCII.
            ("!'ü'.matches('^\\\\w+$') && 'a_1'.matches('^\\\\w+$') && 'ü'.matches('^[\\\\W]$')", Value::Bool(true)),
            ("!'٣'.matches('\\\\d') && '\\u00a0'.matches('\\\\S') && 'x y'.find('\\\\s') == ' '", Value::Bool(true)),
            // Go's quoted literals.
            ("'a.b'.matches('^\\\\Qa.b\\\\E$') && !'axb'.matches('^\\\\Qa.b\\\\E$')", Value::Bool(true)),
            ("'x[a]*'.find('\\\\Q[a]*')", string("[a]*".into())),
            ("'a]b'.matches('[]a]b') && 'ab'.matches('[[:alpha:]]\\\\Qb\\\\E')", Value::Bool(true)),
        ] {
            assert_eq!(eval(expr), Ok(want), "{expr}");
        }
    }
}
