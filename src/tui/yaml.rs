//! YAML text for the views, and its syntax colouring line by line (so a view colours only
//! the lines on screen).

use crate::tui::theme::Theme;
use ratatui::text::{Line, Span};
use serde_json::Value;

/// `value` as YAML lines; a value that cannot be written shows the error instead.
pub fn to_lines(value: &Value) -> Vec<String> {
    match serde_saphyr::to_string(value) {
        Ok(text) => text.lines().map(str::to_string).collect(),
        Err(e) => vec![format!("# cannot show this as YAML: {e}")],
    }
}

/// Colours one line of YAML: keys, scalars by kind, list dashes and comments.
pub fn highlight(line: &str, theme: &Theme) -> Line<'static> {
    let indent_len = line.len() - line.trim_start().len();
    let (indent, mut rest) = line.split_at(indent_len);
    let mut spans = vec![Span::raw(indent.to_string())];
    if rest.starts_with('#') {
        spans.push(Span::styled(rest.to_string(), theme.yaml_comment()));
        return Line::from(spans);
    }
    while let Some(after) = rest.strip_prefix("- ").or_else(|| (rest == "-").then_some("")) {
        spans.push(Span::styled("- ", theme.yaml_punct()));
        rest = after;
    }
    if let Some((key, value)) = split_key(rest) {
        spans.push(Span::styled(key.to_string(), theme.yaml_key()));
        spans.push(Span::styled(":", theme.yaml_punct()));
        if !value.is_empty() {
            spans.push(Span::raw(" "));
            spans.push(scalar(value.trim_start(), theme));
        }
    } else if !rest.is_empty() {
        spans.push(scalar(rest, theme));
    }
    Line::from(spans)
}

/// `key: value` or `key:` with a plain or quoted key; `None` for a bare scalar.
fn split_key(s: &str) -> Option<(&str, &str)> {
    let end = if let Some(q @ ('"' | '\'')) = s.chars().next() {
        let close = s[1..].find(q)? + 2;
        (s[close..].starts_with(':')).then_some(close)?
    } else {
        s.find(": ").or_else(|| s.ends_with(':').then(|| s.len() - 1))?
    };
    let key = &s[..end];
    if key.is_empty() || (key.starts_with(['{', '[']) && !key.ends_with(['}', ']'])) {
        return None;
    }
    Some((key, &s[end + 1..]))
}

fn scalar(v: &str, theme: &Theme) -> Span<'static> {
    let style = if v.starts_with(['"', '\'']) {
        theme.yaml_string()
    } else if matches!(v, "true" | "false" | "null" | "~" | "{}" | "[]" | "|" | "|-" | ">" | ">-") {
        theme.yaml_literal()
    } else if v.parse::<f64>().is_ok() {
        theme.yaml_number()
    } else {
        theme.yaml_string()
    };
    Span::styled(v.to_string(), style)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(line: &str) -> Vec<String> {
        highlight(line, &Theme { color: true }).spans.iter().map(|s| s.content.to_string()).collect()
    }

    #[test]
    fn keys_values_and_dashes_are_split() {
        assert_eq!(kinds("  replicas: 3"), ["  ", "replicas", ":", " ", "3"]);
        assert_eq!(kinds("- name: a"), ["", "- ", "name", ":", " ", "a"]);
        assert_eq!(kinds("spec:"), ["", "spec", ":"]);
        assert_eq!(kinds("  - plain"), ["  ", "- ", "plain"]);
        assert_eq!(kinds("\"a:b\": x"), ["", "\"a:b\"", ":", " ", "x"]);
        assert_eq!(kinds("# note"), ["", "# note"]);
    }

    #[test]
    fn objects_render_as_yaml_lines() {
        let lines = to_lines(&serde_json::json!({"spec": {"replicas": 2}}));
        assert_eq!(lines, ["spec:", "  replicas: 2"]);
    }
}
