//! Where a list reads: kube's `Store.ListPredicate` narrows a list by its field selector
//! before storage sees it, which decides both what is read and what continue tokens are
//! relative to.

use super::ResourceInfo;
use super::selector::FieldSelector;
use crate::meta;

/// Where a list reads, as kube's `Store.ListPredicate` narrows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListScope {
    /// The store prefix the list ranges over; continue tokens are relative to it.
    pub prefix: String,
    /// The one key read instead of a range: a field selector's exact `metadata.name`
    /// (kube's `MatchesSingle`), which leaves nothing to page through.
    pub single: Option<String>,
}

impl ListScope {
    pub fn of(info: &ResourceInfo, namespace: Option<&str>, fields: &FieldSelector, continued: bool) -> Self {
        // An all-namespaces list whose selector names one namespace reads that one only.
        let selected_ns = fields.exact("metadata.namespace").filter(|ns| meta::is_dns1123_label(ns));
        let namespace = match namespace {
            None if info.namespaced => selected_ns,
            given => given,
        };
        let prefix = info.namespace_prefix(namespace);
        // A key needs the namespace of a namespaced kind, and a name fit for a path
        // segment; a continued list is never a single read.
        let name = fields
            .exact("metadata.name")
            .filter(|n| !continued && !n.is_empty() && *n != "." && *n != ".." && !n.contains(['/', '%']));
        let single = name.filter(|_| !info.namespaced || namespace.is_some()).map(|n| format!("{prefix}{n}"));
        ListScope { prefix, single }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_selector_narrows_where_a_list_reads() {
        let info = ResourceInfo {
            group: "stable.example.com".into(),
            version: "v1".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            kind: "Widget".into(),
            list_kind: "WidgetList".into(),
            namespaced: true,
            short_names: vec![],
            categories: vec![],
            status_subresource: false,
        };
        let supported = ["metadata.name".to_string(), "metadata.namespace".to_string()];
        let scope = |ns: Option<&str>, sel: &str, continued: bool| {
            let fields = FieldSelector::parse(sel, &supported).expect("selector");
            let s = ListScope::of(&info, ns, &fields, continued);
            (s.prefix, s.single)
        };
        let all = "/registry/stable.example.com/widgets/".to_string();
        let default = format!("{all}default/");
        assert_eq!(scope(None, "", false), (all.clone(), None));
        assert_eq!(scope(None, "metadata.namespace=default", false), (default.clone(), None));
        assert_eq!(scope(None, "metadata.namespace=Not_A_Name", false), (all.clone(), None));
        assert_eq!(scope(None, "metadata.name=w1", false), (all.clone(), None), "no namespace, no key");
        let one = Some(format!("{default}w1"));
        assert_eq!(scope(Some("default"), "metadata.name=w1", false), (default.clone(), one.clone()));
        assert_eq!(scope(None, "metadata.name=w1,metadata.namespace=default", false), (default.clone(), one));
        assert_eq!(scope(Some("default"), "metadata.name=w1", true), (default.clone(), None), "continued");
        assert_eq!(scope(Some("default"), "metadata.name!=w1", false), (default, None));
    }
}
