//! The one global memo cache.

use std::any::Any;
use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use super::erased::ErasedMemo;
use super::{Memo, MemoError};
use crate::measure::rss;
use crate::panic_message;

/// A computed value, or why there is none.
type Outcome = Result<Ready, Arc<MemoError>>;

struct Ready {
    value: Arc<dyn Any + Send + Sync>,
    bytes: u64,
}

struct Entry {
    memo: Box<dyn ErasedMemo>,
    /// `OnceLock` gives single flight: one caller computes, the others block
    /// until the value (or the failure) is there.
    outcome: OnceLock<Outcome>,
}

/// Whether a resolve found the value or computed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolution {
    Hit,
    Computed,
}

/// Counters of the global memo cache, from [`memo::stats`](crate::memo::stats).
///
/// # Example
///
/// ```
/// let s = nnbench::memo::stats();
/// println!("{} entries, {} bytes, {} hits, {} misses", s.entries, s.resident_bytes, s.hits, s.misses);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoStats {
    /// Entries held now (computed, computing or failed).
    pub entries: usize,
    /// Bytes held by the computed entries now: the memo's
    /// [`size_of`](crate::Memo::size_of), or the resident-memory growth while
    /// it was computed.
    pub resident_bytes: u64,
    /// Resolves that found the value (or waited for another thread's compute).
    pub hits: u64,
    /// Resolves that computed the value.
    pub misses: u64,
    /// Computes that returned an error or panicked.
    pub failures: u64,
    /// Entries removed by `evict`, `evict_value`, `clear` or the runner.
    pub evictions: u64,
}

#[derive(Default)]
pub(crate) struct Cache {
    buckets: Mutex<HashMap<u64, Vec<Arc<Entry>>>>,
    hits: AtomicU64,
    misses: AtomicU64,
    failures: AtomicU64,
    evictions: AtomicU64,
}

pub(crate) fn global() -> &'static Cache {
    static CACHE: LazyLock<Cache> = LazyLock::new(Cache::default);
    &CACHE
}

/// Resolves a type-erased memo through the global cache.
pub(crate) fn resolve_erased(
    memo: &dyn ErasedMemo,
) -> (
    Result<Arc<dyn Any + Send + Sync>, Arc<MemoError>>,
    Resolution,
) {
    global().resolve(memo)
}

pub(crate) fn resolve_typed<M: Memo>(
    memo: &M,
) -> (Result<Arc<M::Value>, crate::Error>, Resolution) {
    let (value, how) = resolve_erased(memo);
    let typed = match value {
        Ok(value) => value.downcast::<M::Value>().map_err(|_| {
            crate::Error::msg(format!(
                "memo {memo:?}: the cached value is not a {}",
                std::any::type_name::<M::Value>()
            ))
        }),
        Err(failure) => Err(failure.into()),
    };
    (typed, how)
}

impl Cache {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Vec<Arc<Entry>>>> {
        // A poisoned map is still consistent: no user code runs while it is
        // mutated, only `Eq` while it is searched.
        self.buckets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn entry(&self, memo: &dyn ErasedMemo) -> Arc<Entry> {
        let mut buckets = self.lock();
        let bucket = buckets.entry(memo.key_hash()).or_default();
        if let Some(entry) = bucket.iter().find(|e| e.memo.same_as(memo)) {
            return Arc::clone(entry);
        }
        let entry = Arc::new(Entry {
            memo: memo.clone_boxed(),
            outcome: OnceLock::new(),
        });
        bucket.push(Arc::clone(&entry));
        entry
    }

    fn resolve(
        &self,
        memo: &dyn ErasedMemo,
    ) -> (
        Result<Arc<dyn Any + Send + Sync>, Arc<MemoError>>,
        Resolution,
    ) {
        let entry = self.entry(memo);
        let mut how = Resolution::Hit;
        let outcome = entry.outcome.get_or_init(|| {
            how = Resolution::Computed;
            compute(&*entry.memo)
        });
        match how {
            Resolution::Hit => self.hits.fetch_add(1, Relaxed),
            Resolution::Computed => self.misses.fetch_add(1, Relaxed),
        };
        if how == Resolution::Computed && outcome.is_err() {
            self.failures.fetch_add(1, Relaxed);
        }
        let value = match outcome {
            Ok(ready) => Ok(Arc::clone(&ready.value)),
            Err(failure) => Err(Arc::clone(failure)),
        };
        (value, how)
    }

    /// Removes the entries that `matches` picks; returns how many.
    fn remove_where(&self, mut matches: impl FnMut(&Entry) -> bool) -> usize {
        let removed: Vec<Arc<Entry>> = {
            let mut buckets = self.lock();
            let mut removed = Vec::new();
            buckets.retain(|_, bucket| {
                bucket.retain(|e| {
                    let hit = matches(e);
                    if hit {
                        removed.push(Arc::clone(e));
                    }
                    !hit
                });
                !bucket.is_empty()
            });
            removed
        };
        self.evictions.fetch_add(removed.len() as u64, Relaxed);
        // Values drop here, outside the lock: a value's Drop may be slow.
        removed.len()
    }

    pub(crate) fn evict(&self, memo: &dyn ErasedMemo) -> bool {
        let hash = memo.key_hash();
        let removed = {
            let mut buckets = self.lock();
            let Some(bucket) = buckets.get_mut(&hash) else {
                return false;
            };
            let Some(at) = bucket.iter().position(|e| e.memo.same_as(memo)) else {
                return false;
            };
            let entry = bucket.swap_remove(at);
            if bucket.is_empty() {
                buckets.remove(&hash);
            }
            entry
        };
        self.evictions.fetch_add(1, Relaxed);
        drop(removed);
        true
    }

    pub(crate) fn evict_value(&self, value: *const ()) -> bool {
        self.remove_where(|e| match e.outcome.get() {
            Some(Ok(ready)) => Arc::as_ptr(&ready.value).cast::<()>() == value,
            _ => false,
        }) > 0
    }

    pub(crate) fn contains(&self, memo: &dyn ErasedMemo) -> bool {
        self.lock()
            .get(&memo.key_hash())
            .is_some_and(|bucket| bucket.iter().any(|e| e.memo.same_as(memo)))
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }

    pub(crate) fn clear(&self) -> usize {
        self.remove_where(|_| true)
    }

    /// Bytes held by `memo`'s computed entry, if it has one.
    pub(crate) fn resident_bytes(&self, memo: &dyn ErasedMemo) -> Option<u64> {
        let buckets = self.lock();
        let entry = buckets
            .get(&memo.key_hash())?
            .iter()
            .find(|e| e.memo.same_as(memo))?;
        match entry.outcome.get() {
            Some(Ok(ready)) => Some(ready.bytes),
            _ => None,
        }
    }

    pub(crate) fn stats(&self) -> MemoStats {
        let (entries, resident_bytes) = {
            let buckets = self.lock();
            let entries = buckets.values().map(Vec::len).sum();
            let bytes = buckets
                .values()
                .flatten()
                .filter_map(|e| match e.outcome.get() {
                    Some(Ok(ready)) => Some(ready.bytes),
                    _ => None,
                })
                .sum();
            (entries, bytes)
        };
        MemoStats {
            entries,
            resident_bytes,
            hits: self.hits.load(Relaxed),
            misses: self.misses.load(Relaxed),
            failures: self.failures.load(Relaxed),
            evictions: self.evictions.load(Relaxed),
        }
    }
}

fn compute(memo: &dyn ErasedMemo) -> Outcome {
    let before = rss::current_bytes();
    match catch_unwind(AssertUnwindSafe(|| memo.compute_erased())) {
        Ok(Ok((value, exact))) => {
            let grown = match (before, rss::current_bytes()) {
                (Some(before), Some(after)) => after.saturating_sub(before),
                _ => 0,
            };
            Ok(Ready {
                value,
                bytes: exact.unwrap_or(grown),
            })
        }
        Ok(Err(error)) => Err(Arc::new(MemoError::Failed {
            memo: memo.describe(),
            source: error.into_boxed(),
        })),
        Err(payload) => Err(Arc::new(MemoError::Panicked {
            memo: memo.describe(),
            message: panic_message(&*payload),
        })),
    }
}
