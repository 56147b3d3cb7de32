//! Timing of a case's call: once, or sampled, by nnbench's sampler until
//! the median is precise, or by criterion through `Bencher::iter_custom`;
//! either way every `(iterations, elapsed)` sample after warm-up is kept.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::time::Duration;

use serde_json::Value as Json;

use super::criterion_sampler::CriterionSampler;
use super::measured_value;
use crate::measure::adaptive::{self, StopRule};
use crate::measure::arrivals::{Arrivals, LATE, OpenLoop};
use crate::measure::callgrind::{self, Dumps};
use crate::measure::cpu::Elapsed;
use crate::measure::load::{LoadOutcome, LoadPlan};
use crate::measure::round::{self, Round};
use crate::measure::search::{self, Goal, Step};
use crate::measure::{CaseMeter, Timer, one_call, summarize};
use crate::record::{
    CallgrindRecord, ConcurrencyRecord, Sampler, ThreadsRecord, TimeRecord, TimingMode,
};
use crate::registry::{Args, Call, Case, Parallel};
use crate::runner::report::console::Console;
use crate::settings::{Baselines, Sampling, Timing, TimingSettings};
use crate::{Error, Result};

/// How long a case under `concurrency` makes requests before they are
/// recorded, and for how long they are, unless its family says.
const LOAD_WARM_UP: Duration = Duration::from_millis(100);
const LOAD_DURATION: Duration = Duration::from_secs(1);

/// How one case is timed, all settings resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimingPlan {
    pub timing: Timing,
    pub sampling: Sampling,
    pub auto_threshold: Duration,
    pub sampler: Sampler,
    /// In a round of a paired run, what to take of the case.
    pub round: Round,
    /// The threads or requests in flight the calls are made by.
    pub parallel: Option<Parallel>,
    /// Under `rate`: the family's `arrivals` and `request_timeout`.
    pub open: (Arrivals, Option<Duration>),
    /// Under `latency_target` (or `goodput`): what the search looks for,
    /// and the rate it starts from (the family's lowest).
    pub search: Option<(Goal, f64)>,
    /// The family's `slo`, which a stream's requests are judged against.
    pub slo: &'static [nnbench_vocab::Objective],
    /// Seeds an open loop's arrivals and the order of a stream's inputs:
    /// the case's own, the same in every run of it.
    pub seed: u64,
}

/// What timing a case's call gave.
pub(crate) struct Timed {
    /// The value of its first call, with a sampled case's measured fields
    /// (see [`measured_value`]) the median of its samples'.
    pub metric: Json,
    pub time: TimeRecord,
    /// The load it ran under, with `concurrency`.
    pub concurrency: Option<ConcurrencyRecord>,
    /// The open loop it ran under, with `rate`.
    pub load: Option<Box<crate::record::LoadRecord>>,
    /// The search of the highest rate under `latency_target`.
    pub search: Option<Box<crate::record::SearchRecord>>,
    /// A search's streamed requests at the rate found (of its last step,
    /// where none met): a case's others are summed up once it ends.
    pub stream: Option<Box<crate::record::StreamRecord>>,
    /// Each thread's time, with `threads`.
    pub threads: Option<ThreadsRecord>,
}

/// A sampler's samples (calls and what they took), and the precision
/// nnbench's sampler reached.
type Samples = (Vec<(u64, Elapsed)>, Option<crate::record::Precision>);

impl Timed {
    /// A call's metric and time, under no load and on one thread.
    fn of(metric: Json, time: TimeRecord) -> Self {
        Timed {
            metric,
            time,
            concurrency: None,
            load: None,
            search: None,
            stream: None,
            threads: None,
        }
    }
}

/// The run's criterion (under `--criterion`), and the dumps of Callgrind in
/// a worker under it.
pub(crate) struct Engine {
    criterion: CriterionSampler,
    dumps: Option<Dumps>,
}

impl Engine {
    pub(crate) fn new(baselines: Baselines) -> Self {
        Self {
            criterion: CriterionSampler::new(baselines),
            dumps: Dumps::from_env().filter(|_| callgrind::running()),
        }
    }

    /// criterion's closing summary, once every case has run.
    pub(crate) fn finish(self, console: &Console) {
        self.criterion.finish(console);
    }

    /// Calls once for the metric, then samples if `plan` says so (or, under
    /// `concurrency`, keeps requests in flight).
    pub(crate) fn time(
        &mut self,
        id: &str,
        call: &Call,
        args: &Args,
        plan: &TimingPlan,
        console: &Console,
        mut meter: Option<&mut CaseMeter>,
    ) -> Result<Timed> {
        let timed = Timed::of;
        if plan.timing == Timing::Instructions {
            return self
                .count(id, call, args)
                .map(|(metric, time)| timed(metric, time));
        }
        let threads = match plan.parallel {
            Some(Parallel::Threads(n)) => n,
            _ => 1,
        };
        let mut first = Timer::new(1).on_threads(threads);
        // A case timed once, on one thread and unpaired, records its wall
        // time alone: reading the CPU clocks would cost more than the
        // harness's share of a short case.
        if plan.timing == Timing::Once && threads == 1 && plan.sampler != Sampler::Paired {
            first = first.wall_only();
        }
        let mut metric = call(args, &mut first)?;
        let once = first.elapsed().unwrap_or_default();
        match plan.parallel {
            Some(Parallel::Concurrency(level)) => {
                return load(call, args, plan, LoadShape::Closed(level), metric);
            }
            Some(Parallel::Rate(rate)) => {
                let open = open_loop(plan, rate);
                return load(call, args, plan, LoadShape::Open(open), metric);
            }
            Some(Parallel::Search) => return search_rate(call, args, plan, metric),
            _ => {}
        }
        let sample = match plan.timing {
            Timing::Once | Timing::Instructions => false,
            Timing::Sampled | Timing::Criterion => true,
            Timing::Auto => once.wall < plan.auto_threshold,
        };
        if !sample {
            let threads = (threads > 1).then(|| per_thread(&[(1, first.per_thread().to_vec())]));
            return Ok(Timed {
                threads,
                ..timed(metric, one_call(once))
            });
        }
        // What criterion does around the calls (set-up, then analysis of
        // the samples) is not the case's memory: the peaks are noted after
        // the first call and after each sampled one, and what ran between
        // is forgotten.
        if let Some(meter) = meter.as_deref_mut() {
            meter.checkpoint();
        }
        let mut sampling_started = false;
        let mut each_thread = Vec::new();
        let measured = measured_value::measured_paths(&metric);
        let mut values = Vec::new();
        let routine = |iters| {
            if let Some(meter) = meter.as_deref_mut()
                && !std::mem::replace(&mut sampling_started, true)
            {
                meter.forget_since_checkpoint();
            }
            let mut timer = Timer::new(iters).on_threads(threads);
            let outcome = call(args, &mut timer);
            if threads > 1 {
                each_thread.push((iters, timer.per_thread().to_vec()));
            }
            if let Some(meter) = meter.as_deref_mut() {
                meter.checkpoint();
            }
            outcome.map(|value| {
                if !measured.is_empty() {
                    values.push(value);
                }
                timer.elapsed().unwrap_or_default()
            })
        };
        let samples = self.samples(id, plan, console, routine);
        if let Some(meter) = meter {
            meter.forget_since_checkpoint();
        }
        let (samples, precision) = samples?;
        // The samples kept are the last ones taken: warm-up came first.
        let kept = &each_thread[each_thread.len().saturating_sub(samples.len())..];
        measured_value::settle(
            &mut metric,
            &measured,
            &values[values.len().saturating_sub(samples.len())..],
        );
        let mut time = summarize(plan.sampler, &samples);
        time.precision = precision;
        Ok(Timed {
            threads: (threads > 1).then(|| per_thread(kept)),
            ..timed(metric, time)
        })
    }

    /// The samples of `routine` the plan's sampler takes, and the precision
    /// nnbench's sampler reached.
    fn samples(
        &mut self,
        id: &str,
        plan: &TimingPlan,
        console: &Console,
        routine: impl FnMut(u64) -> Result<Elapsed>,
    ) -> Result<Samples> {
        match plan.sampler {
            Sampler::Adaptive | Sampler::Load => {
                adaptive::sample(&stop_rule(&plan.sampling), routine)
                    .map(|(samples, reached)| (samples, Some(reached)))
            }
            Sampler::Criterion => self
                .criterion
                .sample(id, &plan.sampling, console, routine)
                .map(|samples| (samples, None)),
            Sampler::Paired => round::sample(plan.round, routine).map(|samples| (samples, None)),
        }
    }

    /// Calls once, with Callgrind collecting around the call alone, and
    /// reads what it counted.
    fn count(&mut self, id: &str, call: &Call, args: &Args) -> Result<(Json, TimeRecord)> {
        let Some(dumps) = self.dumps.as_mut() else {
            return Err(Error::msg(
                "timing = instructions: only a bench binary (`nnbench::main!()`, run by cargo bench) counts instructions, in a worker it starts under valgrind's Callgrind",
            ));
        };
        let mut timer = Timer::counted();
        // What a failed or panicking call collected is dumped all the
        // same, so that the next case counts its own call alone.
        let outcome = catch_unwind(AssertUnwindSafe(|| call(args, &mut timer)));
        let counts = dumps.take(id);
        let metric = outcome.unwrap_or_else(|payload| resume_unwind(payload))?;
        let counts = counts.map_err(Error::msg)?;
        let time = TimeRecord {
            mode: TimingMode::Instructions,
            // The processor counted valgrind's work, not the call's.
            hw_instructions: None,
            instructions: Some(counts.instructions),
            callgrind: Some(Box::new(CallgrindRecord {
                l1_hits: counts.l1_hits(),
                ll_hits: counts.ll_hits(),
                ram_hits: counts.ram_hits(),
                estimated_cycles: counts.estimated_cycles(),
            })),
            ..one_call(timer.elapsed().unwrap_or_default())
        };
        Ok((metric, time))
    }
}

/// How a case is loaded: requests kept in flight, or due at a rate.
enum LoadShape {
    Closed(usize),
    Open(OpenLoop),
}

/// Loads `call` as `shape` says for the timed period (a few requests, when
/// the case is timed once).
fn load(
    call: &Call,
    args: &Args,
    plan: &TimingPlan,
    shape: LoadShape,
    metric: Json,
) -> Result<Timed> {
    let (level, open) = match shape {
        LoadShape::Closed(level) => (level, None),
        LoadShape::Open(open) => (1, Some(open)),
    };
    let load = LoadPlan {
        level,
        warm_up: plan.sampling.warm_up_time.unwrap_or(LOAD_WARM_UP),
        duration: plan.sampling.measurement_time.unwrap_or(LOAD_DURATION),
        once: plan.timing == Timing::Once,
        open,
    };
    let mut timer = Timer::new(1).under_load(load);
    call(args, &mut timer)?;
    let outcome = timer.take_load().ok_or_else(|| {
        Error::msg("its call made no requests under load: only a function of a family with `concurrency` or `rate` can be loaded")
    })?;
    let open = outcome.open_record();
    Ok(Timed {
        metric,
        time: outcome.time(),
        concurrency: open.is_none().then(|| outcome.concurrency()),
        load: open.map(Box::new),
        search: None,
        stream: None,
        threads: None,
    })
}

/// The open loop of `plan` at `rate`.
fn open_loop(plan: &TimingPlan, rate: f64) -> OpenLoop {
    OpenLoop {
        rate,
        arrivals: plan.open.0,
        timeout: plan.open.1,
        seed: plan.seed,
        late_after: plan.late_after(),
    }
}

impl TimingPlan {
    /// How late a request may be issued before the client is said to
    /// have delayed it: [`LATE`], or a hundredth of the tightest limit on
    /// a latency counted from when the request was due (the latency
    /// target's, a `ttft` or `e2e` objective's), where that is longer. A
    /// time per token or a gap between tokens holds no client delay.
    fn late_after(&self) -> Duration {
        use nnbench_vocab::StreamLatency::{E2e, Ttft};
        let target = match self.search {
            Some((Goal::Latency(target), _)) => Some(target.limit),
            _ => None,
        };
        let tightest = self
            .slo
            .iter()
            .filter(|o| matches!(o.latency, Ttft | E2e))
            .map(|o| o.limit)
            .chain(target)
            .min();
        tightest.map_or(LATE, |limit| (limit / 100).max(LATE))
    }
}

/// The highest rate of requests of `call` whose latency meets the family's
/// target, searched a timed period a rate from its lowest listed rate;
/// the case's time and load are those of the step at the rate found (of
/// the last step, where none met it).
fn search_rate(call: &Call, args: &Args, plan: &TimingPlan, metric: Json) -> Result<Timed> {
    let Some((goal, first)) = plan.search else {
        return Err(Error::msg(
            "a search of the highest rate needs a latency_target or a goodput",
        ));
    };
    let mut failure = None;
    type Measured = (LoadOutcome, Option<crate::record::StreamRecord>);
    let mut best: Option<(f64, Measured)> = None;
    let mut last: Option<Measured> = None;
    let found = search::search(&goal, first, nnbench_vocab::MAX_RATE, |rate| {
        let missed = Step {
            rate,
            latency_ns: f64::NAN,
            interval_ns: [f64::INFINITY; 2],
            requests: 0,
            late_fraction: 0.0,
            goodput: None,
        };
        if failure.is_some() {
            return missed;
        }
        let period = plan.sampling.measurement_time.unwrap_or(LOAD_DURATION);
        let load = LoadPlan {
            level: 1,
            warm_up: plan.sampling.warm_up_time.unwrap_or(LOAD_WARM_UP),
            duration: search::step_period(&goal, rate, period),
            once: plan.timing == Timing::Once,
            open: Some(open_loop(plan, rate)),
        };
        let mut timer = Timer::new(1).under_load(load);
        if let Err(error) = call(args, &mut timer) {
            failure = Some(error);
            return missed;
        }
        // Each step's requests are its own.
        let streamed = crate::measure::stream::finish_case(plan.slo);
        let Some(outcome) = timer.take_load() else {
            return missed;
        };
        let quantile = match goal {
            Goal::Latency(target) => target.quantile,
            Goal::Goodput { .. } => 0.99,
        };
        let Some((latency_ns, interval_ns)) = outcome.quantile(quantile) else {
            return missed;
        };
        let record = outcome.open_record();
        let goodput = streamed.as_ref().and_then(|s| s.goodput.as_ref());
        let step = Step {
            rate,
            latency_ns,
            interval_ns,
            requests: record.as_ref().map_or(0, |l| l.requests),
            late_fraction: record.as_ref().map_or(0.0, |l| l.late_fraction),
            goodput: goodput.map(|g| (g.share, g.share_bound, g.holds(0.0))),
        };
        if step.meets(&goal) && best.as_ref().is_none_or(|(r, _)| *r < rate) {
            best = Some((rate, (outcome, streamed)));
        } else {
            last = Some((outcome, streamed));
        }
        step
    });
    if let Some(error) = failure {
        return Err(error);
    }
    let (outcome, streamed) = best
        .map(|(_, o)| o)
        .or(last)
        .ok_or_else(|| Error::msg("the search of the highest rate made no requests"))?;
    let search = crate::record::SearchRecord {
        target: goal.to_string(),
        goodput: match goal {
            Goal::Goodput { share, .. } => Some(share),
            Goal::Latency(_) => None,
        },
        max_rate: found.client_bound_at.is_none().then_some(found.max_rate),
        missed_at: found.missed_at.is_finite().then_some(found.missed_at),
        client_bound: found.client_bound_at,
        steps: found
            .steps
            .iter()
            .map(|s| crate::record::SearchStep {
                rate: s.rate,
                latency_ns: s.latency_ns,
                interval_ns: s.interval_ns,
                requests: s.requests,
                late_fraction: s.late_fraction,
                meets: s.meets(&goal),
                client_bound: s.client_bound(),
                goodput: s.goodput.map(|g| g.0),
                goodput_bound: s.goodput.map(|g| g.1),
            })
            .collect(),
    };
    Ok(Timed {
        metric,
        time: outcome.time(),
        concurrency: None,
        load: outcome.open_record().map(Box::new),
        search: Some(Box::new(search)),
        stream: streamed.map(Box::new),
        threads: None,
    })
}

/// A seed drawn from `id`: the same in every run.
fn seed_of(id: &str) -> u64 {
    let hash = blake3::hash(id.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(bytes)
}

/// Each thread's median time per call over `samples` of `(calls, what
/// each thread's calls took)`.
fn per_thread(samples: &[(u64, Vec<Elapsed>)]) -> ThreadsRecord {
    let count = samples.iter().map(|(_, t)| t.len()).max().unwrap_or(0);
    let medians = (0..count)
        .map(|thread| {
            let mut per_call: Vec<f64> = samples
                .iter()
                .filter_map(|(iters, times)| {
                    let wall = times.get(thread)?.wall.as_nanos() as f64;
                    Some(wall / (*iters).max(1) as f64)
                })
                .collect();
            per_call.sort_by(f64::total_cmp);
            adaptive::median(&per_call)
        })
        .collect();
    ThreadsRecord::new(medians)
}

/// The settings of nnbench's sampler: the sample size is the least number
/// of samples, the measurement time the most time spent sampling.
fn stop_rule(sampling: &Sampling) -> StopRule {
    let defaults = StopRule::default();
    StopRule {
        min_samples: sampling.sample_size.unwrap_or(defaults.min_samples),
        warm_up: sampling.warm_up_time.unwrap_or(defaults.warm_up),
        time_cap: sampling.measurement_time.unwrap_or(defaults.time_cap),
        relative: defaults.relative,
    }
}

/// Whether `case` is counted under Callgrind in this run (`timing =
/// instructions` or `--instructions`, outside test mode): a bench binary
/// runs it in a worker under valgrind.
pub(crate) fn counted(case: &Case, settings: &crate::settings::Settings) -> bool {
    plan(case, &settings.timing).timing == Timing::Instructions
}

/// The plan for `case`: run settings override its family's, which
/// override the defaults. criterion samples when the run asks for it
/// (`--criterion`), the rounds of a paired run in a paired worker,
/// nnbench's sampler otherwise; the load driver under `concurrency`.
pub(crate) fn plan(case: &Case, run: &TimingSettings) -> TimingPlan {
    let round = run
        .rounds
        .as_ref()
        .map(|rounds| rounds.get(&case.id).copied().unwrap_or(Round::CALIBRATE));
    let family = case.family;
    TimingPlan {
        timing: if run.test_mode {
            Timing::Once
        } else {
            run.forced.0.or(family.timing).unwrap_or_default()
        },
        sampling: family.sampling.overridden_by(run.sampling),
        auto_threshold: run.auto_threshold(),
        round: round.unwrap_or(Round::CALIBRATE),
        sampler: if matches!(
            case.parallel,
            Some(Parallel::Concurrency(_) | Parallel::Rate(_) | Parallel::Search)
        ) {
            Sampler::Load
        } else if round.is_some() {
            Sampler::Paired
        } else if run.forced.0 == Some(Timing::Criterion) {
            Sampler::Criterion
        } else {
            Sampler::Adaptive
        },
        parallel: case.parallel,
        open: (family.arrivals, family.request_timeout),
        search: {
            let goal = match (family.latency_target, family.goodput) {
                (Some(target), _) => Some(Goal::Latency(target)),
                (None, Some(share)) => Some(Goal::Goodput {
                    slo: family.slo,
                    share,
                }),
                (None, None) => None,
            };
            let first = family.rate.iter().copied().fold(f64::INFINITY, f64::min);
            goal.map(|goal| (goal, if first.is_finite() { first } else { 1.0 }))
        },
        slo: family.slo,
        seed: seed_of(&case.id),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::CommandFactory;

    use super::stop_rule;
    use crate::Sampling;
    use crate::settings::{CommandLine, TimingSettings};

    /// A flag's help in a bench binary's `--help`: from its line to the next
    /// flag's.
    fn help_of(help: &str, flag: &str) -> String {
        let start = help
            .find(&format!("--{flag} "))
            .unwrap_or_else(|| panic!("--{flag} in {help}"));
        let rest = &help[start..];
        let end = rest[2..].find("\n  -").map_or(rest.len(), |at| at + 2);
        rest[..end].split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn duration(d: Duration) -> String {
        humantime::format_duration(d).to_string()
    }

    #[test]
    fn the_help_states_the_defaults_a_run_without_flags_uses() {
        let help = CommandLine::command().render_long_help().to_string();
        let unset = stop_rule(&Sampling::new());
        let stated = [
            ("sample-size", unset.min_samples.to_string()),
            ("warm-up-time", duration(unset.warm_up)),
            ("measurement-time", duration(unset.time_cap)),
            (
                "auto-threshold",
                duration(TimingSettings::default().auto_threshold()),
            ),
        ];
        for (flag, default) in stated {
            let text = help_of(&help, flag);
            assert!(
                text.contains(&format!("(default {default}")),
                "--{flag} must state its default {default}: {text}"
            );
        }
    }
}
