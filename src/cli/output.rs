//! Printing in every format the subcommands honour, the way kubectl prints.
//!
//! - tables: Go's tabwriter as kubectl configures it (cells padded by 3 spaces, columns at
//!   least 6 wide, the last column unpadded), upper-case headers; `wide` adds the columns
//!   of priority above 0;
//! - `csv`: the wide table as RFC 4180 CSV, header first;
//! - `json`: 4-space indentation, keys sorted as kubectl's unstructured printing sorts them;
//! - `yaml`: keys sorted, list items not indented under their key (kubectl's style);
//! - `name`: `kind.group/name`, one per line.
//!
//! Everything here is pure text building, tested against whole expected outputs.

use serde::Serialize;
use serde_json::Value;

use crate::text::tabwrite::Tabwriter;

/// A table before it is printed: headers, rows of cells, and which columns only `wide` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rows {
    pub headers: Vec<String>,
    /// Per column: shown only in wide output (and CSV).
    pub wide_only: Vec<bool>,
    pub rows: Vec<Vec<String>>,
}

impl Rows {
    /// A table whose columns are all shown by default.
    pub fn new(headers: &[&str]) -> Self {
        Rows {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            wide_only: vec![false; headers.len()],
            rows: Vec::new(),
        }
    }

    /// Adds a column shown only with `-o wide` (and in CSV).
    pub fn wide_column(mut self, header: &str) -> Self {
        self.headers.push(header.to_string());
        self.wide_only.push(true);
        self
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// The table text: all columns when `wide`, else those not marked wide-only.
    pub fn render(&self, wide: bool) -> String {
        self.render_into(wide, true, &mut Tabwriter::default())
    }

    /// The table text laid out by `writer`, which remembers column widths from earlier
    /// calls (`get -w`); the header line only when `header`.
    pub fn render_into(&self, wide: bool, header: bool, writer: &mut Tabwriter) -> String {
        let keep: Vec<usize> =
            (0..self.headers.len()).filter(|&i| wide || !self.wide_only.get(i).copied().unwrap_or(false)).collect();
        let pick = |cells: &[String]| keep.iter().map(|&i| cells.get(i).cloned().unwrap_or_default()).collect();
        let mut lines: Vec<Vec<String>> = Vec::new();
        if header {
            lines.push(pick(&self.headers));
        }
        lines.extend(self.rows.iter().map(|r| pick(r)));
        writer.write(&lines)
    }

    /// CSV with every column.
    pub fn render_csv(&self) -> String {
        self.render_csv_rows(true)
    }

    /// CSV with every column, the header line only when `header`.
    pub fn render_csv_rows(&self, header: bool) -> String {
        let mut out = if header { csv_line(&self.headers) } else { String::new() };
        for row in &self.rows {
            out.push_str(&csv_line(row));
        }
        out
    }
}

fn csv_line(cells: &[String]) -> String {
    let quoted: Vec<String> = cells
        .iter()
        .map(|c| {
            let needs = c.contains([',', '"', '\n', '\r']) || c.starts_with(' ') || c.ends_with(' ');
            if needs { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.clone() }
        })
        .collect();
    format!("{}\n", quoted.join(","))
}

/// A server Table cell as kubectl prints it: strings up to their first newline (then
/// `...`), numbers and booleans as written, nothing for null.
pub fn cell_text(cell: &Value) -> String {
    match cell {
        Value::Null => String::new(),
        Value::String(s) => match s.split_once('\n') {
            Some((first, _)) => format!("{first}..."),
            None => s.clone(),
        },
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// kubectl hides `metadata.managedFields` unless asked (`--show-managed-fields`); so do we,
/// in objects and in the items of lists.
pub(crate) fn hide_managed_fields(value: &mut Value) {
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(hide_managed_fields);
    }
}

/// JSON as kubectl prints it: 4-space indentation, a final newline.
pub fn json<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
    // Through `Value` so map keys come out sorted, as kubectl's unstructured printing does.
    let mut value = serde_json::to_value(value)?;
    hide_managed_fields(&mut value);
    value.serialize(&mut ser)?;
    let mut text = String::from_utf8(buf)?;
    text.push('\n');
    Ok(text)
}

/// YAML as kubectl prints it: keys sorted, compact list indentation.
pub fn yaml<T: Serialize + ?Sized>(value: &T) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(value)?;
    hide_managed_fields(&mut value);
    let options = serde_saphyr::ser_options! { prefer_block_scalars: false };
    Ok(serde_saphyr::to_string_with_options(&value, options)?)
}

/// kubectl's wrapper around several objects in `-o json|yaml`.
pub fn list_of(items: Vec<Value>) -> Value {
    serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table() -> Rows {
        let mut rows = Rows::new(&["NAME", "ID", "PHASE"]).wide_column("SIZE");
        rows.push(vec!["widget-001".into(), "1".into(), "Ready".into(), "3".into()]);
        rows.push(vec!["w".into(), "10".into(), "".into(), "10".into()]);
        rows
    }

    #[test]
    fn tables_are_laid_out_like_kubectl() {
        // Columns: text + 3 spaces, at least 6; the last column is not padded.
        assert_eq!(table().render(false), "NAME         ID    PHASE\nwidget-001   1     Ready\nw            10    \n");
        assert_eq!(
            table().render(true),
            "NAME         ID    PHASE   SIZE\nwidget-001   1     Ready   3\nw            10            10\n"
        );
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut rows = Rows::new(&["NAME", "NOTE"]);
        rows.push(vec!["a".into(), "x, \"y\"".into()]);
        rows.push(vec!["b".into(), "two\nlines".into()]);
        assert_eq!(rows.render_csv(), "NAME,NOTE\na,\"x, \"\"y\"\"\"\nb,\"two\nlines\"\n");
        assert_eq!(table().render_csv(), "NAME,ID,PHASE,SIZE\nwidget-001,1,Ready,3\nw,10,,10\n");
    }

    #[test]
    fn cells_print_like_kubectl_prints_them() {
        assert_eq!(cell_text(&json!(null)), "");
        assert_eq!(cell_text(&json!("first\nsecond")), "first...");
        assert_eq!(cell_text(&json!(5)), "5");
        assert_eq!(cell_text(&json!(1.5)), "1.5");
        assert_eq!(cell_text(&json!(true)), "true");
    }

    #[test]
    fn json_and_yaml_sort_keys_and_indent_like_kubectl() {
        let obj = json!({"kind": "Widget", "apiVersion": "v1", "spec": {"tags": ["a", "b"], "color": "red"}});
        assert_eq!(
            json(&obj).expect("json"),
            "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Widget\",\n    \"spec\": {\n        \"color\": \"red\",\n        \"tags\": [\n            \"a\",\n            \"b\"\n        ]\n    }\n}\n"
        );
        assert_eq!(
            yaml(&obj).expect("yaml"),
            "apiVersion: v1\nkind: Widget\nspec:\n  color: red\n  tags:\n  - a\n  - b\n"
        );
        let managed = json!({"items": [{"metadata": {"name": "a", "managedFields": [{"manager": "m"}]}}]});
        assert_eq!(
            json(&managed).expect("json"),
            "{\n    \"items\": [\n        {\n            \"metadata\": {\n                \"name\": \"a\"\n            }\n        }\n    ]\n}\n"
        );
        assert_eq!(
            yaml(&list_of(vec![json!({"a": 1})])).expect("yaml"),
            "apiVersion: v1\nitems:\n- a: 1\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
        );
    }
}
