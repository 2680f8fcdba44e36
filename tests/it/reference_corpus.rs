//! Tests of the fidelity-test harness itself (`tests/it/support/`), run against the real
//! kube-apiserver 1.32 recordings: every file parses into the expected shape, recorder notes
//! are detected, and normalization hides exactly the volatile values while real differences
//! (a changed spec field, a missing cause) are still reported. Later fidelity tests rely on
//! these guarantees when they replay the corpus against our engine.

use crate::support;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use serde_json::{Value, json};
use support::compare::{
    AGE, COMPARED_HEADERS, CONTINUE, Difference, RESOURCE_VERSION, TIMESTAMP, UID, assert_body_matches,
    assert_headers_match, assert_json_matches, diff_json, diff_normalized, headers_from_map, normalize,
    normalize_events,
};
use support::reference::{Body, exchange_files, load, load_all, locate_reference_dir};

/// The panic message of `f`, or a failure if it did not panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

fn event_types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|event| event["type"].as_str().unwrap_or_default()).collect()
}

#[test]
fn all_74_files_parse_in_file_order() {
    let exchanges = load_all();
    assert_eq!(exchanges.len(), 74, "expected 74 .http files");
    let files: Vec<&str> = exchanges.iter().map(|e| e.file.as_str()).collect();
    assert_eq!(files, exchange_files());
    assert_eq!(files.first(), Some(&"01-version.http"));
    assert_eq!(files.last(), Some(&"74-crd-gadget-delete.http"));
}

#[test]
fn request_bodies_are_the_bytes_sent() {
    for exchange in load_all() {
        let request = &exchange.request;
        let declared = request.header("Content-Length");
        let length = request.body.as_ref().map(Vec::len);
        assert_eq!(
            declared.map(|n| n.parse::<usize>().expect("numeric Content-Length")),
            length,
            "{}: body length vs Content-Length",
            exchange.file
        );
    }
}

#[test]
fn json_responses_decode_as_json_or_watch_lines() {
    for exchange in load_all() {
        let response = &exchange.response;
        let json = response.header("Content-Type") == Some("application/json");
        if !json || response.truncated {
            continue;
        }
        let kind = response.body.kind();
        let expected = if exchange.request.is_watch() { "WatchLines" } else { "Json" };
        assert_eq!(kind, expected, "{}", exchange.file);
    }
}

#[test]
fn only_the_four_cut_bodies_are_marked_truncated() {
    let truncated: Vec<String> =
        load_all().into_iter().filter(|e| e.response.truncated).map(|e| e.name().to_string()).collect();
    assert_eq!(
        truncated,
        [
            "04-apis-aggregated-v2",
            "14-apis-aggregated-v2-stable-only",
            "58-openapi-v2-widget-only",
            "60-openapi-v3-stable-v1"
        ]
    );
    let cut = load("04");
    let note = cut.response.recorder_note.as_deref().unwrap_or_default();
    assert!(note.starts_with("[... truncated by the recorder"), "{note}");
    assert_eq!(cut.response.body.kind(), "Text");
    let trimmed = load("14");
    assert_eq!(trimmed.response.body.json()["kind"], "APIGroupDiscoveryList");
}

#[test]
fn widget_create_is_201_with_a_widget() {
    let exchange = load("15-widget-create");
    assert_eq!(exchange, load("15"));
    assert_eq!(exchange.request.method, "POST");
    assert_eq!(exchange.request.path_and_query, "/apis/stable.example.com/v1/namespaces/default/widgets");
    assert_eq!(exchange.response.status, 201);
    assert_eq!(exchange.response.reason_phrase, "Created");
    assert_eq!(exchange.response.body.json()["kind"], "Widget");
    let sent: Value =
        serde_json::from_slice(exchange.request.body.as_deref().unwrap_or_default()).expect("request body is JSON");
    assert_eq!(sent["metadata"]["name"], "w1");
}

#[test]
fn invalid_widget_is_422_with_two_causes() {
    let response = load("17").response;
    assert_eq!(response.status, 422);
    assert_eq!(response.reason_phrase, "Unprocessable Entity");
    let causes = response.body.json()["details"]["causes"].as_array().expect("causes array");
    assert_eq!(causes.len(), 2);
}

#[test]
fn watch_lines_are_added_modified_deleted_in_order() {
    let exchange = load("49");
    assert!(exchange.request.is_watch());
    let events = exchange.response.body.watch_events();
    assert_eq!(event_types(events), ["ADDED", "MODIFIED", "DELETED"]);
}

#[test]
fn single_line_watch_streams_stay_watch_lines() {
    let gone = load("55").response;
    let events = gone.body.watch_events();
    assert_eq!(event_types(events), ["ERROR"]);
    let normalized = normalize_events(events);
    let expected = format!("too old resource version: 1 ({RESOURCE_VERSION})");
    assert_eq!(normalized[0]["object"]["message"], expected.as_str());
    assert_eq!(normalized[0]["object"]["code"], 410);
    assert_eq!(event_types(load("56").response.body.watch_events()), ["ERROR"]);
}

#[test]
fn crd_gone_is_plain_text_404() {
    let response = load("72").response;
    assert_eq!(response.status, 404);
    assert_eq!(response.body, Body::Text("404 page not found".to_string()));
}

#[test]
fn yaml_response_is_kept_raw_and_parses() {
    let body = load("41").response.body;
    assert!(matches!(&body, Body::Yaml(text) if text.starts_with("apiVersion: stable.example.com/v1")));
    let value = body.yaml_value();
    assert_eq!(value["kind"], "Widget");
    assert_eq!(value["metadata"]["name"], "w1");
    assert_eq!(value["metadata"]["resourceVersion"], "83");
}

#[test]
fn apply_patch_request_body_is_raw_yaml() {
    let request = load("30").request;
    assert_eq!(request.header("content-type"), Some("application/apply-patch+yaml"));
    let body = String::from_utf8(request.body.unwrap_or_default()).expect("utf-8 body");
    assert!(body.starts_with("apiVersion: stable.example.com/v1\nkind: Widget\n"), "{body}");
    assert!(body.ends_with("replicas: 2\n"), "{body:?}");
}

#[test]
fn openapi_v3_index_is_json_served_as_text_plain() {
    let response = load("59").response;
    assert_eq!(response.header("Content-Type"), Some("text/plain; charset=utf-8"));
    assert!(response.body.json()["paths"].is_object());
}

#[test]
fn normalize_masks_volatile_metadata() {
    let normalized = normalize(load("15").response.body.json());
    let metadata = &normalized["metadata"];
    assert_eq!(metadata["uid"], UID);
    assert_eq!(metadata["resourceVersion"], RESOURCE_VERSION);
    assert_eq!(metadata["creationTimestamp"], TIMESTAMP);
    assert_eq!(metadata["managedFields"][0]["time"], TIMESTAMP);
    assert_eq!(metadata["name"], "w1");
    assert_eq!(metadata["generation"], 1);
}

#[test]
fn normalize_masks_continue_tokens_status_uids_and_conditions() {
    let list = normalize(load("47").response.body.json());
    assert_eq!(list["metadata"]["continue"], CONTINUE);
    let deleted = normalize(load("52").response.body.json());
    assert_eq!(deleted["details"]["uid"], UID);
    let crd = normalize(load("08").response.body.json());
    for condition in crd["status"]["conditions"].as_array().expect("conditions") {
        assert_eq!(condition["lastTransitionTime"], TIMESTAMP);
    }
    let terminating = normalize(load("66").response.body.json());
    assert_eq!(terminating["metadata"]["deletionTimestamp"], TIMESTAMP);
}

#[test]
fn normalize_masks_table_age_cells_only() {
    let table = normalize(load("35").response.body.json());
    for row in table["rows"].as_array().expect("rows") {
        assert_eq!(row["cells"][4], AGE);
        assert_ne!(row["cells"][0], AGE);
    }
}

#[test]
fn table_watch_remembers_the_age_column_across_events() {
    let events = load("53").response.body.watch_events().to_vec();
    assert!(events.len() >= 2);
    assert!(events[1]["object"]["columnDefinitions"].is_null());
    for event in normalize_events(&events) {
        assert_eq!(event["object"]["rows"][0]["cells"][4], AGE, "{event}");
    }
}

#[test]
fn objects_differing_only_in_volatile_values_compare_equal() {
    let original = load("15").response.body.json().clone();
    let mut other = original.clone();
    other["metadata"]["uid"] = json!("00000000-0000-0000-0000-000000000000");
    other["metadata"]["resourceVersion"] = json!("999");
    other["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z");
    other["metadata"]["managedFields"][0]["time"] = json!("2030-01-01T00:00:00Z");
    assert_eq!(diff_json(&original, &other).len(), 4);
    assert_eq!(diff_normalized(&original, &other), Vec::<Difference>::new());
    assert_json_matches(&original, &other, "volatile values only");
}

#[test]
fn a_changed_spec_field_is_reported_with_its_pointer() {
    let original = load("15").response.body.json().clone();
    let mut other = original.clone();
    other["spec"]["size"] = json!(4);
    other["metadata"]["labels"]["a/b"] = json!("x");
    let differences = diff_normalized(&original, &other);
    assert_eq!(
        differences,
        [
            Difference { pointer: "/metadata/labels/a~1b".to_string(), expected: None, actual: Some(json!("x")) },
            Difference { pointer: "/spec/size".to_string(), expected: Some(json!(3)), actual: Some(json!(4)) },
        ]
    );
    let message = panic_message(|| assert_json_matches(&original, &other, "15 replay"));
    assert!(message.contains("15 replay"), "{message}");
    assert!(message.contains("/spec/size\n      expected: 3\n      actual:   4"), "{message}");
    assert!(message.contains("expected: (absent)"), "{message}");
}

#[test]
fn validation_causes_compare_as_a_set() {
    let recorded = load("17").response.body.json().clone();
    let mut reordered = recorded.clone();
    let causes = reordered["details"]["causes"].as_array_mut().expect("causes");
    causes.reverse();
    let (color, size) = (
        "spec.color: Unsupported value: \"purple\": supported values: \"red\", \"green\", \"blue\"",
        "spec.size: Invalid value: 42: spec.size in body should be less than or equal to 10",
    );
    reordered["message"] = json!(format!("Widget.stable.example.com \"w-bad\" is invalid: [{size}, {color}]"));
    assert_ne!(diff_json(&recorded, &reordered), []);
    assert_json_matches(&recorded, &reordered, "causes in the other order");

    let mut missing = recorded.clone();
    missing["details"]["causes"].as_array_mut().expect("causes").pop();
    let pointers: Vec<String> = diff_normalized(&recorded, &missing).into_iter().map(|d| d.pointer).collect();
    assert_eq!(pointers, ["/details/causes/1"]);
}

#[test]
fn body_comparison_uses_the_same_decoding_for_both_sides() {
    let recorded = load("15").response;
    let compact = serde_json::to_vec(recorded.body.json()).expect("serializable");
    let ours = Body::decode(Some("application/json"), &compact, false);
    assert_body_matches(&recorded, &ours, "15 compact");

    let text = load("72").response;
    let ours = Body::decode(Some("text/plain; charset=utf-8"), b"404 page not found\n", false);
    assert_body_matches(&text, &ours, "72");

    let watch = load("49").response;
    let stream: String = watch.body.watch_events().iter().map(|event| format!("{event}\n")).collect();
    let ours = Body::decode(Some("application/json"), stream.as_bytes(), true);
    assert_body_matches(&watch, &ours, "49");

    let message = panic_message(|| assert_body_matches(&text, &Body::Empty, "72 empty"));
    assert!(message.contains("expected Text, actual Empty"), "{message}");
}

#[test]
fn headers_compare_by_name_with_duplicates_and_ignore_content_length() {
    let created = load("15").response;
    let mut ours = http::HeaderMap::new();
    ours.insert("content-type", "application/json".parse().expect("valid"));
    ours.insert("cache-control", "no-cache, private".parse().expect("valid"));
    ours.insert("content-length", "1".parse().expect("valid"));
    let ours = headers_from_map(&ours);
    let names = [COMPARED_HEADERS, &["Content-Length"]].concat();
    assert_headers_match(&created.headers, &ours, &names, "15 headers");

    let openapi = load("58").response;
    let message = panic_message(|| {
        assert_headers_match(&openapi.headers, &created.headers, COMPARED_HEADERS, "58");
    });
    assert!(message.contains("Vary"), "{message}");
    assert!(message.contains(r#"["Accept-Encoding", "Accept"]"#), "{message}");
    assert!(!message.contains("Cache-Control"), "{message}");
}

#[test]
fn recorded_requests_replay_with_a_real_token() {
    let request = load("15").request.to_http_request("s3cret");
    assert_eq!(request.method(), http::Method::POST);
    assert_eq!(request.uri().path(), "/apis/stable.example.com/v1/namespaces/default/widgets");
    assert_eq!(request.headers()["authorization"], "Bearer s3cret");
    assert_eq!(request.body().len(), 149);
    assert!(load("57").request.header("Authorization").is_none());
}

#[test]
fn a_missing_corpus_fails_saying_where_it_looked() {
    let nowhere = PathBuf::from("/nonexistent/kubectl-crd-reference");
    let message = panic_message(|| {
        locate_reference_dir(Some(nowhere.clone()));
    });
    assert!(message.contains("/nonexistent/kubectl-crd-reference"), "{message}");
    assert!(message.contains("KUBECTL_CRD_REFERENCE_DIR"), "{message}");
}

/// The bytes a server would send for `body` (compact JSON, one event per line, raw text).
fn encode_like_a_server(body: &Body) -> Vec<u8> {
    match body {
        Body::Json(value) => serde_json::to_vec(value).expect("serializable"),
        Body::WatchLines(events) => events.iter().map(|e| format!("{e}\n")).collect::<String>().into_bytes(),
        Body::Text(text) | Body::Yaml(text) => format!("{text}\n").into_bytes(),
        Body::Empty => Vec::new(),
    }
}

#[test]
fn every_recorded_body_matches_itself_re_decoded_from_wire_bytes() {
    for exchange in load_all() {
        let response = &exchange.response;
        let wire = encode_like_a_server(&response.body);
        let content_type = response.header("Content-Type");
        let ours = Body::decode(content_type, &wire, exchange.request.is_watch());
        assert_eq!(ours.kind(), response.body.kind(), "{}", exchange.file);
        assert_body_matches(response, &ours, &exchange.file);
    }
}
