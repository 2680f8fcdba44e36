//! `spec.conversion`: the strategy and, for `Webhook`, the basics of the webhook config.
//!
//! kube reports these under the internal type's paths, `spec.conversion.webhookClientConfig`
//! and `spec.conversion.conversionReviewVersions`, not v1's `spec.conversion.webhook.*`.
//! The CA bundle is not parsed here (kube accepts an invalid one until the CRD is
//! established anyway): only the shape is checked. The webhook itself is called by
//! `resources::conversion_webhook`.

use crate::field::{FieldError, Path};
use crate::registry::defaults::{CONVERSION_NONE, CONVERSION_WEBHOOK, DEFAULT_WEBHOOK_PORT};
use crate::schema::webhook_client::{self, ServiceRef};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{CustomResourceConversion, ServiceReference};

/// Whether a prior object's review versions include a recognized one (or are empty); on
/// update kube only insists on a recognized version if the old object had one.
pub fn has_recognized_review_version_or_empty(conversion: Option<&CustomResourceConversion>) -> bool {
    let versions = review_versions(conversion);
    versions.is_empty() || webhook_client::has_recognized_version(versions)
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
            (Some(url), None) => errs.extend(webhook_client::validate_url(url, &config_path.child("url"))),
            (None, Some(service)) => errs.extend(validate_webhook_service(service, &config_path.child("service"))),
            _ => errs.push(FieldError::required(&config_path, "exactly one of url or service is required")),
        },
    }
    errs.extend(webhook_client::validate_review_versions(
        versions,
        require_recognized_review_version,
        "",
        &versions_path,
    ));
    errs
}

fn validate_webhook_service(service: &ServiceReference, path: &Path) -> Vec<FieldError> {
    let service = ServiceRef {
        namespace: &service.namespace,
        name: &service.name,
        path: service.path.as_deref(),
        port: service.port.unwrap_or(DEFAULT_WEBHOOK_PORT),
    };
    webhook_client::validate_service(service, path)
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
