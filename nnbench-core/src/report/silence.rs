//! Quiet for code that prints on its own: criterion writes its estimates to
//! stdout with no setting to stop it, so a quiet run points the process's
//! stdout at `/dev/null` while criterion runs.

/// Runs `f` with stdout discarded, restored afterwards even if `f` panics.
#[cfg(unix)]
pub(crate) fn stdout<T>(f: impl FnOnce() -> T) -> T {
    use std::io::Write as _;
    use std::os::fd::AsRawFd as _;

    /// Puts the saved stdout back.
    struct Restore(libc::c_int);

    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = std::io::stdout().flush();
            // SAFETY: `self.0` is the duplicate of stdout made below and
            // owned by this guard alone.
            unsafe {
                libc::dup2(self.0, libc::STDOUT_FILENO);
                libc::close(self.0);
            }
        }
    }

    let _ = std::io::stdout().flush();
    let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") else {
        return f();
    };
    // SAFETY: duplicating and replacing the process's own stdout descriptor;
    // the duplicate is closed by `Restore`.
    let saved = unsafe { libc::dup(libc::STDOUT_FILENO) };
    if saved < 0 {
        return f();
    }
    let restore = Restore(saved);
    // SAFETY: `null` is an open descriptor for the duration of the call.
    if unsafe { libc::dup2(null.as_raw_fd(), libc::STDOUT_FILENO) } < 0 {
        drop(restore);
        return f();
    }
    drop(null);
    let out = f();
    drop(restore);
    out
}

/// Elsewhere stdout stays as it is.
#[cfg(not(unix))]
pub(crate) fn stdout<T>(f: impl FnOnce() -> T) -> T {
    f()
}
