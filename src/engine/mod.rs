//! The engine: an in-process Kubernetes-style apiserver for CustomResourceDefinitions. It
//! imports nothing from the tools (only the crate's [`crate::text`] helpers).
//!
//! Layers, bottom up:
//! - [`store`]: versioned key/value storage (memory, redb), the source of every
//!   `resourceVersion`, with the watch history;
//! - [`field`] and [`status`]: the error vocabulary every layer above the store shares
//!   (field errors with paths, `metav1.Status`); [`meta`]: the metadata the server owns;
//! - [`schema`]: structural schemas — validation, pruning, defaulting, CEL — and the name
//!   grammars (`schema::names`, the engine's one DNS-name validation);
//! - [`registry`]: CRD validation, names and conditions; [`kinds`]: the kinds served now;
//! - [`resources`]: the REST verbs on custom and built-in kinds, `/status`, `/scale`,
//!   server-side apply, list and watch;
//! - [`representation`]: Accept negotiation, Table, PartialObjectMetadata, YAML, export,
//!   and Go's text formatting (`representation::gofmt`, the engine's one copy);
//! - [`openapi`]: building and caching the OpenAPI v2/v3 documents (no HTTP);
//! - [`api`]: the HTTP surface — routing, discovery, the OpenAPI endpoints, watch, errors;
//! - the CRD controllers and garbage collection run beside them; [`Engine`] ties it
//!   together (`instance`).

pub mod api;
mod crd_controller;
pub mod field;
mod gc;
mod instance;
pub mod kinds;
pub mod meta;
pub mod openapi;
pub mod registry;
pub mod representation;
pub mod resources;
pub mod schema;
pub mod status;
pub mod store;

pub use instance::{Engine, EngineError, StorageConfig};
