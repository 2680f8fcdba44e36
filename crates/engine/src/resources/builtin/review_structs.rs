//! The Go structs of the reviews (authorization.k8s.io/v1's access and rules reviews,
//! authentication.k8s.io/v1's SelfSubjectReview and TokenReview): their fields' order, in which
//! kube-apiserver writes its answers ([`super::struct_json`]), and their types, which
//! requests decode into.

use super::types::{GoStruct, GoType, STRING, field, list, omit_empty, plain_struct, pointer, value, value_struct};

static FIELD_REQUIREMENT: GoStruct = plain_struct(
    "v1.FieldSelectorRequirement",
    &[field("key", GoType::String), field("operator", GoType::String), omit_empty("values", list(&STRING))],
);
static FIELD_REQUIREMENT_TYPE: GoType = GoType::Struct(&FIELD_REQUIREMENT);
static FIELD_SELECTOR: GoStruct = plain_struct(
    "v1.FieldSelectorAttributes",
    &[omit_empty("rawSelector", GoType::String), omit_empty("requirements", list(&FIELD_REQUIREMENT_TYPE))],
);
/// `metav1.LabelSelectorRequirement`, also what a webhook's selectors hold.
static LABEL_REQUIREMENT: GoStruct = plain_struct(
    "v1.LabelSelectorRequirement",
    &[
        field("key", GoType::String),
        field("operator", GoType::Named("v1.LabelSelectorOperator")),
        omit_empty("values", list(&STRING)),
    ],
);
pub(crate) static LABEL_REQUIREMENT_TYPE: GoType = GoType::Struct(&LABEL_REQUIREMENT);
static LABEL_SELECTOR: GoStruct = plain_struct(
    "v1.LabelSelectorAttributes",
    &[omit_empty("rawSelector", GoType::String), omit_empty("requirements", list(&LABEL_REQUIREMENT_TYPE))],
);

static RESOURCE_ATTRIBUTES: GoStruct = plain_struct(
    "v1.ResourceAttributes",
    &[
        omit_empty("namespace", GoType::String),
        omit_empty("verb", GoType::String),
        omit_empty("group", GoType::String),
        omit_empty("version", GoType::String),
        omit_empty("resource", GoType::String),
        omit_empty("subresource", GoType::String),
        omit_empty("name", GoType::String),
        pointer("fieldSelector", GoType::Struct(&FIELD_SELECTOR)),
        pointer("labelSelector", GoType::Struct(&LABEL_SELECTOR)),
    ],
);
static NON_RESOURCE_ATTRIBUTES: GoStruct =
    plain_struct("v1.NonResourceAttributes", &[omit_empty("path", GoType::String), omit_empty("verb", GoType::String)]);

static ACCESS_SPEC: GoStruct = plain_struct(
    "v1.SelfSubjectAccessReviewSpec",
    &[
        pointer("resourceAttributes", GoType::Struct(&RESOURCE_ATTRIBUTES)),
        pointer("nonResourceAttributes", GoType::Struct(&NON_RESOURCE_ATTRIBUTES)),
    ],
);
static ACCESS_STATUS: GoStruct = plain_struct(
    "v1.SubjectAccessReviewStatus",
    &[
        value("allowed", GoType::Bool),
        omit_empty("denied", GoType::Bool),
        omit_empty("reason", GoType::String),
        omit_empty("evaluationError", GoType::String),
    ],
);

/// `SelfSubjectAccessReview`.
pub static SELF_SUBJECT_ACCESS_REVIEW: GoStruct = plain_struct(
    "SelfSubjectAccessReview",
    &[value_struct("spec", &ACCESS_SPEC), value_struct("status", &ACCESS_STATUS)],
);

static RESOURCE_RULE: GoStruct = plain_struct(
    "v1.ResourceRule",
    &[
        field("verbs", list(&STRING)),
        omit_empty("apiGroups", list(&STRING)),
        omit_empty("resources", list(&STRING)),
        omit_empty("resourceNames", list(&STRING)),
    ],
);
static RESOURCE_RULE_TYPE: GoType = GoType::Struct(&RESOURCE_RULE);
static NON_RESOURCE_RULE: GoStruct =
    plain_struct("v1.NonResourceRule", &[field("verbs", list(&STRING)), omit_empty("nonResourceURLs", list(&STRING))]);
static NON_RESOURCE_RULE_TYPE: GoType = GoType::Struct(&NON_RESOURCE_RULE);

static RULES_SPEC: GoStruct = plain_struct("v1.SelfSubjectRulesReviewSpec", &[omit_empty("namespace", GoType::String)]);
static RULES_STATUS: GoStruct = plain_struct(
    "v1.SubjectRulesReviewStatus",
    &[
        field("resourceRules", list(&RESOURCE_RULE_TYPE)),
        field("nonResourceRules", list(&NON_RESOURCE_RULE_TYPE)),
        field("incomplete", GoType::Bool),
        omit_empty("evaluationError", GoType::String),
    ],
);

/// `SelfSubjectRulesReview`.
pub static SELF_SUBJECT_RULES_REVIEW: GoStruct =
    plain_struct("SelfSubjectRulesReview", &[value_struct("spec", &RULES_SPEC), value_struct("status", &RULES_STATUS)]);

static EXTRA_VALUE: GoType = GoType::Slice { items: &STRING, keys: &[], name: Some("v1.ExtraValue") };
static USER_INFO: GoStruct = plain_struct(
    "v1.UserInfo",
    &[
        omit_empty("username", GoType::String),
        omit_empty("uid", GoType::String),
        omit_empty("groups", list(&STRING)),
        omit_empty("extra", GoType::Map(&EXTRA_VALUE)),
    ],
);
static IDENTITY_STATUS: GoStruct = plain_struct("v1.SelfSubjectReviewStatus", &[value_struct("userInfo", &USER_INFO)]);

/// `SelfSubjectReview` (authentication.k8s.io/v1): who the requester is.
pub static SELF_SUBJECT_REVIEW: GoStruct =
    plain_struct("SelfSubjectReview", &[value_struct("status", &IDENTITY_STATUS)]);

static TOKEN_SPEC: GoStruct =
    plain_struct("v1.TokenReviewSpec", &[omit_empty("token", GoType::String), omit_empty("audiences", list(&STRING))]);
static TOKEN_STATUS: GoStruct = plain_struct(
    "v1.TokenReviewStatus",
    &[
        omit_empty("authenticated", GoType::Bool),
        value_struct("user", &USER_INFO),
        omit_empty("audiences", list(&STRING)),
        omit_empty("error", GoType::String),
    ],
);

/// `TokenReview` (authentication.k8s.io/v1): whom a token names.
pub static TOKEN_REVIEW: GoStruct =
    plain_struct("TokenReview", &[value_struct("spec", &TOKEN_SPEC), value_struct("status", &TOKEN_STATUS)]);
