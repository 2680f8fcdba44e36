//! The custom resources of one CRD as the resources screen shows them: the server's Table
//! columns, every row as it arrived from the list and the watch, and a view over them
//! (filtered, sorted, with a cursor, a scroll offset and marks).
//!
//! The view is the rows' [`RowOrder`], brought up to date lazily (once per frame at most,
//! after a change) by the changes alone, and rendering reads only the rows on screen: a
//! million resources cost one sort when the sort changes, not one per page or per frame.

use crate::cluster::health::Health;
use crate::cluster::table::{Table, TableRow};
use crate::tui::model::age;
use crate::tui::row_order::RowOrder;
use k8s_openapi::jiff::Timestamp;
use regex::Regex;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

/// Which object a row shows.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjKey {
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjKey {
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        ObjKey { namespace: namespace.map(String::from), name: name.to_string() }
    }

    /// Reads `metadata.namespace` and `metadata.name` of an object (or object metadata).
    pub fn of(obj: &Value) -> Option<Self> {
        let meta = obj.get("metadata")?;
        let name = meta.get("name")?.as_str()?;
        Some(ObjKey::new(meta.get("namespace").and_then(Value::as_str), name))
    }

    /// `ns/name`, or `name` when cluster-scoped.
    pub fn display(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// A column of the server's Table.
pub use crate::cluster::table::TableColumn as Column;

/// An `Age` column, whose cells are recomputed from the creation time at each frame.
pub fn is_age(column: &Column) -> bool {
    column.name.eq_ignore_ascii_case("age") && matches!(column.type_.as_str(), "date" | "string")
}

fn is_numeric(column: &Column) -> bool {
    matches!(column.type_.as_str(), "integer" | "number")
}

/// One custom resource as a row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub key: ObjKey,
    pub cells: Vec<String>,
    pub created: Option<Timestamp>,
}

impl Row {
    /// The same row under another name (tests, and renames are not a thing in Kubernetes).
    #[cfg(test)]
    pub fn renamed(mut self, name: &str) -> Row {
        self.key.name = name.to_string();
        if let Some(first) = self.cells.first_mut() {
            *first = name.to_string();
        }
        self
    }
}

impl From<TableRow> for Row {
    fn from(row: TableRow) -> Row {
        let mut cells: Vec<String> = row.cells.iter().map(cell_text).collect();
        cells.extend(health_cells(row.health.as_ref()));
        Row { key: ObjKey { namespace: row.namespace, name: row.name }, cells, created: row.created }
    }
}

/// The columns the TUI adds after the server's: whether the controller has caught up
/// with each object, and its conditions ([`crate::cluster::health`]).
pub fn health_columns() -> [Column; 2] {
    let column = |name: &str, description: &str| Column {
        name: name.into(),
        type_: "string".into(),
        format: String::new(),
        description: description.into(),
        priority: 0,
    };
    [
        column("Synced", "status.observedGeneration (or the newest condition's) against metadata.generation"),
        column("Conditions", "the False conditions, Ready, and how many others"),
    ]
}

/// The cells of [`health_columns`]; `?` when the row came without its object.
fn health_cells(health: Option<&Health>) -> [String; 2] {
    match health {
        Some(h) => [h.synced.to_string(), h.conditions.clone()],
        None => ["?".into(), "?".into()],
    }
}

/// A Table cell as kubectl prints it: strings as they are, other values as JSON, a
/// missing value as `<none>`.
pub fn cell_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<none>".to_string(),
        other => other.to_string(),
    }
}

/// The columns and rows of one list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableData {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// Rows the server said follow in later pages (its `remainingItemCount`; 0 if unsaid).
    pub remaining: u64,
}

/// The most rows a table reserves room for ahead of their arrival: a server's count is a
/// hint, and a wrong one must not reserve without bound (what arrives past it still fits,
/// by growing).
const MOST_RESERVED_ROWS: u64 = 4_000_000;

impl From<Table> for TableData {
    fn from(t: Table) -> TableData {
        let mut columns = t.columns;
        columns.extend(health_columns());
        TableData { columns, rows: t.rows.into_iter().map(Row::from).collect(), remaining: 0 }
    }
}

/// What the view is sorted by: the namespace (shown with all namespaces) or a column of
/// the server's Table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Namespace,
    Column(usize),
}

/// A `/` filter: a case-insensitive regex, or (`/!regex`) its inverse.
#[derive(Debug, Clone)]
pub struct RowFilter {
    regex: Regex,
    invert: bool,
}

impl RowFilter {
    /// Reads what follows `/`: `!` first inverts.
    pub fn parse(text: &str) -> Result<RowFilter, regex::Error> {
        let (invert, pattern) = match text.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        Ok(RowFilter { regex: Regex::new(&format!("(?i){pattern}"))?, invert })
    }

    /// Whether a row with these texts is shown: one matches (none, inverted).
    pub fn lets<'a>(&self, mut texts: impl Iterator<Item = &'a str>) -> bool {
        texts.any(|t| self.regex.is_match(t)) != self.invert
    }

    /// As typed: `regex` or `!regex`.
    pub fn text(&self) -> String {
        let pattern = self.regex.as_str().trim_start_matches("(?i)");
        if self.invert { format!("!{pattern}") } else { pattern.to_string() }
    }
}

/// How the view is sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub column: SortKey,
    pub descending: bool,
}

/// The resources screen's table.
#[derive(Debug, Default)]
pub struct ResourceTable {
    pub columns: Vec<Column>,
    /// Row slots; a removed row leaves `None` for the next one (see [`RowOrder`]).
    rows: Vec<Option<Row>>,
    /// Empty slots.
    free: Vec<u32>,
    index: HashMap<ObjKey, u32>,
    order: RowOrder,
    widths: Vec<usize>,
    sort: Option<Sort>,
    filter: Option<RowFilter>,
    marks: BTreeSet<ObjKey>,
    cursor: usize,
    offset: usize,
    /// The row the cursor is on, kept across rebuilds.
    anchor: Option<ObjKey>,
}

impl ResourceTable {
    /// Replaces every row (a fresh list); marks on rows that still exist are kept.
    pub fn replace(&mut self, data: TableData) {
        self.columns = data.columns;
        self.widths = self.columns.iter().map(|c| c.name.chars().count()).collect();
        // Room for the whole list at once: growing a million-row index and its slots by
        // doubling stalls one frame for most of a second while both are copied.
        let expected = data.rows.len().saturating_add(data.remaining.min(MOST_RESERVED_ROWS) as usize);
        self.rows = Vec::with_capacity(expected);
        self.free.clear();
        self.index = HashMap::with_capacity(expected);
        self.order.reset();
        for row in data.rows {
            self.upsert(row);
        }
        self.marks.retain(|k| self.index.contains_key(k));
    }

    fn widen(&mut self, row: &Row) {
        for (w, cell) in self.widths.iter_mut().zip(&row.cells) {
            *w = (*w).max(cell.chars().count().min(60));
        }
    }

    /// Adds or replaces one row (a watch ADDED or MODIFIED event).
    pub fn upsert(&mut self, row: Row) {
        self.widen(&row);
        let slot = match self.index.get(&row.key) {
            Some(&slot) => slot,
            None => {
                let slot = self.free.pop().unwrap_or_else(|| {
                    self.rows.push(None);
                    (self.rows.len() - 1) as u32
                });
                self.index.insert(row.key.clone(), slot);
                slot
            }
        };
        self.rows[slot as usize] = Some(row);
        self.order.put(slot);
    }

    /// Adds the rows of a list's next page.
    pub fn extend(&mut self, rows: Vec<Row>) {
        self.rows.reserve(rows.len());
        for row in rows {
            self.upsert(row);
        }
    }

    /// Removes one row (a watch DELETED event).
    pub fn remove(&mut self, key: &ObjKey) {
        let Some(slot) = self.index.remove(key) else { return };
        self.rows[slot as usize] = None;
        self.free.push(slot);
        self.order.removed(slot);
        self.marks.remove(key);
    }

    /// Brings the view up to date with what changed since the last call (work in
    /// proportion to the changes, plus a pass over the order: see [`RowOrder`]). Call
    /// before drawing.
    pub fn prepare(&mut self) {
        if !self.order.is_dirty() {
            return;
        }
        let (columns, sort, filter) = (&self.columns, self.sort, self.filter.as_ref());
        self.order.prepare(
            &self.rows,
            |a, b| {
                let o = match sort {
                    Some(sort) if sort.descending => compare(columns, sort.column, a, b).reverse(),
                    Some(sort) => compare(columns, sort.column, a, b),
                    None => Ordering::Equal,
                };
                o.then_with(|| a.key.cmp(&b.key))
            },
            |r| filter.is_none_or(|f| f.lets(r.cells.iter().map(String::as_str).chain(r.key.namespace.as_deref()))),
        );
        let view = self.order.view();
        if let Some(anchor) = &self.anchor
            && let Some(&slot) = self.index.get(anchor)
            && let Some(pos) = view.iter().position(|&v| v == slot)
        {
            self.cursor = pos;
        }
        self.cursor = self.cursor.min(view.len().saturating_sub(1));
        self.anchor = self.current().map(|r| r.key.clone());
    }

    /// Whether a change waits for [`prepare`](Self::prepare).
    pub fn is_dirty(&self) -> bool {
        self.order.is_dirty()
    }

    pub fn total(&self) -> usize {
        self.index.len()
    }
    pub fn shown(&self) -> usize {
        self.order.view().len()
    }
    pub fn cursor(&self) -> usize {
        self.cursor
    }
    pub fn sort(&self) -> Option<Sort> {
        self.sort
    }
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }
    /// The filter as typed after `/`.
    pub fn filter(&self) -> Option<String> {
        self.filter.as_ref().map(RowFilter::text)
    }

    /// The row under the cursor.
    pub fn current(&self) -> Option<&Row> {
        self.order.view().get(self.cursor).and_then(|&s| self.row(s))
    }

    pub fn get(&self, key: &ObjKey) -> Option<&Row> {
        self.index.get(key).and_then(|&s| self.row(s))
    }

    fn row(&self, slot: u32) -> Option<&Row> {
        self.rows.get(slot as usize).and_then(Option::as_ref)
    }

    /// Moves the cursor by `delta` rows, keeping it on screen for a list `height` rows high.
    pub fn move_by(&mut self, delta: isize, height: usize) {
        let last = self.shown().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
        self.anchor = self.current().map(|r| r.key.clone());
        self.offset = scroll_offset(self.offset, self.cursor, height);
    }

    /// Moves the cursor to the first (`false`) or last (`true`) row.
    pub fn jump(&mut self, end: bool, height: usize) {
        let target = if end { self.shown() as isize } else { -(self.shown() as isize) - 1 };
        self.move_by(target - self.cursor as isize, height);
    }

    /// The first row on screen for a list `height` rows high.
    pub fn offset(&self, height: usize) -> usize {
        scroll_offset(self.offset, self.cursor, height)
    }

    /// The rows on screen: `(position in the view, row)`. Costs `height`, not the rows.
    pub fn visible(&self, height: usize) -> impl Iterator<Item = (usize, &Row)> {
        let view = self.order.view();
        let start = self.offset(height).min(view.len());
        let end = start.saturating_add(height).min(view.len());
        (start..end).zip(&view[start..end]).filter_map(|(pos, &s)| Some((pos, self.row(s)?)))
    }

    /// Sorts by `column`; the same column again flips the direction.
    pub fn sort_by(&mut self, column: SortKey) {
        if matches!(column, SortKey::Column(c) if c >= self.columns.len()) {
            return;
        }
        self.sort = Some(match self.sort {
            Some(s) if s.column == column => Sort { column, descending: !s.descending },
            _ => Sort { column, descending: false },
        });
        self.order.resort();
    }

    /// Sets (or clears, with `None`) the filter.
    pub fn set_filter(&mut self, filter: Option<RowFilter>) {
        self.filter = filter;
        self.order.refilter();
    }

    /// Marks or unmarks the row under the cursor.
    pub fn toggle_mark(&mut self) {
        if let Some(key) = self.current().map(|r| r.key.clone())
            && !self.marks.remove(&key)
        {
            self.marks.insert(key);
        }
    }

    pub fn is_marked(&self, key: &ObjKey) -> bool {
        self.marks.contains(key)
    }
    pub fn marks(&self) -> &BTreeSet<ObjKey> {
        &self.marks
    }
    pub fn clear_marks(&mut self) {
        self.marks.clear();
    }

    /// The marked rows, or the row under the cursor when none is marked.
    pub fn targets(&self) -> Vec<ObjKey> {
        if self.marks.is_empty() {
            self.current().map(|r| vec![r.key.clone()]).unwrap_or_default()
        } else {
            self.marks.iter().cloned().collect()
        }
    }

    /// A cell as shown at `now`: `Age` columns are recomputed from the creation time.
    pub fn cell<'a>(&self, row: &'a Row, column: usize, now: Timestamp) -> std::borrow::Cow<'a, str> {
        match (self.columns.get(column), row.created) {
            (Some(c), Some(created)) if is_age(c) => age(created, now).into(),
            _ => row.cells.get(column).map(String::as_str).unwrap_or_default().into(),
        }
    }
}

/// The first row on screen: the old offset, moved just enough to show the cursor.
pub fn scroll_offset(offset: usize, cursor: usize, height: usize) -> usize {
    if height == 0 {
        return cursor;
    }
    if cursor < offset {
        cursor
    } else if cursor >= offset + height {
        cursor + 1 - height
    } else {
        offset
    }
}

fn compare(columns: &[Column], column: SortKey, a: &Row, b: &Row) -> Ordering {
    let column = match column {
        SortKey::Namespace => return a.key.namespace.cmp(&b.key.namespace),
        SortKey::Column(c) => c,
    };
    let col = columns.get(column);
    if col.is_some_and(is_age) {
        // Youngest first, as ages grow.
        return b.created.cmp(&a.created);
    }
    let (x, y) = (a.cells.get(column).map(String::as_str), b.cells.get(column).map(String::as_str));
    if col.is_some_and(is_numeric)
        && let (Some(Ok(x)), Some(Ok(y))) = (x.map(str::parse::<f64>), y.map(str::parse::<f64>))
    {
        return x.total_cmp(&y);
    }
    x.cmp(&y)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn column(name: &str, type_: &str) -> Column {
        Column {
            name: name.into(),
            type_: type_.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
        }
    }

    fn row(ns: &str, name: &str, replicas: &str) -> Row {
        Row { key: ObjKey::new(Some(ns), name), cells: vec![name.to_string(), replicas.to_string()], created: None }
    }

    fn table(n: usize) -> ResourceTable {
        let mut t = ResourceTable::default();
        t.replace(TableData {
            columns: vec![column("Name", "string"), column("Replicas", "integer")],
            rows: (0..n).map(|i| row("default", &format!("w{i:03}"), &(i % 7).to_string())).collect(),
            remaining: 0,
        });
        t.prepare();
        t
    }

    #[test]
    fn a_list_the_server_counted_is_given_room_once_and_a_wild_count_is_bounded() {
        let page = |from: usize, n: usize| -> Vec<Row> {
            (from..from + n).map(|i| row("default", &format!("w{i:05}"), "1")).collect()
        };
        let mut t = ResourceTable::default();
        t.replace(TableData { columns: vec![column("Name", "string")], rows: page(0, 200), remaining: 9_800 });
        let (slots, index) = (t.rows.capacity(), t.index.capacity());
        assert!(slots >= 10_000 && index >= 10_000, "room for the whole list: {slots} slots, {index} keys");
        for from in (200..10_000).step_by(700) {
            t.extend(page(from, 700.min(10_000 - from)));
        }
        assert_eq!(t.total(), 10_000);
        assert_eq!((t.rows.capacity(), t.index.capacity()), (slots, index), "no growth on the way");
        // A count no list has: the room stays bounded.
        t.replace(TableData { columns: vec![], rows: page(0, 1), remaining: u64::MAX });
        assert!(t.rows.capacity() <= MOST_RESERVED_ROWS as usize + 1, "{}", t.rows.capacity());
    }

    #[test]
    fn rows_are_in_key_order_and_the_cursor_follows_its_row() {
        let mut t = table(20);
        t.move_by(3, 10);
        assert_eq!(t.current().map(|r| r.key.name.as_str()), Some("w003"));
        t.upsert(row("default", "w000a", "1"));
        t.prepare();
        assert_eq!(t.current().map(|r| r.key.name.as_str()), Some("w003"), "cursor stays on its row");
        assert_eq!(t.shown(), 21);
        t.remove(&ObjKey::new(Some("default"), "w003"));
        t.prepare();
        assert_eq!(t.shown(), 20);
        assert!(t.current().is_some());
    }

    #[test]
    fn numeric_sort_filter_and_marks() {
        let mut t = table(30);
        t.sort_by(SortKey::Column(1));
        t.prepare();
        let first: Vec<_> = t.visible(3).map(|(_, r)| r.cells[1].clone()).collect();
        assert_eq!(first, ["0", "0", "0"]);
        t.sort_by(SortKey::Column(1));
        t.prepare();
        t.jump(false, 1);
        assert_eq!(t.visible(1).next().map(|(_, r)| r.cells[1].clone()), Some("6".to_string()));
        t.set_filter(RowFilter::parse("^w01").ok());
        t.prepare();
        assert_eq!(t.shown(), 10);
        t.set_filter(RowFilter::parse("!^W01").ok());
        t.prepare();
        assert_eq!(t.shown(), 20, "inverted, and case-insensitive");
        t.set_filter(RowFilter::parse("^w01").ok());
        t.prepare();
        t.toggle_mark();
        assert_eq!(t.targets().len(), 1);
        assert_eq!(t.marks().len(), 1);
    }

    #[test]
    fn offsets_keep_the_cursor_visible() {
        assert_eq!(scroll_offset(0, 5, 10), 0);
        assert_eq!(scroll_offset(0, 15, 10), 6);
        assert_eq!(scroll_offset(10, 3, 10), 3);
        let mut t = table(100);
        t.jump(true, 10);
        assert_eq!(t.cursor(), 99);
        assert_eq!(t.offset(10), 90);
        assert_eq!(t.visible(10).count(), 10);
    }

    #[test]
    fn server_rows_become_rows_with_kubectl_cells() {
        let row = Row::from(TableRow {
            cells: vec![Value::from("w1"), Value::Null, Value::from(3)],
            name: "w1".into(),
            namespace: Some("team".into()),
            created: None,
            health: None,
        });
        assert_eq!(row.key, ObjKey::new(Some("team"), "w1"));
        assert_eq!(row.cells, ["w1", "<none>", "3", "?", "?"], "no object: health unknown");
        let behind = serde_json::json!({
            "metadata": {"name": "w2", "generation": 3},
            "status": {"observedGeneration": 2, "conditions": [{"type": "Ready", "status": "False"}]}
        });
        let table = crate::cluster::table::Table::fallback(&[behind], Timestamp::UNIX_EPOCH);
        let data = TableData::from(table);
        let names: Vec<&str> = data.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Name", "Age", "Synced", "Conditions"]);
        assert_eq!(data.rows[0].cells[2..], ["no (2/3)", "Ready=False"]);
    }
}
