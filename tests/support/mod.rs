//! Shared test support for the fidelity tests: [`reference`] reads the real kube-apiserver 1.32
//! recordings (`shared/reference/kube-apiserver-1.32/*.http`) into typed exchanges, and
//! [`compare`] normalizes volatile values and reports readable differences between a recorded
//! response and what our engine answered.
//!
//! How to use it from an integration test (`tests/<name>.rs`): declare `mod support;` at the
//! top of the test file and import what you need, e.g.
//! `use support::{compare::assert_json_matches, reference::load};`. Cargo only builds the files
//! directly under `tests/` as test binaries, so this directory is compiled into each test
//! binary that declares `mod support;`.

// Each test binary uses only part of this library; unused helpers must not warn there.
#![allow(dead_code)]

pub mod compare;
pub mod kubectl;
pub mod reference;
pub mod replay;
pub mod target;
