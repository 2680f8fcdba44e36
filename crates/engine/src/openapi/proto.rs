//! The swagger 2.0 document as protocol buffers: gnostic's `openapi.v2.Document`
//! (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), which is the only form
//! kubectl and client-go fetch `/openapi/v2` in (for client-side validation, `kind: List`
//! files, and the patch type of kinds it does not know).
//!
//! The encoder walks the JSON document and writes the fields of gnostic's
//! `OpenAPIv2.proto` it holds; values gnostic keeps as YAML (`default`, `enum`, `example`,
//! vendor extensions) are written as JSON text, which is valid YAML. Field numbers are
//! gnostic's.

use super::json::J;

/// Protocol buffer wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// A message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint((u64::from(field) << 3) | u64::from(wire));
    }

    /// A string field (proto3: an empty one is not written).
    fn string(&mut self, field: u32, s: &str) {
        if !s.is_empty() {
            self.bytes(field, s.as_bytes());
        }
    }

    /// One element of a repeated string field (always written).
    fn repeated_string(&mut self, field: u32, s: &str) {
        self.bytes(field, s.as_bytes());
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, LEN);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    /// A message field whose content `write` appends in place: its length is patched in
    /// after (one byte reserved, the bytes moved only for a message of 128 bytes or
    /// more), so nested messages are not each built apart and copied into their parent.
    fn message(&mut self, field: u32, write: impl FnOnce(&mut Msg)) {
        self.key(field, LEN);
        let at = self.0.len();
        self.0.push(0);
        write(self);
        let len = self.0.len() - at - 1;
        if len < 0x80 {
            self.0[at] = len as u8;
        } else {
            let mut prefix = Msg::default();
            prefix.varint(len as u64);
            self.0.splice(at..=at, prefix.0);
        }
    }

    fn boolean(&mut self, field: u32, b: bool) {
        if b {
            self.key(field, VARINT);
            self.varint(1);
        }
    }

    fn int64(&mut self, field: u32, i: i64) {
        if i != 0 {
            self.key(field, VARINT);
            self.varint(i as u64);
        }
    }

    fn double(&mut self, field: u32, f: f64) {
        if f != 0.0 {
            self.key(field, FIXED64);
            self.0.extend_from_slice(&f.to_le_bytes());
        }
    }
}

fn fields(j: &J) -> &[(String, J)] {
    match j {
        J::Obj(f) => f,
        _ => &[],
    }
}

fn items(j: &J) -> &[J] {
    match j {
        J::Arr(a) => a,
        _ => &[],
    }
}

fn text(j: &J) -> &str {
    j.as_str().unwrap_or("")
}

fn truth(j: &J) -> bool {
    matches!(j, J::Bool(true))
}

fn number(j: &J) -> f64 {
    match j {
        J::Num(n) => n.as_f64().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// `Any { yaml }`.
fn any(m: &mut Msg, j: &J) {
    m.string(2, &j.to_text());
}

/// `NamedAny { name, value }`.
fn named_any(m: &mut Msg, name: &str, j: &J) {
    m.string(1, name);
    m.message(2, |m| any(m, j));
}

/// `Named* { name, value }` around a value written by `value`.
fn named(m: &mut Msg, name: &str, value: impl FnOnce(&mut Msg)) {
    m.string(1, name);
    m.message(2, value);
}

/// The whole document.
pub fn encode(doc: &J) -> Vec<u8> {
    let mut m = Msg::default();
    for (k, v) in fields(doc) {
        match k.as_str() {
            "swagger" => m.string(1, text(v)),
            "info" => m.message(2, |info| {
                info.string(1, v.get("title").map(text).unwrap_or(""));
                info.string(2, v.get("version").map(text).unwrap_or(""));
            }),
            "paths" => m.message(PATHS, |paths| {
                for (path, item) in fields(v) {
                    paths.message(2, |n| named(n, path, |m| path_item(m, item)));
                }
            }),
            "definitions" => m.message(DEFINITIONS, |defs| {
                for (name, s) in fields(v) {
                    defs.message(1, |n| named(n, name, |m| schema(m, s)));
                }
            }),
            "parameters" => m.message(PARAMETERS, |params| {
                for (name, p) in fields(v) {
                    params.message(1, |n| named(n, name, |m| parameter(m, p)));
                }
            }),
            "security" => {
                for requirement in items(v) {
                    m.message(12, |req| {
                        for (name, scopes) in fields(requirement) {
                            req.message(1, |n| {
                                named(n, name, |array| {
                                    for s in items(scopes) {
                                        array.repeated_string(1, text(s));
                                    }
                                })
                            });
                        }
                    });
                }
            }
            "securityDefinitions" => m.message(13, |defs| {
                for (name, d) in fields(v) {
                    defs.message(1, |n| {
                        named(n, name, |item| {
                            item.message(2, |key| {
                                for (field, k) in [(1, "type"), (2, "name"), (3, "in"), (4, "description")] {
                                    key.string(field, d.get(k).map(text).unwrap_or(""));
                                }
                            })
                        })
                    });
                }
            }),
            k if k.starts_with("x-") => m.message(16, |n| named_any(n, k, v)),
            _ => {}
        }
    }
    m.0
}

/// One entry of the document's `paths` (field 8): the path item `item` at `path`, as the
/// bytes it adds to that message, so that a document can be assembled from entries
/// encoded one by one ([`section`]).
pub fn path_entry(path: &str, item: &J) -> Vec<u8> {
    let mut m = Msg::default();
    m.message(2, |n| named(n, path, |m| path_item(m, item)));
    m.0
}

/// One entry of the document's `definitions` (field 9).
pub fn definition_entry(name: &str, s: &J) -> Vec<u8> {
    let mut m = Msg::default();
    m.message(1, |n| named(n, name, |m| schema(m, s)));
    m.0
}

/// One entry of the document's shared `parameters` (field 10).
pub fn parameter_entry(name: &str, p: &J) -> Vec<u8> {
    let mut m = Msg::default();
    m.message(1, |n| named(n, name, |m| parameter(m, p)));
    m.0
}

/// The field and length that open a document's section (`paths` 8, `definitions` 9,
/// `parameters` 10) of `len` bytes of entries.
pub fn section(field: u32, len: usize) -> Vec<u8> {
    let mut m = Msg::default();
    m.key(field, LEN);
    m.varint(len as u64);
    m.0
}

/// The fields of the document's sections.
pub const PATHS: u32 = 8;
pub const DEFINITIONS: u32 = 9;
pub const PARAMETERS: u32 = 10;

fn path_item(m: &mut Msg, item: &J) {
    for (k, v) in fields(item) {
        match k.as_str() {
            "get" => m.message(2, |m| operation(m, v)),
            "put" => m.message(3, |m| operation(m, v)),
            "post" => m.message(4, |m| operation(m, v)),
            "delete" => m.message(5, |m| operation(m, v)),
            "options" => m.message(6, |m| operation(m, v)),
            "head" => m.message(7, |m| operation(m, v)),
            "patch" => m.message(8, |m| operation(m, v)),
            "parameters" => items(v).iter().for_each(|p| m.message(9, |m| parameters_item(m, p))),
            k if k.starts_with("x-") => m.message(10, |m| named_any(m, k, v)),
            _ => {}
        }
    }
}

fn operation(m: &mut Msg, op: &J) {
    for (k, v) in fields(op) {
        match k.as_str() {
            "tags" => items(v).iter().for_each(|t| m.repeated_string(1, text(t))),
            "summary" => m.string(2, text(v)),
            "description" => m.string(3, text(v)),
            "operationId" => m.string(5, text(v)),
            "produces" => items(v).iter().for_each(|t| m.repeated_string(6, text(t))),
            "consumes" => items(v).iter().for_each(|t| m.repeated_string(7, text(t))),
            "parameters" => items(v).iter().for_each(|p| m.message(8, |m| parameters_item(m, p))),
            "responses" => m.message(9, |responses| {
                for (code, r) in fields(v) {
                    responses.message(1, |n| {
                        named(n, code, |value| {
                            value.message(1, |response| {
                                response.string(1, r.get("description").map(text).unwrap_or(""));
                                if let Some(s) = r.get("schema") {
                                    response.message(2, |item| item.message(1, |m| schema(m, s)));
                                }
                            })
                        })
                    });
                }
            }),
            "schemes" => items(v).iter().for_each(|t| m.repeated_string(10, text(t))),
            "deprecated" => m.boolean(11, truth(v)),
            k if k.starts_with("x-") => m.message(13, |m| named_any(m, k, v)),
            _ => {}
        }
    }
}

/// `ParametersItem`: a parameter or a `$ref` to a shared one.
fn parameters_item(m: &mut Msg, p: &J) {
    match p.get("$ref") {
        Some(r) => m.message(2, |reference| reference.string(1, text(r))),
        None => m.message(1, |m| parameter(m, p)),
    }
}

/// `Parameter`: a body parameter, or a query / path one.
fn parameter(m: &mut Msg, p: &J) {
    let get = |k: &str| p.get(k);
    let location = get("in").map(text).unwrap_or("");
    if location == "body" {
        m.message(1, |body| {
            body.string(1, get("description").map(text).unwrap_or(""));
            body.string(2, get("name").map(text).unwrap_or(""));
            body.string(3, location);
            body.boolean(4, get("required").is_some_and(truth));
            if let Some(s) = get("schema") {
                body.message(5, |m| schema(m, s));
            }
        });
        return;
    }
    // Query and path sub-schemas share their first four fields; then `type` is 6 for a
    // query parameter (after allow_empty_value) and 5 for a path one, `unique_items` 20 / 19.
    let query = location == "query";
    m.message(2, |non_body| {
        non_body.message(if query { 3 } else { 4 }, |sub| {
            sub.boolean(1, get("required").is_some_and(truth));
            sub.string(2, location);
            sub.string(3, get("description").map(text).unwrap_or(""));
            sub.string(4, get("name").map(text).unwrap_or(""));
            sub.string(if query { 6 } else { 5 }, get("type").map(text).unwrap_or(""));
            sub.boolean(if query { 20 } else { 19 }, get("uniqueItems").is_some_and(truth));
        })
    });
}

fn schema(m: &mut Msg, s: &J) {
    for (k, v) in fields(s) {
        match k.as_str() {
            "$ref" => m.string(1, text(v)),
            "format" => m.string(2, text(v)),
            "title" => m.string(3, text(v)),
            "description" => m.string(4, text(v)),
            "default" => m.message(5, |m| any(m, v)),
            "multipleOf" => m.double(6, number(v)),
            "maximum" => m.double(7, number(v)),
            "exclusiveMaximum" => m.boolean(8, truth(v)),
            "minimum" => m.double(9, number(v)),
            "exclusiveMinimum" => m.boolean(10, truth(v)),
            "maxLength" => m.int64(11, number(v) as i64),
            "minLength" => m.int64(12, number(v) as i64),
            "pattern" => m.string(13, text(v)),
            "maxItems" => m.int64(14, number(v) as i64),
            "minItems" => m.int64(15, number(v) as i64),
            "uniqueItems" => m.boolean(16, truth(v)),
            "maxProperties" => m.int64(17, number(v) as i64),
            "minProperties" => m.int64(18, number(v) as i64),
            "required" => items(v).iter().for_each(|r| m.repeated_string(19, text(r))),
            "enum" => items(v).iter().for_each(|e| m.message(20, |m| any(m, e))),
            "additionalProperties" => m.message(21, |ap| match v {
                J::Bool(b) => {
                    // A oneof member is written even when false.
                    ap.key(2, VARINT);
                    ap.varint(u64::from(*b));
                }
                other => ap.message(1, |m| schema(m, other)),
            }),
            "type" => m.message(22, |t| match v {
                J::Arr(types) => types.iter().for_each(|x| t.repeated_string(1, text(x))),
                other => t.repeated_string(1, text(other)),
            }),
            "items" => m.message(23, |list| match v {
                J::Arr(schemas) => schemas.iter().for_each(|x| list.message(1, |m| schema(m, x))),
                other => list.message(1, |m| schema(m, other)),
            }),
            "allOf" => items(v).iter().for_each(|x| m.message(24, |m| schema(m, x))),
            "properties" => m.message(25, |props| {
                for (name, p) in fields(v) {
                    props.message(1, |n| named(n, name, |m| schema(m, p)));
                }
            }),
            "discriminator" => m.string(26, text(v)),
            "readOnly" => m.boolean(27, truth(v)),
            "example" => m.message(30, |m| any(m, v)),
            k if k.starts_with("x-") => m.message(31, |m| named_any(m, k, v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_are_encoded_as_protobuf() {
        let mut m = Msg::default();
        m.varint(300);
        assert_eq!(m.0, [0xac, 0x02]);
        let mut m = Msg::default();
        m.string(1, "2.0");
        m.string(3, "");
        m.boolean(4, false);
        m.double(7, 10.0);
        assert_eq!(m.0, [0x0a, 3, b'2', b'.', b'0', 0x39, 0, 0, 0, 0, 0, 0, 0x24, 0x40]);
    }

    #[test]
    fn a_small_document_encodes_its_parts() {
        let doc = J::obj()
            .with("swagger", J::str("2.0"))
            .with("info", J::obj().with("title", J::str("Kubernetes")).with("version", J::str("1.32.0")))
            .with(
                "definitions",
                J::obj().with(
                    "a.B",
                    J::obj()
                        .with("type", J::str("object"))
                        .with("x-kubernetes-group-version-kind", J::Arr(vec![J::obj().with("kind", J::str("B"))])),
                ),
            );
        let bytes = encode(&doc);
        let expected_yaml = br#"[{"kind":"B"}]"#;
        assert!(bytes.windows(expected_yaml.len()).any(|w| w == expected_yaml));
        assert!(bytes.starts_with(&[0x0a, 3, b'2', b'.', b'0', 0x12]));
    }
}
