//! Runs the registered cases, in the order of a run's stages:
//!
//! - [`setup`]: the [`Runner`] and its builder, a bench binary's `main`,
//!   which cases, where the figures come from, Ctrl-C;
//! - [`order`]: the order the cases run in, kept to their memos and to a
//!   memory budget;
//! - [`run`]: where the cases run (in process, in workers, paired,
//!   counted), one function for each;
//! - [`sweep`]: the loop over the cases in the process that runs them;
//! - [`case`]: one case's steps, its timing and its profile;
//! - [`workers`]: the worker processes of `--isolate`, paired runs and
//!   counted cases, and their supervisor;
//! - [`paired`]: the rounds of `--paired` between two builds' workers;
//! - [`report`]: what the run keeps, prints and judges against a baseline.

mod case;
mod order;
#[cfg(unix)]
mod paired;
mod report;
mod run;
pub(crate) mod setup;
mod sweep;
#[cfg(unix)]
mod workers;

pub use setup::bench_main::bench_main;
pub use setup::builder::Runner;
