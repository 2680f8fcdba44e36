//! The terminal UI (`kubectl crd tui`): registrations → detail → resources → one resource,
//! with spec and status edited apart, scale, YAML and describe views, k9s-style keys.
//!
//! The parts are kept apart as ratatui apps do it: [`state`] holds everything shown,
//! [`keys`] turns key events into [`action::Action`]s, [`update`] is the one step function
//! that changes the state and asks for IO ([`action::Effect`]), and [`view`] draws from
//! `&State`. The runtime owns the terminal and the single `tokio::select!` over terminal
//! events, cluster results (list, watch) and ticks; it performs effects through the
//! cluster layer, the same one the subcommands use. The migration wizard ([`wizard`]) is
//! a screen with the same split, driving the same library as `kubectl crd migrate`.

pub mod action;
mod app;
mod apply_as;
mod cel_update;
pub mod cel_workbench;
pub mod commands;
pub mod crd_watch;
pub mod describe;
pub mod edit;
pub mod event_watch;
pub mod events;
mod events_update;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod input;
pub mod keys;
pub mod model;
mod navigation;
pub mod owner_tree;
mod owner_tree_update;
pub mod pacing;
pub mod results;
pub mod row_order;
pub mod runtime;
pub mod schema;
pub mod state;
pub mod table;
pub mod theme;
mod timeline;
pub mod update;
pub mod view;
pub mod watch;
pub mod wizard;
mod writes;
pub mod yaml;

pub use app::{Options, TuiError, on_event, run, target_of};
