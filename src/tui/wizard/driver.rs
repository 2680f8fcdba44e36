//! The wizard's IO: the plan, the journal, the editor's file, and the task that owns the
//! [`Migration`]. The task takes one command at a time (run the next step, switch to the
//! roll-back, verify) and sends what happened back as [`Msg`]s — the step's [`Event`]s
//! first, through the same channel, so the screen shows progress while a step runs and
//! never waits for one. The steps, their order and the journal are the library's.

use super::{Failure, Journal, Summary, WizardEffect, WizardMsg};
use crate::cluster::Origin;
use crate::cluster::editor::write_private;
use crate::cluster::identity::identify;
use crate::migrate::journal;
use crate::migrate::{Event, Input, MigrateError, Migration, Request, Source, report};
use crate::tui::action::Msg;
use crate::tui::runtime::edits_dir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// What the migration's task is asked to do.
#[derive(Debug, Clone, PartialEq)]
enum Command {
    Step,
    Rollback(Option<String>),
    Verify,
}

/// The wizard's side of the runtime: the channel to the migration's task, while there is one.
#[derive(Debug, Default)]
pub struct Driver {
    commands: Option<UnboundedSender<Command>>,
}

fn send(tx: &UnboundedSender<Msg>, msg: WizardMsg) {
    let _ = tx.send(Msg::Wizard(msg));
}

impl Driver {
    /// Performs an effect on the cluster `client` reaches through `origin`; `Compose` is the
    /// loop's (it needs the terminal) and is ignored here. Journals are this cluster's
    /// alone: those of other clusters (or that record none) are never offered or opened.
    pub fn perform(&mut self, client: &kube::Client, origin: &Origin, tx: &UnboundedSender<Msg>, effect: WizardEffect) {
        match effect {
            WizardEffect::FindJournals { root, crd } => {
                let (client, origin, tx) = (client.clone(), origin.clone(), tx.clone());
                detach(move || async move {
                    let found = match identify(&client, &origin).await {
                        Ok(here) => journal::journals_here(&root, &here).0,
                        Err(e) => {
                            let _ = tx.send(Msg::Error(format!(
                                "cannot tell which cluster this is, so no unfinished migration is offered: {e}"
                            )));
                            vec![]
                        }
                    };
                    send(&tx, WizardMsg::Journals { crd, found });
                });
            }
            WizardEffect::Plan { from, to, controllers } => {
                let (client, tx) = (client.clone(), tx.clone());
                detach(move || async move {
                    let planned = plan(&client, &from, &to, controllers).await.map(Box::new).map_err(|e| e.to_string());
                    send(&tx, WizardMsg::Planned(planned));
                });
            }
            WizardEffect::Start { plan, root } => {
                let origin = origin.clone();
                self.take(client, tx, false, move |client| async move {
                    let here = identify(&client, &origin).await?;
                    let dir = journal::fresh_dir(&root, &plan.id, &here)?;
                    Migration::create(&plan, &dir, &here)
                });
            }
            WizardEffect::Open { dir, rollback } => {
                let origin = origin.clone();
                self.take(client, tx, rollback, move |client| async move {
                    Migration::open_here(&dir, &identify(&client, &origin).await?, false)
                });
            }
            WizardEffect::Step => self.command(tx, Command::Step),
            WizardEffect::Rollback { reason } => self.command(tx, Command::Rollback(reason)),
            WizardEffect::Verify => self.command(tx, Command::Verify),
            WizardEffect::Close => self.commands = None,
            WizardEffect::Compose { .. } => {}
        }
    }

    /// Starts the migration's task on the migration `make` creates or opens (switched to
    /// its roll-back first, with `rollback`), or says why there is no migration.
    fn take<F, Fut>(&mut self, client: &kube::Client, tx: &UnboundedSender<Msg>, rollback: bool, make: F)
    where
        F: FnOnce(kube::Client) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Migration, MigrateError>>,
    {
        let (commands, rx) = unbounded_channel();
        self.commands = Some(commands);
        let (client, tx) = (client.clone(), tx.clone());
        detach(move || async move {
            match make(client.clone()).await {
                Ok(m) => own(client, m, rollback, rx, tx).await,
                Err(e) => send(&tx, WizardMsg::Ready(Err(e.to_string()))),
            }
        });
    }

    fn command(&self, tx: &UnboundedSender<Msg>, command: Command) {
        let sent = self.commands.as_ref().is_some_and(|c| c.send(command).is_ok());
        if !sent {
            let _ = tx.send(Msg::Error("the migration is not open any more: press m on its CRD to resume it".into()));
        }
    }
}

/// Runs the future `make` gives on a thread of the blocking pool, driven by the runtime's
/// handle. The library's futures are `Send` in fact, but the compiler cannot prove it for
/// the closures over references they hand to stream combinators (the higher-ranked
/// lifetime limitation, rust-lang/rust#102211), so `tokio::spawn` refuses them; a future
/// made and polled on one thread needs no such proof.
fn detach<F, Fut>(make: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let handle = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || handle.block_on(make()));
}

/// Reads the new CRD's file and plans, as `kubectl crd migrate plan --from CRD --to FILE
/// --controller ...`.
async fn plan(
    client: &kube::Client,
    from: &str,
    to: &Path,
    controllers: Vec<String>,
) -> Result<crate::migrate::Plan, MigrateError> {
    let request = Request {
        from: Source::Crd { name: from.to_string() },
        to: Some(Input::read(&expand_home(to))?),
        tpr_names: None,
        controllers,
        versions: BTreeMap::new(),
        into_namespace: None,
        validate: true,
    };
    Migration::plan(client, &request).await
}

/// `~/x` as the shell would read it.
fn expand_home(path: &Path) -> PathBuf {
    match (path.strip_prefix("~"), dirs::home_dir()) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// The task that owns the migration: says it is ready (switched to its roll-back first,
/// with `rollback`), then runs one command at a time, until the wizard lets go.
async fn own(
    client: kube::Client,
    mut m: Migration,
    rollback: bool,
    mut commands: UnboundedReceiver<Command>,
    tx: UnboundedSender<Msg>,
) {
    let ready = if rollback { rollback_of(&client, &mut m, None).await } else { WizardMsg::Ready(Ok(Journal::of(&m))) };
    let taken = matches!(ready, WizardMsg::Ready(Ok(_)));
    send(&tx, ready);
    if !taken {
        return;
    }
    while let Some(command) = commands.recv().await {
        let msg = match command {
            Command::Step => step(&client, &mut m, &tx).await,
            Command::Rollback(reason) => rollback_of(&client, &mut m, reason).await,
            Command::Verify => WizardMsg::Verified(verify(&client, &m).await),
        };
        send(&tx, msg);
    }
}

/// Switches the migration to its roll-back, when what that needs holds.
async fn rollback_of(client: &kube::Client, m: &mut Migration, reason: Option<String>) -> WizardMsg {
    WizardMsg::Ready(m.start_rollback(client, reason).await.map(|()| Journal::of(m)).map_err(|e| e.to_string()))
}

async fn step(client: &kube::Client, m: &mut Migration, tx: &UnboundedSender<Msg>) -> WizardMsg {
    let Some(step) = m.next_step() else {
        return WizardMsg::Ready(Ok(Journal::of(m)));
    };
    let started = Instant::now();
    let events = tx.clone();
    let report = move |e: Event| send(&events, WizardMsg::Event(e));
    let result = match m.run_step(client, &report).await {
        Ok(outcome) => Ok(outcome.summary),
        Err(e) => Err(Failure { undo: m.refusal_undoes(&e), message: e.to_string() }),
    };
    WizardMsg::Stepped { step, result, took: started.elapsed(), journal: Journal::of(m) }
}

/// The summary the CLI prints at the end, with a fresh verification (when there is a
/// backup to verify against: a roll-back of a run stopped before it has none).
async fn verify(client: &kube::Client, m: &Migration) -> Result<Summary, String> {
    let mut lines = report::summary_lines(m.state(), m.dir());
    if m.state().backup.is_none() {
        return Ok(Summary { lines, differences: 0 });
    }
    let v = m.verify(client).await.map_err(|e| e.to_string())?;
    lines.push(String::new());
    lines.extend(report::verification_lines(&v));
    Ok(Summary { lines, differences: v.differences.len() })
}

/// Writes the new CRD's starting text for the editor; the file it is in.
pub fn prepare_compose(crd: &str, text: &str) -> Result<PathBuf, String> {
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
    let dir = edits_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("new-crd-for-{crd}-{stamp}.yaml"));
    write_private(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// What the editor left: the file to plan with, or `None` when only comments are left.
pub fn finish_compose(path: &Path) -> Result<Option<PathBuf>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    match crate::cluster::edit::parse(&text) {
        Ok(None) => {
            let _ = std::fs::remove_file(path);
            Ok(None)
        }
        Ok(Some(_)) => Ok(Some(path.to_path_buf())),
        Err(e) => Err(format!("cannot read the new CRD ({e}); it is kept in {}", path.display())),
    }
}
