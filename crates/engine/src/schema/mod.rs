//! Structural OpenAPI v3 schemas of custom resources: what kube-apiserver does with a
//! CRD version's `openAPIV3Schema` to every object of that version.
//!
//! Two moments, as in apiextensions-apiserver:
//! - **decoding** a request body: [`Schema::check_decode`] refuses what cannot be decoded
//!   (embedded `apiVersion`/`kind` that are not strings, metadata that is not an
//!   `ObjectMeta`), and [`Schema::prune_and_default`] drops unknown fields (returning their
//!   paths), drops non-nullable `null`s, round-trips object metadata and applies
//!   defaults;
//! - **validating** a create, an update or a `/status` update, in kube's order: value
//!   validation ([`Schema::validate_values`], kube-openapi's checks and messages),
//!   embedded resources and list types ([`Schema::validate_structure`]), then the CEL
//!   rules ([`Schema::validate_rules`]), which do not run when an earlier error means the
//!   object does not have the shape the rules expect. On update, unchanged values are
//!   ratcheted and transition rules see `oldSelf`.
//!
//! Object metadata rules shared by every kind live in [`object_meta`], the name grammars
//! in [`names`]. The schema is compiled once per served version ([`Schema::new`]).

pub mod cel;
pub mod cel_alone;
mod cel_invalid;
mod cel_rule;
pub mod celcheck;
mod celconv;
pub mod celcost;
mod celfold;
mod celformat;
mod celkept;
mod cellogic;
mod celmeter;
mod celnet;
mod celoptional;
mod celquantity;
mod celstd;
mod celstrings;
mod celtime;
mod celtypes;
mod celurl;
mod correlate;
mod defaults;
mod embedded;
pub mod fieldpath;
pub mod formats;
mod go_base64;
mod go_pattern;
pub(crate) mod go_regexp;
pub(crate) mod go_time;
pub(crate) mod go_url;
pub mod gofmt;
pub mod label_selector;
mod listtype;
pub mod names;
mod node;
pub mod object_meta;
mod prune;
mod validate;
pub mod warnings;
pub mod webhook_client;

pub use node::Node;
pub use object_meta::{validate_object_meta, validate_object_meta_update};

use crate::field::{ErrorType, FieldError, Path};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps;
use serde_json::Value;
use std::sync::OnceLock;

/// zlib's level 2 (dynamic Huffman codes; level 1 has static ones only): a lazy schema is
/// deflated once per CRD write, and schemas' JSON compresses about tenfold at it.
const SOURCE_LEVEL: u32 = 2;

fn deflated(json: &[u8]) -> Option<Box<[u8]>> {
    use std::io::Write;
    let out = Vec::with_capacity(json.len() / 8 + 64);
    let mut encoder = flate2::write::DeflateEncoder::new(out, flate2::Compression::new(SOURCE_LEVEL));
    encoder.write_all(json).ok()?;
    encoder.finish().ok().map(Vec::into_boxed_slice)
}

fn inflated(source: &[u8]) -> Option<JSONSchemaProps> {
    let mut json = Vec::with_capacity(source.len() * 8);
    std::io::Read::read_to_end(&mut flate2::read::DeflateDecoder::new(source), &mut json).ok()?;
    serde_json::from_slice(&json).ok()
}

/// The message kube appends instead of running the CEL rules on a malformed object.
pub const RULES_NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// Why a `metadata` value does not decode as an `ObjectMeta`, in Go's words (`None`: it
/// does).
pub type MetaError = fn(&Value) -> Option<String>;

/// A compiled structural schema: the root `openAPIV3Schema` of one CRD version.
#[derive(Debug)]
pub struct Schema {
    compiled: OnceLock<Compiled>,
    /// The schema's JSON, deflated, when it is compiled on first use ([`Schema::lazy`]).
    source: Option<Box<[u8]>>,
    /// `spec.preserveUnknownFields`: legacy CRDs keep unknown fields everywhere.
    preserve_unknown_fields: bool,
}

#[derive(Debug)]
struct Compiled {
    root: Node,
    has_rules: bool,
}

impl Compiled {
    fn new(props: &JSONSchemaProps) -> Compiled {
        let root = Node::compile(props);
        let has_rules = root.has_rules();
        Compiled { root, has_rules }
    }
}

impl Schema {
    /// Compiles a schema (regexes, formats and CEL rules are prepared here, once).
    pub fn new(props: &JSONSchemaProps) -> Schema {
        Schema { compiled: OnceLock::from(Compiled::new(props)), source: None, preserve_unknown_fields: false }
    }

    /// Compiles a schema as kube's `ValidateDefaults` builds its validator for a default at
    /// registration: formats as written (none stripped), int-or-string untyped, and rules
    /// type-checked too (the default is validated before the rules' own refusals are reported).
    pub fn for_defaults(props: &JSONSchemaProps) -> Schema {
        let mut compiled = Compiled::new(props);
        compiled.root.as_default_validator();
        compiled.root.type_check_rules(props);
        Schema { compiled: OnceLock::from(compiled), source: None, preserve_unknown_fields: false }
    }

    /// A schema compiled when it is first used. A served kind's compiled schema takes
    /// tens of times its JSON (a node per property, regexes, CEL programs); with thousands
    /// of CRDs installed, most kinds are never used, and their schemas stay JSON, deflated:
    /// held as text, they took as much memory as the stored CRDs themselves.
    pub fn lazy(props: &JSONSchemaProps) -> Schema {
        match serde_json::to_vec(props) {
            Ok(json) => Schema::lazy_json(&json),
            Err(_) => Schema::new(props),
        }
    }

    /// [`Schema::lazy`] from the schema's JSON, which must decode as a `JSONSchemaProps`
    /// (else it compiles as the empty schema): a CRD published from its stored JSON has
    /// its schemas typed only when they are first used.
    pub fn lazy_json(json: &[u8]) -> Schema {
        match deflated(json) {
            Some(source) => Schema { compiled: OnceLock::new(), source: Some(source), preserve_unknown_fields: false },
            None => Schema::new(&serde_json::from_slice(json).unwrap_or_default()),
        }
    }

    /// Keeps unknown fields, as a CRD with `spec.preserveUnknownFields: true` does.
    pub fn preserving_unknown_fields(mut self, preserve: bool) -> Schema {
        self.preserve_unknown_fields = preserve;
        self
    }

    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            // The JSON was written from a `JSONSchemaProps`, so it reads back; should it not,
            // an empty schema (which accepts anything) is no panic.
            let props = self.source.as_deref().and_then(inflated).unwrap_or_default();
            Compiled::new(&props)
        })
    }

    /// The schema as written, typed again from its source; `None` for a schema compiled
    /// from props directly, which keeps no source.
    pub fn props(&self) -> Option<JSONSchemaProps> {
        self.source.as_deref().and_then(inflated)
    }

    /// Whether the schema has been compiled (a lazy one is, once first used).
    pub fn is_compiled(&self) -> bool {
        self.compiled.get().is_some()
    }

    /// The compiled root node.
    pub fn root(&self) -> &Node {
        &self.compiled().root
    }

    /// Decode-time refusals, as the message kube answers a 400 with: an embedded
    /// resource's `apiVersion`/`kind` that is not a string, or metadata (root or embedded)
    /// that does not decode as an `ObjectMeta` (`meta_error`, which knows Go's types).
    pub fn check_decode(&self, obj: &Value, meta_error: MetaError) -> Result<(), String> {
        if let Some(e) = obj.get("metadata").and_then(meta_error) {
            return Err(e);
        }
        embedded::check(&Path::default(), obj, Some(self.root()), meta_error).map_err(|e| e.to_string())
    }

    /// What kube does to a request body while decoding it: prune unknown fields, drop
    /// non-nullable `null`s, round-trip object metadata (dropping unknown metadata fields)
    /// and apply defaults. Returns every dropped unknown field's path (`spec.foo`,
    /// `metadata.bar`), sorted. Idempotent.
    pub fn prune_and_default(&self, obj: &mut Value) -> Vec<String> {
        self.coerce(obj, true)
    }

    /// [`Schema::prune_and_default`] of an object kube converts rather than decodes (a
    /// server-side apply's merge): its `null`s stay for defaulting and validation.
    pub fn prune_and_default_keeping_nulls(&self, obj: &mut Value) -> Vec<String> {
        self.coerce(obj, false)
    }

    /// The unknown fields come in kube's order, each group sorted: the object's own
    /// metadata's, then the pruned ones, then those of embedded resources' metadata
    /// (`metadata.x`, `aa`, `spec.zz`, `spec.e.metadata.x`).
    fn coerce(&self, obj: &mut Value, drop_nulls: bool) -> Vec<String> {
        let mut unknown = Vec::new();
        if let Some(meta) = obj.get_mut("metadata") {
            object_meta::coerce(meta, "metadata", &mut unknown);
        }
        unknown.sort();
        if !self.preserve_unknown_fields {
            let mut pruned = prune::prune(obj, self.root());
            pruned.sort();
            unknown.extend(pruned);
            if drop_nulls {
                prune::prune_non_nullable_nulls(obj, Some(self.root()));
            }
        }
        let mut embedded = Vec::new();
        embedded::coerce(&Path::default(), obj, Some(self.root()), &mut embedded);
        embedded.sort();
        unknown.extend(embedded);
        defaults::default(obj, self.root());
        unknown
    }

    /// What kube's schema coercer does to an object converted to this schema's version (on
    /// its way to storage, or read at another version than stored): prune unknown fields
    /// and drop non-nullable `null`s, reporting nothing.
    pub fn prune_converted(&self, obj: &mut Value) {
        if !self.preserve_unknown_fields {
            prune::prune(obj, self.root());
            prune::prune_non_nullable_nulls(obj, Some(self.root()));
        }
    }

    /// Applies the schema's defaults only (what kube also does when reading stored objects).
    pub fn default(&self, obj: &mut Value) {
        defaults::default(obj, self.root());
    }

    /// Value validation of the whole object (kube-openapi's checks); `old` ratchets
    /// unchanged values on update.
    pub fn validate_values(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        validate::validate(self.root(), "", obj, old).errors
    }

    /// kube's `ValidateDefaults` at the node this schema was built from, for its `default`:
    /// whether pruning would change the value, then its value errors, or when there are
    /// none its rule errors; fields are relative to the default (`<nil>` for itself).
    /// The rules run as kube runs them: on an update from the default to itself (transition
    /// rules see it as `oldSelf`), then, when that passes, on a create of it.
    pub fn default_errors(&self, value: &Value) -> (bool, Vec<FieldError>) {
        let mut pruned = value.clone();
        let has_unknown = !prune::prune(&mut pruned, self.root()).is_empty();
        // kube checks embedded resources (apiVersion, kind, metadata) before the values,
        // and validates the values only when they pass.
        // A default is JSON the CRD's decoder read: its metadata are maps, as kube's are.
        let embedded = embedded::validate(&Path::default(), value, Some(self.root()), |_| None);
        if !embedded.is_empty() {
            return (has_unknown, embedded);
        }
        let errs = validate::validate(self.root(), "", value, None).errors;
        if !errs.is_empty() {
            return (has_unknown, errs);
        }
        // kube's `ValidateDefaults` passes the CEL validator no correlation: nothing ratchets.
        let unchanged = self.validate_rules(value, Some(value), &[], false);
        if !unchanged.is_empty() {
            return (has_unknown, unchanged);
        }
        (has_unknown, self.validate_rules(value, None, &[], false))
    }

    /// Value problems of `.status` alone, as kube's status strategy finds them: validated
    /// with the status schema as the root (messages name `replicas in body`), reported
    /// under `status` (`status.replicas`). Nothing ratchets: kube 1.32's status strategy
    /// gives its validator no old object to correlate with.
    pub fn validate_status_values(&self, obj: &Value) -> Vec<FieldError> {
        let (Some(node), Some(status)) = (self.root().properties.get("status"), obj.get("status")) else {
            return Vec::new();
        };
        let mut errs = validate::validate(node, "", status, None).errors;
        for e in &mut errs {
            e.field = if e.field == "<nil>" { "status".into() } else { format!("status.{}", e.field) };
        }
        errs
    }

    /// Embedded resources' type and object metadata (`meta_error` says why a metadata is no
    /// `ObjectMeta`), and `x-kubernetes-list-type` uniqueness. On update the list rules only
    /// apply when the old object met them.
    pub fn validate_structure(&self, obj: &Value, old: Option<&Value>, meta_error: MetaError) -> Vec<FieldError> {
        let mut errs = embedded::validate(&Path::default(), obj, Some(self.root()), meta_error);
        let lists = |v: &Value| v.as_object().map(|o| listtype::validate(&Path::default(), self.root(), o));
        let old_ok = old.is_none_or(|o| lists(o).unwrap_or_default().is_empty());
        if old_ok {
            errs.extend(lists(obj).unwrap_or_default());
        }
        errs
    }

    /// The CEL rules, unless `prior` holds an error that makes them meaningless (a wrong
    /// type, a missing required field, an unsupported enum value, a size limit): then the
    /// one error kube reports instead.
    pub fn validate_rules(
        &self,
        obj: &Value,
        old: Option<&Value>,
        prior: &[FieldError],
        ratcheting: bool,
    ) -> Vec<FieldError> {
        if !self.compiled().has_rules {
            return vec![];
        }
        let blocking = prior.iter().any(|e| {
            matches!(
                e.error_type,
                ErrorType::NotSupported
                    | ErrorType::Required
                    | ErrorType::TooLong
                    | ErrorType::TooMany
                    | ErrorType::TypeInvalid
            )
        });
        if blocking {
            return vec![gofmt::with_value(ErrorType::Invalid, "<nil>", &Value::Null, RULES_NOT_CHECKED.into())];
        }
        let path = Path::default();
        let ratchet = match old {
            _ if !ratcheting => cel::Ratchet::Off,
            Some(o) if correlate::equal(Some(self.root()), obj, o) => cel::Ratchet::Unchanged,
            _ => cel::Ratchet::Changed,
        };
        let site = cel::Site { path: &path, value: obj, old, resource_root: true, ratchet };
        cel::validate(self.root(), &site)
    }

    /// Every schema problem with a new object: values, structure, then rules.
    pub fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_values(obj, None);
        errs.extend(self.validate_structure(obj, None, |_| None));
        let rules = self.validate_rules(obj, None, &errs, false);
        errs.extend(rules);
        errs
    }

    /// Every schema problem with an update from `old` to `new` (ratcheting unchanged
    /// values, transition rules with `oldSelf`).
    pub fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = self.validate_values(new, Some(old));
        errs.extend(self.validate_structure(new, Some(old), |_| None));
        let rules = self.validate_rules(new, Some(old), &errs, true);
        errs.extend(rules);
        errs
    }
}

#[cfg(test)]
mod tests;
