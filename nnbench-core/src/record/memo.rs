//! The memo cache's figures in the record: one counters type, whose
//! per-case and per-run figures are sums and differences of it.

use std::ops::{Add, AddAssign, Deref, DerefMut, Sub};

use serde::{Deserialize, Serialize};

/// Defines [`MemoCounters`] and its arithmetic from one list of fields.
macro_rules! memo_counters {
    ($($(#[doc = $doc:literal])* $field:ident),* $(,)?) => {
        /// What the memo cache did: resolves that found their value, that
        /// loaded it from disk or computed it, and what it evicted and spilled.
        ///
        /// Counters add and subtract field by field, so the figures of a
        /// run are the cache's counters at its end minus those at its start.
        ///
        /// # Example
        ///
        /// ```
        /// use nnbench::record::MemoCounters;
        /// let mut before = MemoCounters::default();
        /// before.hits = 2;
        /// let mut more = MemoCounters::default();
        /// more.hits = 3;
        /// assert_eq!((before + more - before).hits, 3);
        /// ```
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        #[non_exhaustive]
        pub struct MemoCounters {
            $($(#[doc = $doc])* #[serde(default, skip_serializing_if = "crate::record::is_zero")] pub $field: u64,)*
        }

        impl Add for MemoCounters {
            type Output = Self;
            fn add(self, other: Self) -> Self {
                Self { $($field: self.$field.saturating_add(other.$field),)* }
            }
        }

        /// Saturating: counters read at two moments never go negative.
        impl Sub for MemoCounters {
            type Output = Self;
            fn sub(self, other: Self) -> Self {
                Self { $($field: self.$field.saturating_sub(other.$field),)* }
            }
        }

        impl MemoCounters {
            /// How many counters there are.
            pub(crate) const LEN: usize = [$(stringify!($field)),*].len();

            /// The counters in declared order.
            pub(crate) fn to_array(self) -> [u64; Self::LEN] {
                [$(self.$field),*]
            }

            /// The inverse of [`to_array`](Self::to_array).
            pub(crate) fn from_array(values: [u64; Self::LEN]) -> Self {
                let [$($field),*] = values;
                Self { $($field),* }
            }
        }
    };
}

memo_counters! {
    /// Resolves that found their value in memory.
    hits,
    /// Resolves that did not: loaded from the disk tier or computed.
    misses,
    /// Misses loaded from the disk tier.
    disk_hits,
    /// Misses computed.
    computes,
    /// Evicted entries spilled to the disk tier.
    spills,
    /// Computes that failed.
    failures,
    /// Entries evicted.
    evictions,
}

impl AddAssign for MemoCounters {
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

/// The memo cache over a whole run.
///
/// Its counters are fields of [`MemoCounters`], read through it:
/// `record.memo.hits`.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let m = &record.memo;
/// println!("{} computes, {} entries left holding {} bytes", m.misses, m.entries_at_end, m.resident_bytes_at_end);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunMemoRecord {
    /// What the cache did during the run.
    #[serde(flatten)]
    pub counters: MemoCounters,
    /// Entries in the cache when the run ended.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub entries_at_end: usize,
    /// Bytes those entries hold.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub resident_bytes_at_end: u64,
    /// Bytes of the disk tier's entries when the run ended.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub disk_bytes_at_end: u64,
}

/// What one case did with the memo cache.
///
/// A case's record keeps the resolve counters (hits, misses, disk hits,
/// computes) and names what it evicted; they are read through
/// [`MemoCounters`]: `case.memo.hits`.
///
/// # Example
///
/// ```
/// # fn f(m: &nnbench::record::MemoRecord) {
/// println!("{} computed, {} reused, evicted {:?}", m.misses, m.hits, m.evicted);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoRecord {
    /// The case's resolves.
    #[serde(flatten, with = "resolves")]
    pub counters: MemoCounters,
    /// Memos evicted during the case: by its hooks, or by the runner
    /// after their last use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evicted: Vec<String>,
    /// Evicted memos whose value something else still held, so that its
    /// memory was not freed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leaked: Vec<LeakRecord>,
    /// The version and fingerprint of each memo the case used that has
    /// either ([`Memo::version`](crate::Memo::version),
    /// [`Memo::fingerprint`](crate::Memo::fingerprint)): a comparison
    /// reports a case whose model or data changed between the runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<MemoInput>,
    /// The bytes of each of the case's memos once resolved, where its
    /// [`Memo::size_of`](crate::Memo::size_of) or
    /// [`Memo::device_bytes`](crate::Memo::device_bytes) tells: what the
    /// `memo` figure of a comparison judges.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<MemoSize>,
    /// Memos of the next case that loaded in the background while this
    /// case ran (`--prefetch`): this case's time and memory figures include
    /// that load's disturbance, and its memory peaks that memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefetched: Vec<String>,
    /// The case's memos whose value was loaded from a disk entry that
    /// another build of the bench computed, and that do not declare
    /// [`Memo::build_independent`](crate::Memo::build_independent): a
    /// change to how this build computes them is not in the case's
    /// figures, and a comparison says so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub made_by_other_build: Vec<String>,
    /// The case's own memos (its parameters) computed for it, found
    /// neither in memory nor on disk: what a paired run counts as builds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub computed: Vec<String>,
    /// The case's own memos (its parameters) that were loaded, from disk
    /// or computed, for it: what the run's `memos.loads` sums.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub loads: u64,
    /// The host and GPU bytes those loads brought in.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bytes_loaded: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MemosRecord {
    /// The loads of `cases`, summed, with the run's plan and sizes.
    pub(crate) fn of_cases(
        cases: &[super::CaseRecord],
        plan: Option<PlanRecord>,
        sizes: Vec<MemoSize>,
    ) -> Self {
        Self {
            loads: cases.iter().map(|c| c.memo.loads).sum(),
            bytes_loaded: cases.iter().map(|c| c.memo.bytes_loaded).sum(),
            plan,
            sizes,
        }
    }
}

/// The loading of a run's memos: how often the cases' memos were loaded,
/// what that brought in, the plan under a memory budget, and each memo's
/// size for the next run's plan.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let m = &record.memos;
/// println!("{} loads, {} bytes", m.loads, m.bytes_loaded);
/// if let Some(plan) = &m.plan {
///     println!("planned {} loads; at least {}", plan.loads, plan.lower_bound_loads);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemosRecord {
    /// Loads of the cases' memos (from disk or computed): the sum of the
    /// cases' `memo.loads`.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub loads: u64,
    /// The host and GPU bytes those loads brought in.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub bytes_loaded: u64,
    /// The order planned under `--memo-budget` or `--memo-gpu-budget`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanRecord>,
    /// The size of each memo the run loaded, as the next run plans by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<MemoSize>,
}

/// The order a run planned under a memory budget, with what it expected.
///
/// # Example
///
/// ```
/// # fn f(plan: &nnbench::record::PlanRecord) {
/// let excess = plan.loads as f64 / plan.lower_bound_loads.max(1) as f64;
/// println!("{}: {excess:.2}x the loads of each memo once", plan.order);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PlanRecord {
    /// How the order goes: `` `data` in blocks of 2, `model` streamed ``,
    /// or `the declared order` where no budget binds.
    pub order: String,
    /// `--memo-budget`, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_bytes: Option<u64>,
    /// `--memo-gpu-budget`, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_budget_bytes: Option<u64>,
    /// The loads of the cases' memos it expects.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub loads: u64,
    /// The host and GPU bytes they bring in.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub bytes: u64,
    /// The most host memory the cases' memos hold at once.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub peak_bytes: u64,
    /// The most GPU memory they hold at once.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub peak_gpu_bytes: u64,
    /// Each memo loaded once: the fewest loads any order makes.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub lower_bound_loads: u64,
    /// The bytes of each memo once.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub lower_bound_bytes: u64,
    /// Memo types whose size was not known when it planned (counted as
    /// empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_sizes: Vec<String>,
}

/// What a memo held once loaded.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for size in &record.memos.sizes {
///     println!("{} ({}): {} bytes", size.memo, size.type_name, size.bytes);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoSize {
    /// The memo's description.
    pub memo: String,
    /// Its type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Host bytes.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub bytes: u64,
    /// GPU bytes.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub device_bytes: u64,
}

/// What a memo's inputs looked like when a case used it.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// for input in &case.memo.inputs {
///     println!("{} v{}: {:?}", input.memo, input.version, input.fingerprint);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoInput {
    /// The memo's description.
    pub memo: String,
    /// Its [`Memo::version`](crate::Memo::version).
    #[serde(default)]
    pub version: u32,
    /// Its [`Memo::fingerprint`](crate::Memo::fingerprint), or what kept it
    /// from being read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// A memo evicted while references to its value remained.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// for leak in &case.memo.leaked {
///     eprintln!("{} is still held {} times", leak.memo, leak.references);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeakRecord {
    /// The memo's description.
    pub memo: String,
    /// References to its value held outside the cache when it was evicted.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub references: usize,
}

/// Reads `record.memo.hits` as `record.memo.counters.hits`.
macro_rules! deref_to_counters {
    ($($ty:ty),*) => {$(
        impl Deref for $ty {
            type Target = MemoCounters;
            fn deref(&self) -> &MemoCounters {
                &self.counters
            }
        }

        impl DerefMut for $ty {
            fn deref_mut(&mut self) -> &mut MemoCounters {
                &mut self.counters
            }
        }
    )*};
}

deref_to_counters!(RunMemoRecord, MemoRecord);

/// The resolve counters alone, as a case's record has them since schema 1.
mod resolves {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::MemoCounters;

    #[derive(Serialize, Deserialize)]
    struct Resolves {
        #[serde(default, skip_serializing_if = "crate::record::is_zero")]
        hits: u64,
        #[serde(default, skip_serializing_if = "crate::record::is_zero")]
        misses: u64,
        #[serde(default, skip_serializing_if = "crate::record::is_zero")]
        disk_hits: u64,
        #[serde(default, skip_serializing_if = "crate::record::is_zero")]
        computes: u64,
    }

    pub(super) fn serialize<S: Serializer>(c: &MemoCounters, s: S) -> Result<S::Ok, S::Error> {
        Resolves {
            hits: c.hits,
            misses: c.misses,
            disk_hits: c.disk_hits,
            computes: c.computes,
        }
        .serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<MemoCounters, D::Error> {
        let r = Resolves::deserialize(d)?;
        Ok(MemoCounters {
            hits: r.hits,
            misses: r.misses,
            disk_hits: r.disk_hits,
            computes: r.computes,
            ..MemoCounters::default()
        })
    }
}
