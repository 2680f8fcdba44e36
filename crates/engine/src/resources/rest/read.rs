//! The reading verbs: get, list and watch (the listing itself is
//! [`listing`](crate::resources::listing)'s).

use super::Rest;
use super::options::{ListQuery, WatchItem};
use crate::status::ApiError;
use crate::store::KeyValue;
use futures::stream::BoxStream;
use serde_json::Value;

impl Rest<'_> {
    /// GET one object.
    pub async fn get(&self, namespace: Option<&str>, name: &str) -> Result<Value, ApiError> {
        self.read(&self.get_stored(namespace, name).await?)
    }

    /// GET one object at the request's `resourceVersion`, as kube reads it: none or `0` as
    /// it is now; another one not older than that revision, waiting (bounded) for the
    /// cache to reach it, then 504 `Too large resource version`; one that is no number 500.
    pub async fn get_at(&self, namespace: Option<&str>, name: &str, rv: Option<&str>) -> Result<Value, ApiError> {
        if let Some(rv) = crate::resources::list_plan::cache_rv(rv)? {
            self.wait_fresh(rv).await?;
        }
        self.get(namespace, name).await
    }

    /// [`Rest::get`] as stored, undecoded (for a read of one field).
    pub async fn get_stored(&self, namespace: Option<&str>, name: &str) -> Result<KeyValue, ApiError> {
        self.store
            .get(&self.info().key(namespace, name))
            .await
            .map_err(|e| self.read_error(e, name))?
            .ok_or_else(|| ApiError::not_found(&self.info().group_resource(), name))
    }

    /// A failed read of one object: an unavailable store is kube's read timeout.
    fn read_error(&self, e: crate::store::StoreError, name: &str) -> ApiError {
        match e {
            crate::store::StoreError::Unavailable(_) => ApiError::storage_read(&e),
            e => self.store_error(e, name),
        }
    }

    /// [`Rest::get_stored`] from the store's watch cache (see [`Store::get_cached`]), for the
    /// reads kube serves from its informers.
    ///
    /// [`Store::get_cached`]: crate::store::Store::get_cached
    pub async fn get_cached(&self, namespace: Option<&str>, name: &str) -> Result<Option<KeyValue>, ApiError> {
        let key = self.info().key(namespace, name);
        self.store.get_cached(&key).await.map_err(|e| self.read_error(e, name))
    }

    /// GET a list: selectors, `limit` and `continue` over one consistent snapshot (see
    /// [`Rest::list_raw`] for the stored bytes without decoding).
    pub async fn list(&self, namespace: Option<&str>, q: &ListQuery) -> Result<Value, ApiError> {
        let info = self.info();
        Ok(self.list_raw(namespace, q).await?.to_value(&info.api_version(), &info.list_kind))
    }

    /// WATCH: the current objects first as ADDED (without a resourceVersion, or with
    /// `sendInitialEvents=true`), then every change; from a resourceVersion, every change
    /// after it (an ERROR event with 410 if too old). See [`Rest::watch_items`].
    pub async fn watch(
        &self,
        namespace: Option<&str>,
        q: &ListQuery,
    ) -> Result<BoxStream<'static, WatchItem>, ApiError> {
        self.watch_items(namespace, q).await
    }
}
