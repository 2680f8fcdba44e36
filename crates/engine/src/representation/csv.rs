//! `text/csv`: a Table as comma-separated values (beyond kube-apiserver, as the
//! representations proposal suggests): a header row of column names, then one row per
//! object, every column included (priority ones too), null cells empty. Quoting follows
//! RFC 4180.

use super::table::Cell;

fn field(text: &str, out: &mut String) {
    if text.contains([',', '"', '\n', '\r']) || text.starts_with(' ') || text.ends_with(' ') {
        out.push('"');
        out.push_str(&text.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(text);
    }
}

fn line<'a>(fields: impl Iterator<Item = std::borrow::Cow<'a, str>>, out: &mut String) {
    for (i, f) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        field(&f, out);
    }
    out.push('\n');
}

/// The CSV text of a table: `names` as the header, then `rows`.
pub fn to_csv(names: &[&str], rows: &[Vec<Cell>]) -> String {
    let mut out = String::new();
    line(names.iter().map(|n| std::borrow::Cow::Borrowed(*n)), &mut out);
    for row in rows {
        line(row.iter().map(|c| std::borrow::Cow::Owned(c.text())), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_then_rows_quoted_when_needed() {
        let rows = vec![
            vec![Cell::Str("w1".into()), Cell::Int(5), Cell::Null, Cell::Str("a,b".into())],
            vec![Cell::Str("w2".into()), Cell::Float(1.5), Cell::Bool(true), Cell::Str("say \"hi\"".into())],
        ];
        assert_eq!(
            to_csv(&["Name", "Replicas", "Ready", "Note"], &rows),
            "Name,Replicas,Ready,Note\nw1,5,,\"a,b\"\nw2,1.5,true,\"say \"\"hi\"\"\"\n"
        );
    }
}
