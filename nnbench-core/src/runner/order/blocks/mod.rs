//! The order of a sweep under a memory budget: which cases run in which
//! order so that the memos loaded, in bytes, are as few as the budget
//! allows.
//!
//! Cases that use the same memos form a group and run together. Orders are
//! made by blocks ([`tile`]): for each order of the memo parameters (the
//! axes), as many memos of the outer axis as fit are held while the others
//! stream in a serpentine; the outer blocks are tried at every size that
//! gives another number of blocks. Each order is costed by running it on
//! paper ([`simulate`]), with the sizes known before the run (or once the
//! first memo of each type has loaded), and the cheapest is taken. The
//! order the run would take without a plan is among the candidates, and it
//! is kept where it already loads each memo once: no budget binds.

mod simulate;
mod tile;

pub(crate) use simulate::Cost;

use crate::memo::Sizes;

/// A distinct memo among the cases planned.
pub(crate) type MemoId = usize;

/// Cases to order, with what their memos weigh.
pub(crate) struct Problem {
    /// Per memo: its host and GPU bytes.
    pub sizes: Vec<Sizes>,
    pub groups: Vec<Group>,
    /// The memo parameters' names, in the order first seen.
    pub axes: Vec<&'static str>,
    /// Host and GPU budgets (`u64::MAX` where there is none).
    pub budget: Sizes,
    /// Memos resident when the cases start.
    pub resident: Vec<MemoId>,
}

/// The cases that use one set of memos.
pub(crate) struct Group {
    /// Its memos, each once.
    pub memos: Vec<MemoId>,
    /// Per axis, its memo there, if it has a parameter of that name.
    pub on_axis: Vec<Option<MemoId>>,
    /// Its cases, by position in the selection, in declared order.
    pub cases: Vec<usize>,
}

/// An order chosen, with what it is expected to cost.
#[derive(Clone, Debug)]
pub(crate) struct BlockOrder {
    /// The groups in order.
    pub groups: Vec<usize>,
    pub cost: Cost,
    /// How the order goes, for people: `` `data` in blocks of 2, `model` streamed ``.
    pub order: String,
    /// Whether it is another order than the one given.
    pub reordered: bool,
}

impl Problem {
    /// The cheapest order: `given` (groups in the order the run would
    /// take them, a group again where its cases are apart), unless a block
    /// order loads fewer bytes.
    pub(crate) fn plan(&self, given: &[usize]) -> BlockOrder {
        let lower = self.lower_bound();
        let mut best = BlockOrder {
            groups: given.to_vec(),
            cost: simulate::simulate(self, given),
            order: "the declared order".to_owned(),
            reordered: false,
        };
        if best.cost.key() <= lower.key() || self.axes.is_empty() {
            return best;
        }
        for axes in self.axis_orders() {
            // Block sizes above what the first block could hold give the
            // same order as that size. Smaller blocks leave more room to
            // the inner axes but load the inner memos more often: the cost
            // falls, then rises, as the blocks shrink, and once it has risen
            // twice in a row the smaller ones are not tried.
            let mut held = usize::MAX;
            let (mut best_here, mut worse) = ((u64::MAX, u64::MAX), 0);
            for cap in self.block_sizes(axes[0]) {
                if cap > held {
                    continue;
                }
                let (groups, first_blocks) = tile::tiled(self, &axes, cap);
                held = first_blocks.first().copied().unwrap_or(usize::MAX);
                let cost = simulate::simulate(self, &groups);
                if cost.key() < best_here {
                    (best_here, worse) = (cost.key(), 0);
                } else {
                    worse += 1;
                    if worse == 2 {
                        break;
                    }
                }
                if cost.key() < best.cost.key() {
                    best = BlockOrder {
                        order: self.describe(&axes, &first_blocks),
                        groups,
                        cost,
                        reordered: true,
                    };
                }
            }
        }
        best
    }

    /// Each memo that a group uses and that is not resident, loaded once;
    /// and the largest group's memos held at once.
    pub(crate) fn lower_bound(&self) -> Cost {
        let mut used = vec![false; self.sizes.len()];
        let mut peak = Sizes::default();
        for group in &self.groups {
            let held = group
                .memos
                .iter()
                .fold(Sizes::default(), |a, &m| a + self.sizes[m]);
            peak = Sizes {
                host: peak.host.max(held.host),
                device: peak.device.max(held.device),
            };
            group.memos.iter().for_each(|&m| used[m] = true);
        }
        for &m in &self.resident {
            used[m] = false;
        }
        let loaded = (0..used.len()).filter(|&m| used[m]);
        Cost {
            loads: loaded.clone().count() as u64,
            bytes: loaded
                .map(|m| self.sizes[m].host + self.sizes[m].device)
                .sum(),
            peak,
        }
    }

    /// Orders of the axes to try, outermost first: every one for up to
    /// three axes; else the declared order, its reverse, and the largest
    /// memos outermost.
    fn axis_orders(&self) -> Vec<Vec<usize>> {
        let declared: Vec<usize> = (0..self.axes.len()).collect();
        if declared.len() <= 3 {
            return permutations(&declared);
        }
        let mut by_size = declared.clone();
        by_size.sort_by_key(|&a| std::cmp::Reverse(self.largest_on(a)));
        let mut reversed = declared.clone();
        reversed.reverse();
        vec![declared, reversed, by_size]
    }

    fn largest_on(&self, axis: usize) -> u64 {
        self.groups
            .iter()
            .filter_map(|g| g.on_axis[axis])
            .map(|m| self.sizes[m].host + self.sizes[m].device)
            .max()
            .unwrap_or(0)
    }

    /// Block sizes for the outer axis: the smallest giving each number of
    /// blocks, largest first.
    fn block_sizes(&self, axis: usize) -> Vec<usize> {
        let mut memos: Vec<Option<MemoId>> = self.groups.iter().map(|g| g.on_axis[axis]).collect();
        memos.sort_unstable();
        memos.dedup();
        let n = memos.len().max(1);
        let mut sizes: Vec<usize> = (1..=n).map(|blocks| n.div_ceil(blocks)).collect();
        sizes.dedup();
        sizes
    }

    /// `` `model` in blocks of 2, `data` streamed ``.
    fn describe(&self, axes: &[usize], first_blocks: &[usize]) -> String {
        let Some((&last, outer)) = axes.split_last() else {
            return "the declared order".to_owned();
        };
        let mut parts: Vec<String> = outer
            .iter()
            .zip(first_blocks)
            .map(|(&axis, n)| format!("`{}` in blocks of {n}", self.axes[axis]))
            .collect();
        parts.push(format!("`{}` streamed", self.axes[last]));
        parts.join(", ")
    }
}

fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for (at, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(at);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

#[cfg(test)]
mod tests;
