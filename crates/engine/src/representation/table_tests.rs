//! Table conversion: column layouts, typed cells, ages.

use super::*;
use serde_json::json;

fn now() -> Timestamp {
    "2026-11-22T12:00:00Z".parse().expect("time")
}

fn column(name: &str, type_: &str, path: &str) -> CustomResourceColumnDefinition {
    CustomResourceColumnDefinition {
        name: name.into(),
        type_: type_.into(),
        json_path: path.into(),
        ..Default::default()
    }
}

fn cells(conv: &TableConvertor, obj: &Value) -> Vec<Cell> {
    conv.cells(&serde_json::to_vec(obj).expect("json"), now())
}

#[test]
fn human_durations_match_kube() {
    let cases = [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (5, "5s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 12 * 60, "3h12m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (50 * 3600, "2d2h"),
        (8 * 86400, "8d"),
        (730 * 86400, "2y"),
        (731 * 86400, "2y1d"),
        (9 * 365 * 86400, "9y"),
    ];
    for (secs, want) in cases {
        assert_eq!(human_duration(secs), want, "{secs}s");
    }
}

#[test]
fn typed_cells_follow_the_crd_convertor() {
    assert_eq!(typed_cell("integer", &json!(5), now()), Cell::Int(5));
    assert_eq!(typed_cell("integer", &json!(5.7), now()), Cell::Int(5));
    // The oracle's cells for numbers past int64, whatever their sign.
    for past in [json!(1e20), json!(-1e20), json!(18446744073709551615u64), json!(-9223372036854775809.0)] {
        assert_eq!(typed_cell("integer", &past, now()), Cell::Int(i64::MIN), "{past}");
    }
    assert_eq!(typed_cell("integer", &json!(9223372036854775807i64), now()), Cell::Int(i64::MAX));
    assert_eq!(typed_cell("integer", &json!(-2.5e18), now()), Cell::Int(-2_500_000_000_000_000_000));
    assert_eq!(typed_cell("integer", &json!("5"), now()), Cell::Null);
    assert_eq!(typed_cell("number", &json!(5), now()), Cell::Float(5.0));
    assert_eq!(typed_cell("number", &json!(0.25), now()), Cell::Float(0.25));
    assert_eq!(typed_cell("boolean", &json!(true), now()), Cell::Bool(true));
    assert_eq!(typed_cell("boolean", &json!("true"), now()), Cell::Null);
    assert_eq!(typed_cell("date", &json!("2026-11-22T11:55:00Z"), now()), Cell::Str("5m".into()));
    assert_eq!(typed_cell("date", &json!("2026-11-19T08:48:00Z"), now()), Cell::Str("3d3h".into()));
    assert_eq!(typed_cell("date", &json!(""), now()), Cell::Str("<unknown>".into()));
    assert_eq!(typed_cell("date", &json!("yesterday"), now()), Cell::Str("<invalid>".into()));
    assert_eq!(typed_cell("date", &json!(12), now()), Cell::Null);
    // The oracle's cells: Go's parser and clock, not RFC 3339's.
    let date = |s: &str| typed_cell("date", &json!(s), now());
    assert_eq!(date("2026-11-22T9:00:00Z"), Cell::Str("3h".into()));
    assert_eq!(date("2026-11-22t09:00:00z"), Cell::Str("<invalid>".into()));
    assert_eq!(date("1700-06-01T12:00:00Z"), Cell::Str("292y".into()));
    assert_eq!(date("0001-01-01T00:00:00Z"), Cell::Str("<unknown>".into()));
    assert_eq!(date("null"), Cell::Str("<unknown>".into()));
    assert_eq!(typed_cell("integer", &Value::Null, now()), Cell::Null);
}

#[test]
fn printer_columns_make_cells_from_json_paths() {
    let conv = TableConvertor::custom_resource(&[
        column("Color", "string", ".spec.color"),
        column("Replicas", "integer", ".spec.replicas"),
        column("Ready", "string", r#".status.conditions[?(@.type=="Ready")].status"#),
        column("Tags", "string", ".spec.tags"),
        column("First", "string", ".spec.tags[*]"),
        column("Up", "boolean", ".spec.up"),
        column("Ratio", "number", ".spec.ratio"),
        column("Age", "date", ".metadata.creationTimestamp"),
        column("Null", "string", ".spec.nothing"),
    ]);
    let obj = json!({"metadata": {"name": "w1", "creationTimestamp": "2026-11-22T09:00:00Z"},
        "spec": {"color": "blue", "tags": ["a", "b"], "up": false, "ratio": 2, "nothing": null},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    assert_eq!(
        cells(&conv, &obj),
        vec![
            Cell::Str("w1".into()),
            Cell::Str("blue".into()),
            Cell::Null,
            Cell::Str("True".into()),
            Cell::Str(r#"["a","b"]"#.into()),
            Cell::Str("a".into()),
            Cell::Bool(false),
            Cell::Float(2.0),
            Cell::Str("3h".into()),
            Cell::Str("<no value>".into()),
        ]
    );
    let defs = conv.definitions();
    assert_eq!(defs[1].description, "Custom resource definition column (in JSONPath format): .spec.color");
    assert_eq!((defs[2].type_.as_str(), defs[2].priority, defs[2].format.as_str()), ("integer", 0, ""));
}

/// The oracle's cells for a path that closes its action and opens another: the first
/// action's first result, or nothing when any action fails.
#[test]
fn a_path_of_several_actions_shows_its_first() {
    let conv = TableConvertor::custom_resource(&[
        column("Two", "date", ".spec.a} x {.spec.b"),
        column("Failing", "string", ".spec.a}{.spec.a[0]"),
    ]);
    let obj = json!({"metadata": {"name": "w1"}, "spec": {"a": "soon"}});
    assert_eq!(cells(&conv, &obj)[1..], [Cell::Str("<invalid>".into()), Cell::Null]);
    let bare = json!({"metadata": {"name": "w2"}, "spec": {"b": "x"}});
    assert_eq!(cells(&conv, &bare)[1..], [Cell::Null, Cell::Null]);
}

#[test]
fn no_printer_columns_means_name_and_age() {
    let conv = TableConvertor::custom_resource(&[]);
    let defs = conv.definitions();
    assert_eq!(defs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(), ["Name", "Age"]);
    assert_eq!((defs[1].type_.as_str(), defs[1].description.as_str()), ("date", CREATION_TIMESTAMP_DESCRIPTION));
}

#[test]
fn default_and_namespace_layouts() {
    let obj =
        json!({"metadata": {"name": "x", "creationTimestamp": "2026-11-22T11:00:00Z"}, "status": {"phase": "Active"}});
    assert_eq!(
        cells(&TableConvertor::default(), &obj),
        vec![Cell::Str("x".into()), Cell::Str("2026-11-22T11:00:00Z".into())]
    );
    assert_eq!(
        cells(&TableConvertor::namespaces(), &obj),
        vec![Cell::Str("x".into()), Cell::Str("Active".into()), Cell::Str("60m".into())]
    );
    let mut out = Vec::new();
    TableConvertor::default().write_table(
        &[],
        &ListMeta::default(),
        TableOptions::default(),
        MetaVersion::V1,
        now(),
        &mut out,
    );
    let table: Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(table["rows"], Value::Null);
    assert_eq!(table["columnDefinitions"][1]["name"], "Created At");
}

#[test]
fn a_scale_has_the_scale_printer_s_columns() {
    let conv = TableConvertor::scale();
    let names: Vec<_> = conv.definitions().iter().map(|d| (d.name.as_str(), d.type_.as_str())).collect();
    assert_eq!(names, [("Name", "string"), ("Desired", "integer"), ("Available", "integer"), ("Age", "date")]);
    assert_eq!(conv.definitions()[1].description, "Number of desired replicas");
    let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "w-1", "creationTimestamp": "2026-11-22T11:59:00Z"},
        "spec": {"replicas": 2}, "status": {"replicas": 1, "selector": "app=w"}});
    assert_eq!(cells(&conv, &scale), [Cell::Str("w-1".into()), Cell::Int(2), Cell::Int(1), Cell::Str("60s".into())]);
    // The oracle's cells: the Scale leaves out zero desired replicas, not available ones.
    let bare = json!({"metadata": {"name": "w-2"}, "spec": {}, "status": {}});
    assert_eq!(cells(&conv, &bare)[1..3], [Cell::Null, Cell::Int(0)]);
    let zero = json!({"metadata": {"name": "w-3"}, "spec": {"replicas": 0}, "status": {"replicas": 0}});
    assert_eq!(cells(&conv, &zero)[1..3], [Cell::Null, Cell::Int(0)]);
}
