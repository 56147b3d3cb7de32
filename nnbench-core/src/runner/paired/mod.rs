//! `--paired BASE`: every selected case measured on the base build and on
//! this one in alternating rounds, and judged from the rounds' ratios.
//!
//! The cases run in groups that use the same memos (a model's cases), all
//! rounds of a group before the next; a round runs the group's cases still
//! undecided on a worker of each build (the `--isolate` workers), in
//! random order, with the same calls per sample on both sides. New
//! workers each round spread what a process draws once and keeps over
//! both builds, where they are worth starting. On a shared machine one
//! process can run a case
//! faster than the next process does, and two workers kept for the run
//! differ by what no round redraws, either way and from run to run (the
//! book's "How paired runs measure" says why each step is as it is).
//!
//! A group whose first round spent longer on a side outside the calls it
//! timed (starting the workers, resolving memos) than in them (or whose
//! memos took `--paired-keep DURATION`) keeps that round's workers, one a
//! build, so that workers start and fixtures are built once a side (that
//! first round, for a group that uses memos, builds them on both builds,
//! at once or in turn as `building` decides, and judges nothing: see
//! `Rounds::prepare`): each keeps the memos
//! that later groups use and lets go of the others when its next group
//! starts, and each of its rounds runs on a CPU and with a stack and heap
//! layout drawn anew (see `redraw`). What they cannot redraw can make
//! them call a case changed that is not: such a case is judged again from
//! a first round on new workers each round, which build its memos in each,
//! and their verdict is the case's. A case the kept workers call unchanged
//! stays so, though their own speed may hide a change about its size.
//! Where the base build's workers run once each (an older nnbench), every
//! round starts new ones.
//!
//! Both builds share the head's disk tier, so that a persisted fixture is
//! computed once and read from there by the other; a memo whose version
//! or inputs differ between the builds has another key there and is
//! computed by each.

mod building;
mod estimate;
mod pair;
mod rounds;
mod sides;
mod workers;

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::Path;

pub(crate) use sides::{check_base, forget_checked};

use super::order::Schedule;
use crate::record::{CaseRecord, MemoBuilds, PairedRun, RunMemoRecord};
use crate::registry::Case;
use crate::runner::setup::interrupt::Signal;
use crate::runner::workers::Socket;
use crate::runner::workers::affinity;
use crate::runner::workers::protocol::Assignment;
use crate::runner::workers::valgrind::Callgrind;
use crate::runner::workers::watch::{Following, Limits, Start};
use crate::settings::Keep;
use crate::settings::Settings;
use crate::{Error, Result};
use pair::Pair;
use rounds::Rounds;
use workers::Workers;

/// How the paired run went, apart from its cases' records.
#[derive(Default)]
pub(crate) struct Outcome {
    /// The signal that stopped it before every case was decided.
    pub interrupted: Option<Signal>,
    /// What was said outside any case.
    pub warnings: Vec<String>,
    /// What the workers' memo caches did, summed.
    pub memo: RunMemoRecord,
    /// The run's side of the pairing.
    pub run: Option<PairedRun>,
}

/// Runs `selected` paired with the build at `base`; every case's record
/// goes to `done` once it is decided.
pub(crate) fn supervise(
    selected: &[&Case],
    settings: &Settings,
    base: &Path,
    stop: &dyn Fn() -> Option<Signal>,
    done: &mut dyn FnMut(CaseRecord),
) -> Result<Outcome> {
    let limits = Limits::of_machine();
    let cpus = affinity::allowed_cpus();
    let mut outcome = Outcome::default();
    let sides::Ready {
        base: base_build,
        starts: [head, base_start],
        sockets: [socket, base_socket],
        copies: footing,
        kept,
        start_ns,
    } = ready(settings, base, &mut outcome.warnings)?;
    let keep = settings.pairing.keep;
    if matches!(keep, Keep::Above(_)) && !base_build.keeps {
        outcome.warnings.push(
            "--paired-keep: the base build's workers run once each (it was built with an older nnbench): every round starts new workers of both builds".into(),
        );
    }
    // Kept for the run: the workers start from the copies in it.
    let _copies = match footing {
        Ok(copies) => copies,
        Err(why) => {
            outcome.warnings.push(format!(
                "--paired: the builds run where they are, not from copies side by side ({why}): a difference of their files' places can bias the verdicts"
            ));
            None
        }
    };
    let judging = pair::Judging::of(settings);
    let mut pairs: Vec<Pair> = selected
        .iter()
        .map(|case| {
            let counted = crate::runner::case::engine::counted(case, settings);
            Pair::new(case, base_build.cases.contains(&case.id), counted)
        })
        .collect();
    // Counted cases run on each build in workers under Callgrind; its
    // folder of dumps lives as long as they do.
    let callgrind = pairs
        .iter()
        .any(|p| p.counted)
        .then(Callgrind::find)
        .transpose()?;
    outcome.run = Some(paired_run(selected, &base_build.cases, settings, base));
    let profiling = settings.profiling.profile;
    let mut held: Vec<usize> = Vec::new();
    let following = Following {
        settings,
        limits: &limits,
        stop: &|| None,
    };
    let mut rounds = Rounds {
        sockets: [&socket, &base_socket],
        head: &head,
        base: &base_start,
        following: &following,
        callgrind: callgrind.as_ref(),
        judging,
        cpus,
        max_rounds: settings.pairing.max_rounds,
        keep,
        kept,
        builds: BTreeMap::new(),
        twins: base_build.twin,
        start_ns,
        building: building::Building::default(),
    };
    let groups = Schedule::memo_groups(selected);
    let deciding = Deciding {
        selected,
        base_keeps: base_build.keeps,
        keep,
        profiling,
        stop,
    };
    let kept_groups = deciding.groups(
        &groups,
        &mut rounds,
        &mut pairs,
        &mut outcome,
        &mut held,
        done,
    );
    rounds.kept.quit();
    if let Some(run) = &mut outcome.run {
        run.kept = kept_groups;
        run.builds = rounds
            .builds
            .iter()
            .map(|(memo, [head, base])| MemoBuilds::new(memo, *head, *base))
            .collect();
    }
    held.extend(undecided(&mut pairs));
    let mut records: Vec<CaseRecord> = held.iter().map(|&at| pairs[at].record(&judging)).collect();
    if profiling {
        let sides = Sides {
            socket: &socket,
            head: &head,
            base: &base_start,
            limits: &limits,
        };
        profile_regressed(&mut records, selected, &sides, settings, &mut outcome);
    }
    records.into_iter().for_each(done);
    Ok(outcome)
}

/// The run's side of a pairing of `selected` with the build at `base`,
/// which has `base_cases`: those the head no longer has are gone.
fn paired_run(
    selected: &[&Case],
    base_cases: &std::collections::HashSet<String>,
    settings: &Settings,
    base: &Path,
) -> PairedRun {
    let head_ids: std::collections::HashSet<&str> =
        selected.iter().map(|c| c.id.as_str()).collect();
    PairedRun {
        base: base.display().to_string(),
        max_rounds: settings.pairing.max_rounds,
        gone: base_cases
            .iter()
            .filter(|id| !head_ids.contains(id.as_str()))
            .cloned()
            .collect(),
        kept: Vec::new(),
        builds: Vec::new(),
    }
}

/// The cases no round decided (the run was stopped), now decided as they
/// stand: those that took a round or failed, to be recorded.
fn undecided(pairs: &mut [Pair<'_>]) -> Vec<usize> {
    let mut left = Vec::new();
    for (at, pair) in pairs.iter_mut().enumerate().filter(|(_, p)| !p.decided) {
        pair.decided = true;
        if pair.rounds() > 0 || pair.failed() {
            left.push(at);
        }
    }
    left
}

/// The builds ready to pair: the base's as it is (or none, where the base
/// revision has no such bench: every case is new), with what to say of
/// how they run in `warnings`.
fn ready(settings: &Settings, base: &Path, warnings: &mut Vec<String>) -> Result<sides::Ready> {
    let bench = settings.output.name.clone().unwrap_or_default();
    let on_base = |message: String| Error::msg(format!("--paired {}: {message}", base.display()));
    // A base revision without the bench leaves nothing to pair with.
    match sides::no_base_build(base) {
        Some(why) => {
            warnings.push(format!("--paired: {why}: every case is new"));
            sides::Ready::without_base(settings, base).map_err(on_base)
        }
        None => match sides::checked(base) {
            Some(ready) => Ok(ready),
            None => sides::Ready::start(settings, &bench, base).map_err(on_base),
        },
    }
}

/// How a paired run decides its groups of cases, in turn.
struct Deciding<'a> {
    selected: &'a [&'a Case],
    /// Whether the base build's workers can be kept for a group.
    base_keeps: bool,
    keep: Keep,
    /// With `--profile`, the records of regressed cases wait for their
    /// differential flamegraphs, drawn once the rounds are over.
    profiling: bool,
    stop: &'a dyn Fn() -> Option<Signal>,
}

impl Deciding<'_> {
    /// Decides each group of `groups` in rounds, judging again on new
    /// workers the cases kept ones called changed. Each decided record goes
    /// to `done`, or is `held` for its profile; the names of the groups
    /// whose workers were kept.
    fn groups(
        &self,
        groups: &[Vec<usize>],
        rounds: &mut Rounds<'_>,
        pairs: &mut [Pair<'_>],
        outcome: &mut Outcome,
        held: &mut Vec<usize>,
        done: &mut dyn FnMut(CaseRecord),
    ) -> Vec<String> {
        let judging = rounds.judging;
        let mut kept_groups = Vec::new();
        for (at_group, group) in groups.iter().enumerate() {
            let later: Vec<usize> = groups[at_group + 1..].iter().flatten().copied().collect();
            // `--paired-keep DURATION` is about fixtures: a group without
            // memos has none to keep.
            let keep = self.base_keeps
                && match self.keep {
                    Keep::Auto => true,
                    Keep::Above(_) => self.selected[group[0]].params.memos().next().is_some(),
                    Keep::Off => false,
                };
            let mut ran = rounds.decide_group(pairs, group, &later, keep, self.stop, outcome);
            if ran == Ok(true) {
                kept_groups.push(group_name(self.selected[group[0]]));
                // A verdict drawn on kept workers may be their own speed's: a
                // case they call changed is measured again on new workers.
                let moved: Vec<usize> = group
                    .iter()
                    .copied()
                    .filter(|&at| pairs[at].moved(&judging))
                    .collect();
                for &at in &moved {
                    pairs[at].again(&judging);
                }
                if !moved.is_empty() {
                    ran = rounds.decide_group(pairs, &moved, &later, false, self.stop, outcome);
                }
            }
            for &at in group.iter().filter(|&&at| pairs[at].decided) {
                if self.profiling {
                    held.push(at);
                } else {
                    done(pairs[at].record(&judging));
                }
            }
            if let Err(signal) = ran {
                outcome.interrupted = Some(signal);
                break;
            }
        }
        kept_groups
    }
}

/// A group of cases that share memos, named by the memos of `case`, one
/// of them.
fn group_name(case: &Case) -> String {
    let memos: Vec<String> = case
        .params
        .memos()
        .map(|(_, memo)| memo.describe())
        .collect();
    if memos.is_empty() {
        NO_MEMOS.to_owned()
    } else {
        memos.join(", ")
    }
}

/// The name of the group of cases that use no memo.
const NO_MEMOS: &str = "cases without memos";

/// The workers of the two builds, for the profiles after the rounds.
struct Sides<'a> {
    socket: &'a Socket,
    head: &'a Start,
    base: &'a Start,
    limits: &'a Limits,
}

/// Draws, for each of `records` whose time regressed, the differential
/// flamegraph of the base build against this one, from a profile of the
/// case on a worker of each (`--profile`): its path goes in the record's
/// `profile`, or why there is none in its warnings.
fn profile_regressed(
    records: &mut [CaseRecord],
    selected: &[&Case],
    sides: &Sides<'_>,
    settings: &Settings,
    outcome: &mut Outcome,
) {
    let regressed: Vec<&Case> = records
        .iter()
        .filter(|r| {
            r.paired
                .as_ref()
                .is_some_and(|p| p.verdict == crate::record::Verdict::Regressed)
        })
        .filter_map(|r| selected.iter().copied().find(|c| c.id == r.id))
        .collect();
    if regressed.is_empty() {
        return;
    }
    // Each side's stacks are read as soon as its worker ends: both builds
    // may draw into one folder.
    let mut folded: [HashMap<String, Result<String>>; 2] = Default::default();
    for (side, start) in [sides.base, sides.head].into_iter().enumerate() {
        let mut start = start.clone();
        start.args.push("--profile".into());
        let workers = Workers::Fresh {
            start: &start,
            cpu: None,
            padded: true,
        };
        let following = Following {
            settings,
            limits: sides.limits,
            stop: &|| None,
        };
        let ran = workers::run_side(
            sides.socket,
            workers,
            &regressed,
            Assignment::default(),
            &following,
            outcome,
        );
        for (id, record) in ran {
            let stacks = match &record.profile {
                Some(svg) => std::fs::read_to_string(crate::runner::case::profile::folded_path(
                    svg,
                ))
                .map_err(|e| Error::msg(format!("its folded stacks could not be read: {e}"))),
                None => Err(Error::msg(
                    record
                        .warnings
                        .iter()
                        .chain(record.error.as_ref().map(|e| &e.message))
                        .next()
                        .cloned()
                        .unwrap_or_else(|| "it drew no flamegraph".into()),
                )),
            };
            folded[side].insert(id, stacks);
        }
    }
    let dir = crate::runner::case::profile::dir(settings);
    for record in records.iter_mut() {
        let (Some(base), Some(head)) = (folded[0].remove(&record.id), folded[1].remove(&record.id))
        else {
            continue;
        };
        let drawn = match (base, head) {
            (Ok(base), Ok(head)) => {
                let ratio = record.paired.as_ref().map_or(1.0, |p| p.estimate);
                crate::runner::case::profile::differential(&record.id, (&base, &head), ratio, &dir)
            }
            (Err(why), _) => Err(format!("the base build's profile: {why:#}")),
            (_, Err(why)) => Err(format!("this build's profile: {why:#}")),
        };
        match drawn {
            Ok(path) => record.profile = Some(path),
            Err(why) => record
                .warnings
                .push(format!("no differential flamegraph: {why}")),
        }
    }
}

/// The flags of the pairing itself, each with a value.
const PAIRING_FLAGS: [&str; 4] = [
    "--paired",
    "--max-rounds",
    "--paired-clock",
    "--paired-keep",
];

/// The flags both builds' workers are given: this run's, without those
/// of the pairing itself (a base build need not know them) and without
/// `--profile` (the rounds are timed; the profiles come after them), and
/// with the head's disk tier named, so that both builds share it.
fn worker_args(settings: &Settings) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut given = std::env::args_os().skip(1);
    while let Some(arg) = given.next() {
        let text = arg.to_string_lossy();
        if text == "--profile" {
            continue;
        }
        if PAIRING_FLAGS.contains(&text.as_ref()) {
            given.next();
        } else if !PAIRING_FLAGS
            .iter()
            .any(|flag| text.starts_with(&format!("{flag}=")))
        {
            args.push(arg);
        }
    }
    if settings.memory.disk_tier == crate::memo::DiskTier::Default
        && let Some(dir) = settings.memory.disk_tier.dir()
    {
        // Under the name a base built before 0.1.0 knows too; a worker
        // says nothing of renamed flags, its supervisor does.
        args.push("--memo-cache-dir".into());
        args.push(dir.into_os_string());
    }
    args
}
