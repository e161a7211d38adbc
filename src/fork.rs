//! `tracer fork`: a recorded trace run again up to message N from the recording, edited at N,
//! and live from there, recorded as a trace of its own and compared with the original.

pub mod edits;
pub mod gate;
pub mod plan;
pub mod reference;
pub mod report;
pub mod routes;
pub mod sandbox;
pub mod steer;
