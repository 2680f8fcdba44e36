//! CEL rules of CRD schemas through kube-rs: messages, reasons and field paths, transition
//! rules, root rules, ratcheting, and rules that do not type-check.

use super::*;

#[tokio::test]
async fn cel_rules_report_messages_reasons_and_field_paths() {
    let (_e, api) = things(
        spec_schema(
            json!({"min": {"type": "integer"}, "max": {"type": "integer"}, "name": {"type": "string"},
                   "mode": {"type": "string", "x-kubernetes-validations": [
                       {"rule": "self in ['a', 'b']", "messageExpression": "'mode ' + self + ' is not a or b'"}]}}),
            json!({"x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                {"rule": "has(self.name)", "message": "name is needed", "reason": "FieldValueRequired", "fieldPath": ".name"},
                {"rule": "self.max < 100", "reason": "FieldValueForbidden", "fieldPath": ".max"}
            ]}),
        ),
        false,
    )
    .await;
    create_refused(
        &api,
        thing("t1", json!({"spec": {"min": 300, "max": 200, "mode": "c"}})),
        &[
            ("spec.mode", INVALID, r#"Invalid value: "string": mode c is not a or b"#),
            ("spec", INVALID, r#"Invalid value: "object": min must not exceed max"#),
            ("spec.name", REQUIRED, "Required value: name is needed"),
            ("spec.max", FORBIDDEN, "Forbidden: failed rule: self.max < 100"),
        ],
    )
    .await;
    // A value that fails an earlier, shape-level check keeps the rules from running.
    create_refused(&api, thing("t2", json!({"spec": {"min": "x", "max": 1, "name": "n"}})), &[
        ("spec.min", TYPE_INVALID, r#"Invalid value: "string": spec.min in body must be of type integer: "string""#),
        ("<nil>", INVALID, r#"Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"#),
    ])
    .await;
}

#[tokio::test]
async fn transition_rules_compare_with_the_stored_object() {
    let (_e, api) = things(
        spec_schema(
            json!({"id": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "id is immutable"}]},
                   "size": {"type": "integer", "x-kubernetes-validations": [
                       {"rule": "!oldSelf.hasValue() || self >= oldSelf.value()", "message": "size may not shrink", "optionalOldSelf": true}]}}),
            json!({}),
        ),
        false,
    )
    .await;
    api.create(&PostParams::default(), &thing("t1", json!({"spec": {"id": "a", "size": 5}}))).await.expect("create");
    let patch = Patch::Merge(json!({"spec": {"id": "b", "size": 3}}));
    let status = refused(api.patch("t1", &PatchParams::default(), &patch).await);
    assert_invalid(
        &status,
        "Thing",
        "t1",
        &[
            ("spec.id", INVALID, r#"Invalid value: "string": id is immutable"#),
            ("spec.size", INVALID, r#"Invalid value: "integer": size may not shrink"#),
        ],
    );
    assert_eq!(stored(&api.get("t1").await.expect("get"))["spec"], json!({"id": "a", "size": 5}));
    api.patch("t1", &PatchParams::default(), &Patch::Merge(json!({"spec": {"size": 7}}))).await.expect("grow");
}

#[tokio::test]
async fn root_rules_see_the_name_and_report_on_the_nil_path() {
    let (_e, api) = things(
        json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('thing-')", "message": "names start with thing-"}],
            "properties": {"spec": {"type": "object"}}}),
        false,
    )
    .await;
    create_refused(
        &api,
        thing("other", json!({})),
        &[("<nil>", INVALID, r#"Invalid value: "object": names start with thing-"#)],
    )
    .await;
    assert!(api.create(&PostParams::default(), &thing("thing-1", json!({}))).await.is_ok());
}

#[tokio::test]
async fn unchanged_invalid_values_ratchet_after_the_schema_tightens() {
    let (_e, client) = engine().await;
    let crd_name = register(
        &client,
        thing_crd(spec_schema(json!({"name": {"type": "string"}, "size": {"type": "integer"}}), json!({})), false),
    )
    .await;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource(GROUP, "Thing", "things"));
    api.create(&PostParams::default(), &thing("t1", json!({"spec": {"name": "a-long-name", "size": 1}})))
        .await
        .expect("create");
    // Tighten the schema: names may now have at most 3 characters.
    let crds: Api<Crd> = Api::all(client.clone());
    let tightened = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema":
        spec_schema(json!({"name": {"type": "string", "maxLength": 3}, "size": {"type": "integer"}}), json!({}))}}]}});
    crds.patch(&crd_name, &PatchParams::default(), &Patch::Merge(tightened)).await.expect("tighten");
    let refused_new = thing("t2", json!({"spec": {"name": "a-long-name"}}));
    let mut refused_ok = false;
    for _ in 0..300 {
        match api.create(&PostParams::default(), &refused_new).await {
            Err(kube::Error::Api(status)) if status.code == 422 => {
                refused_ok = true;
                break;
            }
            Ok(_) => {
                api.delete("t2", &Default::default()).await.expect("delete");
            }
            Err(e) => panic!("{e:?}"),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused_ok, "the tightened schema is served");
    // Changing another field keeps the old, now too long, name.
    api.patch("t1", &PatchParams::default(), &Patch::Merge(json!({"spec": {"size": 2}}))).await.expect("ratcheted");
    let status = refused(
        api.patch("t1", &PatchParams::default(), &Patch::Merge(json!({"spec": {"name": "another-long"}}))).await,
    );
    assert_invalid(&status, "Thing", "t1", &[("spec.name", TOO_LONG, "Too long: may not be more than 3 bytes")]);
}

/// Rules are compiled against the schema's types when the CRD is registered: kube refuses
/// `size(self)` on an object with fixed properties with one 422 naming the rule.
#[tokio::test]
async fn rules_that_do_not_type_check_refuse_the_crd() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let schema = spec_schema(
        json!({"name": {"type": "string"}}),
        json!({"x-kubernetes-validations": [{"rule": "size(self) <= 64"}, {"rule": "self.name.size() > 0"}]}),
    );
    let crd: Crd = serde_json::from_value(thing_crd(schema, false)).expect("crd");
    let status = refused(crds.create(&PostParams::default(), &crd).await);
    let field = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    let body = r#"Invalid value: apiextensions.ValidationRule{Rule:"size(self) <= 64", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(selfTypeN)'
 | size(self) <= 64
 | ....^"#;
    let masked = |s: &str| regex::Regex::new(r"selfType\d+").expect("regex").replace_all(s, "selfTypeN").into_owned();
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        masked(&status.message),
        format!("CustomResourceDefinition.apiextensions.k8s.io \"things.{GROUP}\" is invalid: {field}: {body}")
    );
    let causes = status.details.expect("details").causes;
    assert_eq!(causes.len(), 1, "the well-typed rule is accepted");
    assert_eq!((causes[0].reason.as_str(), causes[0].field.as_str()), ("FieldValueInvalid", field));
    assert_eq!(masked(&causes[0].message), body);
    assert!(crds.get_opt(&format!("things.{GROUP}")).await.expect("get").is_none());
}

/// cel-go's and kube's libraries at runtime, in the oracle's words: a timestamp's parts in
/// a time zone, `format` as kube's x/text printer writes floats, and the errors a rule
/// meets (shown after `evaluating rule: `).
#[tokio::test]
async fn runtime_functions_answer_as_kube_does() {
    let failing = |message_expression: &str| json!({"rule": "false", "messageExpression": message_expression});
    let (_e, api) = things(
        spec_schema(
            json!({
                "when": {"type": "string", "format": "date-time", "x-kubernetes-validations": [
                    failing("string(self.getHours('America/New_York'))"),
                    failing("string(self.getDayOfWeek('Asia/Tokyo'))"),
                    failing("string(self.getMinutes('+05:30'))")]},
                "ratio": {"type": "number", "x-kubernetes-validations": [
                    failing("'%e'.format([self])"), failing("'%f'.format([self])")]},
                "count": {"type": "integer", "x-kubernetes-validations": [
                    failing("'%x'.format([self])"), {"rule": "-self < 0"}]},
                "name": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [
                    {"rule": "self.charAt(10) == 'a'"}, {"rule": "int(self) == 1"},
                    {"rule": "self.substring(2, 1) == ''"}]},
                "net": {"type": "string", "maxLength": 20, "x-kubernetes-validations": [
                    {"rule": "isCIDR(self)"}, {"rule": "cidr(self).prefixLength() > 0"}]},
                // Both pass in kube: the division by zero is absorbed, the numbers are equal.
                "ten": {"type": "integer", "x-kubernetes-validations": [
                    {"rule": "[0, 1].exists(x, self / x > 5)"}, {"rule": "dyn(self) == 10.0"}]}
            }),
            json!({}),
        ),
        false,
    )
    .await;
    let spec = json!({"when": "2021-12-31T23:30:15.250Z", "ratio": 1234.5678, "count": i64::MIN, "name": "abc",
                      "net": "1.2.3.4/08", "ten": 10});
    create_refused(
        &api,
        thing("t1", json!({ "spec": spec })),
        &[
            ("spec.when", INVALID, r#"Invalid value: "string": 18"#),
            ("spec.when", INVALID, r#"Invalid value: "string": 6"#),
            ("spec.when", INVALID, r#"Invalid value: "string": 0"#),
            ("spec.ratio", INVALID, "Invalid value: \"number\": 1.234568\u{202f}×\u{202f}10⁰³"),
            ("spec.ratio", INVALID, r#"Invalid value: "number": 1,234.567800"#),
            ("spec.count", INVALID, r#"Invalid value: "integer": -8000000000000000"#),
            ("spec.count", INVALID, r#"Invalid value: "integer": integer overflow evaluating rule: -self < 0"#),
            (
                "spec.name",
                INVALID,
                r#"Invalid value: "string": index out of range: 10 evaluating rule: self.charAt(10) == 'a'"#,
            ),
            (
                "spec.name",
                INVALID,
                r#"Invalid value: "string": type conversion error from 'string' to 'int' evaluating rule: int(self) == 1"#,
            ),
            (
                "spec.name",
                INVALID,
                r#"Invalid value: "string": invalid substring range. start: 2, end: 1 evaluating rule: self.substring(2, 1) == ''"#,
            ),
            ("spec.net", INVALID, r#"Invalid value: "string": failed rule: isCIDR(self)"#),
            (
                "spec.net",
                INVALID,
                r#"Invalid value: "string": network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("1.2.3.4/08"): bad bits after slash: "08" evaluating rule: cidr(self).prefixLength() > 0"#,
            ),
        ],
    )
    .await;
}

/// An update that leaves a value failing a rule unchanged goes through, with the rule's
/// error as a `Warning` header, as kube's ratcheting validator answers.
#[tokio::test]
async fn ratcheted_rule_failures_come_back_as_warnings() {
    let (_e, client) = engine().await;
    let plain = spec_schema(json!({"name": {"type": "string"}, "size": {"type": "integer"}}), json!({}));
    let crd_name = register(&client, thing_crd(plain, false)).await;
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource(GROUP, "Thing", "things"));
    api.create(&PostParams::default(), &thing("t1", json!({"spec": {"name": "a-long-name", "size": 1}})))
        .await
        .expect("create");
    let ruled = spec_schema(
        json!({"name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.size() <= 3"}]},
               "size": {"type": "integer"}}),
        json!({}),
    );
    let crds: Api<Crd> = Api::all(client.clone());
    let tightened = json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": ruled}}]}});
    crds.patch(&crd_name, &PatchParams::default(), &Patch::Merge(tightened)).await.expect("tighten");
    let want = r#"299 - "spec.name: Invalid value: \"string\": failed rule: self.size() <= 3""#;
    let mut warned = Vec::new();
    for size in 2..300 {
        let (status, warnings) = merge_patch_warnings(&client, "t1", json!({"spec": {"size": size}})).await;
        assert_eq!(status, 200);
        if !warnings.is_empty() {
            warned = warnings;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(warned, [want], "the tightened schema is served and ratchets");
    let (status, warnings) = merge_patch_warnings(&client, "t1", json!({"spec": {"name": "another"}})).await;
    assert_eq!((status, warnings.len()), (422, 0));
}

/// A merge patch of the thing `name`: the answer's status and `Warning` headers.
async fn merge_patch_warnings(client: &kube::Client, name: &str, patch: Value) -> (u16, Vec<String>) {
    let uri = format!("/apis/{GROUP}/v1/namespaces/default/things/{name}");
    let req = http::Request::patch(uri)
        .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
        .body(kube::client::Body::from(patch.to_string().into_bytes()))
        .expect("request");
    let res = client.send(req).await.expect("answer");
    let warnings = res.headers().get_all("warning").iter().map(|v| v.to_str().unwrap_or_default().to_string());
    (res.status().as_u16(), warnings.collect())
}

/// Library calls are resolved against the functions kube 1.32 declares, and cel-go's
/// validators and program planning look at constant arguments: each of these rules is
/// refused with kube's words, at its own index, while the well-formed calls beside them
/// are accepted.
#[tokio::test]
async fn library_calls_and_constants_are_compiled_as_kube_compiles_them() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let rules = [
        "isURL(self.name) && self.name.lowerAscii().indexOf('a') >= 0",
        "self.name.foo()",
        "quantity(self.name).isGreaterThan(1)",
        "self.name.matches('[')",
        r#""%d".format([self.name]) == 'a'"#,
        "matches(self.name, ')')",
        "sets.contains(self.tags, ['a']) && self.tags.all(t, t.split('/').size() < 3)",
    ];
    let schema = spec_schema(
        json!({"name": {"type": "string", "maxLength": 64},
               "tags": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 16}}}),
        json!({"x-kubernetes-validations": rules.iter().map(|r| json!({"rule": r})).collect::<Vec<_>>()}),
    );
    let crd: Crd = serde_json::from_value(thing_crd(schema, false)).expect("crd");
    let status = refused(crds.create(&PostParams::default(), &crd).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    let compile = |col: usize, rule: &str, message: &str| {
        format!("compilation failed: ERROR: <input>:1:{col}: {message}\n | {rule}\n | {}^", ".".repeat(col - 1))
    };
    let expected = [
        (1, compile(14, rules[1], "undeclared reference to 'foo' (in container '')")),
        (
            2,
            compile(
                34,
                rules[2],
                "found no matching overload for 'isGreaterThan' applied to 'kubernetes.Quantity.(int)'",
            ),
        ),
        (3, compile(19, rules[3], "invalid matches argument")),
        (
            4,
            compile(
                18,
                rules[4],
                "error during formatting: decimal clause can only be used on integers, was given string",
            ),
        ),
        (5, "program instantiation failed: error parsing regexp: unexpected ): `)`".to_string()),
    ];
    let causes = status.details.expect("details").causes;
    let got: Vec<(String, String)> = causes.iter().map(|c| (c.field.clone(), c.message.clone())).collect();
    let want: Vec<(String, String)> = expected
        .iter()
        .map(|(i, detail)| {
            let rule = ValidationRuleValue(rules[*i]);
            (
                format!("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[{i}].rule"),
                format!("Invalid value: {rule}: {detail}"),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert!(crds.get_opt(&format!("things.{GROUP}")).await.expect("get").is_none());
}

/// What kube shows as the bad value of a rule's `Invalid` error (Go's `%#v`).
struct ValidationRuleValue<'a>(&'a str);

impl std::fmt::Display for ValidationRuleValue<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "apiextensions.ValidationRule{{Rule:{:?}, Message:\"\", MessageExpression:\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}}",
            self.0
        )
    }
}

/// kube's estimate sizes a list a macro made by its items' type alone: joining it is over
/// the budget even when the list it came from is bounded.
#[tokio::test]
async fn a_list_made_by_a_macro_is_sized_as_unbounded() {
    let (_target, client) = engine().await;
    let crds: Api<Crd> = Api::all(client.clone());
    let schema = spec_schema(
        json!({"tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}}}),
        json!({"x-kubernetes-validations": [{"rule": "self.tags.map(t, t).join(',') != ''"}]}),
    );
    let crd: Crd = serde_json::from_value(thing_crd(schema, false)).expect("crd");
    let status = refused(crds.create(&PostParams::default(), &crd).await);
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    let causes = status.details.expect("details").causes;
    let rule = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    assert_eq!(
        (causes[0].reason.as_str(), causes[0].field.as_str(), causes[0].message.as_str()),
        (
            "FieldValueForbidden",
            rule,
            "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        )
    );
}
