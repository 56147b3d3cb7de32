//! The fast path of `.npy` loading: the data of an array whose elements are
//! stored as this machine holds them is read from the file straight into
//! the array's allocation, advised for transparent huge pages, so that an
//! array costs one copy from the page cache and a page fault per huge page
//! instead of one per 4 KiB page.

use std::any::TypeId;
use std::fs::File;
use std::io;

/// The `.npy` descriptor of `A` as this machine stores it, for the element
/// types whose every bit pattern is a value (so raw bytes are safe to take).
pub(crate) fn native_descr<A: 'static>() -> Option<&'static str> {
    if cfg!(target_endian = "big") {
        return None;
    }
    let id = TypeId::of::<A>();
    let table: [(TypeId, &str); 10] = [
        (TypeId::of::<f64>(), "<f8"),
        (TypeId::of::<f32>(), "<f4"),
        (TypeId::of::<i64>(), "<i8"),
        (TypeId::of::<i32>(), "<i4"),
        (TypeId::of::<i16>(), "<i2"),
        (TypeId::of::<i8>(), "|i1"),
        (TypeId::of::<u64>(), "<u8"),
        (TypeId::of::<u32>(), "<u4"),
        (TypeId::of::<u16>(), "<u2"),
        (TypeId::of::<u8>(), "|u1"),
    ];
    table.iter().find(|(t, _)| *t == id).map(|(_, d)| *d)
}

/// Reads `len` elements of `A` from `file` at `offset` into a new vector.
///
/// # Safety
///
/// `A` must be one of the types [`native_descr`] knows: plain numbers, for
/// which any bytes are a valid value.
pub(crate) unsafe fn read_elements<A>(file: &File, offset: u64, len: usize) -> io::Result<Vec<A>> {
    let bytes = len
        .checked_mul(std::mem::size_of::<A>())
        .ok_or_else(|| io::Error::other("the array's size overflows"))?;
    let mut data: Vec<A> = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e.to_string()))?;
    let start = data.as_mut_ptr().cast::<u8>();
    advise_huge_pages(start, bytes);
    read_at(file, start, bytes, offset)?;
    // SAFETY: `read_at` filled all `bytes` of the reserved capacity, and any
    // bytes are a valid `A` (the caller's promise).
    unsafe { data.set_len(len) };
    Ok(data)
}

/// Asks the kernel to back the 2 MiB-aligned part of `[start, start + len)`
/// with huge pages before it is touched. Where it cannot, nothing changes.
///
/// Only from 32 MiB: glibc serves allocations that large with a mapping of
/// their own (its mmap threshold never rises past 32 MiB), so the advice
/// ends with the array instead of staying on heap memory that later, small
/// allocations reuse.
fn advise_huge_pages(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if len < 32 << 20 {
            return;
        }
        let first = (start as usize).next_multiple_of(HUGE);
        let end = (start as usize + len) / HUGE * HUGE;
        if end > first {
            // SAFETY: the range lies within an allocation this process owns;
            // the advice changes how it is backed, not its contents.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

/// Fills `[start, start + len)` from `file` at `offset`, retrying short and
/// interrupted reads; a file that ends first is an error.
fn read_at(file: &File, start: *mut u8, len: usize, offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        let mut done = 0usize;
        while done < len {
            let at = libc::off_t::try_from(offset + done as u64)
                .map_err(|_| io::Error::other("offset past the file size limit"))?;
            // SAFETY: the destination is `len - done` writable bytes of the
            // caller's allocation; the kernel writes no further.
            let n = unsafe {
                libc::pread(
                    file.as_raw_fd(),
                    start.add(done).cast::<libc::c_void>(),
                    (len - done).min(1 << 30),
                    at,
                )
            };
            match n {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n if n < 0 => {
                    let error = io::Error::last_os_error();
                    if error.kind() != io::ErrorKind::Interrupted {
                        return Err(error);
                    }
                }
                n => done += n as usize,
            }
        }
        Ok(())
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file.try_clone()?;
        file.seek(SeekFrom::Start(offset))?;
        // SAFETY: zeroing makes the bytes initialized before they are lent out.
        let buf = unsafe {
            std::ptr::write_bytes(start, 0, len);
            std::slice::from_raw_parts_mut(start, len)
        };
        file.read_exact(buf)
    }
}
