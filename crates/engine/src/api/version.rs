//! `/version`: the server's version, as kube's go-restful route answers it.

use super::{error_response, json_text_response, query, respond};
use crate::representation::negotiation;
use crate::status::ApiError;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::Response;

/// `version.Info`, in its struct's field order; `kubectlCrdVersion` is ours (the CLI tells
/// a kubectl-crd server from another by it).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct VersionInfo {
    major: String,
    minor: String,
    git_version: String,
    git_commit: &'static str,
    git_tree_state: &'static str,
    build_date: &'static str,
    go_version: &'static str,
    compiler: &'static str,
    platform: String,
    kubectl_crd_version: String,
}

/// `/version`, indented whatever the client, as kube's handler writes it (`WriteRawJSON`).
/// Its go-restful route produces JSON alone: another `Accept` is go-restful's 406 (the
/// handler itself negotiates nothing, so conversions and parameters are ignored).
pub(super) async fn version(method: Method, uri: axum::http::Uri, headers: HeaderMap) -> Response {
    if method != Method::GET {
        return error_response(&ApiError::method_not_allowed());
    }
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    if let Err(e) = negotiation::restful_accepts_version(accept) {
        return respond::error_for(&e, &headers, &query::Query::parse(uri.query()));
    }
    let (major, minor) = crate::KUBERNETES_API_LEVEL;
    let info = VersionInfo {
        major: major.to_string(),
        minor: minor.to_string(),
        git_version: format!("v{major}.{minor}.0+kubectl-crd.v{}", crate::VERSION),
        git_commit: "",
        git_tree_state: "clean",
        build_date: "",
        go_version: "",
        compiler: "rustc",
        platform: format!("{}/{}", std::env::consts::OS, go_arch(std::env::consts::ARCH)),
        kubectl_crd_version: format!("v{}", crate::VERSION),
    };
    json_text_response(StatusCode::OK, serde_json::to_vec_pretty(&info).unwrap_or_default())
}

/// Go's name (`GOARCH`) for a Rust target architecture, as kube's `platform` says it.
fn go_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// A path under `/version` that its go-restful web service routes nowhere.
pub(super) async fn under_version() -> Response {
    error_response(&ApiError::no_route())
}
