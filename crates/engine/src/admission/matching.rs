//! Whether a webhook's rules take a request, as kube's `rules.Matcher` decides: scope,
//! operation, group, version and resource (with its subresource), each an exact name or
//! `*`.

use super::hooks::Rule;

/// What a rule is matched against: the request's resource and operation.
#[derive(Debug, Clone, Copy)]
pub struct Requested<'a> {
    pub operation: &'a str,
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    /// Empty for the main endpoint.
    pub subresource: &'a str,
    /// `None` for a cluster-scoped object.
    pub namespace: Option<&'a str>,
}

impl Requested<'_> {
    fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.version == "v1" && self.resource == "namespaces"
    }
}

/// Whether `rule` matches `req`.
pub fn rule_matches(rule: &Rule, req: &Requested<'_>) -> bool {
    scope_matches(&rule.scope, req)
        && rule.operations.iter().any(|op| op == "*" || op == req.operation)
        && exact_or_wildcard(&rule.api_groups, req.group)
        && exact_or_wildcard(&rule.api_versions, req.version)
        && rule.resources.iter().any(|r| {
            let (resource, sub) = r.split_once('/').unwrap_or((r, ""));
            (resource == "*" || resource == req.resource) && (sub == "*" || sub == req.subresource)
        })
}

/// A namespace itself is cluster-scoped; everything with a namespace is namespaced.
fn scope_matches(scope: &str, req: &Requested<'_>) -> bool {
    let namespaced = !req.is_namespace() && req.namespace.is_some_and(|ns| !ns.is_empty());
    match scope {
        "" | "*" => true,
        "Namespaced" => namespaced,
        "Cluster" => !namespaced,
        _ => false,
    }
}

fn exact_or_wildcard(items: &[String], requested: &str) -> bool {
    items.iter().any(|i| i == "*" || i == requested)
}

/// The admission configurations themselves, which no webhook may hold back (kube's
/// `IsExemptAdmissionConfigurationResource`).
pub fn exempt(group: &str, kind: &str) -> bool {
    group == "admissionregistration.k8s.io"
        && matches!(
            kind,
            "ValidatingWebhookConfiguration"
                | "MutatingWebhookConfiguration"
                | "ValidatingAdmissionPolicy"
                | "ValidatingAdmissionPolicyBinding"
                | "MutatingAdmissionPolicy"
                | "MutatingAdmissionPolicyBinding"
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(ops: &[&str], groups: &[&str], versions: &[&str], resources: &[&str], scope: &str) -> Rule {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
        Rule {
            operations: v(ops),
            api_groups: v(groups),
            api_versions: v(versions),
            resources: v(resources),
            scope: scope.into(),
        }
    }

    fn widgets<'a>(operation: &'a str, subresource: &'a str, namespace: Option<&'a str>) -> Requested<'a> {
        Requested { operation, group: "g", version: "v1", resource: "widgets", subresource, namespace }
    }

    #[test]
    fn rules_match_by_operation_group_version_and_resource_with_wildcards() {
        let r = rule(&["CREATE"], &["g"], &["*"], &["widgets"], "*");
        assert!(rule_matches(&r, &widgets("CREATE", "", Some("ns"))));
        assert!(!rule_matches(&r, &widgets("UPDATE", "", Some("ns"))));
        assert!(!rule_matches(&r, &widgets("CREATE", "status", Some("ns"))), "a subresource is named apart");
        let all = rule(&["*"], &["*"], &["*"], &["*/*"], "*");
        assert!(rule_matches(&all, &widgets("DELETE", "status", None)));
        let main_only = rule(&["*"], &["*"], &["*"], &["*"], "*");
        assert!(!rule_matches(&main_only, &widgets("UPDATE", "scale", None)));
        let status = rule(&["UPDATE"], &["g"], &["v1"], &["widgets/status"], "*");
        assert!(rule_matches(&status, &widgets("UPDATE", "status", None)));
        assert!(!rule_matches(&rule(&["*"], &["g"], &["v2"], &["*"], "*"), &widgets("CREATE", "", None)));
    }

    #[test]
    fn scope_tells_namespaced_objects_from_cluster_ones_and_counts_a_namespace_as_cluster_scoped() {
        let namespaced = rule(&["*"], &["*"], &["*"], &["*"], "Namespaced");
        let cluster = rule(&["*"], &["*"], &["*"], &["*"], "Cluster");
        assert!(rule_matches(&namespaced, &widgets("CREATE", "", Some("ns"))));
        assert!(!rule_matches(&cluster, &widgets("CREATE", "", Some("ns"))));
        assert!(rule_matches(&cluster, &widgets("CREATE", "", None)));
        let ns = Requested {
            operation: "CREATE",
            group: "",
            version: "v1",
            resource: "namespaces",
            subresource: "",
            namespace: Some("x"),
        };
        assert!(rule_matches(&cluster, &ns) && !rule_matches(&namespaced, &ns));
    }

    #[test]
    fn only_the_admission_configurations_are_exempt() {
        assert!(exempt("admissionregistration.k8s.io", "MutatingWebhookConfiguration"));
        assert!(!exempt("admissionregistration.k8s.io", "Widget"));
        assert!(!exempt("g", "ValidatingWebhookConfiguration"));
    }
}
