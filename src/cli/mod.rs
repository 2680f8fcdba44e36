//! The scriptable face of the plugin: `kubectl crd <subcommand>`.
//!
//! `main` parses with [`args::Cli`], calls [`run`], and maps the result to an exit code
//! with [`exit_code`]. Exit codes a script can rely on: 0 done, 1 the server refused (or
//! could not be reached), 2 the command line or an input file was wrong (nothing was
//! changed then).
//!
//! Cluster subcommands run on a tokio runtime built here, over one [`session::Session`]
//! (connection and configuration) that is closed before the runtime ends, so the local
//! engine's store is shut down cleanly.

mod apply;
pub mod args;
mod complete;
pub mod config;
mod crdtest;
mod delete;
mod get;
mod migrate;
pub mod output;
mod registrations;
mod resources;
mod serve;
pub mod session;
pub mod template;
mod validate;

use args::{Cli, Command, OutputFormat};
use clap::CommandFactory;
use config::{Config, Target};
use session::Session;
use std::io::Write;

/// Exit code for success.
pub const EXIT_OK: u8 = 0;
/// Exit code when the server refused or could not be reached.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for a wrong command line or input.
pub const EXIT_USAGE: u8 = 2;

/// Errors in what the user typed; they exit with [`EXIT_USAGE`].
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("no subcommand given. Run 'kubectl crd --help' to see the subcommands.")]
    NoSubcommand,
    #[error("{0}")]
    Usage(String),
}

/// A failure whose messages were printed already (kubectl's `delete` prints one line per
/// object it could not delete and goes on); it exits with [`EXIT_FAILURE`] and `main`
/// prints nothing more.
#[derive(Debug, thiserror::Error)]
#[error("the command failed; see the messages above")]
pub struct Reported;

/// Whether `err`'s messages were printed already.
pub fn is_reported(err: &anyhow::Error) -> bool {
    err.downcast_ref::<Reported>().is_some()
}

/// Maps an error to the exit code scripts see.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    if err.downcast_ref::<CliError>().is_some() {
        return EXIT_USAGE;
    }
    match err.downcast_ref::<crate::cluster::ClusterError>() {
        Some(e) if e.is_usage() => EXIT_USAGE,
        _ => EXIT_FAILURE,
    }
}

/// Whether `NO_COLOR` asks for no colour (set and not empty, per no-color.org).
fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Runs one parsed command line, writing its output to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    let config = Config::from_args(&cli.global, no_color_env()).map_err(CliError::from)?;
    let Some(command) = cli.command else {
        // `kubectl crd` alone in a terminal opens the TUI; in a script it is a usage error.
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
            return tui(&config, &args::TuiArgs { demo: false, readonly: false });
        }
        return Err(CliError::NoSubcommand.into());
    };
    if config.template.is_some() && !matches!(command, Command::Get(_)) {
        return Err(CliError::Usage(
            "-o jsonpath= and -o custom-columns= are for 'kubectl crd get'; use -o json or -o yaml here".into(),
        )
        .into());
    }
    if config.output == OutputFormat::Junit && !matches!(command, Command::Test(_)) {
        return Err(CliError::Usage("-o junit is for 'kubectl crd test'".into()).into());
    }
    match command {
        Command::Version => print_version(&config, out),
        Command::Completion { shell } => {
            // Into a buffer first: clap_complete panics when its writer fails, and a
            // closed pipe (`completion bash | head`) is not a failure.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "kubectl-crd", &mut script);
            out.write_all(&script)?;
            Ok(())
        }
        Command::Complete { words } => complete::run(&words, out),
        Command::Serve(args) => serve::run(&args, out).map_err(Into::into),
        Command::Tui(args) => tui(&config, &args),
        Command::Migrate { action } => migrate::run(&config, action, out),
        Command::Validate(args) => validate::run(&config, &args, out),
        Command::Test(args) => crdtest::run(&config, &args, out),
        Command::Demo => {
            let target = demo_target(&config)?;
            on_cluster(&config, target, command, out)
        }
        command => on_cluster(&config, config.target.clone(), command, out),
    }
}

/// `kubectl crd tui`: the terminal UI on the configured cluster, or on the demo.
fn tui(config: &Config, args: &args::TuiArgs) -> anyhow::Result<()> {
    if args.demo && config.explicit_live {
        return Err(CliError::Usage(
            "kubectl crd tui --demo runs on a local engine; drop --kubeconfig/--context (--local=DIR keeps its data)"
                .into(),
        )
        .into());
    }
    let demo_dir = match &config.target {
        Target::Local { data_dir } if args.demo => Some(data_dir.clone()),
        _ => None,
    };
    let options = crate::tui::Options {
        connect: crate::cluster::ConnectOptions {
            target: config.target.clone(),
            namespace: match &config.namespaces {
                config::NamespaceScope::One(ns) => ns.clone(),
                config::NamespaceScope::All => None,
            },
            request_timeout: config.request_timeout,
        },
        all_namespaces: config.namespaces == config::NamespaceScope::All,
        demo: args.demo,
        demo_dir,
        readonly: args.readonly,
        color: config.color,
    };
    crate::tui::run(options).map_err(|e| match e {
        // Kept as the cluster's error so the exit code follows it (2 for a bad kubeconfig).
        crate::tui::TuiError::Cluster(e) => e.into(),
        other => other.into(),
    })
}

/// The demo goes into the local engine: `--local=DIR`, or the default directory when no
/// cluster was named. It never goes to a kubeconfig cluster by accident.
fn demo_target(config: &Config) -> anyhow::Result<Target> {
    match &config.target {
        Target::Local { .. } => Ok(config.target.clone()),
        Target::Live { .. } if config.explicit_live => Err(CliError::Usage(
            "kubectl crd demo loads into the local engine only; use --local[=DIR], or load a cluster with 'kubectl crd apply -f'".into(),
        )
        .into()),
        Target::Live { .. } => {
            let data_dir = crate::datadir::default_local_dir().ok_or(config::ConfigError::NoDataDir).map_err(CliError::from)?;
            Ok(Target::Local { data_dir })
        }
    }
}

/// The async runtime a cluster subcommand runs on.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| anyhow::anyhow!("cannot start the async runtime: {e}"))
}

/// Runs a cluster subcommand on its own runtime and closes the connection afterwards.
fn on_cluster(config: &Config, target: Target, command: Command, out: &mut dyn Write) -> anyhow::Result<()> {
    let runtime = runtime()?;
    runtime.block_on(async {
        // Input that can be checked without a cluster is checked before connecting.
        let replicas = match &command {
            Command::Scale { replicas, current_replicas, .. } => (
                replicas.as_deref().map(|r| resources::parse_replicas("replicas", r)).transpose()?,
                current_replicas.as_deref().map(|r| resources::parse_replicas("current-replicas", r)).transpose()?,
            ),
            _ => (None, None),
        };
        match &command {
            Command::Get(args) => {
                get::GetOptions::from_args(args)?;
            }
            Command::Delete(args) => {
                delete::DeleteOptions::from_args(args)?;
            }
            _ => {}
        }
        let session = Session::open(config, target).await?;
        let result = dispatch(&session, command, replicas, out).await;
        session.close().await;
        result
    })
}

async fn dispatch(
    s: &Session,
    command: Command,
    (replicas, current): (Option<i32>, Option<i32>),
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match command {
        Command::List => registrations::list(s, out).await,
        Command::Describe { name } => registrations::describe(s, args::crd_word(&name)?, out).await,
        Command::Get(args) => get::get(s, &get::GetOptions::from_args(&args)?, out).await,
        Command::Delete(args) => delete::delete(s, &delete::DeleteOptions::from_args(&args)?, out).await,
        Command::Status { action } => resources::status(s, &action, out).await,
        Command::Spec { action } => resources::spec(s, &action, out).await,
        Command::Scale { target, retry_conflicts, .. } => {
            let (resource, name) = target.parts("scale")?;
            resources::scale(s, resource, name, replicas, current, retry_conflicts, out).await
        }
        Command::Apply { filename, retry_conflicts } => apply::apply(s, &filename, retry_conflicts, out).await,
        Command::Demo => apply::demo(s, out).await,
        Command::Version
        | Command::Completion { .. }
        | Command::Complete { .. }
        | Command::Serve(_)
        | Command::Tui(_)
        | Command::Validate(_)
        | Command::Test(_)
        | Command::Migrate { .. } => Err(anyhow::anyhow!("not a cluster subcommand")),
    }
}

/// The version document `kubectl crd version -o json|yaml` prints.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionInfo {
    plugin_version: String,
    kubernetes_api_level: String,
    api_groups: Vec<&'static str>,
    platform: String,
}

fn version_info() -> VersionInfo {
    let (major, minor) = crate::KUBERNETES_API_LEVEL;
    VersionInfo {
        plugin_version: format!("v{}", crate::VERSION),
        kubernetes_api_level: format!("v{major}.{minor}"),
        api_groups: vec!["apiextensions.k8s.io/v1"],
        platform: format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    }
}

fn print_version(config: &Config, out: &mut dyn Write) -> anyhow::Result<()> {
    let info = version_info();
    match config.output {
        OutputFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&info)?)?,
        OutputFormat::Yaml => write!(out, "{}", serde_saphyr::to_string(&info)?)?,
        _ => {
            writeln!(out, "kubectl-crd version: {}", info.plugin_version)?;
            writeln!(out, "Kubernetes API level: {} ({})", info.kubernetes_api_level, info.api_groups.join(", "))?;
            writeln!(out, "Platform: {}", info.platform)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn run_args(argv: &[&str]) -> (anyhow::Result<()>, String) {
        let cli = Cli::try_parse_from(std::iter::once("kubectl-crd").chain(argv.iter().copied())).expect("parses");
        let mut out = Vec::new();
        let r = run(cli, &mut out);
        (r, String::from_utf8(out).expect("utf8"))
    }

    #[test]
    fn version_prints_plugin_and_api_level() {
        let (r, text) = run_args(&["version"]);
        r.expect("version runs");
        assert!(text.contains(&format!("kubectl-crd version: v{}", crate::VERSION)), "{text}");
        assert!(text.contains("Kubernetes API level: v1.32"), "{text}");
    }

    #[test]
    fn version_as_json_and_yaml() {
        let (r, text) = run_args(&["version", "-o", "json"]);
        r.expect("runs");
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["pluginVersion"], format!("v{}", crate::VERSION));
        let (r, text) = run_args(&["-o", "yaml", "version"]);
        r.expect("runs");
        let v: serde_json::Value = serde_saphyr::from_str(&text).expect("yaml");
        assert_eq!(v["kubernetesApiLevel"], "v1.32");
    }

    #[test]
    fn exit_codes_tell_usage_from_refusal() {
        let usage: anyhow::Error = CliError::Usage("bad".into()).into();
        assert_eq!(exit_code(&usage), EXIT_USAGE);
        let input: anyhow::Error = crate::cluster::ClusterError::InvalidInput {
            what: "status document",
            source_name: "f".into(),
            reason: "no status".into(),
        }
        .into();
        assert_eq!(exit_code(&input), EXIT_USAGE);
        let refused: anyhow::Error = crate::cluster::ClusterError::Conflict { message: "modified".into() }.into();
        assert_eq!(exit_code(&refused), EXIT_FAILURE);
        assert_eq!(exit_code(&anyhow::anyhow!("anything else")), EXIT_FAILURE);
    }

    #[test]
    fn completion_scripts_name_the_binary() {
        for shell in ["bash", "zsh", "fish"] {
            let (r, text) = run_args(&["completion", shell]);
            r.expect("completion runs");
            assert!(text.contains("kubectl-crd"), "{shell}: {text:.200}");
        }
    }

    #[test]
    fn global_flags_parse_before_and_after_the_subcommand() {
        let cli = Cli::try_parse_from(["kubectl-crd", "-n", "team", "get", "widgets", "--local=/tmp/x", "-o", "wide"])
            .expect("parses");
        assert_eq!(cli.global.namespace.as_deref(), Some("team"));
        assert_eq!(cli.global.local.as_deref(), Some("/tmp/x"));
        assert_eq!(cli.global.output.map(|o| o.format), Some(OutputFormat::Wide));
        // `--local` alone takes no value, so the next word stays a subcommand.
        let cli = Cli::try_parse_from(["kubectl-crd", "--local", "list"]).expect("parses");
        assert_eq!(cli.global.local.as_deref(), Some(""));
        assert!(matches!(cli.command, Some(Command::List)));
    }

    #[test]
    fn unknown_output_format_is_a_usage_error() {
        let err = Cli::try_parse_from(["kubectl-crd", "version", "-o", "xml"]).expect_err("xml is not a format");
        let text = err.to_string();
        assert!(text.contains("invalid value 'xml'") && text.contains("json"), "{text}");
        assert_eq!(err.exit_code(), 2);
    }
}
