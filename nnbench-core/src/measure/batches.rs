//! Calls on inputs made off the clock: each batch of inputs is made first,
//! then the calls on it are timed, then their outputs and what is left of
//! the inputs are dropped, off the clock too. A batch grows while making
//! it takes under [`MAKE_BUDGET`] and its inputs hold under
//! [`BATCH_BYTES`], so that a routine of nanoseconds is timed over many
//! calls, while a routine that consumes a large input pays for dropping
//! it what one such drop costs alone.

use std::time::{Duration, Instant};

use super::cpu::Elapsed;

/// How long making one batch of inputs may take before it stops growing.
const MAKE_BUDGET: Duration = Duration::from_millis(4);

/// The most inputs of one batch.
const MAX_BATCH: usize = 1 << 16;

/// The most heap bytes the inputs of one batch hold, the first input
/// allowed whatever its size: glibc's default trim threshold (128 KiB).
/// The inputs a routine consumes are freed on the clock, one after
/// another; where together they leave more free memory than that at the
/// top of the heap, the allocator hands it back to the kernel there (and
/// the next batch faults it in again), which costs a page at a time.
/// Under it, a drop costs what it costs in a program that makes and
/// consumes its inputs one at a time (`scripts/figures.sh inputs`).
const BATCH_BYTES: u64 = 128 << 10;

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
    let mut largest = MAX_BATCH;
    // The last batch weighed: its size and what it grew the heap by.
    let mut weighed: Option<(usize, u32)> = None;
    let mut weighing = heap_in_use().is_some();
    let mut calls = 0u64;
    let mut making_all = Duration::ZERO;
    let mut total: Option<Elapsed> = None;
    let mut inputs: Vec<I> = Vec::new();
    let mut outputs: Vec<O> = Vec::new();
    loop {
        let size = batch.min(left);
        let made = Instant::now();
        inputs.reserve(size);
        let before = if weighing { heap_in_use() } else { None };
        inputs.extend((0..size).map(|_| make()));
        if let Some(before) = before {
            // What the inputs hold bounds the batches after them.
            if let Some(grew) = heap_in_use().map(|after| after.wrapping_sub(before))
                && grew < 1 << 31
            {
                let each = match weighed {
                    Some((n, g)) if size > n && grew >= g => (grew - g) / (size - n) as u32,
                    _ => grew / size as u32,
                };
                largest = largest.min(batch_for(u64::from(each)));
                weighed = Some((size, grew));
            }
            weighing = size < WEIGHED_AT && size < largest;
        }
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
            batch = (batch * 2).min(largest);
        }
    }
}

/// The size of batch up to which batches are weighed: glibc serves the
/// first seven inputs of a small size from a cache of its thread, where
/// the last batch's left them counted as in use, so one input is what two
/// batches past that differ by, per input. Each reading walks glibc's
/// free lists (microseconds), and is made for the first batches alone.
const WEIGHED_AT: usize = 16;

/// The most inputs of `bytes` each that a batch may hold: one at least.
fn batch_for(bytes: u64) -> usize {
    usize::try_from(BATCH_BYTES / bytes.max(1))
        .unwrap_or(MAX_BATCH)
        .clamp(1, MAX_BATCH)
}

/// The heap's bytes in use, modulo 2³² (the difference of two readings is
/// right below 2 GiB; above, it is memory another thread freed
/// meanwhile): the tracking allocator's count where it is the
/// global allocator, else glibc's, else unknown (another allocator keeps
/// its own, and its own ways of giving memory back).
fn heap_in_use() -> Option<u32> {
    if let Some(stats) = crate::alloc::stats() {
        return Some(stats.current_bytes as u32);
    }
    glibc_in_use()
}

/// glibc's bytes in use, in its arenas and in chunks of their own
/// (`mmap`): `mallinfo`, whose fields are C `int`s that wrap past 2 GiB.
/// `mallinfo2`, which does not wrap, is missing from the glibc of systems
/// still in use (before 2.33), where a bench binary that needed it would
/// not start.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn glibc_in_use() -> Option<u32> {
    #[allow(deprecated, reason = "mallinfo2 is missing before glibc 2.33")]
    // SAFETY: mallinfo takes nothing and returns a plain struct by value.
    let info = unsafe { libc::mallinfo() };
    Some(
        info.uordblks
            .cast_unsigned()
            .wrapping_add(info.hblkhd.cast_unsigned()),
    )
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn glibc_in_use() -> Option<u32> {
    None
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
        let batches = Cell::new(0u64);
        let counting = |calls: &mut dyn FnMut()| {
            batches.set(batches.get() + 1);
            stepping(calls)
        };
        let batched = time(
            100,
            &mut make,
            &mut ByValue(|v: Vec<u64>| v[0]),
            &|_| false,
            &counting,
        );
        assert_eq!(made.get(), 100);
        assert_eq!(batched.out, Some(100));
        // Batches of 1, 2, 4, .., 64 less what was left: 7 timed batches,
        // or more where another test's allocations made the inputs look
        // larger as they were weighed.
        let n = batches.get();
        assert!(n >= 7, "{n} batches");
        assert_eq!(batched.elapsed.wall, Duration::from_nanos(10 * n));
        assert_eq!(
            batched.elapsed.thread_cpu,
            Some(Duration::from_nanos(7 * n))
        );
    }

    #[test]
    fn a_batch_holds_its_bytes_and_one_input_at_least() {
        assert_eq!(batch_for(8 << 20), 1);
        assert_eq!(batch_for(BATCH_BYTES), 1);
        assert_eq!(batch_for(1040), 126);
        assert_eq!(batch_for(0), MAX_BATCH);
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
