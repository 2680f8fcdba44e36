//! The engine: an in-process Kubernetes-style apiserver for CustomResourceDefinitions.
//!
//! Layers, bottom up: [`store`] (versioned key/value storage, the source of every
//! `resourceVersion`), [`field`] and [`status`] (the error vocabulary every layer above the
//! store shares: field errors with paths, and `metav1.Status`).

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
