//! kubectl-crd: a kubectl plugin for people who build CustomResourceDefinitions.
//!
//! The plugin is two crates that meet at the Kubernetes HTTP API (see `DESIGN.md` in the
//! steering repository): the engine ([`kubectl_crd_engine`], in `crates/engine`), an
//! in-process apiserver for CRDs that knows nothing of the tools, and this crate, the tools,
//! which only ever speak to a cluster through `kube::Client`. Between them sits
//! [`testing`] (`kubectl_crd_testing`, in `crates/testing`): in-process test clusters for
//! Rust, and the one bridge from an engine to a `kube::Client` with no socket, which local
//! mode uses too.
//!
//!
//! - [`serve`]: the engine behind a real socket (`kubectl crd serve`), from validated
//!   options;
//! - [`cluster`]: the client layer every tool shares — connecting to a live cluster or a
//!   local engine, and the typed operations (registrations and counts, server Tables,
//!   spec/status/scale, editing and the 409 re-apply, apply, watch);
//! - [`validate`]: objects checked offline as the apiserver checks them, and [`crdtest`]:
//!   test cases for CRDs run through it (`kubectl crd validate`, `kubectl crd test`);
//! - [`migrate`]: the guided TPR→CRD migration as a library (plan, steps, journal, verify);
//! - [`cli`]: the subcommands (`kubectl crd ...`), the one place that turns command lines
//!   into options and launches the others; [`tui`]: the terminal UI.
//!
//! Two small modules sit below the tools and import nothing from the crate: [`datadir`]
//! (the data directory's file names, shared by `serve` and local mode) and [`text`]
//! (kubectl's table layout).
//!
//! Imports point one way: engine ← testing ← cluster; engine ← serve ← cluster ← {migrate, tui, cli}; `cli` is the
//! root nothing imports (it launches `serve`, `tui` and `migrate`), and `tui` is imported
//! by `cli` alone.

pub mod cli;
pub mod cluster;
pub mod crdtest;
pub mod datadir;
pub mod migrate;
pub mod serve;
pub mod text;
pub mod tui;
pub mod validate;

/// In-process test clusters for Rust (the `kubectl-crd-testing` crate, which can be depended
/// on alone): `kubectl_crd::testing::TestCluster::start()`.
pub use kubectl_crd_testing as testing;

/// The plugin's own version, as printed by `kubectl crd version` and served at `/version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The Kubernetes API level the engine implements (the reference recordings are from 1.32).
pub use kubectl_crd_engine::KUBERNETES_API_LEVEL;
