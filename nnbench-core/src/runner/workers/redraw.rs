//! What a worker kept for several runs draws anew for each: the CPU it
//! runs on and where its stack and heap data land. A fresh process draws
//! these once; a paired run that keeps its workers (so that their memos
//! are built once) would otherwise compare one draw of each build for
//! every round, and the alignment of a build's data alone moves some
//! calls by a few percent (see the paired run's layout padding).

/// Runs `f` below `bytes / 16` frames of at least 16 bytes each (the
/// stack's alignment; an unoptimized build's frames are larger) and with
/// `bytes` allocated, and kept, on the heap: where the data of what `f`
/// runs lands moves with `bytes`.
pub(crate) fn padded<R>(bytes: usize, f: impl FnOnce() -> R) -> R {
    let heap: Vec<u8> = Vec::with_capacity(bytes);
    let out = below(bytes / 16, f);
    drop(std::hint::black_box(heap));
    out
}

/// Calls `f` below `frames` frames of its own.
#[inline(never)]
fn below<R>(frames: usize, f: impl FnOnce() -> R) -> R {
    // Kept alive across the call below, so that the frame is neither
    // folded into its caller nor made a tail call.
    let pad = std::hint::black_box([0u8; 16]);
    let out = if frames == 0 {
        f()
    } else {
        below(frames - 1, f)
    };
    std::hint::black_box(pad);
    out
}

pub(crate) use crate::measure::placement::pin_this_thread;

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn stack_address() -> usize {
        let here = 0u8;
        std::hint::black_box(&here) as *const u8 as usize
    }

    #[test]
    fn padding_moves_the_stack_by_its_bytes() {
        let none = padded(0, stack_address);
        let some = padded(4000, stack_address);
        let moved = none - some;
        assert!((4000..=64_000).contains(&moved), "moved {moved} bytes");
        assert_eq!(padded(0, stack_address), none, "no padding, no move");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_pinned_thread_runs_on_its_cpu_and_its_children_too() {
        let cpus = super::super::affinity::allowed_cpus();
        let cpu = *cpus.last().expect("this process runs somewhere");
        let seen = std::thread::spawn(move || {
            pin_this_thread(&[cpu]);
            let child = std::thread::spawn(super::super::affinity::allowed_cpus)
                .join()
                .expect("the child thread ends");
            pin_this_thread(&cpus);
            (child, super::super::affinity::allowed_cpus())
        })
        .join()
        .expect("the thread ends");
        assert_eq!(seen.0, [cpu]);
        assert_eq!(seen.1, super::super::affinity::allowed_cpus());
    }
}
