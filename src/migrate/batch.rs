//! Work over many objects at once: bounded concurrency with progress and crash points,
//! and one error for a batch. A leaf the step bodies (actions, adoption, verification)
//! share.

use super::MigrateError;
use super::failpoint::{self, Point};
use super::journal::Backup;
use super::model::uids;
use super::ops::CONCURRENCY;
use super::progress::{Event, Report};
use super::step::Step;
use futures::StreamExt;
use std::collections::HashSet;
use std::future::Future;

/// Old uids of every backed-up object.
pub(crate) fn migrated_uids(backup: &Backup) -> HashSet<String> {
    uids(&backup.objects)
}

/// Runs `f` over `items`, [`CONCURRENCY`] at a time, reporting progress and honouring
/// per-item crash points. Answers every result, in completion order.
pub(crate) async fn each<'a, T, R, F, Fut>(
    step: Step,
    items: &'a [T],
    report: Report<'_>,
    f: F,
) -> Vec<Result<R, MigrateError>>
where
    F: Fn(&'a T) -> Fut,
    Fut: Future<Output = Result<R, MigrateError>>,
{
    let total = items.len() as u64;
    report(Event::Started { step, total: Some(total) });
    let mut stream = futures::stream::iter(items.iter().map(f)).buffer_unordered(CONCURRENCY);
    let mut out = Vec::with_capacity(items.len());
    let mut done = 0;
    while let Some(r) = stream.next().await {
        done += 1;
        failpoint::check(step, Point::Item(done));
        report(Event::Progress { step, done, total });
        out.push(r);
    }
    out
}

/// The first error of a batch, with how many failed.
pub(crate) fn first_error<R>(results: Vec<Result<R, MigrateError>>) -> Result<Vec<R>, MigrateError> {
    let mut ok = Vec::with_capacity(results.len());
    let mut failed = 0;
    let mut first = None;
    for r in results {
        match r {
            Ok(v) => ok.push(v),
            Err(e) => {
                failed += 1;
                first.get_or_insert(e);
            }
        }
    }
    match first {
        None => Ok(ok),
        Some(e) if failed == 1 => Err(e),
        Some(e) => Err(MigrateError::State(format!("{failed} objects failed; the first: {e}"))),
    }
}
