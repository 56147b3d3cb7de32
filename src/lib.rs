//! # nnbench
//!
//! A benchmarking harness for machine-learning workloads whose fixtures
//! (models, datasets) are too big to hold all at once.
//!
//! A `#[product(...)]` attribute expands a parameter grid into benchmark
//! cases. Parameters whose values are [`Memo`]s are resolved lazily, when
//! their case starts, through one global memo cache, and evicted after their
//! last use. The harness records each case's return value (its metric), its
//! time, and its peak resident memory, and writes a JSON run record that CI
//! can compare between branches.
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

#![warn(missing_docs)]

pub use nnbench_core::*;

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
#[macro_export]
macro_rules! main {
    () => {
        fn main() {
            $crate::__private::main(
                ::core::env!("CARGO_CRATE_NAME"),
                ::core::env!("CARGO_MANIFEST_DIR"),
            )
        }
    };
}
