//! One case of a paired run: what each round measured on each build, the
//! ratios, when it is decided, and its record.

use super::estimate::{Estimate, MIN_ROUNDS, TEST};
use crate::measure::combine;
use crate::record::{
    CaseError, CaseRecord, Figure, PairedClock, PairedRecord, Sampler, Stage, TimeRecord, Verdict,
};
use crate::registry::Case;
use crate::settings::Settings;

/// The slowdown a paired case may show before it fails, where `--fail-on`
/// does not say. On a shared 2-core machine, a run of identical builds
/// settled some cases up to 2% apart (a stored baseline: 10% and more),
/// so 3% keeps false alarms rare and still catches a 5% slowdown.
pub(crate) const DEFAULT_LIMIT: f64 = 0.03;

/// The slowdown allowed: `--fail-on time=P%` where given, else
/// [`DEFAULT_LIMIT`].
pub(super) fn time_limit(settings: &Settings) -> f64 {
    let defaults = crate::compare::Thresholds::default().get(Figure::Time);
    settings
        .baselines
        .fail_on
        .as_ref()
        .map(|t| t.get(Figure::Time))
        .filter(|given| *given != defaults)
        .map_or(DEFAULT_LIMIT, |given| given.relative)
}

/// A case and what its rounds measured so far.
pub(super) struct Pair<'a> {
    pub case: &'a Case,
    /// Whether the base build has the case: a new one runs on the head
    /// build alone, once.
    pub in_base: bool,
    /// The calls per sample both builds are given: the head's first
    /// round's calibration.
    pub calls: Option<u64>,
    /// Whether the case needs no more rounds.
    pub decided: bool,
    clock: Option<PairedClock>,
    head: Vec<CaseRecord>,
    base: Vec<CaseRecord>,
    /// This round's records, until both builds have run it.
    head_now: Option<CaseRecord>,
    base_now: Option<CaseRecord>,
    wall: Vec<f64>,
    cpu: Vec<f64>,
    /// The record of a round in which a build failed the case.
    failure: Option<CaseRecord>,
}

impl<'a> Pair<'a> {
    pub(super) fn new(case: &'a Case, in_base: bool) -> Self {
        Self {
            case,
            in_base,
            calls: None,
            decided: false,
            clock: None,
            head: Vec::new(),
            base: Vec::new(),
            head_now: None,
            base_now: None,
            wall: Vec::new(),
            cpu: Vec::new(),
            failure: None,
        }
    }

    /// Rounds that measured both builds.
    pub(super) fn rounds(&self) -> usize {
        self.wall.len()
    }

    /// Whether both builds ran the case on one thread, computing, in the
    /// first round that measured both.
    pub(super) fn single_threaded(&self) -> bool {
        self.clock == Some(PairedClock::Cpu)
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

    /// Takes this round's records in: a ratio per clock, or the failure
    /// that decides the case; then whether it is decided.
    pub(super) fn end_round(&mut self, limit: f64) {
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
        self.clock
            .get_or_insert_with(|| clock_of(&head.time, &base.time));
        self.wall.push(head.time.median_ns / base.time.median_ns);
        if let (Some(h), Some(b)) = (head.time.cpu_median_ns, base.time.cpu_median_ns) {
            self.cpu.push(h / b);
        }
        self.head.push(head);
        self.base.push(base);
        if self.rounds() >= MIN_ROUNDS
            && let Some(estimate) = Estimate::of(self.ratios())
        {
            self.decided = estimate.settled(limit);
        }
    }

    /// The case fails with `message`, on the head's record of the round
    /// where there is one.
    fn fail(&mut self, head: Option<CaseRecord>, message: String) {
        let record = match head {
            Some(mut record) => {
                record.error = Some(CaseError {
                    stage: Stage::Call,
                    message,
                    causes: Vec::new(),
                    also: Vec::new(),
                });
                record
            }
            None => super::lifecycle::unfinished(
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

    /// The clock the case is judged on: CPU time only where every round
    /// had it on both builds.
    fn judged_clock(&self) -> PairedClock {
        match self.clock {
            Some(PairedClock::Cpu) if self.cpu.len() == self.wall.len() => PairedClock::Cpu,
            _ => PairedClock::Wall,
        }
    }

    /// The rounds' ratios on the judged clock.
    fn ratios(&self) -> &[f64] {
        match self.judged_clock() {
            PairedClock::Cpu => &self.cpu,
            PairedClock::Wall => &self.wall,
        }
    }

    /// The case's record: the head build's last round, with the time of
    /// all its rounds, and the pairing.
    pub(super) fn record(&self, limit: f64) -> CaseRecord {
        if let Some(failure) = &self.failure {
            return failure.clone();
        }
        let Some(mut head) = joined(&self.head) else {
            return super::lifecycle::unfinished(
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
        let clock = self.judged_clock();
        let estimate = Estimate::of(self.ratios());
        head.paired = Some(PairedRecord {
            base: Box::new(base),
            clock,
            rounds: self.rounds() as u32,
            wall_ratios: self.wall.clone(),
            cpu_ratios: self.cpu.clone(),
            estimate: estimate.map_or(f64::NAN, |e| e.ratio),
            interval: estimate.map_or([f64::NAN; 2], |e| e.interval),
            test: TEST.into(),
            limit,
            verdict: estimate.map_or(Verdict::NotComparable, |e| e.verdict(limit)),
        });
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
    // samples too.
    if times
        .iter()
        .all(|t| t.sampler == Some(Sampler::Paired) || t.samples == 1)
    {
        record.time = combine(Sampler::Paired, &times);
    }
    Some(record)
}

/// CPU time where both builds' calls are single-threaded and compute (the
/// thread's CPU time covers the process's, and most of the wall time);
/// wall time otherwise.
fn clock_of(head: &TimeRecord, base: &TimeRecord) -> PairedClock {
    let computes = |t: &TimeRecord| match (t.cpu_median_ns, t.process_cpu_median_ns) {
        (Some(thread), Some(process)) => process <= thread * 1.1 && thread >= t.median_ns * 0.5,
        _ => false,
    };
    if computes(head) && computes(base) {
        PairedClock::Cpu
    } else {
        PairedClock::Wall
    }
}
