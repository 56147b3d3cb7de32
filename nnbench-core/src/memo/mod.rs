//! Memos: fixtures (a model, a dataset) described by a small key and computed
//! lazily, once, through one global cache.
//!
//! Two equal memo descriptions (`Hash + Eq`, and of the same type) share one
//! cache entry. A value is computed when the first case that needs it starts;
//! concurrent resolves of one memo compute it once and the others wait for
//! that value. A failed compute (an `Err` or a panic) is remembered until the
//! memo is evicted, so every case that needs it fails with the same cause
//! instead of paying for the failure again.

mod cache;
mod erased;
mod error;
pub(crate) mod journal;
mod report;

pub use cache::{MemoStats, TypeStats};
pub use error::MemoError;

#[cfg(test)]
use cache::global;
pub(crate) use cache::{Resolution, global as global_cache, resolve_erased};
pub(crate) use erased::ErasedMemo;

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use crate::Result;

/// A fixture described by a small key and computed on demand.
///
/// Implement it on the *description* of a fixture (a path, a seed, a size):
/// the description is cheap to clone, compare and print, the value is not.
/// The value is computed at most once per cache entry and shared as
/// `Arc<Value>`.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Ones { len: usize }
///
/// impl Memo for Ones {
///     type Value = Vec<f64>;
///     fn compute(&self) -> nnbench::Result<Vec<f64>> {
///         Ok(vec![1.0; self.len])
///     }
/// }
///
/// let ones = nnbench::memo::resolve(&Ones { len: 3 }).unwrap();
/// assert_eq!(ones.iter().sum::<f64>(), 3.0);
/// assert!(nnbench::memo::evict(&Ones { len: 3 }));
/// ```
pub trait Memo: Clone + Debug + Hash + Eq + Send + Sync + 'static {
    /// What the memo computes: a model, a dataset.
    type Value: Send + Sync + 'static;

    /// Computes the value. Errors of any `std::error::Error + Send + Sync`
    /// type convert through `?`, and their causes are kept for the record.
    fn compute(&self) -> Result<Self::Value>;

    /// The bytes `value` holds, when the memo can tell exactly.
    ///
    /// Without it (`None`, the default) the cache estimates an entry's size by
    /// the growth of the process's resident memory while it was computed.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::Memo;
    ///
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct Zeros(usize);
    ///
    /// impl Memo for Zeros {
    ///     type Value = Vec<f32>;
    ///     fn compute(&self) -> nnbench::Result<Vec<f32>> { Ok(vec![0.0; self.0]) }
    ///     fn size_of(&self, value: &Vec<f32>) -> Option<u64> {
    ///         Some(std::mem::size_of_val(value.as_slice()) as u64)
    ///     }
    /// }
    /// assert_eq!(Zeros(4).size_of(&vec![0.0; 4]), Some(16));
    /// ```
    fn size_of(&self, value: &Self::Value) -> Option<u64> {
        let _ = value;
        None
    }
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
/// assert_eq!((mine.stats.entries, mine.stats.resident_bytes, mine.computes), (1, 1024, 1));
/// # nnbench::memo::evict(&Embeddings);
/// ```
pub fn stats_by_type() -> Vec<TypeStats> {
    cache::global().stats_by_type()
}

/// The cache report that `--print-cache` (or `NNBENCH_PRINT_CACHE_SIZE=1`)
/// prints at the end of a run: per memo type, entries, resident bytes,
/// hits, misses, computes and evictions.
///
/// # Example
///
/// ```
/// let report = nnbench::memo::report();
/// assert!(report.contains("memo type") && report.contains("evictions"));
/// ```
pub fn report() -> String {
    report::render(&stats_by_type())
}

#[cfg(test)]
mod tests;
