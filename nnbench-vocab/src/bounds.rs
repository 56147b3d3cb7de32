//! The bounds of the attributes' options that the runtime's flags share:
//! the macro checks them at compile time, the command line at run time.

/// The fewest samples a case may ask for: criterion's minimum, which
/// `--criterion` hands the sample size to.
///
/// # Example
///
/// ```
/// assert!(nnbench_vocab::MIN_SAMPLE_SIZE >= 2);
/// ```
pub const MIN_SAMPLE_SIZE: usize = 10;

/// The highest request rate an open loop takes, a second: what one
/// dispatcher thread can issue; a search for the highest rate stops there.
///
/// # Example
///
/// ```
/// assert!(nnbench_vocab::MAX_RATE > 1.0);
/// ```
pub const MAX_RATE: f64 = 1e6;

/// The most requests in flight (`concurrency`) or threads (`threads`) a
/// level may ask for.
///
/// # Example
///
/// ```
/// assert!(nnbench_vocab::MAX_LEVEL > 1);
/// ```
pub const MAX_LEVEL: usize = 4096;
