//! Resident set size of this process: now, and its peak since the last reset.
//!
//! On Linux the kernel keeps the high-water mark (`VmHWM`) and lets a process
//! reset it by writing `5` to `/proc/self/clear_refs`; that gives an exact
//! peak per case with no sampling thread. Where the reset is refused (gVisor,
//! some containers) or on other systems the peak is unknown (`None`).

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
    imp::peak_and_current_bytes().0
}

/// [`peak_bytes`] and [`current_bytes`] from one read, where the system
/// gives both at once.
pub(crate) fn peak_and_current_bytes() -> (Option<u64>, Option<u64>) {
    imp::peak_and_current_bytes()
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
    imp::reset_peak()
}

#[cfg(target_os = "linux")]
pub(crate) use imp::statm_bytes;

#[cfg(target_os = "linux")]
mod imp {
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::FileExt;
    use std::sync::OnceLock;

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

    /// The value of a `status` field given in kB, in bytes.
    fn field_kib(status: &str, field: &str) -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(field))?;
        let kib: u64 = line[field.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
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

    pub(super) fn peak_and_current_bytes() -> (Option<u64>, Option<u64>) {
        let mut buffer = [0u8; 4096];
        let Some(len) = read(proc().status.as_ref(), &mut buffer) else {
            return (None, None);
        };
        let text = String::from_utf8_lossy(&buffer[..len]);
        (field_kib(&text, "VmHWM:"), field_kib(&text, "VmRSS:"))
    }

    pub(super) fn reset_peak() -> bool {
        proc()
            .clear_refs
            .as_ref()
            .is_some_and(|file| file.write_at(b"5", 0).is_ok())
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

    pub(super) fn peak_and_current_bytes() -> (Option<u64>, Option<u64>) {
        (None, current_bytes())
    }

    pub(super) fn reset_peak() -> bool {
        false
    }
}
