//! The time of a case's call: a timer around the user's function, and the
//! per-call statistics of the samples it took.

use std::time::Duration;

use super::adaptive::{median, median_interval};
use super::batches::{self, ByValue, Consume};
use super::cpu::{Clocks, Elapsed};
use super::load::{self, LoadOutcome, LoadPlan};
use super::together;
use crate::record::{Percentiles, Sampler, TimeRecord, TimingMode};

/// Times the user's function alone (argument fetching and metric
/// serialization stay outside), called `iters` times in a row, by the wall
/// clock and by the CPU clocks of the thread and of the process.
pub struct Timer {
    iters: u64,
    /// Whether Callgrind collects around the calls (and only there).
    counted: bool,
    /// Threads that make the calls together (`threads = [...]`).
    threads: usize,
    /// Requests kept in flight instead of calls in a row (`concurrency`).
    load: Option<LoadPlan>,
    elapsed: Option<Elapsed>,
    /// What each thread's calls took, when several made them.
    per_thread: Vec<Elapsed>,
    load_outcome: Option<LoadOutcome>,
    /// Whether the wall clock alone times the calls.
    wall_only: bool,
}

impl Default for Timer {
    fn default() -> Self {
        Self::new(1)
    }
}

impl Timer {
    pub(crate) fn new(iters: u64) -> Self {
        Self {
            iters: iters.max(1),
            counted: false,
            threads: 1,
            load: None,
            elapsed: None,
            per_thread: Vec::new(),
            load_outcome: None,
            wall_only: false,
        }
    }

    /// The calls are timed by the wall clock alone.
    pub(crate) fn wall_only(mut self) -> Self {
        self.wall_only = true;
        self
    }

    /// The clocks this timer reads, read now.
    #[inline(always)]
    fn clocks(&self) -> Clocks {
        Clocks::start_as(self.wall_only)
    }

    /// Each of the calls is made on `count` threads at once.
    pub(crate) fn on_threads(mut self, count: usize) -> Self {
        self.threads = count.max(1);
        self
    }

    /// The calls are requests kept in flight as `plan` says.
    pub(crate) fn under_load(mut self, plan: LoadPlan) -> Self {
        self.load = Some(plan);
        self
    }

    /// One call, which Callgrind counts when this process runs under it.
    pub(crate) fn counted() -> Self {
        Self {
            counted: true,
            ..Self::new(1)
        }
    }

    /// Callgrind collects until the guard is dropped, when this timer
    /// counts: a call that panics stops the collection as it unwinds.
    #[inline(always)]
    fn collect(&self) -> Option<Collecting> {
        self.counted.then(Collecting::start)
    }

    /// Calls `f` `iters` times; returns the last value. The others are
    /// dropped inside the timed region, as criterion's `iter` drops them.
    #[inline(never)]
    pub fn time<R>(&mut self, mut f: impl FnMut() -> R) -> R {
        wait_for_device();
        let clocks = self.clocks();
        let collecting = self.collect();
        for _ in 1..self.iters {
            std::hint::black_box(f());
        }
        let out = std::hint::black_box(f());
        drop(collecting);
        self.elapsed = Some(stop_after_device(&clocks));
        out
    }

    /// Calls `f` on `iters` inputs that `make` makes off the clock, in
    /// batches (see `batches`); returns the last value, or the first that
    /// `failed` picks. What a by-value parameter's clone would otherwise
    /// add to each call stays off the clock.
    #[inline(never)]
    pub fn time_inputs<I, R>(
        &mut self,
        mut make: impl FnMut() -> I,
        f: impl FnMut(I) -> R,
        failed: impl Fn(&R) -> bool,
    ) -> R {
        self.time_batched(&mut make, &mut ByValue(f), &failed)
    }

    /// Calls `f` on the values `make` clones for each call: off the clock
    /// (as [`time_inputs`](Self::time_inputs)) where dropping them does
    /// something, such as a vector's; beside the call where it does not,
    /// as a number's copy costs a call nothing.
    #[inline]
    pub fn time_owned<I, R>(
        &mut self,
        mut make: impl FnMut() -> I,
        mut f: impl FnMut(I) -> R,
        failed: impl Fn(&R) -> bool,
    ) -> R {
        if std::mem::needs_drop::<I>() {
            self.time_inputs(make, f, failed)
        } else {
            self.time_fallible(|| f(make()), failed)
        }
    }

    /// Times the calls `consume` makes on inputs from `make`, batch by
    /// batch, each batch's calls alone on the clocks (and under
    /// Callgrind's collection, when counted).
    pub(crate) fn time_batched<I, O>(
        &mut self,
        make: &mut dyn FnMut() -> I,
        consume: &mut impl Consume<I, O>,
        failed: &dyn Fn(&O) -> bool,
    ) -> O {
        let (counted, wall_only) = (self.counted, self.wall_only);
        let around = |calls: &mut dyn FnMut()| {
            wait_for_device();
            let clocks = Clocks::start_as(wall_only);
            let collecting = counted.then(Collecting::start);
            calls();
            drop(collecting);
            Some(stop_after_device(&clocks))
        };
        // What the clocks take to time nothing, each batch's share of its
        // time: most of it for a routine of nanoseconds on a large input,
        // made a few at a time.
        let idle = if counted {
            Elapsed::default()
        } else {
            batches::idle(&around)
        };
        let less_idle = |calls: &mut dyn FnMut()| around(calls).map(|e| batches::less(&e, &idle));
        let batched = batches::time(self.iters, make, consume, failed, &less_idle);
        self.elapsed = Some(batches::scaled(&batched.elapsed, self.iters, batched.calls));
        batched
            .out
            .expect("a timer makes one call at least, so there is an output")
    }

    /// Whether the timer timed calls: a case that takes a
    /// [`Bencher`](super::Bencher) and never benched leaves it untimed.
    pub fn timed(&self) -> bool {
        self.elapsed.is_some()
    }

    /// [`time`](Self::time) for a function that returns a `Result`: stops at
    /// the first value that `failed` picks, so no `Err` goes unseen.
    #[inline(never)]
    pub fn time_fallible<R>(&mut self, mut f: impl FnMut() -> R, failed: impl Fn(&R) -> bool) -> R {
        wait_for_device();
        let clocks = self.clocks();
        let collecting = self.collect();
        for _ in 1..self.iters {
            let out = f();
            if failed(&out) {
                drop(collecting);
                self.elapsed = Some(clocks.stop());
                return out;
            }
            std::hint::black_box(out);
        }
        let out = std::hint::black_box(f());
        drop(collecting);
        self.elapsed = Some(stop_after_device(&clocks));
        out
    }

    /// [`time`](Self::time) for a function that may be called from several
    /// threads at once: the function of a family with `threads` or
    /// `concurrency`, made on as many threads as the case says.
    #[inline(never)]
    pub fn time_shared<R: Send>(&mut self, f: impl Fn() -> R + Sync) -> R {
        self.time_shared_fallible(f, |_| false)
    }

    /// [`time_shared`](Self::time_shared) for a function that returns a
    /// `Result`: every thread stops at its first value that `failed` picks,
    /// and that value is returned.
    #[inline(never)]
    pub fn time_shared_fallible<R: Send>(
        &mut self,
        f: impl Fn() -> R + Sync,
        failed: impl Fn(&R) -> bool + Sync,
    ) -> R {
        if let Some(plan) = self.load {
            wait_for_device();
            let outcome = match plan.open {
                Some(open) => super::open_loop::on_threads(plan, open, &f, &failed),
                None => load::on_threads(plan, &f, &failed),
            };
            return self.finish_load(outcome);
        }
        if self.threads > 1 {
            wait_for_device();
            let (out, times, wall) =
                together::together(self.threads, self.iters, self.wall_only, &f, &failed);
            let waited = wait_for_device();
            self.elapsed = Some(Elapsed {
                used_device: waited,
                ..together::round(&times, wall)
            });
            self.per_thread = times;
            return out;
        }
        self.time_fallible(f, failed)
    }

    /// Keeps what a load measured, once the device is done with its work;
    /// returns the value it gave.
    fn finish_load<R>(&mut self, (out, outcome): (R, LoadOutcome)) -> R {
        self.elapsed = Some(Elapsed {
            wall: outcome.duration(),
            used_device: wait_for_device(),
            ..Elapsed::default()
        });
        self.load_outcome = Some(outcome);
        out
    }

    /// [`time`](Self::time) for an async function: each call's future is
    /// awaited in turn on `runtime`, the clocks started and stopped inside
    /// it, so that entering the runtime is left out.
    #[cfg(feature = "tokio")]
    #[inline(never)]
    pub fn time_async<F: Future>(
        &mut self,
        runtime: &tokio::runtime::Runtime,
        f: impl Fn() -> F,
    ) -> F::Output {
        self.time_async_fallible(runtime, f, |_| false)
    }

    /// [`time_async`](Self::time_async) for an async function that returns
    /// a `Result`: stops at the first value that `failed` picks.
    ///
    /// Under `concurrency`, the requests in flight are futures polled
    /// together by one task on `runtime`.
    #[cfg(feature = "tokio")]
    #[inline(never)]
    pub fn time_async_fallible<F: Future>(
        &mut self,
        runtime: &tokio::runtime::Runtime,
        f: impl Fn() -> F,
        failed: impl Fn(&F::Output) -> bool,
    ) -> F::Output {
        wait_for_device();
        if let Some(plan) = self.load {
            let outcome = match plan.open {
                Some(open) => {
                    runtime.block_on(super::open_loop::in_flight(plan, open, &f, &failed))
                }
                None => runtime.block_on(load::in_flight(plan, &f, &failed)),
            };
            return self.finish_load(outcome);
        }
        let (iters, counted, wall_only) = (self.iters, self.counted, self.wall_only);
        let (out, elapsed) = runtime.block_on(async {
            let clocks = Clocks::start_as(wall_only);
            let collecting = counted.then(Collecting::start);
            for _ in 1..iters {
                let out = f().await;
                if failed(&out) {
                    drop(collecting);
                    return (out, clocks.stop());
                }
                std::hint::black_box(out);
            }
            let out = std::hint::black_box(f().await);
            drop(collecting);
            (out, stop_after_device(&clocks))
        });
        self.elapsed = Some(elapsed);
        out
    }

    /// What the calls took, once they were made: on several threads, from
    /// their start together until the slowest was done.
    pub(crate) fn elapsed(&self) -> Option<Elapsed> {
        self.elapsed
    }

    /// What each thread's calls took, when several threads made them.
    pub(crate) fn per_thread(&self) -> &[Elapsed] {
        &self.per_thread
    }

    /// What a load measured, once its requests were made.
    pub(crate) fn take_load(&mut self) -> Option<LoadOutcome> {
        self.load_outcome.take()
    }
}

/// Kernels run asynchronously: with the `tch` feature, the clock starts
/// once the device has finished what was queued before the calls (a
/// memo's upload, the last sample's work), and stops when it has finished
/// the work the calls queued.
///
/// True when the calls left work queued that the wait then timed.
#[inline]
fn wait_for_device() -> bool {
    #[cfg(feature = "tch")]
    return super::torch_allocator::wait_for_queued();
    #[cfg(not(feature = "tch"))]
    false
}

/// Stops `clocks` once the device has finished the calls' work.
#[inline]
fn stop_after_device(clocks: &Clocks) -> Elapsed {
    let waited = wait_for_device();
    Elapsed {
        used_device: waited,
        ..clocks.stop()
    }
}

/// Callgrind collecting, from its start until this is dropped.
struct Collecting;

impl Collecting {
    #[inline(always)]
    fn start() -> Self {
        super::callgrind::toggle_collect();
        Self
    }
}

impl Drop for Collecting {
    #[inline(always)]
    fn drop(&mut self) {
        super::callgrind::toggle_collect();
    }
}

/// The record of samples of `(iterations, elapsed)` that `sampler` took:
/// mean, median (and its interval), standard deviation, min and max of the
/// wall time per iteration over the samples, and the median CPU time per
/// iteration of the thread and of the process where every sample has it.
pub(crate) fn summarize(sampler: Sampler, samples: &[(u64, Elapsed)]) -> TimeRecord {
    let samples: Vec<&(u64, Elapsed)> = samples.iter().filter(|(iters, _)| *iters > 0).collect();
    let per_call = |clock: fn(&Elapsed) -> Option<Duration>| -> Option<Vec<f64>> {
        samples
            .iter()
            .map(|(iters, e)| clock(e).map(|d| d.as_nanos() as f64 / *iters as f64))
            .collect()
    };
    let in_order = per_call(|e| Some(e.wall)).unwrap_or_default();
    let mut per_iter = in_order.clone();
    per_iter.sort_by(f64::total_cmp);
    let n = per_iter.len();
    if n == 0 {
        return TimeRecord {
            mode: TimingMode::Sampled,
            sampler: Some(sampler),
            ..TimeRecord::default()
        };
    }
    let mean = per_iter.iter().sum::<f64>() / n as f64;
    let median_ns = median(&per_iter);
    let std = if n > 1 {
        (per_iter.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let cpu = per_call(|e| e.thread_cpu).unwrap_or_default();
    let process_cpu = per_call(|e| e.process_cpu).unwrap_or_default();
    let instructions: Option<Vec<f64>> = samples
        .iter()
        .map(|(iters, e)| e.instructions.map(|n| n as f64 / *iters as f64))
        .collect();
    TimeRecord {
        mode: TimingMode::Sampled,
        sampler: Some(sampler),
        samples: n as u64,
        iters: samples.iter().map(|(iters, _)| iters).sum(),
        mean_ns: mean,
        median_ns,
        std_ns: std,
        min_ns: per_iter[0],
        max_ns: per_iter[n - 1],
        samples_ns: in_order,
        median_ci_ns: median_interval(&per_iter).map(|(low, high)| [low, high]),
        cpu_median_ns: median_of(&cpu),
        cpu_samples_ns: cpu,
        process_cpu_median_ns: median_of(&process_cpu),
        process_cpu_samples_ns: process_cpu,
        hw_instructions: instructions.and_then(|per_call| median_of(&per_call)),
        instructions: None,
        callgrind: None,
        percentiles: (n >= 2 && samples.iter().all(|(iters, _)| *iters == 1))
            .then(|| Percentiles::of(&per_iter))
            .flatten()
            .map(Box::new),
        precision: None,
        used_device: samples.iter().any(|(_, e)| e.used_device),
        rounds_ns: Vec::new(),
        cpu_rounds_ns: Vec::new(),
    }
}

/// The record of one call: `elapsed` on every clock it was read on.
pub(crate) fn one_call(elapsed: Elapsed) -> TimeRecord {
    let ns = |d: std::time::Duration| d.as_nanos() as f64;
    let cpu: Vec<f64> = elapsed.thread_cpu.map(ns).into_iter().collect();
    let process_cpu: Vec<f64> = elapsed.process_cpu.map(ns).into_iter().collect();
    TimeRecord {
        cpu_median_ns: median_of(&cpu),
        cpu_samples_ns: cpu,
        process_cpu_median_ns: median_of(&process_cpu),
        process_cpu_samples_ns: process_cpu,
        hw_instructions: elapsed.instructions.map(|n| n as f64),
        used_device: elapsed.used_device,
        ..TimeRecord::once(ns(elapsed.wall))
    }
}

/// One record of the samples of several: the rounds of a paired run, each
/// timed apart, summarized together.
pub(crate) fn combine(sampler: Sampler, parts: &[&TimeRecord]) -> TimeRecord {
    let mut samples = Vec::new();
    for part in parts {
        let calls = part.iters.checked_div(part.samples).unwrap_or(1).max(1);
        let took = |per_call: f64| Duration::from_nanos((per_call * calls as f64).round() as u64);
        for (at, &wall) in part.samples_ns.iter().enumerate() {
            samples.push((
                calls,
                Elapsed {
                    wall: took(wall),
                    thread_cpu: part.cpu_samples_ns.get(at).map(|&ns| took(ns)),
                    process_cpu: part.process_cpu_samples_ns.get(at).map(|&ns| took(ns)),
                    instructions: part
                        .hw_instructions
                        .map(|per_call| (per_call * calls as f64).round() as u64),
                    used_device: part.used_device,
                },
            ));
        }
    }
    summarize(sampler, &samples)
}

/// The median of `values` in any order, `None` when there are none.
fn median_of(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (!sorted.is_empty()).then(|| median(&sorted))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(iters: u64, ns: u64) -> (u64, Elapsed) {
        (
            iters,
            Elapsed {
                wall: Duration::from_nanos(ns),
                thread_cpu: Some(Duration::from_nanos(ns / 2)),
                process_cpu: Some(Duration::from_nanos(ns)),
                instructions: Some(ns * 3),
                used_device: false,
            },
        )
    }

    #[test]
    fn statistics_are_per_iteration() {
        // 10, 20, 30, 40 ns per iteration.
        let t = summarize(
            Sampler::Criterion,
            &[sample(1, 10), sample(2, 40), sample(3, 90), sample(4, 160)],
        );
        assert_eq!(t.mode, TimingMode::Sampled);
        assert_eq!(t.sampler, Some(Sampler::Criterion));
        assert_eq!((t.samples, t.iters), (4, 10));
        assert_eq!(
            (t.mean_ns, t.median_ns, t.min_ns, t.max_ns),
            (25.0, 25.0, 10.0, 40.0)
        );
        assert!((t.std_ns - 12.909_944).abs() < 1e-5, "{}", t.std_ns);
        assert_eq!(t.samples_ns, [10.0, 20.0, 30.0, 40.0], "per call, in order");
        assert_eq!(t.cpu_samples_ns, [5.0, 10.0, 15.0, 20.0]);
        assert_eq!(t.cpu_median_ns, Some(12.5));
        assert_eq!(t.process_cpu_median_ns, Some(25.0));
        assert_eq!(t.hw_instructions, Some(75.0), "per call, the median");
    }

    #[test]
    fn combined_records_are_summarized_as_one() {
        let a = summarize(Sampler::Paired, &[sample(10, 100), sample(10, 300)]);
        let b = summarize(Sampler::Paired, &[sample(1, 20)]);
        let t = combine(Sampler::Paired, &[&a, &b]);
        assert_eq!((t.samples, t.iters), (3, 21));
        assert_eq!(t.samples_ns, [10.0, 30.0, 20.0]);
        assert_eq!(t.median_ns, 20.0);
        assert_eq!(t.cpu_median_ns, Some(10.0));
    }

    #[test]
    fn a_clock_some_sample_lacks_is_left_out_whole() {
        let mut samples = vec![sample(1, 10), sample(1, 20)];
        samples[1].1.thread_cpu = None;
        let t = summarize(Sampler::Adaptive, &samples);
        assert_eq!(t.cpu_median_ns, None);
        assert!(t.cpu_samples_ns.is_empty());
        assert_eq!(t.process_cpu_samples_ns, [10.0, 20.0]);
        let one = one_call(samples[0].1);
        assert_eq!((one.median_ns, one.cpu_median_ns), (10.0, Some(5.0)));
    }

    #[test]
    fn an_odd_count_takes_the_middle_and_one_sample_has_no_spread() {
        let t = summarize(
            Sampler::Adaptive,
            &[sample(1, 5), sample(1, 100), sample(1, 7)],
        );
        assert_eq!(t.median_ns, 7.0);
        let one = summarize(Sampler::Adaptive, &[sample(5, 50)]);
        assert_eq!((one.median_ns, one.std_ns), (10.0, 0.0));
        assert_eq!(summarize(Sampler::Adaptive, &[]).samples, 0);
        assert_eq!(one.median_ci_ns, None, "one sample has no interval");
    }
}
