//! Text helpers the tools share, with no imports from the crate: [`tabwrite`] (kubectl's
//! table layout). Ages as Kubernetes prints them live in the engine
//! (`kubectl_crd_engine::duration`), which the engine's Tables need too.

pub mod tabwrite;
