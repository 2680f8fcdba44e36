//! What the user typed: the clap definition of `kubectl crd`.
//!
//! kubectl refuses its own global flags before a plugin's name (`kubectl -n x crd` fails),
//! so the plugin accepts kubectl's flags itself, before or after its subcommand
//! (`global = true`). This is stage one of two: [`crate::cli::config`] turns these raw
//! values into a validated configuration.

use super::CliError;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Build, serve and browse CustomResourceDefinitions.
#[derive(Debug, Parser)]
#[command(
    name = "kubectl crd",
    bin_name = "kubectl crd",
    version,
    about = "Build, serve and browse CustomResourceDefinitions",
    long_about = "Build, serve and browse CustomResourceDefinitions.\n\n\
        kubectl crd runs against the cluster of your kubeconfig, or against a local engine\n\
        (--local) that behaves like kube-apiserver for CRDs and keeps its data on disk.",
    after_help = "Run 'kubectl crd <command> --help' for more about a command.",
    propagate_version = true,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// kubectl's flags, accepted anywhere on the command line. Help lists them apart, under
/// their own heading, after the flags of the subcommand at hand.
#[derive(Debug, Args, Default, Clone)]
#[command(next_help_heading = GLOBAL_HEADING)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file to use.
    #[arg(long, global = true, value_name = "FILE")]
    pub kubeconfig: Option<String>,
    /// The kubeconfig context to use.
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace scope for this request.
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// Act across all namespaces (wins over --namespace, as in kubectl).
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,
    /// Output format: table, wide, json, yaml, csv, name, jsonpath=TEMPLATE or
    /// custom-columns=HEADER:PATH,... (junit for test)
    #[arg(short = 'o', long, global = true, value_parser = parse_output, value_name = "FORMAT")]
    pub output: Option<OutputArg>,
    /// How long to wait for one server request before giving up (e.g. 30s, 2m, 0 for no limit).
    #[arg(long, global = true, value_name = "DURATION")]
    pub request_timeout: Option<String>,
    /// Use the local engine instead of a cluster, with its data in DIR
    /// (default: the user's data directory).
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = ""
    )]
    pub local: Option<String>,
    /// Do not colour output (the NO_COLOR environment variable does the same).
    #[arg(long, global = true)]
    pub no_color: bool,
}

/// The help heading of kubectl's global flags.
pub const GLOBAL_HEADING: &str = "Global options (kubectl's, before or after the subcommand)";

/// The output formats every printing subcommand honours (`get` also takes templates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Wide,
    Json,
    Yaml,
    Csv,
    Name,
    /// `jsonpath=TEMPLATE`.
    JsonPath,
    /// `custom-columns=HEADER:PATH,...`.
    CustomColumns,
    /// JUnit XML, for CI systems (`kubectl crd test` only).
    Junit,
}

/// `-o` as typed: the format, and the text after `=` of `jsonpath=` and `custom-columns=`
/// (checked in stage two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputArg {
    pub format: OutputFormat,
    pub template: Option<String>,
}

fn parse_output(raw: &str) -> Result<OutputArg, String> {
    let (word, template) = match raw.split_once('=') {
        Some((word, template)) => (word, Some(template.to_string())),
        None => (raw, None),
    };
    let format = match word {
        "table" => OutputFormat::Table,
        "wide" => OutputFormat::Wide,
        "json" => OutputFormat::Json,
        "yaml" => OutputFormat::Yaml,
        "csv" => OutputFormat::Csv,
        "name" => OutputFormat::Name,
        "jsonpath" => OutputFormat::JsonPath,
        "custom-columns" => OutputFormat::CustomColumns,
        "junit" => OutputFormat::Junit,
        _ => return Err(OUTPUT_FORMATS.into()),
    };
    let templated = matches!(format, OutputFormat::JsonPath | OutputFormat::CustomColumns);
    if templated != template.is_some() {
        return Err(OUTPUT_FORMATS.into());
    }
    Ok(OutputArg { format, template })
}

const OUTPUT_FORMATS: &str =
    "use one of table, wide, json, yaml, csv, name, jsonpath=TEMPLATE, custom-columns=HEADER:PATH,... or junit";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the local engine over HTTPS for kubectl, controllers and kube-rs programs.
    Serve(ServeArgs),
    /// Open the terminal UI.
    Tui(TuiArgs),
    /// List CustomResourceDefinitions with their state and resource counts.
    List,
    /// Show one CustomResourceDefinition: names, conditions, subresources, versions.
    Describe {
        /// The CRD's name (plural.group), kind, plural or short name, or crd/NAME.
        name: String,
    },
    /// List or show custom resources with the server's columns.
    Get(GetArgs),
    /// Delete custom resources (by name, -l or --all) or CustomResourceDefinitions (crd NAME),
    /// as kubectl delete does.
    Delete(DeleteArgs),
    /// Check objects offline as the apiserver checks them on create (schema, pruning,
    /// defaults, CEL, metadata), and the CRDs as registration checks them.
    Validate(ValidateArgs),
    /// Run the test cases (*.test.yaml) beside CRDs: each case's object is checked offline
    /// and its verdict compared with what the case expects.
    Test(TestArgs),
    /// Create or update objects from files (namespaces and CRDs first, waiting for each CRD
    /// to be Established, then custom resources with their status).
    Apply {
        /// File or directory (its .yaml, .yml and .json files) to read, or - for standard input.
        #[arg(short = 'f', long = "filename", required = true)]
        filename: Vec<String>,
        /// On a 409 Conflict, re-read the object and try again.
        #[arg(long)]
        retry_conflicts: bool,
    },
    /// Work on a resource's spec (everything but its status).
    Spec {
        #[command(subcommand)]
        action: SpecAction,
    },
    /// Work on a resource's status through the /status subresource.
    Status {
        #[command(subcommand)]
        action: StatusAction,
    },
    /// Show (without --replicas) or set replicas through the /scale subresource.
    Scale {
        #[command(flatten)]
        target: Named,
        /// The desired number of replicas (0 or more).
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        replicas: Option<String>,
        /// Only scale if the desired replicas are this now (kubectl's precondition).
        #[arg(long, value_name = "M", requires = "replicas", allow_hyphen_values = true)]
        current_replicas: Option<String>,
        /// On a 409 Conflict, re-read the scale and try again (the precondition is checked again).
        #[arg(long)]
        retry_conflicts: bool,
    },
    /// Move objects from an old registration to a new CRD, step by step.
    Migrate {
        #[command(subcommand)]
        action: MigrateAction,
    },
    /// Load the demo CRDs and resources into the local engine (--local=DIR, or the default
    /// local directory).
    Demo,
    /// Print the plugin's version and the Kubernetes API level it implements.
    Version,
    /// Print a shell completion script.
    Completion {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Completion candidates for kubectl's plugin completion (run by kubectl_complete-crd).
    #[command(name = "__complete", hide = true)]
    Complete {
        /// The words after `kubectl crd`, the last one being completed.
        #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true)]
        words: Vec<String>,
    },
}

/// `kubectl crd get`'s own flags, as kubectl's.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// KIND, PLURAL or SHORTNAME of the custom resources, or TYPE/NAME for one.
    pub resource: String,
    /// One resource's name.
    pub name: Option<String>,
    /// Label selector, e.g. app=demo,tier!=db.
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// Field selector, e.g. metadata.name=w1 (the server supports metadata.name and
    /// metadata.namespace for custom resources).
    #[arg(long, value_name = "SELECTOR")]
    pub field_selector: Option<String>,
    /// After listing, watch for changes and print them.
    #[arg(short = 'w', long)]
    pub watch: bool,
    /// With --watch, print each change's type (ADDED, MODIFIED, DELETED) first.
    #[arg(long)]
    pub output_watch_events: bool,
    /// Show every label as the last column.
    #[arg(long)]
    pub show_labels: bool,
    /// Sort by a JSONPath into the objects, e.g. '{.metadata.name}' or .spec.replicas.
    #[arg(long, value_name = "JSONPATH")]
    pub sort_by: Option<String>,
}

/// `kubectl crd validate`'s own flags.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Objects to check: a file, a directory (its .yaml, .yml and .json files), or - for
    /// standard input. CRDs among them are checked and used too.
    #[arg(short = 'f', long = "filename", required = true)]
    pub filename: Vec<String>,
    /// CRDs to check the objects against (files or directories). When no CRD is given
    /// (here or among the objects), the CRDs of the cluster (--kubeconfig/--context, or
    /// --local) are used.
    #[arg(long, value_name = "FILE")]
    pub crd: Vec<String>,
    /// Previous versions of the objects (same kind, namespace and name): their checks are
    /// updates, so transition rules (oldSelf) apply.
    #[arg(long, value_name = "FILE")]
    pub old: Vec<String>,
    /// Refuse unknown fields instead of warning about them (fieldValidation=Strict).
    #[arg(long)]
    pub strict: bool,
    /// Print each valid object as it would be stored (defaults applied, unknown fields
    /// pruned).
    #[arg(long)]
    pub show_defaulted: bool,
}

/// `kubectl crd test`'s own flags.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// Directories (searched recursively) or files: *.test.yaml files hold the cases, the
    /// CustomResourceDefinitions in the other .yaml, .yml and .json files are used.
    #[arg(required = true, value_name = "DIR")]
    pub paths: Vec<String>,
    /// More CRDs (files or directories).
    #[arg(long, value_name = "FILE")]
    pub crd: Vec<String>,
}

/// `kubectl crd delete`'s own flags, as kubectl's.
#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// TYPE NAME..., TYPE/NAME..., or TYPE with -l or --all; crd NAME deletes a
    /// CustomResourceDefinition with its custom resources.
    #[arg(required = true, value_name = "TYPE [NAME]...")]
    pub targets: Vec<String>,
    /// Delete the objects this label selector matches, e.g. app=demo.
    #[arg(short = 'l', long)]
    pub selector: Option<String>,
    /// Delete every object of the type in the namespace (or in all with -A).
    #[arg(long)]
    pub all: bool,
    /// What happens to dependents: background (the default), foreground or orphan.
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "background")]
    pub cascade: Option<String>,
    /// Only print what would be deleted: client (nothing is sent) or server (the server
    /// checks, deletes nothing).
    #[arg(long, value_name = "MODE", num_args = 0..=1, require_equals = true, default_missing_value = "client")]
    pub dry_run: Option<String>,
    /// Wait until the objects are gone (their finalizers done) before returning.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, require_equals = true, default_value = "true",
          default_missing_value = "true", action = clap::ArgAction::Set)]
    pub wait: bool,
    /// How long to wait for the objects to go (e.g. 30s; default: a week, as kubectl).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// One custom resource on the command line: `TYPE NAME`, or `TYPE/NAME` as kubectl takes it.
#[derive(Debug, Args)]
pub struct Named {
    /// KIND, PLURAL or SHORTNAME of the custom resource, or TYPE/NAME.
    resource: String,
    /// The resource's name (unless given as TYPE/NAME).
    name: Option<String>,
}

impl Named {
    /// The type and the name; `command` (e.g. `scale`) words the errors.
    pub fn parts(&self, command: &str) -> Result<(&str, &str), CliError> {
        match type_and_name(&self.resource, self.name.as_deref(), command)? {
            (resource, Some(name)) => Ok((resource, name)),
            (_, None) => Err(CliError::Usage(format!(
                "no name was given: use 'kubectl crd {command} TYPE NAME' or 'kubectl crd {command} TYPE/NAME'"
            ))),
        }
    }
}

/// kubectl's two ways to name an object, `TYPE NAME` and `TYPE/NAME`, as one (type, name).
pub fn type_and_name<'a>(
    resource: &'a str,
    name: Option<&'a str>,
    command: &str,
) -> Result<(&'a str, Option<&'a str>), CliError> {
    let both = || {
        CliError::Usage(format!(
            "there is no need to specify a resource type as a separate argument when passing arguments in \
             resource/name form (e.g. 'kubectl crd {command} TYPE/NAME' instead of 'kubectl crd {command} TYPE TYPE/NAME')"
        ))
    };
    match resource.split_once('/') {
        Some(_) if name.is_some() => Err(both()),
        Some((kind, one)) if kind.is_empty() || one.is_empty() || one.contains('/') => Err(CliError::Usage(format!(
            "arguments in resource/name form must have a single resource and name, not {resource:?}"
        ))),
        Some((kind, one)) => Ok((kind, Some(one))),
        None if name.is_some_and(|n| n.contains('/')) => Err(both()),
        None => Ok((resource, name)),
    }
}

/// `describe`'s argument without the `crd/` kubectl puts before a CRD's name (and
/// `list -o name` prints), in any of the ways kubectl spells that type.
pub fn crd_word(word: &str) -> Result<&str, CliError> {
    let Some((kind, name)) = word.split_once('/') else { return Ok(word) };
    let kind = kind.strip_suffix(".apiextensions.k8s.io").unwrap_or(kind);
    let crd = matches!(kind, "crd" | "crds" | "customresourcedefinition" | "customresourcedefinitions");
    if crd && !name.is_empty() && !name.contains('/') {
        return Ok(name);
    }
    Err(CliError::Usage(format!(
        "describe shows one CustomResourceDefinition: give its name, kind, plural or short name, or crd/NAME (not {word:?})"
    )))
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: String,
    /// Where the engine keeps its data, certificates and token.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Write a kubeconfig for this server to FILE (mode 0600).
    #[arg(long, value_name = "FILE")]
    pub write_kubeconfig: Option<PathBuf>,
    /// Storage backend: redb in the data directory, memory, or an etcd v3 cluster.
    #[arg(long, value_enum, default_value_t = StorageKind::Redb)]
    pub storage: StorageKind,
    /// etcd client URLs, comma-separated (with --storage etcd).
    #[arg(long, value_name = "URL[,URL...]", value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// The CA file that verifies etcd's serving certificate (https URLs).
    #[arg(long, value_name = "FILE")]
    pub etcd_cafile: Option<PathBuf>,
    /// The client certificate to show etcd.
    #[arg(long, value_name = "FILE")]
    pub etcd_certfile: Option<PathBuf>,
    /// The client certificate's key.
    #[arg(long, value_name = "FILE")]
    pub etcd_keyfile: Option<PathBuf>,
    /// The prefix of every key in etcd, as kube-apiserver's --etcd-prefix.
    #[arg(long, value_name = "PREFIX", default_value = "/registry")]
    pub etcd_prefix: String,
    /// Serve plain HTTP instead of HTTPS.
    #[arg(long)]
    pub insecure_http: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StorageKind {
    Memory,
    Redb,
    Etcd,
}

#[derive(Debug, Args)]
pub struct TuiArgs {
    /// Open on a fresh local engine loaded with the demo CRDs and resources (kept in DIR
    /// with --local=DIR, else in a temporary directory removed on exit).
    #[arg(long)]
    pub demo: bool,
    /// Turn every write off (edit, status edit, scale, the migration wizard).
    #[arg(long)]
    pub readonly: bool,
}

#[derive(Debug, Subcommand)]
pub enum SpecAction {
    /// Edit the object without its status in $KUBE_EDITOR or $EDITOR; the result is
    /// written to the main endpoint.
    Edit {
        #[command(flatten)]
        target: Named,
        /// On a 409 Conflict, re-read the object and re-apply only your changes on it
        /// (refused, keeping your file, when the other writer changed the same fields).
        #[arg(long)]
        retry_conflicts: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum StatusAction {
    /// Print the status (as {"status": ...}, ready for 'status set').
    Get {
        #[command(flatten)]
        target: Named,
    },
    /// Replace the status through /status from a file holding {"status": ...} or a whole object.
    Set {
        #[command(flatten)]
        target: Named,
        /// YAML or JSON file, or - for standard input.
        #[arg(short = 'f', long = "filename", required = true)]
        filename: String,
        /// On a 409 Conflict, re-read the object and write the status again.
        #[arg(long)]
        retry_conflicts: bool,
    },
    /// Merge-patch the status through /status from a file holding {"status": ...} or a whole object.
    Patch {
        #[command(flatten)]
        target: Named,
        /// YAML or JSON file, or - for standard input.
        #[arg(short = 'f', long = "filename", required = true)]
        filename: String,
    },
    /// Edit the status alone in $KUBE_EDITOR or $EDITOR; the result goes through /status.
    Edit {
        #[command(flatten)]
        target: Named,
        /// On a 409 Conflict, re-read the object and re-apply only your changes to the status
        /// (refused, keeping your file, when the other writer changed the same fields).
        #[arg(long)]
        retry_conflicts: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum MigrateAction {
    /// Print what a migration will do, changing nothing.
    Plan(MigrateArgs),
    /// Run a migration, with a journal on disk (asks before destructive steps unless --yes).
    Run(MigrateArgs),
    /// Continue an interrupted migration (or rollback) from its journal.
    Resume(JournalArgs),
    /// Compare a migration's backup with the cluster; exit code 1 if anything differs.
    Verify(JournalArgs),
    /// Restore the old registration and its objects from a migration's backup.
    Rollback(JournalArgs),
    /// Print a ThirdPartyResource or apiextensions.k8s.io/v1beta1 CRD file as a v1 CRD.
    Convert(ConvertArgs),
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The old registration: a CRD on the cluster (name, plural or kind), or a file with a
    /// ThirdPartyResource or CRD (v1beta1 or v1) whose objects are given with --data.
    #[arg(long, value_name = "CRD_NAME|FILE")]
    pub from: String,
    /// Exported data of a file registration (kubectl get ... -o yaml); repeatable.
    #[arg(long, value_name = "EXPORT_FILE")]
    pub data: Vec<PathBuf>,
    /// The new CRD document (v1 or v1beta1). May be left out for a ThirdPartyResource: the
    /// CRD derived from it, with names you confirm, is the new one.
    #[arg(long, value_name = "NEW_CRD_FILE")]
    pub to: Option<PathBuf>,
    /// Where the migration keeps its journal and backup (default: under the user's data
    /// directory, kubectl-crd/migrations/<id>).
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// A controller to stop during the migration: NS/DEPLOYMENT, or NS/RESOURCE/NAME for any
    /// resource with a /scale subresource; repeatable.
    #[arg(long, value_name = "NS/DEPLOYMENT")]
    pub controller: Vec<String>,
    /// Write objects of an old version at a new one (OLD=NEW, e.g. v1beta1=v1); repeatable.
    #[arg(long, value_name = "OLD=NEW")]
    pub map_version: Vec<String>,
    /// The namespace for objects of a cluster-scoped kind moved to a namespaced one.
    #[arg(long, value_name = "NS")]
    pub into_namespace: Option<String>,
    /// Do not ask before destructive steps.
    #[arg(short = 'y', long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct JournalArgs {
    /// The migration's journal (default: the one migration of this cluster under the
    /// user's data directory).
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
    /// Take the --journal DIR of an older kubectl-crd, which does not record its cluster,
    /// as made on this cluster (it then records it). A journal of another cluster is
    /// refused all the same.
    #[arg(long, requires = "journal")]
    pub this_cluster: bool,
    /// Do not ask before destructive steps.
    #[arg(short = 'y', long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The ThirdPartyResource or v1beta1 CRD file.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// The kind a ThirdPartyResource's objects get (default: derived from its name).
    #[arg(long)]
    pub kind: Option<String>,
    /// The plural a ThirdPartyResource's objects get (default: the lower-cased kind + s).
    #[arg(long)]
    pub plural: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_named_as_type_and_name_or_as_type_slash_name() {
        assert_eq!(type_and_name("widgets", Some("w1"), "get").ok(), Some(("widgets", Some("w1"))));
        assert_eq!(type_and_name("widgets/w1", None, "get").ok(), Some(("widgets", Some("w1"))));
        assert_eq!(type_and_name("widgets", None, "get").ok(), Some(("widgets", None)));
        for (resource, name) in [("widgets", Some("widgets/w1")), ("widgets/w1", Some("w1"))] {
            let e = type_and_name(resource, name, "scale").expect_err("both forms");
            assert!(e.to_string().starts_with("there is no need to specify a resource type"), "{e}");
            assert!(e.to_string().contains("'kubectl crd scale TYPE/NAME'"), "{e}");
        }
        for odd in ["widgets/", "/w1", "a/b/c"] {
            let e = type_and_name(odd, None, "get").expect_err(odd);
            assert!(e.to_string().contains("must have a single resource and name"), "{e}");
        }
        let e = Named { resource: "widgets".into(), name: None }.parts("status get").expect_err("no name");
        assert_eq!(
            e.to_string(),
            "no name was given: use 'kubectl crd status get TYPE NAME' or 'kubectl crd status get TYPE/NAME'"
        );
    }

    #[test]
    fn describe_takes_a_crd_as_kubectl_and_list_name_write_it() {
        for word in [
            "widgets.stable.example.com",
            "crd/widgets.stable.example.com",
            "crds/widgets.stable.example.com",
            "customresourcedefinition.apiextensions.k8s.io/widgets.stable.example.com",
        ] {
            assert_eq!(crd_word(word).ok(), Some("widgets.stable.example.com"), "{word}");
        }
        assert_eq!(crd_word("Widget").ok(), Some("Widget"));
        for bad in ["widgets/w1", "crd/", "crd/a/b"] {
            let e = crd_word(bad).expect_err(bad);
            assert!(e.to_string().starts_with("describe shows one CustomResourceDefinition"), "{e}");
        }
    }
}
