//! The order cases run in, and when each memo has had its last use.
//!
//! Declared order, except that after a case the run continues with the next
//! case that shares one of its memos, the largest resident memo first. So a
//! product declared `data × model` runs model by model once the models are
//! known to be the big memos, and each model can be evicted as soon as its
//! cases are done, holding one model at a time. Sizes come from the cache (a
//! memo's `size_of`, or resident-memory growth while it computed), rounded
//! down to whole MiB; unknown sizes (nothing computed yet, as in `--list`)
//! count as equal, and ties go to the memo that comes first in the
//! signature. When the last case shares no memo with any remaining case, the
//! run resumes the declared order.
//!
//! Under a memory budget that binds, the cases left follow a
//! [plan](blocks) instead: an order made for the fewest bytes loaded,
//! whose evictions take the memo used furthest ahead first.

use std::collections::{HashMap, VecDeque};

mod blocks;
mod budget;

pub(crate) use budget::{Planning, Sizebook, describe};

use crate::memo::{Distinct, ErasedMemo, Sizes};
use crate::registry::Case;
use blocks::{BlockOrder, Group, Problem};

/// Index of a distinct memo among the scheduled cases.
pub(crate) type MemoId = usize;

/// When a memo is used next in a planned order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ahead {
    /// No plan is followed: the run evicts the least recently used.
    Unplanned,
    /// It is no case's parameter (an inner memo, one a hook resolved).
    Outside,
    /// By the case this many places ahead in the plan.
    In(usize),
    /// By no case left.
    Never,
}

#[derive(Clone)]
pub(crate) struct Schedule<'a> {
    /// Each distinct memo, for eviction and size lookups.
    distinct: Distinct<'a>,
    /// The memo parameters' names, in the order first seen.
    axes: Vec<&'static str>,
    /// Per case (by position in the selection), its memo ids in signature order.
    case_memos: Vec<Vec<MemoId>>,
    /// Per case, its memos by parameter: (axis, memo).
    case_axes: Vec<Vec<(usize, MemoId)>>,
    /// Per memo, the cases that use it, in declared order (done ones are
    /// skipped lazily).
    users: Vec<VecDeque<usize>>,
    /// Per memo, how many of its cases have not run yet.
    uses_left: Vec<usize>,
    done: Vec<bool>,
    /// Next candidate in declared order.
    cursor: usize,
    last: Option<usize>,
    /// The plan followed, where a budget binds.
    planned: Option<Planned>,
}

/// An order planned for the cases left.
#[derive(Clone)]
struct Planned {
    /// Cases, by position in the selection.
    order: Vec<usize>,
    /// The next place in `order`.
    at: usize,
    /// Per memo, the places in `order` of the cases that use it.
    uses: Vec<Vec<usize>>,
}

impl<'a> Schedule<'a> {
    pub(crate) fn new(cases: &[&'a Case]) -> Self {
        Self::keeping(cases, &[])
    }

    /// The order of `cases`, where `later` cases run after them in
    /// another run of this process: the memos those use are never unused
    /// here.
    pub(crate) fn keeping(cases: &[&'a Case], later: &[&'a Case]) -> Self {
        let mut distinct = Distinct::default();
        let mut axes: Vec<&'static str> = Vec::new();
        let mut case_memos = Vec::with_capacity(cases.len() + later.len());
        let mut case_axes = Vec::with_capacity(cases.len() + later.len());
        let mut users: Vec<VecDeque<usize>> = Vec::new();
        let mut uses_left: Vec<usize> = Vec::new();
        // A later case stands among the cases as one already run: never
        // given, its memos' uses never counted down.
        for (at, case) in cases.iter().chain(later).enumerate() {
            let mut ids = Vec::new();
            let mut on_axes = Vec::new();
            for (name, memo) in case.params.memos_named() {
                let (id, new) = distinct.id(memo);
                if new {
                    users.push(VecDeque::new());
                    uses_left.push(0);
                }
                let axis = axes.iter().position(|&a| a == name).unwrap_or_else(|| {
                    axes.push(name);
                    axes.len() - 1
                });
                on_axes.push((axis, id));
                if !ids.contains(&id) {
                    ids.push(id);
                    uses_left[id] += 1;
                    if at < cases.len() {
                        users[id].push_back(at);
                    }
                }
            }
            case_memos.push(ids);
            case_axes.push(on_axes);
        }
        let mut done = vec![false; cases.len()];
        done.resize(cases.len() + later.len(), true);
        Self {
            distinct,
            axes,
            case_memos,
            case_axes,
            users,
            uses_left,
            done,
            cursor: 0,
            last: None,
            planned: None,
        }
    }

    /// The distinct memos of the cases, by id.
    pub(crate) fn memos(&self) -> &[&'a dyn ErasedMemo] {
        self.distinct.memos()
    }

    /// The ids of the memos of the case at `at`.
    pub(crate) fn memos_of(&self, at: usize) -> &[MemoId] {
        &self.case_memos[at]
    }

    /// The next case to run (a position in the selection), given each
    /// memo's resident size in bytes where known.
    pub(crate) fn next(
        &mut self,
        size_of: impl Fn(&dyn ErasedMemo) -> Option<u64>,
    ) -> Option<usize> {
        let next = self.peek(size_of)?;
        self.done[next] = true;
        self.last = Some(next);
        if let Some(planned) = &mut self.planned {
            planned.at += 1;
        }
        Some(next)
    }

    /// The case [`next`](Self::next) would give now, left to run.
    pub(crate) fn peek(
        &mut self,
        size_of: impl Fn(&dyn ErasedMemo) -> Option<u64>,
    ) -> Option<usize> {
        if let Some(planned) = &mut self.planned {
            while planned.order.get(planned.at).is_some_and(|&c| self.done[c]) {
                planned.at += 1;
            }
            if let Some(&case) = planned.order.get(planned.at) {
                return Some(case);
            }
        }
        self.last
            .and_then(|last| self.continuation(last, &size_of))
            .or_else(|| {
                while self.done.get(self.cursor) == Some(&true) {
                    self.cursor += 1;
                }
                (self.cursor < self.done.len()).then_some(self.cursor)
            })
    }

    /// When `memo` is used next in the plan followed, if one is.
    pub(crate) fn ahead(&self, memo: &dyn ErasedMemo) -> Ahead {
        let Some(planned) = &self.planned else {
            return Ahead::Unplanned;
        };
        let Some(id) = self.distinct.find(memo) else {
            return Ahead::Outside;
        };
        let uses = &planned.uses[id];
        match uses.get(uses.partition_point(|&place| place < planned.at)) {
            Some(&place) => Ahead::In(place - planned.at),
            None => Ahead::Never,
        }
    }

    /// Plans the cases left for the fewest bytes loaded within `budget`,
    /// with each memo's size from `size_of` (unknown ones counted as
    /// empty) and those `resident` held; follows the plan where it orders
    /// the cases otherwise than the run would. Returns the plan.
    pub(crate) fn replan(
        &mut self,
        size_of: &dyn Fn(&dyn ErasedMemo) -> Option<Sizes>,
        budget: Sizes,
        resident: &dyn Fn(&dyn ErasedMemo) -> bool,
    ) -> BlockOrder {
        let memos = self.memos();
        let sizes: Vec<Sizes> = memos
            .iter()
            .map(|m| size_of(*m).unwrap_or_default())
            .collect();
        let resident_ids: Vec<MemoId> = (0..memos.len())
            .filter(|&id| self.uses_left[id] > 0 && resident(memos[id]))
            .collect();
        let mut groups: Vec<Group> = Vec::new();
        let mut group_of = vec![usize::MAX; self.done.len()];
        let mut index: HashMap<Vec<MemoId>, usize> = HashMap::new();
        for case in (0..self.done.len()).filter(|&c| !self.done[c]) {
            let mut key = self.case_memos[case].clone();
            key.sort_unstable();
            let at = *index.entry(key.clone()).or_insert_with(|| {
                let mut on_axis = vec![None; self.axes.len()];
                for &(axis, memo) in &self.case_axes[case] {
                    on_axis[axis].get_or_insert(memo);
                }
                groups.push(Group {
                    memos: key,
                    on_axis,
                    cases: Vec::new(),
                });
                groups.len() - 1
            });
            groups[at].cases.push(case);
            group_of[case] = at;
        }
        // The order the run would take unplanned, as groups.
        let mut unplanned = self.clone();
        unplanned.planned = None;
        let mut given: Vec<usize> = Vec::new();
        while let Some(case) = unplanned.next(|m| size_of(m).map(|s| s.host)) {
            unplanned.finish(case);
            if given.last() != Some(&group_of[case]) {
                given.push(group_of[case]);
            }
        }
        let problem = Problem {
            sizes,
            groups,
            axes: self.axes.clone(),
            budget,
            resident: resident_ids,
        };
        let plan = problem.plan(&given);
        self.planned = plan.reordered.then(|| {
            let order: Vec<usize> = plan
                .groups
                .iter()
                .flat_map(|&g| problem.groups[g].cases.iter().copied())
                .collect();
            let mut uses = vec![Vec::new(); problem.sizes.len()];
            for (place, &case) in order.iter().enumerate() {
                for &memo in &self.case_memos[case] {
                    uses[memo].push(place);
                }
            }
            Planned { order, at: 0, uses }
        });
        plan
    }

    /// The first remaining case that shares the largest memo of `last`.
    fn continuation(
        &mut self,
        last: usize,
        size_of: &impl Fn(&dyn ErasedMemo) -> Option<u64>,
    ) -> Option<usize> {
        let mut shared: Vec<MemoId> = self.case_memos[last]
            .iter()
            .copied()
            .filter(|&m| self.uses_left[m] > 0)
            .collect();
        // Stable: equal sizes keep signature order.
        let memos = self.distinct.memos();
        shared.sort_by_key(|&m| std::cmp::Reverse(size_of(memos[m]).unwrap_or(0) >> 20));
        for memo in shared {
            let queue = &mut self.users[memo];
            while queue.front().is_some_and(|&c| self.done[c]) {
                queue.pop_front();
            }
            if let Some(&case) = queue.front() {
                return Some(case);
            }
        }
        None
    }

    /// Marks `case` as run; returns the memos that no remaining case uses.
    pub(crate) fn finish(&mut self, case: usize) -> Vec<&'a dyn ErasedMemo> {
        let memos = self.distinct.memos();
        let mut unused = Vec::new();
        for &memo in &self.case_memos[case] {
            self.uses_left[memo] -= 1;
            if self.uses_left[memo] == 0 {
                unused.push(memos[memo]);
            }
        }
        unused
    }

    /// The memos that cases not run yet use.
    pub(crate) fn pending(&self) -> Vec<&'a dyn ErasedMemo> {
        self.distinct
            .memos()
            .iter()
            .zip(&self.uses_left)
            .filter(|(_, left)| **left > 0)
            .map(|(memo, _)| *memo)
            .collect()
    }

    /// The cases in groups that use the same memos, each group in the
    /// [static order](Self::static_order) of its cases, the groups in the
    /// order of their first case there: all cases of one memo set run
    /// before the next set is loaded.
    pub(crate) fn memo_groups(cases: &[&'a Case]) -> Vec<Vec<usize>> {
        let schedule = Self::new(cases);
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut index: HashMap<Vec<MemoId>, usize> = HashMap::new();
        for at in Self::static_order(cases) {
            let mut key = schedule.case_memos[at].clone();
            key.sort_unstable();
            let group = *index.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[group].push(at);
        }
        groups
    }

    /// The whole order, assuming every memo is of unknown size.
    pub(crate) fn static_order(cases: &[&'a Case]) -> Vec<usize> {
        let mut schedule = Self::new(cases);
        std::iter::from_fn(|| {
            let next = schedule.next(|_| None)?;
            schedule.finish(next);
            Some(next)
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::param::{Param, Params};
    use crate::registry::{Body, Family};

    use crate::memo::test_memos::{Data, Model};

    static FAMILY: Family = Family {
        name: "f",
        module_path: "tests",
        file: file!(),
        line: line!(),
        tags: &[],
        setup: None,
        teardown: None,
        timing: None,
        sampling: crate::Sampling::new(),
        direction: None,
        directions: &[],
        fail_on: None,
        concurrency: &[],
        threads: &[],
        rate: &[],
        arrivals: crate::measure::arrivals::Arrivals::Poisson,
        request_timeout: None,
        latency_target: None,
        slo: &[],
        goodput: None,
        scaling: None,
        cases: Vec::new,
    };

    fn case(id: &str, params: Vec<Param>) -> Case {
        Case {
            id: id.to_owned(),
            family_name: "f".into(),
            family: &FAMILY,
            family_ordinal: 0,
            params: Params::new(params),
            body: Body::BrokenGrid(String::new()),
            throughput: None,
            work: None,
            parallel: None,
            record_params: Default::default(),
        }
    }

    /// `data × model`, 2 × 3, in declared order, then a case with no memo.
    fn data_by_model() -> Vec<Case> {
        let mut cases = Vec::new();
        for d in 1..=2 {
            for m in 1..=3 {
                cases.push(case(
                    &format!("d{d}m{m}"),
                    vec![Param::memo("data", Data(d)), Param::memo("model", Model(m))],
                ));
            }
        }
        cases.push(case("plain", Vec::new()));
        cases
    }

    fn run_order(cases: &[Case], size_of: impl Fn(&dyn ErasedMemo) -> Option<u64>) -> Vec<String> {
        let refs: Vec<&Case> = cases.iter().collect();
        let mut schedule = Schedule::new(&refs);
        let mut order = Vec::new();
        while let Some(next) = schedule.next(&size_of) {
            schedule.finish(next);
            order.push(cases[next].id.clone());
        }
        order
    }

    #[test]
    fn unknown_sizes_follow_the_declared_order_and_shared_memos() {
        let cases = data_by_model();
        let refs: Vec<&Case> = cases.iter().collect();
        let order: Vec<&str> = Schedule::static_order(&refs)
            .into_iter()
            .map(|i| cases[i].id.as_str())
            .collect();
        // After d1m3, Data(1) is done but Model(3) has a case left: it runs next.
        assert_eq!(
            order,
            ["d1m1", "d1m2", "d1m3", "d2m3", "d2m1", "d2m2", "plain"]
        );
    }

    #[test]
    fn once_the_models_are_known_to_be_large_the_run_goes_model_by_model() {
        let cases = data_by_model();
        let big_models = |memo: &dyn ErasedMemo| match memo.as_any().downcast_ref::<Model>() {
            Some(_) => Some(512 << 20),
            None => Some(4 << 20),
        };
        assert_eq!(
            run_order(&cases, big_models),
            ["d1m1", "d2m1", "d2m2", "d1m2", "d1m3", "d2m3", "plain"]
        );
        let big_data = |memo: &dyn ErasedMemo| match memo.as_any().downcast_ref::<Data>() {
            Some(_) => Some(512 << 20),
            None => Some(4 << 20),
        };
        assert_eq!(
            run_order(&cases, big_data),
            ["d1m1", "d1m2", "d1m3", "d2m3", "d2m1", "d2m2", "plain"]
        );
    }

    #[test]
    fn sizes_below_a_mebibyte_count_as_equal() {
        let cases = data_by_model();
        let tiny = |memo: &dyn ErasedMemo| {
            Some(
                memo.as_any()
                    .downcast_ref::<Model>()
                    .map_or(10, |_| 900_000),
            )
        };
        assert_eq!(run_order(&cases, tiny)[..3], ["d1m1", "d1m2", "d1m3"]);
    }

    #[test]
    fn groups_hold_the_cases_of_one_memo_set_in_the_static_order() {
        let mut cases = data_by_model();
        cases.push(case(
            "d1m1-again",
            vec![Param::memo("model", Model(1)), Param::memo("data", Data(1))],
        ));
        cases.push(case("plain-again", Vec::new()));
        let refs: Vec<&Case> = cases.iter().collect();
        let groups: Vec<Vec<&str>> = Schedule::memo_groups(&refs)
            .into_iter()
            .map(|g| g.into_iter().map(|i| cases[i].id.as_str()).collect())
            .collect();
        assert_eq!(
            groups,
            [
                vec!["d1m1", "d1m1-again"],
                vec!["d1m2"],
                vec!["d1m3"],
                vec!["d2m1"],
                vec!["d2m2"],
                vec!["d2m3"],
                vec!["plain", "plain-again"],
            ]
        );
    }

    #[test]
    fn memos_of_later_cases_are_never_unused() {
        let cases = data_by_model();
        let refs: Vec<&Case> = cases.iter().collect();
        // d1m1 and d1m2 now; d2m1 in a later run.
        let mut schedule = Schedule::keeping(&refs[..2], &refs[3..4]);
        let mut unused = Vec::new();
        let mut ran = Vec::new();
        while let Some(next) = schedule.next(|_| None) {
            ran.push(cases[next].id.clone());
            unused.extend(schedule.finish(next).iter().map(|m| m.describe()));
        }
        assert_eq!(ran, ["d1m1", "d1m2"], "a later case is not run");
        assert_eq!(unused, ["Data(1)", "Model(2)"], "Model(1) is kept for d2m1");
        let pending: Vec<String> = schedule.pending().iter().map(|m| m.describe()).collect();
        assert_eq!(pending, ["Model(1)", "Data(2)"]);
    }

    #[test]
    fn finish_reports_each_memo_after_its_last_use() {
        let cases = data_by_model();
        let refs: Vec<&Case> = cases.iter().collect();
        let mut schedule = Schedule::new(&refs);
        let mut released = Vec::new();
        while let Some(next) = schedule.next(|_| None) {
            let unused: Vec<String> = schedule.finish(next).iter().map(|m| m.describe()).collect();
            released.push((cases[next].id.clone(), unused));
        }
        let after = |id: &str| {
            released
                .iter()
                .find(|(c, _)| c == id)
                .map(|(_, u)| u.clone())
                .unwrap()
        };
        assert!(after("d1m1").is_empty());
        assert_eq!(after("d1m3"), ["Data(1)"]);
        assert_eq!(after("d2m3"), ["Model(3)"]);
        assert_eq!(after("d2m1"), ["Model(1)"]);
        assert_eq!(after("d2m2"), ["Data(2)", "Model(2)"]);
        assert!(after("plain").is_empty());
    }
}
