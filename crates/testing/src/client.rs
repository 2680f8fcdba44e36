//! A `kube::Client` whose requests an engine in this process answers, with no socket: the one
//! bridge between the engine (which knows nothing of kube) and kube-rs, shared by the test
//! clusters and the plugin's local mode.

use kubectl_crd_engine::Engine;
use std::sync::Arc;

/// A client whose requests `engine` answers in this process, defaulting to `namespace`.
/// Each request is handled on a task of its own: kube's client polls a response future in
/// the caller's task, so without the spawn every concurrent request of a caller (48 at once
/// in a migration) would be handled on that one task's thread while the other cores idle.
/// Must be called inside a tokio runtime.
pub fn in_process_client(engine: &Arc<Engine>, namespace: &str) -> kube::Client {
    use tower::ServiceExt as _;
    let router = engine.router();
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let handled = tokio::spawn(router.clone().oneshot(req));
        async move {
            match handled.await {
                Ok(Ok(response)) => Ok(response),
                Ok(Err(never)) => match never {},
                Err(e) => Err(Box::<dyn std::error::Error + Send + Sync>::from(format!("the engine failed: {e}"))),
            }
        }
    });
    kube::Client::new(service, namespace.to_string())
}
