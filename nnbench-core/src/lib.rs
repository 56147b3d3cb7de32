//! The library behind [nnbench](https://docs.rs/nnbench): memo cache,
//! parameter grids, registry, runner, measurement and run records.
//!
//! Use it through the `nnbench` crate, which re-exports this crate and adds
//! the `#[benchmark]`, `#[parametrize]` and `#[product]` attributes.

#![warn(missing_docs)]

// Floors, leaves first: `record` (the schema) imports none of the others;
// `measure` and `memo` produce records; `settings` are plain values that
// `cli` fills in; `registry` holds what the attributes register; `runner`
// consumes all of them; `__private` only re-exports for generated code.
pub mod alloc;
mod atomic_file;
pub mod compare;
mod error;
pub mod export;
pub mod history;
pub mod measure;
pub mod memo;
pub mod npy;
mod param;
mod paths;
pub mod record;
mod registry;
pub mod report;
mod runner;
mod settings;
pub mod shard;
mod state;
pub mod store;
#[cfg(feature = "tch")]
pub mod torch;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

pub use error::{Context, Error, Result};
pub use memo::Memo;
pub use param::{Param, Params};
pub use paths::target_dir;
pub use record::{CaseRecord, RecordError, RunRecord};
pub use runner::Runner;
pub use settings::{Sampling, Timing};
pub use state::State;
