//! Interleaved rounds for scaling families (`scaling = n`). A family's
//! sizes timed one after another, seconds apart, see a shared machine's
//! speed drift between them, and the drift bends the power fitted through
//! them. So once every case of a family (with the same other parameters)
//! has run, the run times its sizes again in rounds: each round calls every
//! size once, in a shuffled order, and a slow stretch of the machine slows
//! every size of a round alike. Rounds go on until the power fitted
//! through them is known within [`WIDTH`], or for the family's measurement
//! time.
//!
//! The memos of a family's cases stay resident until its rounds are done,
//! so that the rounds load nothing.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use super::engine;
use crate::error::panic_message;
use crate::measure::Timer;
use crate::memo::{self, ErasedMemo, journal};
use crate::record::{CaseRecord, TimingMode};
use crate::registry::{Args, Body, Call, Case};
use crate::settings::{Settings, Timing};

/// The width of the power's 95% interval at which rounds stop.
const WIDTH: f64 = 0.04;

/// Rounds taken before the first look at the interval, and at most.
const MIN_ROUNDS: usize = 8;
const MAX_ROUNDS: usize = 400;

/// How often, in rounds, the interval is looked at: a fit bootstraps.
const LOOK_EVERY: usize = 4;

/// How long one size's sample in a round should take: long enough that the
/// clocks' resolution does not count, short enough that a round passes
/// before the machine's speed moves.
const SAMPLE: Duration = Duration::from_millis(2);

/// How long a family's rounds may take, unless its measurement time says.
const TIME_CAP: Duration = Duration::from_secs(2);

/// The rounds of one case: the time of one call in each, by the wall
/// clock and by the thread's CPU clock.
pub(crate) struct CaseRounds {
    pub id: String,
    pub wall_ns: Vec<f64>,
    pub cpu_ns: Vec<f64>,
}

impl CaseRounds {
    /// Puts these rounds on the record among `records` they belong to.
    pub(crate) fn apply(self, records: &mut [CaseRecord]) {
        if let Some(record) = records.iter_mut().find(|r| r.id == self.id) {
            record.time.rounds_ns = self.wall_ns;
            record.time.cpu_rounds_ns = self.cpu_ns;
        }
    }
}

/// The run's scaling families that are timed in rounds, each with its
/// cases still to run and the memos it holds.
pub(crate) struct Groups<'a> {
    /// The group of each selected case, by its place in the selection.
    group_of: Vec<Option<usize>>,
    groups: Vec<Group<'a>>,
}

struct Group<'a> {
    cases: Vec<&'a Case>,
    left: usize,
    /// How long its rounds may take.
    cap: Duration,
    /// Memos no later case uses, kept for the rounds.
    held: Vec<&'a dyn ErasedMemo>,
    /// Each case that passed: its median per call, and whether it
    /// computed on one thread.
    passed: HashMap<usize, (f64, bool)>,
}

/// What a family's rounds came to.
pub(crate) struct Taken<'a> {
    pub rounds: Vec<CaseRounds>,
    /// The memos held for them, to evict now.
    pub held: Vec<&'a dyn ErasedMemo>,
}

impl<'a> Groups<'a> {
    /// The groups among `selected`: the cases of a family with `scaling`,
    /// with the same other parameters, at least three, each timed by the
    /// clock on one thread (not counted, timed once, paired, loaded or
    /// isolated in a worker of its own), without hooks around its call.
    pub(crate) fn of(selected: &[&'a Case], settings: &Settings) -> Self {
        let mut groups = Groups {
            group_of: vec![None; selected.len()],
            groups: Vec::new(),
        };
        let timing = &settings.timing;
        if timing.test_mode || timing.rounds.is_some() || settings.isolation.isolate {
            return groups;
        }
        let mut keys: Vec<(usize, String)> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for (at, case) in selected.iter().enumerate() {
            let Some(parameter) = case.family.scaling else {
                continue;
            };
            let plan = engine::plan(case, timing);
            if matches!(plan.timing, Timing::Once | Timing::Instructions)
                || plan.parallel.is_some()
                || case.family.setup.is_some()
                || case.family.teardown.is_some()
                || !matches!(case.body, Body::Call(_))
            {
                continue;
            }
            let mut others = case.params.to_record();
            others.remove(parameter);
            let key = (
                case.family_ordinal,
                serde_json::Value::from(others).to_string(),
            );
            match keys.iter().position(|k| *k == key) {
                Some(group) => members[group].push(at),
                None => {
                    keys.push(key);
                    members.push(vec![at]);
                }
            }
        }
        for places in members.into_iter().filter(|m| m.len() >= 3) {
            for &at in &places {
                groups.group_of[at] = Some(groups.groups.len());
            }
            let plan = engine::plan(selected[places[0]], timing);
            groups.groups.push(Group {
                left: places.len(),
                cap: plan.sampling.measurement_time.unwrap_or(TIME_CAP),
                cases: places.iter().map(|&at| selected[at]).collect(),
                held: Vec::new(),
                passed: HashMap::new(),
            });
        }
        groups
    }

    /// Of `unused` (memos no case after the starting one uses), those to
    /// evict after it: the others are used by a family whose rounds are
    /// still to come, which holds them.
    pub(crate) fn hold(&mut self, unused: Vec<&'a dyn ErasedMemo>) -> Vec<&'a dyn ErasedMemo> {
        if self.groups.is_empty() {
            return unused;
        }
        let mut now = Vec::new();
        for memo in unused {
            let holder = self.groups.iter_mut().find(|group| {
                group.left > 0
                    && group
                        .cases
                        .iter()
                        .any(|case| case.params.memos().any(|(_, own)| own.same_as(memo)))
            });
            match holder {
                Some(group) => group.held.push(memo),
                None => now.push(memo),
            }
        }
        now
    }

    /// Notes that the case at `at` finished as `record`; once it was the
    /// last of its family's, times the family's rounds.
    pub(crate) fn finished(&mut self, at: usize, record: &CaseRecord) -> Option<Taken<'a>> {
        let group = &mut self.groups[self.group_of.get(at).copied().flatten()?];
        let time = &record.time;
        let per_call = match time.cpu_median_ns {
            Some(cpu) if time.computes_on_one_thread() => cpu,
            _ => time.median_ns,
        };
        if record.error.is_none() && time.mode != TimingMode::Instructions && per_call > 0.0 {
            let place = group.cases.iter().position(|c| c.id == record.id)?;
            group
                .passed
                .insert(place, (per_call, time.computes_on_one_thread()));
        }
        group.left -= 1;
        if group.left > 0 {
            return None;
        }
        let rounds = take(group);
        Some(Taken {
            rounds,
            held: std::mem::take(&mut group.held),
        })
    }
}

/// A case of a family in its rounds.
struct Member<'a> {
    case: &'a Case,
    call: &'a Call,
    args: Args,
    calls: u64,
    wall_ns: Vec<f64>,
    cpu_ns: Vec<f64>,
}

/// Times `group`'s rounds: nothing when fewer than three of its cases
/// passed, or when a memo or a call fails (the family is then fitted from
/// each size's own samples, with a warning).
fn take(group: &Group<'_>) -> Vec<CaseRounds> {
    let mut places: Vec<usize> = group.passed.keys().copied().collect();
    places.sort_unstable();
    let Some(&first) = places.first() else {
        return Vec::new();
    };
    if places.len() < 3 {
        return Vec::new();
    }
    let family = &group.cases[first].family_name;
    let mut members = Vec::with_capacity(places.len());
    for &place in &places {
        let case = group.cases[place];
        let Body::Call(call) = &case.body else {
            return Vec::new();
        };
        let mut args = Args::default();
        for (index, memo) in case.params.memos() {
            // A memo a budget evicted would be loaded again for the rounds
            // alone: the family is fitted from its samples instead.
            if !memo::global_cache().contains(memo) {
                journal::warn(format!(
                    "{family}: not timed in interleaved rounds, its memo {} was evicted before them, to make room",
                    memo.describe()
                ));
                return Vec::new();
            }
            match memo::resolve_erased(memo).0 {
                Ok(value) => args.set(index, value),
                Err(error) => {
                    journal::warn(format!(
                        "{family}: not timed in interleaved rounds, its memo {} failed: {error}",
                        memo.describe()
                    ));
                    return Vec::new();
                }
            }
        }
        let per_call = group.passed[&place].0;
        members.push(Member {
            case,
            call: &**call,
            calls: (SAMPLE.as_secs_f64() * 1e9 / per_call).ceil().max(1.0) as u64,
            args,
            wall_ns: Vec::new(),
            cpu_ns: Vec::new(),
        });
    }
    let cpu = places.iter().all(|place| group.passed[place].1);
    match rounds(&mut members, cpu, group.cap, family) {
        Ok(()) => members
            .into_iter()
            .map(|m| CaseRounds {
                id: m.case.id.clone(),
                wall_ns: m.wall_ns,
                cpu_ns: if cpu { m.cpu_ns } else { Vec::new() },
            })
            .collect(),
        Err(why) => {
            journal::warn(format!("{family}: not timed in interleaved rounds, {why}"));
            Vec::new()
        }
    }
}

/// Times `members` in rounds until the power through them is known within
/// [`WIDTH`] (on the CPU clock if `cpu`), for `cap` at most once the
/// least rounds ran. The first round warms up and is dropped.
fn rounds(
    members: &mut [Member<'_>],
    cpu: bool,
    cap: Duration,
    family: &str,
) -> Result<(), String> {
    let mut rng = fastrand::Rng::with_seed(family.bytes().map(u64::from).sum());
    let mut order: Vec<usize> = (0..members.len()).collect();
    for member in members.iter_mut() {
        sample(member)?;
    }
    let xs: Vec<f64> = members
        .iter()
        .map(|m| {
            m.case
                .params
                .to_record()
                .get(m.case.family.scaling.unwrap_or_default())
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(f64::NAN)
        })
        .collect();
    let started = Instant::now();
    for round in 1..=MAX_ROUNDS {
        rng.shuffle(&mut order);
        for &m in &order {
            let member = &mut members[m];
            let (wall, thread) = sample(member)?;
            member.wall_ns.push(wall);
            member.cpu_ns.push(thread);
        }
        if round < MIN_ROUNDS || round % LOOK_EVERY != 0 {
            continue;
        }
        let times: Vec<&[f64]> = members
            .iter()
            .map(|m| if cpu { &m.cpu_ns[..] } else { &m.wall_ns[..] })
            .collect();
        let narrow = crate::scaling::fit_rounds(&xs, &times, round as u64)
            .is_some_and(|p| p.interval[1] - p.interval[0] <= WIDTH);
        if narrow || started.elapsed() >= cap {
            break;
        }
    }
    Ok(())
}

/// One sample of `member`'s calls: the time of one call by the wall clock
/// and by the thread's CPU clock.
fn sample(member: &mut Member<'_>) -> Result<(f64, f64), String> {
    let mut timer = Timer::new(member.calls);
    let outcome = catch_unwind(AssertUnwindSafe(|| (member.call)(&member.args, &mut timer)));
    match outcome {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => return Err(format!("`{}` failed: {error}", member.case.id)),
        Err(payload) => {
            return Err(format!(
                "`{}` panicked: {}",
                member.case.id,
                panic_message(&*payload)
            ));
        }
    }
    let elapsed = timer.elapsed().unwrap_or_default();
    let calls = member.calls as f64;
    let wall = elapsed.wall.as_nanos() as f64 / calls;
    let thread = elapsed
        .thread_cpu
        .map_or(wall, |t| t.as_nanos() as f64 / calls);
    Ok((wall, thread))
}
