//! The runtime behind [nnbench](https://docs.rs/nnbench): memo cache,
//! parameter grids, registry, runner, measurement and run records, and the
//! gates a bench run applies to them.
//!
//! Bench authors use it through the `nnbench` crate, which re-exports what
//! they need and adds the `#[benchmark]`, `#[parametrize]` and `#[product]`
//! attributes. [`compare`] and [`shard::merge`] are public here for tools:
//! the `nnbench` command (`nnbench-cli`, which also keeps the history and
//! draws the report) is built on them.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

// The modules stand on floors, each importing only from its own floor or
// lower ones: the book's Layout page lists them, and tests/layout.rs checks
// the page against every `crate::` path here.
pub mod alloc;
mod atomic_file;
pub mod compare;
mod error;
pub mod measure;
pub mod memo;
pub mod npy;
mod param;
mod paths;
pub mod record;
mod registry;
mod runner;
pub mod scaling;
mod settings;
pub mod shard;
mod state;
pub mod store;
mod terminal_table;
#[cfg(feature = "tch")]
#[cfg_attr(docsrs, doc(cfg(feature = "tch")))]
pub mod torch;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

/// The machine a run measures on: its key and its roofs (peak compute and
/// memory bandwidth, measured once per machine and cached), which place
/// each case that declares its work under them.
pub mod machine {
    pub use crate::runner::setup::machine::{MachineError, roofs, this_machine};
}

pub use error::{Context, Error, Result};
pub use measure::stream::{InputTokens, request_input};
pub use measure::{Bencher, BencherInputs};
pub use memo::definition::Memo;
pub use param::{Param, Params};
pub use paths::target_dir;
pub use record::run::RunRecord;
pub use record::{CaseRecord, RecordError};
pub use runner::Runner;
pub use settings::{Sampling, Timing};
pub use state::State;
