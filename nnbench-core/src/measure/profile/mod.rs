//! Flamegraphs of a case's calls (`--profile`): a sampling profiler runs
//! while the calls are made, and only the stacks of the calls are drawn.
//!
//! The profiler (pprof) interrupts the process about a thousand times per
//! second of CPU time and walks the stack of the thread it interrupted.
//! Which of those stacks are the case's is decided afterwards, in
//! [`folded`]: the calls run inside [`within`], so its frame marks where
//! the case begins; the harness's own threads (the prefetcher loading the
//! next case's memos among them) are left out by name.

// Without a profiler the stacks are never folded, but the folding keeps
// its unit tests in every build.
#[cfg_attr(not(all(unix, feature = "profile")), allow(dead_code, unused_imports))]
mod folded;

#[cfg_attr(not(all(unix, feature = "profile")), allow(unused_imports))]
pub(crate) use folded::{Folded, Stack, differential};

/// Why no profile can be taken in this build, where none can.
#[cfg(not(all(unix, feature = "profile")))]
pub(crate) const UNAVAILABLE: &str = if cfg!(unix) {
    "built without nnbench's `profile` feature, which takes flamegraphs: \
     nnbench = { version = \"0.1\", features = [\"profile\"] }"
} else {
    "profiles are taken on Unix only"
};

/// How often the profiler interrupts, per second of CPU time: prime, so
/// that it does not beat with work that repeats at a round period.
#[cfg(all(unix, feature = "profile"))]
const FREQUENCY: i32 = 997;

/// Libraries in which the profiler does not walk the stack: unwinding
/// from inside them can deadlock on the locks they hold.
#[cfg(all(unix, feature = "profile"))]
const BLOCKLIST: [&str; 4] = ["libc", "libgcc", "pthread", "vdso"];

/// The full name of [`within`], as frames name it.
#[cfg_attr(not(all(unix, feature = "profile")), allow(dead_code))]
const WITHIN: &str = concat!(module_path!(), "::within");

/// Runs `call` in a frame of its own, so that the profile finds where the
/// case's stack begins. Not generic, so that its frame has one name.
#[inline(never)]
pub(crate) fn within(call: &mut dyn FnMut()) {
    call();
    // Keeps the call from becoming a jump, which would leave no frame.
    std::hint::black_box(());
}

/// Makes the profiler's tables before the first case is measured. They
/// are made as it first starts and again as each profile stops, and kept
/// resident: made first inside a case, they would count in that case's
/// memory.
pub(crate) fn prepare() {
    // One that cannot start now says why when a case starts it.
    #[cfg(all(unix, feature = "profile"))]
    drop(pprof::ProfilerGuardBuilder::default().frequency(1).build());
}

/// A profiler sampling the whole process, until [`finish`](Self::finish).
pub(crate) struct Profiler {
    #[cfg(all(unix, feature = "profile"))]
    guard: pprof::ProfilerGuard<'static>,
    /// The thread that started it, whose stacks outside [`within`] are
    /// the harness's.
    #[cfg(all(unix, feature = "profile"))]
    caller: u64,
}

impl Profiler {
    /// Starts sampling; says why when it cannot (another profiler runs in
    /// this process, the system refused the timer, or this is not Unix).
    pub(crate) fn start() -> Result<Self, String> {
        #[cfg(all(unix, feature = "profile"))]
        {
            let guard = pprof::ProfilerGuardBuilder::default()
                .frequency(FREQUENCY)
                .blocklist(&BLOCKLIST)
                .build()
                .map_err(|error| match error {
                    pprof::Error::Running => {
                        "another profiler is already sampling this process".to_owned()
                    }
                    other => format!("the profiler could not start: {other}"),
                })?;
            Ok(Self {
                guard,
                caller: this_thread(),
            })
        }
        #[cfg(not(all(unix, feature = "profile")))]
        {
            Err(UNAVAILABLE.to_owned())
        }
    }

    /// Stops sampling and folds what was sampled into the case's stacks.
    pub(crate) fn finish(self) -> Result<Folded, String> {
        #[cfg(all(unix, feature = "profile"))]
        {
            let report =
                self.guard.report().build().map_err(|error| {
                    format!("the profiler's samples could not be read: {error}")
                })?;
            drop(self.guard);
            let stacks = report.data.iter().map(|(frames, &count)| Stack {
                thread: &frames.thread_name,
                on_caller: frames.thread_id == self.caller,
                frames: frames
                    .frames
                    .iter()
                    .flatten()
                    .map(pprof::Symbol::name)
                    .collect(),
                count: u64::try_from(count).unwrap_or(0),
            });
            Ok(Folded::new(stacks))
        }
        #[cfg(not(all(unix, feature = "profile")))]
        {
            Ok(Folded::default())
        }
    }
}

/// This thread as the profiler names threads.
#[cfg(all(unix, feature = "profile"))]
fn this_thread() -> u64 {
    // SAFETY: `pthread_self` has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}
