//! Which cases a run takes: those its selection matches, and with
//! `--shard K/N` only that shard's part of them, planned alike on every
//! machine from the cases' ids and memos.

use crate::memo::Distinct;
use crate::record::ShardRecord;
use crate::registry::Case;
use crate::settings::Settings;
use crate::shard::{Shard, ShardCosts, plan};

/// The selected cases of `cases`, of the settings' shard when they name
/// one, with what that shard's record says.
pub(crate) fn select<'a>(
    settings: &Settings,
    cases: &'a [Case],
) -> (Vec<&'a Case>, Option<Assigned>) {
    let selection = &settings.selection;
    let selected: Vec<&Case> = cases
        .iter()
        .filter(|c| selection.selects(&c.id, c.family.tags))
        .collect();
    match settings.sharding.shard {
        Some(shard) => {
            let (mine, assigned) = assign(&selected, shard, settings.sharding.costs.as_ref());
            (mine, Some(assigned))
        }
        None => (selected, None),
    }
}

/// What a shard's record says about it, and what people are told.
pub(crate) struct Assigned {
    pub record: ShardRecord,
    /// How many cases the shard runs.
    pub cases: usize,
    /// How many distinct memos the shard loads.
    pub memo_loads: usize,
    /// What the whole sweep is expected to cost, in the record's unit.
    pub sweep_cost: f64,
}

/// The cases of `shard` among the sweep's `cases`, planned with `costs`,
/// in the sweep's order; and what its record says.
fn assign<'a>(
    cases: &[&'a Case],
    shard: Shard,
    costs: Option<&ShardCosts>,
) -> (Vec<&'a Case>, Assigned) {
    let measured = costs.filter(|c| !c.is_empty());
    let sweep = sweep(cases, measured);
    let plan = plan::plan(&sweep, shard.count());
    let mut by_id: Vec<(&str, usize)> = sweep
        .ids
        .iter()
        .map(String::as_str)
        .zip(plan.shard_of.iter().copied())
        .collect();
    by_id.sort_unstable();
    let (mut case_set, mut assignment) = (blake3::Hasher::new(), blake3::Hasher::new());
    assignment.update(&shard.count().to_le_bytes());
    for (id, shard) in by_id {
        case_set.update(id.as_bytes());
        case_set.update(b"\n");
        assignment.update(id.as_bytes());
        assignment.update(&[0]);
        assignment.update(&shard.to_le_bytes());
    }
    let at = shard.index() - 1;
    let mine: Vec<&Case> = cases
        .iter()
        .zip(&plan.shard_of)
        .filter(|&(_, &s)| s == at)
        .map(|(case, _)| *case)
        .collect();
    let assigned = Assigned {
        cases: mine.len(),
        record: ShardRecord {
            index: shard.index(),
            count: shard.count(),
            cases: cases.len(),
            case_set: case_set.finalize().to_hex()[..16].to_owned(),
            plan: assignment.finalize().to_hex()[..16].to_owned(),
            expected_cost: plan.expected[at] as f64,
            cost_unit: if measured.is_some() { "ns" } else { "cases" }.to_owned(),
        },
        memo_loads: plan.memo_loads[at],
        sweep_cost: plan.expected.iter().sum::<u64>() as f64,
    };
    (mine, assigned)
}

/// The planner's view of `cases`: distinct memos, and each one's cost.
fn sweep(cases: &[&Case], costs: Option<&ShardCosts>) -> plan::Sweep {
    let mut distinct = Distinct::default();
    let mut memos_of = Vec::with_capacity(cases.len());
    for case in cases {
        let mut ids = Vec::new();
        for (_, memo) in case.params.memos() {
            let (id, _) = distinct.id(memo);
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        memos_of.push(ids);
    }
    let memos = distinct.into_memos();
    let ids: Vec<String> = cases.iter().map(|c| c.id.clone()).collect();
    let (case_cost, memo_cost) = match costs {
        Some(costs) => measured(&ids, &memos_of, memos.len(), costs),
        None => (vec![1; cases.len()], vec![1; memos.len()]),
    };
    plan::Sweep {
        memo_names: memos
            .iter()
            .map(|m| format!("{} {}", m.type_name(), m.describe()))
            .collect(),
        ids,
        memos_of,
        case_cost,
        memo_cost,
    }
}

/// Case and memo costs in nanoseconds from `costs`. A memo's load is the
/// load time of the first case that used it (shared evenly among the
/// memos that case loaded first); what the costs lack is the median of
/// what they have.
fn measured(
    ids: &[String],
    memos_of: &[Vec<usize>],
    memo_count: usize,
    costs: &ShardCosts,
) -> (Vec<u64>, Vec<u64>) {
    let known: Vec<f64> = ids
        .iter()
        .filter_map(|id| costs.case(id).map(|c| c.call_ns))
        .collect();
    let case_median = median(known).unwrap_or(1.0);
    let case_cost = ids
        .iter()
        .map(|id| costs.case(id).map_or(case_median, |c| c.call_ns).max(1.0) as u64)
        .collect();
    let mut order: Vec<usize> = (0..ids.len()).collect();
    if let Some(ran) = costs.run_order() {
        order.sort_by_key(|&case| ran.get(ids[case].as_str()).copied().unwrap_or(usize::MAX));
    }
    let mut seen = vec![false; memo_count];
    let mut loads: Vec<Option<f64>> = vec![None; memo_count];
    for case in order {
        let new: Vec<usize> = memos_of[case]
            .iter()
            .copied()
            .filter(|&m| !seen[m])
            .collect();
        for &m in &new {
            seen[m] = true;
        }
        if let Some(cost) = costs.case(&ids[case]).filter(|c| c.load_ns > 0.0)
            && !new.is_empty()
        {
            for &m in &new {
                loads[m] = Some(cost.load_ns / new.len() as f64);
            }
        }
    }
    let memo_median = median(loads.iter().flatten().copied().collect()).unwrap_or(case_median);
    let memo_cost = loads
        .into_iter()
        .map(|l| l.unwrap_or(memo_median).max(1.0) as u64)
        .collect();
    (case_cost, memo_cost)
}

/// The median of the finite `values`, `None` when there are none.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    values.sort_by(f64::total_cmp);
    (!values.is_empty()).then(|| crate::measure::adaptive::median(&values))
}

impl Assigned {
    /// One line for people: which shard, how many cases and memo loads,
    /// and its share of the expected cost.
    pub(crate) fn describe(&self) -> String {
        let record = &self.record;
        let share = if self.sweep_cost > 0.0 {
            100.0 * record.expected_cost / self.sweep_cost
        } else {
            0.0
        };
        format!(
            "shard {}/{}: {} of {} cases, {} memo loads, {:.1}% of the expected cost ({}, plan {})",
            record.index,
            record.count,
            self.cases,
            record.cases,
            self.memo_loads,
            share,
            if record.cost_unit == "ns" {
                "by measured times"
            } else {
                "by case count"
            },
            record.plan
        )
    }
}
