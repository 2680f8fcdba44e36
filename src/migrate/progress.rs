//! How a running step tells its driver what it is doing, without printing: a callback
//! that receives [`Event`]s. The CLI turns them into progress bars; the TUI wizard sends
//! them into its event loop (`report: &|e| { let _ = tx.send(e); }`).

use super::step::Step;

/// A callback for a step's events. It is called from the step's task, so it must be
/// cheap and must not block.
pub type Report<'a> = &'a (dyn Fn(Event) + Send + Sync);

/// What a step reports while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The step began; `total` is the number of items it will go through, when known.
    Started { step: Step, total: Option<u64> },
    /// `done` of `total` items are through.
    Progress { step: Step, done: u64, total: u64 },
    /// Something worth telling the user (an object that already existed, a wait).
    Note { step: Step, message: String },
    /// The step is done; `summary` says what it did, in a sentence.
    Finished { step: Step, summary: String },
}

/// A report that drops every event.
pub fn silent() -> impl Fn(Event) + Send + Sync {
    |_| {}
}
