//! The vocabulary between the parts of the TUI: what a key asks for ([`Action`]), the IO
//! the state machine asks the runtime to do ([`Effect`]), and what comes back from the
//! cluster ([`Msg`]). The migration wizard's share is its own ([`crate::tui::wizard`]).

use crate::cluster::discovery::ResourceType;
use crate::cluster::objects::ScaleView;
use crate::cluster::registrations::Crd;
use crate::tui::model::Registration;
use crate::tui::state::{EditPart, Namespaces, ScaleChange, Target};
use crate::tui::table::{ObjKey, Row, TableData};
use crate::tui::wizard::{WizardEffect, WizardMsg};
use serde_json::Value;
use std::path::PathBuf;

/// What the user asked for, independent of the key that asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Quit,
    Back,
    Enter,
    Move(isize),
    Page(isize),
    /// To the first (`false`) or last (`true`) row.
    Jump(bool),
    FocusNext,
    /// Fold (`false`) or unfold (`true`) a schema node.
    Fold(bool),
    OpenCommand,
    OpenFilter,
    OpenHelp,
    /// The log of every message.
    OpenLog,
    /// The registration detail of the selected CRD.
    Detail,
    /// Delete the selection (asks first).
    Delete,
    /// `Tab` on the command line.
    Complete,
    /// `M` on a YAML view: managedFields shown or hidden.
    ToggleManaged,
    /// `n` (`true`) / `N`: the next or previous line the search matches.
    NextMatch(bool),
    /// A mouse click on this row of the terminal.
    Click(u16),
    Yaml,
    Describe,
    EditSpec,
    EditStatus,
    Scale,
    Refresh,
    Mark,
    ClearMarks,
    /// Sort by the column on screen whose heading starts with this letter (`N` name,
    /// `P` namespace, `A` age, as k9s); again flips the direction.
    SortBy(char),
    /// `0`: every namespace.
    AllNamespaces,
    /// `1`…`9`: the n-th favourite namespace (0-based).
    Favourite(usize),
    /// `Ctrl-W`: wide columns on and off.
    ToggleWide,
    /// Typing into the command line, the filter or the scale dialog.
    Type(char),
    Backspace,
    ClearInput,
    Submit,
    Cancel,
    /// `+`/`-` in the scale dialog.
    Step(i32),
    /// In the conflict dialog: re-apply the edit on the server's new version.
    Reapply,
    /// In the conflict dialog: drop the edit (the file stays).
    Discard,
    /// In the conflict dialog: back to the editor with the user's text.
    EditAgain,
    /// Open the migration wizard on the selected registration.
    Migrate,
    /// In the wizard: write the new CRD in the editor.
    Compose,
    /// `y` or `n` to a question.
    Answer(bool),
    /// In the wizard: roll the migration back.
    Rollback,
    /// `w`: the event stream of the list or the object shown.
    Events,
    /// Space on the event stream: pause or resume.
    Pause,
    /// `M` on a resource: every field with the manager that owns it.
    FieldOwners,
    /// `A` on a resource: a server-side apply dry run as another field manager.
    ApplyAs,
    /// `c` on a CRD: the CEL workbench.
    CelWorkbench,
    /// `s` in the CEL workbench: save the cases tried.
    SaveCases,
    /// `o`: the owner tree of the object or CRD selected.
    OwnerTree,
    /// `t` on a resource: its conditions timeline shown or hidden.
    Timeline,
    /// `p` on the detail: the left pane shows only the printer-column preview, or all again.
    PrinterColumns,
}

/// IO the runtime performs; results come back as [`Msg`].
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    LoadRegistrations,
    /// List the kind's Table and watch it; events carry `watch`.
    LoadTable {
        watch: u64,
        kind: ResourceType,
        namespaces: Namespaces,
        selector: Option<String>,
    },
    /// Stop any running watch.
    StopWatch,
    LoadObject {
        kind: ResourceType,
        key: ObjKey,
    },
    LoadScale {
        kind: ResourceType,
        key: ObjKey,
    },
    /// Open the editor on a part of an object and save the result.
    Edit {
        kind: ResourceType,
        key: ObjKey,
        part: EditPart,
    },
    /// Open the editor again on a refused edit, the reason on top.
    EditAgain(Box<crate::tui::state::Refused>),
    /// Re-apply the changes `base → edited` onto the server's current version.
    Reapply {
        kind: ResourceType,
        key: ObjKey,
        part: EditPart,
        base: Value,
        edited: Value,
        kept: PathBuf,
    },
    SetScale {
        kind: ResourceType,
        targets: Vec<ObjKey>,
        change: ScaleChange,
    },
    /// Read the cluster's namespaces.
    LoadNamespaces,
    /// Delete objects or a CRD (confirmed).
    Delete(crate::tui::state::Deletion),
    SwitchContext(String),
    /// Find the CRD a word names (`:widgets`) and open its resources.
    Resolve(String),
    /// Follow the CRDs with a watch, unless one is running already.
    WatchRegistrations,
    /// Count the resources of these CRDs (a few requests at a time); each count comes back
    /// as its own [`Msg::Counted`], as soon as it is known.
    CountResources(Vec<crate::cluster::counts::CountTarget>),
    /// The migration wizard's IO.
    Wizard(WizardEffect),
    /// Watch whole objects for the event stream; events carry `stream`.
    WatchEvents {
        stream: u64,
        kind: ResourceType,
        what: crate::cluster::watch::Watching,
    },
    /// Edit an apply document for the object and dry-run it as the manager it names.
    ApplyAs {
        kind: ResourceType,
        key: ObjKey,
    },
    /// Stop the event stream's watch.
    StopEvents,
    /// Read one object of the kind, for the CEL workbench of `crd` to start values from.
    LoadSample {
        crd: String,
        kind: ResourceType,
    },
    /// Open the editor on `text` (the CEL workbench's values for rule `rule` of `crd`).
    EditCel {
        crd: String,
        rule: usize,
        text: String,
    },
    /// Write files (creating their directories); `done` says so after.
    WriteFiles {
        files: Vec<(PathBuf, String)>,
        done: String,
    },
    /// List every listable kind once in `scope`, for owner tree `request`.
    LoadOwners {
        request: u64,
        scope: crate::cluster::owners_fetch::Scope,
    },
    /// Read a few objects of each served version and preview the printer columns on them.
    LoadColumnPreview(Box<Crd>),
}

/// A change seen by a watch.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchEvent {
    Upsert(Row),
    Delete(ObjKey),
    /// The watch ended or failed; the text says why.
    Error(String),
}

/// What came back from the cluster.
#[derive(Debug, Clone, PartialEq)]
pub enum Msg {
    Registrations(Result<Vec<Registration>, String>),
    /// The first page of a longer list of CRDs: shown at once, beside any already shown;
    /// the registrations watch's list brings the rest.
    FirstRegistrations(Vec<Registration>),
    /// The registrations watch saw a CRD created or changed.
    CrdChanged(Box<Crd>),
    /// The registrations watch saw a CRD deleted.
    CrdDeleted(String),
    /// The registrations watch (re)listed: these CRDs are all there are.
    CrdsListed(Vec<String>),
    /// How many resources a CRD holds (`None`: not counted).
    Counted {
        crd: String,
        count: Option<u64>,
    },
    Table {
        watch: u64,
        result: Result<TableData, String>,
    },
    /// More rows of the list a `Table` began; `done` after the last page.
    Rows {
        watch: u64,
        rows: Vec<Row>,
        done: bool,
    },
    Watch {
        watch: u64,
        event: WatchEvent,
    },
    Object {
        key: ObjKey,
        result: Result<Value, String>,
    },
    /// The object is not there (any more).
    ObjectGone(ObjKey),
    Scale {
        key: ObjKey,
        result: Result<ScaleView, String>,
    },
    /// The cluster's namespaces.
    Namespaces(Result<Vec<String>, String>),
    /// The CRD a `:word` named.
    Resolved(Result<Box<Crd>, String>),
    /// What an "apply as" dry run found: a title and the lines to show.
    ApplyVerdict {
        title: String,
        lines: Vec<String>,
    },
    /// A write went through; the text says what.
    Saved(String),
    /// The server refused an edit: it goes back to the editor.
    EditRefused(Box<crate::tui::state::Refused>),
    /// A save met a 409; the dialog says what changed.
    Conflict(Box<crate::tui::state::ConflictDialog>),
    Info(String),
    Error(String),
    /// A new connection (after `:ctx`).
    Connected(Target, Namespaces),
    /// From the migration wizard's IO.
    Wizard(WizardMsg),
    /// An event of the event stream's watch, or why it failed (it retries).
    ObjectEvent {
        stream: u64,
        event: Result<crate::cluster::watch::ObjectEvent, String>,
    },
    /// An object of the CEL workbench's kind (`None`: there is none).
    CelSample {
        crd: String,
        result: Result<Option<Value>, String>,
    },
    /// What the editor saved for a rule of the CEL workbench of `crd`.
    CelEdited {
        crd: String,
        rule: usize,
        result: Result<String, String>,
    },
    /// What the owner tree's lists brought.
    Owners {
        request: u64,
        result: Result<Box<crate::cluster::owners_fetch::Listed>, String>,
    },
    /// The printer columns of a CRD previewed on objects, or why not.
    ColumnPreview {
        crd: String,
        result: Result<Vec<crate::cluster::column_preview::VersionPreview>, String>,
    },
    /// The clock moved on (every second).
    Tick(k8s_openapi::jiff::Timestamp),
}
