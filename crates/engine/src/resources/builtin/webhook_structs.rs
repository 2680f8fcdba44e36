//! The Go structs of admissionregistration.k8s.io/v1's webhook configurations
//! (`ValidatingWebhookConfiguration`, `MutatingWebhookConfiguration`): the field order
//! kube writes them in, the types bodies decode into, and the lists field management keys
//! (`webhooks` and `matchConditions` by `name`), as `k8s.io/api/admissionregistration/v1`
//! declares them.

use super::review_structs::LABEL_REQUIREMENT_TYPE;
use super::types::{
    GoStruct, GoType, STRING, atomic_struct, field, list, omit_empty, plain_struct, pointer, value_struct,
};

static OPERATION: GoType = GoType::Named("v1.OperationType");

/// `RuleWithOperations`, with its inlined `Rule`.
static RULE_WITH_OPERATIONS: GoStruct = plain_struct(
    "v1.RuleWithOperations",
    &[
        omit_empty("operations", list(&OPERATION)),
        omit_empty("apiGroups", list(&STRING)),
        omit_empty("apiVersions", list(&STRING)),
        omit_empty("resources", list(&STRING)),
        pointer("scope", GoType::Named("v1.ScopeType")),
    ],
);
static RULE_TYPE: GoType = GoType::Struct(&RULE_WITH_OPERATIONS);

static SERVICE_REFERENCE: GoStruct = plain_struct(
    "v1.ServiceReference",
    &[
        field("namespace", GoType::String),
        field("name", GoType::String),
        pointer("path", GoType::String),
        pointer("port", GoType::Int32),
    ],
);

static CLIENT_CONFIG: GoStruct = plain_struct(
    "v1.WebhookClientConfig",
    &[
        pointer("url", GoType::String),
        pointer("service", GoType::Struct(&SERVICE_REFERENCE)),
        omit_empty("caBundle", GoType::Bytes),
    ],
);

/// `metav1.LabelSelector`, owned as a whole (`+structType=atomic`).
static LABEL_SELECTOR: GoStruct = atomic_struct(
    "v1.LabelSelector",
    &[omit_empty("matchLabels", GoType::Map(&STRING)), omit_empty("matchExpressions", list(&LABEL_REQUIREMENT_TYPE))],
);

static MATCH_CONDITION: GoStruct =
    plain_struct("v1.MatchCondition", &[field("name", GoType::String), field("expression", GoType::String)]);
static MATCH_CONDITION_TYPE: GoType = GoType::Struct(&MATCH_CONDITION);

static VALIDATING_WEBHOOK: GoStruct = plain_struct(
    "v1.ValidatingWebhook",
    &[
        field("name", GoType::String),
        value_struct("clientConfig", &CLIENT_CONFIG),
        omit_empty("rules", list(&RULE_TYPE)),
        pointer("failurePolicy", GoType::Named("v1.FailurePolicyType")),
        pointer("matchPolicy", GoType::Named("v1.MatchPolicyType")),
        pointer("namespaceSelector", GoType::Struct(&LABEL_SELECTOR)),
        pointer("objectSelector", GoType::Struct(&LABEL_SELECTOR)),
        field("sideEffects", GoType::Named("v1.SideEffectClass")),
        pointer("timeoutSeconds", GoType::Int32),
        field("admissionReviewVersions", list(&STRING)),
        omit_empty("matchConditions", MATCH_CONDITIONS_SLICE),
    ],
);

static MUTATING_WEBHOOK: GoStruct = plain_struct(
    "v1.MutatingWebhook",
    &[
        field("name", GoType::String),
        value_struct("clientConfig", &CLIENT_CONFIG),
        omit_empty("rules", list(&RULE_TYPE)),
        pointer("failurePolicy", GoType::Named("v1.FailurePolicyType")),
        pointer("matchPolicy", GoType::Named("v1.MatchPolicyType")),
        pointer("namespaceSelector", GoType::Struct(&LABEL_SELECTOR)),
        pointer("objectSelector", GoType::Struct(&LABEL_SELECTOR)),
        field("sideEffects", GoType::Named("v1.SideEffectClass")),
        pointer("timeoutSeconds", GoType::Int32),
        field("admissionReviewVersions", list(&STRING)),
        pointer("reinvocationPolicy", GoType::Named("v1.ReinvocationPolicyType")),
        omit_empty("matchConditions", MATCH_CONDITIONS_SLICE),
    ],
);

/// `matchConditions`: a list keyed by `name` (a const so both webhooks can hold one).
const MATCH_CONDITIONS_SLICE: GoType = GoType::Slice { items: &MATCH_CONDITION_TYPE, keys: &["name"], name: None };

static VALIDATING_WEBHOOK_TYPE: GoType = GoType::Struct(&VALIDATING_WEBHOOK);
static MUTATING_WEBHOOK_TYPE: GoType = GoType::Struct(&MUTATING_WEBHOOK);

/// admissionregistration.k8s.io/v1 `ValidatingWebhookConfiguration`.
pub static VALIDATING_WEBHOOK_CONFIGURATION: GoStruct = plain_struct(
    "ValidatingWebhookConfiguration",
    &[omit_empty("webhooks", GoType::Slice { items: &VALIDATING_WEBHOOK_TYPE, keys: &["name"], name: None })],
);

/// admissionregistration.k8s.io/v1 `MutatingWebhookConfiguration`.
pub static MUTATING_WEBHOOK_CONFIGURATION: GoStruct = plain_struct(
    "MutatingWebhookConfiguration",
    &[omit_empty("webhooks", GoType::Slice { items: &MUTATING_WEBHOOK_TYPE, keys: &["name"], name: None })],
);
