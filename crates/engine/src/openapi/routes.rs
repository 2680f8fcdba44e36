//! The operations of one served kind, as kube-apiserver describes them in OpenAPI: paths,
//! operation ids and tags, descriptions, parameters, request bodies and responses.
//!
//! Custom resources follow apiextensions-apiserver's OpenAPI builder (which mimics the
//! generic API installer); built-in kinds follow the installer itself, whose wording
//! differs in a few places (`list or watch objects of kind`, no `resourceVersion` on read,
//! DeleteOptions on deletecollection, strategic merge patch). Both documents, swagger 2.0
//! and OpenAPI v3, are written from these routes.

use super::json::J;
use super::params::{self, Param, Spec};

pub const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
pub const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
pub const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

const JSON: &str = "application/json";
const YAML: &str = "application/yaml";
const JSON_PATCH: &str = "application/json-patch+json";
const MERGE_PATCH: &str = "application/merge-patch+json";
const STRATEGIC_MERGE_PATCH: &str = "application/strategic-merge-patch+json";
const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// Which installer describes the kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// A custom resource (apiextensions-apiserver's builder).
    Custom,
    /// A kind built into the server (the generic API installer).
    BuiltIn,
}

/// What the documents need to know about one served kind.
#[derive(Debug, Clone, PartialEq)]
pub struct KindSpec {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    pub status: bool,
    pub scale: bool,
    /// The verbs the kind serves (discovery's list).
    pub verbs: Vec<&'static str>,
    pub flavor: Flavor,
    /// Definition names of the kind and its list.
    pub definition: String,
    pub list_definition: String,
}

impl KindSpec {
    /// `""`, `v1`, `Widget`.
    pub fn gvk(&self) -> Gvk {
        Gvk { group: self.group.clone(), version: self.version.clone(), kind: self.kind.clone() }
    }

    fn root(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    fn serves(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }
}

/// A group, version and kind.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// HTTP methods in the order a path item lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Method {
    Get,
    Put,
    Post,
    Delete,
    Patch,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Put => "put",
            Method::Post => "post",
            Method::Delete => "delete",
            Method::Patch => "patch",
        }
    }
}

/// A request body: the definition it holds and whether it must be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    pub definition: String,
    pub required: bool,
}

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub path: String,
    pub method: Method,
    pub operation_id: String,
    pub tag: String,
    pub description: String,
    pub params: Vec<Param>,
    pub body: Option<Body>,
    pub consumes: Vec<&'static str>,
    pub produces: Vec<&'static str>,
    /// Status codes with the definition returned (401 has none).
    pub responses: Vec<(u16, Option<String>)>,
    /// For an operation on a kind (not discovery): `x-kubernetes-action` and the kind.
    pub resource: Option<(&'static str, Gvk)>,
}

/// The description kube gives a status code.
pub fn status_text(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        401 => "Unauthorized",
        _ => "",
    }
}

/// Every operation of one kind.
pub fn routes(k: &KindSpec) -> Vec<Route> {
    let custom = k.flavor == Flavor::Custom;
    let collection = if k.namespaced {
        format!("{}/namespaces/{{namespace}}/{}", k.root(), k.plural)
    } else {
        format!("{}/{}", k.root(), k.plural)
    };
    let item = format!("{collection}/{{name}}");
    let kind_def = Some(k.definition.clone());
    let status_def = Some(STATUS.to_string());
    let op = |verb: &str, sub: &str| Op { verb: verb.to_string(), sub: sub.to_string() };
    let mut out = Vec::new();

    if k.serves("list") {
        if k.namespaced {
            let all = format!("{}/{}", k.root(), k.plural);
            let mut r =
                route(k, &all, Method::Get, "list", op("list", ""), &params::LIST, None, ok(&k.list_definition));
            let (id, _) = operation_id_and_tag(&all, &format!("list{}ForAllNamespaces", k.kind));
            r.operation_id = id;
            out.push(r);
        }
        out.push(route(
            k,
            &collection,
            Method::Get,
            "list",
            op("list", ""),
            &params::LIST,
            None,
            ok(&k.list_definition),
        ));
    }
    if k.serves("create") {
        let body = Some(Body { definition: k.definition.clone(), required: true });
        let codes = vec![(200, kind_def.clone()), (201, kind_def.clone()), (202, kind_def.clone())];
        out.push(route(k, &collection, Method::Post, "post", op("create", ""), &params::WRITE, body, codes));
    }
    if k.serves("deletecollection") {
        let dc = op("deletecollection", "");
        if custom {
            // The builder gives custom resources the list options only.
            out.push(route(k, &collection, Method::Delete, "deletecollection", dc, &params::LIST, None, ok(STATUS)));
        } else {
            // The installer: list options without the watch ones, DeleteOptions and its body.
            let mut specs: Vec<Spec> =
                params::LIST.iter().filter(|s| s.0 != "watch" && s.0 != "allowWatchBookmarks").copied().collect();
            specs.extend(params::DELETE);
            let body = Some(Body { definition: DELETE_OPTIONS.into(), required: false });
            out.push(route(k, &collection, Method::Delete, "deletecollection", dc, &specs, body, ok(STATUS)));
        }
    }
    let read_params: &[Spec] = if custom { &[params::RESOURCE_VERSION] } else { &[] };
    let mut subresources = vec![(item.clone(), "", k.definition.as_str())];
    if k.status {
        subresources.push((format!("{item}/status"), "status", k.definition.as_str()));
    }
    if k.scale {
        subresources.push((format!("{item}/scale"), "scale", SCALE));
    }
    for (path, sub, def) in subresources {
        let returned = Some(def.to_string());
        if k.serves("get") {
            out.push(route(
                k,
                &path,
                Method::Get,
                "get",
                op("read", sub),
                read_params,
                None,
                vec![(200, returned.clone())],
            ));
        }
        if k.serves("update") {
            let body = Some(Body { definition: def.to_string(), required: true });
            let codes = vec![(200, returned.clone()), (201, returned.clone())];
            out.push(route(k, &path, Method::Put, "put", op("replace", sub), &params::WRITE, body, codes));
        }
        if k.serves("patch") {
            let body = Some(Body { definition: PATCH.into(), required: true });
            let codes =
                if custom { vec![(200, returned.clone())] } else { vec![(200, returned.clone()), (201, returned)] };
            out.push(route(k, &path, Method::Patch, "patch", op("patch", sub), &params::PATCH, body, codes));
        }
    }
    if k.serves("delete") {
        let body = Some(Body { definition: DELETE_OPTIONS.into(), required: false });
        let codes = vec![(200, status_def.clone()), (202, status_def)];
        out.push(route(k, &item, Method::Delete, "delete", op("delete", ""), &params::DELETE, body, codes));
    }
    out
}

/// A discovery endpoint (`/api/`, `/apis/`, `/apis/<group>/`, `/api/v1/`,
/// `/apis/<group>/<version>/`, `/version/`) as kube-apiserver lists it: a GET with no
/// parameters returning `definition`.
pub fn discovery(path: &str, operation: &str, description: &str, definition: &str) -> Route {
    let (operation_id, tag) = operation_id_and_tag(path, operation);
    let media = if path == "/version/" { vec![JSON] } else { vec![JSON, YAML] };
    Route {
        path: path.to_string(),
        method: Method::Get,
        operation_id,
        tag,
        description: description.to_string(),
        params: Vec::new(),
        body: None,
        consumes: media.clone(),
        produces: media,
        responses: vec![(200, Some(definition.to_string())), (401, None)],
        resource: None,
    }
}

/// An operation verb (`read`, `deletecollection`, ...) and the subresource it acts on.
struct Op {
    verb: String,
    sub: String,
}

fn ok(definition: &str) -> Vec<(u16, Option<String>)> {
    vec![(200, Some(definition.to_string()))]
}

#[allow(clippy::too_many_arguments)]
fn route(
    k: &KindSpec,
    path: &str,
    method: Method,
    action: &'static str,
    op: Op,
    specs: &[Spec],
    body: Option<Body>,
    mut responses: Vec<(u16, Option<String>)>,
) -> Route {
    let mut params: Vec<Param> = specs.iter().map(|s| params::param(*s)).collect();
    params.push(params::param(params::PRETTY));
    if path.contains("{namespace}") {
        params.push(params::param(params::NAMESPACE));
    }
    if path.contains("{name}") {
        params.push(Param::name_of(&k.kind));
    }
    responses.push((401, None));
    let ns = if k.namespaced { "Namespaced" } else { "" };
    let operation = format!("{}{ns}{}{}", op.verb, k.kind, title(&op.sub));
    let (operation_id, tag) = operation_id_and_tag(path, &operation);
    let description = description(k, &op.verb, &op.sub);
    let consumes = match (method, k.flavor) {
        (Method::Patch, Flavor::Custom) => vec![JSON_PATCH, MERGE_PATCH, APPLY_PATCH],
        (Method::Patch, Flavor::BuiltIn) => vec![JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH],
        (_, Flavor::Custom) => vec![JSON, YAML],
        (_, Flavor::BuiltIn) => vec!["*/*"],
    };
    Route {
        path: path.to_string(),
        method,
        operation_id,
        tag,
        description,
        params,
        body,
        consumes,
        produces: vec![JSON, YAML],
        responses,
        resource: Some((action, k.gvk())),
    }
}

/// The installer's wording of an operation (`read status of the specified Widget`).
fn description(k: &KindSpec, verb: &str, sub: &str) -> String {
    let sub = if sub.is_empty() { String::new() } else { format!(" {sub} of") };
    let kind = &k.kind;
    match verb {
        "list" if k.flavor == Flavor::BuiltIn => format!("list or watch objects of kind {kind}"),
        "list" => format!("list{sub} objects of kind {kind}"),
        "read" | "replace" => format!("{verb}{sub} the specified {kind}"),
        "patch" => format!("partially update{sub} the specified {kind}"),
        "create" | "delete" => format!("{verb}{sub}{}{kind}", article(kind)),
        "deletecollection" => format!("delete collection of{sub} {kind}"),
        other => format!("{other}{sub} {kind}"),
    }
}

/// `" a "` or `" an "` before a noun; nothing before a plural (apiserver's
/// `GetArticleForNoun`).
fn article(noun: &str) -> &'static str {
    if noun.ends_with('s') && !noun.ends_with("ss") {
        return " ";
    }
    match noun.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => " an ",
        _ => " a ",
    }
}

fn title(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The apiserver's operation id and tag: the verb, then the group (without `.k8s.io`,
/// `core` for the legacy group) and version, then the rest (`readStableExampleComV1…`,
/// tag `stableExampleCom_v1`).
pub fn operation_id_and_tag(path: &str, operation: &str) -> (String, String) {
    const VERBS: [&str; 12] = [
        "get",
        "log",
        "read",
        "replace",
        "patch",
        "delete",
        "watch",
        "connect",
        "proxy",
        "list",
        "create",
        "deletecollection",
    ];
    let verb = VERBS.iter().filter(|v| operation.starts_with(**v)).min_by_key(|v| v.len()).copied().unwrap_or("");
    let rest = &operation[verb.len()..];
    let mut parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if parts.first() == Some(&"api") {
        parts.splice(0..1, ["apis", "core"]);
    }
    let mut prefix = verb.to_string();
    let mut tag = String::new();
    if parts.len() >= 2 && parts[0] == "apis" {
        let group = parts[1].trim_end_matches(".k8s.io");
        prefix.push_str(&valid_operation_id(group, !verb.is_empty()));
        tag = valid_operation_id(group, false);
        if parts.len() > 2 {
            prefix.push_str(&valid_operation_id(parts[2], true));
            tag = format!("{tag}_{}", valid_operation_id(parts[2], false));
        }
    } else if let Some(first) = parts.first() {
        tag = valid_operation_id(first, false);
    }
    (format!("{prefix}{}", valid_operation_id(rest, !prefix.is_empty())), tag)
}

/// Letters, digits (not first) and `_`; anything else dropped and the next letter
/// capitalized.
fn valid_operation_id(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut capitalize = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// The `paths` object: one path item per path (sorted, as Go writes a map) with its
/// operations in path-item order and the parameters they all share at path level.
pub fn path_items(routes: &[Route], operation: impl Fn(&Route, &[Param]) -> J, parameter: impl Fn(&Param) -> J) -> J {
    let mut paths = J::obj();
    for (path, rs) in by_path(routes) {
        let (common, own) = split_params(&rs);
        let mut item = J::obj();
        for (r, params) in rs.iter().zip(own) {
            item.push(r.method.as_str(), operation(r, &params));
        }
        if !common.is_empty() {
            item.push("parameters", J::Arr(common.iter().map(&parameter).collect()));
        }
        paths.push(&path, item);
    }
    paths
}

/// Routes grouped by path (sorted), each group in path-item order.
fn by_path(routes: &[Route]) -> Vec<(String, Vec<&Route>)> {
    let mut groups: std::collections::BTreeMap<&str, Vec<&Route>> = std::collections::BTreeMap::new();
    for r in routes {
        groups.entry(r.path.as_str()).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|(path, mut rs)| {
            rs.sort_by_key(|r| r.method);
            (path.to_string(), rs)
        })
        .collect()
}

/// kube-openapi's common parameters: those every operation of a path has move up to the
/// path. Returns them and each operation's own, both sorted (required first, then name).
fn split_params(routes: &[&Route]) -> (Vec<Param>, Vec<Vec<Param>>) {
    let is_common =
        |p: &Param| routes.iter().all(|r| r.params.iter().any(|q| q.name == p.name && q.location == p.location));
    let mut common: Vec<Param> =
        routes.first().map(|r| r.params.iter().filter(|p| is_common(p)).cloned().collect()).unwrap_or_default();
    sort_params(&mut common);
    let own = routes
        .iter()
        .map(|r| {
            let mut own: Vec<Param> = r.params.iter().filter(|p| !is_common(p)).cloned().collect();
            sort_params(&mut own);
            own
        })
        .collect();
    (common, own)
}

fn sort_params(params: &mut [Param]) {
    params.sort_by(|a, b| {
        b.required().cmp(&a.required()).then_with(|| a.name.cmp(b.name)).then(a.location.cmp(&b.location))
    });
}

/// The definitions routes refer to directly (bodies and responses).
pub fn route_definitions(routes: &[Route]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in routes {
        out.extend(r.body.iter().map(|b| b.definition.clone()));
        out.extend(r.responses.iter().filter_map(|(_, d)| d.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widget() -> KindSpec {
        KindSpec {
            group: "stable.example.com".into(),
            version: "v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
            status: true,
            scale: true,
            verbs: crate::kinds::CUSTOM_VERBS.to_vec(),
            flavor: Flavor::Custom,
            definition: "com.example.stable.v1.Widget".into(),
            list_definition: "com.example.stable.v1.WidgetList".into(),
        }
    }

    #[test]
    fn operation_ids_and_tags_follow_the_apiserver() {
        let (id, tag) = operation_id_and_tag(
            "/apis/stable.example.com/v1/namespaces/{namespace}/widgets",
            "deletecollectionNamespacedWidget",
        );
        assert_eq!(
            (id.as_str(), tag.as_str()),
            ("deleteStableExampleComV1CollectionNamespacedWidget", "stableExampleCom_v1")
        );
        let (id, tag) = operation_id_and_tag("/api/v1/namespaces/{name}/status", "readNamespaceStatus");
        assert_eq!((id.as_str(), tag.as_str()), ("readCoreV1NamespaceStatus", "core_v1"));
        let (id, _) = operation_id_and_tag(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            "listCustomResourceDefinition",
        );
        assert_eq!(id, "listApiextensionsV1CustomResourceDefinition");
        for (path, op, want_id, want_tag) in [
            ("/api/", "getAPIVersions", "getCoreAPIVersions", "core"),
            ("/apis/", "getAPIVersions", "getAPIVersions", "apis"),
            ("/apis/apiextensions.k8s.io/", "getAPIGroup", "getApiextensionsAPIGroup", "apiextensions"),
            ("/api/v1/", "getAPIResources", "getCoreV1APIResources", "core_v1"),
            ("/version/", "getCodeVersion", "getCodeVersion", "version"),
        ] {
            assert_eq!(operation_id_and_tag(path, op), (want_id.to_string(), want_tag.to_string()));
        }
    }

    #[test]
    fn a_custom_kind_has_the_builder_s_fourteen_operations() {
        let routes = routes(&widget());
        assert_eq!(routes.len(), 14);
        let described: Vec<(&str, &str)> =
            routes.iter().map(|r| (r.operation_id.as_str(), r.description.as_str())).collect();
        for expected in [
            ("listStableExampleComV1WidgetForAllNamespaces", "list objects of kind Widget"),
            ("createStableExampleComV1NamespacedWidget", "create a Widget"),
            ("deleteStableExampleComV1CollectionNamespacedWidget", "delete collection of Widget"),
            ("readStableExampleComV1NamespacedWidgetScale", "read scale of the specified Widget"),
            ("patchStableExampleComV1NamespacedWidgetStatus", "partially update status of the specified Widget"),
            ("deleteStableExampleComV1NamespacedWidget", "delete a Widget"),
        ] {
            assert!(described.contains(&expected), "{expected:?} in {described:?}");
        }
        let patch = routes.iter().find(|r| r.operation_id == "patchStableExampleComV1NamespacedWidget").expect("patch");
        let names: Vec<&str> = patch.params.iter().map(|p| p.name).collect();
        assert_eq!(names, ["dryRun", "fieldManager", "fieldValidation", "force", "pretty", "namespace", "name"]);
    }

    #[test]
    fn articles_follow_the_noun() {
        assert_eq!(article("Event"), " an ");
        assert_eq!(article("Widget"), " a ");
        assert_eq!(article("Class"), " a ");
        assert_eq!(article("Widgets"), " ");
    }
}
