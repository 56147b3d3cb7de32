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

use std::collections::VecDeque;

use crate::memo::{Distinct, ErasedMemo};
use crate::registry::Case;

/// Index of a distinct memo among the scheduled cases.
pub(crate) type MemoId = usize;

pub(crate) struct Schedule<'a> {
    /// Each distinct memo, for eviction and size lookups.
    memos: Vec<&'a dyn ErasedMemo>,
    /// Per case (by position in the selection), its memo ids in signature order.
    case_memos: Vec<Vec<MemoId>>,
    /// Per memo, the cases that use it, in declared order (done ones are
    /// skipped lazily).
    users: Vec<VecDeque<usize>>,
    /// Per memo, how many of its cases have not run yet.
    uses_left: Vec<usize>,
    done: Vec<bool>,
    /// Next candidate in declared order.
    cursor: usize,
    last: Option<usize>,
}

impl<'a> Schedule<'a> {
    pub(crate) fn new(cases: &[&'a Case]) -> Self {
        let mut distinct = Distinct::default();
        let mut case_memos = Vec::with_capacity(cases.len());
        let mut users: Vec<VecDeque<usize>> = Vec::new();
        for (at, case) in cases.iter().enumerate() {
            let mut ids = Vec::new();
            for (_, memo) in case.params.memos() {
                let (id, new) = distinct.id(memo);
                if new {
                    users.push(VecDeque::new());
                }
                if !ids.contains(&id) {
                    ids.push(id);
                    users[id].push_back(at);
                }
            }
            case_memos.push(ids);
        }
        let memos = distinct.into_memos();
        let uses_left = users.iter().map(VecDeque::len).collect();
        Self {
            memos,
            case_memos,
            users,
            uses_left,
            done: vec![false; cases.len()],
            cursor: 0,
            last: None,
        }
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
        Some(next)
    }

    /// The case [`next`](Self::next) would give now, left to run.
    pub(crate) fn peek(
        &mut self,
        size_of: impl Fn(&dyn ErasedMemo) -> Option<u64>,
    ) -> Option<usize> {
        self.last
            .and_then(|last| self.continuation(last, &size_of))
            .or_else(|| {
                while self.done.get(self.cursor) == Some(&true) {
                    self.cursor += 1;
                }
                (self.cursor < self.done.len()).then_some(self.cursor)
            })
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
        shared.sort_by_key(|&m| std::cmp::Reverse(size_of(self.memos[m]).unwrap_or(0) >> 20));
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
        let mut unused = Vec::new();
        for &memo in &self.case_memos[case] {
            self.uses_left[memo] -= 1;
            if self.uses_left[memo] == 0 {
                unused.push(self.memos[memo]);
            }
        }
        unused
    }

    /// The memos that cases not run yet use.
    pub(crate) fn pending(&self) -> Vec<&'a dyn ErasedMemo> {
        self.memos
            .iter()
            .zip(&self.uses_left)
            .filter(|(_, left)| **left > 0)
            .map(|(memo, _)| *memo)
            .collect()
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
        sampling: crate::Sampling {
            sample_size: None,
            warm_up: None,
            measurement_time: None,
        },
        direction: None,
        directions: &[],
        fail_on: None,
        concurrency: &[],
        threads: &[],
        cases: Vec::new,
    };

    fn case(id: &str, params: Vec<Param>) -> Case {
        Case {
            id: id.to_owned(),
            family_name: "f".into(),
            family: &FAMILY,
            params: Params::new(params),
            body: Body::BrokenGrid(String::new()),
            throughput: None,
            parallel: None,
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
