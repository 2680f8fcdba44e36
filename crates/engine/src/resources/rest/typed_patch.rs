//! How kube decodes the JSON a merge or JSON patch made of a typed (built-in) object,
//! where that differs from decoding a body.
//!
//! kube decodes the patched JSON into the endpoint's internal kind with the `apiVersion`
//! and `kind` it names. One the scheme cannot decode (no object, an `apiVersion` or
//! `kind` that is no string, an unknown kind at its version, another kind) is a 422 on
//! `patch` quoting the decoder's error, where a body's is a 400.
//! Without an `apiVersion` the decoder has no version to convert from and fills the
//! internal struct itself, whose fields have no JSON names: only `kind`, `apiVersion` and
//! the embedded ObjectMeta's fields (at the top level) are known, so `metadata` and the
//! kind's own fields are unknown fields, and the object has no name.

use super::options::WriteOptions;
use super::{Rest, patch_invalid, report_strict};
use crate::resources::builtin::types::{GoStruct, OBJECT_META};
use crate::status::ApiError;
use serde_json::Value;

impl Rest<'_> {
    /// What kube's decoding of `patched`, a typed kind's, refuses or reports first
    /// (`strict`: the patch's own strict errors; `show`: the patched JSON as kube quotes it).
    pub(super) fn decode_typed_patch(
        &self,
        patched: &Value,
        kind: &'static GoStruct,
        name: &str,
        strict: &[String],
        opts: &WriteOptions,
        show: &dyn Fn(&Value) -> String,
    ) -> Result<(), ApiError> {
        if !crate::resources::builtin::scheme::holds(self.info()) {
            return Ok(());
        }
        let undecodable = crate::resources::go_decode::interpret_error(patched)
            .or_else(|| crate::resources::builtin::scheme::undecodable(patched, self.info()));
        if let Some(why) = undecodable {
            return Err(patch_invalid(&show(patched), &why));
        }
        let versioned = patched.get("apiVersion").and_then(Value::as_str).is_some_and(|v| !v.is_empty());
        // An object naming itself at the top level decodes further; left to the body's path.
        let Some(map) = patched.as_object().filter(|m| !versioned && !m.contains_key("name")) else {
            return Ok(());
        };
        let mut unknown: Vec<&String> = map.keys().filter(|key| !internal_field(kind, key)).collect();
        unknown.sort();
        let mut errors = strict.to_vec();
        errors.extend(unknown.into_iter().map(|key| format!("unknown field {key:?}")));
        report_strict(errors, opts, |why| patch_invalid(&show(patched), why))?;
        Err(ApiError::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        )))
    }
}

/// Whether the internal struct of `kind` has a field `key` decodes into: its type meta, an
/// ObjectMeta field (embedded), or one of its own by Go name (`Data`).
fn internal_field(kind: &GoStruct, key: &str) -> bool {
    let go_name = |json: &str| {
        let mut chars = json.chars();
        chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
    };
    matches!(key, "kind" | "apiVersion")
        || (OBJECT_META.get(key).is_some() && key != "metadata")
        || key.starts_with(|c: char| c.is_ascii_uppercase()) && kind.fields.iter().any(|f| go_name(f.json) == key)
}
