//! The rounds of a group of paired cases: each round runs the cases still
//! undecided on a worker of each build, in random order, and takes in
//! their ratios.

use std::collections::BTreeMap;
use std::time::Instant;

use super::Outcome;
use super::pair::{Judging, Pair};
use super::workers::{self, Kept, Workers};
use crate::measure::round::Round;
use crate::registry::Case;
use crate::runner::interrupt::Signal;
use crate::runner::isolate::Socket;
use crate::runner::isolate::protocol::Assignment;
use crate::runner::isolate::valgrind::Callgrind;
use crate::runner::isolate::watch::{Following, Start};
use crate::settings::Keep;

/// Which build a worker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Head = 0,
    Base = 1,
}

/// What every round of a paired run uses.
pub(super) struct Rounds<'r> {
    pub socket: &'r Socket,
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
}

impl Rounds<'_> {
    /// Runs rounds of the cases of `members` until each is decided or has
    /// had its rounds; `later` are the cases of the groups after it. With
    /// `keep`, the first round's workers are kept where its memos were
    /// worth keeping ([`Rounds::worth_keeping`]). Returns whether they
    /// were kept, or the signal that stopped the rounds.
    pub(super) fn run(
        &mut self,
        pairs: &mut [Pair<'_>],
        members: &[usize],
        later: &[usize],
        mut keep: bool,
        stop: &dyn Fn() -> Option<Signal>,
        outcome: &mut Outcome,
    ) -> Result<bool, Signal> {
        for round in 1..=self.max_rounds {
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
            let (loading, took) = self.round(pairs, &active, later, round == 1, keep, outcome);
            // Fixtures not worth keeping are built again in each round's
            // new workers, whose own speed the rounds then average out.
            if keep && round == 1 && !self.worth_keeping(loading, took) {
                keep = false;
                std::mem::take(&mut self.kept).quit();
            }
            for &at in &active {
                pairs[at].end_round(&self.judging);
            }
        }
        Ok(keep)
    }

    /// Whether a group whose first round resolved its memos in `loading`
    /// nanoseconds on each side (head, base), of rounds that took `took`,
    /// keeps its workers: by default where either side's loading took
    /// longer than the rest of its round (the calls, the workers' start),
    /// so that building the memos again in every round would more than
    /// double what the group's rounds cost.
    fn worth_keeping(&self, loading: [u64; 2], took: [u64; 2]) -> bool {
        match self.keep {
            Keep::Auto => {
                (0..2).any(|side| loading[side] > took[side].saturating_sub(loading[side]))
            }
            Keep::Above(above) => loading.iter().any(|&ns| u128::from(ns) >= above.as_nanos()),
            Keep::Off => false,
        }
    }

    /// One round of the `active` cases on both builds, the head first in
    /// the `first` (which calibrates the calls per sample both are then
    /// given); on kept workers where `keep`. Returns what resolving the
    /// memos took on each side, and what the side's round took in all.
    fn round(
        &mut self,
        pairs: &mut [Pair<'_>],
        active: &[usize],
        later: &[usize],
        first: bool,
        keep: bool,
        outcome: &mut Outcome,
    ) -> ([u64; 2], [u64; 2]) {
        let mut loading = [0u64; 2];
        let mut took = [0u64; 2];
        // The cases a kept worker runs after this round: these (more
        // rounds may follow) and the later groups'.
        let after: Vec<usize> = active
            .iter()
            .chain(later)
            .copied()
            .filter(|&at| !pairs[at].counted)
            .collect();
        let order = if first || fastrand::bool() {
            [Side::Head, Side::Base]
        } else {
            [Side::Base, Side::Head]
        };
        let cpu = round_cpu(pairs, active, &self.cpus);
        for side in order {
            let on_side = |at: &usize| side == Side::Head || pairs[*at].in_base;
            let runs = |counted: bool| -> Vec<&Case> {
                active
                    .iter()
                    .filter(|at| on_side(at) && pairs[**at].counted == counted)
                    .map(|&at| pairs[at].case)
                    .collect()
            };
            let (timed, counted) = (runs(false), runs(true));
            let rounds: BTreeMap<String, Round> = active
                .iter()
                .filter_map(|&at| {
                    Some((pairs[at].case.id.clone(), pairs[at].round(&self.judging)?))
                })
                .collect();
            let (start, slot) = match side {
                Side::Head => (self.head, &mut self.kept.head),
                Side::Base => (self.base, &mut self.kept.base),
            };
            let order = Assignment {
                rounds: Some(rounds),
                // Each build measures the fixtures it computes: a head that
                // changes how a model is trained is judged on its model.
                per_build: true,
                later: after
                    .iter()
                    .filter(|at| on_side(at))
                    .map(|&at| pairs[at].case.id.clone())
                    .collect(),
                ..Assignment::default()
            };
            let started = Instant::now();
            let workers = if keep {
                Workers::Kept { start, slot, cpu }
            } else {
                Workers::Fresh {
                    start,
                    cpu,
                    padded: true,
                }
            };
            let mut records = workers::run_side(
                self.socket,
                workers,
                &timed,
                order.clone(),
                self.following,
                outcome,
            );
            if let Some(callgrind) = self.callgrind.filter(|_| !counted.is_empty()) {
                // A count is exact only in an environment that stays put.
                records.extend(workers::run_side(
                    self.socket,
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
            took[side as usize] = started.elapsed().as_nanos() as u64;
            loading[side as usize] = records.values().map(|r| r.load_ns).sum();
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
        }
        (loading, took)
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
