//! Which resources the server serves, and what a name the user typed refers to.
//!
//! [`Discovery::fetch`] reads aggregated discovery (`apidiscovery.k8s.io/v2`, two requests:
//! `/api` and `/apis`), falling back to the per-group documents for servers without it.
//! [`Discovery::resolve`] maps what a user types to one [`ResourceType`] as kubectl does:
//! plural, singular, short name or kind (case-insensitive), optionally qualified with the
//! group (`widgets.stable.example.com`) or version and group
//! (`widgets.v1.stable.example.com`); unqualified names use each group's preferred version,
//! and the first group in the server's priority order wins a name several groups share.

use super::error::ClusterError;
use futures::future::try_join_all;
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;

const ACCEPT_AGGREGATED: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;q=0.9";

/// One served resource at one version, with everything the tools need to address it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub namespaced: bool,
    pub verbs: Vec<String>,
    /// `/status` is served.
    pub status: bool,
    /// `/scale` is served.
    pub scale: bool,
    /// This version is the group's preferred one.
    pub preferred: bool,
}

impl ResourceType {
    /// `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.clone() } else { format!("{}/{}", self.group, self.version) }
    }

    /// kube-rs' description of the resource, for `Api<DynamicObject>`.
    pub fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }

    /// `plural.group` (`widgets.stable.example.com`), how kubectl names a resource type in
    /// messages; the plural alone for the core group.
    pub fn qualified_name(&self) -> String {
        if self.group.is_empty() { self.plural.clone() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `kind.group` in lower case (`widget.stable.example.com`), the prefix of kubectl's
    /// `-o name` output.
    pub fn name_prefix(&self) -> String {
        let kind = self.kind.to_ascii_lowercase();
        if self.group.is_empty() { kind } else { format!("{kind}.{}", self.group) }
    }

    /// An `Api` for objects in `namespace` (ignored for cluster-scoped resources; `None`
    /// means every namespace).
    pub fn api(&self, client: &kube::Client, namespace: Option<&str>) -> Api<DynamicObject> {
        let ar = self.api_resource();
        match namespace {
            Some(ns) if self.namespaced => Api::namespaced_with(client.clone(), ns, &ar),
            _ => Api::all_with(client.clone(), &ar),
        }
    }

    /// The collection path: `/apis/<g>/<v>[/namespaces/<ns>]/<plural>`.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let base = if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{base}/namespaces/{ns}/{}", self.plural),
            _ => format!("{base}/{}", self.plural),
        }
    }

    fn names(&self) -> impl Iterator<Item = String> + '_ {
        [self.plural.clone(), self.singular.clone(), self.kind.to_ascii_lowercase()]
            .into_iter()
            .chain(self.short_names.iter().map(|s| s.to_ascii_lowercase()))
            .filter(|n| !n.is_empty())
    }
}

/// The server's resources, in its priority order.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    resources: Vec<ResourceType>,
}

impl Discovery {
    /// Builds a discovery from known resources (tests, or a caller that has its own).
    pub fn from_resources(resources: Vec<ResourceType>) -> Self {
        Discovery { resources }
    }

    /// Reads discovery from the server.
    pub async fn fetch(client: &kube::Client) -> Result<Discovery, ClusterError> {
        let (core, groups) = futures::try_join!(aggregated(client, "/api"), aggregated(client, "/apis"))?;
        let resources = match (core, groups) {
            (Some(mut core), Some(groups)) => {
                core.extend(groups);
                core
            }
            _ => legacy(client).await?,
        };
        Ok(Discovery { resources })
    }

    /// Reads discovery until it includes every resource of `wanted` (group, plural), for at
    /// most `timeout`: a CRD is Established a moment before discovery lists it, on
    /// kube-apiserver as here. Gives the last discovery read either way.
    pub async fn fetch_including(
        client: &kube::Client,
        wanted: &[(String, String)],
        timeout: std::time::Duration,
    ) -> Result<Discovery, ClusterError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let d = Discovery::fetch(client).await?;
            let served = |(g, p): &(String, String)| d.resources.iter().any(|r| &r.group == g && &r.plural == p);
            if wanted.iter().all(served) || tokio::time::Instant::now() >= deadline {
                return Ok(d);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Every served resource (every version), main resources only.
    pub fn resources(&self) -> &[ResourceType] {
        &self.resources
    }

    /// The resource a user's word names (see the module documentation).
    pub fn resolve(&self, input: &str) -> Result<&ResourceType, ClusterError> {
        let wanted = input.trim().to_ascii_lowercase();
        let unknown = || ClusterError::UnknownResource { name: input.to_string() };
        if wanted.is_empty() {
            return Err(unknown());
        }
        // Fully qualified forms first: `name.version.group`, then `name.group`.
        let qualified = self
            .resources
            .iter()
            .find(|r| !r.group.is_empty() && r.names().any(|n| wanted == format!("{n}.{}.{}", r.version, r.group)));
        if let Some(r) = qualified {
            return Ok(r);
        }
        let preferred = || self.resources.iter().filter(|r| r.preferred);
        if let Some(r) =
            preferred().find(|r| !r.group.is_empty() && r.names().any(|n| wanted == format!("{n}.{}", r.group)))
        {
            return Ok(r);
        }
        // Plain names: plural and singular before short names before kinds, as kubectl's
        // shortcut expander and REST mapper together behave.
        let by = |pick: fn(&ResourceType, &str) -> bool| preferred().find(|r| pick(r, &wanted));
        by(|r, w| r.plural == w || r.singular == w)
            .or_else(|| by(|r, w| r.short_names.iter().any(|s| s.eq_ignore_ascii_case(w))))
            .or_else(|| by(|r, w| r.kind.eq_ignore_ascii_case(w)))
            .ok_or_else(unknown)
    }

    /// The resource serving `kind` at `apiVersion` (`group/version` or `v1`).
    pub fn for_kind(&self, api_version: &str, kind: &str) -> Option<&ResourceType> {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        self.resources.iter().find(|r| r.group == group && r.version == version && r.kind == kind)
    }
}

/// Aggregated discovery at `path`; `None` when the server does not speak it.
async fn aggregated(client: &kube::Client, path: &str) -> Result<Option<Vec<ResourceType>>, ClusterError> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, ACCEPT_AGGREGATED)
        .body(Vec::new())
        .map_err(|e| ClusterError::Other(e.to_string()))?;
    let text = client.request_text(request).await.map_err(|e| ClusterError::from_kube(e, None))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| ClusterError::Other(format!("cannot read the discovery document at {path}: {e}")))?;
    if doc.get("kind").and_then(Value::as_str) != Some("APIGroupDiscoveryList") {
        return Ok(None);
    }
    let list: kube::core::discovery::v2::APIGroupDiscoveryList = serde_json::from_value(doc)
        .map_err(|e| ClusterError::Other(format!("cannot read the discovery document at {path}: {e}")))?;
    let mut out = Vec::new();
    for group in list.items {
        let group_name = group.metadata.and_then(|m| m.name).unwrap_or_default();
        for (i, version) in group.versions.into_iter().enumerate() {
            let version_name = version.version.unwrap_or_default();
            for r in version.resources {
                let has = |name: &str| r.subresources.iter().any(|s| s.subresource.as_deref() == Some(name));
                out.push(ResourceType {
                    group: group_name.clone(),
                    version: version_name.clone(),
                    kind: r.response_kind.as_ref().and_then(|k| k.kind.clone()).unwrap_or_default(),
                    plural: r.resource.clone().unwrap_or_default(),
                    singular: r.singular_resource.clone().unwrap_or_default(),
                    short_names: r.short_names.clone(),
                    categories: r.categories.clone(),
                    namespaced: r.scope.as_deref() == Some("Namespaced"),
                    verbs: r.verbs.clone(),
                    status: has("status"),
                    scale: has("scale"),
                    preferred: i == 0,
                });
            }
        }
    }
    Ok(Some(out))
}

/// Discovery the old way: the group list, then each group version's resource list.
async fn legacy(client: &kube::Client) -> Result<Vec<ResourceType>, ClusterError> {
    let kube_err = |e| ClusterError::from_kube(e, None);
    let core = client.list_core_api_versions().await.map_err(kube_err)?;
    let groups = client.list_api_groups().await.map_err(kube_err)?;
    let mut wanted: Vec<(String, String, bool)> =
        core.versions.iter().map(|v| (String::new(), v.clone(), true)).collect();
    for g in &groups.groups {
        let preferred = g.preferred_version.as_ref().map(|p| p.version.clone());
        for v in &g.versions {
            let is_preferred = preferred.as_deref() == Some(v.version.as_str());
            wanted.push((g.name.clone(), v.version.clone(), is_preferred));
        }
    }
    // Preferred versions first within the whole list, keeping the group order.
    wanted.sort_by_key(|(_, _, preferred)| !preferred);
    let lists = try_join_all(wanted.iter().map(|(group, version, _)| async move {
        if group.is_empty() {
            client.list_core_api_resources(version).await
        } else {
            client.list_api_group_resources(&format!("{group}/{version}")).await
        }
    }))
    .await
    .map_err(kube_err)?;
    let mut out = Vec::new();
    for ((group, version, preferred), list) in wanted.into_iter().zip(lists) {
        let subresources: Vec<&str> =
            list.resources.iter().map(|r| r.name.as_str()).filter(|n| n.contains('/')).collect();
        for r in list.resources.iter().filter(|r| !r.name.contains('/')) {
            let has = |sub: &str| subresources.contains(&format!("{}/{sub}", r.name).as_str());
            out.push(ResourceType {
                group: group.clone(),
                version: version.clone(),
                kind: r.kind.clone(),
                plural: r.name.clone(),
                singular: r.singular_name.clone(),
                short_names: r.short_names.clone().unwrap_or_default(),
                categories: r.categories.clone().unwrap_or_default(),
                namespaced: r.namespaced,
                verbs: r.verbs.clone(),
                status: has("status"),
                scale: has("scale"),
                preferred,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A resource type for tests: namespaced, preferred, no subresources.
    pub(crate) fn resource(group: &str, version: &str, kind: &str, plural: &str, short: &[&str]) -> ResourceType {
        ResourceType {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            categories: vec![],
            namespaced: true,
            verbs: vec![],
            status: false,
            scale: false,
            preferred: true,
        }
    }

    fn discovery() -> Discovery {
        let mut old = resource("stable.example.com", "v1beta1", "Widget", "widgets", &["wd"]);
        old.preferred = false;
        Discovery::from_resources(vec![
            resource("", "v1", "Namespace", "namespaces", &["ns"]),
            resource("stable.example.com", "v1", "Widget", "widgets", &["wd"]),
            old,
            resource("other.example.com", "v1", "Widget", "widgets", &[]),
            resource("other.example.com", "v1", "Gizmo", "gizmos", &["widget-ish"]),
        ])
    }

    #[test]
    fn names_resolve_like_kubectl() {
        let d = discovery();
        let pick = |s: &str| d.resolve(s).map(|r| format!("{}/{}/{}", r.group, r.version, r.plural));
        for word in
            ["widgets", "widget", "wd", "Widget", "WIDGETS", "widgets.stable.example.com", "wd.stable.example.com"]
        {
            assert_eq!(pick(word).expect(word), "stable.example.com/v1/widgets", "{word}");
        }
        assert_eq!(
            pick("widgets.v1beta1.stable.example.com").expect("versioned"),
            "stable.example.com/v1beta1/widgets"
        );
        assert_eq!(pick("widgets.other.example.com").expect("other group"), "other.example.com/v1/widgets");
        assert_eq!(pick("ns").expect("core"), "/v1/namespaces");
        assert_eq!(pick("widget-ish").expect("short"), "other.example.com/v1/gizmos");
        let err = pick("sprockets").expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "the server doesn't have a resource type \"sprockets\". Run 'kubectl crd list' to see the registrations and their names"
        );
        assert!(pick("").is_err());
    }

    #[test]
    fn paths_and_names() {
        let d = discovery();
        let w = d.resolve("wd").expect("widgets");
        assert_eq!(w.collection_path(Some("team")), "/apis/stable.example.com/v1/namespaces/team/widgets");
        assert_eq!(w.collection_path(None), "/apis/stable.example.com/v1/widgets");
        assert_eq!(w.name_prefix(), "widget.stable.example.com");
        assert_eq!(w.qualified_name(), "widgets.stable.example.com");
        let ns = d.resolve("namespaces").expect("ns");
        assert_eq!(ns.api_version(), "v1");
        assert_eq!(d.for_kind("stable.example.com/v1beta1", "Widget").map(|r| r.version.as_str()), Some("v1beta1"));
    }
}
