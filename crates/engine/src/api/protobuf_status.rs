//! A `Status` in kube's protobuf envelope, as kube-apiserver writes an error to a client
//! whose `Accept` asks for `application/vnd.kubernetes.protobuf` first.
//!
//! kube encodes errors with the endpoint's serializers even where it produces no object
//! as protobuf (custom resources): the 406 of a protobuf-only `Accept` is itself protobuf.
//! Field numbers are those of `meta/v1/generated.proto`; like gogo-protobuf, every
//! non-pointer field is written, empty or not, in field-number order, and the optional
//! ones (`details`, `remainingItemCount`) only when set. Pure: a Status in, bytes out.

use crate::status::{ApiError, StatusCause, StatusDetails};

/// kube's protobuf magic, before the `runtime.Unknown` that wraps every object.
const MAGIC: &[u8] = b"k8s\0";

/// The `Status` as kube-apiserver's protobuf serializer writes it.
pub fn encode(e: &ApiError) -> Vec<u8> {
    let mut status = Vec::new();
    // An empty ListMeta: selfLink, resourceVersion and continue, all "".
    let mut list_meta = Vec::new();
    for field in 1..=3 {
        string(&mut list_meta, field, "");
    }
    bytes(&mut status, 1, &list_meta);
    string(&mut status, 2, "Failure");
    string(&mut status, 3, &e.message);
    string(&mut status, 4, &e.reason);
    if let Some(details) = e.details.as_deref() {
        bytes(&mut status, 5, &encode_details(details));
    }
    varint_field(&mut status, 6, u64::from(e.code));

    let mut type_meta = Vec::new();
    string(&mut type_meta, 1, "v1");
    string(&mut type_meta, 2, "Status");
    let mut unknown = Vec::new();
    bytes(&mut unknown, 1, &type_meta);
    bytes(&mut unknown, 2, &status);
    string(&mut unknown, 3, "");
    string(&mut unknown, 4, "");

    let mut out = Vec::with_capacity(MAGIC.len() + unknown.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&unknown);
    out
}

fn encode_details(d: &StatusDetails) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, d.name.as_deref().unwrap_or_default());
    string(&mut out, 2, d.group.as_deref().unwrap_or_default());
    string(&mut out, 3, d.kind.as_deref().unwrap_or_default());
    for cause in &d.causes {
        bytes(&mut out, 4, &encode_cause(cause));
    }
    varint_field(&mut out, 5, u64::from(d.retry_after_seconds.unwrap_or(0)));
    string(&mut out, 6, d.uid.as_deref().unwrap_or_default());
    out
}

fn encode_cause(c: &StatusCause) -> Vec<u8> {
    let mut out = Vec::new();
    string(&mut out, 1, c.reason.as_deref().unwrap_or_default());
    string(&mut out, 2, c.message.as_deref().unwrap_or_default());
    string(&mut out, 3, c.field.as_deref().unwrap_or_default());
    out
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // Truncation intended: the low seven bits, with the continuation bit.
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_field(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

fn bytes(out: &mut Vec<u8>, field: u64, data: &[u8]) {
    varint(out, (field << 3) | 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn string(out: &mut Vec<u8>, field: u64, s: &str) {
    bytes(out, field, s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::representation::negotiation::not_acceptable;

    #[test]
    fn a_406_is_the_oracle_s_bytes() {
        // Recorded from kube-apiserver 1.32 for `Accept: application/vnd.kubernetes.protobuf`.
        let mut want =
            b"k8s\x00\n\x0c\n\x02v1\x12\x06Status\x12\x99\x01\n\x06\n\x00\x12\x00\x1a\x00\x12\x07Failure\x1at".to_vec();
        want.extend_from_slice(not_acceptable().message.as_bytes());
        want.extend_from_slice(b"\"\rNotAcceptable0\x96\x03\x1a\x00\"\x00");
        assert_eq!(encode(&not_acceptable()), want);
    }

    #[test]
    fn details_are_written_when_present() {
        let gr = crate::status::GroupResource::new("g.example.com", "widgets");
        let bytes = encode(&ApiError::not_found(&gr, "w1"));
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("widgets.g.example.com \"w1\" not found"));
        // details (field 5): name, group, kind, then retryAfterSeconds 0 and an empty uid.
        assert!(bytes.windows(4).any(|w| w == b"\n\x02w1"), "{text}");
        assert!(bytes.ends_with(b"(\x002\x000\x94\x03\x1a\x00\"\x00"), "{bytes:?}");
    }
}
