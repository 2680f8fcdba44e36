//! Server-side apply and `metadata.managedFields`, as kube-apiserver maintains them.
//!
//! Every write records who owns which fields: a create, update or patch adds what it set
//! or changed to its field manager's `Update` entry (taking those fields from other
//! managers), an apply patch merges a configuration into the object and makes its
//! manager own exactly what the configuration sets, removing what it stopped setting and
//! refusing (409) to change fields other managers own unless forced.
//!
//! The parts follow kube's: [`path`] and [`set`] are structured-merge-diff's field paths
//! and sets with their `fieldsV1` encoding; [`schema`] types objects from the CRD schema
//! (`x-kubernetes-list-type`, keys, atomic maps); [`walk`] compares, merges and prunes
//! typed objects; [`updater`] is structured-merge-diff's `Updater`; [`managers`] reads and
//! writes the entries; [`fieldmanager`] stacks kube's layers (server-owned fields,
//! timestamps, the cap on update entries, the client-side apply upgrade); [`scale`] is the
//! `/scale` handler's round trip through the Scale's entries; [`verbs`] wires
//! them into the REST verbs. Everything but [`verbs`] is pure.

pub mod fieldmanager;
pub mod managers;
pub mod path;
pub mod scale;
pub mod schema;
pub mod set;
pub mod updater;
pub mod verbs;
pub mod walk;

pub use verbs::{Tracking, WriteOutcome};
