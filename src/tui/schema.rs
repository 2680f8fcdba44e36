//! A CRD's OpenAPI v3 schemas as a collapsible tree: one root per version, then
//! properties, list items (`[]`) and map values (`{}`), each with its attributes
//! ([`FieldAttrs`]); and the state of the printer-column preview beside it.

use crate::cluster::column_preview::VersionPreview;
use crate::cluster::schema_fields::{self, FieldAttrs};
use crate::tui::model::Registration;
use serde_json::Value;
use std::collections::BTreeSet;

/// One schema node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaNode {
    /// Property name, `[]` for list items, `{}` for map values, or the version at a root.
    pub label: String,
    /// `string`, `integer int32`, `int-or-string`…; at a root, `served, storage`.
    pub type_: String,
    pub description: String,
    pub required: bool,
    /// Every attribute (constraints, default, markers, CEL rules); empty at a root.
    pub attrs: FieldAttrs,
    /// Unique path (`v1.spec.replicas`), the key of the expanded set.
    pub path: String,
    pub children: Vec<SchemaNode>,
}

fn node(label: String, schema: &Value, required: bool, path: String) -> SchemaNode {
    let attrs = FieldAttrs::of(schema, required);
    let children = schema_fields::children(schema)
        .into_iter()
        .map(|(k, v, req)| {
            let child = format!("{path}.{k}");
            node(k, v, req, child)
        })
        .collect();
    SchemaNode {
        label,
        type_: attrs.type_text(),
        description: schema.get("description").and_then(Value::as_str).unwrap_or_default().to_string(),
        required,
        attrs,
        path,
        children,
    }
}

/// One root per version that has a schema.
pub fn roots(reg: &Registration) -> Vec<SchemaNode> {
    reg.crd
        .spec
        .versions
        .iter()
        .filter_map(|v| {
            let schema = serde_json::to_value(v.schema.as_ref()?.open_api_v3_schema.as_ref()?).ok()?;
            let mut root = node(v.name.clone(), &schema, false, v.name.clone());
            // A root's rules are the object's: they stay, its other attributes say nothing.
            root.attrs = FieldAttrs { rules: root.attrs.rules, ..FieldAttrs::default() };
            let mut notes = vec![];
            if v.served {
                notes.push("served");
            }
            if v.storage {
                notes.push("storage");
            }
            root.type_ = notes.join(", ");
            Some(root)
        })
        .collect()
}

/// The printer-column preview of the detail screen: on its way, read, or why not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Preview {
    #[default]
    Loading,
    Ready(Vec<VersionPreview>),
    Failed(String),
}

/// The last line of a CRD's describe text while its preview is read; replaced by it.
pub const PREVIEW_PENDING: &str = "Printer columns: reading objects to preview them on…";

impl Preview {
    /// The preview as `describe` text, once there is one (or a reason there is none).
    pub fn describe_lines(&self) -> Option<Vec<String>> {
        match self {
            Preview::Ready(p) => Some(crate::cluster::column_preview::describe_lines(p)),
            Preview::Failed(e) => Some(vec![format!("Printer columns: no preview: {e}")]),
            Preview::Loading => None,
        }
    }

    /// The preview of `version`, once read.
    pub fn of(&self, version: &str) -> Option<&VersionPreview> {
        match self {
            Preview::Ready(all) => all.iter().find(|p| p.version == version),
            _ => None,
        }
    }
}

/// A visible line of the tree.
#[derive(Debug, Clone, Copy)]
pub struct Visible<'a> {
    pub depth: usize,
    pub node: &'a SchemaNode,
    pub expanded: bool,
}

/// The tree with what is expanded and where the cursor is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaTree {
    pub roots: Vec<SchemaNode>,
    expanded: BTreeSet<String>,
    pub cursor: usize,
}

impl SchemaTree {
    /// The tree of a registration, with each version and its top level open.
    pub fn new(reg: &Registration) -> Self {
        let roots = roots(reg);
        let expanded = roots.iter().map(|r| r.path.clone()).collect();
        SchemaTree { roots, expanded, cursor: 0 }
    }

    /// The lines on screen, in order.
    pub fn visible(&self) -> Vec<Visible<'_>> {
        fn walk<'a>(n: &'a SchemaNode, depth: usize, open: &BTreeSet<String>, out: &mut Vec<Visible<'a>>) {
            let expanded = open.contains(&n.path);
            out.push(Visible { depth, node: n, expanded });
            if expanded {
                for c in &n.children {
                    walk(c, depth + 1, open, out);
                }
            }
        }
        let mut out = vec![];
        for r in &self.roots {
            walk(r, 0, &self.expanded, &mut out);
        }
        out
    }

    /// The node under the cursor.
    pub fn selected(&self) -> Option<&SchemaNode> {
        self.visible().get(self.cursor).map(|v| v.node)
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.visible().len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
    }

    /// Opens (`Some(true)`), closes (`Some(false)`) or flips (`None`) the node at the cursor.
    /// Closing a leaf or a closed node moves to its parent, as file trees do.
    pub fn set_open(&mut self, open: Option<bool>) {
        let visible = self.visible();
        let Some(v) = visible.get(self.cursor) else { return };
        let path = v.node.path.clone();
        let want = open.unwrap_or(!v.expanded);
        if !want && (!v.expanded || v.node.children.is_empty()) && open.is_some() {
            let depth = v.depth;
            if let Some(parent) = visible[..self.cursor].iter().rposition(|p| p.depth + 1 == depth) {
                self.cursor = parent;
            }
            return;
        }
        if v.node.children.is_empty() {
            return;
        }
        if want {
            self.expanded.insert(path);
        } else {
            self.expanded.remove(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> Registration {
        let crd = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "properties": {
                        "spec": {"type": "object", "required": ["size"], "properties": {
                            "size": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
        }))
        .expect("crd");
        Registration::new(crd, None)
    }

    #[test]
    fn versions_open_and_nodes_fold() {
        let mut t = SchemaTree::new(&reg());
        let labels = |t: &SchemaTree| t.visible().iter().map(|v| v.node.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(&t), ["v1", "spec", "status"]);
        t.move_by(1);
        t.set_open(Some(true));
        assert_eq!(labels(&t), ["v1", "spec", "size", "tags", "status"]);
        assert!(t.visible()[2].node.required);
        assert_eq!(t.visible()[4].node.type_, "object");
        assert_eq!(t.visible()[4].node.attrs.markers(), ["preserve-unknown"]);
        t.move_by(1);
        t.set_open(Some(false));
        assert_eq!(t.cursor, 1, "closing a leaf goes to its parent");
        t.set_open(None);
        assert_eq!(labels(&t), ["v1", "spec", "status"]);
    }
}
