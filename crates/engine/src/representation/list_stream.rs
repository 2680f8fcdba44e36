//! A plain JSON list encoded while it is sent, as kube-apiserver 1.32 streams the JSON of
//! collections: the answer to an unpaged list of a million objects is about a gigabyte,
//! which must not be assembled before its first byte goes out. The items are the store's
//! bytes, shared, so what a list in flight holds is one reference per item not yet sent
//! and one chunk of output; the client's reading paces the encoding.

use super::negotiation::{Format, Negotiated, Target};
use super::{KindNames, ListMeta, RawObject, write_list_head, write_list_item, write_list_tail};
use bytes::Bytes;
use std::sync::Arc;

/// How many bytes a chunk holds before it is handed on (the last one may hold less; one
/// item is never split, so a chunk may exceed this by an item).
pub const CHUNK_BYTES: usize = 64 * 1024;

/// From which estimated size a list is streamed. Smaller answers go out whole, with a
/// Content-Length, as Go's server sends an answer it was given in one piece.
pub const STREAM_FROM_BYTES: usize = 1024 * 1024;

/// One item as the store keeps it: its JSON and the resourceVersion to serve it at.
pub type StoredItem = (Bytes, u64);

/// Whether a list negotiated as `negotiated`, of about `estimated` bytes, is streamed:
/// plain JSON objects only (YAML, indentation, export, Tables and metadata-only lists are
/// transformed whole).
pub fn streams(negotiated: &Negotiated, estimated: usize) -> bool {
    negotiated.target == Target::Object
        && negotiated.format == Format::Json
        && !negotiated.pretty
        && !negotiated.export
        && estimated >= STREAM_FROM_BYTES
}

/// The estimate [`streams`] takes: the items' bytes and a little for what is added to each.
pub fn estimated_bytes<'a>(items: impl Iterator<Item = &'a [u8]>) -> usize {
    items.map(|json| json.len() + 24).sum()
}

/// The chunks of one list's JSON, each made when it is asked for; together they are
/// exactly what [`super::encode_list`] writes for the same list in plain JSON.
pub struct ListChunks<I> {
    kind: KindNames,
    meta: ListMeta,
    /// The apiVersion to serve the items at, when the store may hold them at another.
    api_version: Option<Arc<str>>,
    items: I,
    written: usize,
    stage: Stage,
}

enum Stage {
    Head,
    Items,
    Done,
}

impl<I: Iterator<Item = StoredItem>> ListChunks<I> {
    pub fn new(kind: KindNames, meta: ListMeta, api_version: Option<Arc<str>>, items: I) -> Self {
        ListChunks { kind, meta, api_version, items, written: 0, stage: Stage::Head }
    }
}

impl<I: Iterator<Item = StoredItem>> Iterator for ListChunks<I> {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        let mut out = Vec::with_capacity(CHUNK_BYTES + CHUNK_BYTES / 4);
        if let Stage::Head = self.stage {
            write_list_head(&self.kind, &self.meta, &mut out);
            self.stage = Stage::Items;
        }
        while let Stage::Items = self.stage {
            if out.len() >= CHUNK_BYTES {
                return Some(Bytes::from(out));
            }
            match self.items.next() {
                Some((json, rv)) => {
                    let item = RawObject::stored(&json, rv).served_at(self.api_version.as_deref());
                    write_list_item(&self.kind, self.written, &item, &mut out);
                    self.written += 1;
                }
                None => {
                    write_list_tail(&self.kind, &self.meta, &mut out);
                    // Go's json.Encoder ends every document with a newline.
                    out.push(b'\n');
                    self.stage = Stage::Done;
                }
            }
        }
        (!out.is_empty()).then(|| Bytes::from(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::representation::table::TableConvertor;
    use crate::representation::{Shape, encode_list};
    use std::cell::Cell;

    fn kind(typed: bool) -> KindNames {
        KindNames {
            api_version: "stable.example.com/v1".into(),
            list_kind: "WidgetList".into(),
            go_type: "*unstructured.Unstructured".into(),
            go_list_type: "*unstructured.UnstructuredList".into(),
            typed,
        }
    }

    fn items(n: usize) -> Vec<StoredItem> {
        (0..n)
            .map(|i| {
                let json = format!(
                    r#"{{"apiVersion":"stable.example.com/v1beta1","kind":"Widget","metadata":{{"name":"w-{i:05}","namespace":"default"}},"spec":{{"pad":"{}"}}}}"#,
                    "x".repeat(i % 300)
                );
                (Bytes::from(json), 100 + i as u64)
            })
            .collect()
    }

    fn whole(kind: &KindNames, meta: &ListMeta, api_version: Option<&str>, items: &[StoredItem]) -> Vec<u8> {
        let raw: Vec<RawObject<'_>> =
            items.iter().map(|(json, rv)| RawObject::stored(json, *rv).served_at(api_version)).collect();
        let now = "2026-11-26T12:00:00Z".parse().expect("time");
        let shape = Shape { negotiated: Negotiated::JSON, table: Default::default(), now };
        encode_list(&shape, kind, &TableConvertor::default(), meta, &raw).expect("encodes").body
    }

    #[test]
    fn the_chunks_are_the_whole_list_cut_at_item_boundaries() {
        let meta = ListMeta {
            resource_version: "4242".into(),
            continue_token: Some("token".into()),
            remaining_item_count: Some(7),
        };
        for typed in [false, true] {
            for n in [0, 1, 5, 3_000] {
                let all = items(n);
                let expected = whole(&kind(typed), &meta, Some("stable.example.com/v1"), &all);
                let chunks: Vec<Bytes> =
                    ListChunks::new(kind(typed), meta.clone(), Some("stable.example.com/v1".into()), all.into_iter())
                        .collect();
                assert_eq!(chunks.concat(), expected, "typed {typed}, {n} items");
                // Every chunk but the last holds at least CHUNK_BYTES, and none more than
                // CHUNK_BYTES and one item.
                for chunk in &chunks[..chunks.len() - 1] {
                    assert!(chunk.len() >= CHUNK_BYTES && chunk.len() < CHUNK_BYTES + 1024, "{}", chunk.len());
                }
                if n == 3_000 {
                    assert!(chunks.len() > 10, "{} chunks", chunks.len());
                }
            }
        }
    }

    #[test]
    fn items_are_read_only_as_chunks_are_asked_for() {
        let all = items(10_000);
        let read = Cell::new(0usize);
        let counted = all.into_iter().inspect(|_| read.set(read.get() + 1));
        let mut chunks = ListChunks::new(kind(false), ListMeta::default(), None, counted);
        let first = chunks.next().expect("a first chunk");
        assert!(first.len() >= CHUNK_BYTES);
        assert!(read.get() < 1_000, "the first chunk read {} of 10,000 items", read.get());
        assert!(chunks.count() > 10);
        assert_eq!(read.get(), 10_000);
    }

    #[test]
    fn only_large_plain_json_lists_stream() {
        let big = STREAM_FROM_BYTES;
        assert!(streams(&Negotiated::JSON, big));
        assert!(!streams(&Negotiated::JSON, big - 1));
        assert!(!streams(&Negotiated { pretty: true, ..Negotiated::JSON }, big));
        assert!(!streams(&Negotiated { export: true, ..Negotiated::JSON }, big));
        assert!(!streams(&Negotiated { format: Format::Yaml, ..Negotiated::JSON }, big));
    }
}
