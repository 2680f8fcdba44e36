//! Paging with selectors, PUT preconditions, generations without /status, and kube-runtime's finalizers, through kube-rs.

use super::*;

fn labelled_widget(name: &str) -> DynamicObject {
    let mut w = widget(name, 1);
    w.metadata.labels = Some([("set".to_string(), "list".to_string())].into());
    w
}

/// The names of each page of a list, following continue tokens, and each page's token.
async fn pages(api: &Api<DynamicObject>, params: ListParams) -> Vec<(Vec<String>, Option<String>)> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let lp = match token.take() {
            Some(t) => params.clone().continue_token(&t),
            None => params.clone(),
        };
        let page = api.list(&lp).await.expect("list");
        assert_eq!(page.metadata.remaining_item_count, None, "never with a selector");
        let names = page.items.iter().map(|o| o.metadata.name.clone().unwrap_or_default()).collect();
        let next = page.metadata.continue_.filter(|c| !c.is_empty());
        out.push((names, next.as_ref().map(|t| decoded_start(t))));
        match next {
            Some(t) => token = Some(t),
            None => return out,
        }
    }
}

/// Where a continue token resumes (its `start`).
fn decoded_start(token: &str) -> String {
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(token).expect("kube's unpadded base64");
    let doc: Value = serde_json::from_slice(&raw).expect("json");
    doc["start"].as_str().expect("start").to_string()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[tokio::test]
async fn a_selected_page_resumes_right_after_the_last_object_it_returned() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("crud-1", 1)).await.expect("create");
    for i in 0..7 {
        api.create(&PostParams::default(), &labelled_widget(&format!("list-{i}"))).await.expect("create");
    }
    // The oracle's pages: each token starts after the last item returned ("list-2\0").
    let by_label = pages(&api, ListParams::default().labels("set=list").limit(3)).await;
    assert_eq!(
        by_label,
        [
            (names(&["list-0", "list-1", "list-2"]), Some("list-2\0".into())),
            (names(&["list-3", "list-4", "list-5"]), Some("list-5\0".into())),
            (names(&["list-6"]), None),
        ]
    );
    let by_field = pages(&api, ListParams::default().fields("metadata.name!=list-1").limit(3)).await;
    assert_eq!(
        by_field,
        [
            (names(&["crud-1", "list-0", "list-2"]), Some("list-2\0".into())),
            (names(&["list-3", "list-4", "list-5"]), Some("list-5\0".into())),
            (names(&["list-6"]), None),
        ]
    );
    // A selector that matches nothing more after a full page still hands out a token.
    let last_out = pages(&api, ListParams::default().fields("metadata.name!=list-6").limit(7)).await;
    assert_eq!(last_out[0].1.as_deref(), Some("list-5\0"));
    assert_eq!(last_out[1], (Vec::new(), None));
    // One name in one namespace is read as one key: nothing to continue.
    let single = pages(&api, ListParams::default().fields("metadata.name=crud-1").limit(1)).await;
    assert_eq!(single, [(names(&["crud-1"]), None)]);
    // Across namespaces, a selected namespace is where the list reads, tokens included.
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &widget_resource());
    let in_default = pages(&all, ListParams::default().fields("metadata.namespace=default").limit(3)).await;
    assert_eq!(in_default[0], (names(&["crud-1", "list-0", "list-1"]), Some("list-1\0".into())));
    let across = pages(&all, ListParams::default().labels("set=list").limit(3)).await;
    assert_eq!(across[0], (names(&["list-0", "list-1", "list-2"]), Some("default/list-2\0".into())));
    assert_eq!(across.iter().map(|(n, _)| n.len()).sum::<usize>(), 7);
    // Without a selector the count of what remains is given.
    let first = api.list(&ListParams::default().limit(3)).await.expect("list");
    assert_eq!(first.metadata.remaining_item_count, Some(5));
    assert_eq!(decoded_start(first.metadata.continue_.as_deref().expect("token")), "list-1\0");
}

#[tokio::test]
async fn a_put_names_the_resource_version_and_uid_it_replaces() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    let created = api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");
    let mut change = widget("w1", 2);
    let err = api_error(api.replace("w1", &PostParams::default(), &change).await.expect_err("no resourceVersion"));
    assert_eq!((err.code, err.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        err.message,
        "widgets.stable.example.com \"w1\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );
    let details = err.details.expect("details");
    assert_eq!(
        (details.name.as_str(), details.group.as_str(), details.kind.as_str()),
        ("w1", "stable.example.com", "widgets")
    );
    let cause = &details.causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.message.as_str(), cause.field.as_str()),
        ("FieldValueInvalid", "Invalid value: 0x0: must be specified for an update", "metadata.resourceVersion")
    );
    // The same through /status, and through a patch that drops the resourceVersion.
    let err = api_error(api.replace_status("w1", &PostParams::default(), &change).await.expect_err("status"));
    assert_eq!(err.code, 422);
    let drop_rv = Patch::Merge(json!({"metadata": {"resourceVersion": null}, "spec": {"replicas": 3}}));
    let err = api_error(api.patch("w1", &PatchParams::default(), &drop_rv).await.expect_err("patch"));
    assert!(
        err.message.ends_with("metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"),
        "{}",
        err.message
    );

    // Another object's uid: 409 from the storage precondition, before the resourceVersion.
    let uid = created.metadata.uid.clone().expect("uid");
    change.metadata.uid = Some("6a1c6a5e-0000-4000-8000-000000000000".into());
    let err = api_error(api.replace("w1", &PostParams::default(), &change).await.expect_err("uid"));
    assert_eq!((err.code, err.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        err.message,
        format!(
            "Operation cannot be fulfilled on widgets.stable.example.com \"w1\": StorageError: invalid object, Code: 4, Key: /registry/stable.example.com/widgets/default/w1, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 6a1c6a5e-0000-4000-8000-000000000000, UID in object meta: {uid}"
        )
    );
    change.metadata.resource_version = created.metadata.resource_version.clone();
    let err = api_error(api.replace("w1", &PostParams::default(), &change).await.expect_err("uid"));
    assert_eq!(err.code, 409);
    let stored = api.get("w1").await.expect("get");
    assert_eq!(
        (stored.data["spec"]["replicas"].clone(), stored.metadata.resource_version),
        (json!(1), created.metadata.resource_version.clone())
    );

    // The right uid and resourceVersion write; built-in kinds need neither.
    change.metadata.uid = Some(uid);
    let written = api.replace("w1", &PostParams::default(), &change).await.expect("replace");
    assert_eq!(written.data["spec"]["replicas"], 2);
    let maps: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut cm: k8s_openapi::api::core::v1::ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "cm"}, "data": {"a": "b"}})).expect("cm");
    maps.create(&PostParams::default(), &cm).await.expect("create cm");
    cm.data = Some([("a".to_string(), "c".to_string())].into());
    maps.replace("cm", &PostParams::default(), &cm).await.expect("an unconditional update of a ConfigMap");
    cm.metadata.uid = Some("x".into());
    let err = api_error(maps.replace("cm", &PostParams::default(), &cm).await.expect_err("uid"));
    assert!(err.message.contains("Key: /registry/configmaps/default/cm, ResourceVersion: 0"), "{}", err.message);
}

#[tokio::test]
async fn without_a_status_subresource_a_status_change_is_a_new_generation() {
    let (_engine, client) = engine().await;
    let api = parts(&client, "default").await;
    let created: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "Part", "metadata": {"name": "p"}, "spec": {"n": 1}
    }))
    .expect("part");
    let mut current = api.create(&PostParams::default(), &created).await.expect("create");
    assert_eq!(current.metadata.generation, Some(1));
    current.data["status"] = json!({"a": 1});
    let put = api.replace("p", &PostParams::default(), &current).await.expect("put");
    assert_eq!(put.metadata.generation, Some(2), "PUT");
    let merge =
        api.patch("p", &PatchParams::default(), &Patch::Merge(json!({"status": {"a": 2}}))).await.expect("merge");
    assert_eq!(merge.metadata.generation, Some(3), "merge patch");
    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/status/a", "value": 3}])).expect("json patch");
    let json_patched = api.patch("p", &PatchParams::default(), &Patch::Json::<()>(ops)).await.expect("json patch");
    assert_eq!(json_patched.metadata.generation, Some(4), "JSON patch");
    let apply =
        json!({"apiVersion": "stable.example.com/v1", "kind": "Part", "metadata": {"name": "p"}, "status": {"b": 1}});
    let applied = api.patch("p", &PatchParams::apply("m"), &Patch::Apply(apply)).await.expect("apply");
    assert_eq!(applied.metadata.generation, Some(5), "apply");
    assert_eq!(applied.data["status"], json!({"a": 3, "b": 1}));
    let labelled = api
        .patch("p", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})))
        .await
        .expect("labels");
    assert_eq!(labelled.metadata.generation, Some(5), "metadata is no new generation");
}

/// kube-runtime's `finalizer` helper through its whole life: it adds the first finalizer
/// with `test /metadata/finalizers null` + `add` (a JSON patch kube applies, as it does
/// every RFC 6902 extension of evanphx/json-patch), reconciles, and on deletion removes it
/// with `test` + `remove` at its index, after which the object goes.
#[tokio::test]
async fn kube_runtime_finalizers_are_added_and_removed_by_json_patch() {
    use kube::runtime::controller::Action;
    use kube::runtime::finalizer::{Event as Finalizer, finalizer};
    use std::sync::Arc;
    const NAME: &str = "example.com/cleanup";

    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    api.create(&PostParams::default(), &widget("w1", 1)).await.expect("create");
    let step = async |seen: &mut Vec<&'static str>| {
        let obj = Arc::new(api.get("w1").await.expect("get"));
        let mut event = "";
        finalizer(&api, NAME, obj, |e| {
            event = match e {
                Finalizer::Apply(_) => "apply",
                Finalizer::Cleanup(_) => "cleanup",
            };
            std::future::ready(Ok::<_, std::io::Error>(Action::await_change()))
        })
        .await
        .expect("finalizer step");
        seen.push(event);
    };
    let mut seen = Vec::new();
    step(&mut seen).await;
    assert_eq!(api.get("w1").await.expect("get").metadata.finalizers, Some(vec![NAME.to_string()]));
    step(&mut seen).await;
    api.delete("w1", &DeleteParams::default()).await.expect("delete");
    step(&mut seen).await;
    assert_eq!(seen, ["", "apply", "cleanup"]);
    assert!(api.get_opt("w1").await.expect("get").is_none(), "gone once its finalizer is");

    // The same first-finalizer patch on an object that has finalizers fails as kube's does.
    let mut held = widget("w2", 1);
    held.metadata.finalizers = Some(vec!["other".into()]);
    api.create(&PostParams::default(), &held).await.expect("create");
    let first: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": [NAME]},
    ]))
    .expect("patch");
    let err =
        api_error(api.patch("w2", &PatchParams::default(), &Patch::Json::<()>(first)).await.expect_err("test fails"));
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (422, "Invalid", "the server rejected our request due to an error in our request")
    );
}

/// Writers racing on one object, as controllers and `kubectl` do: kube's GuaranteedUpdate
/// runs a patch again on the fresh object when another write came between its read and
/// its write, so every merge patch, apply and `/scale` patch without a resourceVersion
/// lands, and none undoes another. A patch naming a stale resourceVersion still conflicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_patches_all_land_and_none_is_lost() {
    let (_engine, client) = engine().await;
    let api = widgets(&client, "default").await;
    let first = api.create(&PostParams::default(), &widget("raced", 1)).await.expect("create");
    let stale = first.metadata.resource_version.clone().expect("resourceVersion");
    let writers = (0..24).map(|i| {
        let api = api.clone();
        async move {
            match i % 3 {
                0 => {
                    let patch = json!({"metadata": {"labels": {format!("merge-{i}"): "yes"}}});
                    api.patch("raced", &PatchParams::default(), &Patch::Merge(&patch)).await.map(|_| ())
                }
                1 => {
                    let config = json!({"apiVersion": "stable.example.com/v1", "kind": "Widget",
                        "metadata": {"name": "raced", "annotations": {format!("apply-{i}"): "yes"}}});
                    let pp = PatchParams::apply(&format!("writer-{i}"));
                    api.patch("raced", &pp, &Patch::Apply(&config)).await.map(|_| ())
                }
                _ => {
                    let patch = json!({"spec": {"replicas": i}});
                    api.patch_scale("raced", &PatchParams::default(), &Patch::Merge(&patch)).await.map(|_| ())
                }
            }
        }
    });
    let answers = futures::future::join_all(writers).await;
    let failed: Vec<_> = answers.iter().enumerate().filter(|(_, a)| a.is_err()).collect();
    assert!(failed.is_empty(), "every racing write lands: {failed:?}");
    let stored = api.get("raced").await.expect("get");
    let labels = stored.metadata.labels.unwrap_or_default();
    let annotations = stored.metadata.annotations.unwrap_or_default();
    for i in 0..24 {
        match i % 3 {
            0 => assert!(labels.contains_key(&format!("merge-{i}")), "merge-{i} kept: {labels:?}"),
            1 => assert!(annotations.contains_key(&format!("apply-{i}")), "apply-{i} kept: {annotations:?}"),
            _ => {}
        }
    }
    let managers = stored.metadata.managed_fields.unwrap_or_default();
    assert_eq!(managers.iter().filter(|m| m.manager.as_deref().is_some_and(|m| m.starts_with("writer-"))).count(), 8);
    // A precondition is the client's: it is checked again on the fresh object, and fails.
    let pinned = json!({"metadata": {"resourceVersion": stale, "labels": {"late": "yes"}}});
    let err = api.patch("raced", &PatchParams::default(), &Patch::Merge(&pinned)).await.expect_err("stale");
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 409 && s.reason == "Conflict"), "{err:?}");
}
