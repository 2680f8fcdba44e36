//! The Go struct of a CustomResourceDefinition, as far as its field order and its field
//! types go: kube writes a CRD's JSON in that order, and quotes it so where a patch did not
//! reach (see [`super::patched_json`]); a value of the wrong type is refused in Go's
//! decoder's words, which say where ([`GoStruct::type_error`], used by [`super::crds`] when
//! the typed decode fails).

use super::builtin::types::{GoStruct, GoType, STRING, SchemaOr, field, omit_empty, plain_struct, value_struct};

static JSON: GoType = GoType::Json;

static NAMES: GoStruct = plain_struct(
    "v1.CustomResourceDefinitionNames",
    &[
        field("plural", GoType::String),
        omit_empty("singular", GoType::String),
        omit_empty("shortNames", GoType::Slice { items: &STRING, keys: &[], name: None }),
        field("kind", GoType::String),
        omit_empty("listKind", GoType::String),
        omit_empty("categories", GoType::Slice { items: &STRING, keys: &[], name: None }),
    ],
);

static VALIDATION_RULE: GoStruct = plain_struct(
    "v1.ValidationRule",
    &[
        field("rule", GoType::String),
        omit_empty("message", GoType::String),
        omit_empty("messageExpression", GoType::String),
        field("reason", GoType::Named("v1.FieldValueErrorReason")),
        omit_empty("fieldPath", GoType::String),
        field("optionalOldSelf", GoType::Bool),
    ],
);
static VALIDATION_RULE_TYPE: GoType = GoType::Struct(&VALIDATION_RULE);

static EXTERNAL_DOCS: GoStruct = plain_struct(
    "v1.ExternalDocumentation",
    &[omit_empty("description", GoType::String), omit_empty("url", GoType::String)],
);

/// `JSONSchemaProps`, recursive through its sub-schemas (`items` and
/// `additionalProperties` may also be an array or a bool, written as they are).
pub(super) static SCHEMA: GoStruct = plain_struct(
    "v1.JSONSchemaProps",
    &[
        omit_empty("id", GoType::String),
        omit_empty("$schema", GoType::String),
        field("$ref", GoType::String),
        omit_empty("description", GoType::String),
        omit_empty("type", GoType::String),
        omit_empty("format", GoType::String),
        omit_empty("title", GoType::String),
        field("default", GoType::Json),
        field("maximum", GoType::Float64),
        omit_empty("exclusiveMaximum", GoType::Bool),
        field("minimum", GoType::Float64),
        omit_empty("exclusiveMinimum", GoType::Bool),
        field("maxLength", GoType::Int64),
        field("minLength", GoType::Int64),
        omit_empty("pattern", GoType::String),
        field("maxItems", GoType::Int64),
        field("minItems", GoType::Int64),
        omit_empty("uniqueItems", GoType::Bool),
        field("multipleOf", GoType::Float64),
        omit_empty("enum", GoType::Slice { items: &JSON, keys: &[], name: None }),
        field("maxProperties", GoType::Int64),
        field("minProperties", GoType::Int64),
        omit_empty("required", GoType::Slice { items: &STRING, keys: &[], name: None }),
        field("items", GoType::Union(SchemaOr::Array, &SCHEMA)),
        omit_empty("allOf", GoType::Slice { items: &SCHEMA_TYPE, keys: &[], name: None }),
        omit_empty("oneOf", GoType::Slice { items: &SCHEMA_TYPE, keys: &[], name: None }),
        omit_empty("anyOf", GoType::Slice { items: &SCHEMA_TYPE, keys: &[], name: None }),
        field("not", GoType::Struct(&SCHEMA)),
        omit_empty("properties", GoType::Map(&SCHEMA_TYPE)),
        field("additionalProperties", GoType::Union(SchemaOr::Bool, &SCHEMA)),
        omit_empty("patternProperties", GoType::Map(&SCHEMA_TYPE)),
        omit_empty("dependencies", GoType::Map(&DEPENDENCY)),
        field("additionalItems", GoType::Union(SchemaOr::Bool, &SCHEMA)),
        omit_empty("definitions", GoType::Map(&SCHEMA_TYPE)),
        field("externalDocs", GoType::Struct(&EXTERNAL_DOCS)),
        field("example", GoType::Json),
        omit_empty("nullable", GoType::Bool),
        field("x-kubernetes-preserve-unknown-fields", GoType::Bool),
        omit_empty("x-kubernetes-embedded-resource", GoType::Bool),
        omit_empty("x-kubernetes-int-or-string", GoType::Bool),
        omit_empty("x-kubernetes-list-map-keys", GoType::Slice { items: &STRING, keys: &[], name: None }),
        field("x-kubernetes-list-type", GoType::String),
        field("x-kubernetes-map-type", GoType::String),
        omit_empty(
            "x-kubernetes-validations",
            GoType::Slice { items: &VALIDATION_RULE_TYPE, keys: &["rule"], name: Some("v1.ValidationRules") },
        ),
    ],
);
static SCHEMA_TYPE: GoType = GoType::Struct(&SCHEMA);
static DEPENDENCY: GoType = GoType::Union(SchemaOr::Strings, &SCHEMA);

static VALIDATION: GoStruct =
    plain_struct("v1.CustomResourceValidation", &[field("openAPIV3Schema", GoType::Struct(&SCHEMA))]);
static SCALE: GoStruct = plain_struct(
    "v1.CustomResourceSubresourceScale",
    &[
        field("specReplicasPath", GoType::String),
        field("statusReplicasPath", GoType::String),
        field("labelSelectorPath", GoType::String),
    ],
);
/// An empty struct: what it is given decodes to `{}` (an unknown field, reported).
static SUBRESOURCE_STATUS: GoStruct = plain_struct("v1.CustomResourceSubresourceStatus", &[]);
static SUBRESOURCES: GoStruct = plain_struct(
    "v1.CustomResourceSubresources",
    &[field("status", GoType::Struct(&SUBRESOURCE_STATUS)), field("scale", GoType::Struct(&SCALE))],
);
static COLUMN: GoStruct = plain_struct(
    "v1.CustomResourceColumnDefinition",
    &[
        field("name", GoType::String),
        field("type", GoType::String),
        omit_empty("format", GoType::String),
        omit_empty("description", GoType::String),
        omit_empty("priority", GoType::Int32),
        field("jsonPath", GoType::String),
    ],
);
static COLUMN_TYPE: GoType = GoType::Struct(&COLUMN);
static SELECTABLE_FIELD: GoStruct = plain_struct("v1.SelectableField", &[field("jsonPath", GoType::String)]);
static SELECTABLE_FIELD_TYPE: GoType = GoType::Struct(&SELECTABLE_FIELD);
static VERSION: GoStruct = plain_struct(
    "v1.CustomResourceDefinitionVersion",
    &[
        field("name", GoType::String),
        field("served", GoType::Bool),
        field("storage", GoType::Bool),
        omit_empty("deprecated", GoType::Bool),
        field("deprecationWarning", GoType::String),
        field("schema", GoType::Struct(&VALIDATION)),
        field("subresources", GoType::Struct(&SUBRESOURCES)),
        omit_empty("additionalPrinterColumns", GoType::Slice { items: &COLUMN_TYPE, keys: &[], name: None }),
        omit_empty("selectableFields", GoType::Slice { items: &SELECTABLE_FIELD_TYPE, keys: &[], name: None }),
    ],
);
static VERSION_TYPE: GoType = GoType::Struct(&VERSION);
static SERVICE: GoStruct = plain_struct(
    "v1.ServiceReference",
    &[
        field("namespace", GoType::String),
        field("name", GoType::String),
        field("path", GoType::String),
        field("port", GoType::Int32),
    ],
);
static CLIENT_CONFIG: GoStruct = plain_struct(
    "v1.WebhookClientConfig",
    &[field("url", GoType::String), field("service", GoType::Struct(&SERVICE)), omit_empty("caBundle", GoType::Bytes)],
);
static WEBHOOK: GoStruct = plain_struct(
    "v1.WebhookConversion",
    &[
        field("clientConfig", GoType::Struct(&CLIENT_CONFIG)),
        field("conversionReviewVersions", GoType::Slice { items: &STRING, keys: &[], name: None }),
    ],
);
static CONVERSION: GoStruct = plain_struct(
    "v1.CustomResourceConversion",
    &[field("strategy", GoType::Named("v1.ConversionStrategyType")), field("webhook", GoType::Struct(&WEBHOOK))],
);
static SPEC: GoStruct = plain_struct(
    "v1.CustomResourceDefinitionSpec",
    &[
        field("group", GoType::String),
        value_struct("names", &NAMES),
        field("scope", GoType::Named("v1.ResourceScope")),
        field("versions", GoType::Slice { items: &VERSION_TYPE, keys: &[], name: None }),
        field("conversion", GoType::Struct(&CONVERSION)),
        omit_empty("preserveUnknownFields", GoType::Bool),
    ],
);
static CONDITION: GoStruct = plain_struct(
    "v1.CustomResourceDefinitionCondition",
    &[
        field("type", GoType::Named("v1.CustomResourceDefinitionConditionType")),
        field("status", GoType::Named("v1.ConditionStatus")),
        field("lastTransitionTime", GoType::Time),
        omit_empty("reason", GoType::String),
        omit_empty("message", GoType::String),
    ],
);
static CONDITION_TYPE: GoType = GoType::Struct(&CONDITION);
static STATUS: GoStruct = plain_struct(
    "v1.CustomResourceDefinitionStatus",
    &[
        omit_empty("conditions", GoType::Slice { items: &CONDITION_TYPE, keys: &["type"], name: None }),
        value_struct("acceptedNames", &NAMES),
        field("storedVersions", GoType::Slice { items: &STRING, keys: &[], name: None }),
    ],
);

/// `apiextensions.k8s.io/v1` CustomResourceDefinition.
pub static CUSTOM_RESOURCE_DEFINITION: GoStruct =
    plain_struct("CustomResourceDefinition", &[value_struct("spec", &SPEC), value_struct("status", &STATUS)]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::patch::PatchType;
    use crate::resources::patched_json::{PatchSource, patched_json};
    use serde_json::{Value, json};

    /// The oracle's words (scenario `decoding`): inside a union, Go's outer decoder puts the
    /// union's place on the inner type error.
    #[test]
    fn a_value_of_the_wrong_type_is_placed_as_go_places_it() {
        let crd = |schema: Value| json!({"spec": {"versions": [{"schema": {"openAPIV3Schema": schema}}]}});
        let at = "Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema";
        for (schema, words) in [
            (json!({"maxLength": 5.0}), format!("json: cannot unmarshal number 5.0 into {at}.maxLength of type int64")),
            (
                json!({"properties": {"a": {"minimum": "0"}}}),
                format!("json: cannot unmarshal string into {at}.properties.minimum of type float64"),
            ),
            (
                json!({"items": [{"maxLength": "5"}]}),
                format!("json: cannot unmarshal string into {at}.items of type int64"),
            ),
            (
                json!({"items": ["x"]}),
                format!("json: cannot unmarshal string into {at}.items of type v1.JSONSchemaProps"),
            ),
            (
                json!({"dependencies": {"a": [1]}}),
                format!("json: cannot unmarshal number into {at}.dependencies of type string"),
            ),
            (json!({"additionalProperties": "x"}), "boolean or JSON schema expected".to_string()),
            // A named slice type is named so (the oracle's answer).
            (
                json!({"properties": {"a": {"x-kubernetes-validations": "x"}}}),
                format!(
                    "json: cannot unmarshal string into {at}.properties.x-kubernetes-validations of type v1.ValidationRules"
                ),
            ),
        ] {
            assert_eq!(CUSTOM_RESOURCE_DEFINITION.type_error(&crd(schema.clone())), Some(words), "{schema}");
        }
        for ignored in
            [json!({"items": "x"}), json!({"dependencies": {"a": "b"}}), json!({"additionalProperties": false})]
        {
            assert_eq!(CUSTOM_RESOURCE_DEFINITION.type_error(&crd(ignored.clone())), None, "{ignored}");
        }
    }

    /// The oracle's answer to `subresources: {status: "x"}`, and its pruning of a union's
    /// insides without a word (an empty struct's unknown field is reported).
    #[test]
    fn the_status_subresource_is_an_empty_struct_and_unions_prune_silently() {
        let crd = json!({"spec": {"versions": [{"subresources": {"status": "x"}}]}});
        assert_eq!(
            CUSTOM_RESOURCE_DEFINITION.type_error(&crd).as_deref(),
            Some(
                "json: cannot unmarshal string into Go struct field CustomResourceSubresources.spec.versions.subresources.status of type v1.CustomResourceSubresourceStatus"
            )
        );
        let mut crd = json!({"spec": {"versions": [{"subresources": {"status": {"x": 1}}, "schema": {"openAPIV3Schema": {
            "type": "object", "properties": {
                "m": {"type": "object", "additionalProperties": {"type": "integer", "foo1": 1}},
                "l": {"type": "array", "items": {"type": "object", "foo2": 1, "properties": {"a": {"type": "string", "foo3": 1}}}},
                "n": {"type": "object", "properties": {"b": {"type": "string", "foo4": 1}}}}}}}]}});
        let dropped = CUSTOM_RESOURCE_DEFINITION.prune(&mut crd);
        assert_eq!(
            dropped,
            [
                "spec.versions[0].schema.openAPIV3Schema.properties.n.properties.b.foo4",
                "spec.versions[0].subresources.status.x"
            ]
        );
        let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
        assert_eq!(schema["m"]["additionalProperties"], json!({"type": "integer"}));
        assert_eq!(schema["l"]["items"], json!({"type": "object", "properties": {"a": {"type": "string"}}}));
    }

    #[test]
    fn a_crd_is_written_in_its_go_structs_order_where_a_patch_did_not_reach() {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "w.e.com", "labels": {"a": "2"}},
            "spec": {"versions": [{"storage": true, "name": "v1", "schema": {"openAPIV3Schema":
                {"properties": {"s": {"maxLength": 3, "type": "string"}}, "type": "object"}}}],
                "scope": "Namespaced", "group": "e.com", "names": {"kind": "W", "plural": "w"}},
            "status": {"storedVersions": ["v1"], "conditions": [{"status": "True", "type": "Established"}]}});
        let source = PatchSource { patch_type: PatchType::Merge, body: br#"{"metadata":{"labels":{"a":"2"}}}"# };
        assert_eq!(
            patched_json(&crd, &crd, &source, Some(&CUSTOM_RESOURCE_DEFINITION)),
            r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"labels":{"a":"2"},"name":"w.e.com"},"spec":{"group":"e.com","names":{"plural":"w","kind":"W"},"scope":"Namespaced","versions":[{"name":"v1","storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"s":{"type":"string","maxLength":3}}}}}]},"status":{"conditions":[{"type":"Established","status":"True"}],"storedVersions":["v1"]}}"#
        );
    }
}
