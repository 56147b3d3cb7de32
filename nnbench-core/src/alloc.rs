//! Heap tracking, opt-in: install [`TrackingAllocator`] as the bench
//! binary's global allocator and every case records its peak heap and its
//! number of allocations.
//!
//! ```
//! #[global_allocator]
//! static ALLOC: nnbench::alloc::TrackingAllocator = nnbench::alloc::TrackingAllocator::system();
//! # fn main() {}
//! ```
//!
//! The counters are process-wide atomics updated without locks (four atomic
//! additions per allocation and its deallocation); what they add to an
//! allocation is on the book's page of measured figures (its Memory
//! section, `scripts/figures.sh memory`). Use one tracker, as the global
//! allocator: every instance counts into the same counters.
//! Without it, the `heap_*` fields of records are `null`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
static ALLOCATED: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A global allocator that counts what it hands out, then delegates to
/// `A` (the system allocator by default, or any other, such as mimalloc).
///
/// # Example
///
/// ```
/// use nnbench::alloc::TrackingAllocator;
///
/// #[global_allocator]
/// static ALLOC: TrackingAllocator = TrackingAllocator::system();
///
/// fn main() {
///     nnbench::alloc::reset_peak();
///     let before = nnbench::alloc::stats().unwrap().current_bytes;
///     let buffer = vec![0u8; 1 << 20];
///     let stats = nnbench::alloc::stats().unwrap();
///     assert!(stats.peak_bytes >= before + (1 << 20));
///     drop(buffer);
/// }
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct TrackingAllocator<A = System> {
    inner: A,
}

impl TrackingAllocator<System> {
    /// Tracks the system allocator.
    ///
    /// # Example
    ///
    /// ```
    /// static ALLOC: nnbench::alloc::TrackingAllocator = nnbench::alloc::TrackingAllocator::system();
    /// ```
    pub const fn system() -> Self {
        Self { inner: System }
    }
}

impl<A> TrackingAllocator<A> {
    /// Tracks `inner`.
    ///
    /// # Example
    ///
    /// ```
    /// use std::alloc::System;
    /// static ALLOC: nnbench::alloc::TrackingAllocator<System> =
    ///     nnbench::alloc::TrackingAllocator::new(System);
    /// ```
    pub const fn new(inner: A) -> Self {
        Self { inner }
    }
}

#[inline]
fn grew(bytes: usize) {
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
    ALLOCATIONS.fetch_add(1, Relaxed);
    ALLOCATED.fetch_add(bytes as u64, Relaxed);
    let now = CURRENT.fetch_add(bytes, Relaxed) + bytes;
    if now > PEAK.load(Relaxed) {
        PEAK.fetch_max(now, Relaxed);
    }
}

#[inline]
fn shrank(bytes: usize) {
    CURRENT.fetch_sub(bytes, Relaxed);
}

// SAFETY: every call is forwarded to `inner` with the caller's arguments;
// the counters only observe sizes and never touch the memory.
unsafe impl<A: GlobalAlloc> GlobalAlloc for TrackingAllocator<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        let ptr = unsafe { self.inner.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as received.
        let ptr = unsafe { self.inner.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { self.inner.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as received.
        let new = unsafe { self.inner.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            shrank(layout.size());
            grew(new_size);
        }
        new
    }
}

/// The heap counters, since the process started or the last [`reset_peak`].
///
/// # Example
///
/// ```
/// if let Some(heap) = nnbench::alloc::stats() {
///     println!("{} bytes live, peak {}", heap.current_bytes, heap.peak_bytes);
/// }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct HeapStats {
    /// Bytes allocated and not yet freed.
    pub current_bytes: u64,
    /// The most `current_bytes` has been.
    pub peak_bytes: u64,
    /// Allocations (and reallocations) made.
    pub allocations: u64,
    /// Bytes those allocations asked for.
    pub allocated_bytes: u64,
}

/// The counters, or `None` when no [`TrackingAllocator`] has allocated yet
/// (it is not the global allocator).
///
/// # Example
///
/// ```
/// // Doc tests do not install the tracker:
/// assert_eq!(nnbench::alloc::stats(), None);
/// ```
pub fn stats() -> Option<HeapStats> {
    is_installed().then(|| HeapStats {
        current_bytes: CURRENT.load(Relaxed) as u64,
        peak_bytes: PEAK.load(Relaxed) as u64,
        allocations: ALLOCATIONS.load(Relaxed),
        allocated_bytes: ALLOCATED.load(Relaxed),
    })
}

/// Starts a new measurement: the peak becomes the current size and the
/// allocation counts restart from zero. The runner does this before each case.
///
/// # Example
///
/// ```
/// nnbench::alloc::reset_peak();
/// ```
pub fn reset_peak() {
    PEAK.store(CURRENT.load(Relaxed), Relaxed);
    ALLOCATIONS.store(0, Relaxed);
    ALLOCATED.store(0, Relaxed);
}

/// Forgets the peak so far (it becomes the current size), keeping the
/// counts: what ran since the last look is not the case's.
pub(crate) fn forget_peak() {
    PEAK.store(CURRENT.load(Relaxed), Relaxed);
}

/// Whether a [`TrackingAllocator`] is counting this process's allocations.
///
/// # Example
///
/// ```
/// if !nnbench::alloc::is_installed() {
///     println!("heap figures need #[global_allocator] = TrackingAllocator");
/// }
/// ```
pub fn is_installed() -> bool {
    INSTALLED.load(Relaxed)
}
