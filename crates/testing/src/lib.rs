//! In-process Kubernetes test clusters for Rust: kubectl-crd's engine, an apiserver for
//! CustomResourceDefinitions that answers as kube-apiserver 1.32 does, with a `kube::Client`
//! over it and no socket, no file and no download.
//!
//! ```no_run
//! # async fn demo() -> Result<(), kubectl_crd_testing::Error> {
//! use kubectl_crd_testing::TestCluster;
//!
//! let cluster = TestCluster::start().await?;            // ~1 ms, in memory
//! cluster.install_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seed}\n").await?;
//! let client: kube::Client = cluster.client();
//! // ... run the code under test against `client` ...
//!
//! let seeded = cluster.snapshot().await?;                    // O(1)
//! let fork = seeded.fork().await?;                     // a new cluster with the same objects
//! # Ok(()) }
//! ```
//!
//! - [`TestCluster`]: start ([`TestCluster::start`], or [`TestCluster::builder`] for a
//!   durable directory or another default namespace), [`client`](TestCluster::client),
//!   install CRDs and objects from types ([`install_crd`](TestCluster::install_crd) for
//!   `kube::CustomResourceExt`, [`install`](TestCluster::install)), YAML
//!   ([`install_yaml`](TestCluster::install_yaml)) or files
//!   ([`install_file`](TestCluster::install_file)), waiting until CRDs are Established;
//! - [`Snapshot`]: every object of a cluster at one revision, forked into new, isolated
//!   clusters ([`Snapshot::fork`]) whose resourceVersions go on from it;
//! - [`Served`]: the cluster on a loopback port with a kubeconfig, for clients that need HTTP;
//! - [`in_process_client`]: the bridge itself, for an [`Engine`](kubectl_crd_engine::Engine)
//!   opened by hand (the plugin's local mode uses it).
//!
//! The crate's `examples/greeting_controller.rs` is a kube-rs controller
//! (`kube::runtime::Controller`) with its tests against forks of one seeded cluster; the
//! crate's README walks through it.
//!
//! The crate depends on the engine and kube only, not on the plugin's CLI or terminal UI;
//! `kubectl_crd::testing` re-exports it for those who depend on the plugin crate. It is a
//! crate rather than a feature of the plugin so that its dependencies are exactly those:
//! a feature would have to gate every tool of the plugin to keep them out.

#![warn(missing_docs)]

mod client;
mod cluster;
mod error;
mod install;
mod serve;

pub use client::in_process_client;
pub use cluster::{Builder, STORE_FILE, Snapshot, TestCluster};
pub use error::Error;
pub use install::FIELD_MANAGER;
pub use serve::Served;
