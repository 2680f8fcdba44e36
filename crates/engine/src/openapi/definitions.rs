//! The definitions of the built-in types: meta/v1 (`ObjectMeta`, `ListMeta`, `Status`,
//! `DeleteOptions`, ...), autoscaling/v1 `Scale`, and the built-in kinds with their parts.
//!
//! They live in `definitions.json` (swagger 2.0 form), produced by
//! `generate_definitions.py`: the meta and autoscaling types exactly as the recorded
//! kube-apiserver 1.32 serves them, the kinds from `k8s-openapi`'s copy of kube's schemas.

use super::schema::refs;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

const DATA: &str = include_str!("definitions.json");

/// A set of definitions by name (swagger 2.0 form).
pub type Definitions = BTreeMap<String, Value>;

/// The built-in definitions, parsed once.
pub fn builtin() -> &'static Definitions {
    static DEFS: OnceLock<Definitions> = OnceLock::new();
    DEFS.get_or_init(|| serde_json::from_str(DATA).unwrap_or_default())
}

/// The built-in definition marked with `x-kubernetes-group-version-kind` = this kind (the
/// first by name), from an index made once: every new state of the served kinds asks for
/// each built-in kind's.
pub fn find_kind(group: &str, version: &str, kind: &str) -> Option<String> {
    static BY_KIND: OnceLock<HashMap<(String, String, String), String>> = OnceLock::new();
    let by_kind = BY_KIND.get_or_init(|| {
        let mut by_kind = HashMap::new();
        for (name, def) in builtin() {
            let gvks = def.get("x-kubernetes-group-version-kind").and_then(Value::as_array);
            for g in gvks.into_iter().flatten() {
                let part = |k: &str| g[k].as_str().map(String::from);
                if let (Some(group), Some(version), Some(kind)) = (part("group"), part("version"), part("kind")) {
                    by_kind.entry((group, version, kind)).or_insert_with(|| name.clone());
                }
            }
        }
        by_kind
    });
    by_kind.get(&(group.to_string(), version.to_string(), kind.to_string())).cloned()
}

/// The names a built-in definition refers to directly, found once.
pub fn builtin_refs(name: &str) -> Option<&'static BTreeSet<String>> {
    static REFS: OnceLock<HashMap<String, BTreeSet<String>>> = OnceLock::new();
    REFS.get_or_init(|| {
        builtin()
            .iter()
            .map(|(name, def)| {
                let mut found = BTreeSet::new();
                refs(def, &mut found);
                (name.clone(), found)
            })
            .collect()
    })
    .get(name)
}

/// `roots` and every definition they reach, by the names `refs_of` says each refers to,
/// sorted by name (a root or reference `refs_of` does not know is kept, with nothing
/// reached from it).
pub fn closure<'a>(
    refs_of: impl Fn(&str) -> Option<&'a BTreeSet<String>>,
    roots: impl IntoIterator<Item = String>,
) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = roots.into_iter().collect();
    while let Some(name) = todo.pop() {
        if seen.contains(&name) {
            continue;
        }
        if let Some(found) = refs_of(&name) {
            todo.extend(found.iter().filter(|n| !seen.contains(*n)).cloned());
        }
        seen.insert(name);
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_parses_and_every_reference_resolves() {
        let defs = builtin();
        assert!(defs.len() > 50, "{}", defs.len());
        for name in closure(builtin_refs, defs.keys().cloned()) {
            assert!(defs.contains_key(&name), "{name} is referenced but not defined");
        }
    }

    /// A kind without a definition would be published as a bare `{"type": "object"}`.
    #[test]
    fn every_built_in_kind_served_has_its_definition() {
        for kind in crate::resources::builtin::all(&Default::default()) {
            let info = kind.info();
            assert!(find_kind(&info.group, &info.version, &info.kind).is_some(), "{} has no definition", info.kind);
        }
        let review = find_kind("authentication.k8s.io", "v1", "SelfSubjectReview").expect("whoami's review");
        let reached = closure(builtin_refs, [review]);
        assert!(reached.contains("io.k8s.api.authentication.v1.UserInfo"), "{reached:?}");
    }

    #[test]
    fn built_in_kinds_are_found_by_their_group_version_kind() {
        assert_eq!(find_kind("", "v1", "Namespace").as_deref(), Some("io.k8s.api.core.v1.Namespace"));
        assert_eq!(
            find_kind("apiextensions.k8s.io", "v1", "CustomResourceDefinitionList").as_deref(),
            Some("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionList")
        );
        let reached = closure(builtin_refs, ["io.k8s.api.core.v1.Namespace".to_string()]);
        assert!(reached.contains("io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry"));
    }
}
