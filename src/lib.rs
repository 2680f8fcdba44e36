//! kubectl-crd: a kubectl plugin for people who build CustomResourceDefinitions.
//!
//! The crate has two halves that meet at the Kubernetes HTTP API (see `DESIGN.md` in the
//! steering repository): the [`engine`], an in-process apiserver for CRDs, and the tools
//! ([`cli`] today; the TUI and migration later) which only ever speak to a cluster through
//! `kube::Client`. Imports point one way: engine ← cli.

pub mod cli;
pub mod cluster;
pub mod datadir;
pub mod engine;
pub mod migrate;
pub mod serve;
pub mod text;
pub mod tui;

/// The plugin's own version, as printed by `kubectl crd version` and served at `/version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The Kubernetes API level the engine implements (the reference recordings are from 1.32).
pub const KUBERNETES_API_LEVEL: (u32, u32) = (1, 32);
