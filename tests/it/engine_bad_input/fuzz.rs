//! Random CRDs with generated CEL rules, random objects and random patches, for the
//! hostile-input test: ordinary shapes mixed with the ones that hurt (long sums, deep
//! nesting, nested comprehensions over unbounded lists, self-copying JSON patches).

use crate::support::crd::CrdBuilder;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

pub struct Fuzz {
    rng: StdRng,
}

/// The fields every generated kind has under `spec`: a list without `maxItems`, two
/// bounded ones, a string, a number and a map.
const FIELDS: [&str; 6] = ["tags", "few", "many", "name", "count", "labels"];

impl Fuzz {
    pub fn new(seed: u64) -> Fuzz {
        Fuzz { rng: StdRng::seed_from_u64(seed) }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.random_range(0..items.len())]
    }

    /// A CRD `things.g<n>.fuzz.example.com` whose spec carries generated rules.
    pub fn crd(&mut self, n: usize) -> Value {
        let rules: Vec<Value> =
            (0..self.rng.random_range(1..=3)).map(|_| json!({"rule": self.rule(), "message": "fuzz"})).collect();
        let spec = json!({
            "type": "object",
            "x-kubernetes-validations": rules,
            "properties": {
                "tags": {"type": "array", "items": {"type": "string"}},
                "few": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 8}},
                "many": {"type": "array", "maxItems": 1000, "items": {"type": "string", "maxLength": 4}},
                "name": {"type": "string"},
                "count": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            }
        });
        let group = format!("g{n}.fuzz.example.com");
        CrdBuilder::new(&group, "Thing").schema(json!({"type": "object", "properties": {"spec": spec}})).build()
    }

    /// One rule: mostly ordinary, sometimes one of the shapes that exhaust a naive
    /// evaluator (sizes up to well past kube's limits).
    pub fn rule(&mut self) -> String {
        match self.rng.random_range(0..10) {
            0 => {
                let terms = *self.pick(&[10, 500, 3_000, 20_000]);
                format!("{} > 0", vec!["1"; terms].join(" + "))
            }
            1 => {
                let depth = *self.pick(&[5, 50, 200, 1_000]);
                format!("{}self.count{} >= 0", "(".repeat(depth), ")".repeat(depth))
            }
            2 => {
                let depth = self.rng.random_range(1..=5);
                let vars = ["a", "b", "c", "d", "e"];
                let mut rule = "true".to_string();
                for v in vars[..depth].iter().rev() {
                    rule = format!("self.tags.all({v}, {rule} && {v} != '')");
                }
                rule
            }
            3 => "self.tags.map(a, self.tags.map(b, a + b)).size() >= 0".into(),
            4 => format!("'{}'.size() > 0", "x".repeat(self.rng.random_range(1..20_000))),
            // Within the static budget, over the runtime one with enough items.
            5 => "self.many.all(a, self.many.all(b, a.size() + b.size() >= 0))".into(),
            _ => self.expression(3),
        }
    }

    /// A small well-typed boolean expression over the spec's fields.
    fn expression(&mut self, depth: u32) -> String {
        if depth == 0 {
            return self
                .pick(&[
                    "self.count >= 0",
                    "size(self.tags) < 10",
                    "self.name.startsWith('a')",
                    "self.few.all(f, f.size() < 8)",
                    "!has(self.labels) || self.labels.all(k, k != '')",
                    "self.tags.exists(t, t == 'x')",
                ])
                .to_string();
        }
        let (a, b) = (self.expression(depth - 1), self.expression(depth - 1));
        match self.rng.random_range(0..3) {
            0 => format!("({a}) && ({b})"),
            1 => format!("({a}) || ({b})"),
            _ => format!("!({a})"),
        }
    }

    /// A Thing with random contents of up to `items` list entries.
    pub fn object(&mut self, name: &str, group: &str, items: usize) -> Value {
        let tags: Vec<String> = (0..self.rng.random_range(0..=items)).map(|i| format!("t{i}")).collect();
        let many: Vec<String> = (0..self.rng.random_range(0..=1000)).map(|i| format!("{}", i % 1000)).collect();
        json!({"apiVersion": format!("{group}/v1"), "kind": "Thing", "metadata": {"name": name},
            "spec": {"tags": tags, "few": ["a"], "many": many, "name": "abc", "count": self.rng.random_range(-5..100),
                "labels": {"k": "v"}}})
    }

    /// A patch and its Content-Type: JSON patches with copies of the spec into itself,
    /// moves and tests at random paths, or merge patches nesting deeply.
    pub fn patch(&mut self) -> (&'static str, String) {
        if self.rng.random_bool(0.5) {
            let ops: Vec<Value> = (0..self.rng.random_range(1..40))
                .map(|i| {
                    let path = format!("/spec/{}", self.pick(&FIELDS));
                    match self.rng.random_range(0..5) {
                        0 => json!({"op": "copy", "from": "/spec", "path": format!("/spec/c{i}")}),
                        1 => json!({"op": "move", "from": path, "path": "/spec/moved"}),
                        2 => json!({"op": "test", "path": path, "value": null}),
                        3 => json!({"op": "remove", "path": path}),
                        _ => json!({"op": "add", "path": "/spec/tags/-", "value": "x".repeat(1000)}),
                    }
                })
                .collect();
            ("application/json-patch+json", Value::Array(ops).to_string())
        } else {
            let depth = *self.pick(&[3, 100, 5_000]);
            let nested = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
            ("application/merge-patch+json", format!(r#"{{"spec":{{"labels":{{"k":"w"}},"deep":{nested}}}}}"#))
        }
    }
}
