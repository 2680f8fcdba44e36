//! What the user typed: the clap definition of `kubectl crd`.
//!
//! kubectl refuses its own global flags before a plugin's name (`kubectl -n x crd` fails),
//! so the plugin accepts kubectl's flags itself, before or after its subcommand
//! (`global = true`). This is stage one of two: [`crate::cli::config`] turns these raw
//! values into a validated configuration.

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

/// kubectl's flags, accepted anywhere on the command line.
#[derive(Debug, Args, Default, Clone)]
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
    /// Output format.
    #[arg(short = 'o', long, global = true, value_enum, value_name = "FORMAT")]
    pub output: Option<OutputFormat>,
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

/// The output formats every printing subcommand honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Wide,
    Json,
    Yaml,
    Csv,
    Name,
}

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
        /// The CRD's name (plural.group), kind, plural or short name.
        name: String,
    },
    /// List or show custom resources with the server's columns.
    Get {
        /// KIND, PLURAL or SHORTNAME of the custom resources.
        resource: String,
        /// One resource's name.
        name: Option<String>,
        /// Label selector, e.g. app=demo,tier!=db.
        #[arg(short = 'l', long)]
        selector: Option<String>,
    },
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
        /// KIND, PLURAL or SHORTNAME of the custom resource.
        resource: String,
        /// The resource's name.
        name: String,
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
    /// Storage backend.
    #[arg(long, value_enum, default_value_t = StorageKind::Redb)]
    pub storage: StorageKind,
    /// Serve plain HTTP instead of HTTPS.
    #[arg(long)]
    pub insecure_http: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StorageKind {
    Memory,
    Redb,
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
        /// KIND, PLURAL or SHORTNAME of the custom resource.
        resource: String,
        /// The resource's name.
        name: String,
        /// On a 409 Conflict, re-read the object and write the edit again.
        #[arg(long)]
        retry_conflicts: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum StatusAction {
    /// Print the status (as {"status": ...}, ready for 'status set').
    Get {
        /// KIND, PLURAL or SHORTNAME of the custom resource.
        resource: String,
        /// The resource's name.
        name: String,
    },
    /// Replace the status through /status from a file holding {"status": ...} or a whole object.
    Set {
        /// KIND, PLURAL or SHORTNAME of the custom resource.
        resource: String,
        /// The resource's name.
        name: String,
        /// YAML or JSON file, or - for standard input.
        #[arg(short = 'f', long = "filename", required = true)]
        filename: String,
        /// On a 409 Conflict, re-read the object and write the status again.
        #[arg(long)]
        retry_conflicts: bool,
    },
    /// Merge-patch the status through /status from a file holding {"status": ...} or a whole object.
    Patch {
        /// KIND, PLURAL or SHORTNAME of the custom resource.
        resource: String,
        /// The resource's name.
        name: String,
        /// YAML or JSON file, or - for standard input.
        #[arg(short = 'f', long = "filename", required = true)]
        filename: String,
    },
    /// Edit the status alone in $KUBE_EDITOR or $EDITOR; the result goes through /status.
    Edit {
        /// KIND, PLURAL or SHORTNAME of the custom resource.
        resource: String,
        /// The resource's name.
        name: String,
        /// On a 409 Conflict, re-read the object and write the edited status again.
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
    /// The migration's journal (default: the one migration under the user's data directory).
    #[arg(long, value_name = "DIR")]
    pub journal: Option<PathBuf>,
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
