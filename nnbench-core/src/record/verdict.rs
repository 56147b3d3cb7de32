//! What a comparison concludes about a figure or a case: the word that
//! `nnbench compare`, `--baseline` and `--paired` share.

use serde::{Deserialize, Serialize};

/// What a comparison concluded about one figure, or one case.
///
/// # Example
///
/// ```
/// use nnbench::record::Verdict;
/// assert_eq!(serde_json::to_string(&Verdict::NotComparable).unwrap(), "\"not_comparable\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Verdict {
    /// Better by more than the limit (and, for time, significantly).
    Improved,
    /// Within the limit, or not significant.
    Unchanged,
    /// A figure that cannot be judged: missing on a side, not a number,
    /// or a failed case.
    NotComparable,
    /// Worse by more than the limit (and, for time, significantly), or
    /// a case that failed where it passed before.
    Regressed,
}
