//! What kube's `SchemaDeclType` knows of a schema for the cost estimate: the largest
//! size a value at a path below the rule's node can have (`maxLength`, `maxItems`,
//! `maxProperties`, else what fits in a request), and the smallest size a value of a
//! schema serializes to (which bounds how many fit in a request).

use super::types::escape;
use crate::schema::celcost::MAX_REQUEST_SIZE_BYTES;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

/// A string, list or map as long as a request allows (less its quotes or brackets).
const REQUEST_SIZED: u64 = MAX_REQUEST_SIZE_BYTES - 2;
/// kube's `MaxDurationSizeJSON`, `JSONDateSize`, `MaxDatetimeSizeJSON`.
const MAX_DURATION_SIZE: u64 = 32;
const DATE_SIZE: u64 = 12;
const MAX_DATE_TIME_SIZE: u64 = 32;

/// Where a path leads: a schema node (and whether it is a resource, whose `kind`,
/// `apiVersion` and `metadata` kube declares itself), or one of those declared parts.
#[derive(Clone, Copy)]
enum Step<'a> {
    Schema(&'a JSONSchemaProps, bool),
    /// `kind`, `apiVersion`, `metadata.name`, `metadata.generateName`: plain strings.
    String,
    Metadata,
    /// A map's keys: kube's key type declares no size.
    MapKey,
}

fn items(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(item)) => Some(item),
        _ => None,
    }
}

fn map_values(s: &JSONSchemaProps) -> Option<&JSONSchemaProps> {
    match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(value)) if s.type_.as_deref() == Some("object") => Some(value),
        _ => None,
    }
}

fn embedded(s: &JSONSchemaProps) -> bool {
    s.x_kubernetes_embedded_resource == Some(true)
}

/// The smallest serialized size of a value of `s`, `None` when kube gives it no CEL type.
pub fn min_size(s: &JSONSchemaProps) -> Option<u64> {
    if s.x_kubernetes_int_or_string == Some(true) {
        return Some(1);
    }
    match s.type_.as_deref()? {
        "array" => min_size(items(s)?).map(|_| 2),
        "object" if s.additional_properties.is_some() && map_values(s).is_some() => {
            map_values(s).and_then(min_size).map(|_| 2)
        }
        "object" => {
            let required = s.required.iter().flatten();
            let props = s.properties.as_ref();
            let fields = required.filter_map(|name| Some((name, props?.get(name)?)));
            let sum = fields
                .filter(|(_, p)| p.default.is_none())
                .filter_map(|(name, p)| Some(name.len() as u64 + min_size(p)? + 4))
                .sum::<u64>();
            Some(2 + sum)
        }
        "string" => Some(match s.format.as_deref() {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        }),
        "boolean" => Some(4),
        "number" | "integer" => Some(1),
        _ => None,
    }
}

/// kube's `maxCardinality`: how often a rule can run on values of `s` under an unbounded
/// list or map.
pub fn unbounded_cardinality(s: &JSONSchemaProps) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_size(s).unwrap_or(1) + 1)
}

/// The `MaxElements` kube declares for values of `s`, `None` when it gives them no type.
fn max_elements(s: &JSONSchemaProps) -> Option<u64> {
    if s.x_kubernetes_int_or_string == Some(true) {
        return Some(REQUEST_SIZED);
    }
    let limit = |v: Option<i64>| v.map(|n| n.max(0) as u64);
    match s.type_.as_deref()? {
        "array" => {
            let item_min = min_size(items(s)?)?;
            Some(limit(s.max_items).unwrap_or(REQUEST_SIZED / (item_min + 1)))
        }
        "object" if s.additional_properties.is_some() && map_values(s).is_some() => {
            let value_min = min_size(map_values(s)?)?;
            Some(limit(s.max_properties).unwrap_or(REQUEST_SIZED / (value_min + 6)))
        }
        "object" => Some(0),
        "string" => Some(match s.format.as_deref() {
            Some("byte") => limit(s.max_length).unwrap_or(REQUEST_SIZED),
            Some("duration") => MAX_DURATION_SIZE,
            Some("date") => DATE_SIZE,
            Some("date-time") => MAX_DATE_TIME_SIZE,
            // maxLength counts code points; kube sizes in bytes, up to 4 per code point.
            _ => match (limit(s.max_length), &s.enum_) {
                (Some(n), _) => n.saturating_mul(4),
                (None, Some(values)) if !values.is_empty() => {
                    values.iter().filter_map(|v| v.0.as_str()).map(|v| v.len() as u64).max().unwrap_or(0)
                }
                _ => REQUEST_SIZED,
            },
        }),
        "boolean" | "number" | "integer" => Some(0),
        _ => None,
    }
}

/// The sizes of the values a rule on `node` reaches (`resource`: a resource root or an
/// embedded resource).
pub struct Sizes<'a> {
    pub node: &'a JSONSchemaProps,
    pub resource: bool,
}

impl Sizes<'_> {
    /// kube's `sizeEstimator.EstimateSize`: the path's first element names the variable
    /// (`self`, `oldSelf`), the rest are fields, `@items`, `@values` or `@keys`.
    pub fn max_size(&self, path: &[String]) -> Option<u64> {
        let mut step = Step::Schema(self.node, self.resource);
        for name in path.iter().skip(1) {
            step = match (step, name.as_str()) {
                (Step::Schema(s, _), "@items") => {
                    items(s).filter(|i| min_size(i).is_some()).map(|i| Step::Schema(i, embedded(i)))?
                }
                (Step::Schema(s, _), "@values") => map_values(s).map(|v| Step::Schema(v, embedded(v)))?,
                (Step::Schema(s, _), "@keys") => map_values(s).map(|_| Step::MapKey)?,
                (Step::Schema(_, true), "kind" | "apiVersion") => Step::String,
                (Step::Schema(_, true), "metadata") => Step::Metadata,
                (Step::Metadata, "name" | "generateName") => Step::String,
                (Step::Schema(s, _), field) if s.type_.as_deref() == Some("object") && map_values(s).is_none() => {
                    let props = s.properties.as_ref()?;
                    // kube's estimator finds a reserved word by its escaped name only
                    // (`self.namespace` is sized as unbounded).
                    let (_, prop) = props.iter().find(|(k, _)| escape(k).as_deref() == Some(field))?;
                    Step::Schema(prop, embedded(prop))
                }
                _ => return None,
            };
        }
        match step {
            Step::Schema(s, _) => max_elements(s),
            Step::String => Some(REQUEST_SIZED),
            Step::Metadata | Step::MapKey => Some(0),
        }
    }
}
