//! OpenAPI v3 documents, one per group-version, as kube-openapi's v3 builder writes them:
//! the pieces, which [`super::documents`] assembles.

use super::json::{Fields, J};
use super::params::Param;
use super::routes::{Route, path_items, status_text};
use super::schema::V3_PREFIX;

/// The fields before `paths` of one group-version's document.
pub fn head(title: &str, version: &str) -> J {
    J::obj()
        .with("openapi", J::str("3.0.0"))
        .with("info", J::obj().with("title", J::str(title)).with("version", J::str(version)))
}

/// The path items of `routes`.
pub fn paths(routes: &[Route]) -> Fields {
    match path_items(routes, operation, parameter) {
        J::Obj(fields) => fields,
        _ => Vec::new(),
    }
}

fn operation(r: &Route, params: &[Param]) -> J {
    let mut op = J::obj()
        .with("tags", J::strs(&[&r.tag]))
        .with("description", J::str(&r.description))
        .with("operationId", J::str(&r.operation_id));
    if !params.is_empty() {
        op.push("parameters", J::Arr(params.iter().map(parameter).collect()));
    }
    if let Some(body) = &r.body {
        let mut request = J::obj().with("content", content(&r.consumes, &body.definition));
        if body.required {
            request.push("required", J::Bool(true));
        }
        op.push("requestBody", request);
    }
    let mut responses = J::obj();
    for (code, def) in &r.responses {
        let mut response = J::obj().with("description", J::str(status_text(*code)));
        if let Some(def) = def {
            response.push("content", content(&r.produces, def));
        }
        responses.push(&code.to_string(), response);
    }
    op.push("responses", responses);
    if let Some((action, gvk)) = &r.resource {
        op.push("x-kubernetes-action", J::str(*action));
        op.push(
            "x-kubernetes-group-version-kind",
            J::obj()
                .with("group", J::str(&gvk.group))
                .with("version", J::str(&gvk.version))
                .with("kind", J::str(&gvk.kind)),
        );
    }
    op
}

/// `{media type: {schema: {$ref}}}`, media types sorted as Go writes a map.
fn content(media_types: &[&str], definition: &str) -> J {
    let mut sorted = media_types.to_vec();
    sorted.sort_unstable();
    let schema = J::obj().with("schema", J::obj().with("$ref", J::str(format!("{V3_PREFIX}{definition}"))));
    J::Obj(sorted.into_iter().map(|m| (m.to_string(), schema.clone())).collect())
}

fn parameter(p: &Param) -> J {
    let mut out = J::obj()
        .with("name", J::str(p.name))
        .with("in", J::str(p.location.as_str()))
        .with("description", J::str(p.description.as_ref()));
    if p.required() {
        out.push("required", J::Bool(true));
    }
    out.with("schema", J::obj().with("type", J::str(p.ty)).with("uniqueItems", J::Bool(true)))
}
