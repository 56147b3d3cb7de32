//! The one global memo cache.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::ops::Add as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock, PoisonError};

use super::disk::{EntryError, Meta};
use super::distinct::Distinct;
use super::erased::ErasedMemo;
use super::graph::Graph;
use super::journal::{self, Eviction};
use super::made_from::files::Seen;
use super::made_from::{self, Input, Stamp};
use super::{Memo, MemoError};
use crate::error::panic_message;
use crate::measure::rss;
use crate::record::MemoCounters;

/// A computed value, or why there is none.
type Outcome = Result<Ready, Arc<MemoError>>;

struct Ready {
    value: Arc<dyn Any + Send + Sync>,
    /// Host memory.
    bytes: u64,
    /// GPU memory.
    device_bytes: u64,
    /// What the value was made from.
    stamp: Arc<Stamp>,
    /// The build that computed it.
    made_by: MadeBy,
}

/// Which build computed a value.
enum MadeBy {
    /// This one: it was computed in this process.
    This,
    /// The one its disk entry names (`None`: it names none).
    Entry(Option<Arc<str>>),
}

impl MadeBy {
    /// The build's digest, as a disk entry records it.
    fn digest(&self) -> Option<&str> {
        match self {
            MadeBy::This => super::build::this_build(),
            MadeBy::Entry(digest) => digest.as_deref(),
        }
    }
}

struct Entry {
    memo: Box<dyn ErasedMemo>,
    counters: Arc<TypeCounters>,
    /// The cache's clock at the entry's last resolve, for least-recently-used
    /// eviction under a memory budget.
    last_used: AtomicU64,
    /// The run in which the value was last found to be made from inputs
    /// that still hold.
    checked_in: AtomicU64,
    /// `OnceLock` gives single flight: one caller computes, the others block
    /// until the value (or the failure) is there.
    outcome: OnceLock<Outcome>,
}

impl Entry {
    fn ready(&self) -> Option<&Ready> {
        match self.outcome.get() {
            Some(Ok(ready)) => Some(ready),
            _ => None,
        }
    }
}

/// Bytes of host and of GPU memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Sizes {
    pub host: u64,
    pub device: u64,
}

impl std::ops::Add for Sizes {
    type Output = Sizes;
    fn add(self, other: Sizes) -> Sizes {
        Sizes {
            host: self.host + other.host,
            device: self.device + other.device,
        }
    }
}

impl Ready {
    fn sizes(&self) -> Sizes {
        Sizes {
            host: self.bytes,
            device: self.device_bytes,
        }
    }
}

/// Whether a resolve found the value, loaded it from disk or computed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolution {
    Hit,
    Loaded,
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
#[non_exhaustive]
pub struct MemoStats {
    /// Entries held now (computed, computing or failed).
    pub entries: usize,
    /// Bytes held by the computed entries now: the memo's
    /// [`size_of`](crate::Memo::size_of), or the resident-memory growth while
    /// it was computed.
    pub resident_bytes: u64,
    /// Bytes of the disk tier's entries (in [`memo::stats`](crate::memo::stats) only).
    pub disk_bytes: u64,
    /// What the cache did: a hit also counts a resolve that waited for
    /// another thread's compute; `computes` counts failed ones too; an
    /// eviction is by `evict`, `evict_value`, `clear` or the runner. Read
    /// through `Deref`: `stats.hits`.
    pub counters: MemoCounters,
}

impl std::ops::Deref for MemoStats {
    type Target = MemoCounters;
    fn deref(&self) -> &MemoCounters {
        &self.counters
    }
}

/// [`MemoStats`] of the memos of one type, from
/// [`memo::stats_by_type`](crate::memo::stats_by_type).
///
/// # Example
///
/// ```
/// for t in nnbench::memo::stats_by_type() {
///     println!("{}: {} entries, {} computes", t.type_name, t.stats.entries, t.stats.computes);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TypeStats {
    /// The memo type's name, as `std::any::type_name` gives it.
    pub type_name: &'static str,
    /// Its counters; `entries` and `resident_bytes` are those held now.
    pub stats: MemoStats,
    /// The memo types its memos' computes resolved (memos built from
    /// memos), in the order first seen.
    pub built_from: Vec<&'static str>,
}

/// Counters kept per memo type, shared by its entries: atomics, so that a
/// resolve that hits takes no lock for them.
#[derive(Default)]
struct TypeCounters {
    type_name: &'static str,
    counts: [AtomicU64; MemoCounters::LEN],
}

impl TypeCounters {
    fn add(&self, counters: MemoCounters) {
        for (slot, n) in self.counts.iter().zip(counters.to_array()) {
            if n > 0 {
                slot.fetch_add(n, Relaxed);
            }
        }
    }

    fn load(&self) -> MemoCounters {
        MemoCounters::from_array(std::array::from_fn(|i| self.counts[i].load(Relaxed)))
    }
}

impl Resolution {
    /// What one resolve adds to the counters.
    pub(crate) fn counters(self, failed: bool) -> MemoCounters {
        let one = MemoCounters {
            failures: u64::from(failed && self == Resolution::Computed),
            ..MemoCounters::default()
        };
        match self {
            Resolution::Hit => MemoCounters { hits: 1, ..one },
            Resolution::Loaded => MemoCounters {
                misses: 1,
                disk_hits: 1,
                ..one
            },
            Resolution::Computed => MemoCounters {
                misses: 1,
                computes: 1,
                ..one
            },
        }
    }
}

#[derive(Default)]
pub(crate) struct Cache {
    buckets: Mutex<HashMap<u64, Vec<Arc<Entry>>>>,
    /// Per type, in the order types were first resolved.
    types: Mutex<Vec<(TypeId, Arc<TypeCounters>)>>,
    /// Ticks at each resolve: the order of last uses.
    clock: AtomicU64,
    /// Sizes of entries computed before, by key hash: what loading one of
    /// them again is expected to take, before it is loaded.
    sizes: Mutex<HashMap<u64, Sizes>>,
    /// Per memo type, the most one of its memos held once loaded.
    type_sizes: Mutex<HashMap<TypeId, Sizes>>,
    /// What each memo's compute resolved. Locked before `buckets` where
    /// both are held.
    graph: Mutex<Graph>,
    /// Every memo resolved in the process, by type and description: the
    /// inputs a value records are asked again through them.
    known: Mutex<HashMap<String, Box<dyn ErasedMemo>>>,
}

/// The key of a memo among those [`Cache::known`] holds.
fn known_as(type_name: &str, memo: &str) -> String {
    format!("{type_name}\u{0}{memo}")
}

/// Counts the runs of the process: a value kept in memory from an earlier
/// run is checked against its inputs once in each later one.
static RUN: AtomicU64 = AtomicU64::new(0);

/// Starts a run: each value the cache holds is checked against what it
/// was made from at its first use in it.
pub(crate) fn begin_run() {
    RUN.fetch_add(1, Relaxed);
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

/// A poisoned lock still guards consistent data: no user code runs while the
/// maps are changed, only `Eq` and `Hash` while they are searched.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Cache {
    fn counters(&self, memo: &dyn ErasedMemo) -> Arc<TypeCounters> {
        let mut types = lock(&self.types);
        let id = memo.as_any().type_id();
        if let Some((_, counters)) = types.iter().find(|(t, _)| *t == id) {
            return Arc::clone(counters);
        }
        let counters = Arc::new(TypeCounters {
            type_name: memo.type_name(),
            ..TypeCounters::default()
        });
        types.push((id, Arc::clone(&counters)));
        counters
    }

    fn entry(&self, memo: &dyn ErasedMemo) -> Arc<Entry> {
        let hash = memo.key_hash();
        if let Some(entry) = self.find(hash, memo) {
            return entry;
        }
        let counters = self.counters(memo);
        let mut buckets = lock(&self.buckets);
        let bucket = buckets.entry(hash).or_default();
        // Another thread may have inserted it while the lock was released.
        if let Some(entry) = bucket.iter().find(|e| e.memo.same_as(memo)) {
            return Arc::clone(entry);
        }
        let entry = Arc::new(Entry {
            memo: memo.clone_boxed(),
            counters,
            last_used: AtomicU64::new(0),
            checked_in: AtomicU64::new(RUN.load(Relaxed)),
            outcome: OnceLock::new(),
        });
        bucket.push(Arc::clone(&entry));
        drop(buckets);
        lock(&self.known)
            .entry(known_as(memo.type_name(), &memo.describe()))
            .or_insert_with(|| memo.clone_boxed());
        entry
    }

    /// What `input` looks like now, where this process knows its memo.
    fn at_hand(&self, input: &Input) -> Option<Seen> {
        let memo = lock(&self.known)
            .get(&known_as(&input.type_name, &input.memo))
            .map(|memo| memo.clone_boxed())?;
        // Asked outside the lock: a fingerprint is the user's code.
        Some(memo.seen())
    }

    /// Why a value of `memo` made under `stamp` may not be used now.
    fn stale(&self, memo: &dyn ErasedMemo, stamp: &Stamp) -> Option<String> {
        if let Some(why) = stamp.seen.changed_to(&memo.seen()) {
            return Some(format!("it changed: {why}"));
        }
        made_from::stale(&stamp.inputs, &|input| self.at_hand(input))
    }

    /// At the first use of `entry` in a run, checks that its value was made
    /// from inputs that still hold; if not, evicts it, says why, and gives
    /// the entry that replaces it.
    fn recheck(&self, entry: &Arc<Entry>) -> Option<Arc<Entry>> {
        let run = RUN.load(Relaxed);
        let checked = entry.checked_in.load(Relaxed);
        let ready = entry.ready().filter(|_| checked != run)?;
        entry
            .checked_in
            .compare_exchange(checked, run, Relaxed, Relaxed)
            .ok()?;
        let why = self.stale(&*entry.memo, &ready.stamp)?;
        journal::warn(format!("memo {} recomputed: {why}", entry.memo.describe()));
        self.evict(&*entry.memo);
        Some(self.entry(&*entry.memo))
    }

    fn find(&self, hash: u64, memo: &dyn ErasedMemo) -> Option<Arc<Entry>> {
        lock(&self.buckets)
            .get(&hash)?
            .iter()
            .find(|e| e.memo.same_as(memo))
            .cloned()
    }

    fn resolve(
        &self,
        memo: &dyn ErasedMemo,
    ) -> (
        Result<Arc<dyn Any + Send + Sync>, Arc<MemoError>>,
        Resolution,
    ) {
        let mut entry = self.entry(memo);
        if let Some(replaced) = self.recheck(&entry) {
            entry = replaced;
        }
        entry
            .last_used
            .store(self.clock.fetch_add(1, Relaxed) + 1, Relaxed);
        // Waiting for an entry this thread is computing would never end.
        if entry.outcome.get().is_none()
            && let Some(cycle) = computing::cycle_to(&entry)
        {
            let failure = Arc::new(MemoError::Cycle { cycle });
            entry.counters.add(Resolution::Hit.counters(true));
            return (Err(failure), Resolution::Hit);
        }
        if let Some(outer) = computing::current() {
            lock(&self.graph).record(&*outer.memo, memo);
        }
        let mut how = Resolution::Hit;
        let outcome = entry.outcome.get_or_init(|| {
            let _computing = computing::enter(&entry);
            let (outcome, origin) = self.load_or_compute(&*entry.memo);
            how = origin;
            lock(&self.graph).computed(&*entry.memo);
            if let Ok(ready) = &outcome {
                lock(&self.sizes).insert(entry.memo.key_hash(), ready.sizes());
                let mut types = lock(&self.type_sizes);
                let largest = types.entry(entry.memo.as_any().type_id()).or_default();
                *largest = Sizes {
                    host: largest.host.max(ready.bytes),
                    device: largest.device.max(ready.device_bytes),
                };
            }
            outcome
        });
        if let Ok(ready) = outcome {
            computing::note_input(memo, || Input::of(memo, &ready.stamp));
        }
        entry.counters.add(how.counters(outcome.is_err()));
        let value = match outcome {
            Ok(ready) => Ok(Arc::clone(&ready.value)),
            Err(failure) => Err(Arc::clone(failure)),
        };
        (value, how)
    }

    /// Removes the entries that `matches` picks; returns how many.
    fn remove_where(&self, mut matches: impl FnMut(&Entry) -> bool) -> usize {
        let removed: Vec<Arc<Entry>> = {
            let mut buckets = lock(&self.buckets);
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
        let count = removed.len();
        // Values drop in `evicted`, outside the lock: a value's Drop may be slow.
        removed.into_iter().for_each(evicted);
        count
    }

    pub(crate) fn evict(&self, memo: &dyn ErasedMemo) -> bool {
        let hash = memo.key_hash();
        let removed = {
            let mut buckets = lock(&self.buckets);
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
        evicted(removed);
        true
    }

    pub(crate) fn evict_value(&self, value: *const ()) -> bool {
        self.remove_where(|e| {
            e.ready()
                .is_some_and(|ready| Arc::as_ptr(&ready.value).cast::<()>() == value)
        }) > 0
    }

    pub(crate) fn contains(&self, memo: &dyn ErasedMemo) -> bool {
        self.find(memo.key_hash(), memo).is_some()
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.buckets).values().map(Vec::len).sum()
    }

    pub(crate) fn clear(&self) -> usize {
        self.remove_where(|_| true)
    }

    /// Whether `memo`'s value was computed by another build of the bench
    /// (loaded from the disk tier) than this one, which it does not
    /// declare independent of the build. An entry that does not say its
    /// build counts as another's; where this build's digest cannot be
    /// read, no value does.
    pub(crate) fn made_by_other_build(&self, memo: &dyn ErasedMemo) -> bool {
        if memo.build_independent() {
            return false;
        }
        let Some(entry) = self.find(memo.key_hash(), memo) else {
            return false;
        };
        match entry.ready().map(|ready| &ready.made_by) {
            Some(MadeBy::Entry(digest)) => {
                super::build::this_build().is_some_and(|this| digest.as_deref() != Some(this))
            }
            Some(MadeBy::This) | None => false,
        }
    }

    /// Bytes held by `memo`'s computed entry, if it has one.
    pub(crate) fn resident_bytes(&self, memo: &dyn ErasedMemo) -> Option<u64> {
        let entry = self.find(memo.key_hash(), memo)?;
        entry.ready().map(|ready| ready.bytes)
    }

    /// What loading `memo` is expected to add to host and GPU memory: what
    /// it held when it was last loaded, or for a memo never loaded the
    /// largest of its type loaded so far (0 if none): the models of a
    /// sweep are alike.
    pub(crate) fn estimated_bytes(&self, memo: &dyn ErasedMemo) -> Sizes {
        self.known_bytes(memo)
            .or_else(|| self.type_bytes(memo))
            .unwrap_or_default()
    }

    /// What `memo` held when it was last loaded in this process, if it was.
    pub(crate) fn known_bytes(&self, memo: &dyn ErasedMemo) -> Option<Sizes> {
        lock(&self.sizes).get(&memo.key_hash()).copied()
    }

    /// The most a memo of `memo`'s type held once loaded in this process,
    /// if one was.
    pub(crate) fn type_bytes(&self, memo: &dyn ErasedMemo) -> Option<Sizes> {
        lock(&self.type_sizes)
            .get(&memo.as_any().type_id())
            .copied()
    }

    /// Evicts a computed entry that `keep` does not keep and that holds
    /// GPU memory if `on_device`, spilling it to the disk tier first if it
    /// persists and is not there yet: the one nothing else holds (whose
    /// eviction frees memory) that `ahead` puts furthest (when it is used
    /// next in a planned order), else the least recently used. Returns
    /// whether one was evicted.
    pub(crate) fn evict_one(
        &self,
        keep: &dyn Fn(&dyn ErasedMemo) -> bool,
        on_device: bool,
        ahead: &dyn Fn(&dyn ErasedMemo) -> u64,
    ) -> bool {
        let victim = {
            let buckets = lock(&self.buckets);
            buckets
                .values()
                .flatten()
                .filter(|e| {
                    e.ready().is_some_and(|r| !on_device || r.device_bytes > 0) && !keep(&*e.memo)
                })
                .max_by_key(|e| {
                    let held = e.ready().map_or(0, |r| Arc::strong_count(&r.value)) > 1;
                    (
                        !held,
                        ahead(&*e.memo),
                        std::cmp::Reverse(e.last_used.load(Relaxed)),
                    )
                })
                .cloned()
        };
        let Some(victim) = victim else { return false };
        if let Some(ready) = victim.ready()
            && let Some((path, key)) = victim.memo.disk_key(&ready.stamp.seen)
            && !path.exists()
            && let Ok(Some(_held)) = super::disk::try_hold(&path)
            && savable(&*victim.memo, &ready.stamp)
        {
            match victim
                .memo
                .save_erased(&path, &key, &ready.meta(), &*ready.value)
            {
                Ok(_) => {
                    victim.counters.add(MemoCounters {
                        spills: 1,
                        ..MemoCounters::default()
                    });
                }
                Err(e) => journal::warn(format!(
                    "memo {} could not be spilled to the disk tier ({e:#}); it will be computed again",
                    victim.memo.describe()
                )),
            }
        }
        self.evict(&*victim.memo)
    }

    /// Which entries of `open` the memos of `pending` (those cases still to
    /// run use) are built from, transitively: known from their last
    /// compute, else guessed by type (every held memo of a type that memos
    /// of their type were built from). Each memo is visited once, each type
    /// guessed from once, and the walk ends once every entry of `open` is
    /// found needed: in a sweep of thousands of models trained from a few
    /// splits, the first model not trained yet keeps every split.
    fn needed(
        &self,
        graph: &Graph,
        pending: &[&dyn ErasedMemo],
        mut open: Vec<Arc<Entry>>,
    ) -> Vec<Arc<Entry>> {
        let mut needed = Vec::new();
        let mut visited = Distinct::default();
        let mut guessed: Vec<TypeId> = Vec::new();
        let mut rest = pending.iter().copied();
        let mut frontier: Vec<&dyn ErasedMemo> = Vec::new();
        while !open.is_empty() {
            let Some(memo) = frontier.pop().or_else(|| rest.next()) else {
                break;
            };
            if !visited.id(memo).1 {
                continue;
            }
            let mut found = |is: &dyn Fn(&Entry) -> bool| {
                let (hit, kept): (Vec<_>, Vec<_>) = open.drain(..).partition(|e| is(e));
                needed.extend(hit);
                open = kept;
            };
            if let Some(inputs) = graph.inputs_of(memo) {
                found(&|e| inputs.iter().any(|input| e.memo.same_as(&**input)));
                frontier.extend(inputs.iter().map(|input| &**input));
            } else {
                let kind = memo.as_any().type_id();
                if !guessed.contains(&kind) {
                    guessed.push(kind);
                    let kinds = graph.types_under(kind);
                    found(&|e| kinds.contains(&e.memo.as_any().type_id()));
                }
            }
        }
        needed
    }

    /// Evicts the memos of `unused` (no case still to run uses them) and
    /// the inner memos (those some compute resolved) that no memo of
    /// `pending` is built from: an inner memo goes after the last case
    /// whose memos are built from it. An inner memo whose value something
    /// outside the cache holds stays (evicting it would free nothing) until
    /// a later release. Returns how many were evicted.
    pub(crate) fn release(&self, unused: &[&dyn ErasedMemo], pending: &[&dyn ErasedMemo]) -> usize {
        let mut count = 0;
        let mut outer = unused;
        // Evicting an outer memo may let go of the last reference to an
        // inner one's value, which the next pass evicts.
        loop {
            let victims = self.victims(outer, pending);
            if victims.is_empty() {
                return count;
            }
            count += victims.iter().filter(|m| self.evict(&***m)).count();
            outer = &[];
        }
    }

    /// What [`release`](Self::release) evicts in one pass. Chosen under
    /// the graph's lock and evicted outside it: a value's `Drop` is the
    /// user's code.
    fn victims(
        &self,
        unused: &[&dyn ErasedMemo],
        pending: &[&dyn ErasedMemo],
    ) -> Vec<Box<dyn ErasedMemo>> {
        let graph = lock(&self.graph);
        // Most sweeps build no memo from another: the walk would find
        // nothing, at a cost of every pending memo per case.
        if graph.is_flat() {
            return unused.iter().map(|m| m.clone_boxed()).collect();
        }
        // Inner memos that may go: held by nothing outside the cache, and
        // used by no case still to run (looked for by type first, since a
        // sweep's pending memos are mostly of other types).
        let mut inner: Vec<Arc<Entry>> = lock(&self.buckets)
            .values()
            .flatten()
            .filter(|e| {
                e.ready().is_some_and(|r| Arc::strong_count(&r.value) == 1)
                    && graph.is_inner(&*e.memo)
                    && !unused.iter().any(|u| e.memo.same_as(*u))
            })
            .cloned()
            .collect();
        let kinds: Vec<TypeId> = inner.iter().map(|e| e.memo.as_any().type_id()).collect();
        let named: Vec<&dyn ErasedMemo> = pending
            .iter()
            .copied()
            .filter(|p| kinds.contains(&p.as_any().type_id()))
            .collect();
        inner.retain(|e| !named.iter().any(|p| e.memo.same_as(*p)));
        // An unused memo that no memo was seen to be built from, of a type
        // no memo was, can never be needed: the walk does not look for it.
        let unused: Vec<(&dyn ErasedMemo, Option<Arc<Entry>>)> = unused
            .iter()
            .map(|m| (*m, self.find(m.key_hash(), *m)))
            .collect();
        let open = unused
            .iter()
            .filter_map(|(_, held)| held.as_ref())
            .filter(|e| graph.is_inner(&*e.memo) || graph.is_input_type(&*e.memo))
            .chain(&inner)
            .cloned()
            .collect();
        let needed = self.needed(&graph, pending, open);
        let is_needed = |e: &Entry| needed.iter().any(|n| std::ptr::eq(&**n, e));
        let mut victims: Vec<Box<dyn ErasedMemo>> = unused
            .iter()
            .filter(|(_, held)| held.as_deref().is_none_or(|e| !is_needed(e)))
            .map(|(m, _)| m.clone_boxed())
            .collect();
        victims.extend(
            inner
                .iter()
                .filter(|e| !is_needed(e))
                .map(|e| e.memo.clone_boxed()),
        );
        victims
    }

    /// What the inputs of `memo` not held now are expected to add to host
    /// and GPU memory when it is computed: those its last compute
    /// resolved, transitively, at what each held when last loaded.
    pub(crate) fn expected_inputs_bytes(&self, memo: &dyn ErasedMemo) -> Sizes {
        let graph = lock(&self.graph);
        let mut total = Sizes::default();
        let mut visited: Vec<Box<dyn ErasedMemo>> = Vec::new();
        let mut frontier: Vec<Box<dyn ErasedMemo>> = graph
            .inputs_of(memo)
            .into_iter()
            .flatten()
            .map(|m| m.clone_boxed())
            .collect();
        while let Some(at) = frontier.pop() {
            if visited.iter().any(|v| v.same_as(&*at)) || self.contains(&*at) {
                continue;
            }
            total = total + self.known_bytes(&*at).unwrap_or_default();
            frontier.extend(
                graph
                    .inputs_of(&*at)
                    .into_iter()
                    .flatten()
                    .map(|m| m.clone_boxed()),
            );
            visited.push(at);
        }
        total
    }

    /// Host and GPU bytes held by all computed entries (the
    /// `resident_bytes` of [`stats`](Self::stats), and the GPU's).
    pub(crate) fn resident_total(&self) -> Sizes {
        lock(&self.buckets)
            .values()
            .flatten()
            .filter_map(|e| e.ready().map(Ready::sizes))
            .fold(Sizes::default(), Sizes::add)
    }

    pub(crate) fn stats(&self) -> MemoStats {
        let mut total = self
            .stats_by_type()
            .iter()
            .fold(MemoStats::default(), |total, t| MemoStats {
                entries: total.entries + t.stats.entries,
                resident_bytes: total.resident_bytes + t.stats.resident_bytes,
                disk_bytes: 0,
                counters: total.counters + t.stats.counters,
            });
        total.disk_bytes = super::disk::current().bytes();
        total
    }

    pub(crate) fn stats_by_type(&self) -> Vec<TypeStats> {
        let types: Vec<(Arc<TypeCounters>, Vec<&'static str>)> = {
            let graph = lock(&self.graph);
            lock(&self.types)
                .iter()
                .map(|(id, c)| (Arc::clone(c), graph.built_from(*id)))
                .collect()
        };
        let mut held: HashMap<*const TypeCounters, (usize, u64)> = HashMap::new();
        for entry in lock(&self.buckets).values().flatten() {
            let slot = held.entry(Arc::as_ptr(&entry.counters)).or_default();
            slot.0 += 1;
            slot.1 += entry.ready().map_or(0, |r| r.bytes);
        }
        types
            .into_iter()
            .map(|(c, built_from)| {
                let (entries, resident_bytes) =
                    held.get(&Arc::as_ptr(&c)).copied().unwrap_or_default();
                TypeStats {
                    type_name: c.type_name,
                    stats: MemoStats {
                        entries,
                        resident_bytes,
                        disk_bytes: 0,
                        counters: c.load(),
                    },
                    built_from,
                }
            })
            .collect()
    }
}

/// Counts, journals and drops an entry taken out of the cache, warning when
/// its value outlives the eviction because something else still holds it.
fn evicted(entry: Arc<Entry>) {
    entry.counters.add(MemoCounters {
        evictions: 1,
        ..MemoCounters::default()
    });
    // The entry's own reference is one of the count.
    let others = entry
        .ready()
        .map_or(0, |ready| Arc::strong_count(&ready.value).saturating_sub(1));
    let memo = entry.memo.describe();
    if others > 0 {
        journal::warn(format!(
            "memo {memo} was evicted while {others} other reference{} to its value {} held \
             elsewhere (a hook or static keeps an Arc?): its memory is not freed until {} dropped",
            if others == 1 { "" } else { "s" },
            if others == 1 { "is" } else { "are" },
            if others == 1 { "it is" } else { "they are" },
        ));
    }
    journal::evicted(Eviction {
        memo,
        references: others,
    });
    drop(entry);
    rss::memory_given_back();
}

/// The entries this thread is computing, outermost first, with the memos
/// each compute resolved so far: a resolve of one of them from inside its
/// own compute is a cycle.
mod computing {
    use std::cell::RefCell;
    use std::sync::Arc;

    use super::Entry;
    use crate::memo::ErasedMemo;
    use crate::memo::made_from::Input;

    struct Frame {
        entry: Arc<Entry>,
        inputs: Vec<(Box<dyn ErasedMemo>, Input)>,
    }

    thread_local! {
        static STACK: RefCell<Vec<Frame>> = const { RefCell::new(Vec::new()) };
    }

    /// Marks `entry` as computed by this thread until the guard drops.
    pub(super) fn enter(entry: &Arc<Entry>) -> Guard {
        STACK.with(|s| {
            s.borrow_mut().push(Frame {
                entry: Arc::clone(entry),
                inputs: Vec::new(),
            });
        });
        Guard
    }

    pub(super) struct Guard;

    impl Drop for Guard {
        fn drop(&mut self) {
            STACK.with(|s| s.borrow_mut().pop());
        }
    }

    /// The entry this thread is computing now, innermost, if any.
    pub(super) fn current() -> Option<Arc<Entry>> {
        STACK.with(|s| s.borrow().last().map(|f| Arc::clone(&f.entry)))
    }

    /// Notes that the compute going on resolved `memo`, as `input` makes
    /// it (once, however often it resolves it).
    pub(super) fn note_input(memo: &dyn ErasedMemo, input: impl FnOnce() -> Input) {
        let known = STACK.with(|s| {
            s.borrow()
                .last()
                .map(|f| f.inputs.iter().any(|(m, _)| m.same_as(memo)))
        });
        if known != Some(false) {
            return;
        }
        // Made outside the borrow: it may read files.
        let input = input();
        STACK.with(|s| {
            if let Some(frame) = s.borrow_mut().last_mut() {
                frame.inputs.push((memo.clone_boxed(), input));
            }
        });
    }

    /// The memos the innermost compute resolved, in first-resolve order.
    pub(super) fn take_inputs() -> Vec<Input> {
        STACK.with(|s| {
            s.borrow_mut()
                .last_mut()
                .map(|f| std::mem::take(&mut f.inputs))
                .unwrap_or_default()
                .into_iter()
                .map(|(_, input)| input)
                .collect()
        })
    }

    /// `A -> B -> A` when this thread is computing `entry` (`A`), through
    /// the memos it resolved since.
    pub(super) fn cycle_to(entry: &Arc<Entry>) -> Option<String> {
        STACK.with(|s| {
            let stack = s.borrow();
            let from = stack.iter().position(|f| Arc::ptr_eq(&f.entry, entry))?;
            let names: Vec<String> = stack[from..]
                .iter()
                .map(|f| &f.entry)
                .chain([entry])
                .map(|e| e.memo.describe())
                .collect();
            Some(names.join(" -> "))
        })
    }
}

impl Ready {
    /// What its disk entry says besides the payload.
    fn meta(&self) -> Meta {
        Meta {
            inputs: Some(self.stamp.inputs.clone()),
            bytes: Some(self.bytes),
            device_bytes: self.device_bytes,
            made_by: self.made_by.digest().map(str::to_owned),
        }
    }
}

/// Whether a value made under `stamp` may be saved to the disk tier: not
/// when one of its inputs could not be fingerprinted, since a later run
/// could not tell whether it still holds.
fn savable(memo: &dyn ErasedMemo, stamp: &Stamp) -> bool {
    let Some(input) = stamp.inputs.iter().find_map(Input::unreadable) else {
        return true;
    };
    journal::warn(format!(
        "memo {} is not saved to the disk tier: its input `{}` could not be fingerprinted ({})",
        memo.describe(),
        input.memo,
        input.seen.unreadable.as_deref().unwrap_or_default()
    ));
    false
}

impl Cache {
    /// Loads the value from the disk tier if the memo persists and its
    /// entry is good and made from inputs that still hold, else computes
    /// it (and saves it, if it persists).
    fn load_or_compute(&self, memo: &dyn ErasedMemo) -> (Outcome, Resolution) {
        let seen = memo.seen();
        let disk = memo.disk_key(&seen);
        let mut _held = None;
        if let Some((path, key)) = &disk {
            match self.load(memo, path, key, &seen) {
                Ok(ready) => return (Ok(ready), Resolution::Loaded),
                Err(EntryError::Missing) => {}
                Err(EntryError::Stale(why)) => {
                    journal::warn(format!("memo {} recomputed: {why}", memo.describe()))
                }
                Err(unusable) => journal::warn(format!(
                    "memo {}: the disk tier's entry is not used ({unusable}); computing it again",
                    memo.describe()
                )),
            }
            match super::disk::hold(path) {
                Ok((held, waited)) => {
                    if waited > std::time::Duration::from_secs(1) {
                        journal::warn(format!(
                            "memo {} waited {} for another process computing it",
                            memo.describe(),
                            nnbench_vocab::format_ns(waited.as_nanos() as f64)
                        ));
                    }
                    // Another process may have saved it since the first look.
                    if let Ok(ready) = self.load(memo, path, key, &seen) {
                        return (Ok(ready), Resolution::Loaded);
                    }
                    _held = Some(held);
                }
                Err(e) => journal::warn(format!(
                    "memo {}: its disk entry could not be locked ({e}); other processes sharing \
                     the tier may compute it too",
                    memo.describe()
                )),
            }
        }
        let outcome = compute(memo, seen);
        if let (Ok(ready), Some((path, key))) = (&outcome, &disk)
            && savable(memo, &ready.stamp)
            && let Err(e) = memo.save_erased(path, key, &ready.meta(), &*ready.value)
        {
            journal::warn(format!(
                "memo {} could not be saved to the disk tier ({e:#}); it stays in memory only",
                memo.describe()
            ));
        }
        (outcome, Resolution::Computed)
    }

    /// The value of `memo`'s disk entry at `path`, unless the entry is
    /// missing, unusable or stale.
    fn load(
        &self,
        memo: &dyn ErasedMemo,
        path: &std::path::Path,
        key: &super::disk::Key,
        seen: &Seen,
    ) -> Result<Ready, EntryError> {
        let before = rss::current_bytes();
        let stale = |inputs: &[Input]| made_from::stale(inputs, &|input| self.at_hand(input));
        match catch_unwind(AssertUnwindSafe(|| memo.load_erased(path, key, &stale))) {
            Ok(Ok(((value, exact), meta))) => {
                let stamp = Stamp {
                    seen: seen.clone(),
                    inputs: meta.inputs.unwrap_or_default(),
                };
                let made_by = MadeBy::Entry(meta.made_by.map(Arc::from));
                Ok(ready(memo, value, exact, before, stamp, made_by))
            }
            Ok(Err(error)) => Err(error),
            Err(payload) => Err(EntryError::Unusable {
                path: path.to_owned(),
                reason: format!("loading it panicked: {}", panic_message(&*payload)),
            }),
        }
    }
}

fn ready(
    memo: &dyn ErasedMemo,
    value: Arc<dyn Any + Send + Sync>,
    exact: Option<u64>,
    before: Option<u64>,
    stamp: Stamp,
    made_by: MadeBy,
) -> Ready {
    let grown = match (before, rss::current_bytes()) {
        (Some(before), Some(after)) => after.saturating_sub(before),
        _ => 0,
    };
    Ready {
        device_bytes: memo.device_bytes_erased(&*value),
        value,
        bytes: exact.unwrap_or(grown),
        stamp: Arc::new(stamp),
        made_by,
    }
}

/// Computes `memo`, whose own inputs look as `seen` says; the stamp of its
/// value records the memos its compute resolved.
fn compute(memo: &dyn ErasedMemo, seen: Seen) -> Outcome {
    let before = rss::current_bytes();
    let result = catch_unwind(AssertUnwindSafe(|| memo.compute_erased()));
    let stamp = Stamp {
        seen,
        inputs: computing::take_inputs(),
    };
    match result {
        Ok(Ok((value, exact))) => Ok(ready(memo, value, exact, before, stamp, MadeBy::This)),
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
