//! The committer: one thread that turns concurrent write requests into group commits.
//!
//! Every write goes through here. The thread takes every request waiting in its queue,
//! checks each against the current state plus the earlier requests of the same batch,
//! gives each successful one the next revision, makes the whole batch durable with one
//! [`Persist::persist`] call (one log fsync for redb), then applies it to the in-memory state,
//! wakes the watchers, and answers every caller. So throughput grows with concurrency
//! instead of collapsing to one fsync per write, and a caller is answered only once its
//! write is durable and visible.

use super::state::State;
use super::{Deleted, KeyValue, Revision, StoreError, WatchEvent};
use bytes::Bytes;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use tokio::sync::{mpsc, oneshot};

/// The most requests one commit takes.
const MAX_BATCH: usize = 4096;

/// Makes a batch of changes durable, all or none.
pub trait Persist: Send + 'static {
    /// Persists `batch`, in order; an error fails every write of the batch.
    fn persist(&mut self, batch: &[WatchEvent]) -> Result<(), StoreError>;
}

/// Keeps nothing: the memory store.
pub struct NoPersist;

impl Persist for NoPersist {
    fn persist(&mut self, _batch: &[WatchEvent]) -> Result<(), StoreError> {
        Ok(())
    }
}

/// A write request.
#[derive(Debug)]
pub enum Op {
    Create { key: String, value: Bytes },
    Update { key: String, value: Bytes, expected: Option<Revision> },
    Delete { key: String, expected: Option<Revision> },
}

/// What a successful write returns.
#[derive(Debug)]
pub enum Outcome {
    Written(KeyValue),
    Deleted(Deleted),
}

struct Request {
    op: Op,
    reply: oneshot::Sender<Result<Outcome, StoreError>>,
}

/// The handle callers submit writes through. Dropping it stops the committer thread.
pub struct Writer {
    queue: mpsc::Sender<Request>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    pub fn spawn<P: Persist>(
        persist: P,
        state: Arc<RwLock<State>>,
        revisions: tokio::sync::watch::Sender<Revision>,
    ) -> Self {
        let (tx, rx) = mpsc::channel(MAX_BATCH);
        let spawned = std::thread::Builder::new()
            .name("store-committer".into())
            .spawn(move || run(persist, state, revisions, rx));
        let thread = match spawned {
            Ok(handle) => Some(handle),
            Err(e) => {
                // Without the thread every submit answers `Closed`, which callers report.
                tracing::error!("cannot start the store committer: {e}");
                None
            }
        };
        Writer { queue: tx, thread }
    }

    /// Stops taking writes and waits until the committer has finished its last batch and
    /// released the backend (for redb: closed the database file).
    pub async fn close(self) {
        let Writer { queue, thread } = self;
        drop(queue);
        if let Some(handle) = thread {
            let _ = tokio::task::spawn_blocking(move || handle.join()).await;
        }
    }

    pub async fn submit(&self, op: Op) -> Result<Outcome, StoreError> {
        let (reply, answer) = oneshot::channel();
        self.queue.send(Request { op, reply }).await.map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

fn run<P: Persist>(
    mut persist: P,
    state: Arc<RwLock<State>>,
    revisions: tokio::sync::watch::Sender<Revision>,
    mut queue: mpsc::Receiver<Request>,
) {
    let mut last_batch = 1;
    while let Some(first) = queue.blocking_recv() {
        let mut requests = vec![first];
        collect(&mut queue, &mut requests, last_batch);
        last_batch = requests.len();
        commit(&mut persist, &state, &revisions, requests);
    }
}

/// How long a batch waits for writers that were in the previous batch. Callers answered
/// by the last commit need a moment to be scheduled and send their next write; without
/// this pause the committer takes whoever is queued right now, and with many writers the
/// batches shrink to a few requests each, one fsync apiece.
const LINGER: std::time::Duration = std::time::Duration::from_micros(150);

/// Takes what is queued; while the batch is smaller than the previous one, waits up to
/// [`LINGER`] for the rest. A lone writer never waits (its previous batch was 1).
fn collect(queue: &mut mpsc::Receiver<Request>, requests: &mut Vec<Request>, expected: usize) {
    let deadline = std::time::Instant::now() + LINGER;
    while requests.len() < MAX_BATCH {
        match queue.try_recv() {
            Ok(r) => requests.push(r),
            Err(mpsc::error::TryRecvError::Empty)
                if requests.len() < expected && std::time::Instant::now() < deadline =>
            {
                std::thread::yield_now();
            }
            Err(_) => break,
        }
    }
}

/// Decides, persists, applies and answers one batch.
fn commit<P: Persist>(
    persist: &mut P,
    state: &RwLock<State>,
    revisions: &tokio::sync::watch::Sender<Revision>,
    requests: Vec<Request>,
) {
    let (events, answers) = match state.read() {
        Ok(current) => plan(&current, requests),
        Err(_) => {
            answer_all(requests, StoreError::Backend("state lock poisoned".into()));
            return;
        }
    };
    if !events.is_empty() {
        if let Err(e) = persist.persist(&events) {
            for (reply, _) in answers {
                let _ = reply.send(Err(e.clone()));
            }
            return;
        }
        let Ok(mut current) = state.write() else {
            for (reply, _) in answers {
                let _ = reply.send(Err(StoreError::Backend("state lock poisoned".into())));
            }
            return;
        };
        let last = events.last().map(|e| e.revision);
        for event in events {
            current.apply(event);
        }
        drop(current);
        if let Some(rev) = last {
            revisions.send_replace(rev);
        }
    }
    for (reply, outcome) in answers {
        let _ = reply.send(outcome);
    }
}

type Answer = (oneshot::Sender<Result<Outcome, StoreError>>, Result<Outcome, StoreError>);

/// Checks each request against the state and the batch's earlier requests; returns the
/// changes to persist (consecutive revisions) and each caller's answer.
fn plan(current: &State, requests: Vec<Request>) -> (Vec<WatchEvent>, Vec<Answer>) {
    let mut overlay: HashMap<String, Option<KeyValue>> = HashMap::new();
    let mut events = Vec::new();
    let mut answers = Vec::with_capacity(requests.len());
    let mut revision = current.revision();
    for Request { op, reply } in requests {
        let key = match &op {
            Op::Create { key, .. } | Op::Update { key, .. } | Op::Delete { key, .. } => key.clone(),
        };
        let existing = match overlay.get(&key) {
            Some(v) => v.clone(),
            None => current.get(&key).cloned(),
        };
        let decided = decide(op, existing, revision + 1);
        if let Ok((event, _)) = &decided {
            revision += 1;
            overlay.insert(key, event.current.clone());
            events.push(event.clone());
        }
        answers.push((reply, decided.map(|(_, outcome)| outcome)));
    }
    (events, answers)
}

/// One request against the key's current value, at revision `rev`.
fn decide(op: Op, existing: Option<KeyValue>, rev: Revision) -> Result<(WatchEvent, Outcome), StoreError> {
    let guard = |key: &str, existing: &KeyValue, expected: Option<Revision>| match expected {
        Some(exp) if exp != existing.mod_revision => {
            Err(StoreError::Conflict { key: key.to_string(), expected: exp, actual: existing.mod_revision })
        }
        _ => Ok(()),
    };
    match op {
        Op::Create { key, value } => {
            if existing.is_some() {
                return Err(StoreError::AlreadyExists { key });
            }
            let kv = KeyValue { key: key.clone(), value, create_revision: rev, mod_revision: rev };
            Ok((WatchEvent { revision: rev, key, current: Some(kv.clone()), prev: None }, Outcome::Written(kv)))
        }
        Op::Update { key, value, expected } => {
            let prev = existing.ok_or_else(|| StoreError::NotFound { key: key.clone() })?;
            guard(&key, &prev, expected)?;
            let kv = KeyValue { key: key.clone(), value, create_revision: prev.create_revision, mod_revision: rev };
            Ok((WatchEvent { revision: rev, key, current: Some(kv.clone()), prev: Some(prev) }, Outcome::Written(kv)))
        }
        Op::Delete { key, expected } => {
            let prev = existing.ok_or_else(|| StoreError::NotFound { key: key.clone() })?;
            guard(&key, &prev, expected)?;
            let deleted = Deleted { prev: prev.clone(), revision: rev };
            Ok((WatchEvent { revision: rev, key, current: None, prev: Some(prev) }, Outcome::Deleted(deleted)))
        }
    }
}

fn answer_all(requests: Vec<Request>, error: StoreError) {
    for r in requests {
        let _ = r.reply.send(Err(error.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::thread::ThreadId;
    use std::time::Duration;

    /// Which thread made each batch durable, and how many changes it held.
    type Batches = Arc<Mutex<Vec<(ThreadId, usize)>>>;

    /// Keeps nothing, after `delay` (a sync), and notes each batch in `batches`.
    struct Recording {
        delay: Duration,
        batches: Batches,
    }

    impl Persist for Recording {
        fn persist(&mut self, batch: &[WatchEvent]) -> Result<(), StoreError> {
            std::thread::sleep(self.delay);
            self.batches.lock().expect("batches").push((std::thread::current().id(), batch.len()));
            Ok(())
        }
    }

    fn writer(delay: Duration) -> (Writer, Batches) {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let persist = Recording { delay, batches: Arc::clone(&batches) };
        let (revisions, _) = tokio::sync::watch::channel(0);
        (
            Writer::spawn(
                persist,
                Arc::new(RwLock::new(State::new(0, super::super::HistoryLimit::default()))),
                revisions,
            ),
            batches,
        )
    }

    fn create(key: &str) -> Op {
        Op::Create { key: key.into(), value: Bytes::from_static(b"{}") }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writes_share_commits_on_the_committer_thread() {
        let (writer, batches) = writer(Duration::from_millis(20));
        let writer = Arc::new(writer);
        let writes: Vec<_> = (0..16)
            .map(|i| {
                let writer = Arc::clone(&writer);
                tokio::spawn(async move { writer.submit(create(&format!("/k/{i}"))).await })
            })
            .collect();
        let mut revisions = Vec::new();
        for w in writes {
            let Ok(Outcome::Written(kv)) = w.await.expect("task") else { panic!("written") };
            revisions.push(kv.mod_revision);
        }
        revisions.sort();
        assert_eq!(revisions, (1..=16).collect::<Vec<Revision>>(), "each write its own revision");
        let batches = batches.lock().expect("batches").clone();
        assert_eq!(batches.iter().map(|(_, n)| n).sum::<usize>(), 16);
        assert!(batches.len() < 16, "the writes were grouped: {batches:?}");
        let workers: Vec<ThreadId> = batches.iter().filter(|(_, n)| *n > 1).map(|(t, _)| *t).collect();
        assert!(!workers.is_empty() && workers.iter().all(|t| *t == workers[0]), "one committer: {batches:?}");
    }
}
