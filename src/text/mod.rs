//! Text helpers shared across layers, with no imports from the crate so that the engine and
//! every tool can use them without a cycle: [`duration`] (ages as Kubernetes prints them) and
//! [`tabwrite`] (kubectl's table layout).

pub mod duration;
pub mod tabwrite;
