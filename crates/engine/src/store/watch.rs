//! Watch streams over the in-memory history.
//!
//! A watcher keeps only a cursor (the last revision it has seen) and a small buffer; the
//! history it reads from is shared by all watchers and bounded. So a slow watcher never
//! holds up the writers or the other watchers: it falls behind, and if it falls out of the
//! history it gets `Expired`, as kube-apiserver ends a watch that cannot keep up.

use super::state::State;
use super::{Revision, StoreError, WatchEvent};
use futures::StreamExt;
use std::collections::VecDeque;
use std::sync::{Arc, RwLock};
use tokio::sync::watch;

/// How many events a watcher takes from the history at a time.
const BUFFER: usize = 256;

struct Cursor {
    state: Arc<RwLock<State>>,
    revisions: watch::Receiver<Revision>,
    prefix: String,
    after: Revision,
    buffer: VecDeque<Arc<WatchEvent>>,
    done: bool,
}

pub fn stream(
    state: Arc<RwLock<State>>,
    revisions: watch::Receiver<Revision>,
    prefix: String,
    after: Revision,
) -> super::WatchStream {
    let cursor = Cursor { state, revisions, prefix, after, buffer: VecDeque::new(), done: false };
    futures::stream::unfold(cursor, |mut c| async move {
        let item = c.next_event().await?;
        Some((item, c))
    })
    .boxed()
}

impl Cursor {
    async fn next_event(&mut self) -> Option<Result<Arc<WatchEvent>, StoreError>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(event) = self.buffer.pop_front() {
                return Some(Ok(event));
            }
            // Mark what we are about to read as seen before reading, so a change committed
            // right after the read still wakes us.
            self.revisions.borrow_and_update();
            let read = match self.state.read() {
                Ok(state) => state.events_after(&self.prefix, self.after, BUFFER),
                Err(_) => Err(StoreError::Backend("state lock poisoned".into())),
            };
            match read {
                Ok((events, scanned)) => {
                    self.after = scanned;
                    if events.is_empty() {
                        if self.revisions.changed().await.is_err() {
                            return None;
                        }
                    } else {
                        self.buffer.extend(events);
                    }
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
