//! The integration tests, in one binary: one module per area (the engine over HTTP, the real
//! `kubectl` running the plugin, the CLI, the TUI in tmux, migrations, crash safety, fidelity
//! against kube-apiserver's recordings), sharing [`support`]. One binary links the crate once
//! instead of once per file, which was most of a clean test build.
//!
//! Select an area by module path: `cargo nextest run -E 'test(/^kubectl_/)'`, or
//! `cargo test --test it engine_crds::`.

mod cli_live;
mod cli_local;
mod cluster_owners;
mod cluster_registrations;
mod crdtest;
mod differential;
mod engine_admission_webhook;
mod engine_apply;
mod engine_bad_input;
mod engine_builtin;
mod engine_conversion_webhook;
mod engine_crds;
mod engine_crds_many;
mod engine_lifecycle;
mod engine_limits;
mod engine_lists;
mod engine_mutated_input;
mod engine_openapi;
mod engine_representations;
mod engine_routing;
mod engine_schema;
mod engine_versions;
mod etcd;
mod etcd_admission;
mod etcd_layout;
mod etcd_outage;
mod etcd_replicas;
mod krew_manifest;
mod kubectl_admission;
mod kubectl_apply;
mod kubectl_builtin;
mod kubectl_crd_complete;
mod kubectl_crd_delete;
mod kubectl_crd_get;
mod kubectl_crd_list;
mod kubectl_crd_messages;
mod kubectl_crds;
mod kubectl_get;
mod kubectl_openapi;
mod kubectl_plugin;
mod kubectl_resources;
mod kubectl_webhookconfigs;
mod migrate_crash;
mod migrate_live;
mod migrate_local;
mod reference_corpus;
mod reference_replay;
mod scale_crds;
mod scale_objects;
mod serve;
mod store_crash;
mod support;
mod tui_cel_e2e;
mod tui_e2e;
mod tui_events_e2e;
mod tui_owners_e2e;
mod tui_runtime;
mod tui_scale;
mod tui_schema_e2e;
mod tui_wizard_e2e;
mod validate;
