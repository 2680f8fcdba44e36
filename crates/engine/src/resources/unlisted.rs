//! Objects stored at a version their CRD no longer lists.
//!
//! A version leaves a CRD's `spec.versions` once `status.storedVersions` no longer names it,
//! whatever is still stored at it. kube keeps such objects in etcd as they are, and its
//! converter refuses to convert from a version the CRD does not list (served or not): each
//! read or write of one is a bare 500, `request to convert CR from an invalid group/version:
//! <group>/<version>`, object by object — a list fails at the first one it reads (a page that
//! ends before it does not), another object reads and writes as ever. Listing the version
//! again serves them all again.
//!
//! kube's watch cache of the kind lists every object to start, fails likewise, and retries
//! forever: it never becomes ready. 1.32's resilient initialization then answers every watch,
//! and every list the cache would serve, with a 429 (`storage is (re)initializing`), but for
//! a list with a limit and no selector, which it hands to etcd (see [`ListPlan::unready`]).
//!
//! [`ListPlan::unready`]: super::list_plan::ListPlan::unready

use super::rest::Rest;
use crate::representation::raw;
use crate::status::ApiError;
use crate::store::{KeyValue, ListOptions};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The `group/version`s a CRD lists, served or not: those kube's converter converts from.
#[derive(Debug, Clone, Default)]
pub struct Listed {
    versions: Arc<[Arc<str>]>,
    /// Set once no object of the kind was found stored at a version the CRD does not list.
    /// None is ever written at one (writes store at the storage version), so it stays set
    /// while the CRD is as it is; a change of the CRD builds its kinds anew.
    cache_ready: Arc<AtomicBool>,
}

impl Listed {
    /// The versions `crd` lists.
    pub fn of(crd: &CustomResourceDefinition) -> Self {
        Listed::new(crd.spec.versions.iter().map(|v| format!("{}/{}", crd.spec.group, v.name)))
    }

    pub fn new(versions: impl IntoIterator<Item = String>) -> Self {
        Listed { versions: versions.into_iter().map(Arc::from).collect(), cache_ready: Arc::default() }
    }

    /// Every listed `group/version`: what kube's converter converts to.
    pub fn names(&self) -> Vec<String> {
        self.versions.iter().map(|v| v.to_string()).collect()
    }

    /// Whether `api_version` is listed.
    pub fn lists(&self, api_version: &str) -> bool {
        self.versions.iter().any(|v| **v == *api_version)
    }

    /// Whether the JSON string `raw` (a stored `apiVersion`) is listed, unparsed.
    pub fn lists_raw(&self, raw: &[u8]) -> bool {
        self.versions.iter().any(|v| raw::is_string(raw, v))
    }

    /// kube's refusal of an object stored at `api_version`, if the CRD does not list it (an
    /// object without an `apiVersion` is left to the decoding that follows).
    pub fn check(&self, api_version: Option<&str>) -> Result<(), ApiError> {
        match api_version {
            Some(v) if !self.lists(v) => Err(refused(v)),
            _ => Ok(()),
        }
    }

    /// kube's refusal of the first of `items` (stored objects, in key order) stored at a
    /// version the CRD does not list: what a list of them fails with.
    pub fn first_refused<'a>(&self, items: impl IntoIterator<Item = &'a KeyValue>) -> Option<ApiError> {
        items.into_iter().find_map(|kv| {
            let at = raw::get(&kv.value, "apiVersion")?;
            (!self.lists_raw(at)).then(|| refused(&raw::string(at).unwrap_or_default()))
        })
    }
}

/// What kube's converter says of an object stored at a version its CRD does not list: a
/// plain Go error, so a 500 without a reason.
pub fn refused(api_version: &str) -> ApiError {
    ApiError::new(500, "", format!("request to convert CR from an invalid group/version: {api_version}"))
}

/// kube's answer from a watch cache that is not ready.
pub fn cache_not_ready() -> ApiError {
    ApiError::too_many_requests("storage is (re)initializing", 1)
}

impl Rest<'_> {
    /// Whether kube's watch cache of this kind would be ready: not while any object of the
    /// kind, in any namespace, is stored at a version its CRD does not list. Looked for
    /// until none is found, then no more (see [`Listed`]'s `cache_ready`).
    pub(crate) async fn cache_ready(&self) -> Result<bool, ApiError> {
        let Some(listed) = self.strategy.version_conversion().map(|v| &v.listed) else { return Ok(true) };
        if listed.cache_ready.load(Ordering::Acquire) {
            return Ok(true);
        }
        let all = ListOptions { cached: true, ..Default::default() };
        let page =
            self.store.list(&self.strategy.info().prefix(), &all).await.map_err(|e| ApiError::storage_read(&e))?;
        let ready = listed.first_refused(&page.items).is_none();
        if ready {
            listed.cache_ready.store(true, Ordering::Release);
        }
        Ok(ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(key: &str, api_version: &str) -> KeyValue {
        let value = format!(r#"{{"apiVersion":"{api_version}","kind":"T","metadata":{{"name":"{key}"}}}}"#);
        KeyValue { key: key.into(), value: value.into_bytes().into(), create_revision: 1, mod_revision: 1 }
    }

    #[test]
    fn an_object_at_a_version_the_crd_no_longer_lists_is_refused_as_kube_words_it() {
        let listed = Listed::new(["g/v2".to_string(), "g/v3".to_string()]);
        assert!(listed.check(Some("g/v3")).is_ok());
        assert!(listed.check(None).is_ok(), "left to the decoder");
        let e = listed.check(Some("g/v1")).expect_err("refused");
        assert_eq!((e.code, e.reason.as_str()), (500, ""));
        assert_eq!(e.message, "request to convert CR from an invalid group/version: g/v1");
        let items = [kv("a", "g/v2"), kv("b", "g/v0"), kv("c", "g/v1")];
        let first = listed.first_refused(&items).expect("b is refused");
        assert_eq!(first.message, "request to convert CR from an invalid group/version: g/v0");
        assert!(listed.first_refused(&items[..1]).is_none());
    }

    /// The look at `apiVersion` that decides whether a stored object is decoded also sends
    /// one at an unlisted version to be refused, schema or not; one at the served version
    /// passes as stored.
    #[test]
    fn a_codec_refuses_what_it_reads_at_an_unlisted_version_and_passes_the_rest() {
        let versions = super::super::VersionConversion {
            served: "g/v2".into(),
            storage: "g/v2".into(),
            served_schema: None,
            storage_schema: None,
            stored_schemas: Vec::new().into(),
            listed: Listed::new(["g/v2".to_string()]),
            webhook: None,
        };
        let codec = super::super::Codec { versions: Some(versions), ..Default::default() };
        let (old, new) = (kv("o", "g/v1"), kv("n", "g/v2"));
        assert!(codec.decodes_item(&old) && !codec.decodes_item(&new));
        assert_eq!(codec.read(&old).map_err(|e| e.code), Err(500));
        assert_eq!(codec.read(&new).expect("listed")["metadata"]["resourceVersion"], "1");
    }
}
