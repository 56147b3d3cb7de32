//! What a case that makes its own per-call inputs is given: the case's
//! timer, to time a routine on inputs made off the clock.

use super::Timer;
use super::batches::{ByRef, ByValue};

/// The timer of a case that takes one, so that what a call consumes or
/// changes is made for it off the clock: a sort needs an unsorted input
/// each call, and a routine that consumes its input needs a new one.
///
/// A function of a `#[benchmark]`, `#[parametrize]` or `#[product]`
/// family takes it as a parameter of type `Bencher` beside its grid's,
/// and calls one of its methods once; what the function returns is the
/// case's value, as for any case. Inputs are made in batches before the
/// calls on them are timed, and dropped after, together with the calls'
/// outputs: neither is on the clock, under any timing (once, sampled,
/// paired, and `--instructions`, where Callgrind counts the calls alone).
///
/// # Example
///
/// ```
/// use nnbench::Bencher;
///
/// #[nnbench::parametrize([(n = 1000), (n = 100_000)])]
/// fn sort(b: Bencher, n: u64) -> usize {
///     b.with_inputs(|| (0..n).rev().collect::<Vec<u64>>())
///         .bench_values(|mut v| {
///             v.sort();
///             v
///         });
///     n as usize
/// }
/// # let record = nnbench::Runner::new().filter("sort/").quiet(true).run().unwrap();
/// # assert_eq!(record.cases.len(), 2);
/// ```
#[must_use = "a Bencher times nothing until bench, bench_values or bench_refs is called"]
pub struct Bencher<'a> {
    timer: &'a mut Timer,
}

impl<'a> Bencher<'a> {
    #[doc(hidden)]
    pub fn new(timer: &'a mut Timer) -> Self {
        Self { timer }
    }

    /// Times `routine`, which needs no input of its own: as a case's
    /// function without a `Bencher` is timed, its outputs dropped on the
    /// clock.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn sum(b: nnbench::Bencher) {
    ///     b.bench(|| (0..nnbench::black_box(1000u64)).sum::<u64>());
    /// }
    /// # let record = nnbench::Runner::new().filter("sum").quiet(true).run().unwrap();
    /// # assert!(record.cases[0].time.median_ns > 0.0);
    /// ```
    pub fn bench<O>(self, routine: impl FnMut() -> O) {
        self.timer.time(routine);
    }

    /// Has each call's input made by `make`, off the clock; then
    /// [`bench_values`](BencherInputs::bench_values) or
    /// [`bench_refs`](BencherInputs::bench_refs) times the routine.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn pop(b: nnbench::Bencher) {
    ///     b.with_inputs(|| vec![1u8; 1024]).bench_refs(|v| v.pop());
    /// }
    /// # let record = nnbench::Runner::new().filter("pop").quiet(true).run().unwrap();
    /// # assert!(record.cases[0].error.is_none());
    /// ```
    pub fn with_inputs<I, G: FnMut() -> I>(self, make: G) -> BencherInputs<'a, G> {
        BencherInputs {
            timer: self.timer,
            make,
        }
    }
}

/// A [`Bencher`] with the maker of each call's input, from
/// [`Bencher::with_inputs`].
///
/// # Example
///
/// ```
/// #[nnbench::benchmark]
/// fn drain(b: nnbench::Bencher) {
///     let inputs: nnbench::BencherInputs<_> = b.with_inputs(|| vec![0u32; 64]);
///     inputs.bench_values(|v| v.into_iter().sum::<u32>());
/// }
/// # let record = nnbench::Runner::new().filter("drain").quiet(true).run().unwrap();
/// # assert!(record.cases[0].error.is_none());
/// ```
#[must_use = "nothing is timed until bench_values or bench_refs is called"]
pub struct BencherInputs<'a, G> {
    timer: &'a mut Timer,
    make: G,
}

impl<G> BencherInputs<'_, G> {
    /// Times `routine` on each input, which it takes by value; what it
    /// returns is dropped after the clock stops.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn into_sorted(b: nnbench::Bencher) {
    ///     b.with_inputs(|| vec![3, 1, 2]).bench_values(|mut v| {
    ///         v.sort();
    ///         v
    ///     });
    /// }
    /// # let record = nnbench::Runner::new().filter("into_sorted").quiet(true).run().unwrap();
    /// # assert!(record.cases[0].error.is_none());
    /// ```
    pub fn bench_values<I, O>(mut self, routine: impl FnMut(I) -> O)
    where
        G: FnMut() -> I,
    {
        self.timer
            .time_batched(&mut self.make, &mut ByValue(routine), &|_| false);
    }

    /// Times `routine` on each input, which it takes by mutable
    /// reference; the input and what it returns are dropped after the
    /// clock stops.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn sort_in_place(b: nnbench::Bencher) {
    ///     b.with_inputs(|| vec![3, 1, 2]).bench_refs(|v| v.sort());
    /// }
    /// # let record = nnbench::Runner::new().filter("sort_in_place").quiet(true).run().unwrap();
    /// # assert!(record.cases[0].error.is_none());
    /// ```
    pub fn bench_refs<I, O>(mut self, routine: impl FnMut(&mut I) -> O)
    where
        G: FnMut() -> I,
    {
        self.timer
            .time_batched(&mut self.make, &mut ByRef(routine), &|_| false);
    }
}
