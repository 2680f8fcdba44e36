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
    /// Create or update objects from a file (CRDs first, then custom resources).
    Apply {
        /// File to read, or - for standard input.
        #[arg(short = 'f', long = "filename", required = true)]
        filename: Vec<String>,
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
    /// Show or set replicas through the /scale subresource.
    Scale {
        resource: String,
        name: String,
        /// The desired number of replicas.
        #[arg(long)]
        replicas: Option<u32>,
        /// Only scale if the current desired replicas equal this.
        #[arg(long, requires = "replicas")]
        current_replicas: Option<u32>,
    },
    /// Move objects from an old registration to a new CRD, step by step.
    Migrate {
        #[command(subcommand)]
        action: MigrateAction,
    },
    /// Load the demo CRDs and resources into the local engine.
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
    /// Open on a fresh local engine loaded with the demo CRDs and resources.
    #[arg(long)]
    pub demo: bool,
}

#[derive(Debug, Subcommand)]
pub enum SpecAction {
    /// Edit the object without its status in $KUBE_EDITOR or $EDITOR.
    Edit { resource: String, name: String },
}

#[derive(Debug, Subcommand)]
pub enum StatusAction {
    /// Print the status.
    Get { resource: String, name: String },
    /// Replace the status from a file holding {"status": ...} or a whole object.
    Set {
        resource: String,
        name: String,
        #[arg(short = 'f', long = "filename")]
        filename: String,
    },
    /// Merge-patch the status from a file.
    Patch {
        resource: String,
        name: String,
        #[arg(short = 'f', long = "filename")]
        filename: String,
    },
    /// Edit the status alone in $KUBE_EDITOR or $EDITOR.
    Edit { resource: String, name: String },
}

#[derive(Debug, Subcommand)]
pub enum MigrateAction {
    /// Print what a migration will do, changing nothing.
    Plan(MigrateArgs),
    /// Run (or resume) a migration.
    Run(MigrateArgs),
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The old registration: a CRD name, or a TPR file (with --data).
    #[arg(long)]
    pub from: String,
    /// Exported data of a TPR-era registration.
    #[arg(long)]
    pub data: Vec<PathBuf>,
    /// The new CRD document.
    #[arg(long)]
    pub to: PathBuf,
    /// Where the migration keeps its journal.
    #[arg(long)]
    pub journal: Option<PathBuf>,
}
