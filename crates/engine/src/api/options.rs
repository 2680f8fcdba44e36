//! The options of a write, as kube-apiserver's handlers decode and validate them before
//! they read the object: `CreateOptions`, `UpdateOptions` and `PatchOptions` from the query,
//! `DeleteOptions` from the body or, only when there is no body, from the query.
//!
//! A parameter that does not convert is a 400 with Go's conversion error; a body that does
//! not decode is kube's 500 (its handler passes the decoder's error on as is); the
//! validation errors are one 422 naming the options kind
//! (`CreateOptions.meta.k8s.io "" is invalid: ...`), in the order apimachinery's
//! `ValidateCreateOptions` and siblings append them.

use super::query::{Query, go_parse_int};
use crate::field::{ErrorType, FieldError, go_quote};
use crate::resources::go_decode;
use crate::resources::rest::{DeleteOptions, FieldValidation, Propagation, WriteOptions};
use crate::status::ApiError;
use axum::http::HeaderMap;
use serde_json::Value;

/// The longest field manager kube takes (`FieldManagerMaxLength`).
const FIELD_MANAGER_MAX: usize = 128;

/// The scheme kube names when a DELETE body is no DeleteOptions.
const META_SCHEME: &str = "pkg/apis/meta/internalversion/scheme/register.go:27";

/// Which options a mutating request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionsKind {
    Create,
    Update,
    /// `apply`: the patch is a server-side apply (which needs a field manager).
    Patch {
        apply: bool,
    },
}

impl OptionsKind {
    fn name(self) -> &'static str {
        match self {
            OptionsKind::Create => "CreateOptions",
            OptionsKind::Update => "UpdateOptions",
            OptionsKind::Patch { .. } => "PatchOptions",
        }
    }
}

/// The write options of a create, update or patch. Without a `fieldManager`, the manager
/// is named after the User-Agent's program (`kubectl-patch/v1.32.4 (linux/amd64) ...` →
/// `kubectl-patch`), except for an apply, which must name one.
pub fn write_options(q: &Query, kind: OptionsKind, user_agent: Option<&str>) -> Result<WriteOptions, ApiError> {
    let manager = q.get("fieldManager").unwrap_or_default();
    let dry_run = q.all("dryRun");
    let validation = q.get("fieldValidation").unwrap_or_default();
    let force = q.get("force").map(go_query_bool);
    let mut errors = Vec::new();
    match kind {
        OptionsKind::Patch { apply: false } if force.is_some() => {
            errors.push(FieldError::forbidden("force", "may not be specified for non-apply patch"));
        }
        OptionsKind::Patch { apply: true } if manager.is_empty() => {
            errors.push(FieldError::required("fieldManager", "is required for apply patch"));
        }
        _ => {}
    }
    errors.extend(field_manager_errors(manager));
    errors.extend(dry_run_errors(&dry_run));
    let field_validation = match validation {
        "" | "Warn" => FieldValidation::Warn,
        "Ignore" => FieldValidation::Ignore,
        "Strict" => FieldValidation::Strict,
        other => {
            errors.push(FieldError::not_supported("fieldValidation", other, &["", "Ignore", "Strict", "Warn"]));
            FieldValidation::Warn
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::invalid(kind.name(), "meta.k8s.io", "", &errors));
    }
    let apply = kind == OptionsKind::Patch { apply: true };
    let field_manager = match manager {
        "" if apply => None,
        "" => user_agent.map(manager_from_user_agent).filter(|p| !p.is_empty()),
        m => Some(m.to_string()),
    };
    Ok(WriteOptions {
        dry_run: !dry_run.is_empty(),
        field_manager,
        field_validation,
        field_manager_given: !manager.is_empty(),
        field_validation_given: match field_validation {
            _ if validation.is_empty() => None,
            FieldValidation::Warn => Some("Warn"),
            FieldValidation::Ignore => Some("Ignore"),
            FieldValidation::Strict => Some("Strict"),
        },
        force: force.unwrap_or(false),
        ..Default::default()
    })
}

/// kube's manager for a write without `fieldManager`: the User-Agent up to its first `/`,
/// without unprintable characters, cut to the longest manager name allowed (a header
/// value read as text is visible ASCII, spaces and tabs).
fn manager_from_user_agent(user_agent: &str) -> String {
    // The space around a header's value is no part of it (Go's server trims it; hyper not).
    let prefix = user_agent.trim_matches([' ', '\t']).split('/').next().unwrap_or_default();
    prefix.chars().filter(|c| *c == ' ' || c.is_ascii_graphic()).take(FIELD_MANAGER_MAX).collect()
}

/// The `DeleteOptions` of a DELETE: the body's when it has one (then the query is not
/// read at all, as kube's handler does), else the query's.
pub fn delete_options(q: &Query, headers: &HeaderMap, body: &[u8]) -> Result<DeleteOptions, ApiError> {
    let raw =
        if body.is_empty() { from_query(q)? } else { from_body(super::body::options_document(headers, body)?, body)? };
    let mut errors = Vec::new();
    if let (Some(_), Some(policy)) = (raw.orphan_dependents, &raw.propagation_policy) {
        errors.push(FieldError::invalid(
            "propagationPolicy",
            policy.as_str(),
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    let propagation = match raw.propagation_policy.as_deref() {
        None => raw.orphan_dependents.map(|orphan| if orphan { Propagation::Orphan } else { Propagation::Background }),
        Some("Orphan") => Some(Propagation::Orphan),
        Some("Background") => Some(Propagation::Background),
        Some("Foreground") => Some(Propagation::Foreground),
        Some(other) => {
            errors.push(FieldError::not_supported(
                "propagationPolicy",
                other,
                &["Foreground", "Background", "Orphan", "nil"],
            ));
            None
        }
    };
    let dry_run: Vec<&str> = raw.dry_run.iter().map(String::as_str).collect();
    errors.extend(dry_run_errors(&dry_run));
    if !errors.is_empty() {
        return Err(ApiError::invalid("DeleteOptions", "meta.k8s.io", "", &errors));
    }
    Ok(DeleteOptions {
        precondition_uid: raw.precondition_uid,
        precondition_rv: raw.precondition_rv,
        propagation,
        dry_run: !dry_run.is_empty(),
        orphan_dependents: raw.orphan_dependents,
    })
}

/// `DeleteOptions` as given, before validation.
#[derive(Debug, Default)]
struct RawDelete {
    propagation_policy: Option<String>,
    orphan_dependents: Option<bool>,
    dry_run: Vec<String>,
    precondition_uid: Option<String>,
    precondition_rv: Option<String>,
}

fn from_query(q: &Query) -> Result<RawDelete, ApiError> {
    // Converted even though a custom resource has no use for it: a bad one is a 400.
    if let Some(grace) = q.get("gracePeriodSeconds") {
        go_parse_int(grace)?;
    }
    Ok(RawDelete {
        propagation_policy: q.get("propagationPolicy").map(String::from),
        orphan_dependents: q.get("orphanDependents").map(go_query_bool),
        dry_run: q.all("dryRun").into_iter().map(String::from).collect(),
        // `Convert_url_Values_To_v1_DeleteOptions`: `uid` and `resourceVersion` given in the
        // query are the preconditions.
        precondition_uid: q.get("uid").filter(|s| !s.is_empty()).map(String::from),
        precondition_rv: q.get("resourceVersion").filter(|s| !s.is_empty()).map(String::from),
    })
}

fn from_body(doc: Value, body: &[u8]) -> Result<RawDelete, ApiError> {
    // kube's handler passes the decoder's errors on as they are: 500s without a reason.
    let unreason = |message: String| ApiError::new(500, "", message);
    if let Some(why) = go_decode::interpret_error(&doc) {
        return Err(unreason(why));
    }
    let Value::Object(doc) = doc else { return Ok(RawDelete::default()) };
    let text = |key: &str| doc.get(key).and_then(Value::as_str).unwrap_or_default();
    if let Some(why) = not_delete_options(text("apiVersion"), text("kind")) {
        return Err(unreason(why));
    }
    // Go's decoder goes on past a member of the wrong type and reports the first it met,
    // in the order sent (a YAML body comes as JSON with its keys sorted).
    let members = match serde_json::from_slice::<go_decode::Members>(body) {
        Ok(go_decode::Members(members)) => members.into_iter().map(|(key, raw)| (key, raw.get().to_string())).collect(),
        Err(_) => doc.iter().map(|(key, value)| (key.clone(), value.to_string())).collect::<Vec<_>>(),
    };
    if let Some(why) = members.iter().find_map(|(key, raw)| mistyped_member(key, raw)) {
        return Err(unreason(why));
    }
    let field = |key: &str| doc.get(key).filter(|v| !v.is_null());
    let (policy, orphan, dry_run, pre) =
        (field("propagationPolicy"), field("orphanDependents"), field("dryRun"), field("preconditions"));
    let pre_text = |key: &str| pre.and_then(|p| p.get(key)).and_then(Value::as_str).map(String::from);
    Ok(RawDelete {
        propagation_policy: policy.and_then(Value::as_str).map(String::from),
        orphan_dependents: orphan.and_then(Value::as_bool),
        dry_run: dry_run
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default(),
        precondition_uid: pre_text("uid"),
        precondition_rv: pre_text("resourceVersion"),
    })
}

/// Go's words for the member `key` of a DeleteOptions body, `raw` as sent, when it does not
/// decode into its field: a value of another JSON type, or a number no int64 holds (named
/// by its text); a `dryRun` item or a preconditions member is named by its own type.
fn mistyped_member(key: &str, raw: &str) -> Option<String> {
    let go = match key {
        "gracePeriodSeconds" => "int64",
        "propagationPolicy" => "v1.DeletionPropagation",
        "orphanDependents" | "ignoreStoreReadErrorWithClusterBreakingPotential" => "bool",
        "dryRun" => "[]string",
        "preconditions" => "v1.Preconditions",
        _ => return None,
    };
    let mistyped = |field: &str, what: &str, go: &str| {
        Some(format!("json: cannot unmarshal {what} into Go struct field {field} of type {go}"))
    };
    // A number beyond float64 reads as null here; its text still says it is a number.
    let value: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
    let is_number = raw.starts_with(|c: char| c == '-' || c.is_ascii_digit());
    let what = match (go, &value) {
        _ if raw == "null" => return None,
        ("int64", _) if is_number => match raw.parse::<i64>() {
            Ok(_) => return None,
            Err(_) => format!("number {raw}"),
        },
        ("v1.DeletionPropagation", Value::String(_)) | ("bool", Value::Bool(_)) => return None,
        ("[]string", Value::Array(items)) => {
            let item = items.iter().find(|v| !v.is_null() && !v.is_string())?;
            return mistyped("DeleteOptions.dryRun", json_type(item), "string");
        }
        ("v1.Preconditions", Value::Object(_)) => {
            let go_decode::Members(members) = serde_json::from_str(raw).ok()?;
            return members.iter().find_map(|(member, raw)| {
                let go = match member.as_str() {
                    "uid" => "types.UID",
                    "resourceVersion" => "string",
                    _ => return None,
                };
                let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
                let what = if raw.get().starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                    "number"
                } else {
                    json_type(&v)
                };
                (raw.get() != "null" && !v.is_string())
                    .then(|| mistyped(&format!("Preconditions.preconditions.{member}"), what, go))
                    .flatten()
            });
        }
        _ if is_number => "number".to_string(),
        _ => json_type(&value).to_string(),
    };
    mistyped(&format!("DeleteOptions.{key}"), &what, go)
}

/// Why a body of kind `kind` at `api_version` is no `DeleteOptions`, in the words of kube's
/// meta scheme (`metainternalversion`), which decodes what it knows and then fails to
/// convert it. Its unversioned kinds decode at any version, the meta kinds at their own
/// (an empty `apiVersion` is `meta.k8s.io/v1`); anything else is not registered.
fn not_delete_options(api_version: &str, kind: &str) -> Option<String> {
    const UNVERSIONED: &[&str] = &[
        "DeleteOptions",
        "CreateOptions",
        "UpdateOptions",
        "Status",
        "APIVersions",
        "APIGroupList",
        "APIGroup",
        "APIResourceList",
    ];
    const META_V1: &[&str] = &[
        "ListOptions",
        "GetOptions",
        "PatchOptions",
        "WatchEvent",
        "Table",
        "TableOptions",
        "PartialObjectMetadata",
        "PartialObjectMetadataList",
    ];
    // v1beta1's Table, TableOptions and PartialObjectMetadata are Go aliases of v1's.
    const META_V1BETA1: &[&str] = &["Table", "TableOptions", "PartialObjectMetadata", "PartialObjectMetadataList"];
    let version = if api_version.is_empty() { "meta.k8s.io/v1" } else { api_version };
    let package = match version {
        _ if kind.is_empty() || kind == "DeleteOptions" => return None,
        _ if UNVERSIONED.contains(&kind) => "v1",
        "meta.k8s.io/v1" if META_V1.contains(&kind) => "v1",
        "meta.k8s.io/v1beta1" if kind == "PartialObjectMetadataList" => "v1beta1",
        "meta.k8s.io/v1beta1" if META_V1BETA1.contains(&kind) => "v1",
        _ => {
            return Some(format!(
                "no kind {} is registered for version {} in scheme {}",
                go_quote(kind),
                go_quote(version),
                go_quote(META_SCHEME)
            ));
        }
    };
    Some(format!("converting ({package}.{kind}) to (v1.DeleteOptions): unknown conversion"))
}

/// The JSON type Go's decoder names in its errors.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A boolean query parameter as kube converts it: only `0` and `false` (any case) are false.
fn go_query_bool(raw: &str) -> bool {
    !(raw == "0" || raw.eq_ignore_ascii_case("false"))
}

/// kube's `ValidateFieldManager`: at most 128 bytes, printable characters only.
fn field_manager_errors(manager: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if manager.len() > FIELD_MANAGER_MAX {
        errors.push(FieldError::too_long("fieldManager", FIELD_MANAGER_MAX));
    }
    for (at, c) in manager.char_indices() {
        // Go's `unicode.IsPrint`: no control characters and no space but ' '.
        if c.is_control() || (c.is_whitespace() && c != ' ') {
            let detail = format!("invalid character U+{:04X} (at position {at})", u32::from(c));
            errors.push(FieldError::invalid("fieldManager", manager, detail));
        }
    }
    errors
}

/// kube's `ValidateDryRun`: every value is `All`.
fn dry_run_errors(values: &[&str]) -> Vec<FieldError> {
    if values.iter().all(|v| *v == "All") {
        return Vec::new();
    }
    // Go prints the list with `%#v` (`[]string{"Some"}`), which no JSON value renders as:
    // the value goes into the detail, after the words of the error type.
    let listed: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    vec![FieldError {
        error_type: ErrorType::NotSupported,
        field: "dryRun".into(),
        value: None,
        detail: format!("[]string{{{}}}: supported values: \"All\"", listed.join(", ")),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(query: &str) -> Result<WriteOptions, String> {
        write_options(&Query::parse(Some(query)), OptionsKind::Create, Some("kubectl-create/v1.32"))
            .map_err(|e| e.message)
    }

    fn delete(query: &str, body: &str) -> Result<DeleteOptions, (u16, String)> {
        delete_in("application/json", query, body)
    }

    fn delete_in(content_type: &str, query: &str, body: &str) -> Result<DeleteOptions, (u16, String)> {
        let mut headers = HeaderMap::new();
        headers.insert(axum::http::header::CONTENT_TYPE, content_type.parse().expect("header"));
        delete_options(&Query::parse(Some(query)), &headers, body.as_bytes()).map_err(|e| (e.code, e.message))
    }

    #[test]
    fn create_options_are_validated_as_kube_does() {
        assert_eq!(
            create("fieldValidation=Loose").err().as_deref(),
            Some(
                "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Loose\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
            )
        );
        assert_eq!(
            create("dryRun=Some").err().as_deref(),
            Some(
                "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
            )
        );
        assert_eq!(
            create(&format!("fieldManager={}", "a".repeat(129))).err().as_deref(),
            Some("CreateOptions.meta.k8s.io \"\" is invalid: fieldManager: Too long: may not be more than 128 bytes")
        );
        // Every error, in kube's order (the oracle's answer).
        assert_eq!(
            create("dryRun=Some&fieldValidation=Loose&fieldManager=a%01b").err().as_deref(),
            Some(
                "CreateOptions.meta.k8s.io \"\" is invalid: [fieldManager: Invalid value: \"a\\x01b\": invalid character U+0001 (at position 1), dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\", fieldValidation: Unsupported value: \"Loose\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]"
            )
        );
        let opts = create("dryRun=All&fieldValidation=").expect("valid");
        assert!(opts.dry_run);
        assert_eq!(opts.field_validation, FieldValidation::Warn);
        assert_eq!(opts.field_manager.as_deref(), Some("kubectl-create"));
    }

    #[test]
    fn a_manager_taken_from_the_user_agent_is_cut_to_a_valid_name_as_kube_cuts_it() {
        let manager =
            |ua: &str| write_options(&Query::parse(None), OptionsKind::Update, Some(ua)).expect("valid").field_manager;
        // The oracle's answer to a 200-character User-Agent: its first 128 characters.
        let long = "a".repeat(200);
        assert_eq!(manager(&long).as_deref(), Some(&long[..128]));
        assert_eq!(manager(" spaced out /1.0 (linux)").as_deref(), Some("spaced out "));
        assert_eq!(manager("a\tb/1").as_deref(), Some("ab"));
        assert_eq!(manager("/1.0"), None);
    }

    #[test]
    fn patch_options_refuse_force_outside_apply_and_need_a_manager_for_it() {
        let patch = |query: &str, apply: bool| {
            write_options(&Query::parse(Some(query)), OptionsKind::Patch { apply }, Some("kubectl/v1"))
                .map_err(|e| e.message)
        };
        assert_eq!(
            patch("force=false", false).err().as_deref(),
            Some(
                "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch"
            )
        );
        assert_eq!(
            patch("", true).err().as_deref(),
            Some("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch")
        );
        assert!(patch("fieldManager=me&force=yes", true).expect("valid").force, "anything but 0 and false is true");
        let err = write_options(&Query::parse(Some("dryRun=")), OptionsKind::Update, None).expect_err("invalid");
        assert_eq!(
            err.message,
            "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"\"}: supported values: \"All\""
        );
    }

    #[test]
    fn delete_options_come_from_the_body_or_else_the_query() {
        let invalid = |m: &str| Err((422, format!("DeleteOptions.meta.k8s.io \"\" is invalid: {m}")));
        let unsupported = "propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"";
        assert_eq!(delete("propagationPolicy=Sideways", ""), invalid(unsupported));
        assert_eq!(delete("", r#"{"propagationPolicy":"Sideways"}"#), invalid(unsupported));
        assert_eq!(
            delete("", r#"{"orphanDependents":true,"propagationPolicy":"Background"}"#),
            invalid(
                "propagationPolicy: Invalid value: \"Background\": orphanDependents and deletionPropagation cannot be both set"
            )
        );
        assert_eq!(
            delete("dryRun=All&dryRun=Some", ""),
            invalid("dryRun: Unsupported value: []string{\"All\", \"Some\"}: supported values: \"All\"")
        );
        assert_eq!(
            delete("gracePeriodSeconds=soon", ""),
            Err((400, "strconv.ParseInt: parsing \"soon\": invalid syntax".into()))
        );
        // With a body, the query is not read.
        let opts = delete("dryRun=All&propagationPolicy=Foreground", "null").expect("valid");
        assert_eq!(opts, DeleteOptions::default());
        let opts = delete(
            "",
            r#"{"apiVersion":"v1","kind":"DeleteOptions","dryRun":["All"],"preconditions":{"resourceVersion":"abc"}}"#,
        )
        .expect("valid");
        assert!(opts.dry_run);
        assert_eq!(opts.precondition_rv.as_deref(), Some("abc"));
        assert_eq!(delete("orphanDependents=false", "").expect("valid").propagation, Some(Propagation::Background));
    }

    #[test]
    fn a_delete_body_that_is_no_delete_options_is_kubes_500() {
        assert_eq!(
            delete("", r#"{"apiVersion":"v1","kind":"Pod"}"#),
            Err((
                500,
                "no kind \"Pod\" is registered for version \"v1\" in scheme \"pkg/apis/meta/internalversion/scheme/register.go:27\"".into()
            ))
        );
        assert_eq!(
            delete("", r#"{"kind":"Pod"}"#).map_err(|e| e.1),
            Err("no kind \"Pod\" is registered for version \"meta.k8s.io/v1\" in scheme \"pkg/apis/meta/internalversion/scheme/register.go:27\"".into())
        );
        assert_eq!(
            delete("", r#"{"gracePeriodSeconds":"x"}"#),
            Err((
                500,
                "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"
                    .into()
            ))
        );
        assert_eq!(
            delete("", " "),
            Err((500, "couldn't get version/kind; json parse error: unexpected end of JSON input".into()))
        );
        let err = delete_options(&Query::default(), &HeaderMap::new(), b"{\"kind\":\"Pod\"}").expect_err("refused");
        assert!(!err.to_body().contains("reason"), "no reason, as kube's: {}", err.to_body());
    }

    #[test]
    fn a_delete_body_is_read_by_the_decoder_its_content_type_names() {
        // The oracle's answers: YAML options as JSON ones, go-yaml's errors, and a 415 for
        // a type kube does not decode (only when there is a body to decode).
        let opts = delete_in("application/yaml", "", "kind: DeleteOptions\npreconditions:\n  resourceVersion: '1'\n");
        assert_eq!(opts.expect("valid").precondition_rv.as_deref(), Some("1"));
        assert_eq!(
            delete_in("application/yaml", "", "{"),
            Err((500, "yaml: line 1: did not find expected node content".into()))
        );
        assert_eq!(
            delete_in("application/yaml", "", "gracePeriodSeconds: x\n"),
            Err((
                500,
                "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"
                    .into()
            ))
        );
        assert_eq!(
            delete_in("application/yaml", "", "- a\n").map_err(|e| e.1),
            Err("couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }".into())
        );
        assert_eq!(delete_in("text/plain", "", "{}").map_err(|e| e.0), Err(415));
        assert!(delete_in("text/plain", "dryRun=All", "").expect("valid").dry_run);
        assert_eq!(
            delete_in("application/json", "", "xx").map_err(|e| e.1),
            Err("couldn't get version/kind; json parse error: invalid character 'x' looking for beginning of value"
                .into())
        );
    }

    #[test]
    fn another_kind_of_body_is_what_kubes_meta_scheme_makes_of_it() {
        let why = |v: &str, k: &str| not_delete_options(v, k);
        assert_eq!(why("apps/v1", "DeleteOptions"), None);
        assert_eq!(why("", ""), None);
        // The oracle's words.
        let unknown = |k: &str| Some(format!("converting (v1.{k}) to (v1.DeleteOptions): unknown conversion"));
        assert_eq!(why("apps/v1", "Status"), unknown("Status"));
        assert_eq!(why("", "CreateOptions"), unknown("CreateOptions"));
        assert_eq!(why("meta.k8s.io/v1", "ListOptions"), unknown("ListOptions"));
        assert_eq!(why("meta.k8s.io/v1beta1", "Table"), unknown("Table"));
        assert_eq!(
            why("v1", "PatchOptions").as_deref(),
            Some(
                "no kind \"PatchOptions\" is registered for version \"v1\" in scheme \"pkg/apis/meta/internalversion/scheme/register.go:27\""
            )
        );
        assert_eq!(
            why("", "Pod").as_deref(),
            Some(
                "no kind \"Pod\" is registered for version \"meta.k8s.io/v1\" in scheme \"pkg/apis/meta/internalversion/scheme/register.go:27\""
            )
        );
    }

    #[test]
    fn mistyped_members_of_delete_options_are_named_as_go_names_them() {
        // The oracle's words.
        let refused = |body: &str| delete("", body).map_err(|e| e.1).err();
        assert_eq!(
            refused(r#"{"preconditions":{"uid":5}}"#).as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID"
            )
        );
        assert_eq!(
            refused(r#"{"preconditions":{"resourceVersion":true}}"#).as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field Preconditions.preconditions.resourceVersion of type string"
            )
        );
        assert_eq!(
            refused(r#"{"dryRun":[1]}"#).as_deref(),
            Some("json: cannot unmarshal number into Go struct field DeleteOptions.dryRun of type string")
        );
        assert_eq!(delete("", r#"{"preconditions":{"uid":null}}"#).map(|o| o.precondition_uid), Ok(None));
    }

    /// kube-apiserver 1.32's answers: of several mistyped members, the first sent is named.
    #[test]
    fn of_several_mistyped_members_the_first_sent_is_named() {
        let field = "json: cannot unmarshal";
        let cases = [
            (
                r#"{"gracePeriodSeconds":"x","propagationPolicy":5}"#,
                "string into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
            ),
            (
                r#"{"propagationPolicy":5,"gracePeriodSeconds":"x"}"#,
                "number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation",
            ),
            (
                r#"{"orphanDependents":"yes","dryRun":"All"}"#,
                "string into Go struct field DeleteOptions.orphanDependents of type bool",
            ),
            (
                r#"{"preconditions":{"uid":5},"gracePeriodSeconds":"x"}"#,
                "number into Go struct field Preconditions.preconditions.uid of type types.UID",
            ),
            (
                r#"{"gracePeriodSeconds":1.5,"propagationPolicy":5}"#,
                "number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
            ),
            (
                r#"{"dryRun":["All",5],"propagationPolicy":5}"#,
                "number into Go struct field DeleteOptions.dryRun of type string",
            ),
            (
                r#"{"gracePeriodSeconds":"x","gracePeriodSeconds":"y"}"#,
                "string into Go struct field DeleteOptions.gracePeriodSeconds of type int64",
            ),
            (
                r#"{"ignoreStoreReadErrorWithClusterBreakingPotential":"x","propagationPolicy":5}"#,
                "string into Go struct field DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential of type bool",
            ),
        ];
        for (body, want) in cases {
            assert_eq!(delete("", body).map_err(|(_, m)| m), Err(format!("{field} {want}")), "{body}");
        }
    }
}
