//! The swagger 2.0 document (`/openapi/v2`): every served kind in one document, with the
//! parameters kube-openapi shares between operations factored out into `parameters` under
//! content-hash names (`pretty-tJGM1-ng`), exactly as it names them. This module writes the
//! pieces; [`super::documents`] assembles them.

use super::json::{Fields, J};
use super::params::{In, Param};
use super::routes::{Route, path_items, status_text};
use super::schema::V2_PREFIX;
use base64::Engine as _;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

/// The fields before `paths`: `swagger` and `info`.
pub fn head(version: &str) -> J {
    J::obj()
        .with("swagger", J::str("2.0"))
        .with("info", J::obj().with("title", J::str("Kubernetes")).with("version", J::str(version)))
}

/// The fields after `paths`, `definitions` and `parameters`: the security ones.
pub fn tail() -> J {
    J::obj()
        .with(
            "securityDefinitions",
            J::obj().with(
                "BearerToken",
                J::obj()
                    .with("description", J::str("Bearer Token authentication"))
                    .with("type", J::str("apiKey"))
                    .with("name", J::str("authorization"))
                    .with("in", J::str("header")),
            ),
        )
        .with("security", J::Arr(vec![J::obj().with("BearerToken", J::Arr(Vec::new()))]))
}

/// The path items of `routes` with their shared parameters as references, and those
/// shared parameters by name. The parameters' names are hashes of their text, so the
/// document's `parameters` is the union of every part's.
pub fn paths(routes: &[Route]) -> (Fields, Fields) {
    let shared = RefCell::new(BTreeMap::new());
    let items = path_items(routes, |r, params| operation(r, params, &shared), |p| query_or_path(p, &shared));
    (fields(items), shared.into_inner().into_iter().collect())
}

fn fields(j: J) -> Fields {
    match j {
        J::Obj(fields) => fields,
        _ => Vec::new(),
    }
}

/// Shared parameters by name, as a part's paths refer to them.
type Shared = RefCell<BTreeMap<String, J>>;

fn operation(r: &Route, params: &[Param], shared: &Shared) -> J {
    let mut all: Vec<(bool, &str, J)> =
        params.iter().map(|p| (p.required(), p.name, query_or_path(p, shared))).collect();
    if let Some(body) = &r.body {
        let mut b = J::obj().with("name", J::str("body")).with("in", J::str("body"));
        if body.required {
            b.push("required", J::Bool(true));
        }
        b.push("schema", reference(&body.definition));
        all.push((body.required, "body", share(b, shared)));
    } // kube-openapi: required parameters first, then by name.
    all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut responses = J::obj();
    for (code, def) in &r.responses {
        let mut response = J::obj().with("description", J::str(status_text(*code)));
        if let Some(def) = def {
            response.push("schema", reference(def));
        }
        responses.push(&code.to_string(), response);
    }
    let mut op = J::obj()
        .with("description", J::str(&r.description))
        .with("consumes", J::strs(&r.consumes))
        .with("produces", J::strs(&r.produces))
        .with("schemes", J::strs(&["https"]))
        .with("tags", J::strs(&[&r.tag]))
        .with("operationId", J::str(&r.operation_id));
    if !all.is_empty() {
        op.push("parameters", J::Arr(all.into_iter().map(|(_, _, p)| p).collect()));
    }
    op.push("responses", responses);
    if let Some((action, gvk)) = &r.resource {
        op.push("x-kubernetes-action", J::str(*action));
        op.push(
            "x-kubernetes-group-version-kind",
            J::obj()
                .with("group", J::str(&gvk.group))
                .with("kind", J::str(&gvk.kind))
                .with("version", J::str(&gvk.version)),
        );
    }
    op
}

fn reference(definition: &str) -> J {
    J::obj().with("$ref", J::str(format!("{V2_PREFIX}{definition}")))
}

/// A query or path parameter in `spec.Parameter`'s field order.
fn parameter(p: &Param) -> J {
    let mut out = J::obj()
        .with("uniqueItems", J::Bool(true))
        .with("type", J::str(p.ty))
        .with("description", J::str(p.description.as_ref()))
        .with("name", J::str(p.name))
        .with("in", J::str(p.location.as_str()));
    if p.required() {
        out.push("required", J::Bool(true));
    }
    out
}

/// A query or path parameter as an operation lists it: inline, or (kube-openapi's
/// `deduplicateParameters`) a reference to the shared one. Every kind's operations list
/// the same few dozen parameters with long descriptions, so each static one is written and
/// hashed once per thread, not once per kind.
fn query_or_path(p: &Param, shared: &Shared) -> J {
    thread_local! {
        static SEEN: RefCell<HashMap<ParamKey, (String, J)>> = RefCell::new(HashMap::new());
    }
    let Cow::Borrowed(description) = p.description else { return share(parameter(p), shared) };
    let key = (p.name, p.location, p.ty, description.as_ptr() as usize, description.len());
    let (name, j) = SEEN.with(|seen| {
        seen.borrow_mut()
            .entry(key)
            .or_insert_with(|| {
                let j = parameter(p);
                match shared_name(&j) {
                    Some(name) => (name, j),
                    None => (String::new(), j),
                }
            })
            .clone()
    });
    if name.is_empty() {
        return j;
    }
    shared.borrow_mut().entry(name.clone()).or_insert(j);
    shared_ref(&name)
}

/// A static parameter by its name, place, type and where its description lies.
type ParamKey = (&'static str, In, &'static str, usize, usize);

/// `p` as an operation lists it: inline, or a reference to the shared one.
fn share(p: J, shared: &Shared) -> J {
    match shared_name(&p) {
        Some(name) => {
            let reference = shared_ref(&name);
            shared.borrow_mut().entry(name).or_insert(p);
            reference
        }
        None => p,
    }
}

/// The name `p` is shared under (`<name>-<hash of its JSON>`), if it is shared: every
/// parameter except `name`, `dryRun`, `fieldValidation` (kubectl looks for the last two
/// inline) and bodies holding the kind's own schema.
fn shared_name(p: &J) -> Option<String> {
    if !is_shared(p) {
        return None;
    }
    let base = p.get("name").and_then(J::as_str).unwrap_or("param");
    Some(format!("{base}-{}", hash(&p.to_text())))
}

fn shared_ref(name: &str) -> J {
    J::obj().with("$ref", J::str(format!("#/parameters/{name}")))
}

fn is_shared(p: &J) -> bool {
    let name = p.get("name").and_then(J::as_str).unwrap_or("");
    let location = p.get("in").and_then(J::as_str).unwrap_or("");
    match (location, name) {
        ("query" | "path", "name") => false,
        ("query", "fieldValidation" | "dryRun") => false,
        ("body", "body") => p
            .get("schema")
            .and_then(|s| s.get("$ref"))
            .and_then(J::as_str)
            .is_some_and(|r| r.starts_with("#/definitions/io.k8s.apimachinery")),
        _ => true,
    }
}

/// FNV-1 (64 bit), first 6 bytes, URL-safe base64: 8 characters.
fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        h ^= u64::from(b);
    }
    base64::engine::general_purpose::URL_SAFE.encode(&h.to_be_bytes()[..6])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openapi::params::{self, param};

    #[test]
    fn shared_parameter_names_match_kube_apiserver_s() {
        // Names recorded from a real kube-apiserver 1.32 (reference 58).
        assert_eq!(format!("pretty-{}", hash(&parameter(&param(params::PRETTY)).to_text())), "pretty-tJGM1-ng");
        assert_eq!(
            format!("namespace-{}", hash(&parameter(&param(params::NAMESPACE)).to_text())),
            "namespace-vgWSWtn3"
        );
        assert_eq!(
            format!("fieldManager-{}", hash(&parameter(&param(params::FIELD_MANAGER_APPLY)).to_text())),
            "fieldManager-7c6nTn1T"
        );
        let body = J::obj()
            .with("name", J::str("body"))
            .with("in", J::str("body"))
            .with("required", J::Bool(true))
            .with("schema", reference("io.k8s.apimachinery.pkg.apis.meta.v1.Patch"));
        assert_eq!(hash(&body.to_text()), "78PwaGsr");
    }
}
