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
/// if let Some(bytes) = nnbench::measure::rss::current_bytes() {
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
/// if let Some(peak) = nnbench::measure::rss::peak_bytes() {
///     println!("peak so far: {peak} bytes");
/// }
/// ```
pub fn peak_bytes() -> Option<u64> {
    imp::peak_bytes()
}

/// Resets the peak to the current resident memory; returns whether the
/// system allowed it. When it did not, [`peak_bytes`] is the peak of the
/// whole process and says nothing about one case.
///
/// # Example
///
/// ```
/// if nnbench::measure::rss::reset_peak() {
///     let buffer = vec![1u8; 64 << 20];
///     let peak = nnbench::measure::rss::peak_bytes().unwrap();
///     drop(buffer);
///     println!("peak since the reset: {peak} bytes");
/// }
/// ```
pub fn reset_peak() -> bool {
    imp::reset_peak()
}

#[cfg(target_os = "linux")]
mod imp {
    use std::fs;

    /// Reads fields of `/proc/self/status` given in kB, in bytes.
    fn status_kib(field: &str) -> Option<u64> {
        let status = fs::read_to_string("/proc/self/status").ok()?;
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
        // statm is shorter to read and parse than status: "size resident ...".
        let statm = fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some(pages * page_size())
    }

    pub(super) fn peak_bytes() -> Option<u64> {
        status_kib("VmHWM:")
    }

    pub(super) fn reset_peak() -> bool {
        fs::write("/proc/self/clear_refs", b"5").is_ok()
    }

    fn page_size() -> u64 {
        static PAGE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
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
        let mut system = System::new().ok()?;
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

    pub(super) fn reset_peak() -> bool {
        false
    }
}
