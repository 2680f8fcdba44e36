//! The parsers against kube-apiserver 1.32's own answers: every row was sent to the oracle
//! as a `labelSelector` or `fieldSelector` of a list of four widgets, and is the objects it
//! listed or the message of its 400.

use super::*;
use serde_json::json;

/// `{LV}` in a row: `IsValidLabelValue`'s sentence.
const LV: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
/// `{QN}` in a row: `IsQualifiedName`'s sentence.
const QN: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

type Row = (&'static str, Result<&'static [&'static str], &'static str>);

/// The oracle's four widgets: `w1`, `w2`, `w3`, `w10`, labelled `idx=<n>` and `in=x`.
fn widgets() -> Vec<Value> {
    ["1", "2", "3", "10"]
        .iter()
        .map(|n| json!({"metadata": {"name": format!("w{n}"), "namespace": "t", "labels": {"idx": n, "in": "x"}}}))
        .collect()
}

fn expand(message: &str) -> String {
    message.replace("{LV}", LV).replace("{QN}", QN)
}

/// What a parsed selector lists of the widgets, sorted by name as the rows are.
fn listed(matches: impl Fn(&Value) -> bool) -> Vec<String> {
    let mut names: Vec<String> = widgets()
        .iter()
        .filter(|o| matches(o))
        .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    names.sort();
    names
}

fn check(rows: &[Row], parse: impl Fn(&str) -> Result<Box<dyn Fn(&Value) -> bool>, SelectorError>) {
    for (selector, want) in rows {
        let got = parse(selector).map(|m| listed(m)).map_err(|e| e.0);
        let want = want.map(|names| names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).map_err(expand);
        assert_eq!(got, want, "selector {selector:?}");
    }
}

#[test]
fn label_selectors_parse_and_fail_as_kube_s() {
    check(LABEL_ROWS, |s| {
        LabelSelector::parse(s).map(|sel| Box::new(move |o: &Value| sel.matches(o)) as Box<dyn Fn(&Value) -> bool>)
    });
}

#[test]
fn field_selectors_parse_and_fail_as_kube_s() {
    let supported = vec!["metadata.name".to_string(), "metadata.namespace".to_string()];
    check(FIELD_ROWS, |s| {
        FieldSelector::parse(s, &supported)
            .map(|sel| Box::new(move |o: &Value| sel.matches(o)) as Box<dyn Fn(&Value) -> bool>)
    });
}

#[test]
fn no_input_panics_or_runs_away() {
    // Every prefix of every row, and some hostile shapes, parse or fail without a panic.
    let long = "a in (".repeat(10_000) + &"(,".repeat(10_000) + &"!".repeat(10_000);
    let hostile = ["\0", "\0\0=", "é=ü", "a=é", "((((", "))))", "!!!!", "<<>>", "a in (b,c", &long];
    for s in LABEL_ROWS.iter().chain(FIELD_ROWS).map(|(s, _)| *s).chain(hostile) {
        for end in (0..=s.len()).filter(|i| s.is_char_boundary(*i) && (*i == s.len() || s.len() < 200)) {
            let _ = LabelSelector::parse(&s[..end]);
            let _ = FieldSelector::parse(&s[..end], &[]);
        }
    }
}

const LABEL_ROWS: &[Row] = &[
    ("idx>3", Ok(&["w10"])),
    ("idx<2", Ok(&["w1"])),
    ("idx>1,idx<10", Ok(&["w2", "w3"])),
    ("idx>-1", Err("unable to parse requirement: values[0][idx]: Invalid value: \"-1\": {LV}")),
    ("idx>+1", Err("unable to parse requirement: values[0][idx]: Invalid value: \"+1\": {LV}")),
    (
        "idx<abc",
        Err(
            "unable to parse requirement: values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ),
    (
        "idx>",
        Err(
            "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ),
    ("idx>>2", Err("unable to parse requirement: found '>', expected: identifier")),
    ("idx=>2", Err("unable to parse requirement: found '>', expected: identifier")),
    ("idx!==2", Err("unable to parse requirement: found '=', expected: identifier")),
    ("idx==2", Ok(&["w2"])),
    ("idx=2=", Err("found '=', expected: ',' or 'end of string'")),
    ("idx in (1,2)", Ok(&["w1", "w2"])),
    ("idx in (1,,2)", Ok(&["w1", "w2"])),
    // The second comma of `,,` is consumed with the first: a `)` right after is no value.
    ("idx in (1,,)", Err("unable to parse requirement: found ')', expected: ',', or identifier")),
    ("idx in (,,)", Err("unable to parse requirement: found ')', expected: ',', or identifier")),
    ("idx in (1,,,)", Ok(&["w1"])),
    ("idx in (,,1)", Ok(&["w1"])),
    ("idx in ()", Ok(&[])),
    ("idx in (,)", Ok(&[])),
    ("idx notin ()", Ok(&["w1", "w10", "w2", "w3"])),
    ("idx in (1 2)", Err("unable to parse requirement: found '2', expected: ',' or ')'")),
    ("idx in (1,-2)", Err("unable to parse requirement: values[0][idx]: Invalid value: \"-2\": {LV}")),
    (
        "idx in (-3,b-,1)",
        Err(
            "unable to parse requirement: [values[0][idx]: Invalid value: \"-3\": {LV}, values[2][idx]: Invalid value: \"b-\": {LV}]",
        ),
    ),
    ("idx in 1", Err("unable to parse requirement: found '1' expected: '('")),
    ("idx in (1", Err("unable to parse requirement: found '', expected: ',' or ')'")),
    ("idx in (1,", Err("unable to parse requirement: found '', expected: ',', or identifier")),
    ("idx in (", Err("unable to parse requirement: found '', expected: ',', ')' or identifier")),
    ("idx in", Err("unable to parse requirement: found '' expected: '('")),
    ("idx notin", Err("unable to parse requirement: found '' expected: '('")),
    ("in=x", Ok(&["w1", "w10", "w2", "w3"])),
    ("in in (x)", Ok(&["w1", "w10", "w2", "w3"])),
    ("in", Ok(&["w1", "w10", "w2", "w3"])),
    ("!in", Ok(&[])),
    ("idx=in", Ok(&[])),
    ("!", Err("unable to parse requirement: found '', expected: identifier")),
    ("!idx=2", Err("found '=', expected: ',' or 'end of string'")),
    ("!idx,idx", Ok(&[])),
    ("a b", Err("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")),
    ("a b c", Err("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")),
    ("a=b c", Err("found 'c', expected: ',' or 'end of string'")),
    ("a=b,", Err("found '', expected: identifier after ','")),
    ("a=b,,", Err("found ',', expected: identifier after ','")),
    (",a", Err("found ',', expected: !, identifier, or 'end of string'")),
    ("a==", Ok(&[])),
    ("a=", Ok(&[])),
    ("a!=", Ok(&["w1", "w10", "w2", "w3"])),
    ("a=-x", Err("unable to parse requirement: values[0][a]: Invalid value: \"-x\": {LV}")),
    ("a=x/y", Err("unable to parse requirement: values[0][a]: Invalid value: \"x/y\": {LV}")),
    (
        "a/b/c=d",
        Err(
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name {QN} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        ),
    ),
    ("/b=c", Err("unable to parse requirement: <nil>: Invalid value: \"/b\": prefix part must be non-empty")),
    (
        "a/=c",
        Err("unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name part {QN}"),
    ),
    (
        "A.B/c=d",
        Err(
            "unable to parse requirement: <nil>: Invalid value: \"A.B/c\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
    ),
    ("a.b/c=d", Ok(&[])),
    ("example.com/x", Ok(&[])),
    ("-a", Err("unable to parse requirement: <nil>: Invalid value: \"-a\": name part {QN}")),
    ("a-", Err("unable to parse requirement: <nil>: Invalid value: \"a-\": name part {QN}")),
    ("x@y=1", Err("unable to parse requirement: <nil>: Invalid value: \"x@y\": name part {QN}")),
    ("idx = 2", Ok(&["w2"])),
    ("  idx  in  ( 1 , 2 )  ", Ok(&["w1", "w2"])),
    ("idx\t=2", Ok(&["w2"])),
    ("idx=2\0garbage", Err("found 'garbage', expected: ',' or 'end of string'")),
    ("idx\0b", Err("unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt")),
    ("(a)", Err("found '(', expected: !, identifier, or 'end of string'")),
    (")", Err("found ')', expected: !, identifier, or 'end of string'")),
    ("a)", Err("unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt")),
    ("a=(b)", Err("unable to parse requirement: found '(', expected: identifier")),
    ("a in (b)c", Err("found 'c', expected: ',' or 'end of string'")),
    ("a in (b),c", Ok(&[])),
    ("a in (b))", Err("found ')', expected: ',' or 'end of string'")),
    (
        "idx>1.5",
        Err(
            "unable to parse requirement: values[0]: Invalid value: \"1.5\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ),
    (
        "idx<99999999999999999999",
        Err(
            "unable to parse requirement: values[0]: Invalid value: \"99999999999999999999\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ),
    (
        "a>b>c",
        Err(
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ),
    ("a<>b", Err("unable to parse requirement: found '>', expected: identifier")),
    ("a=>b", Err("unable to parse requirement: found '>', expected: identifier")),
    ("a!b", Err("unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt")),
    ("a!!b", Err("unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt")),
    (
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=b",
        Err(
            "unable to parse requirement: <nil>: Invalid value: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": name part must be no more than 63 characters",
        ),
    ),
    (
        "a=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
        Err(
            "unable to parse requirement: values[0][a]: Invalid value: \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\": must be no more than 63 characters",
        ),
    ),
    ("a=-", Err("unable to parse requirement: values[0][a]: Invalid value: \"-\": {LV}")),
    (
        "idx>-abc",
        Err(
            "unable to parse requirement: [values[0]: Invalid value: \"-abc\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][idx]: Invalid value: \"-abc\": {LV}]",
        ),
    ),
    ("idx>-5", Err("unable to parse requirement: values[0][idx]: Invalid value: \"-5\": {LV}")),
];

const FIELD_ROWS: &[Row] = &[
    ("metadata.name=w1", Ok(&["w1"])),
    ("metadata.name = w1", Err("field label not supported: metadata.name ")),
    ("metadata.name= w1", Ok(&[])),
    (" metadata.name=w1", Err("field label not supported:  metadata.name")),
    ("metadata.name==w1", Ok(&["w1"])),
    ("metadata.name!=w1", Ok(&["w10", "w2", "w3"])),
    ("metadata.name", Err("invalid selector: 'metadata.name'; can't understand 'metadata.name'")),
    ("metadata.name=w1,", Ok(&["w1"])),
    (",metadata.name=w1", Ok(&["w1"])),
    ("metadata.name=w1,,metadata.namespace=t", Ok(&["w1"])),
    ("spec.size=x,metadata.uid=y", Err("field label not supported: metadata.uid")),
    ("metadata.uid=y,spec.size=x", Err("field label not supported: metadata.uid")),
    ("metadata.name=a=b", Err("invalid field selector: unescaped character in value: 61")),
    ("metadata.name=a\\=b", Ok(&[])),
    ("metadata.name=a\\,b", Ok(&[])),
    ("metadata.name=a\\\\b", Ok(&[])),
    ("metadata.name=a\\xb", Err("invalid field selector: invalid escape sequence: \\x")),
    ("metadata.name=a\\", Err("invalid field selector: invalid escape sequence: \\")),
    ("metadata.name=a\\,b,bad", Err("invalid selector: 'metadata.name=a\\,b,bad'; can't understand 'bad'")),
    ("bad,metadata.uid=x", Err("invalid selector: 'bad,metadata.uid=x'; can't understand 'bad'")),
    ("zzz,metadata.uid=x", Err("invalid selector: 'zzz,metadata.uid=x'; can't understand 'zzz'")),
    ("metadata.uid=x,zzz", Err("invalid selector: 'metadata.uid=x,zzz'; can't understand 'zzz'")),
    ("=x", Err("field label not supported: ")),
    ("=", Ok(&["w1", "w10", "w2", "w3"])),
    ("metadata.name!=w1,metadata.name!=w2", Ok(&["w10", "w3"])),
    ("metadata.name=w1,metadata.name=w2", Ok(&[])),
    ("metadata.namespace=t", Ok(&["w1", "w10", "w2", "w3"])),
    ("metadata.name=", Ok(&[])),
    ("metadata.name==", Ok(&[])),
    ("metadata.name=!x", Ok(&[])),
    ("metadata.name!==x", Err("invalid field selector: unescaped character in value: 61")),
];
