//! `kubectl crd get`: custom resources as kubectl gets them — the server's Table (`-o wide`
//! priority columns, `--show-labels`, `--sort-by`), objects as JSON, YAML or names,
//! kubectl's templates (`-o jsonpath=`, `-o custom-columns=`), label and field selectors,
//! and `-w`, which watches after the list and prints each change (`--output-watch-events`
//! names it). Watched rows stay under the header: widths are remembered, as kubectl does.

use super::CliError;
use super::args::{GetArgs, OutputFormat};
use super::output::{self, Rows, cell_text};
use super::session::Session;
use super::template::{self, Template};
use crate::cluster::listing::{self, EventType, Listing, Query, Shape};
use crate::cluster::table::Table;
use crate::cluster::{ClusterError, ResourceType};
use crate::text::tabwrite::Tabwriter;
use futures::StreamExt;
use kubectl_crd_engine::gofmt::go_json;
use kubectl_crd_engine::jsonpath::JsonPath;
use serde_json::Value;
use std::io::Write;

/// `get`'s flags, checked (stage two of argument parsing).
#[derive(Debug)]
pub struct GetOptions<'a> {
    pub resource: &'a str,
    pub name: Option<&'a str>,
    pub label_selector: Option<&'a str>,
    pub field_selector: Option<&'a str>,
    pub watch: bool,
    pub watch_events: bool,
    pub show_labels: bool,
    pub sort_by: Option<JsonPath>,
}

impl<'a> GetOptions<'a> {
    pub fn from_args(args: &'a GetArgs) -> Result<Self, CliError> {
        let (resource, name) = super::args::type_and_name(&args.resource, args.name.as_deref(), "get")?;
        let sort_by =
            args.sort_by.as_deref().map(template::relaxed).transpose().map_err(|e| CliError::Usage(e.to_string()))?;
        Ok(GetOptions {
            resource,
            name,
            label_selector: args.selector.as_deref(),
            field_selector: args.field_selector.as_deref(),
            watch: args.watch,
            watch_events: args.watch && args.output_watch_events,
            show_labels: args.show_labels,
            sort_by,
        })
    }
}

/// `kubectl crd get RESOURCE [NAME] [flags]`.
pub async fn get(s: &Session, o: &GetOptions<'_>, out: &mut dyn Write) -> anyhow::Result<()> {
    if o.name.is_some() && s.list_namespace().is_none() {
        return Err(CliError::Usage("a resource cannot be retrieved by name across all namespaces".into()).into());
    }
    if o.watch && o.sort_by.is_some() {
        eprintln!("warning: --watch requested, --sort-by will be ignored for watch events received");
    }
    let rt = s.resolve(o.resource).await?;
    let namespace = if o.name.is_some() { Some(s.namespace()) } else { s.list_namespace() };
    // A watch of one object lists it by name, so that the watch starts where a list stands
    // (an object's own resourceVersion may be older than the server's watch window).
    let by_name = o.name.filter(|_| o.watch).map(|n| {
        let own = format!("metadata.name={n}");
        o.field_selector.map_or_else(|| own.clone(), |f| format!("{f},{own}"))
    });
    let query = match &by_name {
        Some(fields) => Query { namespace, name: None, label_selector: o.label_selector, field_selector: Some(fields) },
        None => Query { namespace, name: o.name, label_selector: o.label_selector, field_selector: o.field_selector },
    };
    let mut printer = Printer {
        format: s.config.output,
        template: s.config.template.as_ref(),
        rt: &rt,
        columns: Columns {
            event: o.watch_events,
            namespace: rt.namespaced && namespace.is_none(),
            labels: o.show_labels,
        },
        single: o.name.is_some(),
        watch: o.watch,
        tabwriter: Tabwriter::default(),
        header_done: false,
        objects_printed: false,
    };
    let shape = match printer.format {
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Csv if o.sort_by.is_some() => Shape::TableWithObjects,
        OutputFormat::Table | OutputFormat::Wide | OutputFormat::Csv => Shape::Table,
        _ => Shape::Objects,
    };
    let listing = listing::fetch(s.client(), &rt, &query, shape).await.map_err(|e| s.err(e))?;
    if let Some(name) = o.name.filter(|_| listing.objects.is_empty()) {
        let namespace = namespace.filter(|_| rt.namespaced).map(String::from);
        let missing = ClusterError::NotFound { what: rt.qualified_name(), name: name.to_string(), namespace };
        return Err(s.err(missing));
    }
    let order = match &o.sort_by {
        Some(path) => template::sort_order(path, &listing.objects),
        None => Some((0..listing.objects.len()).collect()),
    };
    // kubectl prints nothing when no object has the field it sorts by.
    let Some(order) = order else {
        eprintln!("{}", no_resources(&rt, namespace));
        return Ok(());
    };
    if listing.objects.is_empty() && !o.watch && printer.says_none() {
        eprintln!("{}", no_resources(&rt, namespace));
        return Ok(());
    }
    printer.print(&listing, &order, EventType::Added, out)?;
    if !o.watch {
        return Ok(());
    }
    out.flush()?;
    let mut changes =
        listing::watch(s.client(), &rt, &query, shape, &listing.resource_version).await.map_err(|e| s.err(e))?;
    let mut columns = listing.table.columns;
    while let Some(change) = changes.next().await {
        let mut change = change.map_err(|e| s.err(e))?;
        if change.listing.table.columns.is_empty() {
            change.listing.table.columns = columns.clone();
        } else {
            columns = change.listing.table.columns.clone();
        }
        let order: Vec<usize> = (0..change.listing.objects.len()).collect();
        printer.print(&change.listing, &order, change.event, out)?;
        out.flush()?;
    }
    Ok(())
}

/// kubectl's message for an empty list (printed to stderr).
fn no_resources(rt: &ResourceType, namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) if rt.namespaced => format!("No resources found in {ns} namespace."),
        _ => "No resources found".to_string(),
    }
}

/// The columns kubectl adds around the server's.
#[derive(Debug, Clone, Copy, Default)]
struct Columns {
    /// EVENT first (`--output-watch-events`).
    event: bool,
    /// NAMESPACE (`-A` on a namespaced resource).
    namespace: bool,
    /// LABELS last (`--show-labels`).
    labels: bool,
}

/// How `get` prints, and what it keeps between a watch's events.
struct Printer<'a> {
    format: OutputFormat,
    template: Option<&'a Template>,
    rt: &'a ResourceType,
    columns: Columns,
    /// One object was asked for by name.
    single: bool,
    /// Objects print one at a time (kubectl flattens the list when it watches).
    watch: bool,
    tabwriter: Tabwriter,
    header_done: bool,
    /// Whether a watched object was printed already (YAML documents are separated).
    objects_printed: bool,
}

impl Printer<'_> {
    /// Whether an empty list is said as "No resources found" (the server's tables), rather
    /// than printed as it is: an empty `List`, custom columns' header, no names (kubectl).
    fn says_none(&self) -> bool {
        matches!(self.format, OutputFormat::Table | OutputFormat::Wide | OutputFormat::Csv)
    }

    /// Prints `listing` in `order`; `event` is what happened to it when watching.
    fn print(
        &mut self,
        listing: &Listing,
        order: &[usize],
        event: EventType,
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        // A watch prints nothing for an empty list, not even a header.
        if order.is_empty() && self.watch {
            return Ok(());
        }
        let header = !self.header_done;
        self.header_done = true;
        let objects: Vec<Value> = order.iter().filter_map(|&i| listing.objects.get(i).cloned()).collect();
        let event = self.columns.event.then_some(event);
        let text = match (self.format, self.template) {
            (OutputFormat::Table | OutputFormat::Wide | OutputFormat::Csv, _) => {
                let rows = table_rows(&listing.table, &listing.objects, order, self.columns, event);
                match self.format {
                    OutputFormat::Csv => rows.render_csv_rows(header),
                    format => rows.render_into(format == OutputFormat::Wide, header, &mut self.tabwriter),
                }
            }
            (OutputFormat::CustomColumns, Some(Template::CustomColumns(columns))) => {
                let headers: Vec<&str> = columns.iter().map(|c| c.header.as_str()).collect();
                let mut rows = Rows::new(&headers);
                objects.iter().for_each(|o| rows.push(template::custom_cells(columns, o)));
                rows.render_into(true, header, &mut self.tabwriter)
            }
            (OutputFormat::JsonPath, Some(Template::JsonPath { raw, path })) => {
                let data = if self.single || self.watch { objects } else { vec![output::list_of(objects)] };
                let mut text = String::new();
                for mut one in data {
                    output::hide_managed_fields(&mut one);
                    text.push_str(
                        &template::jsonpath_text(raw, path, &one).map_err(|e| CliError::Usage(e.to_string()))?,
                    );
                }
                text
            }
            (OutputFormat::Name, _) => render_objects(self.rt, objects, false, OutputFormat::Name)?,
            (format, _) if self.watch => {
                let mut text = String::new();
                for object in objects {
                    // kubectl separates watched YAML documents, and writes a watch event in
                    // JSON on one line, `type` first, as Go marshals the WatchEvent struct.
                    if format == OutputFormat::Yaml && self.objects_printed {
                        text.push_str("---\n");
                    }
                    self.objects_printed = true;
                    text.push_str(&match (event, format) {
                        (Some(e), OutputFormat::Yaml) => {
                            output::yaml(&serde_json::json!({"type": e.as_str(), "object": object}))?
                        }
                        (Some(e), _) => format!("{{\"type\":\"{}\",\"object\":{}}}\n", e.as_str(), go_json(&object)),
                        (None, format) => render_objects(self.rt, vec![object], true, format)?,
                    });
                }
                text
            }
            (format, _) => render_objects(self.rt, objects, self.single, format)?,
        };
        write!(out, "{text}")?;
        Ok(())
    }
}

/// The server's Table as printable rows in `order`: EVENT, NAMESPACE and LABELS as
/// `columns` asks, priority columns wide-only.
fn table_rows(table: &Table, objects: &[Value], order: &[usize], columns: Columns, event: Option<EventType>) -> Rows {
    let mut rows = Rows::default();
    let mut add = |header: &str, wide: bool| {
        rows.headers.push(header.to_string());
        rows.wide_only.push(wide);
    };
    if columns.event {
        add("EVENT", false);
    }
    if columns.namespace {
        add("NAMESPACE", false);
    }
    for c in &table.columns {
        add(&c.name.to_uppercase(), c.priority > 0);
    }
    if columns.labels {
        add("LABELS", false);
    }
    for &i in order {
        let Some(r) = table.rows.get(i) else { continue };
        let mut cells = Vec::with_capacity(rows.headers.len());
        if columns.event {
            cells.push(event.map(EventType::cell).unwrap_or_default().to_string());
        }
        if columns.namespace {
            cells.push(r.namespace.clone().unwrap_or_default());
        }
        // Like kubectl, cells beyond the column definitions are dropped.
        cells.extend(r.cells.iter().take(table.columns.len()).map(cell_text));
        if columns.labels {
            cells.resize(rows.headers.len() - 1, String::new());
            cells.push(labels_text(objects.get(i)));
        }
        rows.push(cells);
    }
    rows
}

/// kubectl's `labels.FormatLabels`: `k=v` sorted by key, joined by commas, `<none>` for none.
fn labels_text(object: Option<&Value>) -> String {
    let labels = object.and_then(|o| o.pointer("/metadata/labels")).and_then(Value::as_object);
    let mut pairs: Vec<String> =
        labels.into_iter().flatten().map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default())).collect();
    pairs.sort();
    if pairs.is_empty() { "<none>".into() } else { pairs.join(",") }
}

/// Objects as JSON, YAML or names: one object alone, several in a `List`.
pub fn render_objects(
    rt: &ResourceType,
    objects: Vec<Value>,
    single: bool,
    format: OutputFormat,
) -> anyhow::Result<String> {
    Ok(match format {
        OutputFormat::Name => objects
            .iter()
            .map(|o| format!("{}/{}\n", rt.name_prefix(), o["metadata"]["name"].as_str().unwrap_or_default()))
            .collect(),
        OutputFormat::Yaml if single => objects.first().map(output::yaml).transpose()?.unwrap_or_default(),
        OutputFormat::Json if single => objects.first().map(output::json).transpose()?.unwrap_or_default(),
        OutputFormat::Yaml => output::yaml(&output::list_of(objects))?,
        _ => output::json(&output::list_of(objects))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::table::{TableColumn, TableRow};
    use serde_json::json;

    fn column(name: &str, priority: i32) -> TableColumn {
        TableColumn {
            name: name.into(),
            type_: "string".into(),
            format: String::new(),
            description: String::new(),
            priority,
        }
    }

    fn table() -> Table {
        let row = |ns: &str, cells: Value| TableRow {
            cells: cells.as_array().cloned().unwrap_or_default(),
            name: String::new(),
            namespace: Some(ns.into()),
            created: None,
            health: None,
        };
        Table {
            columns: vec![
                column("Name", 0),
                column("Color", 0),
                column("Replicas", 0),
                column("Phase", 1),
                column("Age", 0),
            ],
            rows: vec![
                row("default", json!(["w1", "blue", 5, "Ready", "5s"])),
                row("team-a", json!(["w2", "green", 2, null, "1s", "extra"])),
            ],
            from_server: true,
        }
    }

    fn objects() -> Vec<Value> {
        vec![
            json!({"metadata": {"name": "w1", "labels": {"tier": "gold", "app": "a"}}}),
            json!({"metadata": {"name": "w2"}}),
        ]
    }

    #[test]
    fn server_tables_print_like_kubectl_get() {
        let plain = Columns::default();
        let both = [0, 1];
        assert_eq!(
            table_rows(&table(), &objects(), &both, plain, None).render(false),
            "NAME   COLOR   REPLICAS   AGE\nw1     blue    5          5s\nw2     green   2          1s\n"
        );
        let all = Columns { namespace: true, ..plain };
        assert_eq!(
            table_rows(&table(), &objects(), &both, all, None).render(true),
            "NAMESPACE   NAME   COLOR   REPLICAS   PHASE   AGE\ndefault     w1     blue    5          Ready   5s\nteam-a      w2     green   2                  1s\n"
        );
        assert_eq!(
            table_rows(&table(), &objects(), &both, plain, None).render_csv(),
            "NAME,COLOR,REPLICAS,PHASE,AGE\nw1,blue,5,Ready,5s\nw2,green,2,,1s\n"
        );
    }

    #[test]
    fn labels_and_events_go_around_the_server_s_columns() {
        let columns = Columns { event: true, labels: true, ..Columns::default() };
        let rows = table_rows(&table(), &objects(), &[1, 0], columns, Some(EventType::Modified));
        assert_eq!(
            rows.render(false),
            "EVENT      NAME   COLOR   REPLICAS   AGE   LABELS\nMODIFIED   w2     green   2          1s    <none>\nMODIFIED   w1     blue    5          5s    app=a,tier=gold\n"
        );
        // Watched rows keep the widths the header set.
        let mut writer = Tabwriter::default();
        let first = table_rows(&table(), &objects(), &[0], columns, Some(EventType::Added));
        let first = first.render_into(false, true, &mut writer);
        let later = table_rows(&table(), &objects(), &[1], columns, Some(EventType::Deleted));
        assert_eq!(
            format!("{first}{}", later.render_into(false, false, &mut writer)),
            "EVENT      NAME   COLOR   REPLICAS   AGE   LABELS\nADDED      w1     blue    5          5s    app=a,tier=gold\nDELETED    w2     green   2          1s    <none>\n"
        );
    }

    #[test]
    fn objects_print_alone_or_in_a_list() {
        let mut rt = crate::cluster::discovery::tests::resource("stable.example.com", "v1", "Widget", "widgets", &[]);
        rt.namespaced = true;
        let objs = vec![
            json!({"kind": "Widget", "metadata": {"name": "w1"}}),
            json!({"kind": "Widget", "metadata": {"name": "w2"}}),
        ];
        assert_eq!(
            render_objects(&rt, objs.clone(), false, OutputFormat::Name).expect("names"),
            "widget.stable.example.com/w1\nwidget.stable.example.com/w2\n"
        );
        let list: Value =
            serde_json::from_str(&render_objects(&rt, objs.clone(), false, OutputFormat::Json).expect("json"))
                .expect("parses");
        assert_eq!(list["kind"], "List");
        assert_eq!(list["items"][1]["metadata"]["name"], "w2");
        assert_eq!(
            render_objects(&rt, objs[..1].to_vec(), true, OutputFormat::Yaml).expect("yaml"),
            "kind: Widget\nmetadata:\n  name: w1\n"
        );
    }
}
