//! kube-apiserver 1.32.13's answers on the cost of rules at registration, asked of the
//! oracle with exactly these schemas (the `spec` of a one-version CRD).

use crate::field::Path;
use crate::registry::fixtures::schema;
use crate::registry::schema_rules::{SchemaOptions, validate_validation};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceValidation;
use serde_json::{Value, json};

const RULE: &str = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations";
const TRY: &str = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";

/// The errors kube gives a CRD whose `spec` is `spec`.
fn refusals(spec: Value) -> Vec<String> {
    let opts = SchemaOptions {
        require_structural: true,
        require_valid_property_type: true,
        require_atomic_set_type: true,
        require_map_list_keys_map_set_validation: true,
        suppress_expression_cost: false,
    };
    let root = schema(json!({"type": "object", "properties": {"spec": spec}}));
    let validation = CustomResourceValidation { open_api_v3_schema: Some(root) };
    let errs = validate_validation(Some(&validation), false, opts, &Path::root("spec").child("validation"));
    errs.iter().map(ToString::to_string).collect()
}

/// `spec` with a list of strings `tags` (with `list` and `item` keywords) and `rules`.
fn tags(list: Value, item: Value, rules: &[&str]) -> Value {
    let mut tags = json!({"type": "array", "items": {"type": "string"}});
    tags.as_object_mut().expect("object").extend(list.as_object().cloned().unwrap_or_default());
    tags["items"].as_object_mut().expect("object").extend(item.as_object().cloned().unwrap_or_default());
    let rules: Vec<Value> = rules.iter().map(|r| json!({"rule": r})).collect();
    json!({"type": "object", "properties": {"tags": tags}, "x-kubernetes-validations": rules})
}

fn over_rule_budget(i: usize, factor: &str) -> String {
    format!("{RULE}[{i}].rule: Forbidden: estimated rule cost exceeds budget by factor of {factor} {TRY}")
}

fn contributed(i: usize) -> String {
    format!(
        "{RULE}[{i}].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
    )
}

fn over_schema_budget(factor: &str) -> String {
    format!(
        "spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of {factor} {TRY}"
    )
}

const TRIPLE: &str = "self.tags.all(a, self.tags.all(b, self.tags.all(c, a == b || b == c || a != c)))";

/// Issue 25: accepted before, and its first evaluation took seconds of CPU per KiB.
#[test]
fn a_triple_nested_all_over_an_unbounded_list_is_over_both_budgets() {
    let got = refusals(tags(json!({}), json!({}), &[TRIPLE]));
    assert_eq!(got, [over_rule_budget(0, "more than 100x"), contributed(0), over_schema_budget("more than 100x")]);
}

/// Issue 25: accepted before, and its first evaluation overflowed a stack.
#[test]
fn a_3000_term_sum_is_refused_by_the_parsers_depth_limit() {
    let rule = format!("{} > 0", vec!["1"; 3000].join("+"));
    let got = refusals(json!({"type": "object", "x-kubernetes-validations": [{"rule": rule}]}));
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].starts_with(&format!("{RULE}[0].rule: Invalid value: apiextensions.ValidationRule{{Rule:\"1+1+1+")));
    assert!(got[0].ends_with("}: compilation failed: ERROR: <input>:-1:0: max recursion depth exceeded"), "{}", got[0]);
}

/// What maxItems and maxLength do to nested comprehensions.
#[test]
fn bounds_on_lists_and_strings_bring_rules_within_budget() {
    let nested = "self.tags.all(a, self.tags.all(b, a == b))";
    let none: [String; 0] = [];
    assert_eq!(refusals(tags(json!({}), json!({}), &["self.tags.all(a, a.size() < 10)"])), none);
    assert_eq!(refusals(tags(json!({}), json!({}), &["self.tags.all(a, a == 'x')"])), none);
    assert_eq!(
        refusals(tags(json!({}), json!({}), &[nested])),
        [over_rule_budget(0, "more than 100x"), contributed(0), over_schema_budget("more than 100x")]
    );
    assert_eq!(refusals(tags(json!({"maxItems": 10}), json!({}), &[nested])), [over_rule_budget(0, "3.1x")]);
    assert_eq!(refusals(tags(json!({"maxItems": 10}), json!({"maxLength": 20}), &[nested])), none);
    assert_eq!(
        refusals(tags(json!({"maxItems": 10}), json!({}), &[TRIPLE])),
        [over_rule_budget(0, "94.4x"), contributed(0), over_schema_budget("9.4x")]
    );
    assert_eq!(refusals(tags(json!({"maxItems": 10}), json!({"maxLength": 20}), &[TRIPLE])), none);
}

/// A rule on list items runs once per item: its cost is multiplied by maxItems, or by as
/// many items as fit in a request.
#[test]
fn rules_under_lists_cost_once_per_item() {
    let items = |list: Value, item: Value| {
        let mut s = json!({"type": "string", "x-kubernetes-validations": [{"rule": "self.matches('^a+$')"}]});
        s.as_object_mut().expect("object").extend(item.as_object().cloned().unwrap_or_default());
        let mut l = json!({"type": "array", "items": s});
        l.as_object_mut().expect("object").extend(list.as_object().cloned().unwrap_or_default());
        refusals(json!({"type": "object", "properties": {"l": l}}))
    };
    let at = "spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-validations[0].rule";
    let none: [String; 0] = [];
    assert_eq!(
        items(json!({}), json!({})),
        [
            format!("{at}: Forbidden: estimated rule cost exceeds budget by factor of more than 100x {TRY}"),
            format!(
                "{at}: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
            ),
            over_schema_budget("more than 100x"),
        ]
    );
    assert_eq!(items(json!({}), json!({"maxLength": 10})), none);
    assert_eq!(
        items(json!({"maxItems": 100}), json!({})),
        [format!("{at}: Forbidden: estimated rule cost exceeds budget by factor of 3.1x {TRY}")]
    );
}

/// Twelve rules each within their budget, 9,006,003 each: over the schema's by 8%.
#[test]
fn the_schema_total_names_the_four_costliest_rules() {
    let rule = "self.tags.all(a, self.tags.all(b, a == b || a != b))";
    let got = refusals(tags(json!({"maxItems": 1000}), json!({"maxLength": 2}), &[rule; 12]));
    let want: Vec<String> = (0..4).map(contributed).chain([over_schema_budget("1.080720x")]).collect();
    assert_eq!(got, want);
}

/// `string()` and `bytes()` of a dyn value (int-or-string) keep every overload: the result
/// has the size of the value, so `quantity(string(self.q))` is within budget, and the cost
/// under a list is the traversal's (the oracle's answers).
#[test]
fn conversions_of_dyn_values_are_sized_by_the_value() {
    let quantity = json!({"type": "object", "properties": {"q": {"x-kubernetes-int-or-string": true}},
        "x-kubernetes-validations": [
            {"rule": "quantity(string(self.q)).isGreaterThan(quantity('1'))"},
            {"rule": "isQuantity(string(self.q)) && bytes(self.q).size() > 0"}]});
    assert_eq!(refusals(quantity), Vec::<String>::new());
    for (n, factor) in [(20, "1.9x"), (60, "5.7x")] {
        let list = json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": n,
            "items": {"x-kubernetes-int-or-string": true, "maxLength": 1000}}},
            "x-kubernetes-validations": [{"rule": "self.l.all(x, string(x).matches('^a+b+c$'))"}]});
        assert_eq!(refusals(list), [over_rule_budget(0, factor)], "maxItems {n}");
    }
}
