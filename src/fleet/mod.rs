//! Distributed runs (`docs/distributed.md`): a controller that serves its workers over HTTP
//! and implements the engine's `Fleet`, the workers (`rightsize worker`), and the backend
//! that starts workers on this machine (`--worker-backend local`). Kubernetes objects for a
//! run are rendered by `k8s`.

pub mod controller;
pub mod local;
pub mod protocol;
pub mod worker;

pub use controller::Controller;
