//! The registrations screen's live list: a watch of every CRD, so a CRD created, changed
//! (accepted names, conditions) or deleted elsewhere shows up without Ctrl-R, as k9s's
//! CRD view follows the cluster. kube-rs's watcher lists, watches, resumes after the
//! server ends a watch, lists again after `410 Gone` and backs off after errors; this turns
//! its events into [`Msg`]s.

use crate::cluster::registrations::Crd;
use crate::tui::action::Msg;
use futures::StreamExt;
use futures::stream::BoxStream;
use kube::Api;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher::Config};

/// The messages of a watch of every CRD through `client`, forever (until dropped).
///
/// Every (re)list ends in [`Msg::CrdsListed`] with the names it found, so a CRD deleted
/// while the watch was down leaves the screen too. Errors are retried with kube-rs's
/// default backoff; while they last the list stays as it was, and Ctrl-R still reloads.
pub fn crd_changes(client: kube::Client) -> BoxStream<'static, Msg> {
    let api: Api<Crd> = Api::all(client);
    let events = watcher::watcher(api, Config::default()).default_backoff();
    events
        .scan(Vec::new(), |listed, event| futures::future::ready(Some(message(listed, event))))
        .filter_map(futures::future::ready)
        .boxed()
}

/// The message for one watcher event; `listed` gathers the names of a list in progress.
fn message(listed: &mut Vec<String>, event: Result<Event<Crd>, watcher::Error>) -> Option<Msg> {
    match event.ok()? {
        Event::InitApply(crd) => {
            listed.push(crd.metadata.name.clone().unwrap_or_default());
            Some(Msg::CrdChanged(Box::new(crd)))
        }
        Event::Apply(crd) => Some(Msg::CrdChanged(Box::new(crd))),
        Event::Delete(crd) => Some(Msg::CrdDeleted(crd.metadata.name.unwrap_or_default())),
        Event::Init => {
            listed.clear();
            None
        }
        Event::InitDone => Some(Msg::CrdsListed(std::mem::take(listed))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd(name: &str) -> Crd {
        let mut crd = Crd::default();
        crd.metadata.name = Some(name.into());
        crd
    }

    #[test]
    fn a_relist_names_what_it_found_and_nothing_from_before() {
        let mut listed = vec!["stale.example.com".to_string()];
        assert_eq!(message(&mut listed, Ok(Event::Init)), None);
        let found = message(&mut listed, Ok(Event::InitApply(crd("a.example.com"))));
        assert_eq!(found, Some(Msg::CrdChanged(Box::new(crd("a.example.com")))));
        assert_eq!(message(&mut listed, Ok(Event::InitDone)), Some(Msg::CrdsListed(vec!["a.example.com".into()])));
        assert!(listed.is_empty());
    }

    #[test]
    fn changes_and_deletes_pass_through_and_errors_say_nothing() {
        let mut listed = Vec::new();
        let changed = message(&mut listed, Ok(Event::Apply(crd("a.example.com"))));
        assert_eq!(changed, Some(Msg::CrdChanged(Box::new(crd("a.example.com")))));
        assert!(listed.is_empty(), "a change outside a list is not gathered");
        assert_eq!(
            message(&mut listed, Ok(Event::Delete(crd("b.example.com")))),
            Some(Msg::CrdDeleted("b.example.com".into()))
        );
        let err = watcher::Error::NoResourceVersion;
        assert_eq!(message(&mut listed, Err(err)), None);
    }
}
