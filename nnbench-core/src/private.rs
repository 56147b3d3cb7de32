//! What the attribute macros expand to. Not a public API: generated code
//! reaches the harness only through here, so a user crate needs no direct
//! dependency on `inventory` or on the harness's internals.
//!
//! It holds re-exports, and the dispatch traits that classify values by
//! autoref specialization at the expansion site, where their types are
//! concrete. Nothing in the library imports from here.

use std::cell::Cell;
use std::error::Error as StdError;
use std::fmt::Debug;
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value as Json;

pub use inventory;

pub use crate::measure::arrivals::Arrivals;
pub use crate::measure::stream::Start as StreamStart;
pub use crate::measure::{Bencher, Timer};
pub use nnbench_vocab::{LatencyTarget, Objective, StreamLatency};

/// A family's sampling settings, as its attribute gave them.
pub const fn sampling(
    sample_size: Option<usize>,
    warm_up_time: Option<std::time::Duration>,
    measurement_time: Option<std::time::Duration>,
) -> Sampling {
    let mut sampling = Sampling::new();
    sampling.sample_size = sample_size;
    sampling.warm_up_time = warm_up_time;
    sampling.measurement_time = measurement_time;
    sampling
}

/// After a case's function that takes a `Bencher` returned `returned`: an
/// error when it never benched, unless it returned a failure of its own.
pub fn benched<R>(timer: &Timer, returned: &R, failed: impl Fn(&R) -> bool) -> crate::Result<()> {
    if timer.timed() || failed(returned) {
        Ok(())
    } else {
        Err(crate::Error::msg(
            "the case takes a Bencher and never timed with it: call bench, or with_inputs(..) \
             and then bench_values or bench_refs, once in the function",
        ))
    }
}
#[cfg(feature = "tokio")]
pub use crate::measure::{Flavor, runtime};
pub use crate::record::{Direction, ThroughputUnit};
pub use crate::registry::{Args, CaseSpec, Family, Hook, Work};
pub use crate::runner::bench_main as main;
pub use crate::settings::{Sampling, Timing};
pub use crate::{Error, Memo, Param, Params, Result, State};

/// Wraps the timing of an async function's calls: as written with the
/// `tokio` feature, a compile error that names the feature without it.
#[cfg(feature = "tokio")]
#[macro_export]
#[doc(hidden)]
macro_rules! __nnbench_async_case {
    ($($body:tt)*) => { $($body)* };
}

/// Without the `tokio` feature, an async function is an error that says
/// how to turn the feature on.
#[cfg(not(feature = "tokio"))]
#[macro_export]
#[doc(hidden)]
macro_rules! __nnbench_async_case {
    ($($body:tt)*) => {
        ::core::compile_error!(
            "async benchmark functions need nnbench's `tokio` feature: \
             nnbench = { version = \"...\", features = [\"tokio\"] }"
        )
    };
}

pub use crate::__nnbench_async_case as async_case;

/// Classifies a grid value by autoref specialization, at the expansion site
/// where its type is concrete: `(&&&Probe(&v)).param(..)` picks the memo
/// impl if the type implements `Memo`, else the `Serialize` one, else the
/// `Debug` one.
pub struct Probe<'a, T>(pub &'a T);

/// A memo argument: the resolved, shared value.
pub struct MemoArg<V>(Arc<V>);

impl<V> MemoArg<V> {
    pub fn by_ref(&self) -> &V {
        &self.0
    }
    pub fn by_arc(&self) -> Arc<V> {
        Arc::clone(&self.0)
    }
    pub fn by_value(&self) -> V
    where
        V: MemoTakenByValue,
    {
        V::take(&self.0)
    }
}

/// Implemented by no type: a memo's value is shared by every case that uses
/// it, so a function cannot own it.
#[diagnostic::on_unimplemented(
    message = "a memo's value is shared and cannot be taken by value",
    label = "take it as `&{Self}` or `Arc<{Self}>`"
)]
pub trait MemoTakenByValue: Sized {
    fn take(shared: &Arc<Self>) -> Self;
}

/// A plain argument: the grid's value, as written.
pub struct PlainArg<'a, T>(&'a T);

impl<T: Clone> PlainArg<'_, T> {
    pub fn by_ref(&self) -> &T {
        self.0
    }
    pub fn by_arc(&self) -> T {
        self.0.clone()
    }
    pub fn by_value(&self) -> T {
        self.0.clone()
    }
}

pub trait MemoValue {
    type Value;
    fn param(&self, name: &'static str) -> Param;
    fn fetch(&self, args: &Args, index: usize, name: &str) -> Result<MemoArg<Self::Value>>;
}

impl<M: Memo> MemoValue for &&Probe<'_, M> {
    type Value = M::Value;
    fn param(&self, name: &'static str) -> Param {
        Param::memo(name, self.0.clone())
    }
    fn fetch(&self, args: &Args, index: usize, name: &str) -> Result<MemoArg<M::Value>> {
        args.memo(index, name).map(MemoArg)
    }
}

pub trait SerializeValue<'a> {
    type Value;
    fn param(&self, name: &'static str) -> Param;
    fn fetch(&self, args: &Args, index: usize, name: &str) -> Result<PlainArg<'a, Self::Value>>;
}

impl<'a, T> SerializeValue<'a> for &Probe<'a, T>
where
    T: Serialize + Debug + Clone + Send + Sync + 'static,
{
    type Value = T;
    fn param(&self, name: &'static str) -> Param {
        let description =
            serde_json::to_value(self.0).unwrap_or_else(|_| Json::String(format!("{:?}", self.0)));
        Param::plain(name, self.0.clone(), description)
    }
    fn fetch(&self, _: &Args, _: usize, _: &str) -> Result<PlainArg<'a, T>> {
        Ok(PlainArg(self.0))
    }
}

/// What every grid value must be; the last tier of [`Probe`], an inherent
/// method so that a value that is not gets this message instead of a list
/// of unsatisfied bounds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a grid value",
    label = "a grid value must be Clone + Debug + Send + Sync + 'static",
    note = "a memo also implements `nnbench::Memo`; any other value is passed as written and recorded by its `Serialize` or `Debug` form"
)]
pub trait GridValue: Debug + Clone + Send + Sync + 'static {}

impl<T: Debug + Clone + Send + Sync + 'static> GridValue for T {}

impl<'a, T> Probe<'a, T> {
    pub fn param(&self, name: &'static str) -> Param
    where
        T: GridValue,
    {
        Param::plain(name, self.0.clone(), Json::String(format!("{:?}", self.0)))
    }

    pub fn fetch(&self, _: &Args, _: usize, _: &str) -> Result<PlainArg<'a, T>> {
        Ok(PlainArg(self.0))
    }
}

/// Whether a return value is a failure, classified like [`Probe`]: an
/// `Err` is, anything else is not.
pub struct Check<'a, T>(pub &'a T);

pub trait CheckResult {
    fn failed(&self) -> bool;
}

impl<T, E> CheckResult for &Check<'_, std::result::Result<T, E>> {
    fn failed(&self) -> bool {
        self.0.is_err()
    }
}

impl<T> Check<'_, T> {
    pub fn failed(&self) -> bool {
        false
    }
}

/// A function's or hook's return value, classified like [`Probe`]: a
/// `Result` is split into its value and its error, anything else is the value.
pub struct Ret<T>(Cell<Option<T>>);

impl<T> Ret<T> {
    pub fn new(value: T) -> Self {
        Self(Cell::new(Some(value)))
    }

    fn take(&self) -> Result<T> {
        self.0
            .take()
            .ok_or_else(|| Error::msg("a return value was read twice"))
    }
}

fn boxed_error(error: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Error {
    Error::from_boxed(error.into())
}

fn metric_json(value: &impl Serialize) -> Result<Json> {
    serde_json::to_value(value)
        .map_err(|e| Error::from(e).context("the metric could not be serialized"))
}

pub trait ResultReturn {
    fn metric(&self) -> Result<Json>;
    fn hook(&self) -> Result<()>;
}

impl<T, E> ResultReturn for &Ret<std::result::Result<T, E>>
where
    T: Serialize,
    E: Into<Box<dyn StdError + Send + Sync + 'static>>,
{
    fn metric(&self) -> Result<Json> {
        self.take()?
            .map_err(boxed_error)
            .and_then(|v| metric_json(&v))
    }
    fn hook(&self) -> Result<()> {
        self.take()?.map(drop).map_err(boxed_error)
    }
}

/// What a benchmark function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a benchmark's metric",
    label = "the function's return value is recorded, so it must implement `serde::Serialize`",
    note = "return a number, a struct deriving `Serialize`, `()`, or a `Result` of one of these"
)]
pub trait Metric: Serialize {}

impl<T: Serialize> Metric for T {}

/// What a setup or teardown hook may return.
#[diagnostic::on_unimplemented(
    message = "a hook returns `()` or `Result<(), E>`, not `{Self}`",
    label = "hooks are `fn(&nnbench::State, &nnbench::Params)` returning `()` or `Result<(), E>`"
)]
pub trait HookOutput {}

impl HookOutput for () {}

/// The last tiers of [`Ret`]: inherent, so that a wrong type gets the
/// messages above.
impl<T> Ret<T> {
    pub fn metric(&self) -> Result<Json>
    where
        T: Metric,
    {
        metric_json(&self.take()?)
    }

    pub fn hook(&self) -> Result<()>
    where
        T: HookOutput,
    {
        self.take().map(drop)
    }
}

/// A `throughput = elements(EXPR)` count: an integer of any width.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a count: `throughput = elements(EXPR)` and `bytes(EXPR)` take an integer",
    label = "this should be an integer (`usize`, `i64`, ...)"
)]
pub trait ThroughputCount: std::fmt::Display + Copy {
    /// The count, or `None` when it is negative.
    fn count(self) -> Option<u64>;
}

macro_rules! throughput_counts {
    ($($ty:ty),*) => {$(
        impl ThroughputCount for $ty {
            fn count(self) -> Option<u64> {
                u64::try_from(self).ok()
            }
        }
    )*};
}

throughput_counts!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize
);

impl<T: ThroughputCount> ThroughputCount for &T {
    fn count(self) -> Option<u64> {
        (*self).count()
    }
}

/// A `flops = EXPR` or `bytes = EXPR` amount: an integer of any width or a
/// float.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an amount of work: `flops = EXPR` and `bytes = EXPR` take a number",
    label = "this should be an integer or a float (`usize`, `u64`, `f64`, ...)"
)]
pub trait WorkAmount: std::fmt::Display + Copy {
    /// The amount, or `None` where it is negative or not finite.
    fn amount(self) -> Option<f64>;
}

macro_rules! work_amounts {
    ($($ty:ty),*) => {$(
        impl WorkAmount for $ty {
            fn amount(self) -> Option<f64> {
                // Every amount a call can do fits a double closely enough.
                Some(self as f64).filter(|a| a.is_finite() && *a >= 0.0)
            }
        }
    )*};
}

work_amounts!(
    u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64
);

impl<T: WorkAmount> WorkAmount for &T {
    fn amount(self) -> Option<f64> {
        (*self).amount()
    }
}

/// The work one call does, as the family's `what` (`flops` or `bytes`)
/// expression `text` gave it; a negative or non-finite amount is the
/// case's error.
pub fn work_amount<T: WorkAmount>(amount: T, what: &str, text: &str) -> Result<f64> {
    amount.amount().ok_or_else(|| {
        crate::Error::msg(format!(
            "{what} `{text}` is {amount}: the work one call does is a finite amount, 0 or more"
        ))
    })
}

/// What one call handles, as the family's `throughput` expression `text`
/// gave it; a negative count is the case's error.
pub fn count_throughput<T: ThroughputCount>(count: T, text: &str) -> Result<u64> {
    count.count().ok_or_else(|| {
        crate::Error::msg(format!(
            "throughput `{text}` is {count}: a count of what one call handles cannot be negative"
        ))
    })
}
