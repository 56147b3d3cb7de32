//! Resident set size of this process: now, and its peak since the last reset.
//!
//! On Linux the kernel keeps the high-water mark (`VmHWM`) and lets a process
//! reset it by writing `5` to `/proc/self/clear_refs`; that gives an exact
//! peak per case with no sampling thread. Where the reset is refused (gVisor,
//! some containers) or on other systems the peak is unknown (`None`).
//!
//! The mark is read with `getrusage` where that is exact, and from
//! `/proc/self/status` where it is not: `getrusage` answers in a third of a
//! microsecond where the kernel takes three to write out `status`, but its
//! figure is the larger of the mark and a floor the process carries, the
//! peak of the memory it replaced at `exec` (its parent's, when spawned)
//! and of its threads as they exited. Read just after a reset, the floor
//! shows: above what is resident, it is known, and a later figure above it
//! is the mark; a figure at the floor says only that the mark lies below,
//! and `status` tells.

/// Resident memory of this process now, in bytes.
///
/// # Example
///
/// ```
/// if let Some(bytes) = nnbench_core::measure::rss::current_bytes() {
///     assert!(bytes > 0);
/// }
/// ```
pub fn current_bytes() -> Option<u64> {
    imp::current_bytes()
}

/// Peak resident memory since the process started or since the last
/// successful [`reset_peak`], in bytes.
///
/// # Example
///
/// ```
/// if let Some(peak) = nnbench_core::measure::rss::peak_bytes() {
///     println!("peak so far: {peak} bytes");
/// }
/// ```
pub fn peak_bytes() -> Option<u64> {
    imp::peak_bytes()
}

/// [`peak_bytes`] and [`current_bytes`] from one read, where the system
/// gives both at once.
pub(crate) fn peak_and_current_bytes() -> (Option<u64>, Option<u64>) {
    imp::peak_and_current_bytes()
}

/// [`reset_peak`], then [`current_bytes`]: whether the reset was allowed,
/// and what is resident.
pub(crate) fn reset_peak_and_read() -> (bool, Option<u64>) {
    imp::reset_peak_and_read()
}

/// Resets the peak to the current resident memory; returns whether the
/// system allowed it. When it did not, [`peak_bytes`] is the peak of the
/// whole process and says nothing about one case.
///
/// # Example
///
/// ```
/// if nnbench_core::measure::rss::reset_peak() {
///     let buffer = vec![1u8; 64 << 20];
///     let peak = nnbench_core::measure::rss::peak_bytes().unwrap();
///     drop(buffer);
///     println!("peak since the reset: {peak} bytes");
/// }
/// ```
pub fn reset_peak() -> bool {
    imp::reset_peak_and_read().0
}

#[cfg(target_os = "linux")]
pub(crate) use imp::statm_bytes;

#[cfg(target_os = "linux")]
mod imp {
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::FileExt;
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The floor under `getrusage`'s peak since the last reset, in bytes:
    /// 0 where it lies below what was resident then, [`UNKNOWN`] before a
    /// reset or where `getrusage` failed.
    static FLOOR: AtomicU64 = AtomicU64::new(UNKNOWN);
    const UNKNOWN: u64 = u64::MAX;

    /// `/proc/self/...` files stay open: a positioned read or write at 0
    /// regenerates them, and saves an open and a close per measurement.
    struct Proc {
        statm: Option<File>,
        status: Option<File>,
        clear_refs: Option<File>,
    }

    fn proc() -> &'static Proc {
        static PROC: OnceLock<Proc> = OnceLock::new();
        PROC.get_or_init(|| Proc {
            statm: File::open("/proc/self/statm").ok(),
            status: File::open("/proc/self/status").ok(),
            clear_refs: OpenOptions::new()
                .write(true)
                .open("/proc/self/clear_refs")
                .ok(),
        })
    }

    fn read(file: Option<&File>, buffer: &mut [u8]) -> Option<usize> {
        file?.read_at(buffer, 0).ok()
    }

    /// The value of a `status` field given in kB ("VmHWM:\t  1244 kB"), in
    /// bytes.
    pub(super) fn field_kib(status: &[u8], field: &[u8]) -> Option<u64> {
        let line = status
            .split(|&b| b == b'\n')
            .find(|l| l.starts_with(field))?;
        let value = line[field.len()..].trim_ascii();
        let digits = value.strip_suffix(b"kB").unwrap_or(value).trim_ascii();
        let kib: u64 = std::str::from_utf8(digits).ok()?.parse().ok()?;
        kib.checked_mul(1024)
    }

    /// `getrusage`'s peak: the larger of the mark since the last reset and
    /// the floor, in bytes.
    fn max_rss() -> Option<u64> {
        // SAFETY: getrusage only writes the struct it is given, which is
        // plain data that all zeros makes valid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // The calling thread's usage reports the process's peak (the mark
        // and the floor) as the process's does, without the sum of every
        // thread's CPU time that the process's usage costs.
        // SAFETY: as above; RUSAGE_THREAD needs no other argument.
        let status = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        let kib = u64::try_from(usage.ru_maxrss).ok();
        (status == 0).then_some(kib).flatten()?.checked_mul(1024)
    }

    /// The mark, where `getrusage` gives it: its figure is above the floor.
    fn mark() -> Option<u64> {
        let floor = FLOOR.load(Ordering::Relaxed);
        max_rss().filter(|&peak| floor != UNKNOWN && peak > floor)
    }

    pub(super) fn current_bytes() -> Option<u64> {
        // statm ("size resident shared ...", in pages) is far cheaper for
        // the kernel to produce than status.
        let mut buffer = [0u8; 128];
        let len = read(proc().statm.as_ref(), &mut buffer)?;
        let (_, resident) = statm_bytes(&buffer[..len])?;
        Some(resident)
    }

    /// Address space and resident memory, in bytes, from a `statm` file's
    /// text ("size resident shared ...", in pages).
    pub(crate) fn statm_bytes(text: &[u8]) -> Option<(u64, u64)> {
        let text = std::str::from_utf8(text).ok()?;
        let mut pages = text.split_whitespace().map(|n| n.parse::<u64>().ok());
        Some((pages.next()?? * page_size(), pages.next()?? * page_size()))
    }

    pub(super) fn peak_bytes() -> Option<u64> {
        // A sampled case asks after every call: what is resident is not
        // needed, and `statm` would double the read's cost.
        mark().or_else(|| peak_and_current_bytes().0)
    }

    pub(super) fn peak_and_current_bytes() -> (Option<u64>, Option<u64>) {
        if let Some(peak) = mark() {
            // Read after the mark, what is resident may have grown past it.
            let now = current_bytes();
            return (Some(peak.max(now.unwrap_or_default())), now);
        }
        let mut buffer = [0u8; 4096];
        let Some(len) = read(proc().status.as_ref(), &mut buffer) else {
            return (None, None);
        };
        let text = &buffer[..len];
        (field_kib(text, b"VmHWM:"), field_kib(text, b"VmRSS:"))
    }

    pub(super) fn reset_peak_and_read() -> (bool, Option<u64>) {
        let Some(clear_refs) = proc().clear_refs.as_ref() else {
            FLOOR.store(UNKNOWN, Ordering::Relaxed);
            return (false, current_bytes());
        };
        let now = current_bytes();
        // A mark (and floor) no higher than what is resident is what a
        // reset would leave, which sets the mark to what is resident: the
        // write, a third of the cost, is saved between cases that kept
        // their memory. The kernel's mark lags what `statm` counts by a
        // few pages either way.
        if let (Some(peak), Some(resident)) = (max_rss(), now)
            && peak <= resident
        {
            FLOOR.store(0, Ordering::Relaxed);
            return (true, now);
        }
        let reset = clear_refs.write_at(b"5", 0).is_ok();
        // Just after the reset the mark is what is resident: a figure
        // above it is the floor.
        let floor = match (reset, max_rss(), now) {
            (true, Some(peak), Some(now)) if peak <= now => 0,
            (true, Some(peak), Some(_)) => peak,
            _ => UNKNOWN,
        };
        FLOOR.store(floor, Ordering::Relaxed);
        (reset, now)
    }

    fn page_size() -> u64 {
        static PAGE: OnceLock<u64> = OnceLock::new();
        // SAFETY: sysconf only reads a system constant.
        *PAGE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
            size if size > 0 => size as u64,
            _ => 4096,
        })
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use sysinfo::{Pid, ProcessRefreshKind, ProcessesToUpdate, System};

    pub(super) fn current_bytes() -> Option<u64> {
        let pid = Pid::from_u32(std::process::id());
        let mut system = System::new();
        system.refresh_processes_specifics(
            ProcessesToUpdate::Some(&[pid]),
            false,
            ProcessRefreshKind::nothing().with_memory(),
        );
        Some(system.process(pid)?.memory())
    }

    pub(super) fn peak_bytes() -> Option<u64> {
        None
    }

    pub(super) fn peak_and_current_bytes() -> (Option<u64>, Option<u64>) {
        (None, current_bytes())
    }

    pub(super) fn reset_peak_and_read() -> (bool, Option<u64>) {
        (false, current_bytes())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_status_field_is_read_in_bytes() {
        let status = b"Name:\tbench\nVmPeak:\t  9000 kB\nVmHWM:\t    1244 kB\nVmRSS:\t1152 kB\n";
        assert_eq!(imp::field_kib(status, b"VmHWM:"), Some(1244 * 1024));
        assert_eq!(imp::field_kib(status, b"VmRSS:"), Some(1152 * 1024));
        assert_eq!(imp::field_kib(status, b"VmSwap:"), None);
        assert_eq!(imp::field_kib(b"VmHWM:\tmany kB\n", b"VmHWM:"), None);
    }

    #[test]
    fn the_peak_after_a_reset_is_the_kernels_mark_whichever_way_it_is_read() {
        if !reset_peak() {
            return; // no clear_refs here (gVisor): the peak is unknown
        }
        // Above the peak a process inherits from cargo, so that
        // `getrusage` gives it.
        let buffer = std::hint::black_box(vec![1u8; 256 << 20]);
        let status_mark = || {
            let status = std::fs::read("/proc/self/status").unwrap();
            imp::field_kib(&status, b"VmHWM:").unwrap()
        };
        // Other tests of this process may reset the mark or allocate
        // between the reads: read until the three agree.
        let slack = 1 << 20;
        let agreed = (0..5).find_map(|_| {
            let (before, now) = peak_and_current_bytes();
            let mark = status_mark();
            let (after, _) = peak_and_current_bytes();
            let (before, now, after) = (before?, now?, after?);
            (before >= now && before <= mark + slack && mark <= after + slack)
                .then_some((before, mark))
        });
        drop(buffer);
        let (peak, mark) = agreed.expect("five reads of the peak disagreed with VmHWM");
        assert!(peak >= 256 << 20, "peak {peak}, VmHWM {mark}");
    }

    #[test]
    fn a_reset_lowers_a_mark_left_above_what_is_resident() {
        if !reset_peak() {
            return; // no clear_refs here (gVisor): the peak is unknown
        }
        let read = || {
            let status = std::fs::read("/proc/self/status").unwrap();
            let field = |name| imp::field_kib(&status, name).unwrap();
            (field(b"VmHWM:"), field(b"VmRSS:"))
        };
        // Other tests of this process allocate and reset too: some one
        // of five tries sees the mark left high, then lowered.
        let lowered = (0..5).any(|_| {
            // glibc gives a block this large back to the system when freed.
            drop(std::hint::black_box(vec![1u8; 128 << 20]));
            let (high, resident) = read();
            if high < resident + (64 << 20) {
                return false;
            }
            let (reset, _) = reset_peak_and_read();
            let (mark, resident) = read();
            reset && mark < resident + (32 << 20)
        });
        assert!(lowered, "the mark stayed 64 MiB above what is resident");
    }
}
