//! Crash points for the crash-safety tests: `KUBECTL_CRD_MIGRATE_CRASH_AT=<step>[:<at>]`
//! kills the process with SIGKILL (as a power cut or `kill -9` would) at a step boundary
//! (`<step>`: before the step starts), after its work but before the journal records it
//! (`<step>:end`), or after the `<n>`-th object the step went through (`<step>:<n>`).
//! Steps are named as in the journal (`delete-old-data`). Unset, nothing happens.

use super::step::Step;
use std::sync::OnceLock;

/// The environment variable that arms a crash point.
pub const CRASH_AT_ENV: &str = "KUBECTL_CRD_MIGRATE_CRASH_AT";

/// Where in a step a crash point sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    Start,
    End,
    Item(u64),
}

fn armed() -> Option<&'static (String, Point)> {
    static ARMED: OnceLock<Option<(String, Point)>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let raw = std::env::var(CRASH_AT_ENV).ok()?;
            let (step, at) = match raw.split_once(':') {
                Some((s, "end")) => (s.to_string(), Point::End),
                Some((s, n)) => (s.to_string(), Point::Item(n.parse().ok()?)),
                None => (raw.clone(), Point::Start),
            };
            Some((step, at))
        })
        .as_ref()
}

/// Crashes the process if the crash point `step`/`at` is armed.
pub fn check(step: Step, at: Point) {
    if let Some((name, point)) = armed()
        && name == step.name()
        && *point == at
    {
        crash();
    }
}

fn crash() -> ! {
    // SIGKILL ourselves: no destructor, no flush, no clean shutdown of the store.
    let pid = std::process::id().to_string();
    let _ = std::process::Command::new("kill").args(["-KILL", &pid]).status();
    std::process::abort()
}
