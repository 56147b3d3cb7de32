//! The tokio runtimes async cases run on: one of each flavour, built the
//! first time a case needs it and kept for the rest of the run, so that no
//! case pays for building one and every case of a flavour sees the same
//! runtime.

use std::sync::OnceLock;

use tokio::runtime::{Builder, Runtime};

/// Which tokio runtime an async case runs on: `runtime = current_thread`
/// (the default) or `runtime = multi_thread` on its attribute.
///
/// # Example
///
/// ```
/// # #[cfg(feature = "tokio")] {
/// use nnbench_core::measure::Flavor;
/// assert_eq!(Flavor::default(), Flavor::CurrentThread);
/// assert_eq!(Flavor::MultiThread.to_string(), "multi_thread");
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Flavor {
    /// The calls run on the harness's thread, as a sync case's do: its CPU
    /// time is the case's.
    #[default]
    CurrentThread,
    /// A worker thread per core, for cases that spawn tasks meant to run
    /// in parallel.
    MultiThread,
}

impl std::fmt::Display for Flavor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Flavor::CurrentThread => "current_thread",
            Flavor::MultiThread => "multi_thread",
        })
    }
}

/// Why an async case could not run.
///
/// # Example
///
/// ```
/// # #[cfg(feature = "tokio")] {
/// use nnbench_core::measure::{Flavor, RuntimeError};
/// let inside = RuntimeError::InsideRuntime(Flavor::CurrentThread);
/// assert!(inside.to_string().contains("spawn_blocking"));
/// # }
/// ```
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// The operating system refused what the runtime needs (threads, an
    /// event queue).
    #[error("the tokio {0} runtime for async cases could not be built: {1}")]
    Build(Flavor, String),
    /// The harness was called from inside a tokio runtime, where another
    /// cannot block.
    #[error(
        "an async case cannot run on the {0} runtime from inside another tokio runtime: \
         run the benches from a plain thread (tokio::task::spawn_blocking, or a sync main)"
    )]
    InsideRuntime(Flavor),
}

/// The runtime of `flavor`, built on first use.
///
/// # Errors
///
/// When it cannot be built, or when the caller is itself inside a tokio
/// runtime.
///
/// # Example
///
/// ```
/// # #[cfg(feature = "tokio")] {
/// use nnbench_core::measure::{Flavor, runtime};
/// let answer = runtime(Flavor::CurrentThread).unwrap().block_on(async { 6 * 7 });
/// assert_eq!(answer, 42);
/// # }
/// ```
pub fn runtime(flavor: Flavor) -> Result<&'static Runtime, RuntimeError> {
    static CURRENT: OnceLock<Result<Runtime, String>> = OnceLock::new();
    static MULTI: OnceLock<Result<Runtime, String>> = OnceLock::new();
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(RuntimeError::InsideRuntime(flavor));
    }
    let (slot, mut builder) = match flavor {
        Flavor::CurrentThread => (&CURRENT, Builder::new_current_thread()),
        Flavor::MultiThread => (&MULTI, Builder::new_multi_thread()),
    };
    slot.get_or_init(|| {
        builder
            .enable_all()
            .thread_name(super::RUNTIME_THREADS)
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| RuntimeError::Build(flavor, e.clone()))
}
