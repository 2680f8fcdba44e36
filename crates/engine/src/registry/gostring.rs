//! CRD values as Go's `%#v` prints kube's internal types, for the messages that quote them
//! (`spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}`).
//!
//! The internal type holds what the v1 object spreads over its versions once it is hoisted:
//! a schema, subresources, columns or selectable fields shared by every version live on the
//! spec, so each version prints them as nil. A pointer that is not nil prints as its address
//! in Go, which differs on every run; a fixed stand-in is printed there.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinitionVersion, JSONSchemaProps, JSONSchemaPropsOrStringArray,
    SelectableField, ValidationRule,
};

use super::versions::Hoisted;
use crate::field::go_quote;
use crate::schema::gofmt::sharp_v;

/// What Go prints for a pointer that is not nil: an address; this one stands for any.
const ADDRESS: &str = "0xc000000000";

/// `[]apiextensions.CustomResourceDefinitionVersion{...}` of `versions`, those of a spec whose
/// `hoisted` fields moved up; `(nil)` for none sent (`None`), as Go keeps a nil slice apart
/// from an empty one.
pub fn versions(versions: Option<&[CustomResourceDefinitionVersion]>, hoisted: Hoisted) -> String {
    slice("apiextensions.CustomResourceDefinitionVersion", versions, |v| version(v, hoisted))
}

/// `[]string(nil)` for none (a new CRD has no status), else the names.
pub fn strings(values: Option<&[String]>) -> String {
    match values {
        None => "[]string(nil)".into(),
        Some(values) => {
            format!("[]string{{{}}}", values.iter().map(|v| go_quote(v)).collect::<Vec<_>>().join(", "))
        }
    }
}

fn version(v: &CustomResourceDefinitionVersion, hoisted: Hoisted) -> String {
    let pointer = |go_type: &str, present: bool| format!("(*{go_type})({})", if present { ADDRESS } else { "nil" });
    let columns = v.additional_printer_columns.as_deref().filter(|_| !hoisted.columns);
    let selectable = v.selectable_fields.as_deref().filter(|_| !hoisted.selectable_fields);
    format!(
        "apiextensions.CustomResourceDefinitionVersion{{Name:{}, Served:{}, Storage:{}, Deprecated:{}, DeprecationWarning:{}, Schema:{}, Subresources:{}, AdditionalPrinterColumns:{}, SelectableFields:{}}}",
        go_quote(&v.name),
        v.served,
        v.storage,
        v.deprecated.unwrap_or(false),
        pointer("string", v.deprecation_warning.is_some()),
        pointer("apiextensions.CustomResourceValidation", v.schema.is_some() && !hoisted.schema),
        pointer("apiextensions.CustomResourceSubresources", v.subresources.is_some() && !hoisted.subresources),
        slice("apiextensions.CustomResourceColumnDefinition", columns, column),
        slice("apiextensions.SelectableField", selectable, |f: &SelectableField| {
            format!("apiextensions.SelectableField{{JSONPath:{}}}", go_quote(&f.json_path))
        }),
    )
}

/// `apiextensions.JSONSchemaProps{ID:"", ...}`: a schema as kube's internal type, which the
/// root-of-schema check quotes whole. Fields in the Go struct's order; pointers print as
/// addresses, so only the schemas held by value (lists and maps of them) are spelled out.
pub fn schema_props(s: &JSONSchemaProps) -> String {
    let text = |v: &Option<String>| go_quote(v.as_deref().unwrap_or_default());
    let flag = |v: Option<bool>| v.unwrap_or(false);
    let pointer = |go_type: &str, present: bool| format!("(*{go_type})({})", if present { ADDRESS } else { "nil" });
    let schemas =
        |items: &Option<Vec<JSONSchemaProps>>| slice("apiextensions.JSONSchemaProps", items.as_deref(), schema_props);
    let schema_map =
        |go_type: &str, map: &Option<BTreeMap<String, JSONSchemaProps>>| go_map(go_type, map, schema_props);
    let fields = [
        ("ID", text(&s.id)),
        ("Schema", text(&s.schema)),
        ("Ref", pointer("string", s.ref_path.is_some())),
        ("Description", text(&s.description)),
        ("Type", text(&s.type_)),
        ("Nullable", flag(s.nullable).to_string()),
        ("Format", text(&s.format)),
        ("Title", text(&s.title)),
        ("Default", pointer("apiextensions.JSON", s.default.is_some())),
        ("Maximum", pointer("float64", s.maximum.is_some())),
        ("ExclusiveMaximum", flag(s.exclusive_maximum).to_string()),
        ("Minimum", pointer("float64", s.minimum.is_some())),
        ("ExclusiveMinimum", flag(s.exclusive_minimum).to_string()),
        ("MaxLength", pointer("int64", s.max_length.is_some())),
        ("MinLength", pointer("int64", s.min_length.is_some())),
        ("Pattern", text(&s.pattern)),
        ("MaxItems", pointer("int64", s.max_items.is_some())),
        ("MinItems", pointer("int64", s.min_items.is_some())),
        ("UniqueItems", flag(s.unique_items).to_string()),
        ("MultipleOf", pointer("float64", s.multiple_of.is_some())),
        // An interface slice: a null item is the named interface's nil, deeper ones Go's.
        (
            "Enum",
            slice("apiextensions.JSON", s.enum_.as_deref(), |v| match &v.0 {
                serde_json::Value::Null => "apiextensions.JSON(nil)".to_string(),
                v => sharp_v(v),
            }),
        ),
        ("MaxProperties", pointer("int64", s.max_properties.is_some())),
        ("MinProperties", pointer("int64", s.min_properties.is_some())),
        ("Required", strings(s.required.as_deref())),
        ("Items", pointer("apiextensions.JSONSchemaPropsOrArray", s.items.is_some())),
        ("AllOf", schemas(&s.all_of)),
        ("OneOf", schemas(&s.one_of)),
        ("AnyOf", schemas(&s.any_of)),
        ("Not", pointer("apiextensions.JSONSchemaProps", s.not.is_some())),
        ("Properties", schema_map("map[string]apiextensions.JSONSchemaProps", &s.properties)),
        ("AdditionalProperties", pointer("apiextensions.JSONSchemaPropsOrBool", s.additional_properties.is_some())),
        ("PatternProperties", schema_map("map[string]apiextensions.JSONSchemaProps", &s.pattern_properties)),
        ("Dependencies", go_map("apiextensions.JSONSchemaDependencies", &s.dependencies, dependency)),
        ("AdditionalItems", pointer("apiextensions.JSONSchemaPropsOrBool", s.additional_items.is_some())),
        ("Definitions", schema_map("apiextensions.JSONSchemaDefinitions", &s.definitions)),
        ("ExternalDocs", pointer("apiextensions.ExternalDocumentation", s.external_docs.is_some())),
        ("Example", pointer("apiextensions.JSON", s.example.is_some())),
        ("XPreserveUnknownFields", pointer("bool", s.x_kubernetes_preserve_unknown_fields.is_some())),
        ("XEmbeddedResource", flag(s.x_kubernetes_embedded_resource).to_string()),
        ("XIntOrString", flag(s.x_kubernetes_int_or_string).to_string()),
        ("XListMapKeys", strings(s.x_kubernetes_list_map_keys.as_deref())),
        ("XListType", pointer("string", s.x_kubernetes_list_type.is_some())),
        ("XMapType", pointer("string", s.x_kubernetes_map_type.is_some())),
        ("XValidations", named_slice("apiextensions.ValidationRules", s.x_kubernetes_validations.as_deref(), rule)),
    ];
    let fields: Vec<String> = fields.iter().map(|(name, value)| format!("{name}:{value}")).collect();
    format!("apiextensions.JSONSchemaProps{{{}}}", fields.join(", "))
}

fn dependency(d: &JSONSchemaPropsOrStringArray) -> String {
    let (schema, property) = match d {
        JSONSchemaPropsOrStringArray::Schema(_) => (ADDRESS, None),
        JSONSchemaPropsOrStringArray::Strings(names) => ("nil", Some(names.as_slice())),
    };
    format!(
        "apiextensions.JSONSchemaPropsOrStringArray{{Schema:(*apiextensions.JSONSchemaProps)({schema}), Property:{}}}",
        strings(property)
    )
}

fn rule(r: &ValidationRule) -> String {
    let text = |v: &Option<String>| go_quote(v.as_deref().unwrap_or_default());
    let pointer = |go_type: &str, present: bool| format!("(*{go_type})({})", if present { ADDRESS } else { "nil" });
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        go_quote(&r.rule),
        text(&r.message),
        text(&r.message_expression),
        pointer("apiextensions.FieldValueErrorReason", r.reason.is_some()),
        text(&r.field_path),
        pointer("bool", r.optional_old_self.is_some()),
    )
}

/// A Go map of type `go_type` (a named one prints its name alone): `(nil)` when absent,
/// else its entries by key, as `fmt` sorts them.
fn go_map<T>(go_type: &str, map: &Option<BTreeMap<String, T>>, item: impl Fn(&T) -> String) -> String {
    match map {
        None => format!("{go_type}(nil)"),
        Some(map) => {
            let entries: Vec<String> = map.iter().map(|(k, v)| format!("{}:{}", go_quote(k), item(v))).collect();
            format!("{go_type}{{{}}}", entries.join(", "))
        }
    }
}

/// A slice of a named slice type (`apiextensions.ValidationRules`), which prints its name
/// where `[]T` would be.
fn named_slice<T>(go_type: &str, items: Option<&[T]>, item: impl Fn(&T) -> String) -> String {
    match items {
        None => format!("{go_type}(nil)"),
        Some(items) => format!("{go_type}{{{}}}", items.iter().map(item).collect::<Vec<_>>().join(", ")),
    }
}

/// A Go slice: `[]T(nil)` when absent, else its items.
fn slice<T>(go_type: &str, items: Option<&[T]>, item: impl Fn(&T) -> String) -> String {
    named_slice(&format!("[]{go_type}"), items, item)
}

fn column(c: &CustomResourceColumnDefinition) -> String {
    format!(
        "apiextensions.CustomResourceColumnDefinition{{Name:{}, Type:{}, Format:{}, Description:{}, Priority:{}, JSONPath:{}}}",
        go_quote(&c.name),
        go_quote(&c.type_),
        go_quote(c.format.as_deref().unwrap_or_default()),
        go_quote(c.description.as_deref().unwrap_or_default()),
        c.priority.unwrap_or(0),
        go_quote(&c.json_path)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v1(storage: bool) -> CustomResourceDefinitionVersion {
        CustomResourceDefinitionVersion { name: "v1".into(), served: true, storage, ..Default::default() }
    }

    /// The oracle's words for these versions (tests/it/differential/goldens/crds.json).
    #[test]
    fn versions_print_as_kube_s_internal_type() {
        let hoisted = Hoisted { schema: true, subresources: false, columns: false, selectable_fields: false };
        assert_eq!(versions(Some(&[]), hoisted), "[]apiextensions.CustomResourceDefinitionVersion{}");
        assert_eq!(versions(None, hoisted), "[]apiextensions.CustomResourceDefinitionVersion(nil)");
        assert_eq!(
            versions(Some(&[v1(false)]), hoisted),
            "[]apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:\"v1\", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(nil), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}}"
        );
        assert_eq!(strings(None), "[]string(nil)");
        assert_eq!(strings(Some(&["v1".to_string()])), "[]string{\"v1\"}");
    }

    /// The oracle's words for a root with `allOf` under `/status` (kube-apiserver 1.32).
    #[test]
    fn a_schema_prints_as_kube_s_internal_type() {
        let schema: JSONSchemaProps = serde_json::from_value(serde_json::json!({
            "type": "object", "properties": {"status": {"type": "object"}}, "allOf": [{"required": ["a"]}]
        }))
        .expect("a schema");
        let expected = concat!(
            "apiextensions.JSONSchemaProps{ID:\"\", Schema:\"\", Ref:(*string)(nil), Description:\"\", ",
            "Type:\"object\", Nullable:false, Format:\"\", Title:\"\", Default:(*apiextensions.JSON)(nil), ",
            "Maximum:(*float64)(nil), ExclusiveMaximum:false, Minimum:(*float64)(nil), ",
            "ExclusiveMinimum:false, MaxLength:(*int64)(nil), MinLength:(*int64)(nil), Pattern:\"\", ",
            "MaxItems:(*int64)(nil), MinItems:(*int64)(nil), UniqueItems:false, ",
            "MultipleOf:(*float64)(nil), Enum:[]apiextensions.JSON(nil), MaxProperties:(*int64)(nil), ",
            "MinProperties:(*int64)(nil), Required:[]string(nil), ",
            "Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), ",
            "AllOf:[]apiextensions.JSONSchemaProps{apiextensions.JSONSchemaProps{ID:\"\", Schema:\"\", ",
            "Ref:(*string)(nil), Description:\"\", Type:\"\", Nullable:false, Format:\"\", Title:\"\", ",
            "Default:(*apiextensions.JSON)(nil), Maximum:(*float64)(nil), ExclusiveMaximum:false, ",
            "Minimum:(*float64)(nil), ExclusiveMinimum:false, MaxLength:(*int64)(nil), ",
            "MinLength:(*int64)(nil), Pattern:\"\", MaxItems:(*int64)(nil), MinItems:(*int64)(nil), ",
            "UniqueItems:false, MultipleOf:(*float64)(nil), Enum:[]apiextensions.JSON(nil), ",
            "MaxProperties:(*int64)(nil), MinProperties:(*int64)(nil), Required:[]string{\"a\"}, ",
            "Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), ",
            "AllOf:[]apiextensions.JSONSchemaProps(nil), OneOf:[]apiextensions.JSONSchemaProps(nil), ",
            "AnyOf:[]apiextensions.JSONSchemaProps(nil), Not:(*apiextensions.JSONSchemaProps)(nil), ",
            "Properties:map[string]apiextensions.JSONSchemaProps(nil), ",
            "AdditionalProperties:(*apiextensions.JSONSchemaPropsOrBool)(nil), ",
            "PatternProperties:map[string]apiextensions.JSONSchemaProps(nil), ",
            "Dependencies:apiextensions.JSONSchemaDependencies(nil), ",
            "AdditionalItems:(*apiextensions.JSONSchemaPropsOrBool)(nil), ",
            "Definitions:apiextensions.JSONSchemaDefinitions(nil), ",
            "ExternalDocs:(*apiextensions.ExternalDocumentation)(nil), Example:(*apiextensions.JSON)(nil), ",
            "XPreserveUnknownFields:(*bool)(nil), XEmbeddedResource:false, XIntOrString:false, ",
            "XListMapKeys:[]string(nil), XListType:(*string)(nil), XMapType:(*string)(nil), ",
            "XValidations:apiextensions.ValidationRules(nil)}}, ",
            "OneOf:[]apiextensions.JSONSchemaProps(nil), AnyOf:[]apiextensions.JSONSchemaProps(nil), ",
            "Not:(*apiextensions.JSONSchemaProps)(nil), ",
            "Properties:map[string]apiextensions.JSONSchemaProps{\"status\":apiextensions.JSONSchemaProps{ID:\"\", ",
            "Schema:\"\", Ref:(*string)(nil), Description:\"\", Type:\"object\", Nullable:false, ",
            "Format:\"\", Title:\"\", Default:(*apiextensions.JSON)(nil), Maximum:(*float64)(nil), ",
            "ExclusiveMaximum:false, Minimum:(*float64)(nil), ExclusiveMinimum:false, ",
            "MaxLength:(*int64)(nil), MinLength:(*int64)(nil), Pattern:\"\", MaxItems:(*int64)(nil), ",
            "MinItems:(*int64)(nil), UniqueItems:false, MultipleOf:(*float64)(nil), ",
            "Enum:[]apiextensions.JSON(nil), MaxProperties:(*int64)(nil), MinProperties:(*int64)(nil), ",
            "Required:[]string(nil), Items:(*apiextensions.JSONSchemaPropsOrArray)(nil), ",
            "AllOf:[]apiextensions.JSONSchemaProps(nil), OneOf:[]apiextensions.JSONSchemaProps(nil), ",
            "AnyOf:[]apiextensions.JSONSchemaProps(nil), Not:(*apiextensions.JSONSchemaProps)(nil), ",
            "Properties:map[string]apiextensions.JSONSchemaProps(nil), ",
            "AdditionalProperties:(*apiextensions.JSONSchemaPropsOrBool)(nil), ",
            "PatternProperties:map[string]apiextensions.JSONSchemaProps(nil), ",
            "Dependencies:apiextensions.JSONSchemaDependencies(nil), ",
            "AdditionalItems:(*apiextensions.JSONSchemaPropsOrBool)(nil), ",
            "Definitions:apiextensions.JSONSchemaDefinitions(nil), ",
            "ExternalDocs:(*apiextensions.ExternalDocumentation)(nil), Example:(*apiextensions.JSON)(nil), ",
            "XPreserveUnknownFields:(*bool)(nil), XEmbeddedResource:false, XIntOrString:false, ",
            "XListMapKeys:[]string(nil), XListType:(*string)(nil), XMapType:(*string)(nil), ",
            "XValidations:apiextensions.ValidationRules(nil)}}, ",
            "AdditionalProperties:(*apiextensions.JSONSchemaPropsOrBool)(nil), ",
            "PatternProperties:map[string]apiextensions.JSONSchemaProps(nil), ",
            "Dependencies:apiextensions.JSONSchemaDependencies(nil), ",
            "AdditionalItems:(*apiextensions.JSONSchemaPropsOrBool)(nil), ",
            "Definitions:apiextensions.JSONSchemaDefinitions(nil), ",
            "ExternalDocs:(*apiextensions.ExternalDocumentation)(nil), Example:(*apiextensions.JSON)(nil), ",
            "XPreserveUnknownFields:(*bool)(nil), XEmbeddedResource:false, XIntOrString:false, ",
            "XListMapKeys:[]string(nil), XListType:(*string)(nil), XMapType:(*string)(nil), ",
            "XValidations:apiextensions.ValidationRules(nil)}"
        );
        assert_eq!(schema_props(&schema), expected);
        let pointers: JSONSchemaProps =
            serde_json::from_value(serde_json::json!({"maximum": 1, "enum": ["a", 1, 1.5, null, {"k": [null]}]}))
                .expect("a schema");
        let shown = schema_props(&pointers);
        assert!(shown.contains("Maximum:(*float64)(0xc000000000)"), "{shown}");
        assert!(
            shown.contains(r#"Enum:[]apiextensions.JSON{"a", 1, 1.5, apiextensions.JSON(nil), map[string]interface {}{"k":[]interface {}{interface {}(nil)}}}"#),
            "{shown}"
        );
    }
}
