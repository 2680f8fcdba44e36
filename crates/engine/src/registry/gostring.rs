//! CRD values as Go's `%#v` prints kube's internal types, for the messages that quote them
//! (`spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}`).
//!
//! The internal type holds what the v1 object spreads over its versions once it is hoisted:
//! a schema, subresources, columns or selectable fields shared by every version live on the
//! spec, so each version prints them as nil. A pointer that is not nil prints as its address
//! in Go, which differs on every run; a fixed stand-in is printed there.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceColumnDefinition, CustomResourceDefinitionVersion, SelectableField,
};

use super::versions::Hoisted;
use crate::field::go_quote;

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

/// A Go slice: `[]T(nil)` when absent, else its items.
fn slice<T>(go_type: &str, items: Option<&[T]>, item: impl Fn(&T) -> String) -> String {
    match items {
        None => format!("[]{go_type}(nil)"),
        Some(items) => format!("[]{go_type}{{{}}}", items.iter().map(item).collect::<Vec<_>>().join(", ")),
    }
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
}
