//! The tools' one way to a cluster: connecting, and the typed operations the CLI, the TUI
//! and the migration share.
//!
//! Everything here speaks through `kube::Client` — to a live cluster from the kubeconfig,
//! to the engine in this process, or to a `kubectl crd serve` that holds the local data —
//! so a feature works the same against all three. Operations are async functions over a
//! `&kube::Client` returning typed values, or a [`ClusterError`] whose message says what
//! failed and what to do.
//!
//! - [`connect`]: [`Target`] → [`Connection`] (live, local, or the local data's server).
//! - [`discovery`]: served resources and kubectl-style name resolution.
//! - [`identity`]: which cluster a connection reaches, durably (for migration journals).
//! - [`registrations`]: CRDs summarised and described, resource counts, waiting for
//!   Established.
//! - [`objects`]: one object, its status through `/status`, spec edits, `/scale`.
//! - [`delete`]: deleting as kubectl does (`--cascade`, server dry run), waiting until gone.
//! - [`reapply`]: a user's edit carried over to a newer version after a conflict.
//! - [`table`]: the server's Table for a resource (kubectl's columns), ages.
//! - [`listing`]: what `get` reads: Tables with their rows' objects, objects, and the watch after.
//! - [`apply`]: documents from files, applied in the order that works.
//! - [`shell`]: commands to print, with the connection flags that reach the cluster again.
//! - [`watch`]: change streams for live views.
//! - [`owners`], [`owners_fetch`]: owner trees through ownerReferences, one list per kind.
//! - [`transitions`]: condition transitions, and the timeline that keeps them.
//! - [`demo`]: the built-in demo set.

pub mod apply;
pub mod apply_as;
pub mod cel_rules;
pub mod column_preview;
pub mod connect;
pub mod counts;
pub mod delete;
pub mod demo;
pub mod demo_owners;
pub mod diff;
pub mod discovery;
pub mod edit;
pub mod editor;
mod error;
pub mod field_owners;
pub mod health;
pub mod identity;
pub mod listing;
pub mod merge_patch;
pub mod objects;
pub mod owners;
pub mod owners_fetch;
pub mod reapply;
pub mod registrations;
pub mod schema_fields;
pub mod shell;
pub mod table;
pub mod transitions;
pub mod tui_ops;
pub mod watch;
pub mod webhooks;

/// The field managers the plugin's writes are recorded under in `managedFields`, named as
/// kubectl names its own (`kubectl-client-side-apply`, `kubectl-edit`, `kubectl-scale`), so
/// field owners, conflicts and the event stream say which tool wrote what.
pub mod managers {
    /// `kubectl crd apply` (and the demo set it loads).
    pub const APPLY: &str = "kubectl-crd-apply";
    /// Edits of spec, status or the whole object (the TUI's `e` and `E`).
    pub const EDIT: &str = "kubectl-crd-edit";
    /// Replicas set through `/scale`.
    pub const SCALE: &str = "kubectl-crd-scale";
}

pub use connect::{ConnectOptions, Connection, Origin, Target};
pub use discovery::{Discovery, ResourceType};
pub use error::ClusterError;
pub use identity::ClusterIdentity;
pub use objects::ObjectRef;

#[cfg(test)]
mod tests {
    use super::*;

    fn send<T: Send>(_: &T) {}

    /// The TUI runs operations in spawned tasks: their futures must be `Send`. Checked at
    /// compile time; the body never runs.
    #[allow(dead_code, unused_must_use)]
    fn operations_can_run_in_spawned_tasks(client: kube::Client, rt: ResourceType) {
        let at = ObjectRef::new(&rt, "default", "w1");
        send(&counts::list_registrations(&client));
        send(&registrations::find_crd(&client, "widgets"));
        send(&Discovery::fetch(&client));
        send(&listing::fetch_table(&client, &rt, None, None, None));
        send(&objects::get_object(&client, at));
        send(&objects::get_status(&client, at));
        send(&objects::patch_status(&client, at, &serde_json::Value::Null));
        send(&objects::get_scale(&client, at));
        send(&objects::set_scale(&client, at, 1, None, false));
        send(&watch::watch_objects(&client, &rt, None));
        let doc = objects::StatusDocument { status: serde_json::Value::Null, resource_version: None };
        send(&objects::replace_status(&client, at, &doc, objects::Retry::Overwrite, managers::EDIT));
        send(&objects::replace_spec(&client, at, &serde_json::Value::Null, "f", objects::Retry::Reapply(&doc.status)));
        let options = apply::ApplyOptions {
            namespace: "default".into(),
            namespace_explicit: false,
            retry_conflicts: false,
            establish_timeout: std::time::Duration::ZERO,
        };
        send(&apply::apply_documents(&client, Vec::new(), &options, |_| {}));
        send(&demo::load(&client, |_| {}));
    }
}
