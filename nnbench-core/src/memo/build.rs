//! Which build of the bench computed a disk entry: the digest of the
//! executable, so that two builds of one bench (a paired run's sides,
//! bisect's commits) can keep their fixtures apart, and a comparison can
//! say when a value was computed by another build than the one measured.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, Mutex, PoisonError};

/// The variable that, set to `1` in a bench's environment, keeps its
/// fixtures per build: its memos' disk entries are keyed by the build
/// (the digest of its executable) too, unless a memo declares
/// [`Memo::build_independent`](crate::Memo::build_independent). A paired
/// run's workers (and so `nnbench bisect`'s) keep them so without it; two
/// builds run by hand under it keep apart the same way.
///
/// # Example
///
/// ```no_run
/// std::process::Command::new("target/release/deps/sweep-0123")
///     .env(nnbench::memo::PER_BUILD_ENV, "1")
///     .arg("--bench")
///     .status()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub const PER_BUILD_ENV: &str = "NNBENCH_MEMO_PER_BUILD";

/// This executable's digest (BLAKE3, 16 bytes in hex), read once: `None`
/// where it cannot be read, and then no entry is said to come from
/// another build.
pub(crate) fn this_build() -> Option<&'static str> {
    static DIGEST: LazyLock<Option<String>> = LazyLock::new(|| {
        let exe = std::env::current_exe().ok()?;
        let mut hasher = blake3::Hasher::new();
        hasher.update_reader(std::fs::File::open(exe).ok()?).ok()?;
        Some(hasher.finalize().to_hex()[..32].to_owned())
    });
    DIGEST.as_deref()
}

/// The side of a paired run this process measures, where both sides are
/// copies of one build: its fixtures are kept apart from the other
/// side's, so that each side computes its own and the two do the same
/// work (one side loading what the other computed would hold less memory
/// and read as an improvement of the same code).
static TWIN: Mutex<Option<String>> = Mutex::new(None);

/// Keeps this process's fixtures apart as `side`'s, or not (`None`), as a
/// paired run's order says.
pub(crate) fn keep_apart_as(side: Option<&str>) {
    *TWIN.lock().unwrap_or_else(PoisonError::into_inner) = side.map(str::to_owned);
}

/// What a disk entry of this process's fixtures is keyed by where they
/// are kept per build: this build's digest, and the side where a paired
/// run's two sides are one build ([`keep_apart_as`]).
pub(crate) fn build_key() -> Option<String> {
    let digest = this_build()?;
    Some(
        match TWIN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_deref()
        {
            Some(side) => format!("{digest}+{side}"),
            None => digest.to_owned(),
        },
    )
}

/// Set by a paired run's order to its workers (rather than by their
/// environment, which would move every worker's stack by its length).
static ORDERED: AtomicBool = AtomicBool::new(false);

/// Keeps this process's fixtures per build, or not, as a paired run's
/// order says.
pub(crate) fn keep_per_build(on: bool) {
    ORDERED.store(on, Ordering::Relaxed);
}

/// Whether this process keeps its fixtures per build: as a paired run's
/// order says, or as [`PER_BUILD_ENV`] does.
pub(crate) fn per_build() -> bool {
    static ON: LazyLock<bool> =
        LazyLock::new(|| std::env::var(PER_BUILD_ENV).is_ok_and(|on| !on.is_empty() && on != "0"));
    ORDERED.load(Ordering::Relaxed) || *ON
}
