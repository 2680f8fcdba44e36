//! How a webhook is reached and spoken to, as apiserver's `util/webhook` validates it for
//! every kind that names one: a CRD's conversion webhook and the admission webhooks of
//! `Validating`/`MutatingWebhookConfiguration`s. The one copy of `ValidateWebhookURL`,
//! `ValidateWebhookService` and the review-versions check, with kube's words.

use super::go_url;
use super::names::{is_dns1035_label, is_dns1123_subdomain};
use crate::field::{FieldError, Path};

/// Review versions this server understands (sorted, as kube lists them), for both
/// `ConversionReview` and `AdmissionReview`.
pub const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The port a service reference without one is dialled on.
pub const DEFAULT_SERVICE_PORT: i32 = 443;

/// A service a webhook is reached through, as the validators see it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServiceRef<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
    pub path: Option<&'a str>,
    pub port: i32,
}

/// apiserver's `ValidateWebhookURL` with https required: Go's `url.Parse` reads it; what it
/// refuses is a `Required` error with its words.
pub fn validate_url(url: &str, path: &Path) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let parsed = match go_url::parse_reference(url) {
        Ok(parsed) => parsed,
        Err(why) => return vec![FieldError::required(path, format!("url must be a valid URL: {why}{FORM}"))],
    };
    let mut errs = Vec::new();
    if parsed.scheme != "https" {
        errs.push(FieldError::invalid(
            path,
            parsed.scheme.as_str(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    let host = parsed.host();
    if host.is_empty() {
        errs.push(FieldError::invalid(path, host, format!("host must be specified{FORM}")));
    }
    if let Some(user) = user_info(url) {
        errs.push(FieldError::invalid(path, user, "user information is not permitted in the URL"));
    }
    let fragment = url.split_once('#').map_or("", |(_, f)| f);
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(path, fragment, "fragments are not permitted in the URL"));
    }
    if !parsed.raw_query.is_empty() {
        errs.push(FieldError::invalid(
            path,
            parsed.raw_query.as_str(),
            "query parameters are not permitted in the URL",
        ));
    }
    errs
}

/// The user information of a URL Go parsed with an authority (`scheme://user@host`).
fn user_info(url: &str) -> Option<&str> {
    let url = url.split_once('#').map_or(url, |(u, _)| u);
    let url = url.split_once('?').map_or(url, |(u, _)| u);
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split('/').next().unwrap_or_default();
    authority.rsplit_once('@').map(|(user, _)| user)
}

/// apiserver's `ValidateWebhookService` as both its callers (apiextensions and
/// admissionregistration) call it: with the service's name and namespace swapped
/// (`(fldPath, cc.Service.Name, cc.Service.Namespace, ...)` into `(fldPath, namespace, name,
/// ...)`), so an empty namespace is reported as a missing name and an empty name as a
/// missing namespace.
pub fn validate_service(service: ServiceRef, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if service.namespace.is_empty() {
        errs.push(FieldError::required(path.child("name"), "service name is required"));
    }
    if service.name.is_empty() {
        errs.push(FieldError::required(path.child("namespace"), "service namespace is required"));
    }
    if !(1..=65535).contains(&service.port) {
        errs.push(FieldError::invalid(
            path.child("port"),
            service.port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = service.path.filter(|p| !p.is_empty() && *p != "/") else {
        return errs;
    };
    let path_field = path.child("path");
    if url_path == "//" {
        errs.push(FieldError::invalid(&path_field, url_path, "segment[0] may not be empty"));
        return errs;
    }
    if !url_path.starts_with('/') {
        errs.push(FieldError::invalid(&path_field, url_path, "must start with a '/'"));
    }
    let trimmed = url_path.get(1..).unwrap_or_default();
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    for (i, step) in trimmed.split('/').enumerate() {
        if step.is_empty() {
            errs.push(FieldError::invalid(&path_field, url_path, format!("segment[{i}] may not be empty")));
            continue;
        }
        for problem in is_dns1123_subdomain(step) {
            errs.push(FieldError::invalid(&path_field, url_path, format!("segment[{i}]: {problem}")));
        }
    }
    errs
}

/// The review versions a webhook is sent (`conversionReviewVersions`,
/// `admissionReviewVersions`): none is `Required` with `required_detail`, each is a unique
/// DNS-1035 label, and when `require_recognized` one must be a version this server speaks.
pub fn validate_review_versions(
    versions: &[String],
    require_recognized: bool,
    required_detail: &str,
    path: &Path,
) -> Vec<FieldError> {
    if versions.is_empty() {
        return vec![FieldError::required(path, required_detail)];
    }
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (i, v) in versions.iter().enumerate() {
        if seen.contains(&v.as_str()) {
            errs.push(FieldError::invalid(path.index(i), v.as_str(), "duplicate version"));
            continue;
        }
        seen.push(v);
        for problem in is_dns1035_label(v) {
            errs.push(FieldError::invalid(path.index(i), v.as_str(), problem));
        }
    }
    if require_recognized && !has_recognized_version(versions) {
        let detail = format!("must include at least one of {}", ACCEPTED_REVIEW_VERSIONS.join(", "));
        errs.push(FieldError::invalid_shown(path, &go_strings("string", versions), &detail));
    }
    errs
}

/// The first of a webhook's review versions this server speaks: the one it is sent.
pub fn first_recognized(versions: &[String]) -> Option<&'static str> {
    versions.iter().find_map(|v| ACCEPTED_REVIEW_VERSIONS.into_iter().find(|known| known == v))
}

/// Whether `versions` name one this server speaks.
pub fn has_recognized_version(versions: &[String]) -> bool {
    versions.iter().any(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str()))
}

/// A Go string slice as `%#v` prints it: `[]string{"a", "b"}` (`type` names the element).
pub fn go_strings<S: AsRef<str>>(ty: &str, values: &[S]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| crate::field::go_quote(v.as_ref())).collect();
    format!("[]{ty}{{{}}}", quoted.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_is_sent_the_first_review_version_this_server_speaks() {
        assert_eq!(first_recognized(&["v2".into(), "v1beta1".into(), "v1".into()]), Some("v1beta1"));
        assert_eq!(first_recognized(&["v2".into()]), None);
    }

    fn url_errors(url: &str) -> Vec<String> {
        validate_url(url, &Path::root("url")).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn urls_are_read_as_go_reads_them() {
        assert!(url_errors("HTTPS://hook.example.com/x").is_empty(), "Go lower-cases the scheme");
        assert_eq!(
            url_errors("https://[::1"),
            [
                "url: Required value: url must be a valid URL: parse \"https://[::1\": missing ']' in host; desired format: https://host[/path]"
            ]
        );
        assert_eq!(
            url_errors("https://u:p@h/?q#f"),
            [
                "url: Invalid value: \"u:p\": user information is not permitted in the URL",
                "url: Invalid value: \"f\": fragments are not permitted in the URL",
                "url: Invalid value: \"q\": query parameters are not permitted in the URL",
            ]
        );
    }
}
