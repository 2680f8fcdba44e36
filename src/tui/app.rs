//! The running TUI: connect (or load the demo into a fresh local engine), take the
//! terminal, and run the one loop whose `tokio::select!` owns every input — terminal
//! events, the resources screen's watch, the registrations' watch of every CRD, results
//! of requests, and the clock.

use crate::cluster::ResourceType;
use crate::cluster::demo;
use crate::cluster::{ClusterError, ConnectOptions, Connection, Origin, Target as ClusterTarget};
use crate::tui::action::{Effect, Msg};
use crate::tui::crd_watch::crd_changes;
use crate::tui::event_watch::EventWatch;
use crate::tui::pacing::Pacer;
use crate::tui::runtime::{self, EditJob};
use crate::tui::state::{Connection as Conn, Namespaces, Refused, State, Target};
use crate::tui::table::ObjKey;
use crate::tui::theme::Theme;
use crate::tui::watch::TableWatch;
use crate::tui::wizard::driver::{self, Driver};
use crate::tui::wizard::{self, WizardEffect, WizardMsg};
use crate::tui::{keys, update, view};
use crossterm::event::{DisableMouseCapture, EnableMouseCapture, Event, EventStream, KeyCode, KeyEvent, KeyModifiers};
use futures::stream::BoxStream;
use futures::{FutureExt as _, StreamExt};
use k8s_openapi::jiff::Timestamp;
use std::io;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often ages and the clock move on.
const TICK: Duration = Duration::from_secs(1);

/// What `kubectl crd tui` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    pub connect: ConnectOptions,
    /// `-A`: start on all namespaces.
    pub all_namespaces: bool,
    /// Load the demo first; without `--local=DIR`, into a temporary directory.
    pub demo: bool,
    /// The data directory was given with `--local=DIR` (the demo then stays there).
    pub demo_dir: Option<PathBuf>,
    pub readonly: bool,
    pub color: bool,
}

/// Why the TUI stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("the terminal: {0}")]
    Terminal(#[from] io::Error),
    #[error("cannot load the demo: {0}")]
    Demo(ClusterError),
}

/// Runs the TUI until the user quits.
pub fn run(options: Options) -> Result<(), TuiError> {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = rt.block_on(run_async(options));
    // A migration step cut off by quitting may still be winding down on the blocking
    // pool: do not wait long for it (the journal runs the step again on resume).
    rt.shutdown_timeout(Duration::from_secs(2));
    result
}

async fn run_async(mut options: Options) -> Result<(), TuiError> {
    let temp = if options.demo && options.demo_dir.is_none() {
        let stamp = Timestamp::now().as_nanosecond();
        let dir = std::env::temp_dir().join(format!("kubectl-crd-demo-{}-{stamp}", std::process::id()));
        options.connect.target = ClusterTarget::Local { data_dir: dir.clone() };
        Some(dir)
    } else {
        None
    };
    let result = connect_and_run(&options).await;
    if let Some(dir) = temp {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

async fn connect_and_run(options: &Options) -> Result<(), TuiError> {
    let conn = Connection::open(&options.connect).await?;
    if options.demo {
        eprintln!("Loading the demo CRDs and resources into {}…", conn.origin());
        if let Err(e) = demo::load(conn.client(), |_| {}).await {
            conn.close().await;
            return Err(TuiError::Demo(e));
        }
    }
    let namespaces =
        if options.all_namespaces { Namespaces::All } else { Namespaces::One(conn.namespace().to_string()) };
    let mut state = State::new(
        target_of(conn.origin(), &options.connect.target),
        namespaces,
        options.readonly,
        Theme { color: options.color },
        Timestamp::now(),
    );
    state.journal_root = crate::migrate::journal::default_root();
    let mut terminal = enter()?;
    let result = Loop::new(conn, options.connect.clone()).run(&mut terminal, state).await;
    leave();
    let conn = result?;
    conn.close().await;
    Ok(())
}

/// What the header says for a connection to `origin`, made as `target` says.
pub fn target_of(origin: &Origin, target: &ClusterTarget) -> Target {
    let (connection, context, server) = match origin {
        Origin::Live { context, server } => (Conn::Live, context.clone(), server.clone()),
        Origin::Local { data_dir } => (Conn::Local, "local".into(), data_dir.display().to_string()),
        Origin::Served { server, .. } => (Conn::Local, "local (served)".into(), server.clone()),
        Origin::Memory => (Conn::Local, "local".into(), "in memory".into()),
    };
    Target { connection, context, server, shell: crate::cluster::shell::command(target) }
}

fn enter() -> io::Result<ratatui::DefaultTerminal> {
    let terminal = ratatui::try_init()?;
    crossterm::execute!(io::stdout(), EnableMouseCapture)?;
    Ok(terminal)
}

fn leave() {
    let _ = crossterm::execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
}

/// Gives the terminal back to the shell (for the editor) and takes it again.
fn suspend() {
    leave();
}

fn resume(terminal: &mut ratatui::DefaultTerminal) -> io::Result<()> {
    crossterm::terminal::enable_raw_mode()?;
    crossterm::execute!(io::stdout(), crossterm::terminal::EnterAlternateScreen, EnableMouseCapture)?;
    // `clear` would ask the terminal for the cursor position, whose answer can queue
    // behind keys typed meanwhile; a resize redraws everything without asking.
    let size = terminal.size()?;
    terminal.resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))
}

/// The loop's inputs beside the terminal.
struct Loop {
    conn: Connection,
    options: ConnectOptions,
    tx: mpsc::UnboundedSender<Msg>,
    rx: mpsc::UnboundedReceiver<Msg>,
    watch: Option<BoxStream<'static, Msg>>,
    /// The registrations screen's watch of every CRD, once the first list is in.
    crds: Option<BoxStream<'static, Msg>>,
    /// The event stream's watch of whole objects, while its screen is open.
    events: Option<BoxStream<'static, Msg>>,
    /// The migration wizard's IO (the task that owns a migration, while one is open).
    driver: Driver,
}

/// The next message of the watch, or never when there is none.
async fn next_watched(watch: &mut Option<BoxStream<'static, Msg>>) -> Option<Msg> {
    match watch {
        Some(w) => w.next().await,
        None => std::future::pending().await,
    }
}

impl Loop {
    fn new(conn: Connection, options: ConnectOptions) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Loop { conn, options, tx, rx, watch: None, crds: None, events: None, driver: Driver::default() }
    }

    /// Runs until quit; gives the connection back for closing.
    async fn run(mut self, terminal: &mut ratatui::DefaultTerminal, mut state: State) -> Result<Connection, TuiError> {
        let size = terminal.size()?;
        state.size = (size.width, size.height);
        let mut events = Some(EventStream::new());
        let mut tick = tokio::time::interval(TICK);
        for effect in
            [Effect::LoadRegistrations, Effect::LoadNamespaces].into_iter().chain(wizard::update::startup(&state))
        {
            self.perform(effect, terminal, &mut events).await?;
        }
        let mut pacer = Pacer::default();
        pacer.input();
        while !state.quit {
            if pacer.due(Instant::now()) {
                state.prepare();
                terminal.draw(|f| view::draw(f, &state))?;
                pacer.drawn(Instant::now());
            }
            let held = pacer.deadline();
            let effects = tokio::select! {
                event = next_event(&mut events) => {
                    pacer.input();
                    match event {
                        Some(Ok(event)) => on_event(&mut state, event),
                        Some(Err(e)) => return Err(e.into()),
                        None => { state.quit = true; vec![] }
                    }
                },
                Some(msg) = next_watched(&mut self.watch) => self.drain(&mut state, msg, &mut pacer),
                Some(msg) = next_watched(&mut self.crds) => self.drain(&mut state, msg, &mut pacer),
                Some(msg) = next_watched(&mut self.events) => self.drain(&mut state, msg, &mut pacer),
                Some(msg) = self.rx.recv() => self.drain(&mut state, msg, &mut pacer),
                _ = tick.tick() => {
                    pacer.changed();
                    update::apply(&mut state, Msg::Tick(Timestamp::now()))
                },
                // A change held back for the frame period is drawn when it ends.
                _ = sleep_until(held), if held.is_some() => vec![],
            };
            for effect in effects {
                // Effects the loop runs itself (the editor) take the terminal: draw after.
                pacer.input();
                self.perform(effect, terminal, &mut events).await?;
            }
        }
        Ok(self.conn)
    }

    /// Applies a message and every one already waiting, so a burst of watch events costs
    /// one frame.
    fn drain(&mut self, state: &mut State, first: Msg, pacer: &mut Pacer) -> Vec<Effect> {
        // An answer the user waits for (an open screen's first list, a save) is drawn as
        // soon as a key would be; a stream of watch events at the frame rate.
        if matches!(first, Msg::Watch { .. } | Msg::ObjectEvent { .. } | Msg::CrdChanged(_) | Msg::Counted { .. }) {
            pacer.changed();
        } else {
            pacer.input();
        }
        let mut effects = update::apply(state, first);
        for _ in 0..10_000 {
            let next = match self.rx.try_recv() {
                Ok(m) => m,
                Err(_) => match [&mut self.watch, &mut self.crds, &mut self.events]
                    .into_iter()
                    .find_map(|w| w.as_mut().and_then(|w| w.next().now_or_never().flatten()))
                {
                    Some(m) => m,
                    None => break,
                },
            };
            effects.extend(update::apply(state, next));
        }
        effects
    }

    async fn perform(
        &mut self,
        effect: Effect,
        terminal: &mut ratatui::DefaultTerminal,
        events: &mut Option<EventStream>,
    ) -> Result<(), TuiError> {
        let client = self.conn.client().clone();
        match effect {
            Effect::LoadTable { watch, kind, namespaces, selector } => {
                let ns = namespaces.one().map(String::from);
                self.watch = Some(TableWatch::new(client, kind, ns, selector, watch).into_stream());
            }
            Effect::StopWatch => self.watch = None,
            Effect::WatchEvents { stream, kind, what } => {
                self.events = Some(EventWatch::new(client, kind, what, stream).into_stream());
            }
            Effect::StopEvents => self.events = None,
            Effect::WatchRegistrations => {
                if self.crds.is_none() {
                    self.crds = Some(crd_changes(client));
                }
            }
            Effect::Edit { kind, key, part } => {
                let msg = match runtime::prepare_edit(&client, &kind, &key, part).await {
                    Ok((against, base, kept)) => {
                        let job = EditJob { kind, key, part, kept, base: base.clone(), edited: base };
                        edit_until_done(&client, job, against, None, terminal, events).await?
                    }
                    Err(e) => Msg::Error(e),
                };
                let _ = self.tx.send(msg);
            }
            Effect::EditAgain(refused) => {
                let msg = match runtime::reread(&client, &refused).await {
                    Ok(against) => {
                        let Refused { kind, key, part, kept, base, .. } = *refused.clone();
                        let job = EditJob { kind, key, part, kept, base: base.clone(), edited: base };
                        edit_until_done(&client, job, against, Some(*refused), terminal, events).await?
                    }
                    Err(e) => Msg::Error(format!("{e}; your edit is kept in {}", refused.kept.display())),
                };
                let _ = self.tx.send(msg);
            }
            Effect::ApplyAs { kind, key } => {
                let msg = apply_as(&client, &kind, &key, terminal, events).await?;
                let _ = self.tx.send(msg);
            }
            Effect::EditCel { crd, rule, text } => {
                let result = edit_text(&text, &crd, terminal, events).await?;
                let _ = self.tx.send(Msg::CelEdited { crd, rule, result });
            }
            Effect::SwitchContext(context) => self.switch_context(context).await,
            Effect::Wizard(WizardEffect::Compose { crd, text }) => {
                let composed = match driver::prepare_compose(&crd, &text) {
                    Ok(path) => match in_editor(&path, terminal, events).await? {
                        Ok(()) => driver::finish_compose(&path),
                        Err(e) => Err(format!("{e}; the new CRD is kept in {}", path.display())),
                    },
                    Err(e) => Err(e),
                };
                let _ = self.tx.send(Msg::Wizard(WizardMsg::Composed(composed)));
            }
            Effect::Wizard(effect) => self.driver.perform(&client, self.conn.origin(), &self.tx, effect),
            other => runtime::spawn(&client, &self.tx, other),
        }
        Ok(())
    }

    async fn switch_context(&mut self, context: String) {
        let ClusterTarget::Live { kubeconfig, .. } = &self.options.target else {
            let _ = self.tx.send(Msg::Error("the local engine has one context; :ctx works on live clusters".into()));
            return;
        };
        let mut options = self.options.clone();
        options.target = ClusterTarget::Live { kubeconfig: kubeconfig.clone(), context: Some(context) };
        options.namespace = None;
        match Connection::open(&options).await {
            Ok(conn) => {
                self.watch = None;
                self.crds = None;
                self.events = None;
                let namespaces = Namespaces::One(conn.namespace().to_string());
                let target = target_of(conn.origin(), &options.target);
                let old = std::mem::replace(&mut self.conn, conn);
                old.close().await;
                self.options = options;
                let _ = self.tx.send(Msg::Connected(target, namespaces));
            }
            Err(e) => {
                let _ = self.tx.send(Msg::Error(e.to_string()));
            }
        }
    }
}

/// Runs the editor on an edit and saves it; while the server refuses it, opens the editor
/// again with the reason on top (`refused`, when it starts refused), as `kubectl edit`
/// does. An editor quit without a change abandons the edit; the file stays.
async fn edit_until_done(
    client: &kube::Client,
    job: EditJob,
    mut against: kube::api::DynamicObject,
    mut refused: Option<Refused>,
    terminal: &mut ratatui::DefaultTerminal,
    events: &mut Option<EventStream>,
) -> Result<Msg, TuiError> {
    let kept = job.kept.clone();
    loop {
        let written = match &refused {
            Some(r) => match runtime::write_refused(r) {
                Ok(text) => Some(text),
                Err(e) => return Ok(Msg::Error(e)),
            },
            None => None,
        };
        if let Err(e) = in_editor(&kept, terminal, events).await? {
            return Ok(Msg::Error(format!("{e}; your edit is kept in {}", kept.display())));
        }
        if let (Some(r), Some(written)) = (&refused, written)
            && std::fs::read_to_string(&kept).is_ok_and(|now| now == written)
        {
            return Ok(Msg::Error(format!("edit abandoned ({}); your copy is kept in {}", r.error, kept.display())));
        }
        match runtime::finish_edit(client, against.clone(), job.clone()).await {
            Msg::EditRefused(r) => {
                against = match runtime::reread(client, &r).await {
                    Ok(current) => current,
                    Err(e) => return Ok(Msg::Error(format!("{e}; your edit is kept in {}", kept.display()))),
                };
                refused = Some(*r);
            }
            other => return Ok(other),
        }
    }
}

/// "Apply as": the editor on an apply document for the object; saved, the document goes
/// to the server as a dry run by the manager it names. An emptied document cancels.
async fn apply_as(
    client: &kube::Client,
    kind: &ResourceType,
    key: &ObjKey,
    terminal: &mut ratatui::DefaultTerminal,
    events: &mut Option<EventStream>,
) -> Result<Msg, TuiError> {
    let prepared = match crate::tui::apply_as::prepare(client, kind, key).await {
        Ok(prepared) => prepared,
        Err(e) => return Ok(Msg::Error(e)),
    };
    if let Err(e) = in_editor(&prepared.path, terminal, events).await? {
        return Ok(Msg::Error(format!("{e}; the document is kept in {}", prepared.path.display())));
    }
    Ok(crate::tui::apply_as::finish(client, kind, key, prepared).await)
}

/// Runs the editor on a temporary file holding `text` and gives back what was saved.
async fn edit_text(
    text: &str,
    hint: &str,
    terminal: &mut ratatui::DefaultTerminal,
    events: &mut Option<EventStream>,
) -> Result<Result<String, String>, TuiError> {
    let path = crate::cluster::editor::temp_path(&format!("cel-{hint}"));
    if let Err(e) = crate::cluster::editor::write_private(&path, text) {
        return Ok(Err(format!("cannot write {}: {e}", path.display())));
    }
    let edited = in_editor(&path, terminal, events).await?;
    let result = edited.and_then(|()| std::fs::read_to_string(&path).map_err(|e| e.to_string()));
    let _ = std::fs::remove_file(&path);
    Ok(result)
}

/// Runs the editor on `path` with the terminal handed over, and takes it back.
async fn in_editor(
    path: &std::path::Path,
    terminal: &mut ratatui::DefaultTerminal,
    events: &mut Option<EventStream>,
) -> Result<Result<(), String>, TuiError> {
    // The event reader would take the editor's keys: stop it while the editor runs.
    *events = None;
    suspend();
    let edited = runtime::run_editor(path).await;
    resume(terminal)?;
    *events = Some(EventStream::new());
    Ok(edited)
}

/// Sleeps until `at` (never when there is none).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

async fn next_event(events: &mut Option<EventStream>) -> Option<io::Result<Event>> {
    match events {
        Some(e) => e.next().await,
        None => std::future::pending().await,
    }
}

/// Turns one terminal event into the effects of its action.
pub fn on_event(state: &mut State, event: Event) -> Vec<Effect> {
    let action = match event {
        // Esc and a key typed fast arrive as one Alt+key sequence: take them as both.
        Event::Key(mut key) if key.modifiers == KeyModifiers::ALT => {
            let mut effects = on_event(state, Event::Key(KeyEvent::from(KeyCode::Esc)));
            key.modifiers = KeyModifiers::NONE;
            effects.extend(on_event(state, Event::Key(key)));
            return effects;
        }
        Event::Key(key) => keys::action_for(state, &key),
        Event::Mouse(mouse) => keys::mouse_action(&mouse),
        Event::Resize(w, h) => {
            state.size = (w, h);
            None
        }
        _ => None,
    };
    action.map(|a| update::update(state, a)).unwrap_or_default()
}
