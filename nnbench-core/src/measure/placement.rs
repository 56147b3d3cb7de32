//! Whether the calling thread waits for a core while one of the process's
//! cores idles: the state of a call whose threads the scheduler has not yet
//! spread. A thread pool (matrixmultiply's, rayon's, OpenMP's in libtorch)
//! starts its threads on the core of the thread that made them, and for
//! tens of milliseconds they take turns there, each call as slow as on one
//! core, until the scheduler moves one. The calls' times are steady
//! meanwhile, so no test of the times alone can tell that they will fall.

use std::time::{Duration, Instant};

/// The CPUs this process may run on, in order; empty where the system
/// does not say (on systems other than Linux, always).
#[cfg(target_os = "linux")]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid, empty set, and
    // sched_getaffinity writes at most its size into it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .collect()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn allowed_cpus() -> Vec<usize> {
    Vec::new()
}

/// The share of a stretch the calling thread spent waiting on a run queue
/// past which it counts as crowded.
const WAITED: f64 = 0.2;

/// The cores' worth of idle time over a stretch past which a core counts
/// as free: half of one.
const IDLE: f64 = 0.5;

/// What the scheduler had done by one moment: how long the calling thread
/// had waited for a core, and how long the process's cores had idled.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placement {
    at: Instant,
    waited: Duration,
    idle: Duration,
}

impl Placement {
    /// Now; `None` where the system does not say (not Linux, or without
    /// the scheduler's statistics).
    pub(crate) fn now(cpus: &[usize]) -> Option<Self> {
        let waited = waited()?;
        let idle = idle(cpus)?;
        Some(Self {
            at: Instant::now(),
            waited,
            idle,
        })
    }

    /// When it was read.
    pub(crate) fn at(&self) -> Instant {
        self.at
    }

    /// Whether, from `self` to `later`, the calling thread waited for a
    /// core for a fifth of the time or more while the process's cores
    /// idled half a core's worth: its threads crowd one core where another
    /// is free. A busy machine, with no core idle, is not crowding.
    pub(crate) fn crowded_until(&self, later: &Placement) -> bool {
        let span = later.at.saturating_duration_since(self.at).as_secs_f64();
        if span <= 0.0 {
            return false;
        }
        let waited = later.waited.saturating_sub(self.waited).as_secs_f64();
        let idle = later.idle.saturating_sub(self.idle).as_secs_f64();
        waited >= WAITED * span && idle >= IDLE * span
    }
}

/// How long the calling thread has waited on a run queue
/// (`/proc/thread-self/schedstat`, its second field, in nanoseconds).
fn waited() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// How long `cpus` have idled in all, from the CPU idle driver's residency
/// (`/sys/devices/system/cpu/cpuN/cpuidle/stateK/time`, microseconds):
/// exact, where `/proc/stat` counts in clock ticks, as long as the
/// stretches judged.
fn idle(cpus: &[usize]) -> Option<Duration> {
    if cpus.is_empty() {
        return None;
    }
    let mut micros = 0u64;
    for cpu in cpus {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cpuidle");
        let states = std::fs::read_dir(&dir).ok()?;
        for state in states.flatten() {
            let time = std::fs::read_to_string(state.path().join("time")).ok()?;
            micros += time.trim().parse::<u64>().ok()?;
        }
    }
    Some(Duration::from_micros(micros))
}

/// Has the calling thread, and each thread it starts from now on, run on
/// `cpus` alone. A set that cannot be taken (a CPU gone offline since it
/// was listed) leaves the thread where it was, as without pinning.
#[cfg(target_os = "linux")]
pub(crate) fn pin_this_thread(cpus: &[usize]) {
    if cpus.is_empty() {
        return;
    }
    // SAFETY: a zeroed cpu_set_t is a valid, empty set; CPU_SET writes
    // within it for a CPU below CPU_SETSIZE, and sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Elsewhere no CPU is listed, so none is asked for.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pin_this_thread(_cpus: &[usize]) {}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(start: Instant, ms: u64, waited: u64, idle: u64) -> Placement {
        Placement {
            at: start + Duration::from_millis(ms),
            waited: Duration::from_millis(waited),
            idle: Duration::from_millis(idle),
        }
    }

    #[test]
    fn threads_that_take_turns_beside_an_idle_core_are_crowded() {
        let start = Instant::now();
        let before = at(start, 0, 0, 0);
        // Half the time waiting, one core idle all along.
        assert!(before.crowded_until(&at(start, 10, 5, 10)));
        // Spread: no wait, though a core idles.
        assert!(!before.crowded_until(&at(start, 10, 0, 10)));
        // A busy machine: waiting, but no core idles.
        assert!(!before.crowded_until(&at(start, 10, 5, 1)));
        assert!(!before.crowded_until(&before));
    }

    #[test]
    fn the_calling_threads_wait_is_read_where_the_kernel_keeps_it() {
        if std::path::Path::new("/proc/thread-self/schedstat").exists() {
            assert!(waited().is_some(), "/proc/thread-self/schedstat");
        }
        if cfg!(target_os = "linux") {
            assert!(!allowed_cpus().is_empty());
        }
    }
}
