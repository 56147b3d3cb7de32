//! The [`Memo`] trait: what a fixture is, and how it is computed, sized,
//! stored and fingerprinted.

use std::fmt::Debug;
use std::hash::Hash;

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
    ///
    /// # Errors
    ///
    /// Whatever keeps the value from being made; every case that needs the
    /// memo fails with it.
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

    /// The bytes `value` holds in GPU memory (tensors on a CUDA device),
    /// which [`size_of`](Self::size_of) leaves out: counted against
    /// `--memo-gpu-budget` and in a case's `memory.memo_gpu_resident_bytes`.
    /// 0, the default, for values in host memory.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::Memo;
    ///
    /// /// A buffer some GPU library keeps on the device.
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct DeviceBuffer(u64);
    ///
    /// impl Memo for DeviceBuffer {
    ///     type Value = u64;
    ///     fn compute(&self) -> nnbench::Result<u64> { Ok(self.0) }
    ///     fn size_of(&self, _: &u64) -> Option<u64> { Some(0) }
    ///     fn device_bytes(&self, bytes: &u64) -> u64 { *bytes }
    /// }
    /// assert_eq!(DeviceBuffer(1 << 20).device_bytes(&(1 << 20)), 1 << 20);
    /// ```
    fn device_bytes(&self, value: &Self::Value) -> u64 {
        let _ = value;
        0
    }

    /// How to keep the value on disk between runs (and between an eviction
    /// and the next use): `None`, the default, keeps it in memory only.
    ///
    /// A persisted value is saved under `target/nnbench/memo-cache/` the
    /// first time it is computed; later runs, or later cases after an
    /// eviction, load it from there instead of computing it again.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::Memo;
    /// use nnbench::store::{Format, Json};
    ///
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct Vocabulary(&'static str);
    ///
    /// impl Memo for Vocabulary {
    ///     type Value = Vec<String>;
    ///     fn compute(&self) -> nnbench::Result<Vec<String>> {
    ///         Ok(self.0.split(' ').map(str::to_owned).collect())
    ///     }
    ///     fn store(&self) -> Option<Box<dyn Format<Vec<String>>>> {
    ///         Some(Box::new(Json))
    ///     }
    /// }
    /// ```
    fn store(&self) -> Option<Box<dyn crate::store::Format<Self::Value>>> {
        None
    }

    /// The version of `compute`: raise it when `compute` changes what it
    /// returns, and values saved on disk by older versions are recomputed.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::Memo;
    /// # #[derive(Clone, Debug, Hash, PartialEq, Eq)] struct Tokens;
    /// impl Memo for Tokens {
    ///     type Value = Vec<u32>;
    ///     fn compute(&self) -> nnbench::Result<Vec<u32>> { Ok(vec![1, 2]) }
    ///     fn version(&self) -> u32 { 2 } // tokenizer fixed in v2
    /// }
    /// ```
    fn version(&self) -> u32 {
        0
    }

    /// What the memo's inputs look like now, for the disk tier: a value
    /// saved under another fingerprint is recomputed, and so is a value
    /// built from this memo (one whose compute resolved it) once this
    /// fingerprint changed. For a memo read from a file,
    /// [`file_fingerprint`](super::file_fingerprint) (path, length, modification time) or
    /// [`file_digest`](super::file_digest): the files they read are noted, so that a process
    /// that never resolves this memo still checks what was built from it by
    /// those files.
    ///
    /// # Errors
    ///
    /// When the inputs cannot be inspected; the disk tier is then skipped
    /// and the value computed (whose own error then says what is wrong).
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::Memo;
    /// # use std::path::PathBuf;
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct Weights(PathBuf);
    ///
    /// impl Memo for Weights {
    ///     type Value = Vec<u8>;
    ///     fn compute(&self) -> nnbench::Result<Vec<u8>> { Ok(std::fs::read(&self.0)?) }
    ///     fn fingerprint(&self) -> nnbench::Result<Option<String>> {
    ///         nnbench::memo::file_fingerprint(&self.0).map(Some)
    ///     }
    /// }
    /// ```
    fn fingerprint(&self) -> Result<Option<String>> {
        Ok(None)
    }

    /// Whether every build of the bench computes the same value, so that
    /// two builds may share its disk entry. A paired run's sides and
    /// `nnbench bisect`'s commits keep their fixtures apart by default, so
    /// that a change to how a model is trained is measured on the model
    /// it trains; a memo that only reads a file, which no build changes,
    /// says `true` here and is loaded once for both. A comparison notes a
    /// case that measured a value another build computed, unless its memo
    /// says `true`.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::Memo;
    /// # use std::path::PathBuf;
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct Split(PathBuf);
    ///
    /// impl Memo for Split {
    ///     type Value = Vec<u8>;
    ///     fn compute(&self) -> nnbench::Result<Vec<u8>> { Ok(std::fs::read(&self.0)?) }
    ///     fn fingerprint(&self) -> nnbench::Result<Option<String>> {
    ///         nnbench::memo::file_fingerprint(&self.0).map(Some)
    ///     }
    ///     fn build_independent(&self) -> bool { true } // bytes read, not made
    /// }
    /// ```
    fn build_independent(&self) -> bool {
        false
    }
}
