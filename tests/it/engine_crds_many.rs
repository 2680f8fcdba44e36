//! The CRD controller among many CRDs: it works per changed CRD (and its group), so these
//! pin what a queue could lose that a pass over every CRD could not — a name let go by a
//! deleted holder reaching the oldest contender, and a CRD changed while a burst of others
//! is being established.

use crate::support;
use crate::support::crd::CrdBuilder;

use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::time::Duration;

type Crd = k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

/// How many CRDs surround the one a test is about.
const MANY: usize = 60;

fn crd(group: &str, kind: &str, short: &[&str]) -> Crd {
    serde_json::from_value(CrdBuilder::new(group, kind).short_names(short).build()).expect("crd")
}

fn condition(crd: &Crd, type_: &str) -> Option<(String, String)> {
    let c = crd.status.as_ref()?.conditions.as_ref()?.iter().find(|c| c.type_ == type_)?;
    Some((c.status.clone(), c.reason.clone().unwrap_or_default()))
}

fn short_names(crd: &Crd) -> Vec<String> {
    crd.status.as_ref().and_then(|s| s.accepted_names.as_ref()).and_then(|n| n.short_names.clone()).unwrap_or_default()
}

/// Lists the CRDs until `done` holds for the list (30 s at most).
async fn wait_for(api: &Api<Crd>, what: &str, done: impl Fn(&[Crd]) -> bool) -> Vec<Crd> {
    let mut last = Vec::new();
    for _ in 0..600 {
        last = api.list(&Default::default()).await.expect("list crds").items;
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let states: Vec<_> = last
        .iter()
        .filter(|c| !established(c) || c.spec.group.starts_with("contest."))
        .map(|c| (c.metadata.name.clone(), condition(c, "NamesAccepted")))
        .collect();
    panic!("{what}: never reached; the contest and unestablished CRDs last seen: {states:?}");
}

fn named<'a>(crds: &'a [Crd], name: &str) -> &'a Crd {
    crds.iter().find(|c| c.metadata.name.as_deref() == Some(name)).unwrap_or_else(|| panic!("{name} listed"))
}

fn established(c: &Crd) -> bool {
    condition(c, "Established").is_some_and(|(s, _)| s == "True")
}

/// The holder of `wd` goes: of the contenders in its group, the oldest registration (by
/// creation time, then name) gets it, and every other still conflicts — while CRDs of other
/// groups hold `wd` of their own throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_let_go_goes_to_the_oldest_contender_among_many_crds() {
    if support::target::engine_only("which contender kube-apiserver gives a freed name is a race there") {
        return;
    }
    let (_target, client) = support::target::target().await;
    let api: Api<Crd> = Api::all(client.clone());
    let pp = PostParams::default();
    api.create(&pp, &crd("contest.example.com", "Holder", &["wd"])).await.expect("holder");
    wait_for(&api, "the holder established", |l| l.iter().any(established)).await;
    let mut contenders = Vec::new();
    for i in 0..MANY {
        // Other groups: `wd` is theirs too (short names are per group).
        api.create(&pp, &crd(&format!("g{i}.example.com"), "Widget", &["wd"])).await.expect("filler");
        if i % 10 == 0 {
            let c = api.create(&pp, &crd("contest.example.com", &format!("Contender{i}"), &["wd"])).await;
            contenders.push(c.expect("contender"));
        }
    }
    let conflicted = |l: &[Crd], c: &Crd| {
        condition(named(l, c.metadata.name.as_deref().unwrap_or_default()), "NamesAccepted")
            == Some(("False".into(), "ShortNamesConflict".into()))
    };
    wait_for(&api, "contenders conflict, fillers established", |l| {
        contenders.iter().all(|c| conflicted(l, c))
            && l.iter().filter(|c| c.spec.group != "contest.example.com").filter(|c| established(c)).count() == MANY
    })
    .await;

    api.delete("holders.contest.example.com", &DeleteParams::default()).await.expect("delete the holder");
    contenders.sort_by(|a, b| {
        (&a.metadata.creation_timestamp, &a.metadata.name).cmp(&(&b.metadata.creation_timestamp, &b.metadata.name))
    });
    let oldest = contenders[0].metadata.name.clone().unwrap_or_default();
    let list = wait_for(&api, "the oldest contender takes wd", |l| {
        !l.iter().any(|c| c.metadata.name.as_deref() == Some("holders.contest.example.com"))
            && short_names(named(l, &oldest)) == ["wd"]
    })
    .await;
    assert_eq!(condition(named(&list, &oldest), "NamesAccepted"), Some(("True".into(), "NoConflicts".into())));
    // Settled: a round queued by the holder's deletion saw every contender; no later one
    // hands the name on.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let list = api.list(&Default::default()).await.expect("list").items;
    for c in &contenders[1..] {
        assert!(conflicted(&list, c), "{:?} still conflicts", c.metadata.name);
        assert!(short_names(named(&list, c.metadata.name.as_deref().unwrap_or_default())).is_empty());
    }
    assert_eq!(short_names(named(&list, &oldest)), ["wd"]);
    for i in 0..MANY {
        assert_eq!(short_names(named(&list, &format!("widgets.g{i}.example.com"))), ["wd"], "g{i} keeps its own");
    }
}

/// A CRD renamed while a burst of others is being created and established ends with its
/// new names accepted, and every CRD of the burst Established.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_changed_during_a_burst_of_others_gets_its_new_names() {
    let (_target, client) = support::target::target().await;
    let api: Api<Crd> = Api::all(client.clone());
    let pp = PostParams::default();
    api.create(&pp, &crd("burst.example.com", "Changed", &["ch"])).await.expect("changed");
    let burst = {
        let api = api.clone();
        tokio::spawn(async move {
            for i in 0..MANY {
                api.create(&PostParams::default(), &crd("burst.example.com", &format!("Kind{i}"), &[]))
                    .await
                    .expect("burst crd");
            }
        })
    };
    // Mid-burst: a new short name.
    let patch = json!({"spec": {"names": {"shortNames": ["ch", "chg"]}}});
    api.patch("changeds.burst.example.com", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("rename");
    burst.await.expect("burst");
    let list = wait_for(&api, "all established, the change accepted", |l| {
        l.len() == MANY + 1
            && l.iter().all(established)
            && short_names(named(l, "changeds.burst.example.com")) == ["ch", "chg"]
    })
    .await;
    assert_eq!(
        condition(named(&list, "changeds.burst.example.com"), "NamesAccepted"),
        Some(("True".into(), "NoConflicts".into()))
    );
}
