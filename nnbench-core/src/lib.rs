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
mod cli;
pub mod compare;
mod context;
mod error;
pub mod export;
pub mod history;
pub mod measure;
pub mod memo;
pub mod npy;
mod param;
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
pub use record::{CaseRecord, RecordError, RunRecord};
pub use runner::Runner;
pub use settings::{DEFAULT_AUTO_THRESHOLD, Sampling, Timing};
pub use state::State;

/// Cargo's target folder, where bench binaries keep their records and
/// benches can keep the data they generate: `CARGO_TARGET_DIR` if set, else
/// the folder above the running executable that cargo marked with
/// `CACHEDIR.TAG`, else `target` in the current folder.
///
/// # Example
///
/// ```
/// let data = nnbench::target_dir().join("nnbench").join("data");
/// assert!(data.ends_with("nnbench/data"));
/// ```
pub fn target_dir() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return dir.into();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .skip(1)
                .find(|dir| dir.join("CACHEDIR.TAG").is_file())
                .map(std::path::Path::to_owned)
        })
        .unwrap_or_else(|| "target".into())
}

/// The message of a panic payload (`&str` or `String`; anything else is
/// named as such).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic payload that is not a string".to_owned()
    }
}
