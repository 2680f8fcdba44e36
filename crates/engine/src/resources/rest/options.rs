//! The options of the verbs: what a write, a delete and a list or watch take from the
//! request, and what a watch yields.

use crate::status::ApiError;
use crate::store::Revision;
use serde_json::Value;

/// `fieldValidation`: what happens to fields the schema does not know (kube's default is Warn).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

/// The query parameters every mutating verb shares, and the warnings it gives back
/// (sent as `Warning` headers).
#[derive(Debug, Default)]
pub struct WriteOptions {
    /// `dryRun=All`: validate and answer as if written, store nothing.
    pub dry_run: bool,
    /// `fieldManager`, or the one kube derives from the User-Agent.
    pub field_manager: Option<String>,
    pub field_validation: FieldValidation,
    /// Whether `fieldManager` came in the query (admission shows only what was given).
    pub field_manager_given: bool,
    /// `fieldValidation` as the query gave it.
    pub field_validation_given: Option<&'static str>,
    /// `force=true` on an apply patch: take over conflicting fields.
    pub force: bool,
    pub warnings: std::sync::Mutex<Vec<String>>,
    /// Strict errors the body's decoder found before the object was made (duplicate
    /// fields): kube reports them first, with the unknown fields, as one strict error.
    pub decode_errors: std::sync::Mutex<Vec<String>>,
    /// The decoding error Go meets first in a JSON body's own order, when it has one.
    pub document_error: std::sync::Mutex<Option<String>>,
}

impl WriteOptions {
    /// Options for a write the engine makes itself (controllers).
    /// Options for a write the engine makes itself (its controllers), recorded in
    /// managedFields under kube-apiserver's name.
    pub fn internal() -> Self {
        WriteOptions { field_manager: Some("kube-apiserver".into()), ..Default::default() }
    }

    /// Adds a warning once: kube's recorder drops a text it already holds (a create
    /// retried for its generated name warns once).
    pub fn warn(&self, message: String) {
        let mut warnings = self.warnings.lock().unwrap_or_else(|e| e.into_inner());
        if !warnings.contains(&message) {
            warnings.push(message);
        }
    }

    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Keeps the strict errors of the body's decoding for the write to report.
    pub fn note_decode_errors(&self, errors: Vec<String>) {
        self.decode_errors.lock().unwrap_or_else(|e| e.into_inner()).extend(errors);
    }

    /// Keeps the decoding error Go meets first in the body, to report for it.
    pub fn note_document_error(&self, error: String) {
        *self.document_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
    }

    pub(super) fn take_document_error(&self) -> Option<String> {
        self.document_error.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    pub(super) fn take_decode_errors(&self) -> Vec<String> {
        std::mem::take(&mut *self.decode_errors.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The finalizer the garbage collector clears after orphaning an owner's dependents.
pub const ORPHAN_FINALIZER: &str = "orphan";
/// The finalizer the garbage collector clears once an owner's dependents are gone.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// `propagationPolicy`: what happens to the dependents of a deleted owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    Orphan,
    Background,
    Foreground,
}

impl Propagation {
    /// The policy's name in `DeleteOptions`.
    pub fn as_str(self) -> &'static str {
        match self {
            Propagation::Orphan => "Orphan",
            Propagation::Background => "Background",
            Propagation::Foreground => "Foreground",
        }
    }
}

/// The parts of `metav1.DeleteOptions` the engine honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub precondition_uid: Option<String>,
    /// Compared as text, as kube compares it (a resourceVersion that is no number fails).
    pub precondition_rv: Option<String>,
    /// `None`: the kind's default (background for every kind the engine serves).
    pub propagation: Option<Propagation>,
    /// `dryRun: ["All"]` in the body (clients put it there rather than in the query).
    pub dry_run: bool,
    /// The deprecated `orphanDependents` as given (already folded into `propagation`):
    /// `false` makes kube answer 202 for an object only marked.
    pub orphan_dependents: Option<bool>,
}

/// How many objects a DELETE of a collection without `limit` lists at a time (kube's
/// `deleteCollectionPageSize`).
pub const DELETE_COLLECTION_PAGE: usize = 10_000;

/// The query of a list or watch.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub labels: Option<String>,
    pub fields: Option<String>,
    pub limit: Option<usize>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
    /// `sendInitialEvents` of a watch (`None`: not given).
    pub send_initial_events: Option<bool>,
    /// `allowWatchBookmarks` of a watch.
    pub allow_watch_bookmarks: bool,
    /// A watch asked for by a `/watch/` path alone, its query without `watch=true`: kube
    /// defaults and validates the options by the query's `watch`, so as a list's.
    pub watch_by_path: bool,
}

/// One watch event, or the error that ends the watch.
#[derive(Debug, Clone)]
pub enum WatchItem {
    Event {
        event_type: &'static str,
        object: Value,
    },
    /// An event whose object is sent as the store holds it (no selector or conversion had
    /// to read it), with `resource_version` spliced into its metadata (and `api_version`
    /// over its own, when given): the common watch
    /// is served without parsing and re-serializing each object once per watcher.
    Stored {
        event_type: &'static str,
        json: bytes::Bytes,
        resource_version: Revision,
        /// The `apiVersion` to write into it when the store may hold it at another.
        api_version: Option<std::sync::Arc<str>>,
    },
    /// Every event up to `resource_version` has been sent; `initial_events_end` marks the
    /// end of a `sendInitialEvents` watch's initial state.
    Bookmark {
        resource_version: Revision,
        initial_events_end: bool,
    },
    /// A change the watch's selectors leave out: nothing is sent, but the watch has seen
    /// the store up to it, so its next bookmark may say so (kube's cacher does).
    Filtered {
        resource_version: Revision,
    },
    Error(ApiError),
}
