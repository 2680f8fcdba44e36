//! `kubectl crd migrate ...`: the thin command-line layer over [`crate::migrate`] — it reads the
//! files, opens the session, prints the plan, asks before destructive steps (dialoguer,
//! unless `--yes`), draws progress bars (indicatif, on standard error, only in a
//! terminal), prints a summary, and maps outcomes to exit codes (1: refused, failed or
//! differences found; 2: wrong command line or input).

use super::CliError;
use super::args::{ConvertArgs, JournalArgs, MigrateAction, MigrateArgs, OutputFormat};
use super::config::Config;
use super::output::{json, yaml};
use super::session::Session;
use crate::cluster::identity::identify;
use crate::cluster::{ClusterIdentity, shell};
use crate::migrate::MigrateError;
use crate::migrate::convert::{self, RegistrationDoc, TprNames};
use crate::migrate::journal::{self, JournalState, Phase};
use crate::migrate::plan::{Input, Plan, Request, Source};
use crate::migrate::progress::Event;
use crate::migrate::report;
use crate::migrate::steps::Migration;
use crate::migrate::verify::Verification;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// Runs `kubectl crd migrate <action>`.
pub fn run(config: &Config, action: MigrateAction, out: &mut dyn Write) -> anyhow::Result<()> {
    if let MigrateAction::Convert(args) = &action {
        return convert_cmd(args, out);
    }
    let yes = match &action {
        MigrateAction::Run(a) => a.yes,
        MigrateAction::Resume(a) | MigrateAction::Rollback(a) => a.yes,
        _ => true,
    };
    if !yes && !interactive() {
        return Err(CliError::Usage(
            "this migrate command asks for confirmation before destructive steps; run it in a terminal, or pass --yes"
                .into(),
        )
        .into());
    }
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let session = Session::open(config, config.target.clone()).await?;
        let result = match action {
            MigrateAction::Plan(args) => plan_cmd(&session, &args, out).await,
            MigrateAction::Convert(_) => Ok(()),
            action => with_journal(&session, action, out).await,
        };
        session.close().await;
        result
    })
}

/// The commands that keep a journal, which belongs to the cluster it was made on.
async fn with_journal(s: &Session, action: MigrateAction, out: &mut dyn Write) -> anyhow::Result<()> {
    let here = identify(s.client(), s.conn.origin()).await.map_err(|e| s.err(e))?;
    match action {
        MigrateAction::Run(args) => run_cmd(s, &here, &args, out).await,
        MigrateAction::Resume(args) => resume_cmd(s, &here, &args, out).await,
        MigrateAction::Verify(args) => verify_cmd(s, &here, &args, out).await,
        MigrateAction::Rollback(args) => rollback_cmd(s, &here, &args, out).await,
        MigrateAction::Plan(_) | MigrateAction::Convert(_) => Ok(()),
    }
}

fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// A library error as the CLI reports it: usage faults exit 2.
fn cli_err(e: MigrateError) -> anyhow::Error {
    if e.is_usage() {
        match e {
            MigrateError::Cluster(c) => c.into(),
            other => CliError::Usage(other.to_string()).into(),
        }
    } else {
        e.into()
    }
}

fn confirm(yes: bool, prompt: &str) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    let answer = tokio::task::block_in_place(|| ask(&mut std::io::stdin().lock(), &mut std::io::stderr(), prompt));
    answer.map_err(|e| anyhow::anyhow!("cannot ask for confirmation: {e}"))
}

/// Asks a yes/no question and reads the whole line of the answer (no unless it is `y` or
/// `yes`). A prompt that took one key would leave the Enter typed after it to answer the
/// next question — "no", stopping a migration half-way.
fn ask(input: &mut dyn BufRead, prompt_to: &mut dyn Write, prompt: &str) -> std::io::Result<bool> {
    write!(prompt_to, "{prompt} [y/N] ")?;
    prompt_to.flush()?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        // End of input: no answer is no, on a line of its own.
        writeln!(prompt_to)?;
        return Ok(false);
    }
    Ok(matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

fn request(args: &MigrateArgs, validate: bool) -> anyhow::Result<Request> {
    let from_path = Path::new(&args.from);
    let from = if !args.data.is_empty() || from_path.is_file() {
        let registration = Input::read(from_path).map_err(cli_err)?;
        let data = args.data.iter().map(|p| Input::read(p)).collect::<Result<_, _>>().map_err(cli_err)?;
        Source::Files { registration, data }
    } else {
        Source::Crd { name: args.from.clone() }
    };
    let to = args.to.as_deref().map(Input::read).transpose().map_err(cli_err)?;
    let mut versions = BTreeMap::new();
    for m in &args.map_version {
        let Some((old, new)) = m.split_once('=').filter(|(o, n)| !o.is_empty() && !n.is_empty()) else {
            return Err(CliError::Usage(format!("invalid --map-version {m:?}: write OLD=NEW, e.g. v1beta1=v1")).into());
        };
        versions.insert(old.to_string(), new.to_string());
    }
    Ok(Request {
        from,
        to,
        tpr_names: None,
        controllers: args.controller.clone(),
        versions,
        into_namespace: args.into_namespace.clone(),
        validate,
    })
}

async fn plan_cmd(s: &Session, args: &MigrateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = request(args, true)?;
    let plan = Migration::plan(s.client(), &request).await.map_err(cli_err)?;
    match s.config.output {
        OutputFormat::Json => write!(out, "{}", json(&plan)?)?,
        OutputFormat::Yaml => write!(out, "{}", yaml(&plan)?)?,
        _ => print_plan(&plan, out)?,
    }
    if plan.is_blocked() {
        return Err(MigrateError::refused(format!("the migration cannot start: {}", plan.problems.join("; "))).into());
    }
    if !matches!(s.config.output, OutputFormat::Json | OutputFormat::Yaml) {
        let run = format!("{} migrate run {}", kubectl_crd(s), rerun_args(args));
        writeln!(out, "\nNothing was changed. Run it with: {run}")?;
    }
    Ok(())
}

/// `kubectl crd` with the connection flags given, for the commands we print.
fn kubectl_crd(s: &Session) -> String {
    shell::command(&s.config.target)
}

/// The flags of `plan` again, as `run` takes them, quoted for the shell.
fn rerun_args(args: &MigrateArgs) -> String {
    let from = if Path::new(&args.from).is_file() {
        shell::quote_path(Path::new(&args.from))
    } else {
        shell::quote(&args.from)
    };
    let mut words = vec![format!("--from {from}")];
    words.extend(args.data.iter().map(|d| format!("--data {}", shell::quote_path(d))));
    words.extend(args.to.iter().map(|to| format!("--to {}", shell::quote_path(to))));
    words.extend(args.journal.iter().map(|j| format!("--journal {}", shell::quote_path(j))));
    words.extend(args.controller.iter().map(|c| format!("--controller {}", shell::quote(c))));
    words.extend(args.map_version.iter().map(|m| format!("--map-version {}", shell::quote(m))));
    words.extend(args.into_namespace.iter().map(|ns| format!("--into-namespace {}", shell::quote(ns))));
    words.join(" ")
}

fn print_plan(plan: &Plan, out: &mut dyn Write) -> anyhow::Result<()> {
    write_lines(out, &report::plan_lines(plan, report::Driver::Cli))
}

fn write_lines(out: &mut dyn Write, lines: &[String]) -> anyhow::Result<()> {
    for line in lines {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The journal directory a new run uses: `--journal`, or a fresh one under the data directory.
fn new_journal_dir(s: &Session, here: &ClusterIdentity, args: &MigrateArgs, plan: &Plan) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &args.journal {
        return Ok(dir.clone());
    }
    let root = journal::default_root().ok_or_else(|| {
        CliError::Usage("cannot find a data directory for the journal; give one with --journal DIR".into())
    })?;
    journal::fresh_dir(&root, &plan.id, here).map_err(|e| with_commands(s, e))
}

/// A library error, with the commands that go on when it is an unfinished journal in the way.
fn with_commands(s: &Session, e: MigrateError) -> anyhow::Error {
    match &e {
        MigrateError::Unfinished { dir, .. } => {
            MigrateError::State(format!("{e}; {}", report::journal_commands(dir, &kubectl_crd(s)))).into()
        }
        _ => cli_err(e),
    }
}

async fn run_cmd(s: &Session, here: &ClusterIdentity, args: &MigrateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut request = request(args, false)?;
    let mut plan = Migration::plan(s.client(), &request).await.map_err(cli_err)?;
    if let (Some(names), None) = (plan.tpr_names.clone(), &request.to)
        && let Some(corrected) = confirm_tpr_names(&names, args.yes)?
    {
        request.tpr_names = Some(corrected);
        plan = Migration::plan(s.client(), &request).await.map_err(cli_err)?;
    }
    print_plan(&plan, out)?;
    if plan.is_blocked() {
        return Err(MigrateError::refused(format!("the migration cannot start: {}", plan.problems.join("; "))).into());
    }
    let dir = new_journal_dir(s, here, args, &plan)?;
    if !confirm(args.yes, &report::start_question(&plan))? {
        return Err(MigrateError::State("not started: nothing was changed".into()).into());
    }
    let mut m = Migration::create(&plan, &dir, here).map_err(|e| with_commands(s, e))?;
    writeln!(out, "\nJournal: {}", dir.display())?;
    drive(s, &mut m, args.yes, out).await?;
    summary(&m, started, out).await
}

/// Shows the names derived from a TPR and asks to confirm them; `Some` with corrections.
fn confirm_tpr_names(names: &TprNames, yes: bool) -> anyhow::Result<Option<TprNames>> {
    eprintln!(
        "The ThirdPartyResource's objects become kind {} (plural {}, singular {}) in group {}.",
        names.kind, names.plural, names.singular, names.group
    );
    if yes || confirm(false, "Use these names?")? {
        return Ok(None);
    }
    let ask = |prompt: &str, default: &str| {
        tokio::task::block_in_place(|| {
            dialoguer::Input::<String>::new().with_prompt(prompt).default(default.to_string()).interact_text()
        })
        .map_err(|e| anyhow::anyhow!("cannot ask: {e}"))
    };
    let kind = ask("Kind", &names.kind)?;
    let derived = convert::names_for_kind(&names.group, &kind);
    let plural = ask("Plural", &derived.plural)?;
    let singular = ask("Singular", &derived.singular)?;
    Ok(Some(TprNames { group: names.group.clone(), kind, plural, singular }))
}

/// Runs the journal's steps to the end of the phase, asking before destructive ones. A
/// refusal going forward undoes what the run changed and reports it.
async fn drive(s: &Session, m: &mut Migration, yes: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let refusal_undo = m.state().refused.is_some();
    while let Some(step) = m.next_step() {
        if let Some(prompt) = report::confirmation(step, m.state())
            && !refusal_undo
            && !confirm(yes, &prompt)?
        {
            return Err(MigrateError::State(report::stopped_hint(step, m.dir(), &kubectl_crd(s))).into());
        }
        let bars = Bars::default();
        let step_started = Instant::now();
        let on_event = |e: Event| bars.on(e);
        let result = m.run_step(s.client(), &on_event).await;
        bars.done();
        for note in bars.notes() {
            writeln!(out, "  {note}")?;
        }
        match result {
            Ok(outcome) => {
                writeln!(out, "✓ {step}: {} ({:.1}s)", outcome.summary, step_started.elapsed().as_secs_f64())?
            }
            Err(e) if m.refusal_undoes(&e) => {
                writeln!(out, "✗ {step}: {e}")?;
                writeln!(out, "Undoing what the run changed (nothing was deleted):")?;
                m.start_rollback(s.client(), Some(e.to_string())).await.map_err(cli_err)?;
                Box::pin(drive(s, m, true, out)).await?;
                return Err(e.into());
            }
            Err(MigrateError::Differences(n)) => {
                writeln!(out, "✗ {step}: {n} difference(s)")?;
                if let Ok(v) = m.verify(s.client()).await {
                    print_verification(&v, out)?;
                }
                return Err(MigrateError::Differences(n).into());
            }
            Err(e) => {
                writeln!(out, "✗ {step}: {e}")?;
                writeln!(out, "{}", report::resume_hint(m.dir(), &kubectl_crd(s)))?;
                return Err(cli_err(e));
            }
        }
    }
    Ok(())
}

async fn summary(m: &Migration, started: Instant, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "\nDone in {:.1}s.", started.elapsed().as_secs_f64())?;
    write_lines(out, &report::summary_lines(m.state(), m.dir()))
}

/// The journal a command works on: `--journal`, or the one migration of this cluster in
/// progress (else the one there is). Journals of other clusters are not looked at; those
/// that record no cluster are named, not taken.
fn find_journal(args: &JournalArgs, want_unfinished: bool, here: &ClusterIdentity) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &args.journal {
        return Ok(dir.clone());
    }
    let root = journal::default_root().ok_or_else(|| CliError::Usage("give the journal with --journal DIR".into()))?;
    let (all, unknown) = journal::journals_here(&root, here);
    let unfinished: Vec<&(PathBuf, JournalState)> = all.iter().filter(|(_, s)| !s.phase.finished()).collect();
    let pick: Vec<&(PathBuf, JournalState)> =
        if !unfinished.is_empty() || want_unfinished { unfinished } else { all.iter().collect() };
    match pick.as_slice() {
        [(dir, _)] => Ok(dir.clone()),
        [] => {
            let older = if unknown > 0 {
                format!(
                    " ({unknown} journal(s) there were written by an older kubectl-crd and do not record their cluster: give one made on this cluster with --journal DIR --this-cluster)"
                )
            } else {
                String::new()
            };
            Err(CliError::Usage(format!(
                "no migration {}of this cluster ({here}) under {}{older}; give its journal with --journal DIR",
                if want_unfinished { "in progress " } else { "" },
                root.display()
            ))
            .into())
        }
        many => {
            let list: Vec<String> = many.iter().map(|(d, s)| format!("{} ({:?})", d.display(), s.phase)).collect();
            Err(CliError::Usage(format!("several migrations; choose one with --journal: {}", list.join(", "))).into())
        }
    }
}

/// Opens the journal for a run on `here` (see [`Migration::open_here`]).
fn open(dir: &Path, here: &ClusterIdentity, args: &JournalArgs) -> anyhow::Result<Migration> {
    Migration::open_here(dir, here, args.this_cluster).map_err(|e| match e {
        MigrateError::Journal { .. } => CliError::Usage(e.to_string()).into(),
        other => cli_err(other),
    })
}

async fn resume_cmd(
    s: &Session,
    here: &ClusterIdentity,
    args: &JournalArgs,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let dir = find_journal(args, true, here)?;
    let mut m = open(&dir, here, args)?;
    let Some(next) = m.next_step() else {
        writeln!(out, "The migration in {} is {:?}: nothing to resume.", dir.display(), m.state().phase)?;
        return Ok(());
    };
    writeln!(out, "Resuming {} ({:?}) at {next}; journal {}", m.state().id, m.state().phase, dir.display())?;
    drive(s, &mut m, args.yes, out).await?;
    summary(&m, started, out).await
}

async fn rollback_cmd(
    s: &Session,
    here: &ClusterIdentity,
    args: &JournalArgs,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let dir = find_journal(args, false, here)?;
    let mut m = open(&dir, here, args)?;
    if m.state().phase == Phase::Forward || m.state().phase == Phase::Completed {
        let prompt = format!(
            "Roll back the migration of {} to {} from its backup?",
            m.state().old_crd_name,
            m.state().new_crd_name
        );
        if !confirm(args.yes, &prompt)? {
            return Err(MigrateError::State("not rolled back: nothing was changed".into()).into());
        }
    }
    m.start_rollback(s.client(), None).await.map_err(cli_err)?;
    let steps: Vec<&str> = m.state().rollback.iter().map(|r| r.step.name()).collect();
    writeln!(
        out,
        "Rolling back {}: {}",
        m.state().id,
        if steps.is_empty() { "nothing to undo".into() } else { steps.join(", ") }
    )?;
    drive(s, &mut m, args.yes, out).await?;
    summary(&m, started, out).await
}

async fn verify_cmd(
    s: &Session,
    here: &ClusterIdentity,
    args: &JournalArgs,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let dir = find_journal(args, false, here)?;
    let m = open(&dir, here, args)?;
    let v = m.verify(s.client()).await.map_err(cli_err)?;
    match s.config.output {
        OutputFormat::Json => write!(out, "{}", json(&v)?)?,
        OutputFormat::Yaml => write!(out, "{}", yaml(&v)?)?,
        _ => print_verification(&v, out)?,
    }
    if v.differences.is_empty() { Ok(()) } else { Err(MigrateError::Differences(v.differences.len()).into()) }
}

fn print_verification(v: &Verification, out: &mut dyn Write) -> anyhow::Result<()> {
    write_lines(out, &report::verification_lines(v))
}

/// `migrate convert`: a TPR or v1beta1 CRD file as a v1 CRD, notes as YAML comments.
fn convert_cmd(args: &ConvertArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let input = Input::read(&args.from).map_err(cli_err)?;
    let doc = convert::parse_document(&input.text, &input.source, "registration").map_err(cli_err)?;
    let (crd, notes) = match convert::parse_registration(&doc, &input.source).map_err(cli_err)? {
        RegistrationDoc::Tpr(tpr) => {
            let mut names =
                convert::derive_tpr_names(&tpr.name).map_err(|e| CliError::Usage(format!("{}: {e}", input.source)))?;
            if let Some(kind) = &args.kind {
                names = convert::names_for_kind(&names.group, kind);
            }
            if let Some(plural) = &args.plural {
                names.plural = plural.clone();
            }
            let note = format!(
                "ThirdPartyResource {}: kind {}, plural {} — check them before use",
                tpr.name, names.kind, names.plural
            );
            (convert::tpr_to_crd(&tpr, &names), vec![note])
        }
        RegistrationDoc::Crd { crd, notes } => (crd, notes),
    };
    convert::check_crd(&crd, &input.source).map_err(cli_err)?;
    for n in notes {
        writeln!(out, "# {n}")?;
    }
    write!(out, "{}", yaml(&crd)?)?;
    Ok(())
}

/// Progress of one step: a bar on standard error (hidden when it is not a terminal) and
/// the notes, printed after the step.
#[derive(Default)]
struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    notes: Mutex<Vec<String>>,
}

impl Bars {
    fn on(&self, event: Event) {
        match event {
            Event::Started { step, total: Some(total) } => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                if let Ok(style) = ProgressStyle::with_template("{prefix:>16} [{bar:32}] {pos}/{len} {elapsed}") {
                    bar.set_style(style.progress_chars("=> "));
                }
                bar.set_prefix(step.name());
                if let Ok(mut slot) = self.bar.lock() {
                    *slot = Some(bar);
                }
            }
            Event::Progress { done, .. } => {
                if let Ok(slot) = self.bar.lock()
                    && let Some(bar) = slot.as_ref()
                {
                    bar.set_position(done);
                }
            }
            Event::Note { message, .. } => {
                if let Ok(mut notes) = self.notes.lock() {
                    notes.push(message);
                }
            }
            Event::Started { .. } | Event::Finished { .. } => {}
        }
    }

    fn done(&self) {
        if let Ok(slot) = self.bar.lock()
            && let Some(bar) = slot.as_ref()
        {
            bar.finish_and_clear();
        }
    }

    fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_takes_the_whole_line_so_the_next_one_gets_its_own_answer() {
        let mut input = std::io::Cursor::new("y\nYes\n\nyep\n");
        let mut shown = Vec::new();
        let answers: Vec<bool> =
            (0..5).map(|i| ask(&mut input, &mut shown, &format!("Q{i}?")).expect("asked")).collect();
        assert_eq!(answers, [true, true, false, false, false], "y, Yes, Enter alone, yep, end of input");
        assert_eq!(String::from_utf8_lossy(&shown), "Q0? [y/N] Q1? [y/N] Q2? [y/N] Q3? [y/N] Q4? [y/N] \n");
    }
}
