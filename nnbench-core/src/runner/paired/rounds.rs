//! The rounds of a group of paired cases: each round runs the cases still
//! undecided on a worker of each build, in random order, and takes in
//! their ratios.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use super::Outcome;
use super::building::{Building, CoresUsed};
use super::pair::{Judging, Pair};
use super::workers::{self, Kept, Workers};
use crate::measure::round::Round;
use crate::record::CaseRecord;
use crate::registry::Case;
use crate::runner::setup::interrupt::Signal;
use crate::runner::workers::Socket;
use crate::runner::workers::protocol::Assignment;
use crate::runner::workers::valgrind::Callgrind;
use crate::runner::workers::watch::{Following, Start, Worker};
use crate::settings::Keep;

/// Which build a worker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Head = 0,
    Base = 1,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Head => "head",
            Side::Base => "base",
        }
    }
}

/// What one round runs: the `active` cases (`later`: the cases of the
/// groups after them), the head first in the `first` round (which
/// calibrates the calls per sample both are then given), on kept workers
/// where `keep`, whose start took `started_ns` a side where they were
/// started for this round.
#[derive(Clone, Copy)]
struct ThisRound<'a> {
    active: &'a [usize],
    later: &'a [usize],
    first: bool,
    keep: bool,
    started_ns: [u64; 2],
}

/// What every round of a paired run uses.
pub(super) struct Rounds<'r> {
    /// Where each side's workers (head, base) connect: one socket a side,
    /// so that both sides' workers can start at once.
    pub sockets: [&'r Socket; 2],
    pub head: &'r Start,
    pub base: &'r Start,
    pub following: &'r Following<'r>,
    pub callgrind: Option<&'r Callgrind>,
    pub judging: Judging,
    pub cpus: Vec<usize>,
    pub max_rounds: u32,
    /// `--paired-keep`: when a group's workers are kept.
    pub keep: Keep,
    /// The builds' kept workers.
    pub kept: Kept,
    /// How many times each memo was computed on each side (head, base).
    pub builds: BTreeMap<String, [u32; 2]>,
    /// Whether the two sides are copies of one build (one digest): each
    /// keeps its fixtures apart from the other's, as two builds do.
    pub twins: bool,
    /// What a worker of each side (head, base) last cost to start, beyond
    /// its calls and memos: what a group whose first round reuses a kept
    /// worker would pay for new ones.
    pub start_ns: [u64; 2],
    /// Whether the next kept group's fixtures are built on both builds at
    /// once.
    pub building: Building,
}

impl Rounds<'_> {
    /// Runs rounds of the cases of `members` until each is decided or has
    /// had its rounds; `later` are the cases of the groups after it. With
    /// `keep`, the first round's workers are kept where starting them and
    /// resolving their memos was worth keeping ([`worth_keeping`]); where
    /// the group uses memos, that round builds them on both builds
    /// ([`Rounds::prepare`]). Returns whether the workers were kept, or the
    /// signal that stopped the rounds.
    pub(super) fn decide_group(
        &mut self,
        pairs: &mut [Pair<'_>],
        members: &[usize],
        later: &[usize],
        mut keep: bool,
        stop: &dyn Fn() -> Option<Signal>,
        outcome: &mut Outcome,
    ) -> Result<bool, Signal> {
        // A round that prepares the fixtures judges nothing: the cases
        // still get their rounds.
        let mut limit = self.max_rounds;
        let mut round = 0;
        while round < limit {
            round += 1;
            if let Some(signal) = stop() {
                return Err(signal);
            }
            let active: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&at| !pairs[at].decided)
                .collect();
            if active.is_empty() {
                break;
            }
            // The group's first round on kept workers starts those it
            // lacks, both sides' at once.
            let started = if round == 1 && keep {
                let in_base = active.iter().any(|&at| pairs[at].in_base);
                self.start_kept([true, in_base])
            } else {
                [0; 2]
            };
            let prepared = (round == 1 && keep && self.builds_fixtures(pairs, &active))
                .then(|| self.prepare(pairs, &active, later, started, outcome))
                .flatten();
            let spent = match prepared {
                Some(spent) => {
                    limit += 1;
                    spent
                }
                None => {
                    let this = ThisRound {
                        active: &active,
                        later,
                        first: round == 1,
                        keep,
                        started_ns: started,
                    };
                    self.round(pairs, &this, outcome)
                }
            };
            // Workers not worth keeping are started again for each round,
            // with their fixtures, and the rounds average their own speed
            // out.
            if keep && round == 1 && !worth_keeping(self.keep, &spent) {
                keep = false;
                std::mem::take(&mut self.kept).quit();
            }
            for &at in &active {
                if prepared.is_some() {
                    pairs[at].end_prepared_round(&self.judging);
                } else {
                    pairs[at].end_round(&self.judging);
                }
            }
        }
        Ok(keep)
    }

    /// Whether a round of the `active` cases builds fixtures on both
    /// builds: they use memos, the base build runs some of them, and none
    /// is counted (a count runs in a worker of its own).
    fn builds_fixtures(&self, pairs: &[Pair<'_>], active: &[usize]) -> bool {
        active.iter().any(|&at| pairs[at].in_base)
            && active.iter().all(|&at| !pairs[at].counted)
            && active
                .iter()
                .any(|&at| pairs[at].case.params.memos().next().is_some())
    }

    /// One round of `this`'s cases on both builds. Returns where each
    /// side's round went ([`Spent`]: head, base).
    fn round(
        &mut self,
        pairs: &mut [Pair<'_>],
        this: &ThisRound<'_>,
        outcome: &mut Outcome,
    ) -> [Spent; 2] {
        let ThisRound {
            active,
            later,
            first,
            keep,
            started_ns,
        } = *this;
        let mut spent = [Spent::default(); 2];
        let order = if first || fastrand::bool() {
            [Side::Head, Side::Base]
        } else {
            [Side::Base, Side::Head]
        };
        let cpu = round_cpu(pairs, active, &self.cpus);
        for side in order {
            let SideRun {
                timed,
                counted,
                order,
            } = self.side_run(pairs, active, later, side, keep);
            let (start, slot) = match side {
                Side::Head => (self.head, &mut self.kept.head),
                Side::Base => (self.base, &mut self.kept.base),
            };
            let reused = keep && slot.is_some() && started_ns[side as usize] == 0;
            let started = Instant::now();
            let workers = if keep {
                Workers::Kept {
                    start,
                    slot,
                    cpu,
                    replace: true,
                }
            } else {
                Workers::Fresh {
                    start,
                    cpu,
                    padded: true,
                }
            };
            let socket = self.sockets[side as usize];
            let mut records = workers::run_side(
                socket,
                workers,
                &timed,
                order.clone(),
                self.following,
                outcome,
            );
            if let Some(callgrind) = self.callgrind.filter(|_| !counted.is_empty()) {
                // A count is exact only in an environment that stays put.
                records.extend(workers::run_side(
                    socket,
                    Workers::Fresh {
                        start: &callgrind.wrap(start),
                        cpu,
                        padded: false,
                    },
                    &counted,
                    Assignment {
                        later: Vec::new(),
                        ..order
                    },
                    self.following,
                    outcome,
                ));
            }
            let took = started.elapsed().as_nanos() as u64 + started_ns[side as usize];
            spent[side as usize] = self.take_side(pairs, active, side, &records, took, reused);
        }
        spent
    }

    /// The first round of a group whose kept workers build its memos
    /// (started for it `started_ns` ago, where not kept from before):
    /// the workers of both builds run the round at once or
    /// one after the other, as [`Building`] decides from the fixture
    /// rounds before. The round calibrates and decides failures, and its
    /// ratios are not judged. `None` where a worker could not be started
    /// (the usual round then says why).
    fn prepare(
        &mut self,
        pairs: &mut [Pair<'_>],
        active: &[usize],
        later: &[usize],
        started_ns: [u64; 2],
        outcome: &mut Outcome,
    ) -> Option<[Spent; 2]> {
        if self.kept.head.is_none() || self.kept.base.is_none() {
            return None;
        }
        let [head_run, base_run] =
            [Side::Head, Side::Base].map(|side| self.side_run(pairs, active, later, side, true));
        let base_left = (base_run.timed.clone(), base_run.order.clone());
        let [head_socket, base_socket] = self.sockets;
        let (settings, limits) = (self.following.settings, self.following.limits);
        let (head_slot, base_slot) = (&mut self.kept.head, &mut self.kept.base);
        let (head_start, base_start) = (self.head, self.base);
        let one_side = |socket: &Socket,
                        start: &Start,
                        slot: &mut Option<Worker>,
                        run: SideRun<'_>,
                        replace: bool| {
            let mut side_outcome = Outcome::default();
            let following = Following {
                settings,
                limits,
                stop: &|| None,
            };
            let cpu = |slot: &Option<Worker>| slot.as_ref().map(|w| (w.pid(), w.cpu_time()));
            let before = cpu(slot);
            let started = Instant::now();
            let records = workers::run_side(
                socket,
                Workers::Kept {
                    start,
                    slot,
                    cpu: None,
                    replace,
                },
                &run.timed,
                run.order,
                &following,
                &mut side_outcome,
            );
            let took = started.elapsed();
            // A worker that died in the round was replaced: its CPU time
            // is another process's.
            let used = match (before, cpu(slot)) {
                (Some((was, before)), Some((is, after))) if was == is => {
                    CoresUsed::between(before, after, took)
                }
                _ => None,
            };
            (records, took.as_nanos() as u64, side_outcome, used)
        };
        let at_once = self.building.at_once();
        let (head, mut base) = if at_once {
            std::thread::scope(|scope| {
                // The base's worker, should it die, is replaced below, on
                // this thread, which outlives the round.
                let base = scope
                    .spawn(|| one_side(base_socket, base_start, &mut *base_slot, base_run, false));
                let head = one_side(head_socket, head_start, head_slot, head_run, true);
                let base = base
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (head, base)
            })
        } else {
            (
                one_side(head_socket, head_start, head_slot, head_run, true),
                one_side(base_socket, base_start, base_slot, base_run, true),
            )
        };
        let (cases, order) = base_left;
        let left: Vec<&Case> = cases
            .into_iter()
            .filter(|case| !base.0.contains_key(&case.id))
            .collect();
        if !left.is_empty() {
            let run = SideRun {
                timed: left,
                counted: Vec::new(),
                order,
            };
            let (records, took, side_outcome, _) =
                one_side(base_socket, base_start, &mut self.kept.base, run, true);
            base.0.extend(records);
            base.1 += took;
            base.2.memo.counters += side_outcome.memo.counters;
            base.2.warnings.extend(side_outcome.warnings);
        }
        self.building.take_in([head.3, base.3], self.cores());
        let mut spent = [Spent::default(); 2];
        for (side, (records, took, side_outcome, _)) in [(Side::Head, head), (Side::Base, base)] {
            outcome.memo.counters += side_outcome.memo.counters;
            outcome.warnings.extend(side_outcome.warnings);
            let took = took + started_ns[side as usize];
            spent[side as usize] = self.take_side(pairs, active, side, &records, took, false);
        }
        Some(spent)
    }

    /// Starts the kept workers of the sides `wanted` (head, base) that
    /// have none, side by side: both processes are begun, then each is
    /// waited for on its own socket. Returns what each start took, in
    /// nanoseconds (0 where the side had its worker); a side whose worker
    /// could not be started is left without one, for its round to try
    /// again and say why.
    fn start_kept(&mut self, wanted: [bool; 2]) -> [u64; 2] {
        let started = Instant::now();
        let slots = [&mut self.kept.head, &mut self.kept.base];
        let starts = [self.head, self.base];
        let begun: Vec<_> = (0..2)
            .map(|side| {
                (wanted[side] && slots[side].is_none())
                    .then(|| workers::begin_kept(self.sockets[side], starts[side]).ok())
                    .flatten()
            })
            .collect();
        let mut took = [0; 2];
        for (side, (begun, slot)) in begun.into_iter().zip(slots).enumerate() {
            if let Some(begun) = begun {
                *slot = begun.connect(self.sockets[side]).ok();
                took[side] = started.elapsed().as_nanos() as u64;
            }
        }
        took
    }

    /// The cores the run's workers may use.
    fn cores(&self) -> usize {
        if self.cpus.is_empty() {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.cpus.len()
        }
    }

    /// What `side` is given of the `active` cases in a round (on `kept`
    /// workers or new ones): those it times, those it counts, and its
    /// worker's assignment (`later`: the cases of the groups after this
    /// one).
    fn side_run<'c>(
        &self,
        pairs: &[Pair<'c>],
        active: &[usize],
        later: &[usize],
        side: Side,
        kept: bool,
    ) -> SideRun<'c> {
        let on_side = |at: &usize| side == Side::Head || pairs[*at].in_base;
        let runs = |counted: bool| -> Vec<&'c Case> {
            active
                .iter()
                .filter(|at| on_side(at) && pairs[**at].counted == counted)
                .map(|&at| pairs[at].case)
                .collect()
        };
        let rounds: BTreeMap<String, Round> = active
            .iter()
            .filter_map(|&at| {
                Some((
                    pairs[at].case.id.clone(),
                    pairs[at].round(&self.judging, kept)?,
                ))
            })
            .collect();
        SideRun {
            timed: runs(false),
            counted: runs(true),
            order: Assignment {
                rounds: Some(rounds),
                // Each build measures the fixtures it computes: a head that
                // changes how a model is trained is judged on its model.
                per_build: true,
                twin: self.twins.then(|| side.name().to_owned()),
                // The cases a kept worker runs after this round: these
                // (more rounds may follow) and the later groups'.
                later: active
                    .iter()
                    .chain(later)
                    .filter(|at| !pairs[**at].counted && on_side(at))
                    .map(|&at| pairs[at].case.id.clone())
                    .collect(),
                ..Assignment::default()
            },
        }
    }

    /// Takes in `side`'s `records` of a round of the `active` cases that
    /// took `took` nanoseconds (on a worker `reused` from an earlier
    /// group): each case's record, the memos built, and where the round
    /// went.
    fn take_side(
        &mut self,
        pairs: &mut [Pair<'_>],
        active: &[usize],
        side: Side,
        records: &HashMap<String, CaseRecord>,
        took: u64,
        reused: bool,
    ) -> Spent {
        let mut spent = Spent {
            took,
            loading: records.values().map(|r| r.load_ns).sum(),
            calls: records
                .values()
                .map(|r| &r.time)
                .map(|t| (t.mean_ns * t.iters as f64) as u64)
                .sum(),
        };
        let start_ns = &mut self.start_ns[side as usize];
        if reused {
            spent.took += *start_ns;
        } else {
            *start_ns = spent.outside_calls().saturating_sub(spent.loading);
        }
        for memo in records.values().flat_map(|r| &r.memo.computed) {
            self.builds.entry(memo.clone()).or_default()[side as usize] += 1;
        }
        for &at in active {
            let pair = &mut pairs[at];
            let record = records.get(&pair.case.id).cloned();
            match side {
                Side::Head => pair.head_round(record),
                Side::Base if pair.in_base => pair.base_round(record),
                Side::Base => {}
            }
        }
        spent
    }
}

/// What one side is given of a round's cases.
struct SideRun<'c> {
    timed: Vec<&'c Case>,
    counted: Vec<&'c Case>,
    order: Assignment,
}

/// Whether a group whose first round went as `spent` says on each
/// side keeps its workers: by default where either side spent longer
/// outside the calls it timed (starting its worker, calibrating,
/// resolving memos) than in them, so that new workers each round would
/// more than double what the group's rounds cost. `--paired-keep
/// DURATION` keeps where either side's memos took that long.
fn worth_keeping(keep: Keep, spent: &[Spent; 2]) -> bool {
    match keep {
        Keep::Auto => spent.iter().any(|side| side.outside_calls() > side.calls),
        Keep::Above(above) => spent
            .iter()
            .any(|side| u128::from(side.loading) >= above.as_nanos()),
        Keep::Off => false,
    }
}

/// Where one side's round went, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Spent {
    /// The side's round, its workers' start to their last record; on a
    /// worker kept from an earlier group, with what starting one last cost
    /// added, as new workers would pay it.
    took: u64,
    /// Resolving the cases' memos.
    loading: u64,
    /// The timed calls.
    calls: u64,
}

impl Spent {
    /// What the round spent on anything but its timed calls.
    fn outside_calls(&self) -> u64 {
        self.took.saturating_sub(self.calls)
    }
}

/// The CPU both workers of a round run on: one of `cpus` at random, once
/// every case of the round is known to run on one thread (its first round
/// said so, unpinned, on both builds); `None` otherwise, since a case's
/// threads pinned to one CPU would queue behind each other.
fn round_cpu(pairs: &[Pair], active: &[usize], cpus: &[usize]) -> Option<usize> {
    let single_threaded = active
        .iter()
        .all(|&at| !pairs[at].in_base || pairs[at].single_threaded());
    if cpus.len() < 2 || !single_threaded {
        return None;
    }
    Some(cpus[fastrand::usize(..cpus.len())])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn spent(took: u64, loading: u64, calls: u64) -> Spent {
        Spent {
            took,
            loading,
            calls,
        }
    }

    #[test]
    fn workers_are_kept_where_a_side_spent_more_outside_its_calls_than_in_them() {
        // A quick case: a worker's 10 ms start against 4 ms of calls.
        let quick = [spent(14, 0, 4), spent(13, 0, 4)];
        assert!(worth_keeping(Keep::Auto, &quick));
        // A slow fixture on one side alone (the other read it from disk).
        let fixture = [spent(300, 280, 10), spent(15, 1, 10)];
        assert!(worth_keeping(Keep::Auto, &fixture));
        // Calls that outweigh the workers' start: new workers each round.
        let busy = [spent(60, 2, 45), spent(58, 2, 45)];
        assert!(!worth_keeping(Keep::Auto, &busy));
        assert!(!worth_keeping(Keep::Off, &quick));
    }

    #[test]
    fn a_duration_keeps_on_the_memos_time_alone() {
        let quick = [spent(14_000_000, 0, 4_000_000); 2];
        assert!(!worth_keeping(
            Keep::Above(Duration::from_millis(1)),
            &quick
        ));
        assert!(worth_keeping(Keep::Above(Duration::ZERO), &quick));
        let fixture = [spent(300_000_000, 250_000_000, 10_000_000); 2];
        assert!(worth_keeping(
            Keep::Above(Duration::from_millis(200)),
            &fixture
        ));
    }
}
