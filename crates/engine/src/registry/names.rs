//! The names controller's decision: which of a CRD's requested names it may serve.
//!
//! Plural, singular and short names share one value space per API group, kind and list
//! kind another; a name in another CRD's `status.acceptedNames` is taken, and the first
//! registration to get a name into its accepted names keeps it (reference 10: the Gadget
//! cannot have `wd` while the Widget holds it; reference 73: it gets `wd` once the Widget
//! is gone). This is Go's `calculateNamesAndConditions` as a pure function of the CRD and
//! the others; the controller shell that stores the result and re-runs the decision for
//! the other CRDs of the group after a change or a deletion lives with the storage layer.
//!
//! One deliberate difference from kube: kube first sets `Established=False/Installing`
//! and lets a separate establishing controller flip it to `True` once the endpoint is
//! served. The engine serves a CRD as soon as its names are accepted, so the decision sets
//! `Established=True/InitialNamesAccepted` directly, which is the state a client observes
//! a few milliseconds after creation on the real server (reference 07).

use crate::registry::conditions::{
    self, ESTABLISHED, NAMES_ACCEPTED, STATUS_FALSE, STATUS_TRUE, crd_conditions, find_condition, is_equivalent,
    message, reason,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition as Condition, CustomResourceDefinitionNames as Names,
    CustomResourceDefinitionStatus,
};
use k8s_openapi::jiff::Timestamp;
use std::borrow::Borrow;
use std::collections::BTreeSet;

/// What the names controller decides for one CRD.
#[derive(Debug, Clone, PartialEq)]
pub struct NamesDecision {
    /// The names to put in `status.acceptedNames`.
    pub accepted_names: Names,
    /// The `NamesAccepted` condition (no transition time; [`conditions::set_condition`] stamps it).
    pub names_accepted: Condition,
    /// The `Established` condition to set, or `None` to leave the current one untouched.
    pub established: Option<Condition>,
}

/// The names already claimed in one group: resource names (plural, singular, short names)
/// and kinds (kind, list kind) live in separate value spaces.
#[derive(Default)]
struct ClaimedNames {
    resources: BTreeSet<String>,
    kinds: BTreeSet<String>,
}

impl ClaimedNames {
    /// Like kube, an unset singular or list kind claims the empty string; it only matters
    /// for a CRD requesting an empty name, which defaulting and validation prevent.
    fn claim(&mut self, accepted: &Names) {
        self.resources.insert(accepted.plural.clone());
        self.resources.insert(accepted.singular.clone().unwrap_or_default());
        self.resources.extend(accepted.short_names.iter().flatten().cloned());
        self.kinds.insert(accepted.kind.clone());
        self.kinds.insert(accepted.list_kind.clone().unwrap_or_default());
    }
}

fn accepted_names(crd: &CustomResourceDefinition) -> Names {
    crd.status.as_ref().and_then(|s| s.accepted_names.clone()).unwrap_or_default()
}

/// Every name claimed in `crd`'s group, by `crd` itself (kube's lister includes it) and by
/// each other CRD of the group. An entry of `others` with `crd`'s own name is skipped so
/// that callers may pass the whole list (as values, or as the controller's shared copies).
fn claimed_in_group<O: Borrow<CustomResourceDefinition>>(crd: &CustomResourceDefinition, others: &[O]) -> ClaimedNames {
    let mut claimed = ClaimedNames::default();
    claimed.claim(&accepted_names(crd));
    for other in others {
        let other = other.borrow();
        if other.spec.group == crd.spec.group && other.metadata.name != crd.metadata.name {
            claimed.claim(&accepted_names(other));
        }
    }
    claimed
}

/// Go's `equalToAcceptedOrFresh`: a name is fine if we already hold it or nobody does.
fn check_name(requested: &str, accepted: &str, used: &BTreeSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        Ok(())
    } else {
        Err(format!("{} is already in use", crate::field::go_quote(requested)))
    }
}

/// Go's error aggregate: one message alone, several (deduplicated) in brackets.
fn aggregate(messages: Vec<String>) -> Option<String> {
    let mut unique: Vec<String> = Vec::new();
    for m in messages {
        if !unique.contains(&m) {
            unique.push(m);
        }
    }
    match unique.len() {
        0 => None,
        1 => unique.pop(),
        _ => Some(format!("[{}]", unique.join(", "))),
    }
}

/// Decides `status.acceptedNames`, `NamesAccepted` and `Established` for `crd`, given every
/// other CRD (those of other groups are ignored).
///
/// Each requested name that is already ours or free moves into the accepted names; a
/// conflicting one leaves the accepted value as it was and makes `NamesAccepted` `False`
/// with the reason of the last conflicting kind of name. Short names move as a whole: if
/// any requested short name conflicts, none of the new ones is accepted (reference 10).
/// Categories are not claimed and always follow the spec.
pub fn calculate_names_and_conditions<O: Borrow<CustomResourceDefinition>>(
    crd: &CustomResourceDefinition,
    others: &[O],
) -> NamesDecision {
    let claimed = claimed_in_group(crd, others);
    let requested = &crd.spec.names;
    let accepted = accepted_names(crd);
    let mut new = accepted.clone();
    let mut conflict: Option<(&str, String)> = None;

    match check_name(&requested.plural, &accepted.plural, &claimed.resources) {
        Ok(()) => new.plural = requested.plural.clone(),
        Err(e) => conflict = Some((reason::PLURAL_CONFLICT, e)),
    }
    let requested_singular = requested.singular.as_deref().unwrap_or_default();
    match check_name(requested_singular, accepted.singular.as_deref().unwrap_or_default(), &claimed.resources) {
        Ok(()) => new.singular = requested.singular.clone(),
        Err(e) => conflict = Some((reason::SINGULAR_CONFLICT, e)),
    }
    if requested.short_names != accepted.short_names {
        let ours: BTreeSet<&String> = accepted.short_names.iter().flatten().collect();
        let errors: Vec<String> = requested
            .short_names
            .iter()
            .flatten()
            .filter(|s| !ours.contains(s))
            .filter_map(|s| check_name(s, "", &claimed.resources).err())
            .collect();
        match aggregate(errors) {
            None => new.short_names = requested.short_names.clone(),
            Some(e) => conflict = Some((reason::SHORT_NAMES_CONFLICT, e)),
        }
    }
    match check_name(&requested.kind, &accepted.kind, &claimed.kinds) {
        Ok(()) => new.kind = requested.kind.clone(),
        Err(e) => conflict = Some((reason::KIND_CONFLICT, e)),
    }
    let requested_list_kind = requested.list_kind.as_deref().unwrap_or_default();
    match check_name(requested_list_kind, accepted.list_kind.as_deref().unwrap_or_default(), &claimed.kinds) {
        Ok(()) => new.list_kind = requested.list_kind.clone(),
        Err(e) => conflict = Some((reason::LIST_KIND_CONFLICT, e)),
    }
    new.categories = requested.categories.clone();

    let names_accepted = match &conflict {
        None => conditions::condition(NAMES_ACCEPTED, STATUS_TRUE, reason::NO_CONFLICTS, message::NO_CONFLICTS),
        Some((r, e)) => conditions::condition(NAMES_ACCEPTED, STATUS_FALSE, r, e),
    };
    NamesDecision { accepted_names: new, established: established_decision(crd, conflict.is_none()), names_accepted }
}

/// `Established` never goes back to `False`: an established CRD keeps serving its old
/// accepted names while a rename conflicts.
fn established_decision(crd: &CustomResourceDefinition, names_accepted: bool) -> Option<Condition> {
    let current = find_condition(crd_conditions(crd), ESTABLISHED);
    let wanted = match current {
        Some(c) if c.status == STATUS_TRUE || !names_accepted => c.clone(),
        _ if names_accepted => conditions::condition(
            ESTABLISHED,
            STATUS_TRUE,
            reason::INITIAL_NAMES_ACCEPTED,
            message::INITIAL_NAMES_ACCEPTED,
        ),
        _ => conditions::condition(ESTABLISHED, STATUS_FALSE, reason::NOT_ACCEPTED, message::NOT_ACCEPTED),
    };
    if is_equivalent(&wanted, current) { None } else { Some(wanted) }
}

/// One pass of the names controller for `crd`: the status to write, or `None` when
/// nothing would change (including when the spec names already equal the accepted ones).
/// After a write, the caller re-runs this for the other CRDs of the group, whose
/// conflicts the new accepted names may create or release; it does the same after a CRD
/// is deleted.
pub fn sync_names<O: Borrow<CustomResourceDefinition>>(
    crd: &CustomResourceDefinition,
    others: &[O],
    now: Timestamp,
) -> Option<CustomResourceDefinitionStatus> {
    let current = accepted_names(crd);
    if crd.spec.names == current {
        return None;
    }
    let decision = calculate_names_and_conditions(crd, others);
    let unchanged_names = decision.accepted_names == current
        && is_equivalent(&decision.names_accepted, find_condition(crd_conditions(crd), NAMES_ACCEPTED));
    if unchanged_names && decision.established.is_none() {
        return None;
    }
    let mut status = crd.status.clone().unwrap_or_default();
    status.accepted_names = Some(decision.accepted_names);
    conditions::set_status_condition(&mut status, decision.names_accepted, now);
    if let Some(established) = decision.established {
        conditions::set_status_condition(&mut status, established, now);
    }
    Some(status)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::defaults::{apply_defaults, prepare_for_create};
    use crate::registry::fixtures::{CrdBuilder, at, gadget, widget};
    use serde_json::json;

    /// A CRD as stored right after its POST: defaulted, status reset.
    fn created(builder: CrdBuilder) -> CustomResourceDefinition {
        let mut crd = builder.build();
        apply_defaults(&mut crd);
        prepare_for_create(&mut crd);
        crd
    }

    /// Runs one names-controller pass and stores its result.
    fn synced(
        mut crd: CustomResourceDefinition,
        others: &[CustomResourceDefinition],
        now: i64,
    ) -> CustomResourceDefinition {
        if let Some(status) = sync_names(&crd, others, at(now)) {
            crd.status = Some(status);
        }
        crd
    }

    fn status_json(crd: &CustomResourceDefinition) -> serde_json::Value {
        let mut v = serde_json::to_value(crd.status.as_ref().expect("status")).expect("serializes");
        v.as_object_mut().expect("object").remove("storedVersions");
        v
    }

    #[test]
    fn widget_alone_is_accepted_and_established_like_reference_07() {
        let widget = synced(created(widget()), &[], 54);
        assert_eq!(
            status_json(&widget),
            json!({
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "1970-01-01T00:00:54Z",
                     "reason": "NoConflicts", "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "lastTransitionTime": "1970-01-01T00:00:54Z",
                     "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                ],
                "acceptedNames": {"plural": "widgets", "singular": "widget", "shortNames": ["wd"], "kind": "Widget", "listKind": "WidgetList"}
            })
        );
    }

    #[test]
    fn gadget_short_name_conflict_matches_reference_10_then_73() {
        let widget = synced(created(widget()), &[], 54);
        let gadget = synced(created(gadget()), std::slice::from_ref(&widget), 55);
        assert_eq!(
            status_json(&gadget),
            json!({
                "conditions": [
                    {"type": "NamesAccepted", "status": "False", "lastTransitionTime": "1970-01-01T00:00:55Z",
                     "reason": "ShortNamesConflict", "message": "\"wd\" is already in use"},
                    {"type": "Established", "status": "False", "lastTransitionTime": "1970-01-01T00:00:55Z",
                     "reason": "NotAccepted", "message": "not all names are accepted"}
                ],
                "acceptedNames": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"}
            })
        );
        // The widget is unaffected: it holds `wd`.
        assert_eq!(sync_names(&widget, std::slice::from_ref(&gadget), at(56)), None);
        // While the widget still exists, a re-sync of the gadget changes nothing.
        assert_eq!(sync_names(&gadget, std::slice::from_ref(&widget), at(57)), None);

        // Reference 73: the widget is gone, the gadget gets `wd`; both conditions flip.
        let gadget = synced(gadget, &[], 80);
        assert_eq!(
            status_json(&gadget),
            json!({
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "1970-01-01T00:01:20Z",
                     "reason": "NoConflicts", "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "lastTransitionTime": "1970-01-01T00:01:20Z",
                     "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                ],
                "acceptedNames": {"plural": "gadgets", "singular": "gadget", "shortNames": ["wd"], "kind": "Gadget", "listKind": "GadgetList"}
            })
        );
    }

    #[test]
    fn each_kind_of_conflict_has_its_reason_and_message() {
        let holder = synced(
            created(CrdBuilder::new("foos", "g.example.com").kind("Foo").singular("foo").short_names(["f", "fo"])),
            &[],
            1,
        );
        struct Case {
            name: &'static str,
            crd: CrdBuilder,
            reason: &'static str,
            message: &'static str,
        }
        let cases = [
            Case {
                name: "plural",
                crd: CrdBuilder::new("foo", "g.example.com").name("x").kind("Bar").singular("bar"),
                reason: "PluralConflict",
                message: "\"foo\" is already in use",
            },
            Case {
                name: "singular",
                crd: CrdBuilder::new("bars", "g.example.com").kind("Bar").singular("fo"),
                reason: "SingularConflict",
                message: "\"fo\" is already in use",
            },
            Case {
                name: "one short name",
                crd: CrdBuilder::new("bars", "g.example.com").kind("Bar").short_names(["b", "f"]),
                reason: "ShortNamesConflict",
                message: "\"f\" is already in use",
            },
            Case {
                name: "several short names",
                crd: CrdBuilder::new("bars", "g.example.com").kind("Bar").short_names(["fo", "b", "foos"]),
                reason: "ShortNamesConflict",
                message: "[\"fo\" is already in use, \"foos\" is already in use]",
            },
            Case {
                name: "kind",
                crd: CrdBuilder::new("bars", "g.example.com").kind("Foo").singular("bar").list_kind("BarList"),
                reason: "KindConflict",
                message: "\"Foo\" is already in use",
            },
            Case {
                name: "listKind",
                crd: CrdBuilder::new("bars", "g.example.com").kind("Bar").list_kind("FooList"),
                reason: "ListKindConflict",
                message: "\"FooList\" is already in use",
            },
            Case {
                name: "listKind against kind space",
                crd: CrdBuilder::new("bars", "g.example.com").kind("Bar").list_kind("Foo"),
                reason: "ListKindConflict",
                message: "\"Foo\" is already in use",
            },
        ];
        for case in cases {
            let crd = created(case.crd);
            let decision = calculate_names_and_conditions(&crd, std::slice::from_ref(&holder));
            assert_eq!(decision.names_accepted.status, "False", "{}", case.name);
            assert_eq!(decision.names_accepted.reason.as_deref(), Some(case.reason), "{}", case.name);
            assert_eq!(decision.names_accepted.message.as_deref(), Some(case.message), "{}", case.name);
            let established = decision.established.expect("a first Established condition");
            assert_eq!(
                (established.status.as_str(), established.reason.as_deref()),
                ("False", Some("NotAccepted")),
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn last_conflict_wins_the_reason_and_free_names_still_move() {
        let holder = synced(created(CrdBuilder::new("foos", "g.example.com").kind("Foo").short_names(["f"])), &[], 1);
        // Plural and kind both conflict; kind is checked later, so it names the reason.
        let crd = created(
            CrdBuilder::new("foos", "g.example.com").name("other").kind("Foo").singular("thing").list_kind("Things"),
        );
        let d = calculate_names_and_conditions(&crd, std::slice::from_ref(&holder));
        assert_eq!(d.names_accepted.reason.as_deref(), Some("KindConflict"));
        assert_eq!(d.accepted_names.plural, "", "conflicting plural stays as accepted");
        assert_eq!(d.accepted_names.kind, "", "conflicting kind stays as accepted");
        assert_eq!(d.accepted_names.singular.as_deref(), Some("thing"));
        assert_eq!(d.accepted_names.list_kind.as_deref(), Some("Things"));
    }

    #[test]
    fn names_are_per_group_and_own_names_are_kept() {
        let holder = synced(created(widget()), &[], 1);
        let elsewhere = created(widget().name("widgets.other.example.com"));
        let mut elsewhere = elsewhere;
        elsewhere.spec.group = "other.example.com".into();
        let d = calculate_names_and_conditions(&elsewhere, std::slice::from_ref(&holder));
        assert_eq!(d.names_accepted.reason.as_deref(), Some("NoConflicts"));

        // The holder itself in `others` (a caller passing the whole list) is no conflict.
        let d = calculate_names_and_conditions(&holder, std::slice::from_ref(&holder));
        assert_eq!(d.names_accepted.reason.as_deref(), Some("NoConflicts"));
        assert_eq!(d.established, None, "already established");
    }

    #[test]
    fn established_never_goes_back_and_keeps_its_time() {
        let widget = synced(created(widget()), &[], 10);
        let other =
            synced(created(CrdBuilder::new("gizmos", "stable.example.com").kind("Gizmo").short_names(["gz"])), &[], 11);
        // The established widget now asks for a short name the gizmo holds.
        let mut renamed = widget.clone();
        renamed.spec.names.short_names = Some(vec!["wd".into(), "gz".into()]);
        let renamed = synced(renamed, std::slice::from_ref(&other), 20);
        let conditions = crd_conditions(&renamed);
        let names = find_condition(conditions, NAMES_ACCEPTED).expect("NamesAccepted");
        assert_eq!((names.status.as_str(), names.reason.as_deref()), ("False", Some("ShortNamesConflict")));
        assert_eq!(names.last_transition_time.as_ref().map(|t| t.0), Some(at(20)));
        let established = find_condition(conditions, ESTABLISHED).expect("Established");
        assert_eq!(established.status, "True");
        assert_eq!(established.last_transition_time.as_ref().map(|t| t.0), Some(at(10)), "no flip, no new time");
        let accepted =
            renamed.status.as_ref().and_then(|s| s.accepted_names.as_ref()).and_then(|n| n.short_names.clone());
        assert_eq!(accepted, Some(vec!["wd".to_string()]), "old short names are still served");
    }

    #[test]
    fn names_already_accepted_are_not_rechecked() {
        // kube's shortcut: accepted names equal to the spec mean nothing to do, even when
        // the conditions are missing (e.g. a client wrote acceptedNames through /status).
        let mut crd = created(widget());
        let names = crd.spec.names.clone();
        crd.status.get_or_insert_with(Default::default).accepted_names = Some(names);
        assert!(calculate_names_and_conditions::<CustomResourceDefinition>(&crd, &[]).established.is_some());
        assert_eq!(sync_names::<CustomResourceDefinition>(&crd, &[], at(1)), None);
    }

    #[test]
    fn categories_follow_the_spec() {
        let crd = created(widget().categories(["all", "toys"]));
        let d = calculate_names_and_conditions::<CustomResourceDefinition>(&crd, &[]);
        assert_eq!(d.accepted_names.categories, Some(vec!["all".to_string(), "toys".to_string()]));
    }
}
