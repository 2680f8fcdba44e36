//! Protocol Buffers' wire format, as much of it as etcd's messages use: varints, and
//! length-delimited bytes and nested messages. Pure, no IO.
//!
//! Written by hand rather than generated: generating needs `protoc` at build time (a tool a
//! clean machine lacks) for the dozen messages the store sends and reads (`wire`). proto3
//! leaves a field at its zero value out, so the writer does too; the reader skips fields it
//! does not know, as every protobuf reader must.

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// Why a message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed protobuf: {0}")]
pub struct DecodeError(pub &'static str);

/// How a field's value is laid out on the wire.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LENGTH_DELIMITED: u8 = 2;
const FIXED32: u8 = 5;

/// A message being written.
#[derive(Debug, Default)]
pub struct Writer {
    buf: BytesMut,
}

impl Writer {
    /// The bytes written.
    pub fn finish(self) -> Bytes {
        self.buf.freeze()
    }

    fn tag(&mut self, field: u32, wire_type: u8) {
        put_varint(&mut self.buf, (u64::from(field) << 3) | u64::from(wire_type));
    }

    /// An unsigned integer or an enum (left out at 0).
    pub fn uint(&mut self, field: u32, value: u64) {
        if value != 0 {
            self.tag(field, VARINT);
            put_varint(&mut self.buf, value);
        }
    }

    /// An `int64`: a negative one takes ten bytes, as protobuf writes it.
    pub fn int(&mut self, field: u32, value: i64) {
        self.uint(field, value as u64);
    }

    /// A non-negative integer member of a `oneof`: written even at 0, its presence being
    /// the choice.
    pub fn present_uint(&mut self, field: u32, value: u64) {
        self.tag(field, VARINT);
        put_varint(&mut self.buf, value);
    }

    pub fn bool(&mut self, field: u32, value: bool) {
        self.uint(field, u64::from(value));
    }

    /// `bytes` or `string` (left out when empty).
    pub fn bytes(&mut self, field: u32, value: &[u8]) {
        if !value.is_empty() {
            self.tag(field, LENGTH_DELIMITED);
            put_varint(&mut self.buf, value.len() as u64);
            self.buf.put_slice(value);
        }
    }

    /// A nested message, written by `write` (an empty one is still written: in a `oneof`
    /// its presence is the choice).
    pub fn message(&mut self, field: u32, write: impl FnOnce(&mut Writer)) {
        let mut nested = Writer::default();
        write(&mut nested);
        self.tag(field, LENGTH_DELIMITED);
        put_varint(&mut self.buf, nested.buf.len() as u64);
        self.buf.put_slice(&nested.buf);
    }
}

fn put_varint(buf: &mut BytesMut, mut value: u64) {
    while value >= 0x80 {
        buf.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

/// One field's value as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Varint(u64),
    /// `bytes`, `string` or a nested message: a slice of the message read (no copy).
    Bytes(Bytes),
    /// A fixed-width value (no etcd message the store reads has one; skipped).
    Fixed,
}

impl Value {
    pub fn uint(&self) -> Result<u64, DecodeError> {
        match self {
            Value::Varint(v) => Ok(*v),
            _ => Err(DecodeError("an integer field is not a varint")),
        }
    }

    pub fn int(&self) -> Result<i64, DecodeError> {
        self.uint().map(|v| v as i64)
    }

    pub fn bool(&self) -> Result<bool, DecodeError> {
        self.uint().map(|v| v != 0)
    }

    pub fn bytes(self) -> Result<Bytes, DecodeError> {
        match self {
            Value::Bytes(b) => Ok(b),
            _ => Err(DecodeError("a bytes field is not length-delimited")),
        }
    }

    pub fn string(self) -> Result<String, DecodeError> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| DecodeError("a string field is not UTF-8"))
    }
}

/// The fields of one message, in the order written.
pub struct Reader {
    buf: Bytes,
}

impl Reader {
    pub fn new(buf: Bytes) -> Self {
        Reader { buf }
    }

    /// The next field: its number and value; `None` at the end.
    pub fn field(&mut self) -> Result<Option<(u32, Value)>, DecodeError> {
        if !self.buf.has_remaining() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).map_err(|_| DecodeError("field number out of range"))?;
        if field == 0 {
            return Err(DecodeError("field number 0"));
        }
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(self.varint()?),
            LENGTH_DELIMITED => {
                let len = usize::try_from(self.varint()?).map_err(|_| DecodeError("length out of range"))?;
                if len > self.buf.remaining() {
                    return Err(DecodeError("a length runs past the message"));
                }
                Value::Bytes(self.buf.split_to(len))
            }
            FIXED64 => self.skip(8)?,
            FIXED32 => self.skip(4)?,
            _ => return Err(DecodeError("unsupported wire type")),
        };
        Ok(Some((field, value)))
    }

    fn skip(&mut self, n: usize) -> Result<Value, DecodeError> {
        if n > self.buf.remaining() {
            return Err(DecodeError("a fixed-width value runs past the message"));
        }
        self.buf.advance(n);
        Ok(Value::Fixed)
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            if !self.buf.has_remaining() {
                return Err(DecodeError("a varint runs past the message"));
            }
            let byte = self.buf.get_u8();
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(DecodeError("a varint longer than ten bytes"))
    }
}

/// A message that can be read from its bytes.
pub trait Decode: Sized + Default {
    /// Sets the field numbered `field` from `value` (unknown fields are ignored).
    fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError>;

    fn decode(buf: Bytes) -> Result<Self, DecodeError> {
        let mut message = Self::default();
        let mut reader = Reader::new(buf);
        while let Some((field, value)) = reader.field()? {
            message.merge(field, value)?;
        }
        Ok(message)
    }
}

/// A message that can be written.
pub trait Encode {
    fn encode(&self, w: &mut Writer);

    fn to_bytes(&self) -> Bytes {
        let mut w = Writer::default();
        self.encode(&mut w);
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Sample {
        n: i64,
        flag: bool,
        data: Bytes,
        inner: Option<Box<Sample>>,
    }

    impl Encode for Sample {
        fn encode(&self, w: &mut Writer) {
            w.int(1, self.n);
            w.bool(2, self.flag);
            w.bytes(3, &self.data);
            if let Some(inner) = &self.inner {
                w.message(4, |w| inner.encode(w));
            }
        }
    }

    impl Decode for Sample {
        fn merge(&mut self, field: u32, value: Value) -> Result<(), DecodeError> {
            match field {
                1 => self.n = value.int()?,
                2 => self.flag = value.bool()?,
                3 => self.data = value.bytes()?,
                4 => self.inner = Some(Box::new(Sample::decode(value.bytes()?)?)),
                _ => {}
            }
            Ok(())
        }
    }

    #[test]
    fn the_encoding_matches_protobufs_own_bytes() {
        // Protobuf's documented example: field 1 = 150 is 08 96 01.
        assert_eq!(&Sample { n: 150, ..Default::default() }.to_bytes()[..], [0x08, 0x96, 0x01]);
        // Field 3 = "testing" is 1a 07 74 65 73 74 69 6e 67.
        assert_eq!(
            &Sample { data: Bytes::from_static(b"testing"), ..Default::default() }.to_bytes()[..],
            b"\x1a\x07testing"
        );
        // Zero values are left out; -1 takes ten bytes.
        assert!(Sample::default().to_bytes().is_empty());
        assert_eq!(Sample { n: -1, ..Default::default() }.to_bytes().len(), 11);
    }

    #[test]
    fn messages_read_back_what_was_written_and_skip_unknown_fields() {
        let sample = Sample {
            n: -7,
            flag: true,
            data: Bytes::from(vec![0u8; 300]),
            inner: Some(Box::new(Sample { n: i64::MAX, ..Default::default() })),
        };
        let mut bytes = sample.to_bytes().to_vec();
        // Unknown fields of every wire type the reader knows: varint 9, fixed64 10, fixed32 11.
        bytes.extend_from_slice(&[0x48, 0x01, 0x51, 1, 2, 3, 4, 5, 6, 7, 8, 0x5d, 1, 2, 3, 4]);
        assert_eq!(Sample::decode(Bytes::from(bytes)).expect("decode"), sample);
    }

    #[test]
    fn truncated_or_malformed_messages_are_errors_not_panics() {
        let whole = Sample { data: Bytes::from_static(b"abcdef"), n: 300, ..Default::default() }.to_bytes();
        // Cut anywhere but between the two fields (a message's prefix of whole fields is one).
        for cut in (1..whole.len()).filter(|&cut| cut != 3) {
            assert!(Sample::decode(whole.slice(..cut)).is_err(), "cut at {cut}");
        }
        for bad in [
            &[0x00, 0x01][..],
            &[0x0b],
            &[0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            &[0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f],
        ] {
            assert!(Sample::decode(Bytes::copy_from_slice(bad)).is_err(), "{bad:?}");
        }
        // A bytes field sent as a varint.
        assert!(Sample::decode(Bytes::from_static(&[0x18, 0x01])).is_err());
    }
}
