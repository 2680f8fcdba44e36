//! Cases asked of kube-apiserver 1.32 (a custom resource with
//! `spec: {a: 1, list: [1, 2, 3], obj: {x: y}}`, dry-run JSON patches): the result, or
//! `None` where it answered 422.

use super::*;
use serde_json::json;

fn doc() -> Value {
    json!({"metadata": {"name": "w1"}, "spec": {"a": 1, "list": [1, 2, 3], "obj": {"x": "y"}}})
}

fn spec_after(patch: &str) -> Option<Value> {
    apply(&doc(), patch.as_bytes(), true).ok().map(|d| d["spec"].clone())
}

#[test]
fn operations_apply_as_kube_applies_them() {
    let base = doc()["spec"].clone();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut s = base.clone();
        f(&mut s);
        Some(s)
    };
    let cases: Vec<(&str, Option<Value>)> = vec![
        // test
        (r#"[{"op":"test","path":"/spec/a","value":1}]"#, Some(base.clone())),
        (r#"[{"op":"test","path":"/spec/a","value":2}]"#, None),
        (r#"[{"op":"test","path":"/spec/a","value":1.0}]"#, None),
        (r#"[{"op":"test","path":"/spec/a","value":null}]"#, None),
        (r#"[{"op":"test","path":"/spec/a"}]"#, None),
        (r#"[{"op":"test","path":"/spec/nope","value":null}]"#, Some(base.clone())),
        (r#"[{"op":"test","path":"/spec/nope","value":5}]"#, None),
        (r#"[{"op":"test","path":"/spec/nope/deeper","value":null}]"#, None),
        (r#"[{"op":"test","path":"/spec/list/5","value":null}]"#, None),
        (r#"[{"op":"test","path":"/spec/list/-1","value":3}]"#, Some(base.clone())),
        (r#"[{"op":"test","path":"/spec/list/-4","value":null}]"#, None),
        (r#"[{"op":"test","path":"/spec/list","value":[1,2,3]}]"#, Some(base.clone())),
        (r#"[{"op":"test","path":"/spec/obj","value":{"x":"y"}}]"#, Some(base.clone())),
        (r#"[{"op":"test","path":"","value":null}]"#, None),
        (r#"[{"op":"add","path":"/spec/f","value":1.5},{"op":"test","path":"/spec/f","value":1.50}]"#, None),
        // replace
        (r#"[{"op":"replace","path":"/spec/nope","value":5}]"#, with(&|s| s["nope"] = json!(5))),
        (r#"[{"op":"replace","path":"/spec/list/-1","value":9}]"#, with(&|s| s["list"] = json!([1, 2, 9]))),
        (r#"[{"op":"replace","path":"/spec/list/3","value":9}]"#, None),
        (r#"[{"op":"replace","path":"/spec/list/-4","value":9}]"#, None),
        (r#"[{"op":"replace","path":"/spec/a"}]"#, with(&|s| s["a"] = Value::Null)),
        (r#"[{"op":"replace","path":"","value":5}]"#, Some(base.clone())),
        // remove
        (r#"[{"op":"remove","path":"/spec/nope"}]"#, None),
        (r#"[{"op":"remove","path":"/spec/list/-1"}]"#, with(&|s| s["list"] = json!([1, 2]))),
        (r#"[{"op":"remove","path":"/spec/list/3"}]"#, None),
        (r#"[{"op":"remove","path":"/spec/list/-4"}]"#, None),
        // add
        (r#"[{"op":"add","path":"/spec/list/-1","value":9}]"#, with(&|s| s["list"] = json!([1, 2, 3, 9]))),
        (r#"[{"op":"add","path":"/spec/list/-4","value":9}]"#, with(&|s| s["list"] = json!([9, 1, 2, 3]))),
        (r#"[{"op":"add","path":"/spec/list/-5","value":9}]"#, None),
        (r#"[{"op":"add","path":"/spec/list/3","value":9}]"#, with(&|s| s["list"] = json!([1, 2, 3, 9]))),
        (r#"[{"op":"add","path":"/spec/list/4","value":9}]"#, None),
        (r#"[{"op":"add","path":"/spec/list/-","value":9}]"#, with(&|s| s["list"] = json!([1, 2, 3, 9]))),
        (r#"[{"op":"add","path":"/spec/list/x","value":9}]"#, None),
        (r#"[{"op":"add","path":"/spec/list/01","value":9}]"#, with(&|s| s["list"] = json!([1, 9, 2, 3]))),
        (r#"[{"op":"add","path":"/spec/list/+1","value":7}]"#, with(&|s| s["list"] = json!([1, 7, 2, 3]))),
        (r#"[{"op":"add","path":"/spec/list/-0","value":7}]"#, with(&|s| s["list"] = json!([7, 1, 2, 3]))),
        (r#"[{"op":"add","path":"/spec/nope/x","value":9}]"#, None),
        (r#"[{"op":"add","path":"/spec/a/x","value":9}]"#, None),
        (r#"[{"op":"add","path":"zz/spec/zz","value":1}]"#, with(&|s| s["zz"] = json!(1))),
        (r#"[{"op":"add","path":"/spec/a~1b","value":7}]"#, with(&|s| s["a/b"] = json!(7))),
        (r#"[{"op":"add","path":"/spec/a~2b","value":7}]"#, with(&|s| s["a~2b"] = json!(7))),
        (r#"[{"op":"add","path":"/spec/n"}]"#, with(&|s| s["n"] = Value::Null)),
        // copy and move
        (r#"[{"op":"copy","from":"/spec/nope","path":"/spec/b"}]"#, with(&|s| s["b"] = Value::Null)),
        (r#"[{"op":"copy","from":"/spec/nope/x","path":"/spec/b"}]"#, None),
        (r#"[{"op":"copy","from":"/spec/list/-1","path":"/spec/list/0"}]"#, with(&|s| s["list"] = json!([3, 1, 2, 3]))),
        (
            r#"[{"op":"copy","from":"/spec/obj","path":"/spec/obj/inner"}]"#,
            with(&|s| s["obj"] = json!({"inner": {"x": "y"}, "x": "y"})),
        ),
        (r#"[{"op":"move","from":"/spec/nope","path":"/spec/b"}]"#, None),
        (r#"[{"op":"move","from":"/spec/list/-1","path":"/spec/list/0"}]"#, with(&|s| s["list"] = json!([3, 1, 2]))),
        (r#"[{"op":"move","from":"/spec/obj","path":"/spec/obj/inner"}]"#, None),
        (r#"[{"op":"move","from":"/spec/a","path":"/spec/a"}]"#, Some(base.clone())),
        (r#"[{"op":"move","from":"/spec","path":"/spec/x"}]"#, None),
        // kinds
        (r#"[{"op":"frob","path":"/x"}]"#, None),
        (r#"[{"op":"add"}]"#, None),
        (r#"[{"op":null,"path":"/spec/q","value":1}]"#, None),
        ("null", Some(base.clone())),
        ("[]", Some(base.clone())),
    ];
    for (patch, want) in cases {
        assert_eq!(spec_after(patch), want, "{patch}");
    }
}

#[test]
fn kube_runtime_adds_a_first_finalizer() {
    let patch = br#"[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["x"]}]"#;
    let patched = apply(&doc(), patch, true).expect("applies");
    assert_eq!(patched["metadata"]["finalizers"], json!(["x"]));
    // Once there is one, the same test fails.
    assert!(matches!(apply(&patched, patch, true), Err(JsonPatchError::Failed(_))));
}

#[test]
fn scalars_are_compared_as_go_writes_them() {
    let target = json!({"s": "a<b", "f": 1.5, "big": 1e21, "i": 7});
    let passes = |path: &str, value: &str| {
        let patch = format!(r#"[{{"op":"test","path":"{path}","value":{value}}}]"#);
        apply(&target, patch.as_bytes(), true).is_ok()
    };
    assert!(passes("/i", "7"));
    assert!(passes("/f", "1.5"));
    assert!(passes("/big", "1e+21"));
    assert!(!passes("/big", "1e21"));
    // Go's encoder escapes `<` in the document's text; the patch's literal `<` differs.
    assert!(passes("/s", r#""a\u003cb""#));
    assert!(!passes("/s", r#""a<b""#));
}

#[test]
fn bodies_that_are_not_operations_are_refused_with_kubes_messages() {
    let target = doc();
    let decode = |body: &str, strict: bool| match apply(&target, body.as_bytes(), strict) {
        Err(JsonPatchError::Decode(m)) => m,
        other => panic!("{body}: {other:?}"),
    };
    assert_eq!(
        decode("{}", true),
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
    );
    assert_eq!(
        decode("[1]", true),
        "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp"
    );
    assert_eq!(
        decode(r#"[{"op":5}]"#, true),
        "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string"
    );
    assert_eq!(
        decode(r#"[{"op":"add","path":5,"value":1}]"#, true),
        "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string"
    );
    // A number beyond float64 anywhere in a value, named as sent (the oracle's words).
    let beyond = "error decoding patch: json: cannot unmarshal number -1E+400 into Go struct field jsonPatchOp.value of type float64";
    assert_eq!(decode(r#"[{"op":"add","path":"/x","value":-1E+400}]"#, true), beyond);
    assert_eq!(decode(r#"[{"op":"add","path":"/x","value":{"a":["1e400",[-1E+400]]}}]"#, true), beyond);
    assert_eq!(
        decode(r#"[{"value":1e999,"op":5}]"#, true),
        "error decoding patch: json: cannot unmarshal number 1e999 into Go struct field jsonPatchOp.value of type float64"
    );
    assert_eq!(decode("{}", false), "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    assert_eq!(decode("[1]", false), "json: cannot unmarshal number into Go value of type jsonpatch.Operation");
    // Text that does not parse, in the oracle's words (Go's syntax check).
    for (body, why) in [
        (r#"{"spec":{"image":}}"#, "invalid character '}' looking for beginning of value"),
        (r#"{"spec":"#, "unexpected end of JSON input"),
        (r#"[{"op":"add","path":"/spec/x","value":1},]"#, "invalid character ']' looking for beginning of value"),
        ("spec: {image: [}", "invalid character 's' looking for beginning of value"),
        (r#"{"spec":{"image":"a"}}x"#, "invalid character 'x' after top-level value"),
        (r#"{"spec":{"image":"\q"}}"#, "invalid character 'q' in string escape code"),
    ] {
        assert_eq!(decode(body, true), format!("error decoding patch: {why}"), "{body}");
        assert_eq!(decode(body, false), why, "{body}");
    }
    // Without strict decoding a mistyped member is only a failing operation.
    assert!(matches!(apply(&target, br#"[{"op":5}]"#, false), Err(JsonPatchError::Failed(_))));
}

#[test]
fn patches_are_bounded() {
    let target = doc();
    let op = r#"{"op":"test","path":"/spec/a","value":1}"#;
    let ops = |n: usize| format!("[{}]", vec![op; n].join(","));
    assert!(apply(&target, ops(MAX_OPERATIONS).as_bytes(), true).is_ok());
    let too_many = apply(&target, ops(MAX_OPERATIONS + 1).as_bytes(), true);
    assert_eq!(too_many, Err(JsonPatchError::TooManyOperations(MAX_OPERATIONS + 1)));
    assert_eq!(
        JsonPatchError::TooManyOperations(10001).to_string(),
        "The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    // Doubling a 1 kB object by copies: 11 copies (about 2 MiB) pass, 12 (4 MiB) do not.
    let copies = |n: usize| {
        let mut ops = vec![json!({"op": "add", "path": "/spec/s", "value": {"x": "a".repeat(1000)}})];
        ops.extend((0..n).map(|i| json!({"op": "copy", "from": "/spec/s", "path": format!("/spec/s/c{i}")})));
        serde_json::to_vec(&ops).expect("json")
    };
    assert!(apply(&target, &copies(11), true).is_ok());
    assert!(matches!(apply(&target, &copies(12), true), Err(JsonPatchError::Failed(_))));
    // Wrapping an object in itself by moves nests it without growing the patch per level:
    // refused before the result is deeper than what can be read back.
    let wrap = r#"{"op":"add","path":"/t","value":{}},{"op":"move","from":"/x","path":"/t/x"},{"op":"move","from":"/t","path":"/x"}"#;
    let body = format!(r#"[{{"op":"add","path":"/x","value":{{}}}},{}]"#, vec![wrap; 3000].join(","));
    assert!(matches!(apply(&json!({}), body.as_bytes(), true), Err(JsonPatchError::Failed(_))));
}

#[test]
fn the_deepest_result_allowed_reads_back() {
    let mut v = json!(1);
    for _ in 0..MAX_DEPTH {
        v = json!([v]);
    }
    assert_eq!(depth(&v), MAX_DEPTH);
    let text = serde_json::to_string(&v).expect("json");
    assert!(serde_json::from_str::<Value>(&text).is_ok());
}

#[test]
fn arbitrary_paths_and_values_never_panic() {
    let paths = [
        "",
        "/",
        "//",
        "/~",
        "/~0~1",
        "/spec/list/-",
        "/spec/list/99999999999999999999",
        "/spec/list/-9223372036854775808",
        "x",
    ];
    let kinds = ["add", "remove", "replace", "move", "copy", "test"];
    for kind in kinds {
        for path in paths {
            for from in paths {
                for value in ["", r#","value":null"#, r#","value":[null]"#, r#","value":{"a":null}"#] {
                    let patch = format!(r#"[{{"op":"{kind}","path":"{path}","from":"{from}"{value}}}]"#);
                    let _ = apply(&doc(), patch.as_bytes(), true);
                    let _ = apply(&json!({"l": [null, 1]}), patch.as_bytes(), false);
                }
            }
        }
    }
}

/// The strict errors kube-apiserver 1.32 answered for these patches of a widget
/// (`fieldValidation=Strict`), before the unknown fields of the patched object.
#[test]
fn strict_errors_name_the_patch_s_repeats_and_those_left_in_the_object() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#"[{"op":"replace","path":"/spec/a","value":3,"foo":1,"Op":"x"}]"#,
            &[r#"json patch unknown field "[0].foo""#, r#"json patch unknown field "[0].Op""#],
        ),
        (
            r#"[{"op":"replace","op":"replace","path":"/spec/a","value":5}]"#,
            &[r#"json patch duplicate field "[0].op""#],
        ),
        (
            r#"[{"op":"add","path":"/spec/tags","value":[{"a":1,"a":2}]},{"op":"add","path":"/spec/tags/-","value":{"b":1,"b":2}}]"#,
            &[
                r#"json patch duplicate field "[0].value[0].a""#,
                r#"json patch duplicate field "[1].value.b""#,
                r#"duplicate field "spec.tags[0].a""#,
                r#"duplicate field "spec.tags[1].b""#,
            ],
        ),
        (
            r#"[{"op":"add","path":"/spec/x","value":{"b":{"c":1,"c":2},"b":3}}]"#,
            &[
                r#"json patch duplicate field "[0].value.b.c""#,
                r#"json patch duplicate field "[0].value.b""#,
                r#"duplicate field "spec.x.b.c""#,
                r#"duplicate field "spec.x.b""#,
            ],
        ),
        // Go parses a spliced value once an operation replaces it or works inside it.
        (
            r#"[{"op":"add","path":"/spec/x","value":{"c":1,"c":2}},{"op":"replace","path":"/spec/x","value":5}]"#,
            &[r#"json patch duplicate field "[0].value.c""#],
        ),
        (
            r#"[{"op":"add","path":"/spec/x","value":{"c":1,"c":2}},{"op":"add","path":"/spec/x/d","value":5}]"#,
            &[r#"json patch duplicate field "[0].value.c""#],
        ),
    ];
    for (patch, want) in cases {
        let (_, errors) = apply_strictly(&doc(), patch.as_bytes(), true).expect("applies");
        assert_eq!(errors, *want, "{patch}");
        let (_, lenient) = apply_strictly(&doc(), patch.as_bytes(), false).expect("applies");
        assert!(lenient.is_empty(), "fieldValidation=Ignore reports nothing");
    }
}

/// Patches of several operations, and the object repeats kube-apiserver 1.32 found after
/// them, in its order.
#[test]
fn spliced_repeats_follow_go_s_lazy_nodes_through_later_operations() {
    let cases: &[(&str, &[&str])] = &[
        (
            r#"[{"op":"add","path":"/spec/tags","value":[{"a":1,"a":2}]},{"op":"add","path":"/spec/tags/0","value":{"b":1,"b":2}}]"#,
            &[r#"duplicate field "spec.tags[0].b""#, r#"duplicate field "spec.tags[1].a""#],
        ),
        (
            r#"[{"op":"add","path":"/spec/x","value":{"c":1,"c":2}},{"op":"copy","from":"/spec/x","path":"/spec/y"}]"#,
            &[r#"duplicate field "spec.x.c""#, r#"duplicate field "spec.y.c""#],
        ),
        (
            r#"[{"op":"add","path":"/spec/x","value":{"c":1,"c":2}},{"op":"move","from":"/spec/x","path":"/spec/y"}]"#,
            &[r#"duplicate field "spec.y.c""#],
        ),
        (
            r#"[{"op":"add","path":"/spec/x","value":{"c":1,"c":2}},{"op":"test","path":"/spec/x","value":{"c":2}}]"#,
            &[],
        ),
        (
            r#"[{"op":"add","path":"/spec/x","value":{"k":{"c":1,"c":2},"d":1,"d":2}},{"op":"add","path":"/spec/x/e","value":5}]"#,
            &[r#"duplicate field "spec.x.k.c""#],
        ),
        (
            r#"[{"op":"add","path":"/spec/tags","value":[{"a":1,"a":2},{"z":1,"z":2}]},{"op":"remove","path":"/spec/tags/0"}]"#,
            &[r#"duplicate field "spec.tags[0].z""#],
        ),
    ];
    for (patch, want) in cases {
        let (_, errors) = apply_strictly(&doc(), patch.as_bytes(), true).expect("applies");
        let left: Vec<&String> = errors.iter().filter(|e| !e.starts_with("json patch ")).collect();
        assert_eq!(left, *want, "{patch}");
    }
}

/// The strict bookkeeping of what a patch splices in grows with the operations, not with
/// their square: 10,000 operations take about ten times as long as 1,000 (a quadratic
/// walk over everything spliced so far took a hundred times as long, 3.5 s in a debug
/// build). Timed against each other in one run, so a slow machine slows both.
#[test]
fn strict_patches_take_time_in_proportion_to_their_operations() {
    let patch = |n: usize, op: &dyn Fn(usize) -> String| {
        let ops: Vec<String> = (0..n).map(op).collect();
        format!("[{}]", ops.join(","))
    };
    let shapes: [(&str, &dyn Fn(usize) -> String); 3] = [
        ("members", &|i| format!(r#"{{"op":"add","path":"/spec/k{i}","value":{{"a":{i},"a":1}}}}"#)),
        ("items", &|i| format!(r#"{{"op":"add","path":"/spec/list/-","value":{{"a":{i},"a":1}}}}"#)),
        ("under a spliced value", &|i| match i {
            0 => r#"{"op":"add","path":"/spec/n","value":{"x":{"b":1,"b":2}}}"#.to_string(),
            _ => format!(r#"{{"op":"add","path":"/spec/n/k{i}","value":[{i}]}}"#),
        }),
    ];
    for (shape, op) in shapes {
        let time = |n: usize| {
            let body = patch(n, op);
            (0..3)
                .map(|_| {
                    let start = std::time::Instant::now();
                    let (_, errors) = apply_strictly(&doc(), body.as_bytes(), true).expect("applies");
                    assert!(!errors.is_empty(), "{shape}: the repeats are found");
                    start.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let (small, large) = (time(1_000), time(10_000));
        assert!(large < small * 40, "{shape}: 1,000 operations took {small:?}, 10,000 took {large:?}");
    }
}
