//! How many keys lie after a page of a list, without walking them.
//!
//! A page's `remaining` (kube's `remainingItemCount`) is the number of keys under the
//! prefix after the page. Counting them by walking the rest of the range made every page
//! cost the whole collection (about 15 ms a page at 200,000 keys, whatever the limit). Two
//! pieces of bookkeeping answer it instead:
//! - [`DirectoryCounts`]: how many current keys each directory holds (every prefix of a
//!   key that ends in `/`: a kind's, a namespace's), so a first page at the current
//!   revision knows its total;
//! - [`Continuations`]: for the `next_key` a page handed out at a revision, how many keys
//!   lay from it on. A state at a past revision never changes, so the next page at that
//!   revision subtracts what it takes.
//!
//! Pages neither can answer (a first page at a past revision, a continue token this state
//! did not hand out) still walk.

use super::Revision;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// The number of current keys under each directory prefix. A persistent map, so a state's
/// snapshot shares it in O(1) as it shares the keys.
#[derive(Debug, Clone, Default)]
pub struct DirectoryCounts(imbl::HashMap<Arc<str>, u64>);

impl DirectoryCounts {
    /// A key was added.
    pub fn add(&mut self, key: &str) {
        for dir in directories(key) {
            match self.0.get_mut(dir) {
                Some(n) => *n += 1,
                None => {
                    self.0.insert(Arc::from(dir), 1);
                }
            }
        }
    }

    /// A key was removed.
    pub fn remove(&mut self, key: &str) {
        for dir in directories(key) {
            let Some(n) = self.0.get_mut(dir) else { continue };
            *n -= 1;
            if *n == 0 {
                self.0.remove(dir);
            }
        }
    }

    /// How many keys `prefix` holds, if it is a directory prefix (ends in `/`).
    pub fn under(&self, prefix: &str) -> Option<u64> {
        prefix.ends_with('/').then(|| self.0.get(prefix).copied().unwrap_or(0))
    }
}

/// Every prefix of `key` that ends in `/`, the root `/` included.
fn directories(key: &str) -> impl Iterator<Item = &str> {
    key.match_indices('/').map(move |(i, _)| &key[..=i])
}

/// Where a continuation stands: the list's prefix, its revision and the key it resumes at.
type At = (String, Revision, String);

/// How many keys lay from each recently handed-out `next_key` on, at its page's revision.
/// Bounded: the oldest continuations are forgotten first (their next page walks).
#[derive(Debug, Default)]
pub struct Continuations {
    from: HashMap<At, u64>,
    order: VecDeque<At>,
}

/// Continuations remembered at most: two per list being paged through at once.
const CONTINUATIONS: usize = 512;

impl Continuations {
    /// The keys from `start` on under `prefix` at `revision`, if a page handed it out.
    pub fn from(&self, prefix: &str, revision: Revision, start: &str) -> Option<u64> {
        // The map is keyed by owned strings; a lookup this rare (once a page) may allocate.
        self.from.get(&(prefix.to_string(), revision, start.to_string())).copied()
    }

    /// A page at `revision` handed out `next_key`, with `count` keys from it on.
    pub fn remember(&mut self, prefix: &str, revision: Revision, next_key: &str, count: u64) {
        let at = (prefix.to_string(), revision, next_key.to_string());
        if self.from.insert(at.clone(), count).is_none() {
            self.order.push_back(at);
        }
        while self.order.len() > CONTINUATIONS {
            if let Some(old) = self.order.pop_front() {
                self.from.remove(&old);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_every_slash_ended_prefix() {
        assert_eq!(
            directories("/registry/g/p/ns/name").collect::<Vec<_>>(),
            ["/", "/registry/", "/registry/g/", "/registry/g/p/", "/registry/g/p/ns/"]
        );
    }

    #[test]
    fn counts_follow_adds_and_removes_and_forget_empty_directories() {
        let mut c = DirectoryCounts::default();
        c.add("/r/g/p/a/1");
        c.add("/r/g/p/a/2");
        c.add("/r/g/p/b/1");
        assert_eq!(c.under("/r/g/p/"), Some(3));
        assert_eq!(c.under("/r/g/p/a/"), Some(2));
        assert_eq!(c.under("/r/g/q/"), Some(0));
        assert_eq!(c.under("/r/g/p/a"), None, "not a directory: the caller walks");
        c.remove("/r/g/p/b/1");
        assert_eq!(c.under("/r/g/p/b/"), Some(0));
        assert!(!c.0.contains_key("/r/g/p/b/"), "an emptied directory is dropped");
        assert_eq!(c.under("/"), Some(2));
    }

    #[test]
    fn continuations_are_per_prefix_revision_and_key_and_bounded() {
        let mut c = Continuations::default();
        c.remember("/a/", 7, "/a/5", 10);
        assert_eq!(c.from("/a/", 7, "/a/5"), Some(10));
        assert_eq!(c.from("/a/", 8, "/a/5"), None);
        assert_eq!(c.from("/b/", 7, "/a/5"), None);
        for i in 0..CONTINUATIONS {
            c.remember("/a/", 9, &format!("/a/{i}"), 1);
        }
        assert_eq!(c.from("/a/", 7, "/a/5"), None, "the oldest is forgotten");
        assert_eq!(c.from("/a/", 9, "/a/0"), Some(1));
    }
}
