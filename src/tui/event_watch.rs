//! The event stream's watch: whole objects from the cluster layer's
//! [`watch_events`], first with an ADDED for every object there is (the diffs of later
//! changes start from them), then resumed from the last resourceVersion when the server
//! ends a watch, from scratch after `410 Gone`, and again after errors. A state machine
//! turned into a stream of [`Msg`]s that the main `select!` polls.

use crate::cluster::tui_ops::is_gone;
use crate::cluster::watch::{ObjectEvent, Watching, watch_events};
use crate::cluster::{ClusterError, ResourceType};
use crate::tui::action::Msg;
use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use std::time::Duration;

/// Pause before trying again after an error.
const RETRY: Duration = Duration::from_secs(2);
/// Pause before resuming a watch the server ended.
const RESUME: Duration = Duration::from_millis(100);

enum Phase {
    /// Watch from this resourceVersion (empty: from the objects there are).
    Watch(String),
    Streaming {
        events: BoxStream<'static, Result<ObjectEvent, ClusterError>>,
        rv: String,
    },
    Wait {
        pause: Duration,
        rv: String,
    },
}

/// One event stream's watch.
pub struct EventWatch {
    client: kube::Client,
    kind: ResourceType,
    what: Watching,
    stream: u64,
    phase: Phase,
}

impl EventWatch {
    pub fn new(client: kube::Client, kind: ResourceType, what: Watching, stream: u64) -> Self {
        EventWatch { client, kind, what, stream, phase: Phase::Watch(String::new()) }
    }

    /// The messages of this watch, until dropped.
    pub fn into_stream(self) -> BoxStream<'static, Msg> {
        futures::stream::unfold(self, |mut w| async move {
            let msg = w.step().await;
            Some((msg, w))
        })
        .boxed()
    }

    fn failed(&mut self, e: &ClusterError, rv: String) -> Msg {
        self.phase = Phase::Wait { pause: RETRY, rv };
        Msg::ObjectEvent { stream: self.stream, event: Err(format!("{e}; reconnecting")) }
    }

    async fn step(&mut self) -> Msg {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Watch(String::new())) {
                Phase::Watch(rv) => match watch_events(&self.client, &self.kind, &self.what, &rv).await {
                    Ok(events) => self.phase = Phase::Streaming { events, rv },
                    Err(e) if is_gone(&e) => self.phase = Phase::Watch(String::new()),
                    Err(e) => return self.failed(&e, rv),
                },
                Phase::Streaming { mut events, mut rv } => match events.next().await {
                    Some(Ok(event)) => {
                        if let Some(v) = event.object.pointer("/metadata/resourceVersion").and_then(Value::as_str) {
                            rv = v.to_string();
                        }
                        self.phase = Phase::Streaming { events, rv };
                        return Msg::ObjectEvent { stream: self.stream, event: Ok(event) };
                    }
                    Some(Err(e)) if is_gone(&e) => self.phase = Phase::Watch(String::new()),
                    Some(Err(e)) => return self.failed(&e, rv),
                    None => self.phase = Phase::Wait { pause: RESUME, rv },
                },
                Phase::Wait { pause, rv } => {
                    tokio::time::sleep(pause).await;
                    self.phase = Phase::Watch(rv);
                }
            }
        }
    }
}
