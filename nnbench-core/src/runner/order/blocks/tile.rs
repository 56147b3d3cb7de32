//! Block orders: for axes taken outermost first, as many memos of the
//! outer axis as fit are held while the inner axes are run through within
//! the room left, block after block. Each axis's memos are taken most
//! recently used first, so that an inner sweep runs back from where the
//! last block ended (a serpentine) and the memos still resident from it
//! are used before they go.

use std::collections::HashMap;

use super::{MemoId, Problem};
use crate::memo::Sizes;

/// The groups of `problem` in the block order of `axes` (outermost first),
/// the outermost axis in blocks of at most `cap` memos; and the size of
/// the first block on each axis but the innermost.
pub(crate) fn tiled(problem: &Problem, axes: &[usize], cap: usize) -> (Vec<usize>, Vec<usize>) {
    let mut tiler = Tiler {
        problem,
        axes,
        last_use: vec![0; problem.sizes.len()],
        clock: 1,
        out: Vec::with_capacity(problem.groups.len()),
        first_blocks: Vec::new(),
    };
    for &m in &problem.resident {
        tiler.last_use[m] = 1;
    }
    tiler.clock = 2;
    let all: Vec<usize> = (0..problem.groups.len()).collect();
    tiler.tile(all, 0, problem.budget, cap);
    (tiler.out, tiler.first_blocks)
}

struct Tiler<'p> {
    problem: &'p Problem,
    axes: &'p [usize],
    /// Per memo, when it was last used in the order made so far (0: not
    /// yet, 1: resident before it starts).
    last_use: Vec<u64>,
    clock: u64,
    out: Vec<usize>,
    /// Per outer axis, how many memos its first block held.
    first_blocks: Vec<usize>,
}

/// The groups sharing one memo (or none) on an axis.
struct Bucket {
    memo: Option<MemoId>,
    groups: Vec<usize>,
}

impl Tiler<'_> {
    fn tile(&mut self, groups: Vec<usize>, level: usize, room: Sizes, cap: usize) {
        if groups.is_empty() {
            return;
        }
        let Some(&axis) = self.axes.get(level) else {
            groups.into_iter().for_each(|g| self.emit(g));
            return;
        };
        let buckets = self.buckets(&groups, axis);
        if level + 1 == self.axes.len() {
            for bucket in buckets {
                bucket.groups.into_iter().for_each(|g| self.emit(g));
            }
            return;
        }
        // Room is kept for one memo of each inner axis, the largest.
        let reserve = self.axes[level + 1..]
            .iter()
            .map(|&inner| self.largest(&groups, inner))
            .fold(Sizes::default(), |a, b| a + b);
        let free = Sizes {
            host: room.host.saturating_sub(reserve.host),
            device: room.device.saturating_sub(reserve.device),
        };
        let mut buckets = buckets.into_iter().peekable();
        while let Some(first) = buckets.next() {
            let mut held = self.size(first.memo);
            let mut block = first.groups;
            let mut count = 1;
            while let Some(next) = buckets.peek() {
                let more = held + self.size(next.memo);
                if count >= cap || more.host > free.host || more.device > free.device {
                    break;
                }
                held = more;
                count += 1;
                block.extend(buckets.next().map(|b| b.groups).unwrap_or_default());
            }
            if self.first_blocks.len() == level {
                self.first_blocks.push(count);
            }
            let left = Sizes {
                host: room.host.saturating_sub(held.host),
                device: room.device.saturating_sub(held.device),
            };
            self.tile(block, level + 1, left, usize::MAX);
        }
    }

    /// The groups by their memo on `axis`, the memo used most recently
    /// first, then in the order the groups come.
    fn buckets(&self, groups: &[usize], axis: usize) -> Vec<Bucket> {
        let mut buckets: Vec<Bucket> = Vec::new();
        let mut index: HashMap<Option<MemoId>, usize> = HashMap::new();
        for &g in groups {
            let memo = self.problem.groups[g].on_axis[axis];
            let at = *index.entry(memo).or_insert_with(|| {
                buckets.push(Bucket {
                    memo,
                    groups: Vec::new(),
                });
                buckets.len() - 1
            });
            buckets[at].groups.push(g);
        }
        // Stable: memos not used yet keep the order they come in.
        buckets.sort_by_key(|b| std::cmp::Reverse(b.memo.map_or(0, |m| self.last_use[m])));
        buckets
    }

    fn largest(&self, groups: &[usize], axis: usize) -> Sizes {
        groups
            .iter()
            .map(|&g| self.size(self.problem.groups[g].on_axis[axis]))
            .fold(Sizes::default(), |a, b| Sizes {
                host: a.host.max(b.host),
                device: a.device.max(b.device),
            })
    }

    fn size(&self, memo: Option<MemoId>) -> Sizes {
        memo.map_or_else(Sizes::default, |m| self.problem.sizes[m])
    }

    fn emit(&mut self, group: usize) {
        for &m in &self.problem.groups[group].memos {
            self.last_use[m] = self.clock;
        }
        self.clock += 1;
        self.out.push(group);
    }
}
