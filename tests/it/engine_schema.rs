//! Custom-resource schemas through kube-rs, in process: every structural-schema rule a CRD
//! can state (types, formats, enums, bounds, list types, embedded resources, CEL rules),
//! pruning and defaulting, and object metadata, answered as kube-apiserver 1.32 answers:
//! one 422 `Invalid` Status with every cause, and nothing stored.

mod cel;
mod metadata;

use crate::support;
use crate::support::crd::CrdBuilder;

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, Status};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;
use support::reference::load;
use support::target::Target;

type Crd = k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

const GROUP: &str = "schema.example.com";

/// The engine in process, or the oracle (see [`support::target`]).
async fn engine() -> (Target, kube::Client) {
    support::target::target().await
}

/// A CRD for `Thing` in `schema.example.com` with `schema` as its `openAPIV3Schema`.
fn thing_crd(schema: Value, status_subresource: bool) -> Value {
    let crd = CrdBuilder::new(GROUP, "Thing").list_kind().schema(schema);
    if status_subresource { crd.status() } else { crd }.build()
}

async fn wait_established(crds: &Api<Crd>, name: &str) {
    for _ in 0..300 {
        let crd = crds.get(name).await.expect("get crd");
        let established = crd
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Established" && c.status == "True"));
        if established {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{name} never became Established");
}

/// Registers a CRD and waits until its kind is served.
async fn register(client: &kube::Client, crd: Value) -> String {
    let crds: Api<Crd> = Api::all(client.clone());
    let crd: Crd = serde_json::from_value(crd).expect("crd");
    let name = crd.metadata.name.clone().expect("name");
    crds.create(&PostParams::default(), &crd).await.expect("create crd");
    wait_established(&crds, &name).await;
    name
}

fn resource(group: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource {
        group: group.into(),
        version: "v1".into(),
        api_version: format!("{group}/v1"),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// A `Thing` API over a fresh engine whose CRD has `schema`.
async fn things(schema: Value, status_subresource: bool) -> (Target, Api<DynamicObject>) {
    let (engine, client) = engine().await;
    register(&client, thing_crd(schema, status_subresource)).await;
    (engine, Api::namespaced_with(client, "default", &resource(GROUP, "Thing", "things")))
}

/// A `Thing` named `name` with the given top-level fields (`spec`, `status`, ...).
fn thing(name: &str, fields: Value) -> DynamicObject {
    let mut obj = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "Thing", "metadata": {"name": name}});
    if let (Some(o), Some(f)) = (obj.as_object_mut(), fields.as_object()) {
        o.extend(f.clone());
    }
    serde_json::from_value(obj).expect("object")
}

/// A schema whose `spec` has the given properties (and optional extra keywords).
fn spec_schema(properties: Value, extra: Value) -> Value {
    let mut spec = json!({"type": "object", "properties": properties});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    json!({"type": "object", "properties": {"spec": spec, "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
}

fn stored(obj: &DynamicObject) -> Value {
    serde_json::to_value(obj).expect("json")
}

/// The Status of a refused write.
fn refused<T: std::fmt::Debug>(result: kube::Result<T>) -> Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// Checks a 422 as kube-apiserver words it: `Kind.group "name" is invalid: ...` with one
/// cause per error (compared as a set, since kube's order is not stable) and a message
/// that lists the same errors as the causes.
fn assert_invalid(status: &Status, kind: &str, name: &str, expected: &[(&str, &str, &str)]) {
    assert_eq!(status.code, 422, "{status:?}");
    assert_eq!(status.reason, "Invalid", "{status:?}");
    let details = status.details.as_ref().expect("details");
    assert_eq!(details.name, name);
    assert_eq!(details.kind, kind);
    let causes: BTreeSet<(String, String, String)> =
        details.causes.iter().map(|c| (c.field.clone(), c.reason.clone(), c.message.clone())).collect();
    let want: BTreeSet<(String, String, String)> =
        expected.iter().map(|(f, r, m)| (f.to_string(), r.to_string(), m.to_string())).collect();
    assert_eq!(causes, want, "causes of {}", status.message);
    assert_eq!(details.causes.len(), expected.len(), "one cause per error: {:?}", details.causes);
    let listed: Vec<String> = details.causes.iter().map(|c| format!("{}: {}", c.field, c.message)).collect();
    let listed = if listed.len() == 1 { listed[0].clone() } else { format!("[{}]", listed.join(", ")) };
    assert_eq!(status.message, format!("{kind}.{} {name:?} is invalid: {listed}", details.group));
}

async fn assert_absent(api: &Api<DynamicObject>, name: &str) {
    assert!(api.get_opt(name).await.expect("get").is_none(), "{name} must not be stored");
}

async fn create_refused(api: &Api<DynamicObject>, obj: DynamicObject, expected: &[(&str, &str, &str)]) {
    let name = obj.metadata.name.clone().unwrap_or_default();
    let status = refused(api.create(&PostParams::default(), &obj).await);
    assert_invalid(&status, "Thing", &name, expected);
    assert_absent(api, &name).await;
}

const TYPE_INVALID: &str = "FieldValueTypeInvalid";
const INVALID: &str = "FieldValueInvalid";
const REQUIRED: &str = "FieldValueRequired";
const NOT_SUPPORTED: &str = "FieldValueNotSupported";
const TOO_LONG: &str = "FieldValueTooLong";
const TOO_MANY: &str = "FieldValueTooMany";
const DUPLICATE: &str = "FieldValueDuplicate";
const FORBIDDEN: &str = "FieldValueForbidden";

#[tokio::test]
async fn the_recorded_widget_422_is_answered_like_kube_apiserver() {
    let (_target, client) = engine().await;
    let crd: Value = serde_json::from_slice(load("06").request.body.as_deref().expect("body")).expect("crd");
    register(&client, crd).await;
    let widgets: Api<DynamicObject> =
        Api::namespaced_with(client, "default", &resource("stable.example.com", "Widget", "widgets"));
    let ex = load("17");
    let body: DynamicObject = serde_json::from_slice(ex.request.body.as_deref().expect("body")).expect("widget");
    let status = refused(widgets.create(&PostParams::default(), &body).await);
    let recorded = ex.response.body.json();
    let expected: Vec<(String, String, String)> = recorded["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
            (s("field"), s("reason"), s("message"))
        })
        .collect();
    let expected: Vec<(&str, &str, &str)> =
        expected.iter().map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_str())).collect();
    assert_invalid(&status, "Widget", "w-bad", &expected);
    assert_eq!(status.details.as_ref().expect("details").group, "stable.example.com");
    assert_absent(&widgets, "w-bad").await;
}

#[tokio::test]
async fn wrong_types_are_type_invalid() {
    let (_e, api) = things(
        spec_schema(
            json!({"replicas": {"type": "integer"}, "name": {"type": "string"}, "on": {"type": "boolean"},
                   "ratio": {"type": "number"}, "items": {"type": "array", "items": {"type": "string"}},
                   "nested": {"type": "object", "properties": {"x": {"type": "string"}}}}),
            json!({}),
        ),
        false,
    )
    .await;
    let obj = thing(
        "t1",
        json!({"spec": {"replicas": "string", "name": 5, "on": "yes", "ratio": 1.5,
                                          "items": ["a", 2], "nested": "flat"}}),
    );
    create_refused(
        &api,
        obj,
        &[
            (
                "spec.replicas",
                TYPE_INVALID,
                r#"Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
            ),
            (
                "spec.name",
                TYPE_INVALID,
                r#"Invalid value: "integer": spec.name in body must be of type string: "integer""#,
            ),
            ("spec.on", TYPE_INVALID, r#"Invalid value: "string": spec.on in body must be of type boolean: "string""#),
            (
                "spec.items[1]",
                TYPE_INVALID,
                r#"Invalid value: "integer": spec.items[1] in body must be of type string: "integer""#,
            ),
            (
                "spec.nested",
                TYPE_INVALID,
                r#"Invalid value: "string": spec.nested in body must be of type object: "string""#,
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn required_fields_enums_and_lengths() {
    let (_e, api) = things(
        spec_schema(
            json!({"cronSpec": {"type": "string"}, "x": {"type": "string", "enum": ["a", "b"]},
                   "name": {"type": "string", "maxLength": 5}, "code": {"type": "string", "minLength": 3},
                   "slug": {"type": "string", "pattern": "^[a-z]+$"}}),
            json!({"required": ["cronSpec"]}),
        ),
        false,
    )
    .await;
    let obj = thing("t1", json!({"spec": {"x": "c", "name": "toolong", "code": "ab", "slug": "Not-A-Slug"}}));
    create_refused(
        &api,
        obj,
        &[
            ("spec.cronSpec", REQUIRED, "Required value"),
            ("spec.x", NOT_SUPPORTED, r#"Unsupported value: "c": supported values: "a", "b""#),
            ("spec.name", TOO_LONG, "Too long: may not be more than 5 bytes"),
            ("spec.code", INVALID, r#"Invalid value: "ab": spec.code in body should be at least 3 chars long"#),
            ("spec.slug", INVALID, r#"Invalid value: "Not-A-Slug": spec.slug in body should match '^[a-z]+$'"#),
        ],
    )
    .await;
    let ok =
        api.create(&PostParams::default(), &thing("t2", json!({"spec": {"cronSpec": "* * * * *", "x": "a"}}))).await;
    assert!(ok.is_ok(), "{ok:?}");
}

#[tokio::test]
async fn numeric_bounds_and_collection_sizes() {
    let (_e, api) = things(
        spec_schema(
            json!({
                "size": {"type": "integer", "minimum": 0, "maximum": 10},
                "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "maximum": 1, "exclusiveMaximum": true},
                "step": {"type": "integer", "multipleOf": 5},
                "few": {"type": "array", "minItems": 2, "items": {"type": "string"}},
                "many": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                "small": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
                "big": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}}
            }),
            json!({}),
        ),
        false,
    )
    .await;
    let obj = thing(
        "t1",
        json!({"spec": {"size": 42, "ratio": 1, "step": 7, "few": ["a"], "many": ["a", "b", "c"],
                                          "small": {"a": "1", "b": "2"}, "big": {"a": "1"}}}),
    );
    create_refused(
        &api,
        obj,
        &[
            ("spec.size", INVALID, "Invalid value: 42: spec.size in body should be less than or equal to 10"),
            ("spec.ratio", INVALID, "Invalid value: 1: spec.ratio in body should be less than 1"),
            ("spec.step", INVALID, "Invalid value: 7: spec.step in body should be a multiple of 5"),
            ("spec.few", INVALID, "Invalid value: 1: spec.few in body should have at least 2 items"),
            ("spec.many", TOO_MANY, "Too many: 3: must have at most 2 items"),
            ("spec.small", TOO_MANY, "Too many: 2: must have at most 1 items"),
            ("spec.big", INVALID, "Invalid value: 1: spec.big in body should have at least 2 properties"),
        ],
    )
    .await;
    let obj = thing("t2", json!({"spec": {"size": -1, "ratio": 0}}));
    create_refused(
        &api,
        obj,
        &[
            ("spec.size", INVALID, "Invalid value: -1: spec.size in body should be greater than or equal to 0"),
            ("spec.ratio", INVALID, "Invalid value: 0: spec.ratio in body should be greater than 0"),
        ],
    )
    .await;
}

#[tokio::test]
async fn formats_kube_supports_are_checked() {
    let (_e, api) = things(
        spec_schema(
            json!({"day": {"type": "string", "format": "date"}, "at": {"type": "string", "format": "date-time"},
                   "id": {"type": "string", "format": "uuid"}, "data": {"type": "string", "format": "byte"},
                   "wait": {"type": "string", "format": "duration"}, "n": {"type": "integer", "format": "int32"},
                   "free": {"type": "string", "format": "no-such-format"}}),
            json!({}),
        ),
        false,
    )
    .await;
    let obj = thing(
        "t1",
        json!({"spec": {"day": "2024-02-30", "at": "yesterday", "id": "not-a-uuid",
                                          "data": "***", "wait": "forever", "n": 3_000_000_000_i64, "free": "anything"}}),
    );
    create_refused(
        &api,
        obj,
        &[
            (
                "spec.day",
                TYPE_INVALID,
                r#"Invalid value: "2024-02-30": spec.day in body must be of type date: "2024-02-30""#,
            ),
            (
                "spec.at",
                TYPE_INVALID,
                r#"Invalid value: "yesterday": spec.at in body must be of type date-time: "yesterday""#,
            ),
            (
                "spec.id",
                TYPE_INVALID,
                r#"Invalid value: "not-a-uuid": spec.id in body must be of type uuid: "not-a-uuid""#,
            ),
            ("spec.data", TYPE_INVALID, r#"Invalid value: "***": spec.data in body must be of type byte: "***""#),
            (
                "spec.wait",
                TYPE_INVALID,
                r#"Invalid value: "forever": spec.wait in body must be of type duration: "forever""#,
            ),
        ],
    )
    .await;
    let good = thing(
        "t2",
        json!({"spec": {"day": "2024-02-29", "at": "2024-01-02T03:04:05Z",
                                           "id": "0bd3a1f6-5dc0-4e0b-9c4e-2b5c0b4e5d6f", "data": "aGk=", "wait": "1h30m"}}),
    );
    assert!(api.create(&PostParams::default(), &good).await.is_ok());
}

#[tokio::test]
async fn nullable_and_int_or_string() {
    let (_e, api) = things(
        spec_schema(
            json!({"maybe": {"type": "string", "nullable": true}, "never": {"type": "string"},
                   "port": {"x-kubernetes-int-or-string": true},
                   "names": {"type": "array", "items": {"type": "string"}}}),
            json!({}),
        ),
        false,
    )
    .await;
    let created = api
        .create(&PostParams::default(), &thing("t1", json!({"spec": {"maybe": null, "never": null, "port": 80}})))
        .await
        .expect("create");
    // A null for a non-nullable field without a default is dropped while decoding.
    assert_eq!(stored(&created)["spec"], json!({"maybe": null, "port": 80}));
    assert!(api.create(&PostParams::default(), &thing("t2", json!({"spec": {"port": "http"}}))).await.is_ok());
    create_refused(
        &api,
        thing("t3", json!({"spec": {"port": true, "names": ["a", null]}})),
        &[
            (
                "spec.port",
                TYPE_INVALID,
                r#"Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#,
            ),
            (
                "spec.names[1]",
                TYPE_INVALID,
                r#"Invalid value: "null": spec.names[1] in body must be of type string: "null""#,
            ),
        ],
    )
    .await;
}

#[tokio::test]
async fn unknown_fields_are_pruned_unless_preserved() {
    let (_e, api) = things(
        spec_schema(
            json!({"known": {"type": "string"},
                   "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                   "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}),
            json!({}),
        ),
        false,
    )
    .await;
    let obj = thing(
        "t1",
        json!({"spec": {"known": "k", "unknown": 1, "free": {"anything": {"goes": true}},
                                          "list": [{"a": "x", "b": "y"}]},
                                 "topLevel": "dropped"}),
    );
    let mut obj_json = stored(&obj);
    obj_json["metadata"]["bogus"] = json!("dropped");
    let obj: DynamicObject = serde_json::from_value(obj_json).expect("object");
    let created = api.create(&PostParams::default(), &obj).await.expect("create");
    let got = stored(&api.get("t1").await.expect("get"));
    assert_eq!(got["spec"], json!({"known": "k", "free": {"anything": {"goes": true}}, "list": [{"a": "x"}]}));
    assert!(got.get("topLevel").is_none());
    assert!(got["metadata"].get("bogus").is_none());
    assert_eq!(stored(&created)["spec"], got["spec"]);
}

/// A YAML body with a repeated key and an unknown field, under `fieldValidation=Strict`:
/// one 400 whose strict decoding error names both, go-yaml's error first, as kube's
/// decoder reports them.
#[tokio::test]
async fn strict_yaml_bodies_name_repeated_keys_and_unknown_fields_together() {
    let (_e, api) = things(spec_schema(json!({"a": {"type": "integer"}}), json!({})), false).await;
    let yaml =
        "apiVersion: schema.example.com/v1\nkind: Thing\nmetadata:\n  name: t1\nspec:\n  a: 1\n  a: 2\n  zz: 3\n";
    let req = http::Request::post(format!("/apis/{GROUP}/v1/namespaces/default/things?fieldValidation=Strict"))
        .header(http::header::CONTENT_TYPE, "application/yaml")
        .body(yaml.as_bytes().to_vec())
        .expect("request");
    let (status, body) = support::target::send(&api.clone().into_client(), req).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["message"],
        "Thing in version \"v1\" cannot be handled as a Thing: strict decoding error: yaml: unmarshal errors:\n  \
         line 7: key \"a\" already set in map, unknown field \"spec.zz\""
    );
    assert_absent(&api, "t1").await;
}

#[tokio::test]
async fn defaults_apply_at_every_depth() {
    let (_e, api) = things(
        json!({"type": "object", "properties": {"spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "mode": {"type": "string", "default": "fast"},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "protocol": {"type": "string", "default": "TCP"}, "port": {"type": "integer"}}}},
            "limits": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                "max": {"type": "integer", "default": 10}}}},
            "nested": {"type": "object", "default": {"inner": {}}, "properties": {"inner": {"type": "object", "properties": {
                "deep": {"type": "string", "default": "d"}}}}}
        }}}}),
        false,
    )
    .await;
    api.create(&PostParams::default(), &thing("t1", json!({}))).await.expect("create without spec");
    let got = stored(&api.get("t1").await.expect("get"));
    assert_eq!(got["spec"], json!({"replicas": 1, "mode": "fast", "nested": {"inner": {"deep": "d"}}}));
    api.create(
        &PostParams::default(),
        &thing(
            "t2",
            json!({"spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}],
                                     "limits": {"cpu": {}}, "mode": null}}),
        ),
    )
    .await
    .expect("create");
    let got = stored(&api.get("t2").await.expect("get"));
    assert_eq!(
        got["spec"],
        json!({"replicas": 3, "mode": "fast", "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}],
               "limits": {"cpu": {"max": 10}}, "nested": {"inner": {"deep": "d"}}})
    );
}

#[tokio::test]
async fn list_types_refuse_duplicates() {
    let (_e, api) = things(
        spec_schema(
            json!({
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "required": ["name"], "properties": {
                              "name": {"type": "string"}, "port": {"type": "integer"}}}},
                "atomic": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
                "labels": {"type": "object", "x-kubernetes-map-type": "granular", "additionalProperties": {"type": "string"}}
            }),
            json!({}),
        ),
        false,
    )
    .await;
    let obj = thing(
        "t1",
        json!({"spec": {"tags": ["a", "b", "a"], "atomic": ["x", "x"], "labels": {"a": "b"},
                                          "ports": [{"name": "http", "port": 80}, {"name": "http", "port": 8080}]}}),
    );
    create_refused(
        &api,
        obj,
        &[
            ("spec.tags[2]", DUPLICATE, r#"Duplicate value: "a""#),
            ("spec.ports[1]", DUPLICATE, r#"Duplicate value: map[string]interface {}{"name":"http"}"#),
        ],
    )
    .await;
}

#[tokio::test]
async fn embedded_resources_carry_valid_type_and_object_meta() {
    let (_e, api) = things(
        spec_schema(
            json!({"template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                "x-kubernetes-preserve-unknown-fields": true}}),
            json!({}),
        ),
        false,
    )
    .await;
    create_refused(
        &api,
        thing("t1", json!({"spec": {"template": {"metadata": {"name": "bad/name"}}}})),
        &[
            ("spec.template.apiVersion", REQUIRED, "Required value: must not be empty"),
            ("spec.template.kind", REQUIRED, "Required value: must not be empty"),
            ("spec.template.metadata.name", INVALID, r#"Invalid value: "bad/name": may not contain '/'"#),
        ],
    )
    .await;
    let created = api
        .create(
            &PostParams::default(),
            &thing(
                "t2",
                json!({"spec": {"template": {"apiVersion": "v1", "kind": "Pod",
                                                      "metadata": {"name": "p", "unknownMeta": 1}, "spec": {"x": 1}}}}),
            ),
        )
        .await
        .expect("create");
    assert_eq!(
        stored(&created)["spec"]["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}})
    );
}

#[tokio::test]
async fn status_updates_are_validated_against_the_schema() {
    let (_e, api) = things(
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
            "status": {"type": "object", "properties": {
                "replicas": {"type": "integer", "minimum": 0},
                "phase": {"type": "string", "enum": ["Pending", "Ready"]}}}}}),
        true,
    )
    .await;
    let created = api.create(&PostParams::default(), &thing("t1", json!({"spec": {"size": 1}}))).await.expect("create");
    let mut bad = stored(&created);
    bad["status"] = json!({"replicas": -1, "phase": "Lost", "extra": "pruned"});
    let bad: DynamicObject = serde_json::from_value(bad).expect("object");
    let status = refused(api.replace_status("t1", &PostParams::default(), &bad).await);
    assert_invalid(
        &status,
        "Thing",
        "t1",
        &[
            (
                "status.replicas",
                INVALID,
                // kube validates /status with the status schema as the root: `replicas in body`.
                "Invalid value: -1: replicas in body should be greater than or equal to 0",
            ),
            ("status.phase", NOT_SUPPORTED, r#"Unsupported value: "Lost": supported values: "Pending", "Ready""#),
        ],
    );
    assert!(stored(&api.get("t1").await.expect("get")).get("status").is_none(), "nothing stored");
    let patched = api
        .patch_status(
            "t1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 2, "phase": "Ready", "extra": 1}})),
        )
        .await
        .expect("valid status");
    assert_eq!(stored(&patched)["status"], json!({"replicas": 2, "phase": "Ready"}));
}
