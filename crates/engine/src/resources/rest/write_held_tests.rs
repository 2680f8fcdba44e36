//! [`Rest::update_held`] against [`Rest::update`]: the same answer and the same stored
//! bytes, whether the held object is still what is stored or not.

use super::*;
use crate::registry::fixtures::{at, widget};
use crate::resources::crds::CrdStrategy;
use crate::resources::generate_name::RANDOM;
use crate::store::{KeyValue, LocalStore, Store};
use serde_json::json;

const KEY: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.stable.example.com";
const NAME: &str = "widgets.stable.example.com";

/// A CRD as stored by this engine's create (answered, then read back).
fn created() -> Value {
    let mut crd = serde_json::to_value(widget().build()).expect("JSON");
    crd["metadata"]["uid"] = json!("0b0e7c0c-0000-4000-8000-000000000001");
    crd["metadata"]["creationTimestamp"] = json!("2026-11-27T00:00:00Z");
    crd["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Update",
        "apiVersion": "apiextensions.k8s.io/v1", "time": "2026-11-27T00:00:00Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {"f:group": {}}}}]);
    crd["status"] = json!({"acceptedNames": {"plural": "", "kind": ""}, "conditions": null, "storedVersions": ["v1"]});
    crd
}

/// Stored bytes this engine would not have written: whole floats, an unknown field, a
/// schema `null` the typed round trip drops.
fn from_elsewhere() -> Value {
    let mut crd = created();
    let spec = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    spec["properties"]["size"]["maximum"] = json!(10.0);
    spec["description"] = Value::Null;
    crd["spec"]["bogus"] = json!({"a": 1});
    crd
}

/// What the CRD controller sends: the stored object with a new status.
fn with_status(stored: &Value) -> Value {
    let mut body = stored.clone();
    body["status"] = json!({"acceptedNames": {"plural": "widgets", "kind": "Widget", "singular": "widget",
        "listKind": "WidgetList", "shortNames": ["wd"]}, "storedVersions": ["v1"],
        "conditions": [{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
            "message": "no conflicts found", "lastTransitionTime": "2026-11-27T00:00:01Z"}]});
    body
}

/// Two stores holding `bytes` at the same revision (after `writes` writes of it).
async fn stores(bytes: &[u8], writes: usize) -> [LocalStore; 2] {
    let stores = [LocalStore::memory(), LocalStore::memory()];
    for store in &stores {
        let mut kv = store.create(KEY, bytes.to_vec().into()).await.expect("create");
        for _ in 1..writes {
            kv = store.update(KEY, bytes.to_vec().into(), Some(kv.mod_revision)).await.expect("update");
        }
    }
    stores
}

async fn stored(store: &LocalStore) -> KeyValue {
    store.get(KEY).await.expect("get").expect("stored")
}

/// Writes `body` both ways; `held` is taken from the first store as read at `revision`.
async fn both_ways(
    bytes: &[u8],
    body: impl Fn(&Value) -> Value,
    held_from: Option<Value>,
    writes: usize,
) -> Result<Value, ApiError> {
    let [full, fast] = stores(bytes, writes).await;
    let strategy = CrdStrategy::default();
    let rest = |store| Rest {
        store,
        strategy: &strategy,
        now: at(60),
        scale: None,
        names: &RANDOM,
        admission: &crate::resources::admit::NoAdmission,
    };
    let (full_rest, fast_rest) = (rest(&full), rest(&fast));
    let kv = stored(&full).await;
    let read = crate::meta::from_stored(&kv);
    // Held at the first revision when the store moved on since.
    let (held, revision) = match held_from {
        Some(older) => (older, kv.create_revision),
        None => (read.clone(), kv.mod_revision),
    };
    let opts = WriteOptions::internal();
    let sent = body(&read);
    let expected = full_rest.update(None, NAME, sent.clone(), Subresource::Status, &opts).await;
    let got =
        fast_rest.update_held(None, NAME, sent, Held { object: &held, revision }, Subresource::Status, &opts).await;
    assert_eq!(format!("{got:?}"), format!("{expected:?}"));
    assert_eq!(stored(&fast).await, stored(&full).await);
    expected
}

#[tokio::test]
async fn a_held_status_write_answers_and_stores_what_a_full_one_does() {
    for crd in [created(), from_elsewhere()] {
        let bytes = serde_json::to_vec(&crd).expect("JSON");
        // The controller's write.
        let written = both_ways(&bytes, with_status, None, 1).await.expect("written");
        assert_eq!(written["status"]["acceptedNames"]["kind"], "Widget");
        // Another spec sent: the stored one wins.
        let other_spec = |stored: &Value| {
            let mut body = with_status(stored);
            body["spec"]["names"]["shortNames"] = json!(["other"]);
            body
        };
        assert!(both_ways(&bytes, other_spec, None, 1).await.is_ok());
        // Nothing new: no write.
        assert!(both_ways(&bytes, Value::clone, None, 1).await.is_ok());
        // A uid that is not the stored one: refused.
        let forged = |stored: &Value| {
            let mut body = with_status(stored);
            body["metadata"]["uid"] = json!("forged");
            body
        };
        assert!(both_ways(&bytes, forged, None, 1).await.is_err());
        // Held from an older revision, with another status: the stored object is read.
        assert!(both_ways(&bytes, with_status, Some(with_status(&crd)), 2).await.is_ok());
        // Sent at the older revision too: the conflict.
        let stale = |stored: &Value| {
            let mut body = with_status(stored);
            body["metadata"]["resourceVersion"] = json!("1");
            body
        };
        let conflict = both_ways(&bytes, stale, Some(crd.clone()), 2).await;
        assert_eq!(conflict.map_err(|e| e.code), Err(409));
    }
}
