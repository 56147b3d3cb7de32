//! Resident set size of this process: now, and its peak since the last reset.
//!
//! On Linux the kernel keeps the high-water mark (`VmHWM`) and lets a process
//! reset it by writing `5` to `/proc/self/clear_refs`; that gives an exact
//! peak per case with no sampling thread. Where the reset is refused (gVisor,
//! some containers) or on other systems the peak is unknown (`None`).
//!
//! The mark is read with `getrusage` where that is exact, and from
//! `/proc/self/status` where it is not: `getrusage` answers many times
//! sooner than the kernel writes out `status`, but its figure is the larger of the mark and a floor the process carries, the
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
/// gives both at once. As a case ends (`case_ends`), what is resident
/// serves the next case's start on this thread, unless it may have changed
/// since.
pub(crate) fn peak_and_current_bytes(case_ends: bool) -> (Option<u64>, Option<u64>) {
    imp::peak_and_current_bytes(case_ends)
}

/// Makes the next case on this thread read what is resident as it starts:
/// something between the cases (a load beside them, an eviction) may have
/// changed it.
pub(crate) fn forget_reading() {
    imp::forget_reading();
}

/// Says that memory may have been given back to the system (a memo's value
/// dropped), on whichever thread: no thread's last reading of what is
/// resident stands for now.
pub(crate) fn memory_given_back() {
    imp::memory_given_back();
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

/// File-backed resident memory of this process now (mapped code and files,
/// `RssFile`), in bytes: pages the kernel reclaims under memory pressure,
/// which a cgroup's limit does not hold the process to. `None` where the
/// system does not say.
pub(crate) fn file_backed_bytes() -> Option<u64> {
    imp::file_backed_bytes()
}

#[cfg(target_os = "linux")]
pub(crate) use imp::statm_bytes;

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::Cell;
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

    /// What `getrusage` says of the calling thread: the process's peak
    /// (the larger of the mark since the last reset and the floor), in
    /// bytes, and the page faults the thread has taken.
    #[derive(Clone, Copy)]
    struct Usage {
        max_rss: u64,
        faults: u64,
    }

    fn usage() -> Option<Usage> {
        // SAFETY: getrusage only writes the struct it is given, which is
        // plain data that all zeros makes valid.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // The calling thread's usage reports the process's peak (the mark
        // and the floor) as the process's does, without the sum of every
        // thread's CPU time that the process's usage costs.
        // SAFETY: as above; RUSAGE_THREAD needs no other argument.
        if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
            return None;
        }
        let faults = u64::try_from(usage.ru_minflt)
            .ok()?
            .checked_add(u64::try_from(usage.ru_majflt).ok()?)?;
        Some(Usage {
            max_rss: u64::try_from(usage.ru_maxrss).ok()?.checked_mul(1024)?,
            faults,
        })
    }

    /// The mark in `usage`, where `getrusage` gives it: its figure is above
    /// the floor.
    fn mark(usage: Option<Usage>) -> Option<u64> {
        let floor = FLOOR.load(Ordering::Relaxed);
        usage
            .map(|u| u.max_rss)
            .filter(|&peak| floor != UNKNOWN && peak > floor)
    }

    /// Times memory may have been given back to the system, by any thread.
    static GIVEN_BACK: AtomicU64 = AtomicU64::new(0);

    /// One reading of what is resident, and what could have changed it
    /// since as it was taken.
    #[derive(Clone, Copy)]
    struct Reading {
        resident: u64,
        /// The page faults this thread had taken.
        faults: u64,
        /// [`GIVEN_BACK`].
        given_back: u64,
    }

    thread_local! {
        /// This thread's last reading of what is resident, as its last case
        /// ended or started.
        static LAST: Cell<Option<Reading>> = const { Cell::new(None) };
    }

    /// The last reading, if what is resident has not changed since, as far
    /// as `usage` (read now) and [`GIVEN_BACK`] tell. Memory grows by page
    /// faults: this thread's `getrusage` counts, and another thread's lift
    /// the process's mark above the reading (`mark_known`: where the mark
    /// is not above the floor, only this thread's faults tell, as between
    /// two cases, where only the harness runs). Memory shrinks as it is
    /// given back: the harness says so when it drops a memo's value
    /// ([`memory_given_back`]), and what else would change it between two
    /// cases (a load beside them) forgets the reading ([`forget_reading`]).
    fn unchanged_since(usage: Option<Usage>, mark_known: bool) -> Option<u64> {
        let last = LAST.get()?;
        let usage = usage?;
        let grown = match mark(Some(usage)) {
            Some(peak) => peak > last.resident,
            None => mark_known,
        };
        (usage.faults == last.faults
            && !grown
            && GIVEN_BACK.load(Ordering::Acquire) == last.given_back)
            .then_some(last.resident)
    }

    /// Reads what is resident, and keeps the reading for [`unchanged_since`]
    /// with `usage`, read before it.
    fn read_and_keep(usage: Option<Usage>) -> Option<u64> {
        // Counted before the read: memory given back during it makes the
        // next reading read again.
        let given_back = GIVEN_BACK.load(Ordering::Acquire);
        let resident = current_bytes();
        keep(usage, resident, given_back);
        resident
    }

    fn keep(usage: Option<Usage>, resident: Option<u64>, given_back: u64) {
        LAST.set(resident.zip(usage).map(|(resident, usage)| Reading {
            resident,
            faults: usage.faults,
            given_back,
        }));
    }

    pub(super) fn forget_reading() {
        LAST.set(None);
    }

    /// What `getrusage` gives as the process's peak, the inherited one
    /// included.
    #[cfg(test)]
    pub(super) fn usage_peak() -> Option<u64> {
        usage().map(|u| u.max_rss)
    }

    /// Whether `getrusage` gives the mark, above the inherited peak.
    #[cfg(test)]
    pub(super) fn mark_known() -> bool {
        mark(usage()).is_some()
    }

    pub(super) fn memory_given_back() {
        GIVEN_BACK.fetch_add(1, Ordering::AcqRel);
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
        // Read byte by byte, without decoding it as a string to split: every
        // case reads it, and each instruction here is the harness's.
        let mut at = 0;
        let mut pages = || -> Option<u64> {
            while text.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            let start = at;
            let mut value = 0u64;
            while let Some(&digit) = text.get(at).filter(|b| b.is_ascii_digit()) {
                value = value
                    .checked_mul(10)?
                    .checked_add(u64::from(digit - b'0'))?;
                at += 1;
            }
            let ended = text.get(at).is_none_or(u8::is_ascii_whitespace);
            (at > start && ended).then_some(value)
        };
        let (size, resident) = (pages()?, pages()?);
        Some((
            size.checked_mul(page_size())?,
            resident.checked_mul(page_size())?,
        ))
    }

    pub(super) fn peak_bytes() -> Option<u64> {
        // A sampled case asks after every call: what is resident is not
        // needed, and `statm` would double the read's cost.
        mark(usage()).or_else(|| peak_and_current_bytes(false).0)
    }

    pub(super) fn peak_and_current_bytes(case_ends: bool) -> (Option<u64>, Option<u64>) {
        let usage = usage();
        match mark(usage) {
            Some(peak) => {
                // A case that faulted nothing in and dropped no memo ends
                // with what it started with: the read, half the cost of a
                // trivial case's memory figures, is saved.
                let now = match case_ends.then(|| unchanged_since(usage, true)) {
                    Some(Some(unchanged)) => Some(unchanged),
                    // Read after the mark, what is resident may have grown
                    // past it.
                    _ => read_and_keep(usage),
                };
                (Some(peak.max(now.unwrap_or_default())), now)
            }
            None => {
                let given_back = GIVEN_BACK.load(Ordering::Acquire);
                let mut buffer = [0u8; 4096];
                let Some(len) = read(proc().status.as_ref(), &mut buffer) else {
                    forget_reading();
                    return (None, None);
                };
                let text = &buffer[..len];
                let now = field_kib(text, b"VmRSS:");
                keep(usage, now, given_back);
                (field_kib(text, b"VmHWM:"), now)
            }
        }
    }

    pub(super) fn file_backed_bytes() -> Option<u64> {
        let mut buffer = [0u8; 4096];
        let len = read(proc().status.as_ref(), &mut buffer)?;
        field_kib(&buffer[..len], b"RssFile:")
    }

    pub(super) fn reset_peak_and_read() -> (bool, Option<u64>) {
        let Some(clear_refs) = proc().clear_refs.as_ref() else {
            FLOOR.store(UNKNOWN, Ordering::Relaxed);
            forget_reading();
            return (false, current_bytes());
        };
        let before = usage();
        let now = match unchanged_since(before, false) {
            Some(unchanged) => Some(unchanged),
            None => read_and_keep(before),
        };
        // A mark (and floor) no higher than what is resident is what a
        // reset would leave, which sets the mark to what is resident: the
        // write, a third of the cost, is saved between cases that kept
        // their memory. The kernel's mark lags what `statm` counts by a
        // few pages either way.
        if let (Some(Usage { max_rss: peak, .. }), Some(resident)) = (before, now)
            && peak <= resident
        {
            FLOOR.store(0, Ordering::Relaxed);
            return (true, now);
        }
        let reset = clear_refs.write_at(b"5", 0).is_ok();
        // Just after the reset the mark is what is resident: a figure
        // above it is the floor.
        let floor = match (reset, usage().map(|u| u.max_rss), now) {
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

    pub(super) fn peak_and_current_bytes(_case_ends: bool) -> (Option<u64>, Option<u64>) {
        (None, current_bytes())
    }

    pub(super) fn forget_reading() {}

    pub(super) fn memory_given_back() {}

    pub(super) fn reset_peak_and_read() -> (bool, Option<u64>) {
        (false, current_bytes())
    }

    pub(super) fn file_backed_bytes() -> Option<u64> {
        None
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
    fn statm_gives_the_address_space_and_what_is_resident_in_bytes() {
        let page = imp::statm_bytes(b"1 1 0 0 0 0 0\n").unwrap().0;
        assert!(page.is_power_of_two(), "{page}");
        assert_eq!(
            imp::statm_bytes(b"4242 1187 630 1 0 318 0\n"),
            Some((4242 * page, 1187 * page))
        );
        assert_eq!(imp::statm_bytes(b"12  34"), Some((12 * page, 34 * page)));
        for bad in [
            &b""[..],
            b"12",
            b"-1 2",
            b"12 3x",
            b"99999999999999999999 1",
        ] {
            assert_eq!(
                imp::statm_bytes(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let own = std::fs::read("/proc/self/statm").unwrap();
        let (size, resident) = imp::statm_bytes(&own).unwrap();
        assert!(resident > 0 && resident <= size, "{size} {resident}");
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
            let (before, now) = peak_and_current_bytes(false);
            let mark = status_mark();
            let (after, _) = peak_and_current_bytes(false);
            let (before, now, after) = (before?, now?, after?);
            (before >= now && before <= mark + slack && mark <= after + slack)
                .then_some((before, mark))
        });
        drop(buffer);
        let (peak, mark) = agreed.expect("five reads of the peak disagreed with VmHWM");
        assert!(peak >= 256 << 20, "peak {peak}, VmHWM {mark}");
    }

    #[test]
    fn what_a_case_ended_with_is_read_again_once_the_thread_faulted() {
        if !reset_peak() {
            return; // no clear_refs here (gVisor): every start reads
        }
        // Other tests of this process allocate and free meanwhile: some one
        // of five tries sees the growth. Each reads its end afresh: the
        // buffer a try drops is given back without the harness's word, so
        // the next try's end would reuse the last start's reading, which
        // held it, and the tries would not be independent.
        let grown = (0..5).any(|_| {
            forget_reading();
            let (_, ended) = peak_and_current_bytes(true);
            let buffer = std::hint::black_box(vec![1u8; 64 << 20]);
            let (_, started) = reset_peak_and_read();
            drop(buffer);
            started.unwrap() >= ended.unwrap() + (32 << 20)
        });
        assert!(
            grown,
            "a start reused a reading older than 64 MiB of faults"
        );
    }

    /// Memory that lifts what is resident above the peak the process
    /// inherited (cargo's), so that `getrusage` gives the mark and a case's
    /// end may reuse its start's reading; `None` where the kernel keeps no
    /// mark to reset (gVisor), and every end reads. Other tests of this
    /// process free memory and reset the mark meanwhile: some one of five
    /// tries, each further above the last, lifts it.
    fn above_the_inherited_peak() -> Option<Vec<Vec<u8>>> {
        if !reset_peak() {
            return None;
        }
        let mut ballast = Vec::new();
        for _ in 0..5 {
            let inherited = imp::usage_peak()?;
            let resident = current_bytes()?;
            let more = usize::try_from(inherited.saturating_sub(resident)).ok()? + (64 << 20);
            ballast.push(std::hint::black_box(vec![1u8; more]));
            if reset_peak() && imp::mark_known() {
                return Some(ballast);
            }
        }
        panic!("the mark stayed at the inherited peak through five tries");
    }

    /// Runs `case` between a case's start and end readings, some one of
    /// five times until `judge` accepts what was resident at each: other
    /// tests of this process allocate and free meanwhile. A first round
    /// faults in the code and stack of the readings and of `case`, which
    /// would make an end read again whatever the case did.
    fn some_case(mut case: impl FnMut(), judge: impl Fn(u64, u64) -> bool) -> bool {
        let mut round = || {
            let (_, started) = reset_peak_and_read();
            case();
            let (_, ended) = peak_and_current_bytes(true);
            (started.unwrap(), ended.unwrap())
        };
        round();
        (0..5).any(|_| {
            let (started, ended) = round();
            judge(started, ended)
        })
    }

    #[test]
    fn a_case_end_reads_again_once_another_thread_grew_memory() {
        let Some(_ballast) = above_the_inherited_peak() else {
            return;
        };
        // A thread started before the case, so that this one takes none
        // of the faults: its own, as it starts, would tell.
        let (grow, grown) = (std::sync::mpsc::channel(), std::sync::mpsc::channel());
        let (go, told) = grow;
        let (done, heard) = grown;
        let grower = std::thread::spawn(move || {
            let mut held = Vec::new();
            while told.recv().is_ok() {
                held.push(std::hint::black_box(vec![1u8; 64 << 20]));
                done.send(()).unwrap();
            }
        });
        let seen = some_case(
            || {
                go.send(()).unwrap();
                heard.recv().unwrap();
            },
            |started, ended| ended >= started + (32 << 20),
        );
        drop(go);
        grower.join().unwrap();
        assert!(
            seen,
            "an end reused a start's reading below 64 MiB another thread faulted in"
        );
    }

    #[test]
    fn a_case_end_reads_again_once_memory_was_given_back() {
        let Some(_ballast) = above_the_inherited_peak() else {
            return;
        };
        let mut buffers: Vec<Vec<u8>> = (0..6)
            .map(|_| std::hint::black_box(vec![1u8; 128 << 20]))
            .collect();
        let seen = some_case(
            || {
                // glibc gives a block this large back to the system when
                // freed; the harness says so when it drops a memo's value.
                drop(buffers.pop());
                memory_given_back();
            },
            |started, ended| ended + (64 << 20) <= started,
        );
        assert!(
            seen,
            "an end reused a start's reading of 128 MiB given back since"
        );
    }

    #[test]
    fn a_case_that_changed_nothing_ends_with_its_start_reading() {
        let Some(_ballast) = above_the_inherited_peak() else {
            return;
        };
        assert!(
            some_case(|| {}, |started, ended| ended == started),
            "every end read again"
        );
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

/// Gives the C allocator's free memory back to the system, so that a
/// case's resident figures start from what is live. glibc keeps freed
/// blocks of up to 32 MiB in its heap (its mmap threshold rises to the
/// largest block freed), so a sweep's earlier sizes would stay resident
/// under its later sizes' peaks and read as a fixed part. Elsewhere
/// (another C library, or a global allocator of the bench's own) it does
/// nothing.
pub(crate) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and may be called at any time;
    // it only returns free pages of the allocator's arenas.
    unsafe {
        libc::malloc_trim(0);
    }
    memory_given_back();
}
