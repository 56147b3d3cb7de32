//! Paired runs: every case measured on this build and on a base build in
//! alternation, and judged from the ratios of the rounds.

use std::path::PathBuf;
use std::time::Duration;

use super::parse;

/// The rounds a paired case is given at most, unless `--max-rounds` says.
pub(crate) const DEFAULT_MAX_ROUNDS: u32 = 100;

/// The fewest rounds before a paired case may stop early: the fewest that
/// bound a verdict.
pub(crate) const MIN_ROUNDS: usize = 8;

/// The rounds after which a paired case whose estimate lies within the
/// limit stops, settled or not: it is unchanged then, as it would be at the
/// cap. Only a case whose estimate lies beyond the limit runs on, to
/// `--max-rounds`, until its interval says whether it is.
pub(crate) const WITHIN_LIMIT_ROUNDS: usize = 50;

fn max_rounds_help() -> String {
    format!(
        "The most rounds a paired case is given (at least {MIN_ROUNDS}, the fewest that bound a \
         verdict); a case stops sooner once its interval is clear of the limit, and after \
         {WITHIN_LIMIT_ROUNDS} once its estimate is within it"
    )
}

/// The paired-run group of a run's settings.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Paired runs")]
pub(crate) struct Pairing {
    /// Measure every case on this build and on BASE (the executable of
    /// another build of this bench, such as `cargo bench --no-run` prints
    /// on the base revision)
    /// in alternating rounds of fresh processes; judge time from the
    /// rounds' ratios, memory and the value as --baseline does; exit 1 on
    /// a regression. The way to gate time on a shared machine.
    #[arg(
        long = "paired",
        value_name = "BASE",
        conflicts_with_all = ["compare", "isolate"]
    )]
    pub base: Option<PathBuf>,
    /// The most rounds a paired case is given; a case stops sooner once
    /// its interval is clear of the limit, or once its estimate has stayed
    /// within it for a while (`--help` says how many rounds).
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_MAX_ROUNDS,
        value_parser = clap::value_parser!(u32).range(MIN_ROUNDS as i64..),
        requires = "base",
        help = max_rounds_help()
    )]
    pub max_rounds: u32,
    /// The clock that judges a paired case's time: `auto` (the calling
    /// thread's CPU time where both builds' calls are single-threaded and
    /// compute, wall time otherwise), `wall` or `cpu`.
    #[arg(
        long = "paired-clock",
        value_name = "CLOCK",
        value_enum,
        default_value_t = ClockChoice::Auto,
        requires = "base"
    )]
    pub clock: ClockChoice,
    /// When a group of cases that share memos (or use none) keeps one
    /// worker a build for all its rounds, so that workers start and
    /// fixtures are built once a side: `auto` (the default: where a side's
    /// first round spent longer starting its worker and resolving memos
    /// than in the calls it timed, which each new round's workers would
    /// pay again), a DURATION (where a group's memos took that long or
    /// more to resolve in the first round; `0s`: every group with memos),
    /// or `off` (new workers every round). A
    /// kept worker keeps a speed of its own that rounds cannot average out
    /// (a few percent either way on a short loop): a case kept workers
    /// call regressed or improved is judged again on new workers each
    /// round, and one they call unchanged may hide a change about that
    /// size.
    #[arg(
        long = "paired-keep",
        value_name = "auto|off|DURATION",
        value_parser = keep,
        default_value = "auto",
        requires = "base"
    )]
    pub keep: Keep,
}

/// When a paired group's workers are kept for all its rounds
/// (`--paired-keep`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Where starting new workers and building the group's memos each
    /// round would cost more than the round's calls do.
    #[default]
    Auto,
    /// Where the group's memos took this long or more to resolve in its
    /// first round.
    Above(Duration),
    /// Never: new workers every round.
    Off,
}

/// `--paired-keep`: `auto`, `off` or a duration (`0s` too).
fn keep(text: &str) -> Result<Keep, String> {
    match text.trim() {
        "auto" => Ok(Keep::Auto),
        "off" => Ok(Keep::Off),
        zero if zero.trim_end_matches(['s', 'm']).parse::<f64>() == Ok(0.0) => {
            Ok(Keep::Above(Duration::ZERO))
        }
        other => parse::duration(other)
            .map(Keep::Above)
            .map_err(|e| format!("{e}; or `auto`, `off`")),
    }
}

/// Which clock judges a paired case's time (`--paired-clock`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ClockChoice {
    /// CPU time for single-threaded calls that compute, wall time for the
    /// rest; a call whose wall time regressed beyond the limit fails
    /// either way.
    #[default]
    Auto,
    /// Wall time: what the call costs end to end, waits included.
    Wall,
    /// The calling thread's CPU time, where the system tells it.
    Cpu,
}

impl Default for Pairing {
    fn default() -> Self {
        Self {
            base: None,
            max_rounds: DEFAULT_MAX_ROUNDS,
            clock: ClockChoice::Auto,
            keep: Keep::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_takes_auto_off_and_durations_zero_included() {
        assert_eq!(keep("auto"), Ok(Keep::Auto));
        assert_eq!(keep("off"), Ok(Keep::Off));
        for zero in ["0", "0s", "0ms", "0.0"] {
            assert_eq!(keep(zero), Ok(Keep::Above(Duration::ZERO)), "{zero}");
        }
        assert_eq!(keep("2s"), Ok(Keep::Above(Duration::from_secs(2))));
        let bad = keep("sometimes").unwrap_err();
        assert!(bad.contains("`auto`, `off`"), "{bad}");
        assert!(keep("-1s").is_err());
    }
}
