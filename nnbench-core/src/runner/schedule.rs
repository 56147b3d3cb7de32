//! The order cases run in, and when each memo has had its last use.
//!
//! Declared order, except that after a case the run continues with the next
//! case that shares its largest resident memo. So a product declared
//! `data × model` runs model by model once the models are known to be the
//! big memos, and each model can be evicted as soon as its cases are done,
//! holding one model at a time. Sizes come from the cache (a memo's
//! `size_of`, or resident-memory growth while it computed), rounded down to
//! whole MiB so that small memos keep the declared order; unknown sizes
//! (nothing computed yet, as in `--list`) count as equal, and ties go to the
//! memo that comes first in the signature.

use std::collections::{HashMap, VecDeque};

use crate::memo::ErasedMemo;
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
        let mut memos: Vec<&'a dyn ErasedMemo> = Vec::new();
        let mut by_hash: HashMap<u64, Vec<MemoId>> = HashMap::new();
        let mut case_memos = Vec::with_capacity(cases.len());
        let mut users: Vec<VecDeque<usize>> = Vec::new();
        for (at, case) in cases.iter().enumerate() {
            let mut ids = Vec::new();
            for (_, memo) in case.params.memos() {
                let bucket = by_hash.entry(memo.key_hash()).or_default();
                let id = match bucket.iter().find(|&&id| memos[id].same_as(memo)) {
                    Some(&id) => id,
                    None => {
                        memos.push(memo);
                        users.push(VecDeque::new());
                        bucket.push(memos.len() - 1);
                        memos.len() - 1
                    }
                };
                if !ids.contains(&id) {
                    ids.push(id);
                    users[id].push_back(at);
                }
            }
            case_memos.push(ids);
        }
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
        let next = self
            .last
            .and_then(|last| self.continuation(last, &size_of))
            .or_else(|| {
                while self.done.get(self.cursor) == Some(&true) {
                    self.cursor += 1;
                }
                (self.cursor < self.done.len()).then_some(self.cursor)
            })?;
        self.done[next] = true;
        self.last = Some(next);
        Some(next)
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
