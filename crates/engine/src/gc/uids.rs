//! Every stored object's uid and where it is stored, for one question the collector asks of
//! any object: is the owner a reference names still there, where the reference says?
//! Nodes are kept only for the objects the collector acts on, but any object may be named
//! as an owner. The key is held as a hash: eight bytes an object, not its whole key.

use imbl::OrdMap;
use std::sync::Arc;

/// A multiset of uids: canonical UUIDs (lower-case, hyphenated: what the engine writes) in
/// 16 bytes, any other uid (data from elsewhere) as its text. Counted, so that two objects
/// sharing a uid cannot make one look gone when the other goes.
#[derive(Debug, Default, Clone)]
pub(super) struct Uids {
    uuids: OrdMap<[u8; 16], Held>,
    others: OrdMap<Arc<str>, Held>,
}

/// How many stored objects hold a uid, and where the one holding it is stored (`None`
/// once two have held it at once: data from elsewhere, where only presence is judged),
/// with its namespace apart (`""` for a cluster-scoped object).
#[derive(Debug, Default, Clone, Copy)]
struct Held {
    count: u32,
    key: Option<u64>,
    home: u64,
}

impl Uids {
    /// Records that the object stored at `key` holds `uid`.
    pub(super) fn insert(&mut self, uid: &str, key: &str) {
        let home = key_hash(super::graph::namespaced(key).map_or("", |(_, namespace)| namespace));
        let key = key_hash(key);
        let held = match parse_uuid(uid) {
            Some(bytes) => self.uuids.entry(bytes).or_default(),
            None => self.others.entry(Arc::from(uid)).or_default(),
        };
        held.key = if held.count == 0 { Some(key) } else { None };
        held.home = home;
        held.count += 1;
    }

    pub(super) fn remove(&mut self, uid: &str) {
        match parse_uuid(uid) {
            Some(bytes) => decrement(&mut self.uuids, &bytes),
            None => decrement(&mut self.others, uid),
        }
    }

    pub(super) fn contains(&self, uid: &str) -> bool {
        self.held(uid).is_some()
    }

    /// Whether an object holding `uid` is stored at `key` (any one, when several hold it).
    pub(super) fn at(&self, uid: &str, key: &str) -> bool {
        self.held(uid).is_some_and(|held| held.key.is_none_or(|k| k == key_hash(key)))
    }

    /// Whether the one object holding `uid` lives in a namespace, not `namespace` (`""`
    /// for a cluster-scoped dependent): kube's collector warns of a reference to it.
    pub(super) fn elsewhere(&self, uid: &str, namespace: &str) -> bool {
        let cluster = key_hash("");
        self.held(uid).is_some_and(|h| h.key.is_some() && h.home != cluster && h.home != key_hash(namespace))
    }

    fn held(&self, uid: &str) -> Option<&Held> {
        match parse_uuid(uid) {
            Some(bytes) => self.uuids.get(&bytes),
            None => self.others.get(uid),
        }
    }
}

/// A stored key's hash: fixed keys, so a graph means the same in every engine.
fn key_hash(key: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

fn decrement<K, Q>(map: &mut OrdMap<K, Held>, key: &Q)
where
    K: Ord + Clone + std::borrow::Borrow<Q>,
    Q: Ord + ?Sized,
{
    if let Some(held) = map.get_mut(key) {
        held.count -= 1;
        if held.count == 0 {
            map.remove(key);
        }
    }
}

/// The bytes of a canonical UUID (`8-4-4-4-12` lower-case hex digits); `None` for any other
/// text, so that every uid maps to one entry and back.
fn parse_uuid(uid: &str) -> Option<[u8; 16]> {
    let text = uid.as_bytes();
    if text.len() != 36 {
        return None;
    }
    let mut bytes = [0u8; 16];
    let mut digits = text.iter().enumerate().filter(|(i, _)| !matches!(i, 8 | 13 | 18 | 23)).map(|(_, &c)| c);
    if [8, 13, 18, 23].iter().any(|&i| text[i] != b'-') {
        return None;
    }
    for byte in &mut bytes {
        let (hi, lo) = (digits.next().and_then(hex)?, digits.next().and_then(hex)?);
        *byte = hi << 4 | lo;
    }
    Some(bytes)
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_uuids_are_held_as_bytes_and_others_as_text() {
        let uuid = crate::meta::new_uid();
        assert!(parse_uuid(&uuid).is_some());
        for other in ["", "x", &uuid.to_uppercase(), &uuid.replace('-', "_"), &format!("{}g", &uuid[..35])] {
            assert_eq!(parse_uuid(other), None, "{other:?}");
        }
        let mut uids = Uids::default();
        uids.insert(&uuid, "/registry/g/p/ns/a");
        uids.insert("legacy-uid", "/registry/g/p/ns/b");
        assert!(uids.contains(&uuid) && uids.contains("legacy-uid"));
        assert!(uids.at(&uuid, "/registry/g/p/ns/a") && !uids.at(&uuid, "/registry/g/p/other/a"));
        assert!(uids.at("legacy-uid", "/registry/g/p/ns/b") && !uids.at("legacy-uid", "/registry/g/p/ns/a"));
        assert!(uids.elsewhere(&uuid, "other") && uids.elsewhere(&uuid, "") && !uids.elsewhere(&uuid, "ns"));

        // Upper case is another uid: kube compares uids as strings.
        assert!(!uids.contains(&uuid.to_uppercase()));
        assert_eq!((uids.uuids.len(), uids.others.len()), (1, 1));
        uids.insert("cluster-uid", "/registry/g/p/c");
        assert!(!uids.elsewhere("cluster-uid", "ns") && !uids.elsewhere("unknown", "ns"));
    }

    #[test]
    fn a_uid_held_twice_stays_until_both_go() {
        let mut uids = Uids::default();
        for uid in ["0b5a7c1e-93f2-4d2a-8c1b-2f0e6a9d4b37", "shared"] {
            uids.insert(uid, "/registry/g/p/a");
            uids.insert(uid, "/registry/g/p/b");
            uids.remove(uid);
            assert!(uids.contains(uid));
            // Which of the two is left is not known: wherever a reference looks, it is there.
            assert!(uids.at(uid, "/registry/g/p/a") && uids.at(uid, "/registry/g/p/c"));
            uids.remove(uid);
            assert!(!uids.contains(uid));
            // Removing what is not there changes nothing.
            uids.remove(uid);
            assert!(!uids.contains(uid));
        }
    }
}
