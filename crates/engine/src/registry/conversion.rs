//! `spec.conversion`: the strategy and, for `Webhook`, the basics of the webhook config.
//!
//! kube reports these under the internal type's paths, `spec.conversion.webhookClientConfig`
//! and `spec.conversion.conversionReviewVersions`, not v1's `spec.conversion.webhook.*`.
//! The CA bundle is not parsed here (kube accepts an invalid one until the CRD is
//! established anyway): only the shape is checked. The webhook itself is called by
//! `resources::conversion_webhook`.

use crate::field::{FieldError, Path};
use crate::registry::defaults::{CONVERSION_NONE, CONVERSION_WEBHOOK, DEFAULT_WEBHOOK_PORT};
use crate::schema::names::{is_dns1035_label, is_dns1123_subdomain};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{CustomResourceConversion, ServiceReference};

/// ConversionReview versions this server understands (sorted, as kube lists them).
const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// Whether a prior object's review versions include a recognized one (or are empty); on
/// update kube only insists on a recognized version if the old object had one.
pub fn has_recognized_review_version_or_empty(conversion: Option<&CustomResourceConversion>) -> bool {
    let versions = review_versions(conversion);
    versions.is_empty() || versions.iter().any(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str()))
}

fn review_versions(conversion: Option<&CustomResourceConversion>) -> &[String] {
    conversion.and_then(|c| c.webhook.as_ref()).map(|w| w.conversion_review_versions.as_slice()).unwrap_or_default()
}

/// Validates `spec.conversion` (`path` is `spec.conversion`).
pub fn validate_conversion(
    conversion: Option<&CustomResourceConversion>,
    require_recognized_review_version: bool,
    path: &Path,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(conversion) = conversion else {
        return errs;
    };
    let strategy = conversion.strategy.as_str();
    if strategy.is_empty() {
        errs.push(FieldError::required(path.child("strategy"), ""));
    } else if strategy != CONVERSION_NONE && strategy != CONVERSION_WEBHOOK {
        errs.push(FieldError::not_supported(path.child("strategy"), strategy, &[CONVERSION_NONE, CONVERSION_WEBHOOK]));
    }
    let client_config = conversion.webhook.as_ref().and_then(|w| w.client_config.as_ref());
    let config_path = path.child("webhookClientConfig");
    let versions = review_versions(Some(conversion));
    let versions_path = path.child("conversionReviewVersions");
    if strategy != CONVERSION_WEBHOOK {
        if client_config.is_some() {
            errs.push(FieldError::forbidden(&config_path, "should not be set when strategy is not set to Webhook"));
        }
        if !versions.is_empty() {
            errs.push(FieldError::forbidden(&versions_path, "should not be set when strategy is not set to Webhook"));
        }
        return errs;
    }
    match client_config {
        None => errs.push(FieldError::required(&config_path, "required when strategy is set to Webhook")),
        Some(cc) => match (&cc.url, &cc.service) {
            (Some(url), None) => errs.extend(validate_webhook_url(url, &config_path.child("url"))),
            (None, Some(service)) => errs.extend(validate_webhook_service(service, &config_path.child("service"))),
            _ => errs.push(FieldError::required(&config_path, "exactly one of url or service is required")),
        },
    }
    errs.extend(validate_review_versions(versions, require_recognized_review_version, &versions_path));
    errs
}

fn validate_review_versions(versions: &[String], require_recognized: bool, path: &Path) -> Vec<FieldError> {
    if versions.is_empty() {
        return vec![FieldError::required(path, "")];
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
    if require_recognized && !versions.iter().any(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str())) {
        let detail = format!("must include at least one of {}", ACCEPTED_REVIEW_VERSIONS.join(", "));
        errs.push(FieldError::invalid_shown(path, &super::gostring::strings(Some(versions)), &detail));
    }
    errs
}

/// apiserver's `ValidateWebhookURL` with https required; the URL is split by hand into the
/// parts kube looks at (scheme, user info, host, query, fragment).
fn validate_webhook_url(url: &str, path: &Path) -> Vec<FieldError> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut errs = Vec::new();
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) if !scheme.is_empty() && !scheme.contains('/') => (scheme, rest),
        _ => ("", url),
    };
    if scheme != "https" {
        errs.push(FieldError::invalid(path, scheme, format!("'https' is the only allowed URL scheme{FORM}")));
    }
    let (rest, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = if scheme.is_empty() { "" } else { rest.split('/').next().unwrap_or_default() };
    let (user, host) = authority.rsplit_once('@').map_or((None, authority), |(u, h)| (Some(u), h));
    if host.is_empty() {
        errs.push(FieldError::invalid(path, host, format!("host must be specified{FORM}")));
    }
    if let Some(user) = user {
        errs.push(FieldError::invalid(path, user, "user information is not permitted in the URL"));
    }
    if !fragment.is_empty() {
        errs.push(FieldError::invalid(path, fragment, "fragments are not permitted in the URL"));
    }
    if !query.is_empty() {
        errs.push(FieldError::invalid(path, query, "query parameters are not permitted in the URL"));
    }
    errs
}

/// apiserver's `ValidateWebhookService`, called as apiextensions calls it: with the service's
/// name and namespace swapped (`(fldPath, cc.Service.Name, cc.Service.Namespace, ...)` into
/// `(fldPath, namespace, name, ...)`), so an empty namespace is reported as a missing name
/// and an empty name as a missing namespace.
fn validate_webhook_service(service: &ServiceReference, path: &Path) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if service.namespace.is_empty() {
        errs.push(FieldError::required(path.child("name"), "service name is required"));
    }
    if service.name.is_empty() {
        errs.push(FieldError::required(path.child("namespace"), "service namespace is required"));
    }
    let port = service.port.unwrap_or(DEFAULT_WEBHOOK_PORT);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid(
            path.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = service.path.as_deref().filter(|p| !p.is_empty() && *p != "/") else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::fixtures::CrdBuilder;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{WebhookClientConfig, WebhookConversion};

    fn webhook(url: Option<&str>, service: Option<ServiceReference>, versions: &[&str]) -> CustomResourceConversion {
        CustomResourceConversion {
            strategy: "Webhook".into(),
            webhook: Some(WebhookConversion {
                client_config: Some(WebhookClientConfig { url: url.map(Into::into), service, ..Default::default() }),
                conversion_review_versions: versions.iter().map(|v| v.to_string()).collect(),
            }),
        }
    }

    fn check(conversion: &CustomResourceConversion) -> Vec<String> {
        validate_conversion(Some(conversion), true, &Path::root("spec").child("conversion"))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn strategies() {
        let none = CustomResourceConversion { strategy: "None".into(), webhook: None };
        assert_eq!(check(&none), Vec::<String>::new());
        let empty = CustomResourceConversion { strategy: String::new(), webhook: None };
        assert_eq!(check(&empty), ["spec.conversion.strategy: Required value"]);
        let other = CustomResourceConversion { strategy: "Magic".into(), webhook: None };
        assert_eq!(
            check(&other),
            ["spec.conversion.strategy: Unsupported value: \"Magic\": supported values: \"None\", \"Webhook\""]
        );
        let mut none_with_webhook = webhook(Some("https://conv.example.com"), None, &["v1"]);
        none_with_webhook.strategy = "None".into();
        assert_eq!(
            check(&none_with_webhook),
            [
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
            ]
        );
    }

    #[test]
    fn webhook_config_basics() {
        let crd = CrdBuilder::new("widgets", "stable.example.com").webhook_service("conv", "default").build();
        assert_eq!(check(crd.spec.conversion.as_ref().expect("conversion")), Vec::<String>::new());
        let bare = CustomResourceConversion { strategy: "Webhook".into(), webhook: None };
        assert_eq!(
            check(&bare),
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value",
            ]
        );
        let both = webhook(Some("https://a.example.com"), Some(ServiceReference::default()), &["v1"]);
        assert_eq!(
            check(&both),
            ["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]
        );
        let service = ServiceReference { port: Some(0), path: Some("/convert/Now".into()), ..Default::default() };
        let segment = format!(
            "spec.conversion.webhookClientConfig.service.path: Invalid value: \"/convert/Now\": segment[1]: {}",
            crate::schema::names::DNS1123_SUBDOMAIN_MSG
        );
        assert_eq!(
            check(&webhook(None, Some(service), &["v1", "v1", "v3"])),
            [
                "spec.conversion.webhookClientConfig.service.name: Required value: service name is required",
                "spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required",
                "spec.conversion.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                segment.as_str(),
                "spec.conversion.conversionReviewVersions[1]: Invalid value: \"v1\": duplicate version",
            ]
        );
        assert_eq!(
            check(&webhook(Some("http://u@conv.example.com/x?a=b#f"), None, &["v3"])),
            [
                "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"u\": user information is not permitted in the URL",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"a=b\": query parameters are not permitted in the URL",
                "spec.conversion.conversionReviewVersions: Invalid value: []string{\"v3\"}: must include at least one of v1, v1beta1",
            ]
        );
        assert_eq!(
            check(&webhook(Some("conv/x"), None, &["v1"])),
            [
                "spec.conversion.webhookClientConfig.url: Invalid value: \"\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"\": host must be specified; desired format: https://host[/path]",
            ]
        );
    }

    #[test]
    fn recognized_review_version_ratchet() {
        assert!(has_recognized_review_version_or_empty(None));
        assert!(has_recognized_review_version_or_empty(Some(&webhook(None, None, &["v3", "v1beta1"]))));
        assert!(!has_recognized_review_version_or_empty(Some(&webhook(None, None, &["v3"]))));
    }
}
