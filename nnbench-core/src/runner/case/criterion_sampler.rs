//! `--criterion`: criterion samples every case through
//! `Bencher::iter_custom`, with its analysis and its baselines under
//! `target/criterion`. criterion is the `criterion` feature's: a build
//! without it refuses `--criterion` before the run starts.

use crate::measure::cpu::Elapsed;
use crate::settings::Baselines;
use crate::{Error, Result};
#[cfg(not(feature = "criterion"))]
use {crate::runner::report::console::Console, crate::settings::Sampling};

/// One criterion for the whole run, made when a case first samples.
pub(crate) struct CriterionSampler {
    #[cfg(feature = "criterion")]
    baselines: Baselines,
    #[cfg(feature = "criterion")]
    criterion: Option<criterion::Criterion>,
}

/// Why `--criterion` cannot run in this build, where it cannot.
#[cfg(not(feature = "criterion"))]
pub(crate) const UNAVAILABLE: &str = "--criterion (Timing::Criterion for the run) hands every case to criterion, \
     and this build lacks nnbench's `criterion` feature: \
     nnbench = { version = \"0.1\", features = [\"criterion\"] }";

#[cfg(feature = "criterion")]
mod driven {
    use std::cell::RefCell;
    use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
    use std::time::Duration;

    use criterion::Criterion;

    use super::{CriterionSampler, Elapsed, Error, Result};
    use crate::runner::report::console::Console;
    use crate::settings::Sampling;

    /// criterion's defaults, restated because its builder has no reset.
    const SAMPLE_SIZE: usize = 100;
    const WARM_UP: Duration = Duration::from_secs(3);
    const MEASUREMENT: Duration = Duration::from_secs(5);

    /// Unwinds out of criterion when the function fails mid-sampling.
    struct Aborted;

    impl CriterionSampler {
        fn criterion(&mut self, sampling: &Sampling) -> Criterion {
            let criterion = self.criterion.take().unwrap_or_else(|| {
                let mut criterion = Criterion::default();
                if let Some(name) = &self.baselines.save {
                    criterion = criterion.save_baseline(name.clone());
                }
                if let Some(name) = &self.baselines.compare {
                    // Lenient: a case added since the baseline is new, not a failure.
                    criterion = criterion.retain_baseline(name.clone(), false);
                }
                criterion
            });
            criterion
                .sample_size(sampling.sample_size.unwrap_or(SAMPLE_SIZE))
                .warm_up_time(sampling.warm_up_time.unwrap_or(WARM_UP))
                .measurement_time(sampling.measurement_time.unwrap_or(MEASUREMENT))
        }

        /// Lets criterion drive `routine`; returns the samples it measured
        /// (the calls after warm-up).
        pub(crate) fn sample(
            &mut self,
            id: &str,
            sampling: &Sampling,
            console: &Console,
            mut routine: impl FnMut(u64) -> Result<Elapsed>,
        ) -> Result<Vec<(u64, Elapsed)>> {
            // Making one looks for gnuplot, and says so.
            let mut criterion = console.foreign_output(|| self.criterion(sampling));
            let calls: RefCell<Vec<(u64, Elapsed)>> = RefCell::new(Vec::new());
            let failure: RefCell<Option<Error>> = RefCell::new(None);
            // criterion prints as it samples: around the progress bar, or not
            // at all when the run is quiet.
            let outcome = console.foreign_output(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    criterion.bench_function(id, |bencher| {
                        bencher.iter_custom(|iters| match routine(iters) {
                            Ok(elapsed) => {
                                calls.borrow_mut().push((iters, elapsed));
                                elapsed.wall
                            }
                            Err(error) => {
                                *failure.borrow_mut() = Some(error);
                                resume_unwind(Box::new(Aborted))
                            }
                        });
                    });
                }))
            });
            self.criterion = Some(criterion);
            if let Err(payload) = outcome {
                return match failure.into_inner() {
                    Some(error) => Err(error),
                    None => resume_unwind(payload),
                };
            }
            let mut calls = calls.into_inner();
            let kept = sampling.sample_size.unwrap_or(SAMPLE_SIZE).min(calls.len());
            Ok(calls.split_off(calls.len() - kept))
        }

        /// criterion's closing summary, once every case has run.
        pub(crate) fn finish(self, console: &Console) {
            if let Some(criterion) = self.criterion {
                console.foreign_output(|| criterion.final_summary());
            }
        }
    }
}

impl CriterionSampler {
    pub(crate) fn new(baselines: Baselines) -> Self {
        #[cfg(not(feature = "criterion"))]
        drop(baselines);
        Self {
            #[cfg(feature = "criterion")]
            baselines,
            #[cfg(feature = "criterion")]
            criterion: None,
        }
    }
}

#[cfg(not(feature = "criterion"))]
impl CriterionSampler {
    /// Refuses: a run without criterion refuses `--criterion` before it
    /// starts, so that no case gets here.
    pub(crate) fn sample(
        &mut self,
        _id: &str,
        _sampling: &Sampling,
        _console: &Console,
        _routine: impl FnMut(u64) -> Result<Elapsed>,
    ) -> Result<Vec<(u64, Elapsed)>> {
        Err(Error::msg(UNAVAILABLE))
    }

    /// Nothing to summarize.
    pub(crate) fn finish(self, _console: &Console) {}
}
