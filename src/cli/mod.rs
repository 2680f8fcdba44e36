//! The scriptable face of the plugin: `kubectl crd <subcommand>`.
//!
//! `main` parses with [`args::Cli`], calls [`run`], and maps the result to an exit code
//! with [`exit_code`]. Exit codes a script can rely on: 0 success, 1 the operation failed,
//! 2 the command line was wrong or the subcommand is not available in this build.

pub mod args;
pub mod config;

use args::{Cli, Command, OutputFormat};
use clap::CommandFactory;
use config::Config;
use std::io::Write;

/// Exit code for success.
pub const EXIT_OK: u8 = 0;
/// Exit code when the operation failed.
pub const EXIT_FAILURE: u8 = 1;
/// Exit code for a wrong command line or a subcommand this build does not have.
pub const EXIT_USAGE: u8 = 2;

/// Errors that decide the exit code; anything else is a failure (1).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    #[error("'kubectl crd {0}' is not available in this build yet ({1}). Run 'kubectl crd --help' to see what is.")]
    NotAvailable(&'static str, &'static str),
    #[error("no subcommand given. Run 'kubectl crd --help' to see the subcommands.")]
    NoSubcommand,
}

/// Maps an error to the exit code scripts see.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    match err.downcast_ref::<CliError>() {
        Some(_) => EXIT_USAGE,
        None => EXIT_FAILURE,
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
        return Err(CliError::NoSubcommand.into());
    };
    match command {
        Command::Version => print_version(&config, out),
        Command::Completion { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "kubectl-crd", out);
            Ok(())
        }
        Command::Serve(args) => crate::serve::run(&args, out).map_err(Into::into),
        Command::Tui(_) => not_yet("tui", "the terminal UI arrives after the tools' foundation"),
        Command::List => not_yet("list", "arrives with the tools' foundation"),
        Command::Describe { .. } => not_yet("describe", "arrives with the tools' foundation"),
        Command::Get { .. } => not_yet("get", "arrives with the tools' foundation"),
        Command::Apply { .. } => not_yet("apply", "arrives with the tools' foundation"),
        Command::Spec { .. } => not_yet("spec", "arrives with the tools' foundation"),
        Command::Status { .. } => not_yet("status", "arrives with the tools' foundation"),
        Command::Scale { .. } => not_yet("scale", "arrives with the tools' foundation"),
        Command::Migrate { .. } => not_yet("migrate", "arrives with the guided migration"),
        Command::Demo => not_yet("demo", "arrives with the terminal UI"),
    }
}

fn not_yet(name: &'static str, why: &'static str) -> anyhow::Result<()> {
    Err(CliError::NotAvailable(name, why).into())
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
    fn later_subcommands_say_so_and_exit_2() {
        let (r, _) = run_args(&["list"]);
        let err = r.expect_err("not available yet");
        assert!(err.to_string().contains("not available"), "{err}");
        assert_eq!(exit_code(&err), EXIT_USAGE);
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
        assert_eq!(cli.global.output, Some(OutputFormat::Wide));
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
