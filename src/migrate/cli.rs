//! `kubectl crd migrate ...`: the thin command-line layer over the library — it reads the
//! files, opens the session, prints the plan, asks before destructive steps (dialoguer,
//! unless `--yes`), draws progress bars (indicatif, on standard error, only in a
//! terminal), prints a summary, and maps outcomes to exit codes (1: refused, failed or
//! differences found; 2: wrong command line or input).

use super::MigrateError;
use super::convert::{self, RegistrationDoc, TprNames};
use super::journal::{self, JournalState, Order, Phase, SourceKind};
use super::plan::{Input, Plan, Request, Source, Validation};
use super::progress::Event;
use super::steps::{Migration, Step};
use super::verify::Verification;
use crate::cli::CliError;
use crate::cli::args::{ConvertArgs, JournalArgs, MigrateAction, MigrateArgs, OutputFormat};
use crate::cli::config::Config;
use crate::cli::output::{json, tabwrite, yaml};
use crate::cli::session::Session;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let session = Session::open(config, config.target.clone()).await?;
        let result = match action {
            MigrateAction::Plan(args) => plan_cmd(&session, &args, out).await,
            MigrateAction::Run(args) => run_cmd(&session, &args, out).await,
            MigrateAction::Resume(args) => resume_cmd(&session, &args, out).await,
            MigrateAction::Verify(args) => verify_cmd(&session, &args, out).await,
            MigrateAction::Rollback(args) => rollback_cmd(&session, &args, out).await,
            MigrateAction::Convert(_) => Ok(()),
        };
        session.close().await;
        result
    })
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
    let answer =
        tokio::task::block_in_place(|| dialoguer::Confirm::new().with_prompt(prompt).default(false).interact());
    answer.map_err(|e| anyhow::anyhow!("cannot ask for confirmation: {e}"))
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
        writeln!(out, "\nNothing was changed. Run it with: kubectl crd migrate run {}", rerun_args(args))?;
    }
    Ok(())
}

fn rerun_args(args: &MigrateArgs) -> String {
    let mut s = format!("--from {}", args.from);
    for d in &args.data {
        s.push_str(&format!(" --data {}", d.display()));
    }
    if let Some(to) = &args.to {
        s.push_str(&format!(" --to {}", to.display()));
    }
    for c in &args.controller {
        s.push_str(&format!(" --controller {c}"));
    }
    s
}

fn print_plan(plan: &Plan, out: &mut dyn Write) -> anyhow::Result<()> {
    let scope = |namespaced: bool| if namespaced { "Namespaced" } else { "Cluster" };
    writeln!(out, "Migration {}", plan.id)?;
    let source = match plan.source {
        SourceKind::Cluster => format!("CRD {} on the cluster", plan.old_crd_name),
        SourceKind::Files => format!("{} with exported data", plan.source_label),
    };
    writeln!(
        out,
        "  from  {} ({}, {}) — {source}",
        plan.from.kind,
        plan.from.api_version(),
        scope(plan.from.namespaced)
    )?;
    let exists = if plan.new_crd_exists { "exists already" } else { "to be created" };
    writeln!(
        out,
        "  to    {} ({}, {}) — CRD {} {exists}",
        plan.to.kind,
        plan.to.api_version(),
        scope(plan.to.namespaced),
        plan.new_crd_name
    )?;
    for note in &plan.notes {
        writeln!(out, "  note: {note}")?;
    }
    if plan.tpr_names.is_some() {
        writeln!(
            out,
            "  note: names derived from the TPR's name; 'run' asks you to confirm or correct them (or write the CRD with 'kubectl crd migrate convert' and pass it with --to)"
        )?;
    }
    writeln!(out, "\nObjects: {}", plan.objects)?;
    let mut rows = vec![vec!["NAMESPACE".to_string(), "OBJECTS".into(), "WITH STATUS".into(), "GOES TO".into()]];
    for n in &plan.namespaces {
        let target = match (n.target.as_str(), n.target_exists) {
            ("", _) => "(cluster)".to_string(),
            (t, true) => t.to_string(),
            (t, false) => format!("{t} (created)"),
        };
        let ns = if n.namespace.is_empty() { "(cluster)".to_string() } else { n.namespace.clone() };
        rows.push(vec![ns, n.objects.to_string(), n.with_status.to_string(), target]);
    }
    write_indented(out, &tabwrite(&rows))?;
    let mut by_kind: BTreeMap<String, usize> = BTreeMap::new();
    for d in &plan.dependents {
        *by_kind.entry(format!("{} ({})", d.kind, d.api_version())).or_default() += 1;
    }
    writeln!(
        out,
        "\nDependents (objects whose ownerReferences point at them; kept and re-adopted): {}",
        plan.dependents.len()
    )?;
    for (kind, n) in &by_kind {
        writeln!(out, "  {kind}: {n}")?;
    }
    if !plan.unchecked.is_empty() {
        writeln!(out, "  not scanned: {}", plan.unchecked.join("; "))?;
    }
    writeln!(out, "\nControllers to stop:")?;
    if plan.controllers.is_empty() {
        writeln!(
            out,
            "  none named. Name them with --controller NS/DEPLOYMENT, or --controller NS/RESOURCE/NAME for any"
        )?;
        writeln!(out, "  resource with a /scale subresource (the local engine has no Deployments)")?;
    }
    for c in &plan.controllers {
        writeln!(out, "  {} ({}): {} replica(s) → 0, then back", c.spec, c.resource, c.replicas)?;
    }
    writeln!(
        out,
        "\nName conflicts of the new CRD: {}",
        if plan.conflicts.is_empty() { "none".into() } else { plan.conflicts.join("; ") }
    )?;
    match &plan.validation {
        Validation::Checked { objects, rejected, note } => {
            writeln!(out, "Dry run against the new CRD: {} of {objects} object(s) pass", objects - rejected.len())?;
            for r in rejected.iter().take(20) {
                writeln!(out, "  {}: {}", r.object, r.message)?;
            }
            if let Some(n) = note {
                writeln!(out, "  note: {n}")?;
            }
        }
        Validation::Deferred { reason } => writeln!(out, "Dry run against the new schema: in 'run' — {reason}")?,
    }
    let order = match plan.order {
        Order::NewFirst => "the new CRD is created before anything is deleted",
        Order::OldFirst => "the new CRD shares names with the old one, so it is created once the old one is gone",
    };
    writeln!(out, "Order: {order}")?;
    writeln!(out, "\nSteps:")?;
    for (i, s) in plan.steps.iter().enumerate() {
        let asks = if s.destructive { " [asks first]" } else { "" };
        writeln!(out, "  {:>2}. {:<20} {}{asks}", i + 1, s.step.name(), s.description)?;
    }
    if plan.problems.is_empty() {
        writeln!(out, "\nProblems: none")?;
    } else {
        writeln!(out, "\nProblems (the migration does not start):")?;
        for p in &plan.problems {
            writeln!(out, "  - {p}")?;
        }
    }
    Ok(())
}

fn write_indented(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    for line in text.lines() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

/// The journal directory a new run uses: `--journal`, or a fresh one under the data directory.
fn new_journal_dir(args: &MigrateArgs, plan: &Plan) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &args.journal {
        return Ok(dir.clone());
    }
    let root = journal::default_root().ok_or_else(|| {
        CliError::Usage("cannot find a data directory for the journal; give one with --journal DIR".into())
    })?;
    for n in 1.. {
        let dir = if n == 1 { root.join(&plan.id) } else { root.join(format!("{}-{n}", plan.id)) };
        match journal::load_state(&dir) {
            Err(_) if !dir.join(journal::JOURNAL_FILE).exists() => return Ok(dir),
            Ok(state) if !state.phase.finished() => {
                return Err(MigrateError::State(format!(
                    "a migration of {} to {} is in progress in {}; continue it with 'kubectl crd migrate resume --journal {2}' or undo it with 'kubectl crd migrate rollback --journal {2}'",
                    state.old_crd_name,
                    state.new_crd_name,
                    dir.display()
                ))
                .into());
            }
            _ => continue,
        }
    }
    unreachable!("the loop returns")
}

async fn run_cmd(s: &Session, args: &MigrateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
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
    let dir = new_journal_dir(args, &plan)?;
    if !confirm(args.yes, &format!("Start the migration of {} objects to {}?", plan.objects, plan.new_crd_name))? {
        return Err(MigrateError::State("not started: nothing was changed".into()).into());
    }
    let mut m = Migration::create(&plan, &dir).map_err(cli_err)?;
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

/// The prompt before a destructive step, or `None` when there is nothing to ask about.
fn prompt_for(step: Step, state: &JournalState) -> Option<String> {
    let objects = state.backup.as_ref().map_or(0, |b| b.objects);
    let dependents = state.backup.as_ref().map_or(0, |b| b.dependents);
    match step {
        Step::StopControllers if state.controllers.is_empty() => None,
        Step::StopControllers => {
            let names: Vec<&str> = state.controllers.iter().map(|c| c.spec.as_str()).collect();
            Some(format!("Scale {} to 0 replicas until the migration is done?", names.join(", ")))
        }
        Step::DeleteOldData => Some(format!(
            "Delete the {objects} {} objects (backed up; their {dependents} dependent(s) are orphaned, not deleted)?",
            state.mapping.from.crd_name()
        )),
        Step::DeleteOldCrd => Some(format!("Delete the old CustomResourceDefinition {}?", state.old_crd_name)),
        Step::RemoveNewData => Some(format!("Delete the objects created under {}?", state.mapping.to.crd_name())),
        Step::RemoveNewCrd => Some(format!("Delete the new CustomResourceDefinition {}?", state.new_crd_name)),
        _ => None,
    }
}

/// Runs the journal's steps to the end of the phase, asking before destructive ones. A
/// refusal going forward undoes what the run changed and reports it.
async fn drive(s: &Session, m: &mut Migration, yes: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let refusal_undo = m.state().refused.is_some();
    while let Some(step) = m.next_step() {
        if let Some(prompt) = prompt_for(step, m.state())
            && !refusal_undo
            && !confirm(yes, &prompt)?
        {
            return Err(MigrateError::State(format!(
                "stopped before {step} at your request; continue with 'kubectl crd migrate resume --journal {0}', or undo with 'kubectl crd migrate rollback --journal {0}'",
                m.dir().display()
            ))
            .into());
        }
        let bars = Bars::default();
        let step_started = Instant::now();
        let report = |e: Event| bars.on(e);
        let result = m.run_step(s.client(), &report).await;
        bars.done();
        for note in bars.notes() {
            writeln!(out, "  {note}")?;
        }
        match result {
            Ok(outcome) => {
                writeln!(out, "✓ {step}: {} ({:.1}s)", outcome.summary, step_started.elapsed().as_secs_f64())?
            }
            Err(e) if e.is_refusal() && m.state().phase == Phase::Forward && !m.state().began(Step::DeleteOldData) => {
                writeln!(out, "✗ {step}: {e}")?;
                writeln!(out, "Undoing what the run changed (nothing was deleted):")?;
                m.start_rollback(Some(e.to_string())).map_err(cli_err)?;
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
                writeln!(
                    out,
                    "The journal is in {0}: fix the cause and continue with 'kubectl crd migrate resume --journal {0}', or undo with 'kubectl crd migrate rollback --journal {0}'.",
                    m.dir().display()
                )?;
                return Err(cli_err(e));
            }
        }
    }
    Ok(())
}

async fn summary(m: &Migration, started: Instant, out: &mut dyn Write) -> anyhow::Result<()> {
    let state = m.state();
    writeln!(out, "\nDone in {:.1}s.", started.elapsed().as_secs_f64())?;
    match state.phase {
        Phase::Completed => {
            writeln!(out, "  {} → {}", state.old_crd_name, state.new_crd_name)?;
            if let Some(b) = &state.backup {
                for (ns, n) in &b.per_namespace {
                    writeln!(out, "  {:<20} {n} object(s)", if ns.is_empty() { "(cluster)" } else { ns })?;
                }
                writeln!(out, "  dependents re-adopted: {}", b.dependents)?;
            }
            for c in &state.controllers {
                writeln!(out, "  controller {} back at {} replica(s)", c.spec, c.replicas.unwrap_or(0))?;
            }
        }
        Phase::RolledBack => writeln!(out, "  rolled back: {} is as it was", state.old_crd_name)?,
        _ => {}
    }
    if let Some(r) = state.steps().iter().rev().find(|r| matches!(r.step, Step::Verify | Step::VerifyRollback)) {
        writeln!(out, "  verification: {}", r.summary.clone().unwrap_or_default())?;
    }
    writeln!(out, "  journal and backup: {}", m.dir().display())?;
    Ok(())
}

/// The journal a command works on: `--journal`, or the one migration in progress.
fn find_journal(args: &JournalArgs, want_unfinished: bool) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &args.journal {
        return Ok(dir.clone());
    }
    let root = journal::default_root().ok_or_else(|| CliError::Usage("give the journal with --journal DIR".into()))?;
    let all = journal::list_journals(&root);
    let unfinished: Vec<&(PathBuf, JournalState)> = all.iter().filter(|(_, s)| !s.phase.finished()).collect();
    let pick: Vec<&(PathBuf, JournalState)> =
        if !unfinished.is_empty() || want_unfinished { unfinished } else { all.iter().collect() };
    match pick.as_slice() {
        [(dir, _)] => Ok(dir.clone()),
        [] => Err(CliError::Usage(format!(
            "no migration {}under {}; give its journal with --journal DIR",
            if want_unfinished { "in progress " } else { "" },
            root.display()
        ))
        .into()),
        many => {
            let list: Vec<String> = many.iter().map(|(d, s)| format!("{} ({:?})", d.display(), s.phase)).collect();
            Err(CliError::Usage(format!("several migrations; choose one with --journal: {}", list.join(", "))).into())
        }
    }
}

fn open(dir: &Path) -> anyhow::Result<Migration> {
    Migration::open(dir).map_err(|e| match e {
        MigrateError::Journal { .. } => CliError::Usage(e.to_string()).into(),
        other => anyhow::Error::from(other),
    })
}

async fn resume_cmd(s: &Session, args: &JournalArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let started = Instant::now();
    let dir = find_journal(args, true)?;
    let mut m = open(&dir)?;
    let Some(next) = m.next_step() else {
        writeln!(out, "The migration in {} is {:?}: nothing to resume.", dir.display(), m.state().phase)?;
        return Ok(());
    };
    writeln!(out, "Resuming {} ({:?}) at {next}; journal {}", m.state().id, m.state().phase, dir.display())?;
    drive(s, &mut m, args.yes, out).await?;
    summary(&m, started, out).await
}

async fn rollback_cmd(s: &Session, args: &JournalArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let started = Instant::now();
    let dir = find_journal(args, false)?;
    let mut m = open(&dir)?;
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
    m.start_rollback(None).map_err(cli_err)?;
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

async fn verify_cmd(s: &Session, args: &JournalArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let dir = find_journal(args, false)?;
    let m = open(&dir)?;
    let v = m.verify(s.client()).await.map_err(cli_err)?;
    match s.config.output {
        OutputFormat::Json => write!(out, "{}", json(&v)?)?,
        OutputFormat::Yaml => write!(out, "{}", yaml(&v)?)?,
        _ => print_verification(&v, out)?,
    }
    if v.differences.is_empty() { Ok(()) } else { Err(MigrateError::Differences(v.differences.len()).into()) }
}

fn print_verification(v: &Verification, out: &mut dyn Write) -> anyhow::Result<()> {
    writeln!(out, "{}", v.summary())?;
    if !v.differences.is_empty() {
        writeln!(out, "Differences:")?;
        for f in &v.differences {
            writeln!(out, "  {}: {}", f.object, f.detail)?;
        }
    }
    if !v.additions.is_empty() {
        writeln!(out, "Added by the server (not differences):")?;
        for f in v.additions.iter().take(20) {
            writeln!(out, "  {}: {}", f.object, f.detail)?;
        }
        if v.additions.len() > 20 {
            writeln!(out, "  ... and {} more", v.additions.len() - 20)?;
        }
    }
    Ok(())
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
