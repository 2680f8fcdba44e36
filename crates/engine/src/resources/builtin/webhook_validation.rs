//! kube's validation of admission webhook configurations
//! (`pkg/apis/admissionregistration/validation`: `ValidateValidatingWebhookConfiguration`,
//! `ValidateMutatingWebhookConfiguration` and their updates), on the defaulted object, with
//! kube's paths and words. Pure: a function of the new object, the old one on update.

use crate::field::{FieldError, Path};
use crate::schema::celcheck::match_condition_error;
use crate::schema::label_selector;
use crate::schema::names::{is_dns1123_subdomain, is_qualified_name, name_is_dns_subdomain};
use crate::schema::object_meta::validate_object_meta;
use crate::schema::webhook_client::{self, ACCEPTED_REVIEW_VERSIONS, ServiceRef, go_strings};
use serde_json::{Map, Value};

const FAILURE_POLICIES: [&str; 2] = ["Fail", "Ignore"];
const MATCH_POLICIES: [&str; 2] = ["Equivalent", "Exact"];
/// What v1 accepts of a new webhook's side effects; an update whose old webhooks all had
/// one of these is held to them too, else to every class kube knows.
const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];
const OPERATIONS: [&str; 5] = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const SCOPES: [&str; 3] = ["*", "Cluster", "Namespaced"];
const REINVOCATION_POLICIES: [&str; 2] = ["IfNeeded", "Never"];
const MAX_MATCH_CONDITIONS: usize = 64;

/// Which of the two kinds is validated: a mutating webhook has a reinvocation policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hooks {
    Validating,
    Mutating,
}

impl Hooks {
    /// The kind's resource.
    pub fn plural(self) -> &'static str {
        match self {
            Hooks::Validating => "validatingwebhookconfigurations",
            Hooks::Mutating => "mutatingwebhookconfigurations",
        }
    }

    /// The kind's name.
    pub fn kind(self) -> &'static str {
        match self {
            Hooks::Validating => "ValidatingWebhookConfiguration",
            Hooks::Mutating => "MutatingWebhookConfiguration",
        }
    }
}

/// kube's `validationOptions`: what an update relaxes because the stored object already
/// broke the rule.
#[derive(Debug, Clone, Copy)]
struct Options {
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    allow_invalid_label_value: bool,
}

const CREATE: Options = Options {
    ignore_match_conditions: false,
    require_no_side_effects: true,
    require_recognized_review_version: true,
    require_unique_names: true,
    allow_invalid_label_value: false,
};

fn webhooks(obj: &Value) -> &[Value] {
    obj.get("webhooks").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    let items = v.get(key).and_then(Value::as_array).into_iter().flatten();
    items.map(|s| s.as_str().unwrap_or_default().to_string()).collect()
}

/// A set pointer: present and not null.
fn set<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// Every problem with a new configuration.
pub fn validate_create(obj: &Value, hooks: Hooks) -> Vec<FieldError> {
    validate(obj, hooks, CREATE)
}

/// Every problem with an update, past the metadata update rules: the new object's, under
/// the rules the old one already kept.
pub fn validate_update(new: &Value, old: &Value, hooks: Hooks) -> Vec<FieldError> {
    let (new_hooks, old_hooks) = (webhooks(new), webhooks(old));
    let unchanged_conditions = new_hooks.len() == old_hooks.len()
        && new_hooks.iter().zip(old_hooks).all(|(n, o)| n.get("matchConditions") == o.get("matchConditions"));
    let mut names = Vec::new();
    let opts = Options {
        ignore_match_conditions: unchanged_conditions,
        require_no_side_effects: old_hooks
            .iter()
            .all(|h| text(h, "sideEffects").is_some_and(|s| NO_SIDE_EFFECTS.contains(&s))),
        require_recognized_review_version: old_hooks.iter().all(|h| {
            let versions = strings(h, "admissionReviewVersions");
            versions.is_empty() || webhook_client::has_recognized_version(&versions)
        }),
        require_unique_names: old_hooks.iter().all(|h| {
            let name = text(h, "name").unwrap_or_default();
            let fresh = !names.contains(&name);
            names.push(name);
            fresh
        }),
        allow_invalid_label_value: old_hooks.iter().any(|h| {
            ["namespaceSelector", "objectSelector"]
                .iter()
                .filter_map(|s| set(h, s))
                .any(|sel| !label_selector::validate(sel, false, &Path::root("")).is_empty())
        }),
    };
    validate(new, hooks, opts)
}

fn validate(obj: &Value, hooks: Hooks, opts: Options) -> Vec<FieldError> {
    let empty = Value::Object(Map::new());
    let meta = obj.get("metadata").unwrap_or(&empty);
    let mut errs = validate_object_meta(meta, false, name_is_dns_subdomain, &Path::root("metadata"));
    let mut names: Vec<&str> = Vec::new();
    for (i, hook) in webhooks(obj).iter().enumerate() {
        let path = Path::root("webhooks").index(i);
        errs.extend(webhook_errors(hook, hooks, opts, &path));
        let versions = strings(hook, "admissionReviewVersions");
        let detail = format!("must specify one of {}", ACCEPTED_REVIEW_VERSIONS.join(", "));
        errs.extend(webhook_client::validate_review_versions(
            &versions,
            opts.require_recognized_review_version,
            &detail,
            &path.child("admissionReviewVersions"),
        ));
        let name = text(hook, "name").unwrap_or_default();
        if opts.require_unique_names && !name.is_empty() {
            if names.contains(&name) {
                errs.push(FieldError::duplicate(path.child("name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn webhook_errors(hook: &Value, hooks: Hooks, opts: Options, path: &Path) -> Vec<FieldError> {
    let mut errs = fully_qualified_name_errors(text(hook, "name").unwrap_or_default(), &path.child("name"));
    let rules = hook.get("rules").and_then(Value::as_array).into_iter().flatten();
    for (i, rule) in rules.enumerate() {
        errs.extend(rule_errors(rule, &path.child("rules").index(i)));
    }
    errs.extend(one_of(hook, "failurePolicy", &FAILURE_POLICIES, path));
    errs.extend(one_of(hook, "matchPolicy", &MATCH_POLICIES, path));
    let allowed: &[&str] = if opts.require_no_side_effects { &NO_SIDE_EFFECTS } else { &SIDE_EFFECTS };
    match set(hook, "sideEffects") {
        None => errs.push(FieldError::required(
            path.child("sideEffects"),
            format!("must specify one of {}", allowed.join(", ")),
        )),
        Some(_) => errs.extend(one_of(hook, "sideEffects", allowed, path)),
    }
    if let Some(t) = set(hook, "timeoutSeconds").and_then(Value::as_i64)
        && !(1..=30).contains(&t)
    {
        errs.push(FieldError::invalid(
            path.child("timeoutSeconds"),
            t,
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        if let Some(s) = set(hook, selector) {
            errs.extend(label_selector::validate(s, opts.allow_invalid_label_value, &path.child(selector)));
        }
    }
    if hooks == Hooks::Mutating {
        errs.extend(one_of(hook, "reinvocationPolicy", &REINVOCATION_POLICIES, path));
    }
    errs.extend(client_config_errors(hook.get("clientConfig"), &path.child("clientConfig")));
    if !opts.ignore_match_conditions {
        errs.extend(match_conditions_errors(hook, &path.child("matchConditions")));
    }
    errs
}

/// `IsFullyQualifiedName`: a DNS subdomain of at least three segments.
fn fully_qualified_name_errors(name: &str, path: &Path) -> Vec<FieldError> {
    if name.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let problems = is_dns1123_subdomain(name);
    if !problems.is_empty() {
        return vec![FieldError::invalid(path, name, problems.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![FieldError::invalid(
            path,
            name,
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// A set enum field whose value is not in `supported`.
fn one_of(hook: &Value, field: &str, supported: &[&str], path: &Path) -> Option<FieldError> {
    let value = text(hook, field)?;
    (!supported.contains(&value)).then(|| FieldError::not_supported(path.child(field), value, supported))
}

/// `validateRuleWithOperations`, with its inlined `validateRule` (subresources allowed).
fn rule_errors(rule: &Value, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let operations = strings(rule, "operations");
    let ops_path = path.child("operations");
    if operations.is_empty() {
        errs.push(FieldError::required(&ops_path, ""));
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        errs.push(FieldError::invalid_shown(
            &ops_path,
            &go_strings("admissionregistration.OperationType", &operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in operations.iter().enumerate() {
        if !OPERATIONS.contains(&op.as_str()) {
            errs.push(FieldError::not_supported(ops_path.index(i), op.as_str(), &OPERATIONS));
        }
    }
    for (field, what) in [("apiGroups", "API groups"), ("apiVersions", "API versions")] {
        let values = strings(rule, field);
        if values.is_empty() {
            errs.push(FieldError::required(path.child(field), ""));
        }
        if values.len() > 1 && values.iter().any(|v| v == "*") {
            let detail = format!("if '*' is present, must not specify other {what}");
            errs.push(FieldError::invalid_shown(path.child(field), &go_strings("string", &values), &detail));
        }
        if field == "apiVersions" {
            let empty = values.iter().enumerate().filter(|(_, v)| v.is_empty());
            errs.extend(empty.map(|(i, _)| FieldError::required(path.child(field).index(i), "")));
        }
    }
    errs.extend(resources_errors(&strings(rule, "resources"), &path.child("resources")));
    if let Some(scope) = text(rule, "scope")
        && !SCOPES.contains(&scope)
    {
        errs.push(FieldError::not_supported(path.child("scope"), scope, &SCOPES));
    }
    errs
}

/// `validateResources`: `*`, `*/*`, `x/*` and `*/x` may not overlap what they cover.
fn resources_errors(resources: &[String], path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(FieldError::required(path, ""));
    }
    let (mut with_any_sub, mut sub_of_any): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    let (mut double, mut single, mut without_sub) = (false, false, false);
    for (i, res_sub) in resources.iter().enumerate() {
        if res_sub.is_empty() {
            errs.push(FieldError::required(path.index(i), ""));
            continue;
        }
        double |= res_sub == "*/*";
        single |= res_sub == "*";
        let Some((res, sub)) = res_sub.split_once('/') else {
            // kube overwrites this with every resource without a subresource: the last wins.
            without_sub = res_sub != "*";
            continue;
        };
        if with_any_sub.contains(&res) {
            let detail = format!("if '{res}/*' is present, must not specify {res_sub}");
            errs.push(FieldError::invalid(path.index(i), res_sub.as_str(), detail));
        }
        if sub_of_any.contains(&sub) {
            let detail = format!("if '*/{sub}' is present, must not specify {res_sub}");
            errs.push(FieldError::invalid(path.index(i), res_sub.as_str(), detail));
        }
        if sub == "*" {
            with_any_sub.push(res);
        }
        if res == "*" {
            sub_of_any.push(sub);
        }
    }
    let shown = go_strings("string", resources);
    if resources.len() > 1 && double {
        errs.push(FieldError::invalid_shown(path, &shown, "if '*/*' is present, must not specify other resources"));
    }
    if single && without_sub {
        let detail = "if '*' is present, must not specify other resources without subresources";
        errs.push(FieldError::invalid_shown(path, &shown, detail));
    }
    errs
}

/// Exactly one of `url` and `service`, each valid.
fn client_config_errors(config: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let url = config.and_then(|c| set(c, "url"));
    let service = config.and_then(|c| set(c, "service"));
    match (url, service) {
        (Some(url), None) => webhook_client::validate_url(url.as_str().unwrap_or_default(), &path.child("url")),
        (None, Some(s)) => {
            let service = ServiceRef {
                namespace: text(s, "namespace").unwrap_or_default(),
                name: text(s, "name").unwrap_or_default(),
                path: text(s, "path"),
                port: s.get("port").and_then(Value::as_i64).and_then(|p| i32::try_from(p).ok()).unwrap_or(0),
            };
            webhook_client::validate_service(service, &path.child("service"))
        }
        _ => vec![FieldError::required(path, "exactly one of url or service is required")],
    }
}

/// `validateMatchConditions`: at most 64, each named (a unique qualified name) and a CEL
/// expression that compiles to a bool.
fn match_conditions_errors(hook: &Value, path: &Path) -> Vec<FieldError> {
    let conditions = hook.get("matchConditions").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut errs = Vec::new();
    if conditions.len() > MAX_MATCH_CONDITIONS {
        errs.push(FieldError::too_many(path, conditions.len(), MAX_MATCH_CONDITIONS));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, condition) in conditions.iter().enumerate() {
        let at = path.index(i);
        let expression = text(condition, "expression").unwrap_or_default().trim();
        if expression.is_empty() {
            errs.push(FieldError::required(at.child("expression"), ""));
        } else if let Some(why) = match_condition_error(expression) {
            errs.push(FieldError::invalid(at.child("expression"), expression, why));
        }
        let name = text(condition, "name").unwrap_or_default();
        if name.is_empty() {
            errs.push(FieldError::required(at.child("name"), ""));
        } else {
            errs.extend(is_qualified_name(name).into_iter().map(|m| FieldError::invalid(at.child("name"), name, m)));
            if names.contains(&name) {
                errs.push(FieldError::duplicate(at.child("name"), name));
            } else {
                names.push(name);
            }
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hook(extra: Value) -> Value {
        let mut h = json!({
            "name": "a.example.com",
            "clientConfig": {"url": "https://127.0.0.1:1/x"},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        });
        if let (Some(h), Some(extra)) = (h.as_object_mut(), extra.as_object()) {
            h.extend(extra.clone());
        }
        h
    }

    fn errors(hooks: Vec<Value>) -> Vec<String> {
        let obj = json!({"metadata": {"name": "c"}, "webhooks": hooks});
        validate_create(&obj, Hooks::Validating).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_plain_webhook_is_valid() {
        assert_eq!(errors(vec![hook(json!({}))]), Vec::<String>::new());
    }

    #[test]
    fn names_are_fully_qualified_and_unique() {
        assert_eq!(
            errors(vec![hook(json!({"name": "a.b"})), hook(json!({})), hook(json!({}))]),
            [
                "webhooks[0].name: Invalid value: \"a.b\": should be a domain with at least three segments separated by dots",
                "webhooks[2].name: Duplicate value: \"a.example.com\"",
            ]
        );
    }

    #[test]
    fn rules_and_policies_are_kubes() {
        let rule = json!({"operations": ["*", "PATCH"], "apiGroups": [], "apiVersions": ["v1", ""], "resources": ["*", "pods"], "scope": "All"});
        assert_eq!(
            errors(vec![hook(json!({"rules": [rule], "sideEffects": "Some", "timeoutSeconds": 31}))]),
            [
                "webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{\"*\", \"PATCH\"}: if '*' is present, must not specify other operations",
                "webhooks[0].rules[0].operations[1]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
                "webhooks[0].rules[0].apiGroups: Required value",
                "webhooks[0].rules[0].apiVersions[1]: Required value",
                "webhooks[0].rules[0].resources: Invalid value: []string{\"*\", \"pods\"}: if '*' is present, must not specify other resources without subresources",
                "webhooks[0].rules[0].scope: Unsupported value: \"All\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
                "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
            ]
        );
    }

    #[test]
    fn match_conditions_compile_to_a_bool() {
        let conditions = json!([
            {"name": "ok", "expression": "request.operation == 'CREATE'"},
            {"name": "str", "expression": "'x'"},
            {"name": "params", "expression": "params.x == 1"},
            {"name": "ok", "expression": "true"},
            {"name": "typed", "expression": "request.namespace"},
            {"name": "authz", "expression": "authorizer.requestResource.check('get').allowed() && request.dryRun"},
        ]);
        assert_eq!(
            errors(vec![hook(json!({"matchConditions": conditions}))]),
            [
                "webhooks[0].matchConditions[1].expression: Invalid value: \"'x'\": must evaluate to bool but got string",
                "webhooks[0].matchConditions[2].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
                "webhooks[0].matchConditions[3].name: Duplicate value: \"ok\"",
                "webhooks[0].matchConditions[4].expression: Invalid value: \"request.namespace\": must evaluate to bool but got string",
            ]
        );
    }

    #[test]
    fn an_update_keeps_what_the_old_object_had() {
        let old = json!({"metadata": {"name": "c"}, "webhooks": [hook(json!({"sideEffects": "Some"}))]});
        let new = json!({"metadata": {"name": "c"}, "webhooks": [hook(json!({"sideEffects": "Unknown"}))]});
        assert!(validate_update(&new, &old, Hooks::Validating).is_empty());
        assert_eq!(validate_update(&new, &new, Hooks::Validating).len(), 0);
        let strict = json!({"metadata": {"name": "c"}, "webhooks": [hook(json!({}))]});
        assert_eq!(validate_update(&new, &strict, Hooks::Validating).len(), 1);
    }
}
