use super::*;
use crate::resources::managed_fields::schema::Schema;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::json;

/// The widget schema of the reference CRD, plus a keyed list, a set and an atomic map.
fn widget() -> Schema {
    let props: JSONSchemaProps = serde_json::from_value(json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "size": {"type": "integer"},
                "color": {"type": "string"},
                "replicas": {"type": "integer"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                          "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {
                              "name": {"type": "string"}, "port": {"type": "integer"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                             "additionalProperties": {"type": "string"}}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
        }
    }))
    .expect("schema");
    Schema::for_kind(Some(&props), false)
}

fn fields(v: serde_json::Value) -> Set {
    Set::from_fields_v1(&v).expect("fieldsV1")
}

#[test]
fn comparing_with_nothing_adds_every_field_and_every_new_map() {
    let obj = json!({"metadata": {"labels": {"app": "demo"}}, "spec": {"size": 3, "color": "red"}});
    let c = compare(&widget(), &json!({}), &obj);
    assert_eq!(
        c.added,
        fields(json!({
            "f:metadata": {".": {}, "f:labels": {".": {}, "f:app": {}}},
            "f:spec": {".": {}, "f:color": {}, "f:size": {}}
        }))
    );
    assert!(c.modified.is_empty() && c.removed.is_empty());
}

#[test]
fn comparing_reports_modified_leaves_and_removed_subtrees() {
    let old = json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"size": 3, "args": ["x"]}});
    let new = json!({"metadata": {"finalizers": ["b"]}, "spec": {"size": 4, "args": ["y"]}});
    let c = compare(&widget(), &old, &new);
    assert_eq!(c.modified, fields(json!({"f:spec": {"f:size": {}, "f:args": {}}})));
    assert_eq!(c.removed, fields(json!({"f:metadata": {"f:finalizers": {"v:\"a\"": {}}}})));
    assert!(c.added.is_empty());
    assert!(compare(&widget(), &old, &old).is_same());
}

#[test]
fn a_keyed_list_is_compared_and_merged_item_by_item() {
    let live = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}});
    let applied = json!({"spec": {"ports": [{"name": "c", "port": 3}, {"name": "a", "port": 9}]}});
    let merged = merge(&widget(), &live, &applied);
    assert_eq!(
        merged["spec"]["ports"],
        json!([{"name": "c", "port": 3}, {"name": "a", "port": 9}, {"name": "b", "port": 2}])
    );
    let c = compare(&widget(), &live, &merged);
    assert_eq!(c.modified, fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {"f:port": {}}}}})));
    assert_eq!(
        c.added,
        fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:port": {}}}}}))
    );
}

/// structured-merge-diff's repeated keys: one value under the key, and a merge over a
/// live list keeps each repeated item it is not given and one for a key it is.
#[test]
fn a_repeated_key_is_one_value_compared_and_merged() {
    let once = json!({"spec": {"ports": [{"name": "a", "port": 1}]}});
    let twice = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}]}});
    let thrice = json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "a"}]}});
    let key = || fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {}}}}));
    let c = compare(&widget(), &json!({}), &twice);
    assert_eq!(c.added, fields(json!({"f:spec": {".": {}, "f:ports": {".": {}, "k:{\"name\":\"a\"}": {}}}})));
    let c = compare(&widget(), &once, &twice);
    assert_eq!(c.added, key());
    assert_eq!(
        c.removed,
        fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:port": {}}}}}))
    );
    let c = compare(&widget(), &twice, &once);
    assert_eq!(c.removed, key());
    assert_eq!(
        c.added,
        fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:port": {}}}}}))
    );
    assert_eq!(compare(&widget(), &twice, &thrice).modified, key());
    assert!(compare(&widget(), &twice, &twice).is_same());
    assert_eq!(field_set(&widget(), &twice), fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {}}}})));

    let other = json!({"spec": {"ports": [{"name": "b", "port": 3}]}});
    assert_eq!(
        merge(&widget(), &twice, &other)["spec"]["ports"],
        json!([{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"name": "b", "port": 3}])
    );
    let named = json!({"spec": {"ports": [{"name": "a", "port": 9}]}});
    assert_eq!(merge(&widget(), &twice, &named)["spec"]["ports"], json!([{"name": "a", "port": 9}]));
}

#[test]
fn atomic_lists_and_maps_are_replaced_whole() {
    let live = json!({"spec": {"args": ["a", "b"], "selector": {"x": "1", "y": "2"}, "size": 1}});
    let applied = json!({"spec": {"args": ["c"], "selector": {"z": "3"}}});
    assert_eq!(merge(&widget(), &live, &applied), json!({"spec": {"args": ["c"], "selector": {"z": "3"}, "size": 1}}));
}

#[test]
fn untyped_values_merge_maps_and_replace_lists() {
    let schema = Schema::for_kind(None, false);
    let live = json!({"spec": {"a": {"x": 1}, "l": [1, 2]}});
    let applied = json!({"spec": {"a": {"y": 2}, "l": [3]}});
    assert_eq!(merge(&schema, &live, &applied), json!({"spec": {"a": {"x": 1, "y": 2}, "l": [3]}}));
}

#[test]
fn the_fields_an_applied_configuration_sets_are_the_reference_ones() {
    // Reference 30: struct fields are not members, map entries and list items are.
    let config = json!({
        "apiVersion": "stable.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w2", "labels": {"app": "other"}},
        "spec": {"size": 1, "color": "green", "replicas": 2, "ports": [{"name": "a"}], "tags": ["t"]}
    });
    assert_eq!(
        field_set(&widget(), &config),
        fields(json!({
            "f:apiVersion": {}, "f:kind": {},
            "f:metadata": {"f:name": {}, "f:labels": {"f:app": {}}},
            "f:spec": {"f:color": {}, "f:replicas": {}, "f:size": {},
                       "f:ports": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}},
                       "f:tags": {"v:\"t\"": {}}}
        }))
    );
    // Without a schema every unknown key is an entry of a map, and so a member.
    let untyped = field_set(&Schema::for_kind(None, false), &json!({"spec": {"a": {"b": 1}}}));
    assert_eq!(untyped, fields(json!({"f:spec": {".": {}, "f:a": {".": {}, "f:b": {}}}})));
}

#[test]
fn removing_fields_takes_subtrees_and_nulls_emptied_maps() {
    let obj =
        json!({"spec": {"size": 1, "ports": [{"name": "a", "port": 1}, {"name": "b"}]}, "status": {"phase": "x"}});
    let remove = fields(json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {}}}, "f:status": {"f:phase": {}}}));
    assert_eq!(
        remove_items(&widget(), &obj, &remove),
        json!({"spec": {"size": 1, "ports": [{"name": "b"}]}, "status": null})
    );
}

#[test]
fn validation_names_undeclared_fields_wrong_types_and_duplicate_keys() {
    let bad = json!({"spec": {"ports": [{"name": "a"}, {"name": "a"}, {"port": 2}]}});
    assert_eq!(
        validate(&widget(), &bad),
        [
            ".spec.ports: duplicate entries for key [name=\"a\"]",
            ".spec.ports: element 2: associative list with keys has an element that omits key field \"name\" (and doesn't have default value)",
        ]
    );
    assert_eq!(validate(&widget(), &json!({"spec": {"nope": 1}})), [".spec.nope: field not declared in schema"]);
    assert_eq!(
        validate(&widget(), &json!({"spec": {"size": "x"}})),
        [".spec.size: expected numeric (int or float), got string"]
    );
    assert!(
        validate(&widget(), &json!({"metadata": {"name": "a", "labels": {"x": "y"}}, "spec": {"size": null}}))
            .is_empty()
    );
}

/// The oracle's words for values of the wrong type in an applied configuration, each
/// printed with structured-merge-diff's own verb.
#[test]
fn wrong_types_are_worded_as_structured_merge_diff_prints_them() {
    let one = |spec: serde_json::Value| validate(&widget(), &json!({"spec": spec}));
    let cases = [
        (json!({"color": 11}), ".spec.color: expected string, got &value.valueUnstructured{Value:11}"),
        (json!({"color": 1e20}), ".spec.color: expected string, got &value.valueUnstructured{Value:1e+20}"),
        (
            json!({"color": {"a": [1, "b", null, true, 1.5]}}),
            ".spec.color: expected string, got &value.valueUnstructured{Value:map[string]interface {}{\"a\":[]interface {}{1, \"b\", interface {}(nil), true, 1.5}}}",
        ),
        (json!({"tags": "x"}), ".spec.tags: expected list, got &{x}"),
        (json!({"selector": false}), ".spec.selector: expected map, got &{false}"),
        (json!({"selector": [11, 0.3, false]}), ".spec.selector: expected map, got &{[11 0.3 false]}"),
        (
            json!({"tags": [null]}),
            ".spec.tags: element 0: associative list without keys has an element that's an explicit null",
        ),
        // The rest of a list is not looked at after an item without a path element.
        (
            json!({"tags": ["a", [], "a"]}),
            ".spec.tags: element 1: not supported: associative list with lists as elements",
        ),
    ];
    for (spec, said) in cases {
        assert_eq!(one(spec.clone()), [said], "{spec}");
    }
}

#[test]
fn metadata_is_typed_as_kube_s_openapi_types_it() {
    let schema = Schema::for_kind(None, false);
    let owner = |name: &str| json!({"apiVersion": "v1", "kind": "K", "name": name});
    // An owner reference's uid defaults to "": one without is keyed so, two collide.
    let one = json!({"metadata": {"ownerReferences": [owner("a")]}});
    assert_eq!(type_error(&schema, &one), None);
    let two = json!({"metadata": {"ownerReferences": [owner("a"), owner("b")]}});
    assert_eq!(
        type_error(&schema, &two).as_deref(),
        Some(".metadata.ownerReferences: duplicate entries for key [uid=\"\"]")
    );
    // managedFields entries are ManagedFieldsEntry structs.
    let entries = json!({"metadata": {"managedFields": [{"manager": 5, "fieldsV1": {"f:a": {}}, "time": "x"}]}});
    assert_eq!(
        type_error(&schema, &entries).as_deref(),
        Some(".metadata.managedFields[0].manager: expected string, got &value.valueUnstructured{Value:5}")
    );
    let unknown = json!({"metadata": {"managedFields": [{"bogus": 1}]}});
    assert_eq!(
        type_error(&schema, &unknown).as_deref(),
        Some(".metadata.managedFields[0].bogus: field not declared in schema")
    );
}
