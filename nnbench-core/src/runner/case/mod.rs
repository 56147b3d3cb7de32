//! One case: its steps ([`lifecycle`]), its memos resolved
//! ([`resolve`]), the timing of its call
//! ([`engine`], by nnbench's sampler or by criterion's:
//! [`criterion_sampler`]), the times a metric reports of itself
//! ([`measured_value`]), its profile ([`profile`]), the next case's memos
//! loaded beside it ([`prefetch`]) and a scaling family's interleaved
//! rounds ([`scaling_rounds`]).

pub(super) mod criterion_sampler;
pub(super) mod engine;
pub(super) mod lifecycle;
pub(super) mod measured_value;
pub(super) mod prefetch;
pub(super) mod profile;
pub(super) mod resolve;
pub(super) mod scaling_rounds;
