//! The live list of the resources screen: list (a first page of a screenful, then the rest
//! in large pages), then watch from the list's resourceVersion, resume after the server ends a watch, list again after `410 Gone`,
//! retry after errors. A state machine ([`Phase`] and one step function) turned into a
//! stream of [`Msg`]s that the main `select!` polls beside the terminal and the ticks.

use crate::cluster::ClusterError;
use crate::cluster::ResourceType;
use crate::cluster::tui_ops::{TableEvent, Watched, fetch_table_page, is_gone, watch_table};
use crate::tui::action::{Msg, WatchEvent};
use crate::tui::table::{ObjKey, Row, TableData};
use futures::StreamExt;
use futures::stream::BoxStream;
use std::time::Duration;

/// Rows of the first page: a screenful and more, so the first frame comes quickly.
const FIRST_PAGE: u32 = 200;
/// Rows of the pages after it.
const PAGE: u32 = 5_000;
/// Pause before trying again after an error.
const RETRY: Duration = Duration::from_secs(2);
/// Pause before resuming a watch the server ended (it ends them every few minutes).
const RESUME: Duration = Duration::from_millis(100);

enum Phase {
    List,
    /// The rest of a list, page by page.
    Listing {
        rv: String,
        next: String,
    },
    Watch {
        rv: String,
    },
    Streaming {
        events: BoxStream<'static, Result<Watched, ClusterError>>,
        rv: String,
    },
    Wait {
        pause: Duration,
        next: Box<Phase>,
    },
}

/// One list+watch of a resource table.
pub struct TableWatch {
    client: kube::Client,
    resource: ResourceType,
    namespace: Option<String>,
    selector: Option<String>,
    id: u64,
    phase: Phase,
}

impl TableWatch {
    pub fn new(
        client: kube::Client,
        resource: ResourceType,
        namespace: Option<String>,
        selector: Option<String>,
        id: u64,
    ) -> Self {
        TableWatch { client, resource, namespace, selector, id, phase: Phase::List }
    }

    /// The messages of this watch, forever (until dropped).
    pub fn into_stream(self) -> BoxStream<'static, Msg> {
        futures::stream::unfold(self, |mut w| async move {
            let msg = w.step().await;
            Some((msg, w))
        })
        .boxed()
    }

    fn watch_error(&self, e: &ClusterError) -> Msg {
        Msg::Watch { watch: self.id, event: WatchEvent::Error(format!("{e}; reconnecting")) }
    }

    /// Runs until the next message.
    async fn step(&mut self) -> Msg {
        let id = self.id;
        loop {
            let ns = self.namespace.as_deref();
            let sel = self.selector.as_deref();
            match std::mem::replace(&mut self.phase, Phase::List) {
                Phase::List => match fetch_table_page(&self.client, &self.resource, ns, sel, FIRST_PAGE, None).await {
                    Ok(page) => {
                        self.phase = match page.next {
                            Some(next) => Phase::Listing { rv: page.resource_version, next },
                            None => Phase::Watch { rv: page.resource_version },
                        };
                        let mut data: TableData = page.table.into();
                        data.remaining = page.remaining.unwrap_or(0);
                        return Msg::Table { watch: id, result: Ok(data) };
                    }
                    Err(e) => {
                        self.phase = Phase::Wait { pause: RETRY, next: Box::new(Phase::List) };
                        return Msg::Table { watch: id, result: Err(e.to_string()) };
                    }
                },
                Phase::Listing { rv, next } => {
                    match fetch_table_page(&self.client, &self.resource, ns, sel, PAGE, Some(&next)).await {
                        Ok(page) => {
                            let done = page.next.is_none();
                            self.phase = match page.next {
                                Some(next) => Phase::Listing { rv, next },
                                None => Phase::Watch { rv },
                            };
                            let rows = page.table.rows.into_iter().map(Row::from).collect();
                            return Msg::Rows { watch: id, rows, done };
                        }
                        // The continue token expired: read the list again.
                        Err(e) if is_gone(&e) => self.phase = Phase::List,
                        Err(e) => {
                            self.phase = Phase::Wait { pause: RETRY, next: Box::new(Phase::List) };
                            return self.watch_error(&e);
                        }
                    }
                }
                Phase::Watch { rv } => match watch_table(&self.client, &self.resource, ns, sel, &rv).await {
                    Ok(events) => self.phase = Phase::Streaming { events, rv },
                    Err(e) if is_gone(&e) => self.phase = Phase::List,
                    Err(e) => {
                        self.phase = Phase::Wait { pause: RETRY, next: Box::new(Phase::Watch { rv }) };
                        return self.watch_error(&e);
                    }
                },
                Phase::Streaming { mut events, mut rv } => match events.next().await {
                    Some(Ok(w)) => {
                        if let Some(v) = w.resource_version.filter(|v| !v.is_empty()) {
                            rv = v;
                        }
                        self.phase = Phase::Streaming { events, rv };
                        let event = match w.event {
                            TableEvent::Upsert(row) => WatchEvent::Upsert(Row::from(row)),
                            TableEvent::Deleted { name, namespace } => WatchEvent::Delete(ObjKey { namespace, name }),
                            TableEvent::Bookmark => continue,
                        };
                        return Msg::Watch { watch: id, event };
                    }
                    // The object went away before its row could be read: its DELETED follows.
                    Some(Err(e)) if e.is_not_found() => self.phase = Phase::Streaming { events, rv },
                    Some(Err(e)) if is_gone(&e) => self.phase = Phase::List,
                    Some(Err(e)) => {
                        self.phase = Phase::Wait { pause: RETRY, next: Box::new(Phase::Watch { rv }) };
                        return self.watch_error(&e);
                    }
                    None => self.phase = Phase::Wait { pause: RESUME, next: Box::new(Phase::Watch { rv }) },
                },
                Phase::Wait { pause, next } => {
                    tokio::time::sleep(pause).await;
                    self.phase = *next;
                }
            }
        }
    }
}
