//! kubectl-crd's engine: an in-process Kubernetes apiserver for CustomResourceDefinitions,
//! answering as kube-apiserver 1.32 does. It knows nothing of the tools built on it (the
//! `kubectl-crd` plugin's server, client layer, subcommands and terminal UI): HTTP requests
//! come in through [`Engine::router`] and objects are kept in a [`store::Store`], so it can be
//! depended on alone — as a test cluster, or behind any socket.
//!
//! The public API is what those users need: [`Engine`] (open, route, snapshot and fork,
//! shut down), the [`store`] it programs against, [`status::ApiError`] (`metav1.Status`),
//! and the few helpers the plugin's tools share so they print what the engine serves
//! ([`duration`], [`jsonpath`], [`gofmt`], [`is_dns1123_label`], [`error_response`]), and
//! [`cel::evaluate_rule`], one CEL rule tried alone as validation runs it (with its costs).
//! Everything else is internal;
//! its layers, bottom up:
//! - `store`: versioned key/value storage (memory, redb), the source of every
//!   `resourceVersion`, with the watch history;
//! - `field` and `status`: the error vocabulary every layer above the store shares
//!   (field errors with paths, `metav1.Status`); `meta`: the metadata the server owns;
//! - `schema`: structural schemas — validation, pruning, defaulting, CEL — and the name
//!   grammars (`schema::names`, the engine's one DNS-name validation);
//! - `registry`: CRD validation, names and conditions; `kinds`: the kinds served now;
//! - `resources`: the REST verbs on custom and built-in kinds, `/status`, `/scale`,
//!   server-side apply, list and watch;
//! - `representation`: Accept negotiation, Table, PartialObjectMetadata, YAML, export,
//!   ages, JSONPath and Go's text formatting (`representation::gofmt`, the engine's one copy);
//! - `openapi`: building and caching the OpenAPI v2/v3 documents (no HTTP);
//! - `api`: the HTTP surface — routing, discovery, the OpenAPI endpoints, watch, errors;
//! - the CRD controllers and garbage collection run beside them; `instance` ties it together.

#![warn(missing_docs)]

mod admission;
mod api;
pub mod authn;
mod coordination;
mod crd_controller;
mod field;
mod gc;
mod go_json;
mod instance;
mod kinds;
mod meta;
mod namespace_lifecycle;
mod openapi;
mod registry;
mod representation;
mod resources;
mod schema;
pub mod status;
pub mod store;

pub use api::error_response;
pub use instance::{Engine, EngineError, Snapshot, StorageConfig};
pub use meta::is_dns1123_label;
pub use representation::{duration, jsonpath};

/// Go's text formatting of decoded JSON values, as kubectl prints them (JSONPath results,
/// custom columns, `json.Marshal`): the engine's Tables use the same, so the tools print what
/// the server would.
pub mod gofmt {
    pub use crate::representation::gofmt::{go_json, print_text};
    pub use crate::schema::gofmt::plain_v;
}

/// Manifests as kubectl reads and sends them: YAML as go-yaml v2 reads it (YAML 1.1: `0777`
/// is octal, a plain `on:` key is `"true"`), and numbers as Go's encoder writes them (`2.0` is sent as `2`, `-0` as `0`,
/// an integer past int64 as a float), so the tools send what kubectl would.
pub mod manifests {
    use serde_json::Value;

    use crate::representation::go_yaml::{self, GoYaml};

    /// Every YAML document of `text`.
    pub fn from_yaml_documents(text: &str) -> Result<Vec<Value>, serde_saphyr::Error> {
        let docs: Vec<GoYaml> = serde_saphyr::from_multiple_with_options(text, go_yaml::options())?;
        Ok(docs.into_iter().map(go_yaml::to_json).collect())
    }

    /// One YAML document.
    pub fn from_yaml(text: &str) -> Result<Value, serde_saphyr::Error> {
        serde_saphyr::from_str_with_options(text, go_yaml::options()).map(go_yaml::to_json)
    }

    /// The numbers of a decoded manifest as kubectl sends them.
    pub fn numbers_as_sent(v: &mut Value) {
        crate::representation::gofmt::integral_floats(v);
    }
}

/// One `x-kubernetes-validations` rule tried out alone, evaluated as validation evaluates it,
/// with its estimated and actual cost (the TUI's CEL workbench).
pub mod cel {
    pub use crate::schema::cel_alone::{Cause, Outcome, Verdict, evaluate_rule};
}

/// The CRD table convertor (printer columns evaluated as kube-apiserver does), for tools
/// that preview a kind's columns on objects they already hold.
pub mod table {
    pub use crate::representation::table::TableConvertor;
}

pub use resources::generate_name::{self, NameGenerator};

/// The engine's version, served at `/version` beside the Kubernetes level it implements.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The Kubernetes API level the engine implements (the reference recordings are from 1.32).
pub const KUBERNETES_API_LEVEL: (u32, u32) = (1, 32);
