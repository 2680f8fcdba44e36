//! The Go structs of the discovery documents (`metav1.APIVersions`, `APIGroupList`,
//! `APIGroup`, `APIResourceList`, and apidiscovery v2's `APIGroupDiscoveryList`), as far as
//! the order of their fields goes: kube-apiserver writes them in that order
//! ([`super::struct_json`]).

use super::types::{GoStruct, GoType, OBJECT_META, STRING, field, list, omit_empty, plain_struct};

static SERVER_ADDRESS: GoStruct = plain_struct(
    "v1.ServerAddressByClientCIDR",
    &[field("clientCIDR", GoType::String), field("serverAddress", GoType::String)],
);
static SERVER_ADDRESS_TYPE: GoType = GoType::Struct(&SERVER_ADDRESS);

/// `/api`.
pub static API_VERSIONS: GoStruct = plain_struct(
    "v1.APIVersions",
    &[field("versions", list(&STRING)), field("serverAddressByClientCIDRs", list(&SERVER_ADDRESS_TYPE))],
);

static GROUP_VERSION: GoStruct = plain_struct(
    "v1.GroupVersionForDiscovery",
    &[field("groupVersion", GoType::String), field("version", GoType::String)],
);
static GROUP_VERSION_TYPE: GoType = GoType::Struct(&GROUP_VERSION);

/// `/apis/<group>`, and each group of `/apis`.
pub static API_GROUP: GoStruct = plain_struct(
    "v1.APIGroup",
    &[
        field("name", GoType::String),
        field("versions", list(&GROUP_VERSION_TYPE)),
        omit_empty("preferredVersion", GoType::Struct(&GROUP_VERSION)),
        omit_empty("serverAddressByClientCIDRs", list(&SERVER_ADDRESS_TYPE)),
    ],
);
static API_GROUP_TYPE: GoType = GoType::Struct(&API_GROUP);

/// `/apis`.
pub static API_GROUP_LIST: GoStruct = plain_struct("v1.APIGroupList", &[field("groups", list(&API_GROUP_TYPE))]);

static API_RESOURCE: GoStruct = plain_struct(
    "v1.APIResource",
    &[
        field("name", GoType::String),
        field("singularName", GoType::String),
        field("namespaced", GoType::Bool),
        omit_empty("group", GoType::String),
        omit_empty("version", GoType::String),
        field("kind", GoType::String),
        field("verbs", list(&STRING)),
        omit_empty("shortNames", list(&STRING)),
        omit_empty("categories", list(&STRING)),
        omit_empty("storageVersionHash", GoType::String),
    ],
);
static API_RESOURCE_TYPE: GoType = GoType::Struct(&API_RESOURCE);

/// `/api/v1`, `/apis/<group>/<version>`.
pub static API_RESOURCE_LIST: GoStruct = plain_struct(
    "v1.APIResourceList",
    &[field("groupVersion", GoType::String), field("resources", list(&API_RESOURCE_TYPE))],
);

static GVK: GoStruct = plain_struct(
    "v1.GroupVersionKind",
    &[field("group", GoType::String), field("version", GoType::String), field("kind", GoType::String)],
);
static GVK_TYPE: GoType = GoType::Struct(&GVK);

static SUBRESOURCE_DISCOVERY: GoStruct = plain_struct(
    "v2.APISubresourceDiscovery",
    &[
        field("subresource", GoType::String),
        field("responseKind", GoType::Struct(&GVK)),
        omit_empty("acceptedTypes", list(&GVK_TYPE)),
        field("verbs", list(&STRING)),
    ],
);
static SUBRESOURCE_DISCOVERY_TYPE: GoType = GoType::Struct(&SUBRESOURCE_DISCOVERY);

static RESOURCE_DISCOVERY: GoStruct = plain_struct(
    "v2.APIResourceDiscovery",
    &[
        field("resource", GoType::String),
        field("responseKind", GoType::Struct(&GVK)),
        field("scope", GoType::String),
        field("singularResource", GoType::String),
        field("verbs", list(&STRING)),
        omit_empty("shortNames", list(&STRING)),
        omit_empty("categories", list(&STRING)),
        omit_empty("subresources", list(&SUBRESOURCE_DISCOVERY_TYPE)),
    ],
);
static RESOURCE_DISCOVERY_TYPE: GoType = GoType::Struct(&RESOURCE_DISCOVERY);

static VERSION_DISCOVERY: GoStruct = plain_struct(
    "v2.APIVersionDiscovery",
    &[
        field("version", GoType::String),
        field("resources", list(&RESOURCE_DISCOVERY_TYPE)),
        omit_empty("freshness", GoType::String),
    ],
);
static VERSION_DISCOVERY_TYPE: GoType = GoType::Struct(&VERSION_DISCOVERY);

static GROUP_DISCOVERY: GoStruct = plain_struct(
    "v2.APIGroupDiscovery",
    &[field("metadata", GoType::Struct(&OBJECT_META)), field("versions", list(&VERSION_DISCOVERY_TYPE))],
);
static GROUP_DISCOVERY_TYPE: GoType = GoType::Struct(&GROUP_DISCOVERY);

/// Aggregated discovery (`/api` and `/apis` as apidiscovery.k8s.io/v2).
pub static GROUP_DISCOVERY_LIST: GoStruct =
    plain_struct("v2.APIGroupDiscoveryList", &[field("items", list(&GROUP_DISCOVERY_TYPE))]);
