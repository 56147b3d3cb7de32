//! Splitting a sweep into shards so that each memo loads on as few
//! machines as the balance allows.
//!
//! The cases are laid in a row where cases that share memos sit together:
//! sorted by their memos, the costliest memo first (ties: the memo more
//! cases share, then its name). A shard is a stretch of that row, and costs
//! its cases plus each distinct memo it loads once. The stretches are cut
//! so that the costliest shard costs as little as it can (the least cap
//! under which greedy stretches cover the row, found by bisection, which is
//! exact for costs that only grow as a stretch does), with 10% of slack
//! over the mean. Within that cap, each cut goes where the fewest memo
//! loads are shared across it (between two models before between two
//! datasets of one model) and the rest of the row still fits, and among
//! those, nearest an even share of what is left.

/// A sweep as the planner sees it.
pub(crate) struct Sweep {
    /// Each case's id, for a deterministic order.
    pub ids: Vec<String>,
    /// Each case's memos, as indices into `memo_cost`.
    pub memos_of: Vec<Vec<usize>>,
    /// Each memo's name (type and description), for a deterministic order.
    pub memo_names: Vec<String>,
    /// What each case costs beside its memos.
    pub case_cost: Vec<u64>,
    /// What loading each memo costs.
    pub memo_cost: Vec<u64>,
}

/// Which shard each case goes to, and what each shard is expected to cost.
#[derive(Debug)]
pub(crate) struct ShardPlan {
    /// Per case, its shard from 0.
    pub shard_of: Vec<usize>,
    /// Per shard, its cases' costs plus its distinct memos' loads.
    pub expected: Vec<u64>,
    /// Per shard, how many distinct memos it loads.
    pub memo_loads: Vec<usize>,
}

/// The slack over the mean shard cost that cuts may use to keep memos whole.
const SLACK_TENTHS: u64 = 11;

pub(crate) fn plan(sweep: &Sweep, count: usize) -> ShardPlan {
    let count = count.max(1);
    let row = row(sweep);
    let mut walker = Walker::new(sweep, &row);
    let mut shard_of = vec![0; sweep.ids.len()];
    if !row.is_empty() {
        let least = least_cap(&mut walker, count);
        let total = walker.cost(0, row.len());
        let mean_with_slack = (total.saturating_mul(SLACK_TENTHS) / 10).div_ceil(count as u64);
        let cap = least.max(mean_with_slack).min(total);
        let mut from = 0;
        for shard in 0..count {
            if from == row.len() {
                break;
            }
            let end = if shard + 1 == count {
                row.len()
            } else {
                walker.cut(from, cap, count - shard - 1)
            };
            for &case in &row[from..end] {
                shard_of[case] = shard;
            }
            from = end;
        }
    }
    let mut expected = vec![0u64; count];
    let mut memo_loads = vec![0usize; count];
    let mut memos: Vec<Vec<bool>> = vec![vec![false; sweep.memo_cost.len()]; count];
    for (case, &shard) in shard_of.iter().enumerate() {
        expected[shard] = expected[shard].saturating_add(sweep.case_cost[case]);
        for &memo in &sweep.memos_of[case] {
            if !memos[shard][memo] {
                memos[shard][memo] = true;
                memo_loads[shard] += 1;
                expected[shard] = expected[shard].saturating_add(sweep.memo_cost[memo]);
            }
        }
    }
    ShardPlan {
        shard_of,
        expected,
        memo_loads,
    }
}

/// The cases in the order shards take stretches of.
fn row(sweep: &Sweep) -> Vec<usize> {
    let mut users = vec![0usize; sweep.memo_cost.len()];
    for memos in &sweep.memos_of {
        for &memo in memos {
            users[memo] += 1;
        }
    }
    let mut by_weight: Vec<usize> = (0..sweep.memo_cost.len()).collect();
    by_weight.sort_by(|&a, &b| {
        sweep.memo_cost[b]
            .cmp(&sweep.memo_cost[a])
            .then(users[b].cmp(&users[a]))
            .then_with(|| sweep.memo_names[a].cmp(&sweep.memo_names[b]))
    });
    let mut rank = vec![0usize; by_weight.len()];
    for (at, &memo) in by_weight.iter().enumerate() {
        rank[memo] = at;
    }
    let keys: Vec<Vec<usize>> = sweep
        .memos_of
        .iter()
        .map(|memos| {
            let mut key: Vec<usize> = memos.iter().map(|&m| rank[m]).collect();
            key.sort_unstable();
            key
        })
        .collect();
    let mut row: Vec<usize> = (0..sweep.ids.len()).collect();
    // Cases without memos last: they fill whatever room the others leave.
    row.sort_by(|&a, &b| {
        (keys[a].is_empty(), &keys[a], &sweep.ids[a]).cmp(&(
            keys[b].is_empty(),
            &keys[b],
            &sweep.ids[b],
        ))
    });
    row
}

/// The least cap under which `count` greedy stretches cover the row.
fn least_cap(walker: &mut Walker<'_>, count: usize) -> u64 {
    let (mut low, mut high) = (walker.largest_case(), walker.cost(0, walker.row.len()));
    while low < high {
        let mid = low + (high - low) / 2;
        if walker.stretches(0, mid, count) <= count {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    low
}

/// Walks stretches of the row, costing each memo once per stretch.
struct Walker<'a> {
    sweep: &'a Sweep,
    row: &'a [usize],
    /// Per memo, the stretch that last loaded it.
    seen: Vec<u64>,
    stretch: u64,
}

impl<'a> Walker<'a> {
    fn new(sweep: &'a Sweep, row: &'a [usize]) -> Self {
        Self {
            sweep,
            row,
            seen: vec![0; sweep.memo_cost.len()],
            stretch: 0,
        }
    }

    fn start(&mut self) {
        self.stretch += 1;
    }

    /// What the case at `at` adds to the current stretch; `take` counts its
    /// memos as loaded.
    fn adds(&mut self, at: usize, take: bool) -> u64 {
        let case = self.row[at];
        let mut cost = self.sweep.case_cost[case];
        for &memo in &self.sweep.memos_of[case] {
            if self.seen[memo] != self.stretch {
                cost = cost.saturating_add(self.sweep.memo_cost[memo]);
                if take {
                    self.seen[memo] = self.stretch;
                }
            }
        }
        cost
    }

    /// The cost of the stretch `from..end`.
    fn cost(&mut self, from: usize, end: usize) -> u64 {
        self.start();
        (from..end).fold(0u64, |sum, at| sum.saturating_add(self.adds(at, true)))
    }

    /// The costliest single case with its memos: no cap can be lower.
    fn largest_case(&mut self) -> u64 {
        (0..self.row.len())
            .map(|at| self.cost(at, at + 1))
            .max()
            .unwrap_or(0)
    }

    /// Where a greedy stretch from `from` under `cap` ends (at least one case).
    fn extend(&mut self, from: usize, cap: u64) -> usize {
        self.start();
        let mut sum = 0u64;
        let mut end = from;
        while end < self.row.len() {
            let adds = self.adds(end, false);
            if end > from && sum.saturating_add(adds) > cap {
                break;
            }
            sum = sum.saturating_add(self.adds(end, true));
            end += 1;
        }
        end
    }

    /// How many greedy stretches under `cap` cover the row from `from`,
    /// counting no further than `limit + 1`.
    fn stretches(&mut self, mut from: usize, cap: u64, limit: usize) -> usize {
        let mut count = 0;
        while from < self.row.len() && count <= limit {
            from = self.extend(from, cap);
            count += 1;
        }
        count
    }

    /// The loads that cases at `at - 1` and `at` share: what a cut between
    /// them makes a second shard pay.
    fn shared(&self, at: usize) -> u64 {
        let (before, after) = (self.row[at - 1], self.row[at]);
        let after = &self.sweep.memos_of[after];
        self.sweep.memos_of[before]
            .iter()
            .filter(|m| after.contains(m))
            .fold(0u64, |sum, &m| sum.saturating_add(self.sweep.memo_cost[m]))
    }

    /// Where the stretch from `from` ends, leaving `left` stretches for the
    /// rest: among the cuts under `cap` that leave a rest that fits, the one
    /// that splits the fewest shared loads, then the one nearest an even
    /// share of what is left.
    fn cut(&mut self, from: usize, cap: u64, left: usize) -> usize {
        let furthest = self.extend(from, cap);
        // A nearer cut leaves more for the rest: the cuts that fit are
        // those from the nearest that does on.
        let (mut low, mut high) = (from + 1, furthest);
        while low < high {
            let mid = low + (high - low) / 2;
            if self.stretches(mid, cap, left) <= left {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        let nearest = low;
        let share = self.cost(from, self.row.len()) / (left as u64 + 1);
        self.start();
        let mut sum = 0u64;
        let mut best: Option<((u64, u64), usize)> = None;
        for at in from..furthest {
            sum = sum.saturating_add(self.adds(at, true));
            let cut = at + 1;
            if cut < nearest {
                continue;
            }
            let shared = if cut == self.row.len() {
                0
            } else {
                self.shared(cut)
            };
            // Ties go to the further cut, which leaves less for the rest.
            let key = (shared, sum.abs_diff(share));
            if best.is_none_or(|(best_key, _)| key <= best_key) {
                best = Some((key, cut));
            }
        }
        best.map_or(furthest, |(_, cut)| cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `models × datasets × batches`, every case costing `case`, each model
    /// `model[m]` and each dataset `data`.
    fn grid(model: &[u64], datasets: usize, batches: usize, case: u64, data: u64) -> Sweep {
        let mut sweep = Sweep {
            ids: Vec::new(),
            memos_of: Vec::new(),
            memo_names: Vec::new(),
            case_cost: Vec::new(),
            memo_cost: Vec::new(),
        };
        for (m, &cost) in model.iter().enumerate() {
            sweep.memo_names.push(format!("Model({m})"));
            sweep.memo_cost.push(cost);
        }
        for d in 0..datasets {
            sweep.memo_names.push(format!("Data({d})"));
            sweep.memo_cost.push(data);
        }
        // Declared data-major, as a product of `data × model` would be.
        for d in 0..datasets {
            for m in 0..model.len() {
                for b in 0..batches {
                    sweep.ids.push(format!("f/data={d},model={m},batch={b}"));
                    sweep.memos_of.push(vec![model.len() + d, m]);
                    sweep.case_cost.push(case);
                }
            }
        }
        sweep
    }

    fn models_per_shard(sweep: &Sweep, plan: &ShardPlan, models: usize) -> Vec<usize> {
        let mut loads = vec![std::collections::BTreeSet::<usize>::new(); plan.expected.len()];
        for (case, &shard) in plan.shard_of.iter().enumerate() {
            loads[shard].extend(sweep.memos_of[case].iter().filter(|&&m| m < models));
        }
        loads.iter().map(|s| s.len()).collect()
    }

    fn imbalance(plan: &ShardPlan) -> f64 {
        let max = *plan.expected.iter().max().unwrap() as f64;
        let mean = plan.expected.iter().sum::<u64>() as f64 / plan.expected.len() as f64;
        max / mean
    }

    #[test]
    fn the_seed_sweep_in_three_shards_loads_one_model_each() {
        // Unit costs, as without --shard-costs: the models are shared by
        // more cases (8) than the datasets (6), so they stay whole.
        let sweep = grid(&[1, 1, 1], 4, 2, 1, 1);
        let plan = plan(&sweep, 3);
        assert_eq!(models_per_shard(&sweep, &plan, 3), [1, 1, 1]);
        assert_eq!(plan.expected, [13, 13, 13]);
    }

    #[test]
    fn measured_costs_decide_which_memo_stays_whole() {
        // Four models of 10 s, three datasets of 1 s: grouped by model
        // although each dataset has more cases.
        let sweep = grid(&[10_000; 4], 3, 2, 100, 1_000);
        let plan = plan(&sweep, 4);
        assert_eq!(models_per_shard(&sweep, &plan, 4), [1, 1, 1, 1]);
    }

    #[test]
    fn more_shards_than_the_grid_has_groups_split_a_model_only_where_needed() {
        let sweep = grid(&[50; 3], 4, 2, 10, 5);
        for count in [1, 2, 3, 7] {
            let plan = plan(&sweep, count);
            let loads = models_per_shard(&sweep, &plan, 3);
            let total: usize = loads.iter().sum();
            // Each model once, plus one more load for each cut inside a model.
            assert!(total < 3 + count, "{count} shards: {loads:?}");
            assert!(imbalance(&plan) <= 1.25, "{count}: {:?}", plan.expected);
            // Two shards of three equal models balance only with one model
            // split; one or three shards keep each whole.
            if count == 1 || count == 3 {
                assert_eq!(total, 3, "{count} shards: {loads:?}");
            }
        }
    }

    #[test]
    fn uneven_memos_are_balanced_within_a_quarter_of_the_mean() {
        // Models from 1 to 64 units, the larger ones with more work a case.
        let sizes: Vec<u64> = (0..8).map(|i| 1 << (i % 7)).collect();
        let mut sweep = grid(&sizes, 3, 4, 1, 2);
        for (case, memos) in sweep.memos_of.iter().enumerate() {
            sweep.case_cost[case] = 1 + sizes[memos[1]] / 4;
        }
        for count in [2, 3, 4, 5, 7] {
            let plan = plan(&sweep, count);
            assert!(
                imbalance(&plan) <= 1.25,
                "{count} shards: {:?} (imbalance {:.2})",
                plan.expected,
                imbalance(&plan)
            );
        }
    }

    #[test]
    fn every_case_gets_a_shard_and_the_plan_is_deterministic() {
        let sweep = grid(&[3, 1, 4, 1, 5], 2, 3, 2, 6);
        for count in 1..=40 {
            let first = plan(&sweep, count);
            assert_eq!(first.expected.len(), count);
            assert!(first.shard_of.iter().all(|&s| s < count));
            assert_eq!(plan(&sweep, count).shard_of, first.shard_of);
        }
    }

    #[test]
    fn cases_without_memos_and_an_empty_sweep_plan() {
        let sweep = Sweep {
            ids: (0..10).map(|i| format!("plain/{i}")).collect(),
            memos_of: vec![Vec::new(); 10],
            memo_names: Vec::new(),
            case_cost: vec![1; 10],
            memo_cost: Vec::new(),
        };
        assert_eq!(plan(&sweep, 3).expected, [3, 3, 4]);
        let empty = Sweep {
            ids: Vec::new(),
            memos_of: Vec::new(),
            memo_names: Vec::new(),
            case_cost: Vec::new(),
            memo_cost: Vec::new(),
        };
        assert_eq!(plan(&empty, 2).expected, [0, 0]);
    }
}
