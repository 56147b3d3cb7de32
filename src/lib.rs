//! # nnbench
//!
//! A benchmarking harness for machine-learning workloads whose fixtures
//! (models, datasets) are too big to hold all at once.
//!
//! A [`#[product(...)]`](product) attribute expands a parameter grid into
//! benchmark cases. Parameters whose values are [`Memo`]s are resolved
//! lazily, when their case starts, through one global memo cache, and
//! evicted after their last use. The harness records each case's return
//! value (its metric), its time, and its peak resident and GPU memory, and
//! writes a JSON [run record](record) that CI can compare between branches
//! with the `nnbench` tool.
//!
//! ```no_run
//! use ndarray::Array2;
//! use nnbench::Memo;
//!
//! #[derive(Clone, Debug, Hash, PartialEq, Eq)]
//! struct Weights(&'static str);
//!
//! impl Memo for Weights {
//!     type Value = Array2<f64>;
//!     fn compute(&self) -> nnbench::Result<Array2<f64>> {
//!         Ok(nnbench::npy::read(self.0)?)
//!     }
//! }
//!
//! #[nnbench::product(model = [Weights("a.npy"), Weights("b.npy")], scale = [1.0, 2.0])]
//! fn total(model: &Array2<f64>, scale: f64) -> f64 {
//!     model.sum() * scale
//! }
//!
//! // benches/sweep.rs, with `harness = false` for it in Cargo.toml:
//! nnbench::main!();
//! ```
//!
//! What is here, for a bench author:
//! - the attributes [`benchmark`], [`parametrize`] and [`product`], and
//!   [`main!`] for a bench target's `main`;
//! - [`Memo`] and the [`memo`] cache; [`store`], the formats of its disk
//!   tier; [`npy`], validated `.npy` files; `torch` with the `tch` feature;
//! - [`Params`] and [`State`], what setup and teardown hooks receive;
//! - [`Runner`], to run the registered cases from code, and the
//!   [`RunRecord`] it returns, whose parts are in [`record`]; [`alloc`], the heap figures' allocator;
//!   [`shard`], which part of a sweep a run takes.
//!
//! The guide is the book under `docs/` (`mdbook serve docs`).

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub use nnbench_core::{Bencher, BencherInputs, InputTokens, request_input};
pub use nnbench_core::{
    Context, Error, Memo, Param, Params, Result, RunRecord, Runner, Sampling, State, Timing,
};
pub use nnbench_core::{alloc, machine, memo, npy, record, store};

/// An identity function the optimizer must assume reads and writes its
/// argument: a benchmark's input that the compiler can see, or an output
/// nothing reads, may otherwise be computed at compile time or not at all.
/// A case's return value and a [`Bencher`] routine's outputs are passed
/// through it already; inputs written as constants are not.
///
/// # Example
///
/// ```
/// #[nnbench::benchmark]
/// fn unfolded_sum() -> u64 {
///     // Without it, the sum of a constant range may be folded away.
///     (0..nnbench::black_box(10_000u64)).sum()
/// }
/// # let run = nnbench::Runner::new().filter("unfolded_sum").exact(true).quiet(true).run();
/// # assert_eq!(run.unwrap().cases.len(), 1);
/// ```
pub use std::hint::black_box;

#[cfg(feature = "tch")]
#[cfg_attr(docsrs, doc(cfg(feature = "tch")))]
pub use nnbench_core::torch;

pub mod shard {
    //! Which part of a sweep a run takes: `--shard K/N` on a bench binary,
    //! or [`Runner::shard`](crate::Runner::shard). Every shard plans the
    //! same split from the same cases, keeping cases that share a memo
    //! together; `nnbench merge` makes one record of the shards' records.
    //!
    //! # Example
    //!
    //! ```
    //! #[nnbench::parametrize([(n = 1), (n = 2), (n = 3), (n = 4)])]
    //! fn halves(n: u32) -> u32 { n }
    //!
    //! let shard = |k| nnbench::shard::Shard::new(k, 2).unwrap();
    //! let first = nnbench::Runner::new().filter("halves/").shard(shard(1)).list();
    //! let second = nnbench::Runner::new().filter("halves/").shard(shard(2)).list();
    //! assert_eq!(first.len() + second.len(), 4);
    //! assert!(first.iter().all(|id| !second.contains(id)));
    //! ```

    pub use nnbench_core::shard::{Shard, ShardCosts, ShardError};
}

#[doc(hidden)]
pub use nnbench_core::__private;

/// The README's and the book's examples, compiled and run by `cargo test`
/// as this crate's doc tests, so that the guide cannot drift from the API.
#[cfg(doctest)]
pub mod book {
    macro_rules! pages {
        ($($page:ident = $path:literal),+ $(,)?) => {
            $(
                #[doc = include_str!($path)]
                pub struct $page;
            )+
        };
    }
    pages! {
        Readme = "../README.md",
        GettingStarted = "../docs/src/getting-started.md",
        ComingFromCriterion = "../docs/src/coming-from-criterion.md",
        WritingBenchmarks = "../docs/src/writing-benchmarks.md",
        Memos = "../docs/src/memos.md",
        Running = "../docs/src/running.md",
        Timing = "../docs/src/timing.md",
        Memory = "../docs/src/memory.md",
        Capacity = "../docs/src/capacity.md",
        Serving = "../docs/src/serving.md",
        Roofline = "../docs/src/roofline.md",
        Record = "../docs/src/record.md",
        Tracking = "../docs/src/tracking.md",
        CiGate = "../docs/src/ci-gate.md",
        History = "../docs/src/history.md",
        Bisect = "../docs/src/bisect.md",
        Sharding = "../docs/src/sharding.md",
        Torch = "../docs/src/torch.md",
    }
}

#[doc(inline)]
#[doc = include_str!("docs/benchmark.md")]
pub use nnbench_macros::benchmark;

#[doc(inline)]
#[doc = include_str!("docs/parametrize.md")]
pub use nnbench_macros::parametrize;

#[doc(inline)]
#[doc = include_str!("docs/product.md")]
pub use nnbench_macros::product;

/// The `main` of a bench target: parses the command line (`cargo bench --
/// --help` lists the flags), runs the selected cases, writes
/// `target/nnbench/<bench>/latest.json`, and exits non-zero if a case failed.
///
/// `nnbench::main!()` writes the target's `fn main`. Within a `main` of your
/// own, `nnbench::main!(bench = "NAME")` does the same as a statement, for
/// the bench target `NAME`, and does not return: a bench whose `main` sets
/// something up first, or that runs itself in a child process as a bench
/// binary (a build of itself, say) and as something else otherwise.
///
/// # Example
///
/// ```no_run
/// // benches/sweep.rs, declared in Cargo.toml as
/// // [[bench]]
/// // name = "sweep"
/// // harness = false
/// #[nnbench::benchmark]
/// fn startup() -> usize {
///     (0..1000).sum()
/// }
///
/// nnbench::main!();
/// ```
///
/// A `main` of your own:
///
/// ```no_run
/// #[nnbench::benchmark]
/// fn startup() -> usize {
///     (0..1000).sum()
/// }
///
/// fn main() {
///     if std::env::var_os("SWEEP_AS_REPORT").is_some() {
///         println!("a report of the last run, say");
///         return;
///     }
///     nnbench::main!(bench = "sweep");
/// }
/// ```
#[macro_export]
macro_rules! main {
    () => {
        fn main() {
            $crate::main!(bench = ::core::env!("CARGO_CRATE_NAME"))
        }
    };
    (bench = $bench:expr $(,)?) => {
        $crate::__private::main($bench, ::core::env!("CARGO_MANIFEST_DIR"))
    };
}
