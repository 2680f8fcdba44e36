//! The engine's keys to etcd's and back, so that `etcdctl` finds every object where
//! kube-apiserver keeps it.
//!
//! The engine keys every kind `/registry/<group>/<plural>/...`, with `core` for the core
//! group (see `resources::ResourceInfo::prefix`); kube-apiserver keeps its own built-in
//! kinds under their bare resource name (`/registry/namespaces/...`, `/registry/leases/...`)
//! and only CRDs, custom resources and aggregated APIs under their group. The mapping lives
//! here, at the etcd edge, rather than in the engine's keys: the redb data directories
//! written so far keep the engine's layout and need no migration, and every other layer
//! (the garbage collector's key parsing, the watch cache) keeps one key form.
//!
//! The built-in kinds are listed by name, both ways: a bare first segment is one of them,
//! anything else is a group (a CRD's always has a dot, and no built-in resource is named
//! like one).

/// What the engine's keys start with; etcd's start with the configured prefix instead.
pub const ENGINE_ROOT: &str = "/registry";
/// The built-in kinds the engine stores, which kube keeps under their bare resource name:
/// `(plural, the group in the engine's keys)` (`core` for the core group; events.k8s.io
/// Events are stored as core Events).
pub const BARE: [(&str, &str); 8] = [
    ("configmaps", "core"),
    ("events", "core"),
    ("namespaces", "core"),
    ("secrets", "core"),
    ("serviceaccounts", "core"),
    ("leases", "coordination.k8s.io"),
    ("mutatingwebhookconfigurations", "admissionregistration.k8s.io"),
    ("validatingwebhookconfigurations", "admissionregistration.k8s.io"),
];

/// The engine's keys to etcd's and back: `/registry` at the start becomes the prefix, and
/// built-in kinds lose their group.
#[derive(Debug, Clone)]
pub struct KeyMap {
    prefix: String,
}

impl KeyMap {
    /// Keys under `prefix` (its trailing `/` is ignored).
    pub fn new(prefix: &str) -> Self {
        KeyMap { prefix: prefix.trim_end_matches('/').to_string() }
    }

    /// The etcd key of an engine key (or prefix). A prefix that stops at a group
    /// (`/registry/core/`) has no single etcd prefix and stays as it is.
    pub fn etcd_key(&self, key: &str) -> Vec<u8> {
        let Some(rest) = key.strip_prefix(ENGINE_ROOT) else { return key.as_bytes().to_vec() };
        format!("{}{}", self.prefix, kube_path(rest)).into_bytes()
    }

    /// The engine key of an etcd key.
    pub fn engine_key(&self, key: &[u8]) -> String {
        let key = String::from_utf8_lossy(key);
        match key.strip_prefix(self.prefix.as_str()) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{ENGINE_ROOT}{}", engine_path(rest)),
            _ => key.into_owned(),
        }
    }
}

/// `/<group>/<plural>...` as kube keys it: `/<plural>...` for a built-in kind.
fn kube_path(rest: &str) -> String {
    let Some((group, tail)) = rest.strip_prefix('/').and_then(|r| r.split_once('/')) else { return rest.into() };
    let plural = tail.split('/').next().unwrap_or_default();
    if !BARE.contains(&(plural, group)) {
        return rest.into();
    }
    format!("/{tail}")
}

/// kube's `/<plural>...` for a built-in kind back to `/<group>/<plural>...`.
fn engine_path(rest: &str) -> String {
    let first = rest.strip_prefix('/').and_then(|r| r.split('/').next()).unwrap_or_default();
    match BARE.iter().find(|(plural, _)| *plural == first) {
        Some((_, group)) => format!("/{group}{rest}"),
        None => rest.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_kinds_lose_their_group_in_etcd_and_get_it_back() {
        let keys = KeyMap::new("/registry/");
        let cases = [
            ("/registry/core/namespaces/team", "/registry/namespaces/team"),
            ("/registry/core/configmaps/team/c1", "/registry/configmaps/team/c1"),
            ("/registry/core/events/", "/registry/events/"),
            ("/registry/coordination.k8s.io/leases/kube-system/l", "/registry/leases/kube-system/l"),
            ("/registry/coordination.k8s.io/leases/", "/registry/leases/"),
            ("/registry/apiextensions.k8s.io/customresourcedefinitions/w.x.io", ""),
            ("/registry/stable.example.com/widgets/default/w1", ""),
            ("/registry/stable.example.com/leases/default/l", ""),
            ("/registry/g/things/t", ""),
            ("/registry/core/pods/default/p", ""),
            ("/registry/", ""),
            ("/registry", ""),
        ];
        for (engine, kube) in cases {
            let kube = if kube.is_empty() { engine } else { kube };
            assert_eq!(String::from_utf8(keys.etcd_key(engine)).expect("utf8"), kube, "{engine}");
            assert_eq!(keys.engine_key(kube.as_bytes()), engine, "{kube}");
        }
    }

    #[test]
    fn the_prefix_replaces_registry() {
        let keys = KeyMap::new("/kubectl-crd");
        assert_eq!(keys.etcd_key("/registry/core/namespaces/a"), b"/kubectl-crd/namespaces/a");
        assert_eq!(keys.engine_key(b"/kubectl-crd/namespaces/a"), "/registry/core/namespaces/a");
        assert_eq!(keys.engine_key(b"/kubectl-crdx/a"), "/kubectl-crdx/a", "another prefix");
        assert_eq!(keys.etcd_key("elsewhere"), b"elsewhere");
    }

    /// Each kind's strategy says where kube keeps it (kube's precondition errors name it).
    #[test]
    fn every_built_in_kind_is_keyed_as_kube_keys_it() {
        use crate::resources::Strategy;
        let mut strategies: Vec<std::sync::Arc<dyn Strategy>> =
            crate::resources::builtin::all(&Default::default()).into_iter().map(|k| k.strategy).collect();
        strategies.push(std::sync::Arc::new(crate::resources::namespaces::NamespaceStrategy::default()));
        strategies.push(std::sync::Arc::new(crate::resources::crds::CrdStrategy::default()));
        let keys = KeyMap::new("/registry");
        for strategy in strategies {
            let info = strategy.info();
            let kube = String::from_utf8(keys.etcd_key(&info.prefix())).expect("utf8");
            assert_eq!(kube, strategy.kube_storage_prefix(), "{}", info.group_resource().qualified());
        }
    }

    #[test]
    fn a_prefix_that_stops_at_a_group_is_left_as_it_is() {
        let keys = KeyMap::new("/registry");
        assert_eq!(keys.etcd_key("/registry/core/"), b"/registry/core/");
        assert_eq!(keys.etcd_key("/registry/core"), b"/registry/core");
    }
}
