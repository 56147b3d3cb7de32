//! Calls made on several threads at once: `threads = [...]`. Each thread
//! makes its calls and reads its own clocks, all of them released together
//! by a barrier once every one of them exists.

use std::panic::resume_unwind;
use std::sync::{Barrier, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::cpu::{Clocks, Elapsed};

/// Runs `f` `iters` times on each of `count` threads, this one among them,
/// started together, each timed by its own clocks (the wall clock alone if
/// `wall_only`); stops a thread at its first value that `failed`
/// picks. Returns this thread's last value, or the first failed one of any
/// thread, what each thread's calls took, and the round's wall time: from
/// the first thread's start to the last one's end.
///
/// # Panics
///
/// When the system cannot start a thread, and again here when a call
/// panicked on any thread.
pub(crate) fn together<R: Send>(
    count: usize,
    iters: u64,
    wall_only: bool,
    f: &(impl Fn() -> R + Sync),
    failed: &(impl Fn(&R) -> bool + Sync),
) -> (R, Vec<Elapsed>, Duration) {
    let barrier = Barrier::new(count.max(1));
    let ran = scoped(count, "nnbench-thread", || {
        barrier.wait();
        let start = Instant::now();
        let (out, elapsed) = calls(iters, wall_only, f, failed);
        (out, elapsed, start, Instant::now())
    });
    // Released together, the threads need not run together: on a busy
    // machine one may start when another has finished. The round lasts
    // until the last is done, counted from the first start, not the
    // longest of the threads' own spans.
    let first = ran.iter().map(|r| r.2).min();
    let last = ran.iter().map(|r| r.3).max();
    let wall = first
        .zip(last)
        .map_or(Duration::ZERO, |(first, last)| last - first);
    let times = ran.iter().map(|r| r.1).collect();
    let out = first_failed(ran.into_iter().map(|r| r.0), failed)
        .unwrap_or_else(|| unreachable!("this thread makes its calls"));
    (out, times, wall)
}

/// Runs `work` on `count` threads at once, this one first among them, the
/// others named `{name}-1`, `{name}-2`, ... and held at a gate until every
/// one of them exists. Returns what each returned, this thread's first.
///
/// # Panics
///
/// When the system cannot start a thread, and again here, once every
/// thread is done, when `work` panicked on any of them.
pub(crate) fn scoped<T: Send>(count: usize, name: &str, work: impl Fn() -> T + Sync) -> Vec<T> {
    let count = count.max(1);
    let gate = Gate::default();
    std::thread::scope(|scope| {
        let mut others = Vec::with_capacity(count - 1);
        for at in 1..count {
            let spawned = std::thread::Builder::new()
                .name(format!("{name}-{at}"))
                .spawn_scoped(scope, || {
                    let mut out = None;
                    super::profile::within(&mut || out = gate.wait().then(&work));
                    out
                });
            match spawned {
                Ok(handle) => others.push(handle),
                Err(error) => {
                    gate.open(false);
                    panic!("could not start thread {} of {count}: {error}", at + 1);
                }
            }
        }
        gate.open(true);
        let mut done = vec![work()];
        let mut panicked = None;
        for handle in others {
            match handle.join() {
                Ok(returned) => done.extend(returned),
                Err(payload) => panicked = panicked.or(Some(payload)),
            }
        }
        if let Some(payload) = panicked {
            resume_unwind(payload);
        }
        done
    })
}

/// The first of `values` that `failed` picks, else the first of them.
pub(crate) fn first_failed<R>(
    values: impl IntoIterator<Item = R>,
    failed: impl Fn(&R) -> bool,
) -> Option<R> {
    let mut first = None;
    for value in values {
        if failed(&value) {
            return Some(value);
        }
        if first.is_none() {
            first = Some(value);
        }
    }
    first
}

/// `iters` calls of `f` on this thread, timed by its own clocks (its wall
/// clock alone if `wall_only`).
fn calls<R>(
    iters: u64,
    wall_only: bool,
    f: &impl Fn() -> R,
    failed: &impl Fn(&R) -> bool,
) -> (R, Elapsed) {
    let clocks = Clocks::start_as(wall_only);
    for _ in 1..iters {
        let out = f();
        if failed(&out) {
            return (out, clocks.stop());
        }
        std::hint::black_box(out);
    }
    let out = std::hint::black_box(f());
    (out, clocks.stop())
}

/// What the threads' calls took together: the round's `wall` time, and
/// each CPU clock's mean over the threads.
pub(crate) fn round(times: &[Elapsed], wall: Duration) -> Elapsed {
    let n = times.len().max(1) as u32;
    let all = |clock: fn(&Elapsed) -> Option<Duration>| {
        times
            .iter()
            .map(clock)
            .sum::<Option<Duration>>()
            .map(|total| total / n)
    };
    Elapsed {
        wall,
        thread_cpu: all(|e| e.thread_cpu),
        process_cpu: None,
        instructions: times
            .iter()
            .map(|e| e.instructions)
            .sum::<Option<u64>>()
            .map(|total| total / u64::from(n)),
        used_device: times.iter().any(|e| e.used_device),
    }
}

/// Holds started threads until every one of them is: opened to let them
/// run, or closed when one could not start, so that none waits forever at
/// a barrier sized for them all.
#[derive(Default)]
struct Gate {
    open: Mutex<Option<bool>>,
    changed: Condvar,
}

impl Gate {
    /// Lets the waiting threads go on (`true`) or turn back (`false`).
    fn open(&self, go: bool) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        *open = Some(go);
        self.changed.notify_all();
    }

    /// Waits until the gate opens; whether to go on.
    fn wait(&self) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *open {
                return go;
            }
            open = self.changed.wait(open).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn every_thread_makes_its_calls_on_a_thread_of_its_own() {
        let calls = AtomicUsize::new(0);
        let names = Mutex::new(HashSet::new());
        let (out, times, _) = together(
            4,
            5,
            false,
            &|| {
                calls.fetch_add(1, Ordering::Relaxed);
                names.lock().unwrap().insert(std::thread::current().id());
                7
            },
            &|_| false,
        );
        assert_eq!((out, times.len()), (7, 4));
        assert_eq!(calls.into_inner(), 20);
        assert_eq!(names.into_inner().unwrap().len(), 4);
    }

    #[test]
    fn a_round_lasts_from_the_first_start_to_the_last_end() {
        // Threads that take turns at a lock run one after another, however
        // the machine schedules them: the round lasts all their calls.
        let lock = Mutex::new(());
        let (_, times, wall) = together(
            3,
            1,
            false,
            &|| {
                let _held = lock.lock().unwrap();
                std::thread::sleep(Duration::from_millis(5));
            },
            &|_| false,
        );
        assert!(wall >= Duration::from_millis(15), "{wall:?}");
        assert!(times.iter().all(|t| t.wall <= wall), "{times:?} {wall:?}");
        assert_eq!(round(&times, wall).wall, wall);
    }

    #[test]
    fn a_failure_on_another_thread_is_the_value() {
        let (out, _, _) = together(
            3,
            2,
            false,
            &|| {
                let name = std::thread::current().name().map(str::to_owned);
                name.filter(|n| n == "nnbench-thread-2").ok_or(())
            },
            &|r: &Result<String, ()>| r.is_ok(),
        );
        assert_eq!(out.as_deref(), Ok("nnbench-thread-2"));
    }

    #[test]
    fn a_panic_on_another_thread_is_raised_here() {
        let caught = std::panic::catch_unwind(|| {
            together(
                2,
                1,
                false,
                &|| {
                    if std::thread::current().name() == Some("nnbench-thread-1") {
                        panic!("boom on a worker");
                    }
                },
                &|_| false,
            )
        });
        let payload = caught.expect_err("the worker's panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom on a worker"));
    }
}
