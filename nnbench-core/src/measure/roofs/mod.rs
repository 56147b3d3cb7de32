//! The machine's roofs, measured: the most floating point operations a
//! second its cores do ([`peak`]), in single and double precision, and the
//! most bytes a second its memory moves ([`triad`]), each on one core and
//! on every core the process may use.
//!
//! Each figure is the best of a few timed runs, as STREAM reports its
//! best: a roof is what the machine can do, and a run slowed by another
//! process says less of that than the fastest one.

mod peak;
mod triad;

use std::sync::Barrier;
use std::time::{Duration, Instant};

use peak::{Precision, Units};

use crate::record::{MachineRoofs, RoofRates, RoofsMethod};

/// How long one timed run of the compute kernels lasts.
const RUN: Duration = Duration::from_millis(20);

/// Timed runs of each compute figure; the best counts.
const RUNS: usize = 5;

/// Timed passes of the triad: more than of the compute kernels, as a pass
/// is as short and memory is shared with every other process, whose
/// traffic slows a pass more often than it takes a core.
const PASSES: usize = 10;

/// The triad's arrays are this many times the largest cache, at least,
/// as STREAM's rules ask, so that no pass is served from a cache.
const BEYOND_CACHE: u64 = 4;

/// The smallest array of the triad, where no cache size is reported.
const LEAST_ARRAY_BYTES: u64 = 64 << 20;

/// Measures the roofs of this machine, on the cores the process may use.
pub(crate) fn measure() -> MachineRoofs {
    let started = Instant::now();
    let busy = super::busy::before();
    let cpus = cores();
    let units = Units::detect();
    let compute = |precision| RoofRates {
        one_core: peak_rate(units, precision, &cpus[..1]),
        all_cores: peak_rate(units, precision, &cpus),
    };
    let (flops_f32, flops_f64) = (compute(Precision::F32), compute(Precision::F64));
    let array_bytes = triad::last_level_cache().map_or(LEAST_ARRAY_BYTES, |llc| {
        (llc * BEYOND_CACHE).max(LEAST_ARRAY_BYTES)
    });
    let bandwidth = bandwidth(array_bytes, &cpus);
    MachineRoofs {
        flops_f32,
        flops_f64,
        bandwidth,
        method: RoofsMethod {
            units: units.name().to_owned(),
            cores: cpus.len(),
            triad_array_bytes: array_bytes,
            measured_at: crate::record::now_rfc3339(),
            seconds: started.elapsed().as_secs_f64(),
            noisy: busy.after().noisy(),
            cached: false,
        },
    }
}

/// The cores the process may use, each `Some` where it can be pinned to.
fn cores() -> Vec<Option<usize>> {
    let allowed = super::placement::allowed_cpus();
    if allowed.is_empty() {
        let count = std::thread::available_parallelism().map_or(1, usize::from);
        vec![None; count]
    } else {
        allowed.into_iter().map(Some).collect()
    }
}

/// Runs `work(i)` on one thread per entry of `cpus`, each pinned to its
/// core, all started together: the time from the first start to the last
/// end.
fn together(cpus: &[Option<usize>], work: impl Fn(usize) + Sync) -> Duration {
    let barrier = Barrier::new(cpus.len());
    let spans: Vec<(Instant, Instant)> = std::thread::scope(|scope| {
        let threads: Vec<_> = cpus
            .iter()
            .enumerate()
            .map(|(i, cpu)| {
                let (barrier, work) = (&barrier, &work);
                scope.spawn(move || {
                    if let Some(cpu) = cpu {
                        super::placement::pin_this_thread(&[*cpu]);
                    }
                    barrier.wait();
                    let start = Instant::now();
                    work(i);
                    (start, Instant::now())
                })
            })
            .collect();
        threads.into_iter().filter_map(|t| t.join().ok()).collect()
    });
    let first = spans.iter().map(|s| s.0).min();
    let last = spans.iter().map(|s| s.1).max();
    first
        .zip(last)
        .map_or(Duration::ZERO, |(first, last)| last - first)
}

/// The best rate of `runs` timed runs of `work`, which does `amount` a run.
fn best_rate(runs: usize, amount: f64, mut time: impl FnMut() -> Duration) -> f64 {
    (0..runs)
        .map(|_| time().as_secs_f64())
        .filter(|&t| t > 0.0)
        .map(|t| amount / t)
        .fold(0.0, f64::max)
}

/// Operations a second of the kernel of `units` in `precision` on `cpus`
/// together.
fn peak_rate(units: Units, precision: Precision, cpus: &[Option<usize>]) -> f64 {
    // Steps for one run of about [`RUN`] on one core, from a short one.
    let probe = 1u64 << 16;
    let took = together(&cpus[..1], |_| {
        peak::run(units, precision, probe);
    });
    let per_step = took.as_secs_f64() / probe as f64;
    let steps = if per_step > 0.0 {
        ((RUN.as_secs_f64() / per_step) as u64).max(probe)
    } else {
        probe
    };
    let amount = peak::flops(units, precision, steps) * cpus.len() as f64;
    best_rate(RUNS, amount, || {
        together(cpus, |_| {
            peak::run(units, precision, steps);
        })
    })
}

/// Bytes a second of the triad over arrays of `array_bytes` each, on one
/// core and on `cpus` together.
fn bandwidth(array_bytes: u64, cpus: &[Option<usize>]) -> RoofRates {
    let len = (array_bytes / std::mem::size_of::<f64>() as u64) as usize;
    let mut arrays = triad::Arrays::new(len);
    let per_pass = arrays.bytes_per_pass();
    let on = |arrays: &mut triad::Arrays, cpus: &[Option<usize>]| {
        let chunks: Vec<std::sync::Mutex<triad::Chunk<'_>>> = arrays
            .chunks(cpus.len())
            .into_iter()
            .map(std::sync::Mutex::new)
            .collect();
        let pass = |i: usize, first: bool| {
            if let Some(chunk) = chunks.get(i) {
                let mut chunk = chunk.lock().unwrap_or_else(|e| e.into_inner());
                if first {
                    chunk.touch();
                }
                chunk.pass();
            }
        };
        together(cpus, |i| pass(i, true));
        best_rate(PASSES, per_pass, || together(cpus, |i| pass(i, false)))
    };
    RoofRates {
        one_core: on(&mut arrays, &cpus[..1]),
        all_cores: on(&mut arrays, cpus),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_roof_is_a_positive_rate() {
        let cpus = cores();
        assert!(!cpus.is_empty());
        for precision in [Precision::F32, Precision::F64] {
            let rate = peak_rate(Units::detect(), precision, &cpus[..1]);
            assert!(rate > 0.0 && rate.is_finite(), "{precision:?}: {rate}");
        }
        // Small arrays: what is checked here is the bookkeeping.
        let rates = bandwidth(1 << 20, &cpus);
        assert!(rates.one_core > 0.0 && rates.all_cores > 0.0, "{rates:?}");
    }

    #[test]
    fn the_best_run_counts() {
        let mut times = [4, 2, 3].into_iter().map(Duration::from_secs);
        let rate = best_rate(3, 12.0, || times.next().unwrap_or(Duration::ZERO));
        assert_eq!(rate, 6.0);
    }
}
