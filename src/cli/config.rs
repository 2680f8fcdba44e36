//! Stage two of argument parsing: the validated configuration the subcommands run with.
//!
//! Everything a user can get wrong in kubectl's global flags is checked here, once, with a
//! message that says what was wrong and what to write instead.

use super::args::{GlobalArgs, OutputArg, OutputFormat};
use super::template::{self, Template};
use std::path::PathBuf;
use std::time::Duration;

/// Where the tools' requests go (defined with the connection code that uses it).
pub use crate::cluster::Target;

/// Which namespaces a request covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamespaceScope {
    /// The namespace given with -n, or the context's (or `default`) when `None`.
    One(Option<String>),
    All,
}

/// The validated global configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `--kubeconfig` or `--context` was given (commands that only make sense locally refuse them).
    pub explicit_live: bool,
    pub target: Target,
    pub namespaces: NamespaceScope,
    /// `-n` was given explicitly (apply refuses objects of other namespaces then).
    pub namespace_explicit: bool,
    pub output: OutputFormat,
    /// The parsed template of `-o jsonpath=` and `-o custom-columns=`.
    pub template: Option<Template>,
    /// `None`: no limit.
    pub request_timeout: Option<Duration>,
    pub color: bool,
}

/// A global flag that does not make sense.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid --request-timeout {0:?}: use a number with a unit (30s, 2m, 1h, 500ms) or 0 for no limit")]
    RequestTimeout(String),
    #[error(
        "invalid namespace {0:?}: a namespace is a DNS label (lowercase letters, digits and '-', at most 63 characters)"
    )]
    Namespace(String),
    #[error(
        "--local and --{0} cannot be used together: --local talks to the local engine, not to a kubeconfig cluster"
    )]
    LocalWithKubeconfig(&'static str),
    #[error("cannot find a data directory for --local; give one with --local=DIR")]
    NoDataDir,
    /// A template of `-o jsonpath=`/`-o custom-columns=` that does not parse (kubectl's words).
    #[error(transparent)]
    Template(#[from] template::TemplateError),
}

impl Config {
    /// Validates the raw flags. `no_color_env` is whether `NO_COLOR` is set (non-empty).
    pub fn from_args(args: &GlobalArgs, no_color_env: bool) -> Result<Self, ConfigError> {
        let target = match &args.local {
            Some(dir) => {
                if args.kubeconfig.is_some() {
                    return Err(ConfigError::LocalWithKubeconfig("kubeconfig"));
                }
                if args.context.is_some() {
                    return Err(ConfigError::LocalWithKubeconfig("context"));
                }
                let data_dir = if dir.is_empty() {
                    crate::datadir::default_local_dir().ok_or(ConfigError::NoDataDir)?
                } else {
                    PathBuf::from(dir)
                };
                Target::Local { data_dir }
            }
            None => {
                Target::Live { kubeconfig: args.kubeconfig.as_ref().map(PathBuf::from), context: args.context.clone() }
            }
        };
        let namespaces = if args.all_namespaces {
            NamespaceScope::All
        } else {
            if let Some(ns) = &args.namespace
                && !kubectl_crd_engine::is_dns1123_label(ns)
            {
                return Err(ConfigError::Namespace(ns.clone()));
            }
            NamespaceScope::One(args.namespace.clone())
        };
        let request_timeout = match &args.request_timeout {
            Some(raw) => parse_timeout(raw).ok_or_else(|| ConfigError::RequestTimeout(raw.clone()))?,
            None => None,
        };
        let OutputArg { format: output, template } =
            args.output.clone().unwrap_or(OutputArg { format: OutputFormat::Table, template: None });
        let template = match template {
            Some(raw) => {
                Some(template::parse(&raw, output == OutputFormat::CustomColumns).map_err(ConfigError::Template)?)
            }
            None => None,
        };
        Ok(Config {
            explicit_live: args.kubeconfig.is_some() || args.context.is_some(),
            target,
            namespace_explicit: args.namespace.is_some() && !args.all_namespaces,
            namespaces,
            output,
            template,
            request_timeout,
            color: !(args.no_color || no_color_env),
        })
    }
}

/// kubectl's `--request-timeout`: `0` (no limit), a bare number of seconds, or a Go-style
/// duration such as `1m30s` or `500ms`.
pub fn parse_timeout(raw: &str) -> Option<Option<Duration>> {
    let raw = raw.trim();
    if let Ok(secs) = raw.parse::<u64>() {
        return Some((secs > 0).then(|| Duration::from_secs(secs)));
    }
    let d = parse_go_duration(raw)?;
    Some((!d.is_zero()).then_some(d))
}

/// A Go `time.ParseDuration` subset: one or more `<number><unit>` with units h, m, s, ms.
fn parse_go_duration(raw: &str) -> Option<Duration> {
    if raw.is_empty() {
        return None;
    }
    let mut total = Duration::ZERO;
    let mut rest = raw;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let per_unit = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += Duration::try_from_secs_f64(number * per_unit).ok()?;
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> GlobalArgs {
        GlobalArgs::default()
    }

    #[test]
    fn timeouts_follow_kubectl() {
        assert_eq!(parse_timeout("0"), Some(None));
        assert_eq!(parse_timeout("5"), Some(Some(Duration::from_secs(5))));
        assert_eq!(parse_timeout("1m30s"), Some(Some(Duration::from_secs(90))));
        assert_eq!(parse_timeout("250ms"), Some(Some(Duration::from_millis(250))));
        assert_eq!(parse_timeout("soon"), None);
        assert_eq!(parse_timeout("5x"), None);
        assert_eq!(parse_timeout(""), None);
    }

    #[test]
    fn all_namespaces_wins_over_namespace() {
        let mut a = args();
        a.namespace = Some("team".into());
        a.all_namespaces = true;
        assert_eq!(Config::from_args(&a, false).expect("valid").namespaces, NamespaceScope::All);
    }

    #[test]
    fn bad_flags_say_what_to_write() {
        let mut a = args();
        a.namespace = Some("Team_A".into());
        let e = Config::from_args(&a, false).expect_err("invalid namespace");
        assert!(e.to_string().contains("DNS label"), "{e}");

        let mut a = args();
        a.local = Some(String::new());
        a.context = Some("prod".into());
        assert_eq!(Config::from_args(&a, false), Err(ConfigError::LocalWithKubeconfig("context")));
    }

    #[test]
    fn local_without_dir_uses_the_data_dir_and_no_color_env_disables_colour() {
        let mut a = args();
        a.local = Some(String::new());
        let c = Config::from_args(&a, true).expect("valid");
        match c.target {
            Target::Local { data_dir } => assert!(data_dir.ends_with("kubectl-crd/local")),
            other => panic!("expected local, got {other:?}"),
        }
        assert!(!c.color);
    }
}
