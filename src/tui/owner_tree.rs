//! The owner tree screen (`o`): its state and its share of the step function. Opened on
//! an object (a resources row, a resource) it shows that object's owners upwards and its
//! dependents downwards; opened on a CRD (registrations, detail), the trees of its objects
//! that have owners or dependents, one after another (those with neither are counted).
//!
//! The lists are one [`Effect::LoadOwners`] (one request per kind); the tree is built by
//! the pure [`crate::cluster::owners`] when they come back. Enter opens a custom resource.

use crate::cluster::discovery::ResourceType;
use crate::cluster::owners::{Row, Target, forest, tree};
use crate::cluster::owners_fetch::{Listed, Scope};
use crate::tui::table::{ObjKey, scroll_offset};

/// What the tree is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum About {
    Object {
        kind: ResourceType,
        key: ObjKey,
    },
    /// A CRD's objects (its served kind).
    Kind(ResourceType),
}

/// Where the lists are.
#[derive(Debug, Clone)]
pub enum Loading {
    Pending,
    Failed(String),
    Ready {
        listed: Box<Listed>,
        rows: Vec<Row>,
        /// Of a kind: its objects with neither owners nor dependents.
        unlinked: usize,
    },
}

/// The owner tree screen.
#[derive(Debug, Clone)]
pub struct OwnerTreeScreen {
    pub about: About,
    pub scope: Scope,
    /// The lists this screen waits for; older answers are dropped.
    pub request: u64,
    pub loading: Loading,
    pub cursor: usize,
    pub offset: usize,
}

impl OwnerTreeScreen {
    /// What the title says: `widgets/team-a/widget-001`, or `widgets (every object)`.
    pub fn title(&self) -> String {
        match &self.about {
            About::Object { kind, key } => format!("{}/{}", kind.plural, key.display()),
            About::Kind(kind) => format!("{} (its objects)", kind.qualified_name()),
        }
    }

    pub fn rows(&self) -> &[Row] {
        match &self.loading {
            Loading::Ready { rows, .. } => rows,
            _ => &[],
        }
    }

    /// The object on the cursor's row, as a tree to open (`o` again: its own tree); the
    /// kind must be one the lists read.
    pub(super) fn selected(&self) -> Option<About> {
        let Loading::Ready { listed, rows, .. } = &self.loading else { return None };
        let (Target::Object(uid) | Target::Cycle(uid)) = &rows.get(self.cursor)?.target else { return None };
        let node = listed.graph.node(uid)?;
        let kind = listed.kinds.iter().find(|k| k.group == node.group() && k.kind == node.kind)?;
        Some(About::Object { kind: kind.clone(), key: ObjKey::new(node.namespace.as_deref(), &node.name) })
    }

    pub(super) fn move_by(&mut self, n: isize, height: usize) {
        let last = self.rows().len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(n).min(last);
        self.offset = scroll_offset(self.offset, self.cursor, height);
    }
}

/// The tree `listed` holds around what the screen is about.
pub(super) fn built(about: &About, listed: Box<Listed>) -> Loading {
    let g = &listed.graph;
    match about {
        About::Object { kind, key } => {
            let found = g.find(&kind.group, &kind.kind, key.namespace.as_deref(), &key.name);
            match found.map(|n| tree(g, &n.uid)) {
                Some(rows) => Loading::Ready { rows, listed, unlinked: 0 },
                None => Loading::Failed(format!("{} is not among the objects listed (deleted?)", key.display())),
            }
        }
        About::Kind(kind) => {
            let all = g.of_kind(&kind.group, &kind.kind);
            let roots: Vec<&str> = all.iter().filter(|n| g.linked(&n.uid)).map(|n| n.uid.as_str()).collect();
            let unlinked = all.len() - roots.len();
            let rows = forest(g, roots);
            Loading::Ready { rows, listed, unlinked }
        }
    }
}

#[cfg(test)]
#[path = "owner_tree_tests.rs"]
pub(crate) mod tests;
