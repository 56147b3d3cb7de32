//! Runs the registered cases: select, order, run each through its
//! lifecycle, evict memos past their last use, record, report.
//!
//! [`Runner`] is the builder ([`builder`]) and the run ([`run`]); a bench
//! binary's `main` ([`bench_main`]) is a runner made from the command line.
//! Below them: which cases ([`select`]), in what order ([`order`]), the
//! loop over them ([`case_loop`]), one case's steps ([`lifecycle`]) and
//! timing ([`engine`]), and what the run keeps as it goes ([`ledger`],
//! [`progress`]).

mod bench_main;
mod builder;
mod case_loop;
mod console;
mod criterion_sampler;
mod engine;
mod gate;
mod git_head;
mod interrupt;
#[cfg(unix)]
mod isolate;
mod ledger;
mod lifecycle;
mod measured_value;
mod order;
#[cfg(unix)]
mod paired;
mod prefetch;
mod profile;
mod progress;
mod provenance;
mod run;
mod scaling_rounds;
mod select;
#[cfg(feature = "criterion")]
mod silence;
mod tier_limit;
mod watchdog;

pub use bench_main::bench_main;
pub use builder::Runner;
