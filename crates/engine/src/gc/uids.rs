//! Every stored object's uid, for one question the collector asks of any object: is the
//! owner a reference names still there? Nodes are kept only for the objects the collector
//! acts on, but any object may be named as an owner.

use imbl::OrdMap;
use std::sync::Arc;

/// A multiset of uids: canonical UUIDs (lower-case, hyphenated: what the engine writes) in
/// 16 bytes, any other uid (data from elsewhere) as its text. Counted, so that two objects
/// sharing a uid cannot make one look gone when the other goes.
#[derive(Debug, Default, Clone)]
pub(super) struct Uids {
    uuids: OrdMap<[u8; 16], u32>,
    others: OrdMap<Arc<str>, u32>,
}

impl Uids {
    pub(super) fn insert(&mut self, uid: &str) {
        match parse_uuid(uid) {
            Some(bytes) => *self.uuids.entry(bytes).or_default() += 1,
            None => *self.others.entry(Arc::from(uid)).or_default() += 1,
        }
    }

    pub(super) fn remove(&mut self, uid: &str) {
        match parse_uuid(uid) {
            Some(bytes) => decrement(&mut self.uuids, &bytes),
            None => decrement(&mut self.others, uid),
        }
    }

    pub(super) fn contains(&self, uid: &str) -> bool {
        match parse_uuid(uid) {
            Some(bytes) => self.uuids.contains_key(&bytes),
            None => self.others.contains_key(uid),
        }
    }
}

fn decrement<K, Q>(map: &mut OrdMap<K, u32>, key: &Q)
where
    K: Ord + Clone + std::borrow::Borrow<Q>,
    Q: Ord + ?Sized,
{
    if let Some(count) = map.get_mut(key) {
        *count -= 1;
        if *count == 0 {
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
        uids.insert(&uuid);
        uids.insert("legacy-uid");
        assert!(uids.contains(&uuid) && uids.contains("legacy-uid"));
        // Upper case is another uid: kube compares uids as strings.
        assert!(!uids.contains(&uuid.to_uppercase()));
        assert_eq!((uids.uuids.len(), uids.others.len()), (1, 1));
    }

    #[test]
    fn a_uid_held_twice_stays_until_both_go() {
        let mut uids = Uids::default();
        for uid in ["0b5a7c1e-93f2-4d2a-8c1b-2f0e6a9d4b37", "shared"] {
            uids.insert(uid);
            uids.insert(uid);
            uids.remove(uid);
            assert!(uids.contains(uid));
            uids.remove(uid);
            assert!(!uids.contains(uid));
            // Removing what is not there changes nothing.
            uids.remove(uid);
            assert!(!uids.contains(uid));
        }
    }
}
