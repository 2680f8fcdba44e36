//! A kube-rs controller tested against in-process clusters: the example of the crate's README.
//!
//! `Greeting` is a custom resource whose spec names someone; the controller
//! ([`kube::runtime::Controller`]) sets its status to the greeting and the generation it
//! answered. `cargo run -p kubectl-crd-testing --example greeting_controller` runs it against
//! an in-process cluster and prints what it did; the tests below (run with the crate's, in
//! CI) seed one cluster with the CRD and a greeting, snapshot it once, and fork it per test.

use futures::StreamExt as _;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, CustomResource, ResourceExt as _};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// Someone to greet.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "example.com", version = "v1", kind = "Greeting", namespaced, status = "GreetingStatus")]
pub struct GreetingSpec {
    /// Who.
    pub name: String,
}

/// What the controller said, and to which generation of the spec.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GreetingStatus {
    /// The greeting.
    pub message: String,
    /// The generation the message answers.
    pub observed_generation: Option<i64>,
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The cluster refused or could not be reached.
    #[error("writing the status of {name}: {source}")]
    Status {
        /// The greeting.
        name: String,
        /// kube's error.
        #[source]
        source: kube::Error,
    },
}

/// The decision, pure: the status a greeting should have.
pub fn desired_status(greeting: &Greeting) -> GreetingStatus {
    GreetingStatus {
        message: format!("Hello, {}!", greeting.spec.name),
        observed_generation: greeting.metadata.generation,
    }
}

/// Read (the controller hands the object over), decide, write only when it differs.
async fn reconcile(greeting: Arc<Greeting>, client: Arc<Client>) -> Result<Action, Error> {
    let desired = desired_status(&greeting);
    if greeting.status.as_ref() != Some(&desired) {
        let api: Api<Greeting> = Api::namespaced(Client::clone(&client), &greeting.namespace().unwrap_or_default());
        let patch = Patch::Merge(json!({ "status": desired }));
        api.patch_status(&greeting.name_any(), &PatchParams::default(), &patch)
            .await
            .map_err(|source| Error::Status { name: greeting.name_any(), source })?;
    }
    Ok(Action::await_change())
}

fn error_policy(_: Arc<Greeting>, _: &Error, _: Arc<Client>) -> Action {
    Action::requeue(Duration::from_millis(200))
}

/// Runs the controller on every namespace until the watch ends.
pub async fn run(client: Client) {
    let greetings: Api<Greeting> = Api::all(client.clone());
    Controller::new(greetings, watcher::Config::default())
        .run(reconcile, error_policy, Arc::new(client))
        .for_each(|_| async {})
        .await;
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    use kube::CustomResourceExt as _;
    let cluster = kubectl_crd_testing::TestCluster::start().await?;
    cluster.install_crd::<Greeting>().await?;
    tokio::spawn(run(cluster.client()));
    let api: Api<Greeting> = Api::default_namespaced(cluster.client());
    api.create(&Default::default(), &Greeting::new("world", GreetingSpec { name: "world".into() })).await?;
    let greeted = tokio::time::timeout(Duration::from_secs(5), greeted(api, "world", 1)).await??;
    println!("{}: {}", Greeting::crd_name(), greeted.status.unwrap_or_default().message);
    Ok(())
}

/// Waits until the controller has answered generation `generation` of `name`.
async fn greeted(api: Api<Greeting>, name: &str, generation: i64) -> Result<Greeting, kube::runtime::wait::Error> {
    let answered = move |g: Option<&Greeting>| {
        g.and_then(|g| g.status.as_ref()).is_some_and(|s| s.observed_generation == Some(generation))
    };
    let found = kube::runtime::wait::await_condition(api, name, answered).await?;
    Ok(found.unwrap_or_else(|| Greeting::new(name, GreetingSpec { name: String::new() })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kubectl_crd_testing::{Snapshot, TestCluster};
    use tokio::sync::OnceCell;

    /// The seed: the CRD and one greeting nobody has answered yet. Made once per process
    /// (nextest runs each test in its own; `cargo test` shares it), forked per test.
    static SEED: OnceCell<Snapshot> = OnceCell::const_new();

    async fn fork() -> TestCluster {
        let seed = SEED
            .get_or_init(|| async {
                let cluster = TestCluster::start().await.expect("starts");
                cluster.install_crd::<Greeting>().await.expect("crd");
                cluster.install(&Greeting::new("seeded", GreetingSpec { name: "seed".into() })).await.expect("seed");
                cluster.snapshot().await.expect("snapshot")
            })
            .await;
        seed.fork().await.expect("forks")
    }

    async fn wait(api: &Api<Greeting>, name: &str, generation: i64) -> GreetingStatus {
        let found = tokio::time::timeout(Duration::from_secs(10), greeted(api.clone(), name, generation))
            .await
            .expect("greeted in time")
            .expect("watch");
        found.status.expect("status")
    }

    #[tokio::test]
    async fn a_new_greeting_is_answered() {
        let cluster = fork().await;
        tokio::spawn(run(cluster.client()));
        let api: Api<Greeting> = Api::default_namespaced(cluster.client());
        api.create(&Default::default(), &Greeting::new("world", GreetingSpec { name: "world".into() }))
            .await
            .expect("create");
        assert_eq!(wait(&api, "world", 1).await.message, "Hello, world!");
    }

    #[tokio::test]
    async fn a_seeded_greeting_is_answered_and_a_changed_spec_answered_again() {
        let cluster = fork().await;
        tokio::spawn(run(cluster.client()));
        let api: Api<Greeting> = Api::default_namespaced(cluster.client());
        assert_eq!(wait(&api, "seeded", 1).await.message, "Hello, seed!");
        let patch = Patch::Merge(json!({"spec": {"name": "again"}}));
        api.patch("seeded", &PatchParams::default(), &patch).await.expect("patch");
        assert_eq!(
            wait(&api, "seeded", 2).await,
            GreetingStatus { message: "Hello, again!".into(), observed_generation: Some(2) }
        );
    }

    #[tokio::test]
    async fn forks_do_not_see_each_other() {
        let (a, b) = (fork().await, fork().await);
        tokio::spawn(run(a.client()));
        let in_a: Api<Greeting> = Api::default_namespaced(a.client());
        wait(&in_a, "seeded", 1).await;
        let in_b: Api<Greeting> = Api::default_namespaced(b.client());
        let untouched = in_b.get("seeded").await.expect("get");
        assert_eq!(untouched.status, None, "no controller ran on b; a's status write stayed in a");
    }

    #[test]
    fn the_status_answers_the_spec_and_its_generation() {
        let mut greeting = Greeting::new("g", GreetingSpec { name: "Ada".into() });
        greeting.metadata.generation = Some(3);
        assert_eq!(
            desired_status(&greeting),
            GreetingStatus { message: "Hello, Ada!".into(), observed_generation: Some(3) }
        );
    }
}
