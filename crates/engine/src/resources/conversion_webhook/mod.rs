//! A CRD's conversion webhook (`spec.conversion.strategy: Webhook`), called as
//! kube-apiserver calls it: an HTTPS POST of a `ConversionReview` to the configured `url`
//! (with `?timeout=30s`), trusting the CRD's `caBundle` (or the system's roots without
//! one), whenever an object must change version — read at another version than stored,
//! or written at another than the storage version. A failure is kube's bare 500,
//! `conversion webhook for <group/version, Kind=Kind> failed: ...`.
//!
//! The engine's conversions are synchronous (inside its codec), so the caller waits for
//! the call ([`webhook_call::call_blocking`]). A webhook named by a `service` cannot be
//! reached: the engine runs no Services, and answers as kube does for a Service that does
//! not exist.

mod review;

use super::webhook_call::{self, Deadline, HttpsClient, with_timeout};
use crate::schema::webhook_client;
use crate::status::ApiError;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::Value;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// kube's timeout of a conversion webhook call (not configurable for conversions).
const TIMEOUT: Duration = Duration::from_secs(30);

/// Where and how a CRD's conversions are sent.
pub struct ConversionWebhook {
    target: Target,
    /// `v1` or `v1beta1`: the first of the CRD's `conversionReviewVersions` kube speaks.
    review_version: &'static str,
}

enum Target {
    /// `url?timeout=30s`, and the client trusting the CRD's CA bundle: made at the first
    /// conversion, not when the CRD is served (a CRD's every version holds a webhook, and
    /// without a bundle the system's roots are read from disk).
    Url { url: String, ca_bundle: Option<Vec<u8>>, client: OnceLock<Result<Box<HttpsClient>, String>> },
    /// Why nothing can be called (a Service reference).
    Unreachable(String),
}

impl std::fmt::Debug for ConversionWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let target = match &self.target {
            Target::Url { url, .. } => url.as_str(),
            Target::Unreachable(why) => why.as_str(),
        };
        f.debug_struct("ConversionWebhook").field("target", &target).finish_non_exhaustive()
    }
}

impl ConversionWebhook {
    /// The webhook `crd` converts through, if its strategy is `Webhook`.
    pub fn of(crd: &CustomResourceDefinition) -> Option<Arc<ConversionWebhook>> {
        let conversion = crd.spec.conversion.as_ref().filter(|c| c.strategy == "Webhook")?;
        let webhook = conversion.webhook.as_ref()?;
        let review_version = webhook_client::first_recognized(&webhook.conversion_review_versions).unwrap_or("v1");
        let config = webhook.client_config.as_ref()?;
        let target = match (&config.url, &config.service) {
            (Some(url), _) => Target::Url {
                url: with_timeout(url, TIMEOUT),
                ca_bundle: config.ca_bundle.as_ref().map(|b| b.0.clone()),
                client: OnceLock::new(),
            },
            // The engine runs no Services: kube's resolver finds none.
            (None, Some(service)) => {
                let port = service.port.unwrap_or(443).into();
                let path = service.path.as_deref().unwrap_or_default();
                Target::Unreachable(webhook_call::unreachable_service(
                    &service.namespace,
                    &service.name,
                    path,
                    port,
                    TIMEOUT,
                ))
            }
            (None, None) => return None,
        };
        Some(Arc::new(ConversionWebhook { target, review_version }))
    }

    /// `obj` (of `gvk`, `group/version, Kind=Kind`) converted to `desired` by the webhook,
    /// with kube's 500 when it cannot be.
    pub fn convert(&self, obj: &Value, desired: &str) -> Result<Value, ApiError> {
        let gvk = gvk_of(obj);
        let refused = |r: review::Refusal| ApiError::new(500, "", r.message(&gvk));
        let (url, client) = match &self.target {
            Target::Url { url, ca_bundle, client } => {
                match client.get_or_init(|| webhook_call::client(ca_bundle.as_deref()).map(Box::new)) {
                    Ok(client) => (url.clone(), HttpsClient::clone(client)),
                    Err(why) => return Err(refused(review::Refusal::Failed(why.clone()))),
                }
            }
            Target::Unreachable(why) => return Err(refused(review::Refusal::Failed(why.clone()))),
        };
        let uid = crate::meta::new_uid();
        let body = review::request(self.review_version, &uid, desired, obj);
        let answer = webhook_call::call_blocking(client, url, body, Deadline::Client(TIMEOUT))
            .map_err(|why| refused(review::Refusal::Failed(why)))?;
        review::converted(&uid, desired, obj, &answer).map_err(refused)
    }
}

/// Go's `GroupVersionKind.String()` of an object.
fn gvk_of(obj: &Value) -> String {
    let text = |key: &str| obj.get(key).and_then(Value::as_str).unwrap_or_default();
    crate::resources::managed_fields::fieldmanager::gvk_string(text("apiVersion"), text("kind"))
}
