//! Hardware instruction counts (`instructions:u`), where the processor
//! has a performance monitoring unit and the kernel lets a process use
//! it: the instructions a thread retired in user space, counted by the
//! CPU itself, beside the wall and CPU clocks of every timed sample.
//! Virtual machines (the runners of most CI services among them) usually
//! have none; then the figure is absent and a counting run says why.
//!
//! Each thread opens its own counter on first use (`perf_event_open` for
//! the calling thread, user space only), kept for its life: reading it is
//! one system call.

use std::cell::RefCell;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PERF_TYPE_HARDWARE`.
const TYPE_HARDWARE: u32 = 0;
/// `PERF_COUNT_HW_INSTRUCTIONS`.
const COUNT_INSTRUCTIONS: u64 = 1;
/// `exclude_kernel` and `exclude_hv`, bits 5 and 6 of the attributes'
/// flags: user space alone, as `instructions:u`.
const USER_ONLY: u64 = (1 << 5) | (1 << 6);
/// `PERF_FLAG_FD_CLOEXEC`.
const FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// The first version of `struct perf_event_attr` (`PERF_ATTR_SIZE_VER0`,
/// 64 bytes), which every kernel with perf events takes: the fields it
/// has, in its order.
#[repr(C)]
#[derive(Default)]
struct Attributes {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

thread_local! {
    /// This thread's counter, or why it has none.
    static COUNTER: RefCell<Option<Result<OwnedFd, String>>> = const { RefCell::new(None) };
}

/// The instructions this thread has retired in user space since its
/// counter opened; `None` where there is no counter.
#[inline]
pub(crate) fn instructions() -> Option<u64> {
    COUNTER.with(|counter| {
        let mut counter = counter.borrow_mut();
        let fd = counter.get_or_insert_with(open).as_ref().ok()?;
        read(fd)
    })
}

/// Why this thread has no hardware instruction counter; `None` when it
/// has one.
pub(crate) fn unavailable() -> Option<String> {
    COUNTER.with(|counter| {
        let mut counter = counter.borrow_mut();
        counter.get_or_insert_with(open).as_ref().err().cloned()
    })
}

fn open() -> Result<OwnedFd, String> {
    let attributes = Attributes {
        kind: TYPE_HARDWARE,
        size: std::mem::size_of::<Attributes>() as u32,
        config: COUNT_INSTRUCTIONS,
        flags: USER_ONLY,
        ..Attributes::default()
    };
    // SAFETY: the kernel reads `size` bytes of the attributes, which live
    // until the call returns; pid 0 and cpu -1 count this thread wherever
    // it runs; no group.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attributes as *const Attributes,
            0 as libc::pid_t,
            -1 as libc::c_int,
            -1 as libc::c_int,
            FD_CLOEXEC,
        )
    };
    if fd < 0 {
        let error = std::io::Error::last_os_error();
        return Err(match error.raw_os_error() {
            Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV) => {
                format!(
                    "the processor has no instruction counter that Linux can use here ({error})"
                )
            }
            Some(libc::EACCES | libc::EPERM) => format!(
                "the kernel does not let this process count ({error}; /proc/sys/kernel/perf_event_paranoid above 2?)"
            ),
            _ => format!("perf_event_open failed ({error})"),
        });
    }
    let fd = i32::try_from(fd).map_err(|_| "perf_event_open returned no descriptor".to_owned())?;
    // SAFETY: perf_event_open returned this new descriptor, owned by no one else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    read(&fd).ok_or_else(|| "the instruction counter cannot be read".to_owned())?;
    Ok(fd)
}

fn read(fd: &OwnedFd) -> Option<u64> {
    let mut count = 0u64;
    // SAFETY: reads at most 8 bytes into the u64 on this stack frame.
    let read = unsafe {
        libc::read(
            fd.as_raw_fd(),
            (&mut count as *mut u64).cast(),
            std::mem::size_of::<u64>(),
        )
    };
    (read == 8).then_some(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attributes_are_the_kernels_first_layout() {
        assert_eq!(std::mem::size_of::<Attributes>(), 64);
    }

    #[test]
    fn a_counter_counts_more_for_more_work_or_says_why_there_is_none() {
        let Some(before) = instructions() else {
            let why = unavailable().expect("a reason where there is no counter");
            assert!(!why.is_empty());
            return;
        };
        let work = (0..100_000u64).fold(0, |a, i| std::hint::black_box(a ^ i));
        std::hint::black_box(work);
        let after = instructions().expect("the counter stays");
        assert!(after - before > 100_000, "{before} -> {after}");
    }
}
