//! Calls on inputs made off the clock: each batch of inputs is made first,
//! then the calls on it are timed, then their outputs and what is left of
//! the inputs are dropped, off the clock too. A batch grows while making
//! it takes under [`MAKE_BUDGET`], so that a routine of nanoseconds is
//! timed over many calls while the inputs held at once stay within what
//! a few milliseconds can make: an 8 MiB input is made a few at a time.

use std::time::{Duration, Instant};

use super::cpu::Elapsed;

/// How long making one batch of inputs may take before it stops growing.
const MAKE_BUDGET: Duration = Duration::from_millis(4);

/// The most inputs of one batch.
const MAX_BATCH: usize = 1 << 16;

/// How long making the inputs of one timer's calls may take in all: past
/// it, the calls made stand for those asked (their time is scaled up),
/// so that a sampler that asks for a million calls of a routine of
/// nanoseconds does not make a million inputs of milliseconds.
const MAKE_CAP: Duration = Duration::from_millis(50);

/// How the calls of a batch consume its inputs.
pub(crate) trait Consume<I, O> {
    /// Calls on each input of `inputs`, in order, pushing each output.
    fn calls(&mut self, inputs: &mut Vec<I>, outputs: &mut Vec<O>);
}

/// Calls that take each input by value.
pub(crate) struct ByValue<F>(pub F);

impl<I, O, F: FnMut(I) -> O> Consume<I, O> for ByValue<F> {
    #[inline(always)]
    fn calls(&mut self, inputs: &mut Vec<I>, outputs: &mut Vec<O>) {
        outputs.extend(inputs.drain(..).map(&mut self.0));
    }
}

/// Calls that take each input by reference, which is dropped after.
pub(crate) struct ByRef<F>(pub F);

impl<I, O, F: FnMut(&mut I) -> O> Consume<I, O> for ByRef<F> {
    #[inline(always)]
    fn calls(&mut self, inputs: &mut Vec<I>, outputs: &mut Vec<O>) {
        outputs.extend(inputs.iter_mut().map(&mut self.0));
    }
}

/// What timing the calls gave: their time, summed over the batches, the
/// calls made, and the last output, or the first that `failed` picked.
pub(crate) struct Batched<O> {
    pub elapsed: Elapsed,
    pub calls: u64,
    pub out: Option<O>,
}

/// Makes `iters` inputs with `make` and times the calls `consume` makes
/// on them, batch by batch; `around` brackets each batch's calls (the
/// device's queue, Callgrind's collection) and says what they took, less
/// what timing nothing takes. Stops after the batch in which `failed`
/// picks an output, and once making inputs took [`MAKE_CAP`].
#[inline(never)]
pub(crate) fn time<I, O>(
    iters: u64,
    make: &mut dyn FnMut() -> I,
    consume: &mut impl Consume<I, O>,
    failed: &dyn Fn(&O) -> bool,
    around: &dyn Fn(&mut dyn FnMut()) -> Option<Elapsed>,
) -> Batched<O> {
    let mut left = usize::try_from(iters.max(1)).unwrap_or(usize::MAX);
    let mut batch = 1usize;
    let mut calls = 0u64;
    let mut making_all = Duration::ZERO;
    let mut total: Option<Elapsed> = None;
    let mut inputs: Vec<I> = Vec::new();
    let mut outputs: Vec<O> = Vec::new();
    loop {
        let size = batch.min(left);
        let made = Instant::now();
        inputs.reserve(size);
        inputs.extend((0..size).map(|_| make()));
        let making = made.elapsed();
        making_all += making;
        outputs.reserve(size);
        let timed = around(&mut || consume.calls(&mut inputs, &mut outputs));
        if let Some(elapsed) = timed {
            total = Some(total.map_or(elapsed, |total| add(&total, &elapsed)));
        }
        left -= size;
        calls += size as u64;
        let stop = outputs.iter().position(failed);
        if let Some(at) = stop {
            let out = outputs.swap_remove(at);
            return Batched {
                elapsed: total.unwrap_or_default(),
                calls,
                out: Some(out),
            };
        }
        if left == 0 || making_all >= MAKE_CAP {
            let out = outputs.pop();
            return Batched {
                elapsed: total.unwrap_or_default(),
                calls,
                out,
            };
        }
        outputs.clear();
        inputs.clear();
        if making < MAKE_BUDGET / 2 {
            batch = (batch * 2).min(MAX_BATCH);
        }
    }
}

/// What `around` says timing nothing takes: the least of a few tries,
/// measured once per process for each set of clocks a timer reads (a
/// wall-only timer's figure would leave a later one's CPU clocks with
/// nothing to subtract).
pub(crate) fn idle(around: &dyn Fn(&mut dyn FnMut()) -> Option<Elapsed>) -> Elapsed {
    static IDLE: [std::sync::OnceLock<Elapsed>; 8] = [const { std::sync::OnceLock::new() }; 8];
    let Some(probe) = around(&mut || {}) else {
        return Elapsed::default();
    };
    let clocks = usize::from(probe.thread_cpu.is_some())
        | usize::from(probe.process_cpu.is_some()) << 1
        | usize::from(probe.instructions.is_some()) << 2;
    *IDLE[clocks].get_or_init(|| {
        let tries: Vec<Elapsed> = (0..64).filter_map(|_| around(&mut || {})).collect();
        let least = |clock: fn(&Elapsed) -> Option<Duration>| tries.iter().filter_map(clock).min();
        Elapsed {
            wall: least(|e| Some(e.wall)).unwrap_or_default(),
            thread_cpu: least(|e| e.thread_cpu),
            process_cpu: least(|e| e.process_cpu),
            instructions: tries.iter().filter_map(|e| e.instructions).min(),
            used_device: false,
        }
    })
}

/// `span` less `idle`, clock by clock, never below zero.
pub(crate) fn less(span: &Elapsed, idle: &Elapsed) -> Elapsed {
    let minus = |a: Option<Duration>, b: Option<Duration>| {
        a.map(|a| a.saturating_sub(b.unwrap_or_default()))
    };
    Elapsed {
        wall: span.wall.saturating_sub(idle.wall),
        thread_cpu: minus(span.thread_cpu, idle.thread_cpu),
        process_cpu: minus(span.process_cpu, idle.process_cpu),
        instructions: span
            .instructions
            .map(|n| n.saturating_sub(idle.instructions.unwrap_or(0))),
        used_device: span.used_device,
    }
}

/// `span`, the time of `calls` calls, as the time of `iters` calls.
pub(crate) fn scaled(span: &Elapsed, iters: u64, calls: u64) -> Elapsed {
    if calls >= iters || calls == 0 {
        return *span;
    }
    let factor = iters as f64 / calls as f64;
    let times = |d: Duration| Duration::from_secs_f64(d.as_secs_f64() * factor);
    Elapsed {
        wall: times(span.wall),
        thread_cpu: span.thread_cpu.map(times),
        process_cpu: span.process_cpu.map(times),
        instructions: span.instructions.map(|n| (n as f64 * factor) as u64),
        used_device: span.used_device,
    }
}

/// Two spans' times together: a clock is read where both read it.
fn add(one: &Elapsed, other: &Elapsed) -> Elapsed {
    fn both<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
        Some(a? + b?)
    }
    Elapsed {
        wall: one.wall + other.wall,
        thread_cpu: both(one.thread_cpu, other.thread_cpu),
        process_cpu: both(one.process_cpu, other.process_cpu),
        instructions: both(one.instructions, other.instructions),
        used_device: one.used_device || other.used_device,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_timer_that_reads_the_cpu_clocks_gets_their_idle_cost_after_one_that_does_not() {
        let wall_only = |calls: &mut dyn FnMut()| {
            calls();
            Some(Elapsed {
                wall: Duration::from_nanos(20),
                ..Elapsed::default()
            })
        };
        let with_cpu = |calls: &mut dyn FnMut()| {
            calls();
            Some(Elapsed {
                wall: Duration::from_nanos(30),
                thread_cpu: Some(Duration::from_nanos(25)),
                process_cpu: Some(Duration::from_nanos(26)),
                ..Elapsed::default()
            })
        };
        assert_eq!(idle(&wall_only).thread_cpu, None);
        // Another test's timer may have measured these clocks first.
        let cpu = idle(&with_cpu);
        assert!(
            cpu.thread_cpu.is_some() && cpu.process_cpu.is_some(),
            "{cpu:?}"
        );
    }

    fn stepping(calls: &mut dyn FnMut()) -> Option<Elapsed> {
        calls();
        Some(Elapsed {
            wall: Duration::from_nanos(10),
            thread_cpu: Some(Duration::from_nanos(7)),
            ..Elapsed::default()
        })
    }

    #[test]
    fn every_input_is_made_once_and_each_batch_is_timed_and_summed() {
        let made = Cell::new(0u64);
        let mut make = || {
            made.set(made.get() + 1);
            vec![made.get(); 4]
        };
        let batched = time(
            100,
            &mut make,
            &mut ByValue(|v: Vec<u64>| v[0]),
            &|_| false,
            &stepping,
        );
        assert_eq!(made.get(), 100);
        assert_eq!(batched.out, Some(100));
        // Batches of 1, 2, 4, .., 64 less what was left: 7 timed batches.
        assert_eq!(batched.elapsed.wall, Duration::from_nanos(70));
        assert_eq!(batched.elapsed.thread_cpu, Some(Duration::from_nanos(49)));
    }

    #[test]
    fn by_reference_and_a_failed_output_stops_after_its_batch() {
        let mut n = 0;
        let mut make = || {
            n += 1;
            n
        };
        let batched = time(
            1000,
            &mut make,
            &mut ByRef(|v: &mut i32| if *v == 5 { Err(*v) } else { Ok(*v) }),
            &|out: &Result<i32, i32>| out.is_err(),
            &stepping,
        );
        assert_eq!(batched.out, Some(Err(5)));
        assert!(n < 16, "{n} inputs made");
    }
}
