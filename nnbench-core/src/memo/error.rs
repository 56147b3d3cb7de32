use std::error::Error as StdError;

/// Why a memo has no value: its `compute` returned an error or panicked,
/// or resolved the memo itself.
///
/// Every case that needs the memo fails with this error, which names the memo
/// by its `Debug` description and keeps the cause.
///
/// # Example
///
/// ```
/// use nnbench::Memo;
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Missing;
/// impl Memo for Missing {
///     type Value = Vec<u8>;
///     fn compute(&self) -> nnbench::Result<Vec<u8>> {
///         Ok(std::fs::read("/no/such/file.npy")?)
///     }
/// }
///
/// let err = nnbench::memo::resolve(&Missing).unwrap_err();
/// assert!(err.to_string().contains("memo Missing failed"));
/// assert!(err.chain().count() >= 2, "the io::Error is kept as the cause");
/// # nnbench::memo::evict(&Missing);
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MemoError {
    /// `compute` returned an error.
    #[error("memo {memo} failed")]
    Failed {
        /// The memo's `Debug` description.
        memo: String,
        /// What `compute` returned.
        #[source]
        source: Box<dyn StdError + Send + Sync + 'static>,
    },
    /// `compute` panicked.
    #[error("memo {memo} panicked: {message}")]
    Panicked {
        /// The memo's `Debug` description.
        memo: String,
        /// The panic's message.
        message: String,
    },
    /// `compute` resolved the memo being computed, directly or through
    /// other memos: the value can never be made.
    #[error("memo cycle: {cycle} (a memo's compute resolves itself)")]
    Cycle {
        /// The memos from the one resolved again to itself: `A -> B -> A`.
        cycle: String,
    },
}
