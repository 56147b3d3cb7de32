//! Quiet for code that prints on its own: criterion writes its progress to
//! stderr and its estimates to stdout with no setting to stop either, so a
//! quiet run points the process's stdout and stderr at `/dev/null` while
//! criterion runs.

/// Runs `f` with stdout and stderr discarded, restored afterwards even if
/// `f` panics.
/// Quiet runs on several threads share one redirection: the first to start
/// makes it, the last to finish undoes it.
#[cfg(unix)]
pub(crate) fn output<T>(f: impl FnOnce() -> T) -> T {
    let _silenced = unix::Silenced::begin();
    f()
}

/// Elsewhere the output stays as it is.
#[cfg(not(unix))]
pub(crate) fn output<T>(f: impl FnOnce() -> T) -> T {
    f()
}

#[cfg(unix)]
mod unix {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;
    use std::sync::{Mutex, PoisonError};

    const STREAMS: [libc::c_int; 2] = [libc::STDOUT_FILENO, libc::STDERR_FILENO];

    /// How many quiet sections are open, and the saved streams while any is.
    static OPEN: Mutex<(usize, Option<[libc::c_int; 2]>)> = Mutex::new((0, None));

    pub(super) struct Silenced(());

    impl Silenced {
        pub(super) fn begin() -> Self {
            let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
            if open.0 == 0 {
                open.1 = redirect_to_null();
            }
            open.0 += 1;
            Silenced(())
        }
    }

    impl Drop for Silenced {
        fn drop(&mut self) {
            let mut open = OPEN.lock().unwrap_or_else(PoisonError::into_inner);
            open.0 -= 1;
            if open.0 == 0
                && let Some(saved) = open.1.take()
            {
                let _ = std::io::stdout().flush();
                for (stream, saved) in STREAMS.into_iter().zip(saved) {
                    // SAFETY: `saved` is the duplicate of `stream` made by
                    // `redirect_to_null`, owned here alone.
                    unsafe {
                        libc::dup2(saved, stream);
                        libc::close(saved);
                    }
                }
            }
        }
    }

    /// Points stdout and stderr at `/dev/null`; returns the saved
    /// originals, or `None` (both left as they are) when that cannot be done.
    fn redirect_to_null() -> Option<[libc::c_int; 2]> {
        let _ = std::io::stdout().flush();
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .ok()?;
        // SAFETY: duplicating the process's own descriptors.
        let saved = STREAMS.map(|stream| unsafe { libc::dup(stream) });
        let redirected = saved.iter().all(|&s| s >= 0)
            && STREAMS.iter().all(|&stream| {
                // SAFETY: both descriptors are open.
                unsafe { libc::dup2(null.as_raw_fd(), stream) >= 0 }
            });
        if redirected {
            return Some(saved);
        }
        for (stream, saved) in STREAMS.into_iter().zip(saved) {
            if saved >= 0 {
                // SAFETY: putting back and closing what was duplicated above.
                unsafe {
                    libc::dup2(saved, stream);
                    libc::close(saved);
                }
            }
        }
        None
    }
}
