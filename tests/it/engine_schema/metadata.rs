//! Object metadata of custom resources through kube-rs, validated with kube's messages.

use super::*;

#[tokio::test]
async fn object_metadata_is_validated_with_kube_messages() {
    let (_e, api) = things(spec_schema(json!({}), json!({})), false).await;
    let mut obj = stored(&thing("Bad_Name", json!({})));
    obj["metadata"]["labels"] = json!({"bad key": "ok", "app": "bad value!"});
    obj["metadata"]["annotations"] = json!({"-nope": "x"});
    let obj: DynamicObject = serde_json::from_value(obj).expect("object");
    create_refused(&api, obj, &[
        ("metadata.name", INVALID, r#"Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#),
        ("metadata.labels", INVALID, "Invalid value: \"bad key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ("metadata.labels", INVALID, "Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ("metadata.annotations", INVALID, "Invalid value: \"-nope\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ])
    .await;
}

#[tokio::test]
async fn the_schema_may_constrain_the_name() {
    let (_e, api) = things(
        json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5}}},
            "spec": {"type": "object"}}}),
        false,
    )
    .await;
    create_refused(
        &api,
        thing("toolongname", json!({})),
        &[("metadata.name", TOO_LONG, "Too long: may not be more than 5 bytes")],
    )
    .await;
    assert!(api.create(&PostParams::default(), &thing("short", json!({}))).await.is_ok());
}

#[tokio::test]
async fn malformed_metadata_is_a_bad_request() {
    let (_target, client) = engine().await;
    register(&client, thing_crd(spec_schema(json!({}), json!({})), false)).await;
    let mut obj = stored(&thing("t1", json!({})));
    obj["metadata"]["labels"] = json!({"a": 1});
    let req = http::Request::post(format!("/apis/{GROUP}/v1/namespaces/default/things"))
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&obj).expect("json"))
        .expect("request");
    let status = refused(client.request::<Value>(req).await);
    assert_eq!(status.code, 400);
    assert_eq!(status.reason, "BadRequest");
    assert!(status.message.starts_with("Thing in version \"v1\" cannot be handled as a Thing: "), "{}", status.message);
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &resource(GROUP, "Thing", "things"));
    assert_absent(&api, "t1").await;
}
