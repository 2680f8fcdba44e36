//! The reviews: authorization.k8s.io/v1 SelfSubjectAccessReviews and
//! SelfSubjectRulesReviews, authentication.k8s.io/v1 SelfSubjectReviews and TokenReviews;
//! create-only, never stored. The engine has one user (whoever holds `serve`'s token, or the
//! local process), who may do everything, so every review answers "allowed" — which is what
//! `kubectl auth can-i` and tools that check permissions first (k9s) need — `kubectl auth
//! whoami` is told that user, and a TokenReview names it for the tokens `serve` accepts
//! (kube-rbac-proxy and webhook authenticators ask so). Requests are decoded into the
//! reviews' Go types and validated as kube-apiserver does; they come here with the
//! managedFields kube's create handler computes, which the answers that are the request
//! object kept (access and token reviews) keep.

use super::review_structs::{SELF_SUBJECT_ACCESS_REVIEW, SELF_SUBJECT_REVIEW, SELF_SUBJECT_RULES_REVIEW, TOKEN_REVIEW};
use super::types::GoStruct;
use crate::authn::{TokenVerdict, Tokens};
use crate::field::FieldError;
use crate::resources::managed_fields::schema::Schema;
use crate::resources::{ResourceInfo, Strategy, Undecodable};
use crate::status::ApiError;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const AUTHORIZATION: &str = "authorization.k8s.io";
const AUTHENTICATION: &str = "authentication.k8s.io";

/// The engine's one user, as `serve`'s kubeconfig names it: a member of `system:masters`
/// (cluster-admin's binding), and authenticated.
pub(crate) const USERNAME: &str = "kubectl-crd";
pub(crate) const GROUPS: [&str; 2] = ["system:masters", "system:authenticated"];

/// Which review a [`ReviewStrategy`] answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// SelfSubjectAccessReview: may I do this?
    Access,
    /// SelfSubjectRulesReview: what may I do in this namespace?
    Rules,
    /// SelfSubjectReview: who am I?
    Identity,
    /// TokenReview: whom does this token name?
    Token,
}

pub struct ReviewStrategy {
    review: Review,
    info: ResourceInfo,
    go: &'static GoStruct,
    /// The field types managedFields derive from the Go struct.
    types: Arc<Schema>,
    /// The tokens a TokenReview finds the engine's user behind.
    tokens: Arc<Tokens>,
}

impl ReviewStrategy {
    /// A review answered for the engine's user, whom no token names.
    pub fn new(review: Review) -> Self {
        Self::with_tokens(review, Arc::default())
    }

    /// A review whose tokens (a TokenReview's) are those of `tokens`, now and later.
    pub fn with_tokens(review: Review, tokens: Arc<Tokens>) -> Self {
        let (group, plural, kind, go) = match review {
            Review::Access => {
                (AUTHORIZATION, "selfsubjectaccessreviews", "SelfSubjectAccessReview", &SELF_SUBJECT_ACCESS_REVIEW)
            }
            Review::Rules => {
                (AUTHORIZATION, "selfsubjectrulesreviews", "SelfSubjectRulesReview", &SELF_SUBJECT_RULES_REVIEW)
            }
            Review::Identity => (AUTHENTICATION, "selfsubjectreviews", "SelfSubjectReview", &SELF_SUBJECT_REVIEW),
            Review::Token => (AUTHENTICATION, "tokenreviews", "TokenReview", &TOKEN_REVIEW),
        };
        let info = super::info(group, plural, kind, &[], false);
        ReviewStrategy { review, info, go, types: Arc::new(go.schema()), tokens }
    }

    /// kube's review REST names the kind of the object it decoded, whose internal form has
    /// no `kind`: its 422 says `.authorization.k8s.io "" is invalid`.
    fn invalid(&self, errors: &[FieldError]) -> ApiError {
        ApiError::invalid("", &self.info.group, "", errors)
    }

    /// The review as kube answers it: `metadata` (the request's, or none), the request's
    /// spec, a status.
    fn answer(&self, metadata: Option<&Value>, spec: Value, status: Value) -> Value {
        let mut metadata = metadata.and_then(Value::as_object).cloned().unwrap_or_default();
        // ObjectMeta's creationTimestamp is no pointer: the zero time is written as null.
        metadata.entry("creationTimestamp").or_insert(Value::Null);
        json!({
            "kind": self.info.kind,
            "apiVersion": self.info.api_version(),
            "metadata": metadata,
            "spec": spec,
            "status": status,
        })
    }

    /// kube's TokenReview REST: the request kept, its status told what the token
    /// authenticator found (what it did not find is left as sent).
    fn token_review(&self, obj: &Value) -> Result<Value, ApiError> {
        let token = obj.pointer("/spec/token").and_then(Value::as_str).unwrap_or_default();
        if token.is_empty() {
            return Err(ApiError::bad_request("token is required for TokenReview in authentication"));
        }
        let audiences: Vec<String> = obj
            .pointer("/spec/audiences")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(String::from).collect())
            .unwrap_or_default();
        let verdict = self.tokens.review(token, &audiences);
        let mut status = obj.get("status").and_then(Value::as_object).cloned().unwrap_or_default();
        status.remove("authenticated");
        match verdict {
            TokenVerdict::Authenticated { audiences } => {
                status.insert("authenticated".into(), Value::Bool(true));
                status.insert("user".into(), json!({"username": USERNAME, "groups": GROUPS}));
                status.insert("audiences".into(), json!(audiences));
            }
            TokenVerdict::Invalid => {
                status.insert("error".into(), Value::from("invalid bearer token"));
            }
            TokenVerdict::Unread => {}
        }
        status.entry("user").or_insert_with(|| json!({}));
        let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
        Ok(self.answer(obj.get("metadata"), spec, Value::Object(status)))
    }
}

/// Only the fields a review's metadata may carry: none (clients send
/// `creationTimestamp: null`, the zero value). The managedFields kube's create handler
/// put there are not the client's: its validation leaves them out.
fn metadata_errors(obj: &Value) -> Vec<FieldError> {
    let meta = obj.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
    let set: Map<String, Value> = meta.into_iter().filter(|(k, v)| k != "managedFields" && !is_zero(v)).collect();
    if set.is_empty() {
        return Vec::new();
    }
    vec![FieldError::invalid("metadata", Value::Object(set).to_string(), "must be empty")]
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
    }
}

/// Only the known string fields of an attributes object (all `omitempty`).
fn attributes(v: &Value, fields: &[&str]) -> Value {
    let mut out = Map::new();
    for f in fields {
        if let Some(s) = v.get(*f).and_then(Value::as_str).filter(|s| !s.is_empty()) {
            out.insert((*f).into(), Value::from(s));
        }
    }
    // Selectors (1.31+) are kept as given.
    for f in ["fieldSelector", "labelSelector"] {
        if let Some(sel) = v.get(f).filter(|s| s.is_object()) {
            out.insert(f.into(), sel.clone());
        }
    }
    Value::Object(out)
}

const RESOURCE_ATTRIBUTES: [&str; 7] = ["namespace", "verb", "group", "version", "resource", "subresource", "name"];
const NON_RESOURCE_ATTRIBUTES: [&str; 2] = ["path", "verb"];

impl Strategy for ReviewStrategy {
    fn info(&self) -> &ResourceInfo {
        &self.info
    }

    fn uses_generation(&self) -> bool {
        false
    }

    /// A review decodes as kube's typed decoder decodes it (its scheme's words for
    /// another kind or version, Go's for a value of the wrong type).
    fn check_type_meta(&self, obj: &Value) -> Result<(), ApiError> {
        super::scheme::check_type_meta(obj, &self.info)
    }

    fn decode(&self, obj: &Value) -> Result<(), Undecodable> {
        self.go.decode_error(obj).map_or(Ok(()), |why| Err(Undecodable(why)))
    }

    fn go_struct(&self) -> Option<&'static GoStruct> {
        Some(self.go)
    }

    /// What the Go type has no field for is dropped (and reported to field validation).
    fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        self.go.prune(obj)
    }

    fn zero_object(&self) -> Value {
        self.go.zero_object(&self.info.api_version(), &self.info.kind)
    }

    fn field_types(&self) -> Option<Arc<Schema>> {
        Some(Arc::clone(&self.types))
    }

    fn evaluate(&self, obj: &Value, now: Timestamp) -> Option<Result<Value, ApiError>> {
        Some(match self.review {
            Review::Token => self.token_review(obj),
            // kube's REST answers a new object: the request's metadata and status are
            // ignored, and the create handler's managedFields are not on it.
            Review::Identity => Ok(json!({
                "kind": self.info.kind,
                "apiVersion": self.info.api_version(),
                "metadata": {"creationTimestamp": crate::meta::format_time(now)},
                "status": {"userInfo": {"username": USERNAME, "groups": GROUPS}},
            })),
            Review::Access => {
                let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
                let resource = spec.get("resourceAttributes").filter(|v| v.is_object());
                let non_resource = spec.get("nonResourceAttributes").filter(|v| v.is_object());
                let mut errors = metadata_errors(obj);
                match (resource, non_resource) {
                    (Some(_), Some(n)) => errors.push(FieldError::invalid(
                        "spec.nonResourceAttributes",
                        n.to_string(),
                        "cannot be specified in combination with resourceAttributes",
                    )),
                    (None, None) => errors.push(FieldError::invalid(
                        "spec.resourceAttributes",
                        "null",
                        "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                    )),
                    _ => {}
                }
                if !errors.is_empty() {
                    return Some(Err(self.invalid(&errors)));
                }
                let mut out = Map::new();
                if let Some(r) = resource {
                    out.insert("resourceAttributes".into(), attributes(r, &RESOURCE_ATTRIBUTES));
                }
                if let Some(n) = non_resource {
                    out.insert("nonResourceAttributes".into(), attributes(n, &NON_RESOURCE_ATTRIBUTES));
                }
                Ok(self.answer(obj.get("metadata"), Value::Object(out), json!({"allowed": true})))
            }
            Review::Rules => {
                // kube's rules review checks its namespace alone: its metadata is ignored.
                let namespace = obj.pointer("/spec/namespace").and_then(Value::as_str).unwrap_or_default();
                if namespace.is_empty() {
                    return Some(Err(ApiError::bad_request("no namespace on request")));
                }
                // kube answers without the spec, with the rules of every role bound to the user:
                // cluster-admin through system:masters, and the bootstrap roles every
                // authenticated user has (basic-user, discovery, public-info-viewer). kube's
                // order follows its bindings and varies; this is the order it gives most.
                Ok(self.answer(
                    None,
                    json!({}),
                    json!({
                        "resourceRules": [
                            {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
                            {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
                            {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                        ],
                        "nonResourceRules": [
                            {"verbs": ["get"], "nonResourceURLs": [
                                "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
                                "/readyz", "/version", "/version/",
                            ]},
                            {"verbs": ["*"], "nonResourceURLs": ["*"]},
                            {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"]},
                        ],
                        "incomplete": false,
                    }),
                ))
            }
        })
    }

    /// Never reached: reviews are answered by [`Strategy::evaluate`].
    fn validate_create(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(kind: Review, body: Value) -> Result<Value, ApiError> {
        ReviewStrategy::new(kind).evaluate(&body, Timestamp::UNIX_EPOCH).expect("a review answers")
    }

    #[test]
    fn every_access_review_is_allowed() {
        let answer = review(
            Review::Access,
            json!({"metadata": {"creationTimestamp": null},
                   "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "widgets", "group": ""}}}),
        )
        .expect("allowed");
        assert_eq!(
            answer,
            json!({
                "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                "metadata": {"creationTimestamp": null},
                "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "widgets"}},
                "status": {"allowed": true},
            })
        );
    }

    #[test]
    fn a_review_needs_exactly_one_kind_of_attributes() {
        let e = review(Review::Access, json!({"spec": {}})).expect_err("nothing to review");
        assert_eq!(e.code, 422);
        assert_eq!(
            e.message,
            ".authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"
        );
        let e = review(
            Review::Access,
            json!({"metadata": {"name": "x"}, "spec": {"nonResourceAttributes": {"path": "/x"}}}),
        )
        .expect_err("named");
        assert!(
            e.message.contains("metadata: Invalid value: \"{\\\"name\\\":\\\"x\\\"}\": must be empty"),
            "{}",
            e.message
        );
    }

    #[test]
    fn rules_reviews_grant_everything_in_a_namespace() {
        let answer = review(Review::Rules, json!({"spec": {"namespace": "team"}})).expect("rules");
        assert_eq!(answer["spec"], json!({}), "kube answers without the spec");
        let rules = answer["status"]["resourceRules"].as_array().expect("rules");
        assert!(rules.contains(&json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})));
        assert_eq!(rules.len(), 3, "cluster-admin's and every authenticated user's");
        let e = review(Review::Rules, json!({"spec": {}})).expect_err("no namespace");
        assert_eq!((e.code, e.message.as_str()), (400, "no namespace on request"));
    }

    /// kube's zero TokenReview holds its status's user, so a sent username is a change of
    /// it, not an addition (no `"."` for the user in managedFields).
    #[test]
    fn a_token_review_s_zero_value_holds_its_structs_within_structs() {
        let zero = ReviewStrategy::new(Review::Token).zero_object();
        assert_eq!(zero["status"], json!({"user": {}}));
        assert_eq!(zero["spec"], json!({}));
    }

    /// `allowed` is a Go bool without omitempty: the zero access review holds `false`, so a
    /// sent `allowed: false` (or a null, which Go decodes as no change) is owned by no one.
    #[test]
    fn an_access_review_s_zero_value_holds_allowed_false() {
        let zero = ReviewStrategy::new(Review::Access).zero_object();
        assert_eq!(zero["status"], json!({"allowed": false}));
    }

    #[test]
    fn a_token_review_names_the_user_behind_an_accepted_token() {
        let tokens = Arc::new(Tokens::default());
        let strategy = ReviewStrategy::with_tokens(Review::Token, tokens.clone());
        let ask = |token: &str| {
            let body = json!({"spec": {"token": token}, "status": {"error": "sent"}});
            strategy.evaluate(&body, Timestamp::UNIX_EPOCH).expect("answers").expect("a review")["status"].clone()
        };
        assert_eq!(ask("the-token"), json!({"user": {}, "error": "invalid bearer token"}));
        tokens.accept("the-token");
        assert_eq!(
            ask("the-token"),
            json!({"authenticated": true, "user": {"username": USERNAME, "groups": GROUPS},
                   "audiences": crate::authn::API_AUDIENCES, "error": "sent"})
        );
        assert_eq!(ask(" the-token"), json!({"user": {}, "error": "sent"}), "never checked");
        let e = strategy.evaluate(&json!({"spec": {}}), Timestamp::UNIX_EPOCH).expect("answers").expect_err("no token");
        assert_eq!((e.code, e.message.as_str()), (400, "token is required for TokenReview in authentication"));
    }

    /// The oracle answers a rules review whatever its metadata: only the namespace is
    /// checked.
    #[test]
    fn a_rules_review_ignores_its_metadata() {
        let body = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"namespace": "default"}});
        let answer = review(Review::Rules, body).expect("rules");
        assert_eq!(answer["metadata"], json!({"creationTimestamp": null}));
    }
}
