//! One case of a paired run: what each round measured on each build, the
//! ratios, when it is decided, and its record.

use super::estimate::{Estimate, MIN_ROUNDS, TEST};
use crate::compare::Limit;
use crate::measure::combine;
use crate::measure::round::{self, Round};
use crate::record::{
    CaseError, CaseRecord, Clock, Figure, PairedRecord, Sampler, Stage, TimeRecord, TimingMode,
    Verdict,
};
use crate::registry::Case;
use crate::settings::{ClockChoice, Settings, WITHIN_LIMIT_ROUNDS};

/// The samples a round keeps of a case judged by wall time.
const WALL_SAMPLES: u32 = 9;

/// How a counted pair is judged, as the record says.
const COUNTED_TEST: &str = "instructions counted by Callgrind on each build, once: exact";

/// The slowdown a paired case may show before it fails, where `--fail-on`
/// does not say: above the few percent a noisy shared machine sets
/// identical builds apart, below the slowdowns a gate is there to catch.
/// The page of measured figures has the false alarms and the changes
/// caught at this limit and others (`benches/paired.rs`).
pub(crate) const DEFAULT_LIMIT: f64 = 0.03;

/// What a paired case may show before it fails, and which clock judges
/// its time.
#[derive(Clone, Copy, Debug)]
pub(super) struct Judging {
    /// The slowdown allowed, as a fraction.
    pub time: f64,
    /// The change of instructions allowed, for counted cases.
    pub instructions: Limit,
    /// `--paired-clock`.
    pub clock: ClockChoice,
}

impl Judging {
    /// The time limit is `--fail-on time=P%` where given, else
    /// [`DEFAULT_LIMIT`]; the instructions' is the comparisons'.
    pub(super) fn of(settings: &Settings) -> Self {
        let defaults = crate::compare::Limits::default();
        let given = settings.baselines.fail_on.as_ref();
        Self {
            time: given
                .filter(|t| t.named.contains(&Figure::Time))
                .map_or(DEFAULT_LIMIT, |t| t.get(Figure::Time).relative),
            instructions: given.unwrap_or(&defaults).get(Figure::Instructions),
            clock: settings.pairing.clock,
        }
    }
}

/// A case and what its rounds measured so far.
pub(super) struct Pair<'a> {
    pub case: &'a Case,
    /// Whether the base build has the case: a new one runs on the head
    /// build alone, once.
    pub in_base: bool,
    /// Whether its instructions are counted under Callgrind: one round
    /// decides it, the counts being exact.
    pub counted: bool,
    /// The calls of a sample of about half a millisecond
    /// ([`TARGET`](crate::measure::round::TARGET)): the head's first
    /// round's calibration.
    calls: Option<u64>,
    /// Whether the case needs no more rounds.
    pub decided: bool,
    /// Whether each build's calls were seen single-threaded and
    /// computing: base, head. Once seen, for good.
    computes: [bool; 2],
    head: Vec<CaseRecord>,
    base: Vec<CaseRecord>,
    /// This round's records, until both builds have run it.
    head_now: Option<CaseRecord>,
    base_now: Option<CaseRecord>,
    wall: Vec<f64>,
    cpu: Vec<f64>,
    /// The record of a round in which a build failed the case.
    failure: Option<CaseRecord>,
    /// A counted case's instructions: base, head.
    counts: Option<(u64, u64)>,
    /// What the rounds on workers kept for the case's group said, once
    /// they were set aside to judge it again on new workers.
    kept: Option<String>,
}

impl<'a> Pair<'a> {
    pub(super) fn new(case: &'a Case, in_base: bool, counted: bool) -> Self {
        Self {
            case,
            in_base,
            counted,
            calls: None,
            decided: false,
            computes: [false; 2],
            head: Vec::new(),
            base: Vec::new(),
            head_now: None,
            base_now: None,
            wall: Vec::new(),
            cpu: Vec::new(),
            failure: None,
            counts: None,
            kept: None,
        }
    }

    /// Whether its rounds so far call it regressed or improved: a verdict
    /// drawn on kept workers that is to be drawn again on new ones.
    pub(super) fn moved(&self, judging: &Judging) -> bool {
        self.failure.is_none()
            && self.counts.is_none()
            && self.rounds() > 0
            && self
                .record(judging)
                .paired
                .is_some_and(|p| matches!(p.verdict, Verdict::Regressed | Verdict::Improved))
    }

    /// Sets its rounds aside, to be measured again from a first round on
    /// new workers; its record says what they estimated.
    pub(super) fn again(&mut self, judging: &Judging) {
        if let Some(p) = self.record(judging).paired {
            self.kept = Some(format!(
                "on workers kept for its group, {} rounds estimated {:.3} [{:.3}, {:.3}] ({}); judged again on new workers each round, since a kept worker keeps a speed of its own",
                p.rounds,
                p.estimate,
                p.interval[0],
                p.interval[1],
                if p.verdict == Verdict::Regressed {
                    "regressed"
                } else {
                    "improved"
                }
            ));
        }
        self.decided = false;
        self.head.clear();
        self.base.clear();
        self.wall.clear();
        self.cpu.clear();
    }

    /// What both builds take of the case this round, once the head's
    /// first round calibrated its calls per sample. A call judged by wall
    /// time (other threads, or waits) gets [`WALL_SAMPLES`] samples: on a
    /// busy machine the scheduler preempts some of them, which CPU time
    /// does not see and the median of many short samples leaves out. On
    /// workers `kept` since an earlier round of the case, a shorter
    /// sample is dropped first ([`Round::on_a_warm_worker`]).
    pub(super) fn round(&self, judging: &Judging, kept: bool) -> Option<Round> {
        let calls = self.calls?;
        let wall = self.rounds() > 0 && self.judged_clock(judging.clock) == Clock::Wall;
        let round = Round {
            calls,
            samples: if wall { WALL_SAMPLES } else { round::SAMPLES },
            warm_up: None,
        };
        Some(if kept && self.rounds() > 0 {
            round.on_a_warm_worker()
        } else {
            round
        })
    }

    /// Rounds that measured both builds.
    pub(super) fn rounds(&self) -> usize {
        match self.counts {
            Some(_) => 1,
            None => self.wall.len(),
        }
    }

    /// Whether both builds were seen running the case on one thread,
    /// computing.
    pub(super) fn single_threaded(&self) -> bool {
        self.computes == [true; 2]
    }

    pub(super) fn failed(&self) -> bool {
        self.failure.is_some()
    }

    /// The head build's record of this round (`None`: it did not run).
    pub(super) fn head_round(&mut self, record: Option<CaseRecord>) {
        if let Some(record) = &record
            && record.error.is_none()
            && self.calls.is_none()
        {
            self.calls = Some(
                record
                    .time
                    .iters
                    .checked_div(record.time.samples)
                    .unwrap_or(1),
            );
        }
        self.head_now = record;
    }

    /// The base build's record of this round.
    pub(super) fn base_round(&mut self, record: Option<CaseRecord>) {
        self.base_now = record;
    }

    /// Takes in a round whose builds built their fixtures first: a failure
    /// decides the case as in any round, and the head's calibration
    /// stands, but its ratios are not judged.
    pub(super) fn end_prepared_round(&mut self, judging: &Judging) {
        let kept = (
            self.wall.len(),
            self.cpu.len(),
            self.head.len(),
            self.base.len(),
        );
        self.end_round(judging);
        if !self.decided {
            self.wall.truncate(kept.0);
            self.cpu.truncate(kept.1);
            self.head.truncate(kept.2);
            self.base.truncate(kept.3);
        }
    }

    /// Takes this round's records in: a ratio per clock (or the counts),
    /// or the failure that decides the case; then whether it is decided.
    pub(super) fn end_round(&mut self, judging: &Judging) {
        let head = self.head_now.take();
        let base = self.base_now.take();
        let Some(head) = head else {
            return self.fail(None, "the head build did not run it".into());
        };
        if head.error.is_some() {
            self.failure = Some(head);
            self.decided = true;
            return;
        }
        if !self.in_base {
            self.head.push(head);
            self.decided = true;
            return;
        }
        let Some(base) = base else {
            return self.fail(Some(head), "the base build did not run it".into());
        };
        if let Some(error) = &base.error {
            let message = format!("the base build failed it: {}", error.summary());
            return self.fail(Some(head), message);
        }
        if self.counted {
            return match (base.time.instructions, head.time.instructions) {
                (Some(b), Some(h)) => {
                    self.counts = Some((b, h));
                    self.head.push(head);
                    self.base.push(base);
                    self.decided = true;
                }
                _ => self.fail(
                    Some(head),
                    "a build did not count its instructions (built with an nnbench that has no timing = instructions?)".into(),
                ),
            };
        }
        self.computes[0] |= computes(&base.time);
        self.computes[1] |= computes(&head.time);
        self.wall.push(head.time.median_ns / base.time.median_ns);
        if let (Some(h), Some(b)) = (least_cpu(&head.time), least_cpu(&base.time)) {
            self.cpu.push(h / b);
        }
        self.head.push(head);
        self.base.push(base);
        if self.rounds() >= MIN_ROUNDS
            && let Some(estimate) = Estimate::of(self.ratios(judging.clock))
        {
            // A slower wall time that CPU time does not judge gets the
            // rounds it takes to be told.
            let wall_pending = self
                .wall_guarded(judging)
                .is_some_and(|wall| wall.ratio > 1.0 + judging.time && !wall.beyond(judging.time));
            // A busy machine can leave a real slowdown near the limit
            // unsettled after the rounds that settle most cases: only
            // such a case is given more.
            let within =
                self.rounds() >= WITHIN_LIMIT_ROUNDS && estimate.ratio <= 1.0 + judging.time;
            self.decided = (estimate.settled(judging.time) || within) && !wall_pending;
        }
    }

    /// The wall time's estimate, where CPU time judges the case and the
    /// wall time is to be watched beside it (`--paired-clock auto`): CPU
    /// time does not see a call that waits longer, for a lock, a file or
    /// a device.
    fn wall_guarded(&self, judging: &Judging) -> Option<Estimate> {
        let guarded =
            judging.clock == ClockChoice::Auto && self.judged_clock(judging.clock) == Clock::Cpu;
        guarded.then(|| Estimate::of(&self.wall)).flatten()
    }

    /// The case fails with `message`, on the head's record of the round
    /// where there is one.
    fn fail(&mut self, head: Option<CaseRecord>, message: String) {
        let record = match head {
            Some(mut record) => {
                record.error = Some(Box::new(CaseError {
                    stage: Stage::Call,
                    message,
                    causes: Vec::new(),
                    also: Vec::new(),
                }));
                record
            }
            None => crate::runner::case::lifecycle::unfinished(
                self.case,
                Stage::Call,
                message,
                Vec::new(),
                Default::default(),
            ),
        };
        self.failure = Some(record);
        self.decided = true;
    }

    /// The clock the case is judged on: CPU time where `choice` asks for
    /// it, or leaves it to the calls (both builds' seen single-threaded
    /// and computing), and every round had it on both builds; wall time
    /// otherwise.
    fn judged_clock(&self, choice: ClockChoice) -> Clock {
        let cpu_complete = self.cpu.len() == self.wall.len();
        match choice {
            ClockChoice::Cpu if cpu_complete => Clock::Cpu,
            ClockChoice::Auto if cpu_complete && self.single_threaded() => Clock::Cpu,
            _ => Clock::Wall,
        }
    }

    /// The rounds' ratios on the judged clock.
    fn ratios(&self, choice: ClockChoice) -> &[f64] {
        match self.judged_clock(choice) {
            Clock::Cpu => &self.cpu,
            _ => &self.wall,
        }
    }

    /// The case's record: the head build's last round, with the time of
    /// all its rounds, and the pairing.
    pub(super) fn record(&self, judging: &Judging) -> CaseRecord {
        if let Some(failure) = &self.failure {
            return failure.clone();
        }
        let Some(mut head) = joined(&self.head) else {
            return crate::runner::case::lifecycle::unfinished(
                self.case,
                Stage::Call,
                "no round ran it: the run was stopped first".into(),
                Vec::new(),
                Default::default(),
            );
        };
        let Some(base) = joined(&self.base) else {
            return head;
        };
        if let Some((b, h)) = self.counts {
            let ratio = h as f64 / b as f64;
            let t = judging.instructions;
            head.paired = Some(Box::new(PairedRecord {
                base: Box::new(base),
                clock: Clock::Instructions,
                rounds: 1,
                wall_ratios: Vec::new(),
                cpu_ratios: Vec::new(),
                estimate: ratio,
                interval: [ratio, ratio],
                test: COUNTED_TEST.into(),
                limit: t.relative,
                verdict: match (t.exceeded(b as f64, h as f64), h > b) {
                    (false, _) => Verdict::Unchanged,
                    (true, true) => Verdict::Regressed,
                    (true, false) => Verdict::Improved,
                },
            }));
            return head;
        }
        head.warnings.extend(self.kept.clone());
        let clock = self.judged_clock(judging.clock);
        let estimate = Estimate::of(self.ratios(judging.clock));
        let mut verdict = estimate.map_or(Verdict::NotComparable, |e| e.verdict(judging.time));
        // Wall time is noisier than CPU time on a busy machine: it fails a
        // case CPU time judges only when its whole interval lies beyond
        // the limit.
        if verdict != Verdict::Regressed
            && let Some(wall) = self.wall_guarded(judging)
            && wall.beyond(judging.time)
        {
            verdict = Verdict::Regressed;
            head.warnings.push(format!(
                "wall time regressed by {:.1}% (99% interval {:.3}-{:.3}) while CPU time did not: the call waits longer",
                (wall.ratio - 1.0) * 100.0,
                wall.interval[0],
                wall.interval[1]
            ));
        }
        head.paired = Some(Box::new(PairedRecord {
            base: Box::new(base),
            clock,
            rounds: self.rounds() as u32,
            wall_ratios: self.wall.clone(),
            cpu_ratios: self.cpu.clone(),
            estimate: estimate.map_or(f64::NAN, |e| e.ratio),
            interval: estimate.map_or([0.0, f64::INFINITY], |e| e.interval),
            test: TEST.into(),
            limit: judging.time,
            verdict,
        }));
        if estimate.is_none() {
            head.warnings.push(format!(
                "{} round(s) measured both builds: too few for a paired verdict",
                self.rounds()
            ));
        }
        head
    }
}

/// The last round's record with the time of every round; `None` when no
/// round ran.
fn joined(rounds: &[CaseRecord]) -> Option<CaseRecord> {
    let mut record = rounds.last()?.clone();
    let times: Vec<&TimeRecord> = rounds.iter().map(|r| &r.time).collect();
    // A case timed by one call per round keeps its rounds' calls as
    // samples too; a counted one keeps its count.
    if times.iter().all(|t| {
        t.mode != TimingMode::Instructions && (t.sampler == Some(Sampler::Paired) || t.samples == 1)
    }) {
        record.time = combine(Sampler::Paired, &times);
    }
    Some(record)
}

/// A round's CPU time per call on one build: its least sample's. What else
/// the machine runs only ever raises a thread's CPU time (a neighbour that
/// evicts its caches or shares its core), so the least sample is the
/// nearest to the call's own cost, where a median keeps the neighbours'
/// share: `benches/paired.rs` prints the rounds' spread of identical
/// builds beside a compile on both cores by either sample.
fn least_cpu(t: &TimeRecord) -> Option<f64> {
    t.cpu_samples_ns
        .iter()
        .copied()
        .reduce(f64::min)
        .or(t.cpu_median_ns)
}

/// Whether a round's calls ran on one thread and computed.
fn computes(t: &TimeRecord) -> bool {
    t.computes_on_one_thread()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::CommandLine;

    fn judging(args: &[&str]) -> Judging {
        let all = std::iter::once("bench").chain(args.iter().copied());
        let line = CommandLine::parse_args(all.map(std::ffi::OsString::from)).unwrap();
        Judging::of(&line.settings())
    }

    #[test]
    fn a_rounds_cpu_time_is_its_least_sample() {
        let sampled = TimeRecord {
            cpu_samples_ns: vec![120.0, 100.0, 300.0],
            cpu_median_ns: Some(120.0),
            ..TimeRecord::default()
        };
        assert_eq!(least_cpu(&sampled), Some(100.0));
        let median_only = TimeRecord {
            cpu_median_ns: Some(7.0),
            ..TimeRecord::default()
        };
        assert_eq!(least_cpu(&median_only), Some(7.0));
        assert_eq!(least_cpu(&TimeRecord::default()), None);
    }

    #[test]
    fn the_time_limit_is_the_one_given_even_at_compares_default() {
        assert_eq!(judging(&[]).time, DEFAULT_LIMIT);
        assert_eq!(judging(&["--fail-on", "rss=1%"]).time, DEFAULT_LIMIT);
        assert_eq!(judging(&["--fail-on", "time=10%"]).time, 0.10);
        assert_eq!(judging(&["--fail-on", "time=1%"]).time, 0.01);
    }
}
