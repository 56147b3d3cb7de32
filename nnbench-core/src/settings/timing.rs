//! How cases are timed: each family's own timing, and what a run forces on
//! all of them (`--once`, `--criterion`, the sampling flags).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};

use super::parse;
use crate::measure::round::Round;

/// How a family's cases are timed.
///
/// # Example
///
/// ```
/// let runner = nnbench::Runner::new().timing(nnbench::Timing::Once);
/// # let _ = runner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timing {
    /// One call, its duration: for heavy cases (a model's evaluation).
    Once,
    /// nnbench's sampler samples the function until its median is known
    /// within its precision target (or the measurement time is spent): for
    /// small kernels.
    Sampled,
    /// The first call yields the metric and its time; if it took at least
    /// the threshold (`--auto-threshold`), the case stays `Once`, otherwise
    /// it is sampled.
    #[default]
    Auto,
    /// One call, its instructions counted exactly under Callgrind
    /// (valgrind's CPU simulator), with memo loading, hooks and the harness
    /// left out: a figure that a busy machine does not move. A bench
    /// binary starts such cases in a worker under valgrind, which must be
    /// installed. As the run's timing: `--instructions`.
    Instructions,
    /// criterion samples the function, with its settings, analysis and
    /// reports under `target/criterion` (the `criterion` feature). The
    /// run's timing only ([`Runner::timing`](crate::Runner::timing),
    /// `--criterion`), not a family's.
    Criterion,
}

/// Sampling settings; `None` leaves the default, which a bench binary's
/// `--help` states: nnbench's sampler's, or under criterion (`--criterion`)
/// criterion's.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// let sampling = nnbench::Sampling::new()
///     .sample_size(20)
///     .warm_up_time(Duration::from_millis(500));
/// assert_eq!(sampling.measurement_time, None);
/// let runner = nnbench::Runner::new().sampling(sampling);
/// # let _ = runner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "Timing")]
#[non_exhaustive]
pub struct Sampling {
    /// The least number of samples, or under criterion (`--criterion`)
    /// exactly this many (10 or more, as it requires). `--help` states the
    /// default of each.
    #[arg(long, value_name = "N", value_parser = parse::sample_size, help = help::sample_size())]
    pub sample_size: Option<usize>,
    /// Time to run the function before sampling: seconds, or a duration
    /// such as `500ms`. `--help` states the default.
    #[arg(
        long = "warm-up-time",
        value_name = "DURATION",
        value_parser = parse::duration,
        help = help::warm_up()
    )]
    pub warm_up_time: Option<Duration>,
    /// The most time spent sampling a case, or under criterion the time it
    /// spends: seconds or a duration. `--help` states the default.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration, help = help::measurement_time())]
    pub measurement_time: Option<Duration>,
}

impl Sampling {
    /// No setting of its own: each falls back to the family's, then to the
    /// default.
    pub const fn new() -> Self {
        Sampling {
            sample_size: None,
            warm_up_time: None,
            measurement_time: None,
        }
    }

    /// The least number of samples; under criterion, exactly this many.
    #[must_use]
    pub const fn sample_size(mut self, samples: usize) -> Self {
        self.sample_size = Some(samples);
        self
    }

    /// Time to run the function before sampling.
    #[must_use]
    pub const fn warm_up_time(mut self, time: Duration) -> Self {
        self.warm_up_time = Some(time);
        self
    }

    /// The name [`Sampling::warm_up_time`] had before 0.1.0.
    #[doc(hidden)]
    #[deprecated(
        since = "0.1.0",
        note = "renamed `warm_up_time`, as criterion's and the flag `--warm-up-time`"
    )]
    #[must_use]
    pub const fn warm_up(self, time: Duration) -> Self {
        self.warm_up_time(time)
    }

    /// The most time spent sampling a case; under criterion, the time it
    /// spends.
    #[must_use]
    pub const fn measurement_time(mut self, time: Duration) -> Self {
        self.measurement_time = Some(time);
        self
    }

    /// These settings, with `over`'s where it has them.
    pub(crate) fn overridden_by(self, over: Sampling) -> Sampling {
        Sampling {
            sample_size: over.sample_size.or(self.sample_size),
            warm_up_time: over.warm_up_time.or(self.warm_up_time),
            measurement_time: over.measurement_time.or(self.measurement_time),
        }
    }
}

/// The help of the sampling flags, whose defaults are the constants the
/// sampler falls back to, so that `--help` cannot drift from them.
mod help {
    use std::time::Duration;

    use crate::measure::adaptive::StopRule;

    fn duration(d: Duration) -> String {
        humantime::format_duration(d).to_string()
    }

    pub(super) fn sample_size() -> String {
        format!(
            "The least number of samples (default {}), or under criterion (--criterion) exactly \
             this many (its default 100; 10 or more, as it requires)",
            StopRule::default().min_samples
        )
    }

    pub(super) fn warm_up() -> String {
        format!(
            "Time to run the function before sampling (default {}, 3s under criterion): \
             seconds, or a duration such as 500ms",
            duration(StopRule::default().warm_up)
        )
    }

    pub(super) fn measurement_time() -> String {
        format!(
            "The most time spent sampling a case (default {}), or under criterion the time \
             it spends (default 5s): seconds or a duration",
            duration(StopRule::default().time_cap)
        )
    }

    pub(super) fn criterion() -> String {
        format!(
            "Let criterion sample every case, with its settings, analysis and reports \
             (otherwise nnbench's sampler samples, and stops once the median is known within \
             {}%)",
            100.0 * StopRule::default().relative
        )
    }

    pub(super) fn auto_threshold() -> String {
        format!(
            "First-call duration from which automatic timing keeps one call (default {}): \
             seconds, or a duration such as 250ms",
            duration(super::DEFAULT_AUTO_THRESHOLD)
        )
    }
}

/// The first-call duration from which `Auto` keeps a case `Once`.
pub(crate) const DEFAULT_AUTO_THRESHOLD: Duration = Duration::from_millis(100);

/// The timing group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Timing")]
pub(crate) struct TimingSettings {
    /// Forces every family's timing: `--once`, `--criterion` or
    /// `--instructions`.
    #[command(flatten)]
    pub forced: Forced,
    /// First-call duration from which automatic timing keeps one call:
    /// seconds, or a duration such as `250ms`.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration, help = help::auto_threshold())]
    pub auto_threshold: Option<Duration>,
    /// Overrides every family's sampling settings.
    #[command(flatten)]
    pub sampling: Sampling,
    /// Each case once, quickly: `cargo test --benches` (a bench binary
    /// without `--bench`).
    #[arg(skip)]
    pub test_mode: bool,
    /// In a worker of a paired run, what to take of each case in this
    /// round (a case not named: calibrate); `None` elsewhere.
    #[arg(skip)]
    pub rounds: Option<Arc<BTreeMap<String, Round>>>,
}

impl TimingSettings {
    /// The threshold of `Auto`, the default where none was given.
    pub(crate) fn auto_threshold(&self) -> Duration {
        self.auto_threshold.unwrap_or(DEFAULT_AUTO_THRESHOLD)
    }
}

/// The timing a run forces on every family, from three flags: `--once`,
/// `--criterion` (criterion samples every case) or `--instructions`
/// (Callgrind counts every case). Written by hand because one setting
/// takes all three flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Forced(pub Option<Timing>);

const ONCE: &str = "once";
const CRITERION: &str = "criterion";
const INSTRUCTIONS: &str = "instructions";

impl FromArgMatches for Forced {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self(if matches.get_flag(ONCE) {
            Some(Timing::Once)
        } else if matches.get_flag(CRITERION) {
            Some(Timing::Criterion)
        } else if matches.get_flag(INSTRUCTIONS) {
            Some(Timing::Instructions)
        } else {
            None
        }))
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for Forced {
    fn augment_args(command: Command) -> Command {
        command
            .arg(
                Arg::new(ONCE)
                    .long(ONCE)
                    .action(ArgAction::SetTrue)
                    .conflicts_with_all([CRITERION, INSTRUCTIONS])
                    .help("Time every case with one call"),
            )
            .arg(
                Arg::new(CRITERION)
                    .long(CRITERION)
                    .action(ArgAction::SetTrue)
                    .help(help::criterion()),
            )
            .arg(
                Arg::new(INSTRUCTIONS)
                    .long(INSTRUCTIONS)
                    .action(ArgAction::SetTrue)
                    .conflicts_with(CRITERION)
                    .help(
                        "Count every case's instructions exactly under Callgrind, one call each, in \
                         a worker under valgrind (which must be installed): a figure a busy machine \
                         does not move",
                    ),
            )
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}
