//! The documents' text kept compressed (JSON compresses about tenfold; 2,000 CRDs make
//! hundreds of MiB of documents), in a form whose pieces can be reused: every member of a
//! document is compressed on its own as raw deflate ended by a sync flush ([`Deflated`]),
//! so that a document is the concatenation of its members' compressed bytes, glued by
//! stored blocks and wrapped in one gzip member ([`GzipWriter`], RFC 1951 and 1952). A
//! rebuild copies unchanged members' compressed bytes as it copied their text before, and
//! a client that accepts gzip is sent the document's bytes as they are; any other gets
//! them inflated while they are sent ([`Gzipped::chunks`]).
//!
//! A document that is always written again whole (a v3 group-version's) is instead
//! compressed as one stream ([`StreamWriter`]), about three times smaller.

use bytes::Bytes;
use crc32fast::Hasher as Crc;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use sha2::{Digest, Sha512};
use std::cell::RefCell;
use std::sync::Arc;

/// zlib-rs's level 2 (its fast strategy, with dynamic Huffman codes; level 1 has static
/// codes only): a first build compresses every member of every document, so speed counts,
/// and members compressed one by one gained little from higher levels (zlib's levels 2
/// and 6 gave 5.7× and 6.0× on `/openapi/v2` of the scale bench's 200 CRDs).
const LEVEL: u32 = 2;

/// The level of a text compressed as one stream ([`StreamWriter`]), where the level tells
/// as members repeat each other's text: on the v3 documents of the scale bench's CRDs,
/// zlib-rs's levels 2, 6, 7 and 9 gave 10.4×, 12.7×, 16.0× and 16.3×, at 460, 290, 190
/// and 140 MB/s (level 7 costs a first build with 2,000 CRDs, whose v3 documents are
/// 260 MiB of text, 0.8 s more CPU than level 2 over the cores).
const STREAM_LEVEL: u32 = 7;

/// The gzip header: deflate, no flags, no time, no extra flags, OS unknown (as Go writes it).
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
/// An empty stored block marked final: closes a stream of pieces.
const FINAL_BLOCK: [u8; 5] = [1, 0, 0, 0xff, 0xff];
/// How much text a plain answer inflates at a time.
const CHUNK: usize = 256 * 1024;

/// A piece of text compressed on its own as raw deflate: no reference to text before it,
/// and ended by a sync flush on a byte boundary with no final block, so pieces concatenate
/// into one deflate stream in any order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deflated {
    pub bytes: Bytes,
    /// CRC-32 and length of the text: a document's trailer is combined from its pieces'.
    crc: u32,
    len: u64,
}

thread_local! {
    /// Compressors keep about 300 KiB of state: one per thread, reset between pieces, with
    /// the buffer a piece is compressed into before it is copied out at its size.
    static COMPRESSOR: RefCell<(Compress, Vec<u8>)> = RefCell::new((raw_compressor(LEVEL), Vec::new()));
    static DECOMPRESSOR: RefCell<Decompress> = RefCell::new(Decompress::new(false));
}

fn raw_compressor(level: u32) -> Compress {
    Compress::new(Compression::new(level), false)
}

/// Compresses `text` into `out` with `c`, ending with a sync flush.
fn deflate_into(c: &mut Compress, text: &[u8], out: &mut Vec<u8>) {
    let start = c.total_in();
    loop {
        let done = (c.total_in() - start) as usize;
        out.reserve((text.len() - done) / 2 + 64);
        // Raw deflate into a reserved buffer cannot fail (no dictionary, no stream end).
        if c.compress_vec(&text[done..], out, FlushCompress::Sync).is_err() {
            return;
        }
        // Done once all the text is in and the flush left room to spare.
        if (c.total_in() - start) as usize == text.len() && out.len() < out.capacity() {
            return;
        }
    }
}

impl Deflated {
    pub fn new(text: &[u8]) -> Deflated {
        let bytes = COMPRESSOR.with_borrow_mut(|(c, out)| {
            c.reset();
            out.clear();
            deflate_into(c, text, out);
            // At its size: a buffer grown as it was written holds up to twice the bytes.
            Bytes::copy_from_slice(out)
        });
        Deflated { bytes, crc: crc32fast::hash(text), len: text.len() as u64 }
    }

    /// The length of the text.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Appends the text to `out`.
    pub fn inflate_into(&self, out: &mut Vec<u8>) {
        DECOMPRESSOR.with_borrow_mut(|d| {
            d.reset(false);
            out.reserve(self.len());
            let end = out.len() + self.len();
            // Our own bytes: an error would be a bug, and leaves the text short (the
            // document's hash then says it changed) rather than a panic.
            while out.len() < end {
                let before = d.total_out();
                let read = d.total_in() as usize;
                if d.decompress_vec(&self.bytes[read..], out, FlushDecompress::Sync).is_err() || d.total_out() == before
                {
                    return;
                }
            }
        })
    }

    /// The text.
    #[cfg(test)]
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.inflate_into(&mut out);
        out
    }
}

/// Text compressed as one stream (a dictionary across all of it, unlike [`Deflated::new`]
/// per piece), for a run of text that is always reused whole.
pub struct Deflater {
    c: Compress,
    out: Vec<u8>,
    crc: Crc,
    len: u64,
}

impl Deflater {
    pub fn new() -> Deflater {
        Deflater::at(LEVEL)
    }

    fn at(level: u32) -> Deflater {
        Deflater { c: raw_compressor(level), out: Vec::new(), crc: Crc::new(), len: 0 }
    }

    pub fn write(&mut self, text: &[u8]) {
        self.crc.update(text);
        self.len += text.len() as u64;
        let start = self.c.total_in();
        loop {
            let done = (self.c.total_in() - start) as usize;
            if done == text.len() {
                return;
            }
            self.out.reserve(text.len() - done + 64);
            let written = self.out.len();
            let failed = self.c.compress_vec(&text[done..], &mut self.out, FlushCompress::None).is_err();
            // Room for all of it was there: no progress would be a compressor's bug, not a
            // reason to spin.
            if failed || (self.c.total_in() - start) as usize == done && self.out.len() == written {
                return;
            }
        }
    }

    pub fn finish(mut self) -> Deflated {
        deflate_into(&mut self.c, &[], &mut self.out);
        Deflated { bytes: exact(self.out), crc: self.crc.finalize(), len: self.len }
    }
}

/// A text kept as one gzip member, as the list of its bytes: the pieces' own (shared with
/// the parts that hold them, not copied) between glue, header and trailer.
#[derive(Debug, Clone)]
pub struct Gzipped {
    chunks: Arc<[Bytes]>,
    /// The length of the text.
    pub len: usize,
}

impl Gzipped {
    /// The gzip member as a client accepting gzip is sent it, the small pieces gathered
    /// into buffers of about [`CHUNK`] bytes.
    pub fn gzip(&self) -> impl Iterator<Item = Bytes> + Send + 'static {
        let chunks = Arc::clone(&self.chunks);
        let mut next = 0;
        std::iter::from_fn(move || {
            let mut out = Vec::new();
            while let Some(chunk) = chunks.get(next) {
                if out.is_empty() && chunk.len() >= CHUNK {
                    next += 1;
                    return Some(chunk.clone());
                }
                if out.len() + chunk.len() > CHUNK {
                    break;
                }
                out.extend_from_slice(chunk);
                next += 1;
            }
            (!out.is_empty()).then(|| Bytes::from(out))
        })
    }

    /// The text, inflated a chunk at a time as it is asked for (so a plain answer never
    /// holds the whole text).
    pub fn chunks(&self) -> Chunks {
        // The header and the trailer are chunks of their own.
        let end = self.chunks.len().saturating_sub(1);
        Chunks {
            chunks: Arc::clone(&self.chunks),
            next: 1.min(end),
            at: 0,
            end,
            d: Decompress::new(false),
            left: self.len,
        }
    }

    /// Whether both are the same document, not a copy.
    #[cfg(test)]
    pub fn same(&self, other: &Gzipped) -> bool {
        Arc::ptr_eq(&self.chunks, &other.chunks)
    }

    /// The gzip member's bytes in one piece.
    #[cfg(test)]
    pub fn bytes(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    /// The whole text.
    #[cfg(test)]
    pub fn text(&self) -> Vec<u8> {
        self.chunks().flat_map(|c| c.to_vec()).collect()
    }
}

/// The text of a [`Gzipped`], in order, [`CHUNK`] bytes at a time.
pub struct Chunks {
    chunks: Arc<[Bytes]>,
    /// The chunk being read, and how far; the deflate stream ends before chunk `end`.
    next: usize,
    at: usize,
    end: usize,
    d: Decompress,
    left: usize,
}

impl Iterator for Chunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.left == 0 {
            return None;
        }
        let mut out = Vec::with_capacity(CHUNK.min(self.left));
        while out.len() < out.capacity() && self.next < self.end {
            let input = &self.chunks[self.next][self.at..];
            let (read, wrote) = (self.d.total_in(), self.d.total_out());
            let status = self.d.decompress_vec(input, &mut out, FlushDecompress::None);
            self.at += (self.d.total_in() - read) as usize;
            if self.at >= self.chunks[self.next].len() {
                (self.next, self.at) = (self.next + 1, 0);
            }
            let stuck = self.d.total_in() == read && self.d.total_out() == wrote;
            if matches!(status, Ok(Status::StreamEnd) | Err(_)) || stuck && !input.is_empty() {
                self.next = self.end;
            }
        }
        // A short text (which our own bytes never give) ends the answer early rather
        // than looping.
        self.left = if out.is_empty() { 0 } else { self.left.saturating_sub(out.len()) };
        (!out.is_empty()).then(|| Bytes::from(out))
    }
}

/// A digest as an ETag: upper-case hex.
pub fn upper_hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02X}")).collect()
}

/// Writes one gzip member from pieces and glue text, and the SHA-512 of the text when asked.
pub struct GzipWriter {
    chunks: Vec<Bytes>,
    /// Glue written since the last piece.
    glue: Vec<u8>,
    crc: Crc,
    len: u64,
    /// Whether the text's SHA-512 is asked for: taken from the written member at the end
    /// ([`text_sha512`]).
    hash: bool,
}

/// Above this much text, the hash is taken on one core while the text is inflated on
/// another: `/openapi/v2` of 2,000 CRDs is 150 MiB to inflate and hash, most of its
/// rebuild after one change (inflating and hashing took about as long as each other).
const HASH_APART: usize = 4 * 1024 * 1024;

/// The SHA-512 of `doc`'s text, as an ETag.
fn text_sha512(doc: &Gzipped) -> String {
    let mut sha = Sha512::new();
    if doc.len < HASH_APART {
        doc.chunks().for_each(|text| sha.update(&text));
        return upper_hex(&sha.finalize());
    }
    std::thread::scope(|scope| {
        // A few chunks ahead of the hashing, no more: memory stays bounded.
        let (inflated, texts) = std::sync::mpsc::sync_channel::<Bytes>(4);
        scope.spawn(move || {
            for text in doc.chunks() {
                if inflated.send(text).is_err() {
                    return;
                }
            }
        });
        texts.into_iter().for_each(|text| sha.update(&text));
    });
    upper_hex(&sha.finalize())
}

/// What a [`GzipWriter`] wrote.
pub struct Written {
    pub gzip: Gzipped,
    /// Upper-case hex SHA-512 of the text, if asked for.
    pub etag: Option<String>,
}

/// `,` as a stored block: most glue is a comma between two members, shared by all.
const COMMA: [u8; 6] = [0, 1, 0, 0xfe, 0xff, b','];

impl GzipWriter {
    /// A writer; `hash` asks for the text's SHA-512 (which inflates every piece again).
    pub fn new(hash: bool) -> GzipWriter {
        let chunks = vec![Bytes::from_static(&GZIP_HEADER)];
        GzipWriter { chunks, glue: Vec::new(), crc: Crc::new(), len: 0, hash }
    }

    /// Appends text as stored blocks: the documents' punctuation and small heads.
    pub fn text(&mut self, text: &[u8]) {
        self.crc.update(text);
        self.len += text.len() as u64;
        if text == b"," && self.glue.is_empty() {
            self.chunks.push(Bytes::from_static(&COMMA));
            return;
        }
        for block in text.chunks(u16::MAX as usize) {
            let len = block.len() as u16;
            // Not final, stored; the stream is on a byte boundary after every piece.
            self.glue.push(0);
            self.glue.extend_from_slice(&len.to_le_bytes());
            self.glue.extend_from_slice(&(!len).to_le_bytes());
            self.glue.extend_from_slice(block);
        }
    }

    /// Appends a piece: its bytes are shared, not copied.
    pub fn piece(&mut self, piece: &Deflated) {
        self.crc.combine(&Crc::new_with_initial_len(piece.crc, piece.len));
        self.len += piece.len;
        self.end_glue();
        self.chunks.push(piece.bytes.clone());
    }

    fn end_glue(&mut self) {
        if !self.glue.is_empty() {
            self.chunks.push(Bytes::copy_from_slice(&self.glue));
            self.glue.clear();
        }
    }

    pub fn finish(mut self) -> Written {
        let len = self.len;
        self.glue.extend_from_slice(&FINAL_BLOCK);
        self.end_glue();
        let mut trailer = self.crc.finalize().to_le_bytes().to_vec();
        // ISIZE is the length modulo 2³².
        trailer.extend_from_slice(&(len as u32).to_le_bytes());
        self.chunks.push(Bytes::from(trailer));
        let gzip = Gzipped { chunks: self.chunks.into(), len: len as usize };
        let etag = self.hash.then(|| text_sha512(&gzip));
        Written { gzip, etag }
    }
}

/// Writes one gzip member as one deflate stream, and the SHA-512 of the text: for a text
/// that is always written again whole (a v3 document), which then compresses with a
/// dictionary across all of it, about three times smaller than its members one by one.
pub struct StreamWriter {
    text: Deflater,
    sha: Sha512,
    /// Text not compressed yet: the many small writes (commas, braces) reach the
    /// compressor in runs.
    pending: Vec<u8>,
}

/// How much text a [`StreamWriter`] gathers before compressing it.
const PENDING: usize = 64 * 1024;

impl StreamWriter {
    pub fn new() -> StreamWriter {
        StreamWriter { text: Deflater::at(STREAM_LEVEL), sha: Sha512::new(), pending: Vec::with_capacity(PENDING) }
    }

    pub fn text(&mut self, text: &[u8]) {
        self.sha.update(text);
        if self.pending.len() + text.len() > PENDING {
            self.text.write(&self.pending);
            self.pending.clear();
        }
        if text.len() > PENDING {
            self.text.write(text);
        } else {
            self.pending.extend_from_slice(text);
        }
    }

    /// The gzip member: header, the stream, final block and trailer as chunks of their own.
    pub fn finish(mut self) -> Written {
        self.text.write(&self.pending);
        let mut gzip = GzipWriter::new(false);
        gzip.piece(&self.text.finish());
        Written { etag: Some(upper_hex(&self.sha.finalize())), ..gzip.finish() }
    }
}

/// `bytes` holding no spare capacity (kept as long as the bytes are).
fn exact(mut bytes: Vec<u8>) -> Bytes {
    bytes.shrink_to_fit();
    Bytes::from(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn gunzip(bytes: &[u8]) -> Vec<u8> {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(bytes).read_to_end(&mut text).expect("a valid gzip member");
        text
    }

    #[test]
    fn pieces_in_any_order_make_one_gzip_member_any_decoder_reads() {
        let a = Deflated::new(br#""a":{"type":"object","properties":{"x":{"type":"string"}}}"#);
        let big: Vec<u8> = (0..200_000u32).flat_map(|i| format!("{{\"n\":{}}},", i % 977).into_bytes()).collect();
        let b = Deflated::new(&big);
        assert_eq!(b.text(), big, "a piece reads back");
        assert!(b.bytes.len() * 5 < big.len(), "compressed: {} of {}", b.bytes.len(), big.len());
        let mut stream = Deflater::new();
        stream.write(b"[1,");
        stream.write(b"2]");
        let c = stream.finish();

        let glue = vec![b'x'; 70_000]; // more than one stored block
        let mut w = GzipWriter::new(true);
        w.text(b"{");
        w.piece(&b);
        w.text(b",");
        w.text(&glue);
        w.piece(&a);
        w.text(b",");
        w.piece(&c);
        w.text(b"}");
        let written = w.finish();
        let expected = [&b"{"[..], &big, b",", &glue, &a.text(), b",", b"[1,2]", b"}"].concat();
        let sent: Vec<u8> = written.gzip.gzip().flat_map(|c| c.to_vec()).collect();
        assert_eq!(sent, written.gzip.bytes());
        assert_eq!(gunzip(&sent), expected, "flate2's gzip decoder reads what is sent");
        assert_eq!(written.gzip.text(), expected, "and so do our chunks");
        assert_eq!(written.gzip.len, expected.len());
        assert!(written.gzip.chunks().count() > 1, "inflated a chunk at a time");
        assert_eq!(written.etag.as_deref(), Some(crate::openapi::documents::etag(&expected).as_str()));
        assert!(written.gzip.chunks.iter().any(|chunk| chunk.as_ptr() == b.bytes.as_ptr()), "a piece is not copied");
    }

    #[test]
    fn a_stream_reads_as_the_same_text_pieces_give_and_is_smaller() {
        let members: Vec<Vec<u8>> =
            (0..2_000u32).map(|i| format!("\"m{i}\":{{\"type\":\"object\",\"n\":{}}}", i % 97).into_bytes()).collect();
        let big = vec![b'y'; 3 * PENDING]; // more than is gathered before compressing
        let (mut pieces, mut stream) = (GzipWriter::new(true), StreamWriter::new());
        for (i, m) in members.iter().enumerate() {
            pieces.text(if i == 0 { b"{" } else { b"," });
            stream.text(if i == 0 { b"{" } else { b"," });
            pieces.piece(&Deflated::new(m));
            stream.text(m);
        }
        pieces.text(&big);
        stream.text(&big);
        let (pieces, stream) = (pieces.finish(), stream.finish());
        assert_eq!(gunzip(&stream.gzip.bytes()), pieces.gzip.text(), "flate2's gzip decoder reads the same text");
        assert_eq!(stream.gzip.text(), pieces.gzip.text(), "and so do our chunks");
        assert_eq!(stream.gzip.len, pieces.gzip.len);
        assert_eq!(stream.etag, pieces.etag);
        let size = |w: &Written| w.gzip.bytes().len();
        assert!(size(&stream) * 3 < size(&pieces), "one stream: {} bytes, pieces: {}", size(&stream), size(&pieces));
    }

    #[test]
    fn a_large_text_is_hashed_while_inflated_and_its_etag_is_the_sha512_of_the_text() {
        let members: Vec<Vec<u8>> = (0..3_000u32)
            .map(|i| {
                format!("\"m{i}\":{{\"n\":{},\"s\":\"{}\"}}", i % 89, "v".repeat(1_500 + i as usize % 700)).into_bytes()
            })
            .collect();
        let mut w = GzipWriter::new(true);
        let mut expected = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let glue: &[u8] = if i == 0 { b"{" } else { b"," };
            w.text(glue);
            w.piece(&Deflated::new(m));
            expected.extend_from_slice(glue);
            expected.extend_from_slice(m);
        }
        w.text(b"}");
        expected.push(b'}');
        assert!(expected.len() > HASH_APART, "hashed apart: {} bytes", expected.len());
        let written = w.finish();
        assert_eq!(written.gzip.text(), expected);
        assert_eq!(written.etag.as_deref(), Some(crate::openapi::documents::etag(&expected).as_str()));
    }

    #[test]
    fn the_same_text_compresses_to_the_same_bytes() {
        let text = br#""pretty-tJGM1-ng":{"uniqueItems":true,"type":"string"}"#;
        assert_eq!(Deflated::new(text), Deflated::new(text));
        let other = std::thread::spawn(|| Deflated::new(text)).join().expect("thread");
        assert_eq!(other, Deflated::new(text), "on another thread too");
    }

    #[test]
    fn an_empty_document_is_a_valid_member() {
        let written = GzipWriter::new(false).finish();
        assert_eq!(gunzip(&written.gzip.bytes()), b"");
        assert_eq!(written.gzip.chunks().count(), 0);
        assert!(written.etag.is_none());
    }
}
