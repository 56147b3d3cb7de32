//! Memos: fixtures (a model, a dataset) described by a small key and computed
//! lazily, once, through one global cache.
//!
//! Two equal memo descriptions (`Hash + Eq`, and of the same type) share one
//! cache entry. A value is computed when the first case that needs it starts;
//! concurrent resolves of one memo compute it once and the others wait for
//! that value. A failed compute (an `Err` or a panic) is remembered until the
//! memo is evicted, so every case that needs it fails with the same cause
//! instead of paying for the failure again.

mod build;
mod cache;
pub(crate) mod definition;
pub(crate) mod disk;
mod distinct;
mod erased;
mod error;
mod graph;
pub(crate) mod journal;
mod made_from;
mod summary;
#[cfg(test)]
pub(crate) mod test_memos;

pub use build::PER_BUILD_ENV;
// The trait is documented at the crate's root, where bench authors name it.
pub(crate) use build::{keep_apart_as, keep_per_build, per_build, this_build};
pub use cache::{MemoStats, TypeStats};
#[doc(hidden)]
pub use definition::Memo;
pub use disk::DiskTier;
pub use disk::{DiskEntry, Pruned};
pub use error::MemoError;

#[cfg(test)]
use cache::global;
pub(crate) use cache::{Resolution, Sizes, begin_run, global as global_cache, resolve_erased};
pub(crate) use distinct::Distinct;
pub(crate) use erased::ErasedMemo;

use std::sync::Arc;

use crate::Result;

/// A file's path, length, modification time and identity (its inode and
/// when that last changed): what [`Memo::fingerprint`] returns for a memo
/// computed from that file. Called from a fingerprint, it notes the file,
/// so that the values built from the memo are checked against it with a
/// `stat`: a file rewritten with its old length and time put back (`cp -p`,
/// `rsync -a`, `tar x`) is another file, and so is the same relative path
/// read from another folder. A directory is fingerprinted by every file
/// under it, and by the directory itself, which changes when a file is
/// added, removed or renamed.
///
/// # Errors
///
/// When the metadata of the file, or of a file under the directory,
/// cannot be read (it is missing, say).
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("w.bin");
/// std::fs::write(&path, b"1234").unwrap();
/// let before = nnbench::memo::file_fingerprint(&path).unwrap();
/// std::fs::write(&path, b"12345").unwrap();
/// assert_ne!(nnbench::memo::file_fingerprint(&path).unwrap(), before);
/// let folder = nnbench::memo::file_fingerprint(dir.path()).unwrap();
/// std::fs::write(dir.path().join("more.bin"), b"1").unwrap();
/// assert_ne!(nnbench::memo::file_fingerprint(dir.path()).unwrap(), folder);
/// ```
pub fn file_fingerprint(path: impl AsRef<std::path::Path>) -> Result<String> {
    let path = path.as_ref();
    fingerprint_of(path)
        .map_err(|e| crate::Error::from(e).context(format!("fingerprint of {}", path.display())))
}

/// [`file_fingerprint`] of `path`, a file or a directory.
fn fingerprint_of(path: &std::path::Path) -> std::io::Result<String> {
    let meta = std::fs::metadata(path)?;
    let (inode, changed_ns) = made_from::files::identity(&meta);
    let mut said = format!(
        "{}|{}|{}|{inode}.{changed_ns}",
        path.display(),
        meta.len(),
        made_from::files::modified_ns(&meta)
    );
    // Noted before what is under it, so that the directory's own part holds
    // its files' parts.
    let at = made_from::files::looking_at(path, &meta);
    if meta.is_dir() {
        let mut entries: Vec<std::path::PathBuf> = std::fs::read_dir(path)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<std::io::Result<_>>()?;
        entries.sort();
        let inside: Vec<String> = entries
            .iter()
            .map(|entry| fingerprint_of(entry))
            .collect::<std::io::Result<_>>()?;
        said = format!("{said}[{}]", inside.join(","));
    }
    made_from::files::said_of(at, &said);
    Ok(said)
}

/// A digest of a file's contents (BLAKE3), for a [`Memo::fingerprint`] that
/// stays the same when the file is copied, downloaded again or checked out
/// elsewhere, as records compared across CI runs need. It reads the whole
/// file on each case that uses the memo; [`file_fingerprint`] only looks at
/// its metadata.
///
/// # Errors
///
/// When the file cannot be read.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let (a, b) = (dir.path().join("a.bin"), dir.path().join("b.bin"));
/// std::fs::write(&a, b"weights").unwrap();
/// std::fs::write(&b, b"weights").unwrap();
/// assert_eq!(nnbench::memo::file_digest(&a).unwrap(), nnbench::memo::file_digest(&b).unwrap());
/// std::fs::write(&b, b"weights v2").unwrap();
/// assert_ne!(nnbench::memo::file_digest(&a).unwrap(), nnbench::memo::file_digest(&b).unwrap());
/// ```
pub fn file_digest(path: impl AsRef<std::path::Path>) -> Result<String> {
    let path = path.as_ref();
    let (digest, meta) = made_from::files::digest(path)
        .map_err(|e| crate::Error::from(e).context(format!("digest of {}", path.display())))?;
    made_from::files::looked_at(path, &meta, &digest, Some(digest.clone()));
    Ok(digest)
}

/// Sets the disk tier of memos resolved outside a run, for the whole
/// process (by default `target/nnbench/memo-cache`). A
/// [`Runner`](crate::Runner) uses its own ([`Runner::disk_tier`](crate::Runner::disk_tier))
/// for its cases, and [`with_disk_tier`] sets one for a closure on this
/// thread.
///
/// # Example
///
/// ```
/// use nnbench::memo::{self, DiskTier};
///
/// let dir = tempfile::tempdir().unwrap();
/// memo::set_disk_tier(DiskTier::At(dir.path().to_owned()));
/// assert_eq!(memo::disk_dir().as_deref(), Some(dir.path()));
/// memo::set_disk_tier(DiskTier::Off);
/// assert_eq!(memo::disk_dir(), None);
/// ```
pub fn set_disk_tier(tier: DiskTier) {
    disk::set_process_tier(tier);
}

/// Runs `f` with `tier` as the disk tier of the memos it resolves on this
/// thread, as a [`Runner`](crate::Runner) does for its cases; the tier in
/// force before is back afterwards, even if `f` panics. Other threads are
/// not affected, so tests side by side can each keep their own folder.
///
/// # Example
///
/// ```
/// use nnbench::memo::{self, DiskTier};
///
/// let dir = tempfile::tempdir().unwrap();
/// let inside = memo::with_disk_tier(DiskTier::At(dir.path().to_owned()), memo::disk_dir);
/// assert_eq!(inside.as_deref(), Some(dir.path()));
/// assert_ne!(memo::disk_dir().as_deref(), Some(dir.path()));
/// ```
pub fn with_disk_tier<T>(tier: DiskTier, f: impl FnOnce() -> T) -> T {
    disk::with_thread_tier(tier, f)
}

/// The folder of the disk tier in force on this thread (its run's, else the
/// one [`set_disk_tier`] set), or `None` when it is off.
///
/// # Example
///
/// ```
/// if let Some(dir) = nnbench::memo::disk_dir() {
///     println!("persisted memos live in {}", dir.display());
/// }
/// ```
pub fn disk_dir() -> Option<std::path::PathBuf> {
    disk::dir()
}

/// Deletes every entry of the disk tier; returns how many there were.
///
/// # Errors
///
/// When the folder cannot be read or an entry removed.
///
/// # Example
///
/// ```
/// use nnbench::memo::{self, DiskTier};
///
/// let dir = tempfile::tempdir().unwrap();
/// let cleared = memo::with_disk_tier(DiskTier::At(dir.path().to_owned()), memo::clear_disk_tier);
/// assert_eq!(cleared.unwrap(), 0);
/// ```
pub fn clear_disk_tier() -> Result<usize> {
    disk::current()
        .clear()
        .map_err(|e| e.context("clearing the memo cache's disk tier"))
}

/// Resolves `memo` through the global cache: computes it on first use, hands
/// out the shared value afterwards.
///
/// # Errors
///
/// A [`MemoError`] (naming the memo) when `compute` returns an error or panics.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Answer;
/// impl Memo for Answer {
///     type Value = u64;
///     fn compute(&self) -> nnbench::Result<u64> { Ok(42) }
/// }
///
/// let a = nnbench::memo::resolve(&Answer).unwrap();
/// let b = nnbench::memo::resolve(&Answer).unwrap();
/// assert!(std::sync::Arc::ptr_eq(&a, &b));
/// # nnbench::memo::evict(&Answer);
/// ```
pub fn resolve<M: Memo>(memo: &M) -> Result<Arc<M::Value>> {
    cache::resolve_typed(memo).0
}

/// Drops the cache's entry for `memo`; returns whether there was one.
///
/// The value is freed once no case or hook holds an `Arc` to it any more.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Table(u8);
/// impl Memo for Table {
///     type Value = Vec<u8>;
///     fn compute(&self) -> nnbench::Result<Vec<u8>> { Ok(vec![self.0; 8]) }
/// }
///
/// nnbench::memo::resolve(&Table(1)).unwrap();
/// assert!(nnbench::memo::evict(&Table(1)));
/// assert!(!nnbench::memo::evict(&Table(1)));
/// ```
pub fn evict<M: Memo>(memo: &M) -> bool {
    cache::global().evict(erased::key_of(memo))
}

/// Drops the cache entry whose value is exactly `value` (the same object, not
/// an equal one); returns whether there was one.
///
/// This is how a hook that holds only the value, not its description, frees it.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Weights;
/// impl Memo for Weights {
///     type Value = Vec<f32>;
///     fn compute(&self) -> nnbench::Result<Vec<f32>> { Ok(vec![0.5; 4]) }
/// }
///
/// let w = nnbench::memo::resolve(&Weights).unwrap();
/// let equal_copy = (*w).clone();
/// assert!(!nnbench::memo::evict_value(&equal_copy));
/// assert!(nnbench::memo::evict_value(&*w));
/// assert!(!nnbench::memo::contains(&Weights));
/// ```
pub fn evict_value<T: Send + Sync + 'static>(value: &T) -> bool {
    cache::global().evict_value((value as *const T).cast())
}

/// Whether the cache holds an entry (computed, computing or failed) for `memo`.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Vocab;
/// impl Memo for Vocab {
///     type Value = Vec<String>;
///     fn compute(&self) -> nnbench::Result<Vec<String>> { Ok(vec!["a".into()]) }
/// }
///
/// assert!(!nnbench::memo::contains(&Vocab));
/// nnbench::memo::resolve(&Vocab).unwrap();
/// assert!(nnbench::memo::contains(&Vocab));
/// # nnbench::memo::evict(&Vocab);
/// ```
pub fn contains<M: Memo>(memo: &M) -> bool {
    cache::global().contains(erased::key_of(memo))
}

/// How many entries the cache holds.
///
/// # Example
///
/// ```
/// let entries = nnbench::memo::len();
/// println!("{entries} memos resident");
/// ```
pub fn len() -> usize {
    cache::global().len()
}

/// Whether the cache holds no entry at all.
///
/// # Example
///
/// ```
/// nnbench::memo::clear();
/// assert!(nnbench::memo::is_empty());
/// ```
pub fn is_empty() -> bool {
    len() == 0
}

/// Evicts every entry; returns how many there were.
///
/// # Example
///
/// ```
/// nnbench::memo::clear();
/// assert_eq!(nnbench::memo::len(), 0);
/// ```
pub fn clear() -> usize {
    cache::global().clear()
}

/// Counters of the global cache since the process started.
///
/// # Example
///
/// ```
/// let stats = nnbench::memo::stats();
/// assert!(stats.hits + stats.misses >= stats.failures);
/// ```
pub fn stats() -> MemoStats {
    cache::global().stats()
}

/// [`stats`] per memo type, in the order the types were first resolved.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Embeddings;
/// impl Memo for Embeddings {
///     type Value = Vec<f32>;
///     fn compute(&self) -> nnbench::Result<Vec<f32>> { Ok(vec![0.0; 256]) }
///     fn size_of(&self, v: &Vec<f32>) -> Option<u64> { Some(4 * v.len() as u64) }
/// }
///
/// nnbench::memo::resolve(&Embeddings).unwrap();
/// let mine = nnbench::memo::stats_by_type()
///     .into_iter()
///     .find(|t| t.type_name.ends_with("Embeddings"))
///     .unwrap();
/// assert_eq!((mine.stats.entries, mine.stats.resident_bytes, mine.stats.computes), (1, 1024, 1));
/// # nnbench::memo::evict(&Embeddings);
/// ```
pub fn stats_by_type() -> Vec<TypeStats> {
    cache::global().stats_by_type()
}

/// The table of the cache that `--print-cache` (or
/// `NNBENCH_PRINT_CACHE_SIZE=1`) prints at the end of a run: per memo type,
/// entries, resident bytes, hits, misses (disk hits and computes),
/// evictions and spills.
///
/// # Example
///
/// ```
/// let summary = nnbench::memo::summary();
/// assert!(summary.contains("memo type") && summary.contains("evictions"));
/// ```
pub fn summary() -> String {
    summary::render(&stats_by_type())
}

#[cfg(test)]
mod tests;
