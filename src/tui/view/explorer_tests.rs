//! The schema explorer drawn at 160 columns (panes side by side) and 80 (stacked): tree
//! markers, the selected field's attributes and CEL rules under it, and the printer
//! columns previewed on objects with an empty column flagged.

use super::{render, text};
use crate::cluster::column_preview::preview;
use crate::tui::action::{Effect, Msg};
use crate::tui::fixtures::{crd, ctrl, now, press, state, type_keys};
use crate::tui::state::{Screen, State};
use crate::tui::update::apply;
use crossterm::event::KeyCode;
use serde_json::json;

/// A databases CRD like the demo's, its detail open (and refreshed: both read the preview),
/// the preview read from two objects.
fn on_databases() -> State {
    let spec = json!({"type": "object", "required": ["engine"],
        "x-kubernetes-validations": [
            {"rule": "self.engine != 'redis' || self.storageGB <= 64",
             "messageExpression": "self.engine + ' keeps its data in memory: storageGB must be at most 64'", "fieldPath": ".storageGB",
             "reason": "FieldValueInvalid"},
            {"rule": "!has(self.backup) || self.engine != 'redis'", "message": "redis is not backed up"}],
        "properties": {
            "engine": {"type": "string", "enum": ["postgres", "mysql", "redis"]},
            "storageGB": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 1000, "default": 10},
            "ports": {"type": "array", "maxItems": 4, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string", "maxLength": 15}}}},
            "version": {"type": "string", "pattern": "^[0-9.]+$"}}});
    let reg = crd("databases", "Database")
        .spec_schema(spec)
        .printer_column("Engine", "string", ".spec.engine")
        .printer_column("Backup", "string", ".spec.backup.schedule")
        .registration(Some(2));
    let version = reg.crd.spec.versions[0].clone();
    let name = reg.name().to_string();
    let mut s = state();
    s.registrations.items = vec![reg];
    let effects = type_keys(&mut s, "i");
    assert!(matches!(&effects[..], [Effect::LoadColumnPreview(c)] if c.metadata.name.as_deref() == Some(&name)));
    let effects = ctrl(&mut s, 'r');
    assert!(matches!(&effects[..], [Effect::LoadRegistrations, Effect::LoadColumnPreview(_)]), "{effects:?}");
    let objects: Vec<_> = ["postgres-01", "redis-02"]
        .iter()
        .map(|n| json!({"metadata": {"name": n, "namespace": "team-a"}, "spec": {"engine": n.split('-').next()}}))
        .collect();
    apply(&mut s, Msg::ColumnPreview { crd: name, result: Ok(vec![preview(&version, &objects, now())]) });
    s
}

#[test]
fn the_selected_field_shows_its_rules_and_the_columns_their_cells() {
    let mut s = on_databases();
    press(&mut s, KeyCode::Tab);
    type_keys(&mut s, "jl");
    let buf = render(&mut s, 160, 34);
    snapshot!("explorer_rules_160", buf);
    let t = text(&buf);
    assert!(t.contains("! empty on all 2 objects"), "{t}");
    assert!(t.contains("│ rule: self.engine != 'redis' || self.storageGB <= 64"), "{t}");
}

#[test]
fn at_80_columns_the_attributes_expand_under_the_field() {
    let mut s = on_databases();
    press(&mut s, KeyCode::Tab);
    type_keys(&mut s, "jljjj");
    let buf = render(&mut s, 80, 40);
    snapshot!("explorer_storage_80", buf);
    let t = text(&buf);
    assert!(t.contains("storageGB <integer int32> ≥1 ≤1000 default 10"), "{t}");
    assert!(t.contains("│ minimum 1, maximum 1000"), "{t}");
    // Up on spec: its CEL rules wrap in the narrow pane.
    type_keys(&mut s, "kkk");
    let buf = render(&mut s, 80, 40);
    snapshot!("explorer_rules_80", buf);
    assert!(text(&buf).contains("│   messageExpression: self.engine + ' keeps its data in memor"), "{}", text(&buf));
}

#[test]
fn p_leaves_only_the_column_preview_in_the_left_pane() {
    let mut s = on_databases();
    type_keys(&mut s, "p");
    let buf = render(&mut s, 80, 24);
    snapshot!("explorer_columns_only_80", buf);
    let t = text(&buf);
    assert!(t.contains("Backup  string  .spec.backup.schedule  ! empty on all 2 objects"), "{t}");
    assert!(!t.contains("Names (spec"), "{t}");
    type_keys(&mut s, "p");
    assert!(text(&render(&mut s, 80, 24)).contains("Names (spec"));
}

#[test]
fn describe_waits_for_the_preview_and_then_prints_it() {
    let mut s = on_databases();
    press(&mut s, KeyCode::Esc);
    let effects = type_keys(&mut s, "d");
    let Some(Effect::LoadColumnPreview(c)) = effects.first() else { panic!("{effects:?}") };
    let name = c.metadata.name.clone().unwrap_or_default();
    let version = c.spec.versions[0].clone();
    let Screen::Text(t) = s.screen() else { panic!("a text screen") };
    assert_eq!(t.lines.last().map(String::as_str), Some("Printer columns: reading objects to preview them on…"));
    let objects = [json!({"metadata": {"name": "pg", "namespace": "a"}, "spec": {"engine": "postgres"}})];
    apply(&mut s, Msg::ColumnPreview { crd: name, result: Ok(vec![preview(&version, &objects, now())]) });
    let Screen::Text(t) = s.screen() else { panic!("a text screen") };
    let tail = t.lines[t.lines.len() - 4..].join("\n");
    assert_eq!(
        tail,
        "Printer columns v1 on 1 object:\n  COLUMN   TYPE     JSONPATH                a/pg\n  \
         Engine   string   .spec.engine            postgres\n  Backup   string   .spec.backup.schedule   ! empty on the only object"
    );
}
