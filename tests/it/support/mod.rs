//! What the integration tests share:
//! - [`reference`] reads the real kube-apiserver 1.32 recordings
//!   (`shared/reference/kube-apiserver-1.32/*.http`) into typed exchanges, and [`compare`]
//!   normalizes volatile values and reports readable differences between a recorded response
//!   and what our engine answered; [`replay`] trims recorded documents;
//! - [`target`] and [`kubectl`] run the engine in process or behind `serve` (or a real
//!   kube-apiserver) for the real `kubectl`;
//! - [`plugin`] runs the real `kubectl` with the plugin (and its completer) on PATH;
//! - [`cli`] runs the `kubectl-crd` binary, with the scenarios the local and live CLI tests
//!   share;
//! - [`crd`] is the one CRD fixture builder; [`migrate`] loads clusters for the migration
//!   tests (and benchmark);
//! - [`alone`] runs a test that measures its own process in a process of its own.
//!
//! A test module imports what it needs, e.g.
//! `use crate::support::{compare::assert_json_matches, reference::load};`.

// Not every helper is used by the tests of today (and the benchmarks include parts by path).
#![allow(dead_code)]

pub mod alone;
pub mod cli;
pub mod compare;
pub mod crd;
pub mod https_webhook;
pub mod inproc;
pub mod kubectl;
pub mod migrate;
pub mod plugin;
pub mod reference;
pub mod replay;
pub mod storage;
pub mod target;
