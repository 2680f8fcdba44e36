//! What the TUI shows about registrations, read through the cluster layer's pure views of a
//! CRD (the same ones `kubectl crd list` and `describe` print), plus the few facts only the
//! TUI needs (which registrations are in trouble, and why, in a word).

use crate::cluster::discovery::ResourceType;
use crate::cluster::registrations::{self, ConditionStatus, ConditionView, Crd};
use crate::cluster::tui_ops::resource_of;
use serde_json::Value;

pub use crate::cluster::registrations::TERMINATING;
pub use crate::cluster::table::age;

/// One CRD, its summary (as `kubectl crd list` shows it) and the endpoint of its resources.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    pub crd: Crd,
    pub summary: registrations::Registration,
    /// `None` while the CRD serves no endpoint (names not accepted, not established).
    pub resource: Option<ResourceType>,
    /// Its resources are being counted and have no count yet (the screen shows it waiting).
    pub counting: bool,
}

/// Why a registration needs attention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    Terminating,
    NamesNotAccepted,
    NotEstablished,
}

impl Trouble {
    /// The word shown in the STATUS column (reads without colour).
    pub fn word(self) -> &'static str {
        match self {
            Trouble::Terminating => "Terminating",
            Trouble::NamesNotAccepted => "NameConflict",
            Trouble::NotEstablished => "NotEstablished",
        }
    }
}

impl Registration {
    /// A registration whose resources are counted (`None`: they cannot be).
    pub fn new(crd: Crd, count: Option<u64>) -> Self {
        let summary = registrations::Registration::from_crd(&crd, count);
        Registration { summary, resource: resource_of(&crd), crd, counting: false }
    }

    /// A registration whose count is on its way (if it serves resources to count).
    pub fn uncounted(crd: Crd) -> Self {
        let mut r = Registration::new(crd, None);
        r.counting = r.resource.is_some();
        r
    }

    pub fn name(&self) -> &str {
        &self.summary.name
    }
    pub fn group(&self) -> &str {
        &self.summary.group
    }
    pub fn kind(&self) -> &str {
        &self.summary.kind
    }
    pub fn scope(&self) -> &str {
        &self.summary.scope
    }
    pub fn count(&self) -> Option<u64> {
        self.summary.resources
    }

    /// Served versions, the storage version marked with `*` (`v1*,v1beta1`).
    pub fn versions(&self) -> String {
        let served = self.summary.versions.iter().filter(|v| v.served);
        served.map(|v| if v.storage { format!("{}*", v.name) } else { v.name.clone() }).collect::<Vec<_>>().join(",")
    }

    pub fn established(&self) -> bool {
        self.summary.established == ConditionStatus::True
    }
    /// Whether the names are accepted; `None` while the CRD has no verdict yet (just created:
    /// kube's naming controller sets the condition a moment later).
    pub fn names_accepted(&self) -> Option<bool> {
        match self.summary.names_accepted {
            ConditionStatus::True => Some(true),
            ConditionStatus::False => Some(false),
            ConditionStatus::Unknown | ConditionStatus::Missing => None,
        }
    }
    pub fn terminating(&self) -> bool {
        self.summary.terminating || self.crd.metadata.deletion_timestamp.is_some()
    }

    /// What is wrong with this registration, worst first.
    pub fn troubles(&self) -> Vec<Trouble> {
        let mut t = vec![];
        if self.terminating() {
            t.push(Trouble::Terminating);
        }
        if self.names_accepted() == Some(false) {
            t.push(Trouble::NamesNotAccepted);
        }
        if !self.established() {
            t.push(Trouble::NotEstablished);
        }
        t
    }
}

/// `.status.conditions` of any object, as the CRD's own conditions are shown; entries
/// without a type are skipped.
pub fn object_conditions(obj: &Value) -> Vec<ConditionView> {
    let Some(list) = obj.pointer("/status/conditions").and_then(Value::as_array) else { return vec![] };
    list.iter()
        .filter_map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            let type_ = s("type");
            (!type_.is_empty()).then(|| ConditionView {
                type_,
                status: s("status"),
                reason: s("reason"),
                message: s("message"),
                last_transition_time: c.get("lastTransitionTime").and_then(Value::as_str).and_then(|t| t.parse().ok()),
            })
        })
        .collect()
}
