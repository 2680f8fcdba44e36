//! Field selector text read as apimachinery's `fields.ParseSelector` reads it, then
//! checked as the CRD handler's `ConvertFieldLabel` checks it, with Go's sentences.
//!
//! Terms are split on unescaped commas and sorted before anything is checked, so the
//! first error kube reports (and the first `RequiresExactMatch` finds) is the first in
//! sorted order; every term is parsed before any field is checked against what the
//! resource supports. Nothing is trimmed: ` metadata.name` is a field of its own.

/// One parsed term: `(field, value, equal)`; `equal` is false for `!=`.
pub type Term = (String, String, bool);

/// Go's `splitTerms`: commas preceded by a backslash are data (the backslash stays).
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let (mut start, mut in_slash) = (0, false);
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// Go's `splitTerm`: the first `!=`, `==` or `=` (tried in that order at each place).
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    term.char_indices().find_map(|(i, _)| {
        let rest = &term[i..];
        [("!=", false), ("==", true), ("=", true)]
            .into_iter()
            .find(|(op, _)| rest.starts_with(op))
            .map(|(op, equal)| (&term[..i], equal, &rest[op.len()..]))
    })
}

/// Go's `UnescapeValue`: `\\`, `\,` and `\=` stand for themselves; a bare `,` or `=` and
/// any other escape are refused.
fn unescape(value: &str) -> Result<String, String> {
    if !value.contains(['\\', ',', '=']) {
        return Ok(value.to_string());
    }
    let mut out = String::with_capacity(value.len());
    let mut in_slash = false;
    for c in value.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!("invalid field selector: invalid escape sequence: \\{c}"));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with `%v`: its code point.
            ',' | '=' => return Err(format!("invalid field selector: unescaped character in value: {}", c as u32)),
            c => out.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(out)
}

/// The terms of `selector` that select something, in sorted order (the query decoding
/// step, which comes before list options are validated).
pub fn parse(selector: &str) -> Result<Vec<Term>, String> {
    let mut parts = split_terms(selector);
    parts.sort_unstable();
    let mut terms = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        let (field, equal, raw) =
            split_term(part).ok_or_else(|| format!("invalid selector: '{selector}'; can't understand '{part}'"))?;
        terms.push((field.to_string(), unescape(raw)?, equal));
    }
    // A term with neither field nor value selects everything: the oracle answers `=` and
    // `!=` with every object, though it refuses `=x` (`field label not supported: `).
    terms.retain(|(field, value, _)| !(field.is_empty() && value.is_empty()));
    Ok(terms)
}

#[cfg(test)]
/// The `ConvertFieldLabel` step (after validation): every field must be one `supported`
/// lists; the first that is not, in sorted order, is reported.
pub fn check_supported(terms: &[Term], supported: &[String]) -> Result<(), String> {
    match terms.iter().find(|(field, _, _)| !supported.contains(field)) {
        Some((field, _, _)) => Err(format!("field label not supported: {field}")),
        None => Ok(()),
    }
}
