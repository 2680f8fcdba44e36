//! Everything the TUI shows, as one value. Only [`crate::tui::update`] changes it; the
//! views read it through `&State`.

use crate::cluster::discovery::ResourceType;
/// The state names which part of an object is being edited (defined with the edit itself).
pub use crate::cluster::edit::EditPart;
use crate::cluster::objects::ScaleView;
pub use crate::tui::input::Input;
use crate::tui::model::Registration;
use crate::tui::schema::{Preview, SchemaTree};
use crate::tui::table::{ObjKey, ResourceTable, RowFilter, SortKey, scroll_offset};
use crate::tui::theme::Theme;
use crate::tui::wizard::Wizard;
use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use std::path::PathBuf;

/// Live cluster or local engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    Live,
    Local,
}

/// What the header says about where requests go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub connection: Connection,
    /// The kubeconfig context (for local: `local`).
    pub context: String,
    /// The server URL, or the local engine's data directory.
    pub server: String,
    /// `kubectl crd` with the connection flags that reach this cluster again, for the
    /// commands the screens print ([`crate::cluster::shell::command`]).
    pub shell: String,
}

/// Which namespaces the resources screen lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Namespaces {
    One(String),
    All,
}

impl Namespaces {
    pub fn label(&self) -> &str {
        match self {
            Namespaces::One(ns) => ns,
            Namespaces::All => "all",
        }
    }
    /// The namespace for requests, `None` for all.
    pub fn one(&self) -> Option<&str> {
        match self {
            Namespaces::One(ns) => Some(ns),
            Namespaces::All => None,
        }
    }
}

/// What a scale request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleChange {
    To(i32),
    By(i32),
}

/// The scale dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleDialog {
    pub kind: ResourceType,
    pub targets: Vec<ObjKey>,
    /// The subresource of the single target, once read.
    pub info: Option<ScaleView>,
    /// Digits typed (an absolute number), or empty.
    pub typed: String,
    /// Steps taken with `+`/`-`.
    pub step: i32,
}

impl ScaleDialog {
    /// The change Enter would send, if any.
    pub fn change(&self) -> Option<ScaleChange> {
        // Saturating: a step past the largest count must not wrap round to scaling to 0.
        if let Ok(n) = self.typed.parse::<i32>() {
            return Some(ScaleChange::To(n.saturating_add(self.step).max(0)));
        }
        match (&self.info, self.targets.len()) {
            (Some(info), 1) => Some(ScaleChange::To(info.desired.saturating_add(self.step).max(0))),
            _ if self.step != 0 => Some(ScaleChange::By(self.step)),
            _ => None,
        }
    }
}

/// A 409 Conflict on save: what changed on the server, and the user's edit, kept.
#[derive(Debug, Clone, PartialEq)]
pub struct ConflictDialog {
    pub kind: ResourceType,
    pub key: ObjKey,
    pub part: EditPart,
    /// `~ spec.size: 1 -> 2` lines: the server's changes since the edit began.
    pub server_changes: Vec<String>,
    /// Where the user's edit is kept.
    pub kept: PathBuf,
    /// The document the edit started from, and the edited one (both of `part`).
    pub base: Value,
    pub edited: Value,
}

/// An edit the server (or the check before sending) refused: the editor opens on it again
/// with the reason as `#` comments on top, as `kubectl edit` does.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub kind: ResourceType,
    pub key: ObjKey,
    pub part: EditPart,
    /// The file with the user's text.
    pub kept: PathBuf,
    /// The document the edit started from (of `part`).
    pub base: Value,
    pub error: String,
}

/// What `Ctrl-D` deletes, once confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deletion {
    /// Custom resources: the marked rows, or the one selected.
    Objects { kind: ResourceType, keys: Vec<ObjKey> },
    /// A registration, and with it every custom resource it holds (`count`, if known).
    Crd { name: String, plural: String, count: Option<u64> },
}

/// Overlays and input modes; the screen below stays as it was.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Mode {
    #[default]
    Normal,
    Command(Input),
    Filter(Input),
    Help {
        scroll: usize,
    },
    Scale(ScaleDialog),
    Conflict(ConflictDialog),
    /// Quit while a migration step runs: `y` quits (the journal lets it resume).
    ConfirmQuit,
    /// `Ctrl-D`: `y` deletes what the question names.
    ConfirmDelete(Deletion),
    /// `:ns` alone: the namespaces to pick from.
    PickNamespace {
        cursor: usize,
    },
}

/// Which pane of a two-pane screen has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pane {
    #[default]
    Left,
    Right,
}

impl Pane {
    pub fn other(self) -> Pane {
        match self {
            Pane::Left => Pane::Right,
            Pane::Right => Pane::Left,
        }
    }
}

/// The registrations screen's list.
#[derive(Debug, Default)]
pub struct RegistrationList {
    pub items: Vec<Registration>,
    pub loaded: bool,
    pub filter: Option<RowFilter>,
    pub cursor: usize,
    pub offset: usize,
}

impl RegistrationList {
    /// Indexes of the registrations the filter lets through, in name order.
    pub fn shown(&self) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&i| {
                let r = &self.items[i];
                self.filter.as_ref().is_none_or(|f| f.lets([r.name(), r.kind()].into_iter()))
            })
            .collect()
    }
    pub fn current(&self) -> Option<&Registration> {
        self.shown().get(self.cursor).map(|&i| &self.items[i])
    }
    pub fn find(&self, name: &str) -> Option<&Registration> {
        self.items.iter().find(|r| r.name() == name)
    }
    pub fn move_by(&mut self, delta: isize, height: usize) {
        let last = self.shown().len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
        self.offset = scroll_offset(self.offset, self.cursor, height);
    }
}

/// The registration detail screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailScreen {
    pub crd: String,
    pub schema: SchemaTree,
    /// The printer columns previewed on a few objects.
    pub preview: Preview,
    /// `p`: the left pane shows only the preview (at 80 columns it is far down otherwise).
    pub columns_only: bool,
    pub focus: Pane,
    pub scroll: usize,
}

/// The resources of one CRD.
#[derive(Debug)]
pub struct ResourcesScreen {
    pub kind: ResourceType,
    pub table: ResourceTable,
    /// Server-side label selector (`/-l app=x`).
    pub selector: Option<String>,
    /// The list+watch this screen listens to; events of older ones are dropped.
    pub watch: u64,
    pub loading: bool,
    /// Opened from the registrations: if the namespace has none of these objects, show
    /// every namespace (as k9s does), once.
    pub fallback_all: bool,
    /// The last list failed (a bad selector, the server away): the rows are the old ones.
    pub stale: bool,
    /// `Ctrl-W`: the printer columns of priority > 0 too (`-o wide`).
    pub wide: bool,
}

impl ResourcesScreen {
    /// The columns on screen, headings and what each sorts by: NAMESPACE across
    /// namespaces, then the server's columns (those of priority > 0 only when wide).
    pub fn on_screen(&self, namespaces: &Namespaces) -> Vec<(String, SortKey)> {
        let mut out = vec![];
        if self.kind.namespaced && namespaces.one().is_none() {
            out.push(("NAMESPACE".to_string(), SortKey::Namespace));
        }
        for (i, c) in self.table.columns.iter().enumerate() {
            if c.priority == 0 || self.wide {
                out.push((c.name.to_uppercase(), SortKey::Column(i)));
            }
        }
        out
    }
}

/// One custom resource.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceScreen {
    pub kind: ResourceType,
    pub key: ObjKey,
    pub object: Option<Value>,
    pub focus: Pane,
    pub scroll: [usize; 2],
    /// The object was deleted while on screen (what it last was stays shown).
    pub gone: bool,
    /// Its condition transitions seen since the screen opened (the first read's too).
    pub timeline: crate::cluster::transitions::Timeline,
    /// `t`: the timeline shown instead of spec and status, scrolled this far.
    pub timeline_shown: Option<usize>,
}

impl ResourceScreen {
    /// The screen of one object, before it is read.
    pub fn new(kind: ResourceType, key: ObjKey) -> ResourceScreen {
        ResourceScreen {
            kind,
            key,
            object: None,
            focus: Pane::Left,
            scroll: [0, 0],
            gone: false,
            timeline: Default::default(),
            timeline_shown: None,
        }
    }

    /// Shows `obj`, the object read (again); what its conditions did goes on the timeline.
    pub fn show(&mut self, obj: Value) {
        self.timeline.observe(self.object.as_ref(), &obj);
        self.object = Some(obj);
    }
}

/// A YAML or describe text of anything.
#[derive(Debug, Clone)]
pub struct TextScreen {
    pub title: String,
    pub lines: Vec<String>,
    pub yaml: bool,
    pub scroll: usize,
    /// The object whose text is on its way.
    pub pending: Option<ObjKey>,
    /// The object shown, to show again with or without managedFields.
    pub object: Option<Value>,
    /// `M`: managedFields shown (hidden by default, as kubectl hides them).
    pub managed: bool,
    /// `/` on the text: the lines it matches are marked, `n`/`N` go from one to the next.
    pub search: Option<RowFilter>,
}

impl TextScreen {
    /// A text screen of `obj` (`None`: on its way).
    pub fn new(title: String, yaml: bool, obj: Option<Value>) -> TextScreen {
        let mut t = TextScreen {
            title,
            lines: vec!["loading…".into()],
            yaml,
            scroll: 0,
            pending: None,
            object: None,
            managed: false,
            search: None,
        };
        if let Some(obj) = obj {
            t.show(obj);
        }
        t
    }

    /// Shows `obj` (again): its YAML without managedFields unless asked, or its describe.
    pub fn show(&mut self, obj: Value) {
        let mut shown = obj.clone();
        if !self.managed
            && let Some(meta) = shown.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.remove("managedFields");
        }
        self.lines =
            if self.yaml { crate::tui::yaml::to_lines(&shown) } else { crate::tui::describe::describe(&shown) };
        self.object = Some(obj);
        self.pending = None;
        self.scroll = self.scroll.min(self.lines.len().saturating_sub(1));
    }

    /// Whether line `i` matches the search.
    pub fn matches(&self, i: usize) -> bool {
        let line = self.lines.get(i).map(String::as_str);
        self.search.as_ref().zip(line).is_some_and(|(s, l)| s.lets(std::iter::once(l)))
    }

    /// Scrolls to the next line the search matches after the top one (`forward`), or the
    /// one before; wraps round. Whether there is one.
    pub fn next_match(&mut self, forward: bool, from_top: bool) -> bool {
        let n = self.lines.len();
        let start = if from_top { 0 } else { 1 };
        let found = (start..n + start)
            .map(|k| if forward { (self.scroll + k) % n } else { (self.scroll + n - k % n) % n })
            .find(|&i| self.matches(i));
        if let Some(i) = found {
            self.scroll = i;
        }
        found.is_some()
    }
}

/// The screens, stacked: `Enter` pushes, `Esc` pops.
#[derive(Debug)]
pub enum Screen {
    Registrations,
    Detail(DetailScreen),
    Resources(Box<ResourcesScreen>),
    Resource(ResourceScreen),
    Text(TextScreen),
    /// The migration wizard (modal: it has the keys while it is on top).
    Wizard(Box<Wizard>),
    /// `w`: the live watch of a list or an object, event by event.
    Events(Box<crate::tui::events::EventsScreen>),
    /// `c`: the CEL workbench of a CRD.
    Cel(Box<crate::tui::cel_workbench::CelWorkbench>),
    /// `o`: owners and dependents of an object, or of a CRD's objects.
    Owners(Box<crate::tui::owner_tree::OwnerTreeScreen>),
    /// Every message of the session, newest first.
    Log {
        scroll: usize,
    },
}

impl Screen {
    pub fn name(&self) -> &'static str {
        match self {
            Screen::Registrations => "registrations",
            Screen::Detail(_) => "detail",
            Screen::Resources(_) => "resources",
            Screen::Resource(_) => "resource",
            Screen::Text(t) if t.yaml => "yaml",
            Screen::Text(_) => "describe",
            Screen::Wizard(_) => "migrate",
            Screen::Events(_) => "events",
            Screen::Owners(_) => "owners",
            Screen::Log { .. } => "log",
            Screen::Cel(_) => "cel",
        }
    }
}

/// How a status-line message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Error,
}

/// What an error is about, so the message goes when its cause does (a list that works
/// again, a watch back, an object read after all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    Registrations,
    /// The resources screen's list or watch.
    Table,
    Object(ObjKey),
}

/// One message as the log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub at: Timestamp,
    pub level: Level,
    pub text: String,
}

/// Messages the log keeps (the oldest go first).
pub const LOG_LIMIT: usize = 500;

/// The whole state.
#[derive(Debug)]
pub struct State {
    pub target: Target,
    pub namespaces: Namespaces,
    /// The namespace `0` switches back to from all namespaces.
    pub last_namespace: String,
    /// Favourite namespaces, most recent first, as k9s keeps them: `1`…`9` pick one.
    pub favourites: Vec<String>,
    /// The cluster's namespaces, once read (`None`: not read, or not readable).
    pub known_namespaces: Option<Vec<String>>,
    pub readonly: bool,
    pub theme: Theme,
    /// The clock the views read (ages); set by each tick.
    pub now: Timestamp,
    /// Terminal size, for the list heights the handlers need.
    pub size: (u16, u16),
    pub registrations: RegistrationList,
    /// Never empty: the registrations screen is at the bottom.
    pub stack: Vec<Screen>,
    pub mode: Mode,
    pub message: Option<(Level, String)>,
    /// What the message on the status line is about, when it goes away with its cause.
    pub cause: Option<Cause>,
    /// Every message shown, newest last (`L` opens it): the status line shows one at a time.
    pub log: Vec<LogEntry>,
    pub quit: bool,
    /// Source of list+watch ids.
    pub next_watch: u64,
    /// Where migration journals are kept (`None`: no data directory, no wizard).
    pub journal_root: Option<PathBuf>,
}

impl State {
    pub fn new(target: Target, namespaces: Namespaces, readonly: bool, theme: Theme, now: Timestamp) -> Self {
        let last_namespace = namespaces.one().unwrap_or("default").to_string();
        State {
            target,
            namespaces,
            favourites: vec![last_namespace.clone()],
            known_namespaces: None,
            last_namespace,
            readonly,
            theme,
            now,
            size: (80, 24),
            registrations: RegistrationList::default(),
            stack: vec![Screen::Registrations],
            mode: Mode::Normal,
            message: None,
            cause: None,
            log: Vec::new(),
            quit: false,
            next_watch: 0,
            journal_root: None,
        }
    }

    pub fn screen(&self) -> &Screen {
        self.stack.last().unwrap_or(&Screen::Registrations)
    }
    pub fn screen_mut(&mut self) -> &mut Screen {
        if self.stack.is_empty() {
            self.stack.push(Screen::Registrations);
        }
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    /// The registration a key acts on: the detail's, or the one under the cursor.
    pub fn selected_registration(&self) -> Option<&Registration> {
        match self.screen() {
            Screen::Detail(d) => self.registrations.find(&d.crd),
            _ => self.registrations.current(),
        }
    }

    /// The resources screen on the stack, if any (watch events go there).
    pub fn resources_mut(&mut self) -> Option<&mut ResourcesScreen> {
        self.stack.iter_mut().rev().find_map(|s| match s {
            Screen::Resources(r) => Some(r.as_mut()),
            _ => None,
        })
    }

    /// Rows a list has on screen: the terminal less header (2), status area, the
    /// block's borders (2) and the column headings (1).
    pub fn list_height(&self) -> usize {
        usize::from(self.size.1).saturating_sub(5 + usize::from(self.status_rows()))
    }

    /// Rows of the status area: a long message wraps over up to a quarter of the screen
    /// (at least one row, at most 6); the rest is in the log.
    pub fn status_rows(&self) -> u16 {
        let Some((_, text)) = self.message.as_ref().filter(|_| matches!(self.mode, Mode::Normal)) else { return 1 };
        // `✗ ` or `✓ ` leads the message; the view wraps at words, as this counts.
        let line = ratatui::text::Line::raw(format!("✗ {text}"));
        let rows = ratatui::widgets::Paragraph::new(line)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .line_count(self.size.0.max(1));
        let most = (self.size.1 / 4).clamp(1, 6);
        u16::try_from(rows).unwrap_or(u16::MAX).clamp(1, most)
    }

    /// Puts `ns` first among the favourites (at most 9, one per number key).
    pub fn favour(&mut self, ns: &str) {
        self.favourites.retain(|f| f != ns);
        self.favourites.insert(0, ns.to_string());
        self.favourites.truncate(9);
    }

    pub fn info(&mut self, text: impl Into<String>) {
        self.say(Level::Info, text.into(), None);
    }
    pub fn error(&mut self, text: impl Into<String>) {
        self.say(Level::Error, text.into(), None);
    }
    /// An error that lasts while `cause` does: [`State::resolved`] takes it away.
    pub fn error_because(&mut self, cause: Cause, text: impl Into<String>) {
        self.say(Level::Error, text.into(), Some(cause));
    }
    /// `cause` is gone: so is its message, if it is still the one shown.
    pub fn resolved(&mut self, cause: &Cause) {
        if self.cause.as_ref() == Some(cause) {
            self.message = None;
            self.cause = None;
        }
    }

    fn say(&mut self, level: Level, text: String, cause: Option<Cause>) {
        // A watch retrying says the same thing every few seconds: log it once.
        let repeated = self.log.last().is_some_and(|e| e.level == level && e.text == text);
        if !repeated {
            if self.log.len() >= LOG_LIMIT {
                self.log.remove(0);
            }
            self.log.push(LogEntry { at: self.now, level, text: text.clone() });
        }
        self.message = Some((level, text));
        self.cause = cause;
    }

    /// Work to do before a frame: rebuild views changed by events.
    pub fn prepare(&mut self) {
        for s in &mut self.stack {
            if let Screen::Resources(r) = s {
                r.table.prepare();
            }
        }
    }
}
