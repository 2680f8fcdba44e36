//! CRD status conditions: the vocabulary (types, reasons, messages) and the one helper set
//! through which conditions change.
//!
//! The names controller, the establishing step, the deletion finalizer, discovery and the
//! tools all read and write the same few conditions; keeping their words here as `const`s
//! means code and tests cannot drift apart. The helpers mirror apiextensions' `apihelpers`
//! (`SetCRDCondition`, `FindCRDCondition`, `IsCRDConditionTrue`, ...): in particular
//! [`set_condition`] moves `lastTransitionTime` only when the status flips, which is what
//! clients watching conditions rely on.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition as Condition, CustomResourceDefinitionStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

/// The names in `spec.names` are all accepted (`status.acceptedNames`) or which conflict.
pub const NAMES_ACCEPTED: &str = "NamesAccepted";
/// The resource is served: set once the initial names are accepted, never taken back.
pub const ESTABLISHED: &str = "Established";
/// The CRD is being deleted and its instances are being cleaned up.
pub const TERMINATING: &str = "Terminating";

/// Condition statuses, spelled as the API spells them.
pub const STATUS_TRUE: &str = "True";
pub const STATUS_FALSE: &str = "False";

/// Reasons of the conditions above (one CamelCase word each, as kube sets them).
pub mod reason {
    /// `NamesAccepted=True`.
    pub const NO_CONFLICTS: &str = "NoConflicts";
    /// `NamesAccepted=False`: the plural is held by another CRD of the group.
    pub const PLURAL_CONFLICT: &str = "PluralConflict";
    pub const SINGULAR_CONFLICT: &str = "SingularConflict";
    pub const SHORT_NAMES_CONFLICT: &str = "ShortNamesConflict";
    pub const KIND_CONFLICT: &str = "KindConflict";
    pub const LIST_KIND_CONFLICT: &str = "ListKindConflict";
    /// `Established=True`.
    pub const INITIAL_NAMES_ACCEPTED: &str = "InitialNamesAccepted";
    /// `Established=False` while names conflict.
    pub const NOT_ACCEPTED: &str = "NotAccepted";
    /// `Established=False` while the replicas sharing an etcd start serving the new names.
    pub const INSTALLING: &str = "Installing";
    /// `Terminating=True` as the DELETE request marks the CRD.
    pub const INSTANCE_DELETION_PENDING: &str = "InstanceDeletionPending";
    /// `Terminating=True` while the finalizer deletes the instances.
    pub const INSTANCE_DELETION_IN_PROGRESS: &str = "InstanceDeletionInProgress";
    /// `Terminating=True` while the instances cannot be listed (one is stored at a version
    /// the CRD no longer lists); the message says why.
    pub const INSTANCE_DELETION_FAILED: &str = "InstanceDeletionFailed";
    /// `Terminating=False` once the finalizer removed every instance and itself.
    pub const INSTANCE_DELETION_COMPLETED: &str = "InstanceDeletionCompleted";
    /// `Terminating=False` once the finalizer removed itself from a CRD never established.
    pub const NEVER_ESTABLISHED: &str = "NeverEstablished";
}

/// Messages kube-apiserver pairs with the reasons above (reference files 07, 10, 66, 67).
pub mod message {
    pub const NO_CONFLICTS: &str = "no conflicts found";
    pub const NOT_ACCEPTED: &str = "not all names are accepted";
    pub const INITIAL_NAMES_ACCEPTED: &str = "the initial names have been accepted";
    pub const INSTANCE_DELETION_PENDING: &str =
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon";
    pub const INSTANCE_DELETION_IN_PROGRESS: &str = "CustomResource deletion is in progress";
    pub const INSTANCE_DELETION_COMPLETED: &str = "removed all instances";
    pub const NEVER_ESTABLISHED: &str = "resource was never established";
}

/// A condition without a transition time; [`set_condition`] stamps it.
pub fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Condition {
    Condition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
        last_transition_time: None,
        observed_generation: None,
    }
}

/// Sets `new` in `conditions`. A new type is appended; an existing one keeps its
/// `lastTransitionTime` unless its status flips (or it had none), while reason and message
/// are always updated in place.
pub fn set_condition(conditions: &mut Vec<Condition>, new: Condition, now: Timestamp) {
    let mut new = new;
    new.last_transition_time = Some(Time(now));
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        None => conditions.push(new),
        Some(existing) => {
            if existing.status != new.status || existing.last_transition_time.is_none() {
                existing.status = new.status;
                existing.last_transition_time = new.last_transition_time;
            }
            existing.reason = new.reason;
            existing.message = new.message;
        }
    }
}

/// The condition of `type_`, if present.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present with status `True`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find_condition(conditions, type_).is_some_and(|c| c.status == STATUS_TRUE)
}

#[cfg(test)]
/// Removes the condition of `type_`, if present.
pub fn remove_condition(conditions: &mut Vec<Condition>, type_: &str) {
    conditions.retain(|c| c.type_ != type_);
}

/// Same type, status, reason and message (the transition time is ignored), like Go's
/// `IsCRDConditionEquivalent`; `None` is equivalent to nothing.
pub fn is_equivalent(a: &Condition, b: Option<&Condition>) -> bool {
    b.is_some_and(|b| a.type_ == b.type_ && a.status == b.status && a.reason == b.reason && a.message == b.message)
}

/// The CRD's conditions (empty when it has no status yet).
pub fn crd_conditions(crd: &CustomResourceDefinition) -> &[Condition] {
    crd.status.as_ref().and_then(|s| s.conditions.as_deref()).unwrap_or_default()
}

/// Whether the CRD has the condition `type_` with status `True`.
pub fn is_crd_condition_true(crd: &CustomResourceDefinition, type_: &str) -> bool {
    is_true(crd_conditions(crd), type_)
}

#[cfg(test)]
/// [`set_condition`] on a CRD, creating `status` and `status.conditions` as needed.
pub fn set_crd_condition(crd: &mut CustomResourceDefinition, new: Condition, now: Timestamp) {
    set_status_condition(crd.status.get_or_insert_with(CustomResourceDefinitionStatus::default), new, now);
}

/// [`set_condition`] on a status, creating `status.conditions` as needed.
pub fn set_status_condition(status: &mut CustomResourceDefinitionStatus, new: Condition, now: Timestamp) {
    set_condition(status.conditions.get_or_insert_with(Vec::new), new, now);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).expect("valid timestamp")
    }

    fn stamp(c: &Condition) -> Option<Timestamp> {
        c.last_transition_time.as_ref().map(|t| t.0)
    }

    #[test]
    fn set_condition_moves_transition_time_only_on_flip() {
        struct Case {
            name: &'static str,
            existing: Option<(&'static str, Option<i64>)>,
            new_status: &'static str,
            want_time: i64,
        }
        let cases = [
            Case { name: "absent: appended with now", existing: None, new_status: STATUS_TRUE, want_time: 200 },
            Case {
                name: "same status: time kept",
                existing: Some((STATUS_TRUE, Some(100))),
                new_status: STATUS_TRUE,
                want_time: 100,
            },
            Case {
                name: "flip: time moves",
                existing: Some((STATUS_FALSE, Some(100))),
                new_status: STATUS_TRUE,
                want_time: 200,
            },
            Case {
                name: "no time yet: stamped",
                existing: Some((STATUS_TRUE, None)),
                new_status: STATUS_TRUE,
                want_time: 200,
            },
        ];
        for case in cases {
            let mut conditions = Vec::new();
            if let Some((status, time)) = case.existing {
                let mut c = condition(NAMES_ACCEPTED, status, "Old", "old message");
                c.last_transition_time = time.map(|s| Time(at(s)));
                conditions.push(c);
            }
            let new = condition(NAMES_ACCEPTED, case.new_status, reason::NO_CONFLICTS, message::NO_CONFLICTS);
            set_condition(&mut conditions, new, at(200));
            assert_eq!(conditions.len(), 1, "{}", case.name);
            let c = &conditions[0];
            assert_eq!(c.status, case.new_status, "{}", case.name);
            assert_eq!(stamp(c), Some(at(case.want_time)), "{}", case.name);
            // Reason and message always follow the newest decision.
            assert_eq!(c.reason.as_deref(), Some(reason::NO_CONFLICTS), "{}", case.name);
            assert_eq!(c.message.as_deref(), Some(message::NO_CONFLICTS), "{}", case.name);
        }
    }

    #[test]
    fn set_condition_keeps_other_types_in_order() {
        let mut conditions = vec![condition(NAMES_ACCEPTED, STATUS_TRUE, "a", "a")];
        set_condition(&mut conditions, condition(ESTABLISHED, STATUS_TRUE, "b", "b"), at(1));
        set_condition(&mut conditions, condition(TERMINATING, STATUS_TRUE, "c", "c"), at(2));
        let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, [NAMES_ACCEPTED, ESTABLISHED, TERMINATING]);
        remove_condition(&mut conditions, ESTABLISHED);
        let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, [NAMES_ACCEPTED, TERMINATING]);
    }

    #[test]
    fn find_and_is_true() {
        let conditions = vec![
            condition(NAMES_ACCEPTED, STATUS_FALSE, reason::SHORT_NAMES_CONFLICT, "\"wd\" is already in use"),
            condition(ESTABLISHED, STATUS_TRUE, reason::INITIAL_NAMES_ACCEPTED, message::INITIAL_NAMES_ACCEPTED),
        ];
        assert!(is_true(&conditions, ESTABLISHED));
        assert!(!is_true(&conditions, NAMES_ACCEPTED));
        assert!(!is_true(&conditions, TERMINATING));
        assert_eq!(find_condition(&conditions, NAMES_ACCEPTED).map(|c| c.status.as_str()), Some(STATUS_FALSE));
        assert!(find_condition(&conditions, TERMINATING).is_none());
    }

    #[test]
    fn equivalence_ignores_time_only() {
        let a = condition(ESTABLISHED, STATUS_TRUE, "r", "m");
        let mut b = a.clone();
        b.last_transition_time = Some(Time(at(5)));
        assert!(is_equivalent(&a, Some(&b)));
        assert!(!is_equivalent(&a, None));
        b.message = Some("other".into());
        assert!(!is_equivalent(&a, Some(&b)));
    }

    #[test]
    fn crd_helpers_create_status() {
        let mut crd = CustomResourceDefinition::default();
        assert!(crd_conditions(&crd).is_empty());
        set_crd_condition(&mut crd, condition(TERMINATING, STATUS_TRUE, "r", "m"), at(3));
        assert!(is_crd_condition_true(&crd, TERMINATING));
        assert!(!is_crd_condition_true(&crd, ESTABLISHED));
    }
}
