//! CPU time beside wall time. On a shared machine the wall clock also counts
//! the time the scheduler gave to other processes; the CPU time a thread
//! used does not, so a single-threaded, CPU-bound call is measured far more
//! steadily by it. The process's CPU time, against the thread's, tells
//! whether the call used other threads.

use std::time::{Duration, Instant};

/// The clocks read as a timed region starts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clocks {
    wall: Instant,
    thread: Option<Duration>,
    process: Option<Duration>,
    instructions: Option<u64>,
}

/// What a timed region took on each clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Elapsed {
    /// Wall time.
    pub wall: Duration,
    /// CPU time of the thread that ran the region, where the system tells.
    pub thread_cpu: Option<Duration>,
    /// CPU time of the whole process, every thread's.
    pub process_cpu: Option<Duration>,
    /// Instructions the thread retired in user space, counted by the
    /// processor, where it has a counter Linux lets this process use.
    pub instructions: Option<u64>,
    /// The calls left work on the device that the clock waited for.
    pub used_device: bool,
}

impl Clocks {
    /// Reads the clocks: the CPU clocks and the instruction counter
    /// first, so that the wall clock's span lies inside theirs.
    #[inline]
    pub(crate) fn start() -> Self {
        let thread = thread_cpu();
        let process = process_cpu();
        let instructions = super::perf::instructions();
        Self {
            wall: Instant::now(),
            thread,
            process,
            instructions,
        }
    }

    /// Reads the wall clock alone: what a case timed once records, where
    /// each CPU clock's reading (a system call) would cost more than the
    /// harness's whole share of the case.
    #[inline]
    pub(crate) fn start_wall() -> Self {
        Self {
            wall: Instant::now(),
            thread: None,
            process: None,
            instructions: None,
        }
    }

    /// [`start_wall`](Self::start_wall) if `wall_only`, else
    /// [`start`](Self::start).
    #[inline]
    pub(crate) fn start_as(wall_only: bool) -> Self {
        if wall_only {
            Self::start_wall()
        } else {
            Self::start()
        }
    }

    /// What each clock read at the start advanced since then.
    #[inline]
    pub(crate) fn stop(&self) -> Elapsed {
        let wall = self.wall.elapsed();
        let instructions = self
            .instructions
            .and_then(|start| Some(super::perf::instructions()?.saturating_sub(start)));
        let since = |start: Option<Duration>, now: fn() -> Option<Duration>| {
            let start = start?;
            Some(now()?.saturating_sub(start))
        };
        Elapsed {
            wall,
            thread_cpu: since(self.thread, thread_cpu),
            process_cpu: since(self.process, process_cpu),
            instructions,
            used_device: false,
        }
    }
}

/// CPU time of the calling thread.
pub(crate) fn thread_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        read(libc::CLOCK_THREAD_CPUTIME_ID)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// CPU time of the process, all its threads together.
pub(crate) fn process_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        read(libc::CLOCK_PROCESS_CPUTIME_ID)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// CPU time of another process, all its threads together: what a worker
/// used, read from its parent. `None` where the process is gone or the
/// system has no clock for it (systems other than Linux).
pub(crate) fn cpu_of_process(pid: u32) -> Option<Duration> {
    #[cfg(target_os = "linux")]
    {
        let mut clock: libc::clockid_t = 0;
        let pid = libc::pid_t::try_from(pid).ok()?;
        // SAFETY: clock_getcpuclockid writes the clock id it is given.
        let found = unsafe { libc::clock_getcpuclockid(pid, &mut clock) } == 0;
        found.then(|| read(clock)).flatten()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        None
    }
}

#[cfg(unix)]
fn read(clock: libc::clockid_t) -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given, nothing else.
    let read = unsafe { libc::clock_gettime(clock, &mut now) } == 0;
    (read && now.tv_sec >= 0 && now.tv_nsec >= 0)
        .then(|| Duration::new(now.tv_sec as u64, now.tv_nsec as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed amount of work: its CPU time does not depend on how the
    /// scheduler shares the machine.
    fn work() -> u64 {
        (0..30_000_000u64).fold(0, |x, i| {
            std::hint::black_box(x.wrapping_mul(31).wrapping_add(i))
        })
    }

    #[test]
    fn a_sleep_takes_wall_time_and_no_cpu_time() {
        let clocks = Clocks::start();
        std::thread::sleep(Duration::from_millis(30));
        let e = clocks.stop();
        assert!(e.wall >= Duration::from_millis(30));
        let cpu = e.thread_cpu.expect("Linux tells a thread's CPU time");
        assert!(
            cpu < Duration::from_millis(15),
            "{cpu:?} of CPU while asleep"
        );
    }

    #[test]
    fn work_on_another_thread_counts_for_the_process_only() {
        let clocks = Clocks::start();
        std::thread::spawn(work).join().unwrap();
        let e = clocks.stop();
        let thread = e.thread_cpu.unwrap();
        let process = e.process_cpu.unwrap();
        assert!(
            thread < Duration::from_millis(5),
            "{thread:?} waiting for a join"
        );
        // 30 million steps take well over 5 ms of CPU on any machine.
        assert!(process > thread + Duration::from_millis(5), "{process:?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn another_process_cpu_time_is_read_while_it_runs_and_not_once_it_is_gone() {
        // A shell that counts in a loop uses CPU time of its own.
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .expect("sh runs");
        let pid = child.id();
        let mut used = Duration::ZERO;
        for _ in 0..500 {
            used = cpu_of_process(pid).expect("a running child's CPU time");
            if used >= Duration::from_millis(20) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(used >= Duration::from_millis(20), "{used:?}");
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(cpu_of_process(pid), None, "a reaped process has no clock");
    }
}
