//! How cases are timed: once, sampled by criterion, or decided by the first
//! call.

use std::time::Duration;

/// How a family's cases are timed.
///
/// # Example
///
/// ```
/// let runner = nnbench::Runner::new().timing(nnbench::Timing::Once);
/// # let _ = runner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// One call, its duration: for heavy cases (a model's evaluation).
    Once,
    /// criterion samples the function: for small kernels.
    Sampled,
    /// The first call yields the metric and its time; if it took at least
    /// the threshold (100 ms by default), the case stays `Once`, otherwise
    /// criterion samples it.
    #[default]
    Auto,
}

/// Sampling settings; `None` leaves criterion's default (100 samples, 3 s
/// of warm-up, 5 s of measurement).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// let sampling = nnbench::Sampling {
///     sample_size: Some(20),
///     warm_up: Some(Duration::from_millis(500)),
///     measurement_time: None,
/// };
/// let runner = nnbench::Runner::new().sampling(sampling);
/// # let _ = runner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sampling {
    /// Samples to take (at least 10, as criterion requires).
    pub sample_size: Option<usize>,
    /// Time to run the function before sampling.
    pub warm_up: Option<Duration>,
    /// Time to spend sampling.
    pub measurement_time: Option<Duration>,
}

impl Sampling {
    /// These settings, with `over`'s where it has them.
    pub(crate) fn overridden_by(self, over: Sampling) -> Sampling {
        Sampling {
            sample_size: over.sample_size.or(self.sample_size),
            warm_up: over.warm_up.or(self.warm_up),
            measurement_time: over.measurement_time.or(self.measurement_time),
        }
    }
}

/// The first-call duration from which `Auto` keeps a case `Once`.
pub const DEFAULT_AUTO_THRESHOLD: Duration = Duration::from_millis(100);
