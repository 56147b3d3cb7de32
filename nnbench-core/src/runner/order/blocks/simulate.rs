//! What running groups in an order costs under a memory budget: each memo
//! loaded when a group needs it and it is not resident, the resident memo
//! used furthest ahead evicted first to make room (optimal for one order
//! when memos are alike in size), and each memo evicted after its last use,
//! as the run evicts.

use super::{Group, MemoId, Problem};
use crate::memo::Sizes;

/// The loads an order makes, the bytes they bring in, and the most held at
/// once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Cost {
    pub loads: u64,
    /// Host and GPU bytes loaded, together.
    pub bytes: u64,
    pub peak: Sizes,
}

impl Cost {
    /// Fewer bytes first, then fewer loads.
    pub(crate) fn key(&self) -> (u64, u64) {
        (self.bytes, self.loads)
    }
}

const NEVER: usize = usize::MAX;

/// The cost of running `order` (indices into `problem.groups`).
pub(crate) fn simulate(problem: &Problem, order: &[usize]) -> Cost {
    let groups: Vec<&Group> = order.iter().map(|&g| &problem.groups[g]).collect();
    let memos = problem.sizes.len();
    // Per step, per memo of its group (from `starts[step]` on): the next
    // step that uses it.
    let mut starts = Vec::with_capacity(groups.len() + 1);
    starts.push(0);
    for group in &groups {
        starts.push(starts[starts.len() - 1] + group.memos.len());
    }
    let mut next_after = vec![NEVER; starts[groups.len()]];
    let mut next_use = vec![NEVER; memos];
    for (at, group) in groups.iter().enumerate().rev() {
        for (k, &m) in group.memos.iter().enumerate() {
            next_after[starts[at] + k] = next_use[m];
            next_use[m] = at;
        }
    }

    let mut state = State {
        problem,
        resident: Vec::new(),
        is_resident: vec![false; memos],
        next_use,
        in_step: vec![NEVER; memos],
        held: Sizes::default(),
        cost: Cost::default(),
    };
    for &m in &problem.resident {
        if state.next_use[m] != NEVER && !state.is_resident[m] {
            state.insert(m);
        }
    }
    state.cost.peak = state.held;
    for (at, group) in groups.iter().enumerate() {
        for &m in &group.memos {
            state.in_step[m] = at;
        }
        for (k, &m) in group.memos.iter().enumerate() {
            if !state.is_resident[m] {
                state.load(m);
            }
            state.next_use[m] = next_after[starts[at] + k];
        }
        state.cost.peak = Sizes {
            host: state.cost.peak.host.max(state.held.host),
            device: state.cost.peak.device.max(state.held.device),
        };
        for &m in &group.memos {
            if state.next_use[m] == NEVER {
                state.evict(m);
            }
        }
    }
    state.cost
}

struct State<'p> {
    problem: &'p Problem,
    resident: Vec<MemoId>,
    is_resident: Vec<bool>,
    /// Per memo, the next step that uses it (`NEVER` when none does).
    next_use: Vec<usize>,
    /// Per memo, the last step whose group holds it: a group's own memos
    /// are never evicted to make room for each other.
    in_step: Vec<usize>,
    held: Sizes,
    cost: Cost,
}

impl State<'_> {
    fn load(&mut self, memo: MemoId) {
        let size = self.problem.sizes[memo];
        self.cost.loads += 1;
        self.cost.bytes += size.host + size.device;
        let budget = self.problem.budget;
        let step = self.in_step[memo];
        while self.held.host + size.host > budget.host && size.host > 0 {
            if !self.evict_furthest(step, |s| s.host > 0) {
                break;
            }
        }
        while self.held.device + size.device > budget.device && size.device > 0 {
            if !self.evict_furthest(step, |s| s.device > 0) {
                break;
            }
        }
        self.insert(memo);
    }

    fn insert(&mut self, memo: MemoId) {
        self.is_resident[memo] = true;
        self.resident.push(memo);
        self.held = self.held + self.problem.sizes[memo];
    }

    /// Evicts the resident memo, not of the step's group, that holds the
    /// memory wanted and is used furthest ahead; says whether there was one.
    fn evict_furthest(&mut self, step: usize, holds: impl Fn(Sizes) -> bool) -> bool {
        let victim = self
            .resident
            .iter()
            .copied()
            .filter(|&m| self.in_step[m] != step && holds(self.problem.sizes[m]))
            .max_by_key(|&m| self.next_use[m]);
        match victim {
            Some(m) => {
                self.evict(m);
                true
            }
            None => false,
        }
    }

    fn evict(&mut self, memo: MemoId) {
        if let Some(at) = self.resident.iter().position(|&m| m == memo) {
            self.resident.swap_remove(at);
            self.is_resident[memo] = false;
            let size = self.problem.sizes[memo];
            self.held = Sizes {
                host: self.held.host - size.host,
                device: self.held.device - size.device,
            };
        }
    }
}
