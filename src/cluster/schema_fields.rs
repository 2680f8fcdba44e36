//! Every attribute a CRD author writes on a schema field, read from the OpenAPI v3 JSON:
//! type and format, nullability, value constraints, default, the `x-kubernetes-*` markers
//! and the CEL rules. One [`FieldAttrs`] gives both the short markers a tree line has room
//! for and the full lines a detail panel or `describe` prints, so the TUI and the CLI say
//! the same thing. Pure: a function of the schema JSON.

use super::registrations::Crd;
use serde_json::Value;
use std::collections::BTreeSet;

/// One `x-kubernetes-validations` entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CelRule {
    pub rule: String,
    pub message: Option<String>,
    pub message_expression: Option<String>,
    pub field_path: Option<String>,
    pub reason: Option<String>,
}

impl CelRule {
    fn of(v: &Value) -> Option<CelRule> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(String::from);
        Some(CelRule {
            rule: s("rule")?,
            message: s("message"),
            message_expression: s("messageExpression"),
            field_path: s("fieldPath"),
            reason: s("reason"),
        })
    }

    /// The rule, then what it says on failure and where, indented under it.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("rule: {}", self.rule)];
        let extra = [
            ("message", &self.message),
            ("messageExpression", &self.message_expression),
            ("fieldPath", &self.field_path),
            ("reason", &self.reason),
        ];
        out.extend(extra.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("  {k}: {v}"))));
        out
    }
}

/// A bound of a number: the limit and whether it is exclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub value: String,
    pub exclusive: bool,
}

/// The attributes of one schema field.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldAttrs {
    pub type_: String,
    pub format: String,
    pub required: bool,
    pub nullable: bool,
    /// The allowed values, as compact JSON.
    pub enum_: Vec<String>,
    pub minimum: Option<Bound>,
    pub maximum: Option<Bound>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    pub min_properties: Option<u64>,
    pub max_properties: Option<u64>,
    pub pattern: Option<String>,
    /// The default, as compact JSON.
    pub default: Option<String>,
    pub int_or_string: bool,
    pub preserve_unknown: bool,
    pub embedded: bool,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
    pub map_type: Option<String>,
    pub rules: Vec<CelRule>,
}

/// Defaults longer than this show only as `default` on a tree line.
const SHORT_DEFAULT: usize = 12;

impl FieldAttrs {
    /// The attributes of `schema`; `required` comes from the parent's `required` list.
    pub fn of(schema: &Value, required: bool) -> FieldAttrs {
        let s = |k: &str| schema.get(k).and_then(Value::as_str).map(String::from);
        let n = |k: &str| schema.get(k).and_then(Value::as_u64);
        let flag = |k: &str| schema.get(k).and_then(Value::as_bool) == Some(true);
        let bound = |k: &str, ex: &str| {
            schema.get(k).filter(|v| v.is_number()).map(|v| Bound { value: number(v), exclusive: flag(ex) })
        };
        let list = |k: &str| schema.get(k).and_then(Value::as_array).into_iter().flatten();
        FieldAttrs {
            type_: s("type").unwrap_or_default(),
            format: s("format").unwrap_or_default(),
            required,
            nullable: flag("nullable"),
            enum_: list("enum").map(Value::to_string).collect(),
            minimum: bound("minimum", "exclusiveMinimum"),
            maximum: bound("maximum", "exclusiveMaximum"),
            min_length: n("minLength"),
            max_length: n("maxLength"),
            min_items: n("minItems"),
            max_items: n("maxItems"),
            min_properties: n("minProperties"),
            max_properties: n("maxProperties"),
            pattern: s("pattern"),
            default: schema.get("default").map(Value::to_string),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
            embedded: flag("x-kubernetes-embedded-resource"),
            list_type: s("x-kubernetes-list-type"),
            list_map_keys: list("x-kubernetes-list-map-keys").filter_map(Value::as_str).map(String::from).collect(),
            map_type: s("x-kubernetes-map-type"),
            rules: list("x-kubernetes-validations").filter_map(CelRule::of).collect(),
        }
    }

    /// `integer int32`, `int-or-string`, `string date-time`, or empty (any value).
    pub fn type_text(&self) -> String {
        let type_ = if self.int_or_string { "int-or-string" } else { self.type_.as_str() };
        [type_, self.format.as_str()].iter().filter(|s| !s.is_empty()).copied().collect::<Vec<_>>().join(" ")
    }

    /// The short markers of a tree line: `nullable`, `enum(3)`, `≥1 ≤9`, `len ≤63`,
    /// `pattern`, `default 3`, `list:map[name]`, `CEL×2`…
    pub fn markers(&self) -> Vec<String> {
        let mut out = vec![];
        if self.nullable {
            out.push("nullable".into());
        }
        if !self.enum_.is_empty() {
            out.push(format!("enum({})", self.enum_.len()));
        }
        if let Some(range) = self.range() {
            out.push(range);
        }
        out.extend(self.counts().into_iter().map(|(what, range)| format!("{what} {range}")));
        if self.pattern.is_some() {
            out.push("pattern".into());
        }
        match &self.default {
            Some(d) if d.chars().count() <= SHORT_DEFAULT => out.push(format!("default {d}")),
            Some(_) => out.push("default".into()),
            None => {}
        }
        out.extend(self.kube_markers());
        if !self.rules.is_empty() {
            out.push(format!("CEL×{}", self.rules.len()));
        }
        out
    }

    /// Every attribute in full, one line each, CEL rules last (see [`CelRule::lines`]).
    pub fn details(&self) -> Vec<String> {
        let mut out = vec![];
        let mut head = vec![];
        if self.required {
            head.push("required".to_string());
        }
        if self.nullable {
            head.push("nullable".into());
        }
        head.extend(self.kube_markers());
        if !head.is_empty() {
            out.push(head.join(", "));
        }
        if !self.enum_.is_empty() {
            out.push(format!("enum: {}", self.enum_.join(", ")));
        }
        let b = |word: &str, b: &Bound| {
            let ex = if b.exclusive { " (exclusive)" } else { "" };
            format!("{word} {}{ex}", b.value)
        };
        let mut limits: Vec<String> = [("minimum", &self.minimum), ("maximum", &self.maximum)]
            .into_iter()
            .filter_map(|(w, v)| v.as_ref().map(|v| b(w, v)))
            .collect();
        let counts = [
            ("minLength", self.min_length),
            ("maxLength", self.max_length),
            ("minItems", self.min_items),
            ("maxItems", self.max_items),
            ("minProperties", self.min_properties),
            ("maxProperties", self.max_properties),
        ];
        limits.extend(counts.into_iter().filter_map(|(w, v)| v.map(|v| format!("{w} {v}"))));
        if !limits.is_empty() {
            out.push(limits.join(", "));
        }
        if let Some(p) = &self.pattern {
            out.push(format!("pattern: {p}"));
        }
        if let Some(d) = &self.default {
            out.push(format!("default: {d}"));
        }
        out.extend(self.rules.iter().flat_map(CelRule::lines));
        out
    }

    /// `≥0 ≤10`, `>0`: the numeric bounds, if any.
    fn range(&self) -> Option<String> {
        let lo = self.minimum.as_ref().map(|b| format!("{}{}", if b.exclusive { ">" } else { "≥" }, b.value));
        let hi = self.maximum.as_ref().map(|b| format!("{}{}", if b.exclusive { "<" } else { "≤" }, b.value));
        let parts: Vec<String> = lo.into_iter().chain(hi).collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }

    /// `("len", "1..63")`, `("items", "≤8")`: length, item and property counts.
    fn counts(&self) -> Vec<(&'static str, String)> {
        let span = |lo: Option<u64>, hi: Option<u64>| match (lo, hi) {
            (Some(lo), Some(hi)) => Some(format!("{lo}..{hi}")),
            (Some(lo), None) => Some(format!("≥{lo}")),
            (None, Some(hi)) => Some(format!("≤{hi}")),
            (None, None) => None,
        };
        [
            ("len", span(self.min_length, self.max_length)),
            ("items", span(self.min_items, self.max_items)),
            ("props", span(self.min_properties, self.max_properties)),
        ]
        .into_iter()
        .filter_map(|(w, s)| s.map(|s| (w, s)))
        .collect()
    }

    /// The `x-kubernetes-*` markers, short: `preserve-unknown`, `embedded`,
    /// `list:map[name,port]`, `map:atomic` (int-or-string is in the type).
    fn kube_markers(&self) -> Vec<String> {
        let mut out = vec![];
        if self.preserve_unknown {
            out.push("preserve-unknown".into());
        }
        if self.embedded {
            out.push("embedded".into());
        }
        if let Some(t) = &self.list_type {
            let keys = if self.list_map_keys.is_empty() {
                String::new()
            } else {
                format!("[{}]", self.list_map_keys.join(","))
            };
            out.push(format!("list:{t}{keys}"));
        }
        if let Some(t) = &self.map_type {
            out.push(format!("map:{t}"));
        }
        out
    }
}

/// A bound as the author wrote it: the typed schema keeps bounds as floats (`1.0`), which
/// read wrong on an integer field.
fn number(v: &Value) -> String {
    match v.as_f64() {
        Some(f) if v.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => v.to_string(),
    }
}

/// One field of a flattened schema: its path (`spec.ports[].name`, `spec.labels{}`) and
/// attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRow {
    pub path: String,
    pub attrs: FieldAttrs,
}

/// The children of a schema node: properties (with whether each is required), then list
/// items as `[]` and map values as `{}`. The tree and the flat list both walk this.
pub fn children(schema: &Value) -> Vec<(String, &Value, bool)> {
    let req: BTreeSet<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let mut out: Vec<(String, &Value, bool)> = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v, req.contains(k.as_str())))
        .collect();
    if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
        out.push(("[]".into(), items, false));
    }
    if let Some(values) = schema.get("additionalProperties").filter(|i| i.is_object()) {
        out.push(("{}".into(), values, false));
    }
    out
}

/// Every field under `schema`, depth first, the root itself (path `.`) first.
pub fn fields(schema: &Value) -> Vec<FieldRow> {
    fn walk(path: &str, schema: &Value, required: bool, out: &mut Vec<FieldRow>) {
        out.push(FieldRow { path: path.to_string(), attrs: FieldAttrs::of(schema, required) });
        for (label, child, req) in children(schema) {
            // Items and values hang off their parent without a dot: `ports[]`, `labels{}`.
            let child_path = match (path, label.as_str()) {
                (_, "[]" | "{}") => format!("{path}{label}"),
                (".", _) => label,
                _ => format!("{path}.{label}"),
            };
            walk(&child_path, child, req, out);
        }
    }
    let mut out = vec![];
    walk(".", schema, false, &mut out);
    out
}

/// `describe`'s schema section: per version, one line per field path with its type and
/// attributes, then its CEL rules indented under it.
pub fn describe_lines(crd: &Crd) -> Vec<String> {
    let mut out = vec![];
    for v in &crd.spec.versions {
        let Some(schema) = v.schema.as_ref().and_then(|s| s.open_api_v3_schema.as_ref()) else { continue };
        let Ok(schema) = serde_json::to_value(schema) else { continue };
        out.push(format!("Schema {}:", v.name));
        for f in fields(&schema) {
            let mut attrs = f.attrs.details();
            let rules: Vec<String> = attrs.split_off(attrs.len() - rule_line_count(&f.attrs));
            let type_ = f.attrs.type_text();
            let type_ = if type_.is_empty() { "any".to_string() } else { type_ };
            let rest = if attrs.is_empty() { String::new() } else { format!("  {}", attrs.join("; ")) };
            out.push(format!("  {}  <{type_}>{rest}", f.path));
            out.extend(rules.into_iter().map(|r| format!("      {r}")));
        }
    }
    out
}

fn rule_line_count(a: &FieldAttrs) -> usize {
    a.rules.iter().map(|r| r.lines().len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Value {
        json!({"type": "object", "required": ["engine"],
            "x-kubernetes-validations": [{"rule": "self.replicas <= 5", "message": "at most 5",
                "messageExpression": "'too many: ' + string(self.replicas)", "fieldPath": ".replicas",
                "reason": "FieldValueInvalid"}],
            "properties": {
                "engine": {"type": "string", "enum": ["postgres", "redis"]},
                "storageGB": {"type": "integer", "format": "int32", "minimum": 1.0, "maximum": 1000,
                    "exclusiveMaximum": true, "default": 10},
                "version": {"type": "string", "pattern": "^[0-9.]+$", "minLength": 1, "maxLength": 16,
                    "nullable": true},
                "ports": {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "port": {"x-kubernetes-int-or-string": true},
                "params": {"type": "object", "maxProperties": 4, "x-kubernetes-map-type": "granular",
                    "additionalProperties": {"type": "string"}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                    "x-kubernetes-preserve-unknown-fields": true}}})
    }

    #[test]
    fn short_markers_fit_a_tree_line() {
        let s = spec();
        let m = |k: &str| FieldAttrs::of(&s["properties"][k], false).markers().join(" ");
        assert_eq!(m("engine"), "enum(2)");
        assert_eq!(m("storageGB"), "≥1 <1000 default 10");
        assert_eq!(m("version"), "nullable len 1..16 pattern");
        assert_eq!(m("ports"), "items ≤8 list:map[name]");
        assert_eq!(m("params"), "props ≤4 map:granular");
        assert_eq!(m("template"), "preserve-unknown embedded");
        assert_eq!(FieldAttrs::of(&s["properties"]["port"], false).type_text(), "int-or-string");
        assert_eq!(FieldAttrs::of(&s["properties"]["storageGB"], false).type_text(), "integer int32");
        assert_eq!(FieldAttrs::of(&s, false).markers(), ["CEL×1"]);
    }

    #[test]
    fn details_say_everything_rules_last() {
        let s = spec();
        assert_eq!(
            FieldAttrs::of(&s["properties"]["storageGB"], true).details(),
            ["required", "minimum 1, maximum 1000 (exclusive)", "default: 10"]
        );
        assert_eq!(
            FieldAttrs::of(&s, false).details(),
            [
                "rule: self.replicas <= 5",
                "  message: at most 5",
                "  messageExpression: 'too many: ' + string(self.replicas)",
                "  fieldPath: .replicas",
                "  reason: FieldValueInvalid"
            ]
        );
    }

    #[test]
    fn fields_flatten_with_item_and_value_paths() {
        let paths: Vec<String> =
            fields(&json!({"type": "object", "properties": {"spec": spec()}})).into_iter().map(|f| f.path).collect();
        assert_eq!(
            paths,
            [
                ".",
                "spec",
                "spec.engine",
                "spec.params",
                "spec.params{}",
                "spec.port",
                "spec.ports",
                "spec.ports[]",
                "spec.ports[].name",
                "spec.storageGB",
                "spec.template",
                "spec.version"
            ]
        );
    }
}
