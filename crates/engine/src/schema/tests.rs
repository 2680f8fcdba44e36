use super::*;
use serde_json::json;

fn schema(v: Value) -> Schema {
    Schema::new(&serde_json::from_value(v).expect("schema"))
}

fn strings(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(ToString::to_string).collect()
}

fn cron_tab() -> Schema {
    schema(json!({"type": "object", "properties": {
        "spec": {"type": "object", "required": ["cronSpec"], "properties": {
            "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
            "image": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
        }, "x-kubernetes-validations": [{"rule": "self.replicas <= 5 || self.image != ''", "message": "big crons need an image"}]},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}
    }}))
}

#[test]
fn decoding_prunes_reports_and_defaults() {
    let s = cron_tab();
    let mut obj = json!({"apiVersion": "x/v1", "kind": "CronTab", "metadata": {"name": "c", "junk": 1},
                         "spec": {"cronSpec": "* * * * */5", "color": "red", "image": null}, "extra": true});
    let unknown = s.prune_and_default(&mut obj);
    // The oracle warns of the object's metadata first, then of the pruned fields.
    assert_eq!(unknown, ["metadata.junk", "extra", "spec.color"]);
    assert_eq!(
        obj,
        json!({"apiVersion": "x/v1", "kind": "CronTab", "metadata": {"name": "c"},
                           "spec": {"cronSpec": "* * * * */5", "replicas": 1}})
    );
    // A second pass changes nothing.
    let again = obj.clone();
    assert!(s.prune_and_default(&mut obj).is_empty());
    assert_eq!(obj, again);
}

/// The oracle's warnings for one create: the object's metadata, the pruned fields, then
/// embedded resources' metadata, each group sorted.
#[test]
fn unknown_fields_come_in_kube_s_order() {
    let embedded =
        json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true});
    let props = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"e": embedded, "f": embedded, "a": {"type": "string"}}}}});
    let s = Schema::new(&serde_json::from_value(props).expect("schema"));
    let inner = || json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "n", "zbog": 1, "abog": 2}});
    let mut obj = json!({"apiVersion": "g/v1", "kind": "Em", "metadata": {"name": "e", "mbog": 1},
        "spec": {"f": inner(), "e": inner(), "zz": 1, "a": "x", "bb": 2}, "aa": 1});
    assert_eq!(
        s.prune_and_default(&mut obj),
        [
            "metadata.mbog",
            "aa",
            "spec.bb",
            "spec.zz",
            "spec.e.metadata.abog",
            "spec.e.metadata.zbog",
            "spec.f.metadata.abog",
            "spec.f.metadata.zbog"
        ]
    );
}

#[test]
fn preserve_unknown_fields_crds_keep_everything_but_still_default() {
    let s = cron_tab().preserving_unknown_fields(true);
    let mut obj = json!({"spec": {"cronSpec": "x", "color": "red"}});
    assert!(s.prune_and_default(&mut obj).is_empty());
    assert_eq!(obj["spec"]["color"], "red");
    assert_eq!(obj["spec"]["replicas"], 1);
}

#[test]
fn validation_collects_every_error_in_kube_order() {
    let s = cron_tab();
    let obj = json!({"spec": {"replicas": 20, "tags": ["a", "a"]}});
    assert_eq!(
        strings(&s.validate(&obj)),
        [
            "spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10",
            "spec.cronSpec: Required value",
            "spec.tags[1]: Duplicate value: \"a\"",
            "<nil>: Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
        ]
    );
}

#[test]
fn rules_run_when_nothing_blocks_them() {
    let s = cron_tab();
    let obj = json!({"spec": {"cronSpec": "* * * * *", "replicas": 8, "image": ""}});
    assert_eq!(strings(&s.validate(&obj)), ["spec: Invalid value: \"object\": big crons need an image"]);
}

#[test]
fn updates_ratchet_unchanged_errors_and_list_rules() {
    let s = cron_tab();
    let old = json!({"spec": {"cronSpec": "bad", "replicas": 8, "image": "", "tags": ["a", "a"]}});
    assert!(s.validate_update(&old, &old).is_empty());
    let new = json!({"spec": {"cronSpec": "bad", "replicas": 9, "image": "", "tags": ["a", "a"]}});
    // cronSpec is unchanged (ratcheted), the set kept its duplicates (the old object had
    // them already); the changed spec runs its rule.
    assert_eq!(strings(&s.validate_update(&new, &old)), ["spec: Invalid value: \"object\": big crons need an image"]);
}

#[test]
fn decode_checks_refuse_malformed_metadata() {
    let s = cron_tab();
    let meta_error: super::MetaError = crate::resources::builtin::types::object_meta_error;
    assert!(s.check_decode(&json!({"metadata": {"name": "a"}}), meta_error).is_ok());
    assert!(s.check_decode(&json!({"metadata": {"labels": ["x"]}}), meta_error).is_err());
}

#[test]
fn rule_free_schemas_skip_the_blocking_error() {
    let s = schema(
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}}}}),
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"n": "x"}}))),
        ["spec.n: Invalid value: \"string\": spec.n in body must be of type integer: \"string\""]
    );
}

/// A lazy schema holds its JSON deflated (a large CRD set's never-used kinds hold nothing
/// else), and once first used it prunes, defaults and validates as the schema compiled at
/// once does.
#[test]
fn a_lazy_schema_holds_its_json_deflated_and_compiles_to_the_same_schema() {
    let fields: serde_json::Map<String, Value> = (0..200)
        .map(|i| {
            let field = json!({"type": "string", "maxLength": 8 + i % 5,
                "description": format!("Field {i} of the provider's configuration, as its API names it.")});
            (format!("field{i:03}"), field)
        })
        .collect();
    let mut props = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": fields},
    }});
    props["properties"]["spec"]["properties"]["replicas"] = json!({"type": "integer", "minimum": 1, "default": 2});
    let json_len = serde_json::to_vec(&props).expect("JSON").len();
    let props: JSONSchemaProps = serde_json::from_value(props).expect("schema");
    let (lazy, eager) = (Schema::lazy(&props), Schema::new(&props));
    let held = lazy.source.as_ref().map_or(usize::MAX, |s| s.len());
    assert!(held * 4 < json_len, "a lazy schema holds {held} bytes of {json_len} bytes of JSON");
    assert!(!lazy.is_compiled());

    let object = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "k"},
        "spec": {"field001": "far too long a value", "field002": "ok", "unknown": 1}});
    let (mut a, mut b) = (object.clone(), object);
    assert_eq!(lazy.prune_and_default(&mut a), eager.prune_and_default(&mut b));
    assert_eq!(a, b);
    assert_eq!(a["spec"]["replicas"], 2, "defaulted");
    let errors = strings(&lazy.validate(&a));
    assert_eq!(errors, strings(&eager.validate(&b)));
    assert!(errors.iter().any(|e| e.contains("spec.field001")), "{errors:?}");
    assert!(lazy.is_compiled());
}
