//! Static validation of CustomResourceDefinitions on create, update and status update,
//! with kube-apiserver's field paths and messages (apiextensions' `validation.go`).
//!
//! Every check appends to one list so the client sees all problems in one 422. The order
//! follows kube's: metadata, spec (group, scope, schemas, each version, version set, names,
//! the spec-level schema/subresources/columns, conversion), status, stored versions, API
//! approval, `preserveUnknownFields`. Paths are those of kube's internal type: see
//! the private `versions` module for why a shared schema is reported under `spec.validation`.
//!
//! Bad values that are Go structs (the version list, a whole schema) are shown as compact
//! JSON: kube prints them with `%#v`, pointer addresses included, which no client can
//! depend on.
//!
//! The functions expect the object as kube validates it: defaulted
//! ([`super::defaults::apply_defaults`]) and prepared by the strategy
//! ([`super::defaults::prepare_for_create`] / [`super::defaults::prepare_for_update`]).

use crate::field::{FieldError, Path};
use crate::registry::conditions::{ESTABLISHED, is_crd_condition_true};
use crate::registry::conversion::{has_recognized_review_version_or_empty, validate_conversion};
use crate::registry::defaults::{CONVERSION_NONE, SCOPE_CLUSTER, SCOPE_NAMESPACED};
use crate::registry::metadata::{validate_api_approval, validate_metadata};
use crate::registry::schema_rules::{SchemaOptions, map_set_keys_rules, validate_validation};
use crate::registry::schema_walk::{
    has_invalid_type, has_kubernetes_extension, has_non_atomic_set, item_schema, list_map_keys, schema_has, schema_of,
    spec_has_schema_with,
};
use crate::registry::selectable::{Scope, validate_selectable_fields};
use crate::registry::structural::{is_structural, new_structural_error};
use crate::registry::versions::{
    Hoisted, deprecation_warning_problems, has_status, validate_column, validate_subresources,
};
use crate::schema::names::{is_dns1035_label, is_dns1123_subdomain};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionStatus, CustomResourceDefinitionVersion,
};
use serde_json::Value;

/// Which rules apply. On create all do; on update several are "ratchets" that only apply
/// if the stored object already met them, so that a stricter server never locks users
/// out of objects it accepted before.
#[derive(Debug, Clone, Copy)]
struct Options<'a> {
    require_recognized_review_version: bool,
    require_immutable_names: bool,
    require_openapi_schema: bool,
    schema: SchemaOptions,
    /// The versions before an update: a version whose schema did not change keeps rules
    /// over the per-rule cost budget (kube's `versionsWithUnchangedSchemas`).
    old_versions: &'a [CustomResourceDefinitionVersion],
    sent: Sent,
}

/// What the typed CRD cannot tell of the object sent: whether a list Go decodes as a nil
/// slice was missing (or `null`). Go prints a nil slice apart from an empty one
/// (`[]T(nil)` against `[]T{}`) in the messages quoting it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sent {
    /// `spec.versions` was missing or `null`.
    pub versions_nil: bool,
}

impl Sent {
    /// What `obj`, the CRD as JSON, leaves nil.
    pub fn of(obj: &Value) -> Self {
        Sent { versions_nil: obj.pointer("/spec/versions").is_none_or(Value::is_null) }
    }
}

impl<'a> Options<'a> {
    fn create(sent: Sent) -> Self {
        Options {
            sent,
            require_recognized_review_version: true,
            require_immutable_names: false,
            require_openapi_schema: true,
            schema: SchemaOptions {
                require_structural: true,
                require_valid_property_type: true,
                require_atomic_set_type: true,
                require_map_list_keys_map_set_validation: true,
                suppress_expression_cost: false,
            },
            old_versions: &[],
        }
    }

    fn update(old: &'a CustomResourceDefinition, sent: Sent) -> Self {
        let old_spec = &old.spec;
        Options {
            sent,
            require_recognized_review_version: has_recognized_review_version_or_empty(old_spec.conversion.as_ref()),
            require_immutable_names: is_crd_condition_true(old, ESTABLISHED),
            require_openapi_schema: old_spec.versions.iter().all(|v| schema_of(v.schema.as_ref()).is_some()),
            schema: SchemaOptions {
                require_structural: !spec_has_schema_with(old_spec, |s| !is_structural(s)),
                require_valid_property_type: !spec_has_schema_with(old_spec, |s| schema_has(s, &has_invalid_type)),
                require_atomic_set_type: !spec_has_schema_with(old_spec, |s| schema_has(s, &has_non_atomic_set)),
                require_map_list_keys_map_set_validation: !spec_has_schema_with(old_spec, |s| {
                    schema_has(s, &|n| {
                        !map_set_keys_rules(n, item_schema(n), list_map_keys(n), &Path::default()).is_empty()
                    })
                }),
                suppress_expression_cost: false,
            },
            old_versions: &old_spec.versions,
        }
    }
}

/// Validates a CRD about to be created; `sent` tells what its JSON left nil.
pub fn validate_crd_create(crd: &CustomResourceDefinition, sent: Sent) -> Vec<FieldError> {
    let mut errs = validate_metadata(crd);
    errs.extend(validate_spec(&crd.spec, Options::create(sent)));
    errs.extend(validate_crd_status(crd));
    errs.extend(validate_stored_versions(crd));
    errs.extend(validate_api_approval(crd, None));
    errs.extend(validate_preserve_unknown_fields(crd, None));
    errs
}

/// Validates an update of `old` to `new` (the main endpoint, not `/status`); `sent` tells
/// what `new`'s JSON left nil.
pub fn validate_crd_update(
    new: &CustomResourceDefinition,
    old: &CustomResourceDefinition,
    sent: Sent,
) -> Vec<FieldError> {
    let opts = Options::update(old, sent);
    let mut errs = validate_spec(&new.spec, opts);
    let spec = Path::root("spec");
    if opts.require_immutable_names {
        // Scope and kind are baked into stored objects once the CRD serves.
        errs.extend(immutable(&new.spec.scope, &old.spec.scope, spec.child("scope")));
        errs.extend(immutable(&new.spec.names.kind, &old.spec.names.kind, spec.child("names").child("kind")));
    }
    // Group and plural make up the object name, which never changes.
    errs.extend(immutable(&new.spec.group, &old.spec.group, spec.child("group")));
    errs.extend(immutable(&new.spec.names.plural, &old.spec.names.plural, spec.child("names").child("plural")));
    errs.extend(validate_crd_status(new));
    errs.extend(validate_stored_versions(new));
    errs.extend(validate_api_approval(new, Some(old)));
    errs.extend(validate_preserve_unknown_fields(new, Some(old)));
    errs
}

/// Validates the status of a CRD (a `/status` write): its accepted names must be well formed.
pub fn validate_crd_status(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    validate_status(crd.status.as_ref())
}

/// [`validate_crd_status`] of a CRD whose status is `status`.
pub fn validate_status(status: Option<&CustomResourceDefinitionStatus>) -> Vec<FieldError> {
    let default_names = CustomResourceDefinitionNames::default();
    let accepted = status.and_then(|s| s.accepted_names.as_ref()).unwrap_or(&default_names);
    validate_names(accepted, &Path::root("status").child("acceptedNames"))
}

fn immutable(new: &str, old: &str, path: Path) -> Option<FieldError> {
    (new != old).then(|| FieldError::invalid(path, new, "field is immutable"))
}

fn validate_spec(spec: &CustomResourceDefinitionSpec, opts: Options<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let path = Path::root("spec");
    validate_group_and_scope(spec, &path, &mut errs);
    let opts = schema_requirements(spec, opts, &mut errs);
    let hoisted = Hoisted::of(&spec.versions);
    validate_versions(spec, opts, hoisted, &mut errs);

    let names_path = path.child("names");
    let n = &spec.names;
    for (field, value) in [
        ("plural", n.plural.as_str()),
        ("singular", n.singular.as_deref().unwrap_or_default()),
        ("kind", n.kind.as_str()),
        ("listKind", n.list_kind.as_deref().unwrap_or_default()),
    ] {
        if value.is_empty() {
            errs.push(FieldError::required(names_path.child(field), ""));
        }
    }
    errs.extend(validate_names(n, &names_path));

    if let Some(first) = spec.versions.first() {
        let any_status = spec.versions.iter().any(|v| has_status(v.subresources.as_ref()));
        version_fields(first, any_status, hoisted, opts, &path, "validation", &mut errs);
    }

    let conversion = spec.conversion.as_ref();
    let preserve_unknown_fields = spec.preserve_unknown_fields.unwrap_or(false);
    if let Some(c) = conversion.filter(|c| c.strategy != CONVERSION_NONE && preserve_unknown_fields) {
        errs.push(FieldError::invalid(
            path.child("conversion").child("strategy"),
            c.strategy.as_str(),
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    errs.extend(validate_conversion(conversion, opts.require_recognized_review_version, &path.child("conversion")));
    errs
}

fn validate_group_and_scope(spec: &CustomResourceDefinitionSpec, path: &Path, errs: &mut Vec<FieldError>) {
    let group = spec.group.as_str();
    if group.is_empty() {
        errs.push(FieldError::required(path.child("group"), ""));
    } else if let problems @ [_, ..] = is_dns1123_subdomain(group).as_slice() {
        errs.push(FieldError::invalid(path.child("group"), group, problems.join(",")));
    } else if !group.contains('.') {
        errs.push(FieldError::invalid(path.child("group"), group, "should be a domain with at least one dot"));
    }
    let scope = spec.scope.as_str();
    if scope.is_empty() {
        errs.push(FieldError::required(path.child("scope"), ""));
    } else if scope != SCOPE_CLUSTER && scope != SCOPE_NAMESPACED {
        errs.push(FieldError::not_supported(path.child("scope"), scope, &[SCOPE_CLUSTER, SCOPE_NAMESPACED]));
    }
}

/// Which versions need a schema, and whether schemas must be structural: pruning (always
/// on in v1 unless the legacy flag is set), defaults and Kubernetes extensions all need it.
fn schema_requirements<'a>(
    spec: &CustomResourceDefinitionSpec,
    opts: Options<'a>,
    errs: &mut Vec<FieldError>,
) -> Options<'a> {
    let mut opts = opts;
    let preserve_unknown_fields = spec.preserve_unknown_fields.unwrap_or(false);
    if !preserve_unknown_fields {
        opts.schema.require_structural = true;
    }
    let versions_path = Path::root("spec").child("versions");
    for (i, v) in spec.versions.iter().enumerate() {
        if schema_of(v.schema.as_ref()).is_some() {
            continue;
        }
        let schema_path = versions_path.index(i).child("schema").child("openAPIV3Schema");
        if opts.require_openapi_schema {
            errs.push(FieldError::required(schema_path, "schemas are required"));
        } else if !preserve_unknown_fields && v.served {
            errs.push(FieldError::required(schema_path, "because otherwise all fields are pruned"));
        }
    }
    if spec_has_schema_with(spec, |s| schema_has(s, &|n| n.default.is_some())) {
        opts.schema.require_structural = true;
        if preserve_unknown_fields {
            errs.push(FieldError::invalid(
                Path::root("spec").child("preserveUnknownFields"),
                true,
                "must be false in order to use defaults in the schema",
            ));
        }
    }
    if spec_has_schema_with(spec, |s| schema_has(s, &has_kubernetes_extension)) {
        opts.schema.require_structural = true;
    }
    opts
}

/// Each version's own checks, then the checks on the set of versions.
fn validate_versions(
    spec: &CustomResourceDefinitionSpec,
    opts: Options<'_>,
    hoisted: Hoisted,
    errs: &mut Vec<FieldError>,
) {
    let versions_path = Path::root("spec").child("versions");
    for (i, v) in spec.versions.iter().enumerate() {
        let vpath = versions_path.index(i);
        if let problems @ [_, ..] = is_dns1035_label(&v.name).as_slice() {
            errs.push(FieldError::invalid(vpath.child("name"), v.name.as_str(), problems.join(",")));
        }
        let warning = v.deprecation_warning.clone().map_or(Value::Null, Value::from);
        for problem in deprecation_warning_problems(v) {
            errs.push(FieldError::invalid(vpath.child("deprecationWarning"), warning.clone(), problem));
        }
        version_fields(v, has_status(v.subresources.as_ref()), hoisted.inverse(), opts, &vpath, "schema", errs);
    }

    // kube quotes its internal versions, as Go prints them.
    let sent_versions = Some(spec.versions.as_slice()).filter(|_| !opts.sent.versions_nil);
    let shown = || super::gostring::versions(sent_versions, hoisted);
    let mut names: Vec<&str> = spec.versions.iter().map(|v| v.name.as_str()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        errs.push(FieldError::invalid_shown(&versions_path, &shown(), "must contain unique version names"));
    }
    if spec.versions.iter().filter(|v| v.storage).count() != 1 {
        let detail = "must have exactly one version marked as storage version";
        errs.push(FieldError::invalid_shown(&versions_path, &shown(), detail));
    }
    // kube's internal type carries the first version's name as `spec.version` and checks it again.
    if let Some(first) = spec.versions.first().filter(|v| !v.name.is_empty())
        && let problems @ [_, ..] = is_dns1035_label(&first.name).as_slice()
    {
        errs.push(FieldError::invalid(Path::root("spec").child("version"), first.name.as_str(), problems.join(",")));
    }
}

/// The schema, subresources, columns and selectable fields of `v`, those selected by `here`, reported under
/// `base` (`spec`, with the schema as `validation`, or `spec.versions[i]`).
fn version_fields(
    v: &CustomResourceDefinitionVersion,
    status_enabled: bool,
    here: Hoisted,
    opts: Options<'_>,
    base: &Path,
    schema_field: &str,
    errs: &mut Vec<FieldError>,
) {
    if here.schema {
        let unchanged = opts.old_versions.iter().any(|old| old.name == v.name && old.schema == v.schema);
        let schema_opts = SchemaOptions { suppress_expression_cost: unchanged, ..opts.schema };
        errs.extend(validate_validation(v.schema.as_ref(), status_enabled, schema_opts, &base.child(schema_field)));
    }
    if here.subresources {
        errs.extend(validate_subresources(v.subresources.as_ref(), &base.child("subresources")));
    }
    if here.columns {
        for (j, column) in v.additional_printer_columns.iter().flatten().enumerate() {
            errs.extend(validate_column(column, &base.child("additionalPrinterColumns").index(j)));
        }
    }
    if here.selectable_fields {
        // kube resolves the paths against a schema at the same level only (see `selectable`).
        let schema = if here.schema { schema_of(v.schema.as_ref()) } else { None };
        let scope = if schema_field == "validation" { Scope::Spec(schema) } else { Scope::Version(schema) };
        let fields = v.selectable_fields.as_deref().unwrap_or_default();
        // kube builds the structural schema the paths resolve in, and says why it cannot. It
        // then resolves them in no schema at all, which panics (the request's connection is
        // dropped); we resolve them in the schema as it is.
        if let Some(e) = schema.filter(|_| !fields.is_empty()).and_then(new_structural_error) {
            errs.push(FieldError::invalid(base.child("schema.openAPIV3Schema"), "", e));
        }
        errs.extend(validate_selectable_fields(fields, scope, &base.child("selectableFields")));
    }
}

/// The checks shared by `spec.names` and `status.acceptedNames` (empty names are allowed
/// here; the spec requires them separately).
fn validate_names(names: &CustomResourceDefinitionNames, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let label = |field: &str, value: &str, errs: &mut Vec<FieldError>| {
        if let problems @ [_, ..] = is_dns1035_label(value).as_slice() {
            errs.push(FieldError::invalid(path.child(field), value, problems.join(",")));
        }
    };
    let mixed_case = |field: &str, value: &str, errs: &mut Vec<FieldError>| {
        if let problems @ [_, ..] = is_dns1035_label(&value.to_lowercase()).as_slice() {
            let detail = format!("may have mixed case, but should otherwise match: {}", problems.join(","));
            errs.push(FieldError::invalid(path.child(field), value, detail));
        }
    };
    let singular = names.singular.as_deref().unwrap_or_default();
    let list_kind = names.list_kind.as_deref().unwrap_or_default();
    if !names.plural.is_empty() {
        label("plural", &names.plural, &mut errs);
    }
    if !singular.is_empty() {
        label("singular", singular, &mut errs);
    }
    if !names.kind.is_empty() {
        mixed_case("kind", &names.kind, &mut errs);
    }
    if !list_kind.is_empty() {
        mixed_case("listKind", list_kind, &mut errs);
    }
    for (i, short_name) in names.short_names.iter().flatten().enumerate() {
        if let problems @ [_, ..] = is_dns1035_label(short_name).as_slice() {
            errs.push(FieldError::invalid(path.child("shortNames").index(i), short_name.as_str(), problems.join(",")));
        }
    }
    // Otherwise a kind could not be told from its list.
    if !names.kind.is_empty() && names.kind == list_kind {
        errs.push(FieldError::invalid(path.child("listKind"), list_kind, "kind and listKind may not be the same"));
    }
    for (i, category) in names.categories.iter().flatten().enumerate() {
        if let problems @ [_, ..] = is_dns1035_label(category).as_slice() {
            errs.push(FieldError::invalid(path.child("categories").index(i), category.as_str(), problems.join(",")));
        }
    }
    errs
}

fn validate_stored_versions(crd: &CustomResourceDefinition) -> Vec<FieldError> {
    let path = Path::root("status").child("storedVersions");
    let given = crd.status.as_ref().and_then(|s| s.stored_versions.as_deref());
    let stored = given.unwrap_or_default();
    if stored.is_empty() {
        // kube's create strategy appends storage versions to a nil slice: none stays nil.
        let shown = super::gostring::strings(given.filter(|g| !g.is_empty()));
        return vec![FieldError::invalid_shown(&path, &shown, "must have at least one stored version")];
    }
    let mut errs = Vec::new();
    // kube checks the versions off a map of the stored ones: a version matched once is gone,
    // so a repeated storage version is missing the second time, and what is left was never
    // matched. A repeated entry is indexed by its last position (the map keeps the last).
    let mut unmatched: Vec<&String> = stored.iter().collect();
    for v in &crd.spec.versions {
        let matched = unmatched.iter().position(|s| **s == v.name);
        if v.storage && matched.is_none() {
            errs.push(FieldError::invalid_shown(
                &path,
                &super::gostring::strings(Some(stored)),
                &format!("must have the storage version {}", v.name),
            ));
        }
        if matched.is_some() {
            unmatched.retain(|s| **s != v.name);
        }
    }
    // A version still holding stored data cannot disappear before a storage migration; 1.32
    // words it tersely (later releases explain the storage migration).
    for (i, v) in stored.iter().enumerate() {
        let last_index = stored.iter().rposition(|s| s == v) == Some(i);
        if last_index && unmatched.contains(&v) {
            errs.push(FieldError::invalid(path.index(i), v.as_str(), "must appear in spec.versions"));
        }
    }
    errs
}

fn validate_preserve_unknown_fields(
    crd: &CustomResourceDefinition,
    old: Option<&CustomResourceDefinition>,
) -> Vec<FieldError> {
    // Objects stored with the legacy flag keep it (compatibility with existing data).
    if old.is_some_and(|o| o.spec.preserve_unknown_fields == Some(true))
        || crd.spec.preserve_unknown_fields != Some(true)
    {
        return Vec::new();
    }
    vec![FieldError::invalid(
        Path::root("spec").child("preserveUnknownFields"),
        true,
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    )]
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
