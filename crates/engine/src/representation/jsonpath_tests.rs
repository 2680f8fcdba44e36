//! Every JSONPath form printer columns use, against client-go's behaviour.

use super::*;
use crate::representation::gofmt::{go_format_g, go_json, go_json_float, print_text};
use serde_json::json;

fn first(path: &str, data: &Value) -> Option<Value> {
    let p = JsonPath::parse_column(path).expect("parses");
    let results = p.find(data).ok()?;
    results.first()?.first().map(|v| v.clone().into_owned())
}

fn all(path: &str, data: &Value) -> Vec<Value> {
    let p = JsonPath::parse_column(path).expect("parses");
    p.find(data).expect("evaluates").into_iter().flatten().map(Cow::into_owned).collect()
}

fn widget() -> Value {
    json!({
        "metadata": {"name": "w1", "labels": {"app": "demo", "app.kubernetes.io/name": "widget"}},
        "spec": {"color": "blue", "replicas": 3, "ratio": 0.5, "enabled": true, "tags": ["a", "b", "c"],
                 "nested": {"x": {"y": 1}}, "nothing": null},
        "status": {"conditions": [
            {"type": "Ready", "status": "True", "n": 1},
            {"type": "Synced", "status": "False", "n": 2}
        ]}
    })
}

#[test]
fn plain_fields_and_braced_templates() {
    let w = widget();
    assert_eq!(first(".spec.color", &w), Some(json!("blue")));
    assert_eq!(first("{.spec.replicas}", &w), Some(json!(3)));
    assert_eq!(first(".metadata.labels.app", &w), Some(json!("demo")));
    assert_eq!(first(".spec.nested.x.y", &w), Some(json!(1)));
    assert_eq!(first(".spec.nothing", &w), Some(Value::Null));
}

#[test]
fn missing_values_are_empty_results() {
    let w = widget();
    assert_eq!(first(".spec.missing", &w), None);
    assert_eq!(first(".nope.deeper.still", &w), None);
    assert_eq!(first(".spec.nothing.below", &w), None);
    // A field of an array or a string is missing too.
    assert_eq!(first(".spec.tags.x", &w), None);
    assert_eq!(first(".spec.color.x", &w), None);
}

#[test]
fn escaped_dots_and_bracket_keys() {
    let w = widget();
    assert_eq!(first(r".metadata.labels.app\.kubernetes\.io/name", &w), Some(json!("widget")));
    assert_eq!(first(r".metadata.labels['app\.kubernetes\.io/name']", &w), Some(json!("widget")));
    assert_eq!(first(".metadata.labels['app']", &w), Some(json!("demo")));
    // Without escapes kube reads the dots as separators.
    assert_eq!(first(".metadata.labels['app.kubernetes.io/name']", &w), None);
    assert!(JsonPath::parse_column(r#".metadata.labels["app"]"#).is_err());
}

#[test]
fn indexes_slices_wildcards_and_unions() {
    let w = widget();
    assert_eq!(first(".spec.tags[0]", &w), Some(json!("a")));
    assert_eq!(first(".spec.tags[-1]", &w), Some(json!("c")));
    assert_eq!(all(".spec.tags[*]", &w), vec![json!("a"), json!("b"), json!("c")]);
    assert_eq!(all(".spec.tags[1:]", &w), vec![json!("b"), json!("c")]);
    assert_eq!(all(".spec.tags[0:2]", &w), vec![json!("a"), json!("b")]);
    assert_eq!(all(".spec.tags[0,2]", &w), vec![json!("a"), json!("c")]);
    // The third slice parameter is a step.
    assert_eq!(all(".spec.tags[::2]", &w), vec![json!("a"), json!("c")]);
    assert_eq!(all(".spec.tags[0:2:1]", &w), vec![json!("a"), json!("b")]);
    assert!(JsonPath::parse_column(".spec.tags[::0]").expect("parses").find(&w).is_err());
    assert_eq!(all(".status.conditions[*].type", &w), vec![json!("Ready"), json!("Synced")]);
    assert_eq!(all(".spec.nested.*", &w), vec![json!({"y": 1})]);
    // Out of range is an error, and so is indexing a non-array.
    let p = JsonPath::parse_column(".spec.tags[5]").expect("parses");
    assert!(p.find(&w).is_err());
    let p = JsonPath::parse_column(".spec.color[0]").expect("parses");
    assert!(p.find(&w).is_err());
}

#[test]
fn filters_compare_like_go_templates() {
    let w = widget();
    assert_eq!(first(r#".status.conditions[?(@.type=="Ready")].status"#, &w), Some(json!("True")));
    assert_eq!(first(r#".status.conditions[?(@.type!="Ready")].status"#, &w), Some(json!("False")));
    assert_eq!(first(".status.conditions[?(@.n>1)].type", &w), Some(json!("Synced")));
    assert_eq!(first(".status.conditions[?(@.n<=1)].type", &w), Some(json!("Ready")));
    assert_eq!(first(".status.conditions[?(@.status)].type", &w), Some(json!("Ready")));
    assert_eq!(first(r#".status.conditions[?(@.type=='Synced')].n"#, &w), Some(json!(2)));
    // Comparing a number with a string fails the whole path.
    let p = JsonPath::parse_column(r#".status.conditions[?(@.n=="1")].type"#).expect("parses");
    assert!(p.find(&w).is_err());
    // An item that lacks the field is skipped (missing keys are allowed).
    let sparse = json!({"c": [{"other": 1}, {"type": "A", "n": 1}, {"type": "B", "n": 1.5}]});
    assert_eq!(all(r#".c[?(@.type=="A")].n"#, &sparse), vec![json!(1)]);
    // A number past int64 is a float64, which an int literal does not compare with.
    let big = json!({"c": [{"n": 9223372036854775808u64}]});
    assert!(JsonPath::parse_column(".c[?(@.n>5)]").expect("parses").find(&big).is_err());
    assert_eq!(all(".c[?(@.n>5.5)].n", &big), vec![json!(9223372036854775808u64)]);
}

#[test]
fn recursive_descent_finds_every_depth() {
    let w = widget();
    assert_eq!(all("..y", &w), vec![json!(1)]);
    let types = all("..type", &w);
    assert_eq!(types, vec![json!("Ready"), json!("Synced")]);
}

#[test]
fn plain_prefix_stops_at_the_first_non_field() {
    let p = JsonPath::parse_column(r#".status.conditions[?(@.type=="Ready")].status"#).expect("parses");
    assert_eq!(p.plain_prefix(), Some(vec!["status", "conditions"]));
    let conditions = widget()["status"]["conditions"].clone();
    let out = p.find_from(&conditions, 2).expect("evaluates");
    assert_eq!(out.first().map(|v| v.as_ref().clone()), Some(json!("True")));
    let p = JsonPath::parse_column(".spec.color").expect("parses");
    assert_eq!(p.plain_prefix(), Some(vec!["spec", "color"]));
}

#[test]
fn parse_errors_are_reported() {
    for bad in [".spec[", ".a[?(@.x==1]", ".a[x]", "{.a", ".a[1:x]", ".a....b"] {
        assert!(JsonPath::parse_template(bad).is_err() || JsonPath::parse_column(bad).is_err(), "{bad}");
    }
}

#[test]
fn values_print_as_go_prints_them() {
    assert_eq!(print_text(&json!("s")), "s");
    assert_eq!(print_text(&json!(5)), "5");
    assert_eq!(print_text(&json!(1.5)), "1.5");
    assert_eq!(print_text(&json!(9223372036854775808u64)), "9.223372036854776e+18");
    assert_eq!(print_text(&json!(true)), "true");
    assert_eq!(print_text(&Value::Null), "<no value>");
    assert_eq!(print_text(&json!(["a", "b"])), r#"["a","b"]"#);
    assert_eq!(print_text(&json!({"b": 1, "a": "<x>"})), r#"{"a":"\u003cx\u003e","b":1}"#);
    assert_eq!(go_format_g(1e6), "1e+06");
    assert_eq!(go_format_g(123456.0), "123456");
    assert_eq!(go_format_g(0.0001), "0.0001");
    assert_eq!(go_format_g(0.00001), "1e-05");
    assert_eq!(go_format_g(2.5e-7), "2.5e-07");
    assert_eq!(go_json_float(1.0), "1");
    assert_eq!(go_json_float(1e21), "1e+21");
    assert_eq!(go_json_float(1.5e-7), "1.5e-7");
    assert_eq!(go_json(&json!([1.0, 2.5])), "[1,2.5]");
}
