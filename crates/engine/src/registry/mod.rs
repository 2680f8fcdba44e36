//! CustomResourceDefinition registration: the pure decisions kube-apiserver's
//! apiextensions-apiserver makes about a CRD object, with no IO and the clock injected.
//!
//! The reference implementation splits these decisions across a REST strategy
//! (defaults, status reset, storedVersions), a static validator (`validation.go`, with
//! `schema/validation.go` for structural schemas) and controllers (naming, establishing,
//! finalizing) whose cores are pure functions. This module keeps that split so each piece
//! can be compared with its Go counterpart and tested on its own; the storage layer and the
//! HTTP edge call these functions and do the IO:
//!
//! - [`conditions`]: condition types, reasons and messages as `const`s, and the one helper
//!   set through which every condition changes (the transition time moves only on a flip).
//! - [`names`]: the names controller's decision (`status.acceptedNames`, `NamesAccepted`,
//!   `Established`); the first registration to claim a name in a group keeps it.
//! - [`defaults`]: the server-side defaults and the create/update preparation of the REST
//!   strategy (status reset, `status.storedVersions`, `metadata.generation`).
//! - [`validation`]: create, update and status validation with kube-apiserver's field paths
//!   and messages, collecting every error; [`metadata`] holds its name and API-approval
//!   rules, private siblings the per-version, conversion and schema rules.
//! - [`structural`]: the structural-schema rules every `openAPIV3Schema` must satisfy.
//!
//! Test fixtures (`fixtures`, a `CrdBuilder` and the reference Widget/Gadget) are
//! `#[cfg(test)]`: integration tests speak JSON to the engine and do not need them.

pub mod conditions;
mod conversion;
pub mod defaults;
mod gostring;
pub mod metadata;
pub mod names;
mod schema_cel;
mod schema_defaults;
mod schema_rules;
mod schema_walk;
mod selectable;
pub mod structural;
pub mod validation;
pub(crate) mod versions;

#[cfg(test)]
pub(crate) mod fixtures;
