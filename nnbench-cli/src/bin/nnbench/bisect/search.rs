//! The search of a bisection, apart from building and running, with git
//! bisect's semantics on any history: commit 0 is GOOD, the others are
//! the commits BAD reaches and GOOD does not (BAD the last), each with its
//! parents among them (a parent GOOD reaches counts as GOOD). The first
//! regressed commit is one that regressed while its parents did not: a
//! commit judged good clears every commit it reaches; one judged regressed
//! becomes the new bad end, and only what it reaches is searched further.
//! Each step judges the commit that splits what is left most evenly, so a
//! regression on a branch is found on the branch, however main was merged
//! into it. A commit that cannot be judged (it does not build) is skipped,
//! and the next best is tried instead, as `git bisect skip` does; both
//! sides of the boundary found are judged again to confirm it.

use std::collections::BTreeSet;

/// What a judgement of one commit found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict<T> {
    /// No selected case regressed against GOOD: what the judge says of them.
    Good(T),
    /// Some did: what the judge says of them.
    Regressed(T),
    /// It could not be judged, and why.
    Skipped(String),
}

/// Why a commit is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// To narrow the range.
    Search,
    /// Again, to confirm a side of the boundary found.
    Confirm,
}

/// Where the search ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Found<T> {
    /// The first regressed commit, with what its last judgement said;
    /// `None` when BAD (or the last commit that could be judged) did not
    /// regress.
    pub first_regressed: Option<(usize, T)>,
    /// A good commit right before it: one of its parents, or the nearest
    /// judged good commit past the skipped ones between.
    pub last_good: usize,
    /// Commits between the two that were skipped: the regression may be in
    /// one of them.
    pub skipped_between: Vec<usize>,
}

/// How many times a boundary that a confirmation contradicts is searched
/// for again before the last one found is taken.
const SEARCHES: usize = 3;

/// The commits to search: `parents[i]` are commit `i`'s parents, each
/// listed before it (0 is GOOD, with none).
pub struct History<'a> {
    parents: &'a [Vec<usize>],
}

impl<'a> History<'a> {
    /// A history whose commits are listed parents first.
    pub fn new(parents: &'a [Vec<usize>]) -> Self {
        Self { parents }
    }

    /// The last commit: BAD.
    fn last(&self) -> usize {
        self.parents.len().saturating_sub(1)
    }

    /// Whether each commit is `from` or one of its ancestors.
    fn reached(&self, from: usize) -> Vec<bool> {
        let mut seen = vec![false; self.parents.len()];
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            if !std::mem::replace(&mut seen[at], true) {
                stack.extend(self.parents[at].iter().copied().filter(|&p| !seen[p]));
            }
        }
        seen
    }

    /// The commits that may hold the first regression with `bad` regressed
    /// and `good` good: what `bad` reaches and no good commit does (GOOD
    /// being one).
    fn candidates(&self, bad: usize, good: &BTreeSet<usize>) -> Vec<usize> {
        let mut cleared = vec![false; self.parents.len()];
        for &g in good.iter().chain([&0]) {
            for (at, reached) in self.reached(g).into_iter().enumerate() {
                cleared[at] |= reached;
            }
        }
        self.reached(bad)
            .into_iter()
            .enumerate()
            .filter(|&(at, reached)| reached && !cleared[at])
            .map(|(at, _)| at)
            .collect()
    }

    /// The candidate that splits `candidates` most evenly: the most of
    /// them on the side it is found on, the fewest.
    fn split(&self, candidates: &[usize], bad: usize, skipped: &BTreeSet<usize>) -> Option<usize> {
        let total = candidates.len();
        let inside: BTreeSet<usize> = candidates.iter().copied().collect();
        candidates
            .iter()
            .copied()
            .filter(|at| *at != bad && !skipped.contains(at))
            .max_by_key(|&at| {
                let below = self
                    .reached(at)
                    .into_iter()
                    .enumerate()
                    .filter(|&(c, r)| r && inside.contains(&c))
                    .count();
                // Ties go to the earlier commit, as a line's middle does.
                (below.min(total - below), std::cmp::Reverse(at))
            })
    }

    /// The good commits right before `bad`: its parents, looked through
    /// the skipped ones, that are judged good (0: GOOD).
    fn boundary(
        &self,
        bad: usize,
        good: &BTreeSet<usize>,
        skipped: &BTreeSet<usize>,
    ) -> Vec<usize> {
        let mut found = BTreeSet::new();
        let mut seen = BTreeSet::new();
        let mut stack: Vec<usize> = self.parents[bad].clone();
        while let Some(at) = stack.pop() {
            if !seen.insert(at) {
                continue;
            }
            if skipped.contains(&at) && !good.contains(&at) {
                stack.extend(self.parents[at].iter().copied());
            } else if good.contains(&at) || at == 0 {
                found.insert(at);
            }
        }
        found.into_iter().collect()
    }
}

/// Bisects `history`, GOOD (0) known good, judging with `judge`.
pub fn bisect<T: Clone>(
    history: &History<'_>,
    judge: &mut dyn FnMut(usize, Purpose) -> Verdict<T>,
) -> Found<T> {
    let mut skipped: BTreeSet<usize> = BTreeSet::new();
    let mut bad: Vec<(usize, T)> = Vec::new();
    let mut good: BTreeSet<usize> = BTreeSet::new();
    // The bad end: BAD, or the nearest commit it reaches that can be
    // judged.
    let mut hi = history.last();
    loop {
        if hi == 0 {
            return none(0);
        }
        match judge(hi, Purpose::Search) {
            Verdict::Good(_) => return none(hi),
            Verdict::Regressed(said) => {
                bad.push((hi, said));
                break;
            }
            Verdict::Skipped(_) => {
                skipped.insert(hi);
                match history.parents[hi]
                    .iter()
                    .copied()
                    .filter(|p| !skipped.contains(p))
                    .max()
                {
                    Some(parent) => hi = parent,
                    None => return none(0),
                }
            }
        }
    }
    for search in 1..=SEARCHES {
        narrow(history, &mut hi, &mut good, &mut skipped, &mut bad, judge);
        if search == SEARCHES {
            break;
        }
        // Confirm both sides: a side that says otherwise the second time
        // was noise, and the search goes on from it.
        match judge(hi, Purpose::Confirm) {
            Verdict::Regressed(said) => record(&mut bad, hi, said),
            Verdict::Good(_) => {
                bad.retain(|(b, _)| *b != hi);
                good.insert(hi);
                // The nearest commit still known regressed that this one
                // does not clear.
                let next = bad
                    .iter()
                    .map(|(b, _)| *b)
                    .map(|b| (history.candidates(b, &good).len(), b))
                    .filter(|&(left, _)| left > 0)
                    .min();
                match next {
                    Some((_, next)) => hi = next,
                    None => return none(hi),
                }
                continue;
            }
            Verdict::Skipped(_) => {}
        }
        let mut contradicted = false;
        for side in history.boundary(hi, &good, &skipped) {
            if side == 0 {
                continue;
            }
            if let Verdict::Regressed(said) = judge(side, Purpose::Confirm) {
                record(&mut bad, side, said);
                good.remove(&side);
                hi = side;
                contradicted = true;
                break;
            }
        }
        if !contradicted {
            break;
        }
    }
    let left = history.candidates(hi, &good);
    let last_good = history
        .boundary(hi, &good, &skipped)
        .into_iter()
        .max()
        .unwrap_or(0);
    let said = bad
        .iter()
        .find(|(b, _)| *b == hi)
        .map(|(_, said)| said.clone());
    Found {
        first_regressed: said.map(|said| (hi, said)),
        last_good,
        skipped_between: left.into_iter().filter(|at| *at != hi).collect(),
    }
}

/// Narrows the commits that may hold the first regression, `hi` the
/// regressed end, until only `hi` is left besides skipped commits.
fn narrow<T>(
    history: &History<'_>,
    hi: &mut usize,
    good: &mut BTreeSet<usize>,
    skipped: &mut BTreeSet<usize>,
    bad: &mut Vec<(usize, T)>,
    judge: &mut dyn FnMut(usize, Purpose) -> Verdict<T>,
) {
    loop {
        let candidates = history.candidates(*hi, good);
        let Some(at) = history.split(&candidates, *hi, skipped) else {
            return;
        };
        match judge(at, Purpose::Search) {
            Verdict::Good(_) => {
                good.insert(at);
            }
            Verdict::Regressed(said) => {
                record(bad, at, said);
                *hi = at;
            }
            Verdict::Skipped(_) => {
                skipped.insert(at);
            }
        }
    }
}

fn record<T>(bad: &mut Vec<(usize, T)>, at: usize, said: T) {
    bad.retain(|(b, _)| *b != at);
    bad.push((at, said));
}

fn none<T>(last_good: usize) -> Found<T> {
    Found {
        first_regressed: None,
        last_good,
        skipped_between: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of commits 0..=last.
    fn line(last: usize) -> Vec<Vec<usize>> {
        (0..=last)
            .map(|at| if at == 0 { vec![] } else { vec![at - 1] })
            .collect()
    }

    /// Bisects `parents`, where the commits that reach `first_bad` (if it
    /// is one of them) are regressed and those in `broken` do not build; the commits judged,
    /// in order.
    fn bisected(
        parents: &[Vec<usize>],
        first_bad: usize,
        broken: &[usize],
    ) -> (Found<()>, Vec<(usize, Purpose)>) {
        let history = History::new(parents);
        let mut judged = Vec::new();
        let found = bisect(&history, &mut |at, purpose| {
            judged.push((at, purpose));
            if broken.contains(&at) {
                Verdict::Skipped("does not build".into())
            } else if history.reached(at).get(first_bad) == Some(&true) {
                Verdict::Regressed(())
            } else {
                Verdict::Good(())
            }
        });
        (found, judged)
    }

    /// [`bisected`] on a line of commits 0..=last.
    fn run(last: usize, first_bad: usize, broken: &[usize]) -> (Found<()>, Vec<(usize, Purpose)>) {
        bisected(&line(last), first_bad, broken)
    }

    #[test]
    fn sixteen_commits_find_the_ninth_in_few_judgements() {
        let (found, judged) = run(15, 9, &[4]);
        assert_eq!(found.first_regressed, Some((9, ())));
        assert_eq!(found.last_good, 8);
        let searched: BTreeSet<usize> = judged.iter().map(|(at, _)| *at).collect();
        assert!(searched.len() <= 8, "{judged:?}");
        // The boundary's both sides are judged a second time.
        assert!(judged.contains(&(9, Purpose::Confirm)) && judged.contains(&(8, Purpose::Confirm)));
    }

    #[test]
    fn a_commit_that_does_not_build_is_skipped_for_its_neighbour() {
        let (found, judged) = run(9, 9, &[4]);
        assert_eq!(found.first_regressed, Some((9, ())));
        assert!(judged.contains(&(4, Purpose::Search)), "{judged:?}");
        assert!(found.skipped_between.is_empty());
        // A regression right after skipped commits may be in them.
        let (found, _) = run(9, 5, &[4]);
        assert_eq!(found.first_regressed, Some((5, ())));
        assert_eq!((found.last_good, found.skipped_between), (3, vec![4]));
        let (found, _) = run(9, 5, &[3, 4]);
        assert_eq!(
            (found.last_good, found.skipped_between.clone()),
            (2, vec![3, 4])
        );
    }

    #[test]
    fn a_good_bad_end_finds_nothing_and_a_broken_one_is_passed_over() {
        let (found, judged) = run(8, 9, &[4]);
        assert_eq!(found.first_regressed, None);
        assert_eq!(judged, [(8, Purpose::Search)]);
        let (found, _) = run(8, 5, &[8, 7]);
        assert_eq!(found.first_regressed, Some((5, ())));
    }

    #[test]
    fn a_boundary_a_confirmation_contradicts_is_searched_again() {
        // Commit 7 is judged regressed once by noise, good after.
        let mut noisy = 0;
        let found = bisect(&History::new(&line(15)), &mut |at, _| {
            if at == 7 {
                noisy += 1;
                if noisy == 1 {
                    return Verdict::Regressed(());
                }
            }
            if at >= 9 {
                Verdict::Regressed(())
            } else {
                Verdict::Good(())
            }
        });
        assert_eq!(found.first_regressed, Some((9, ())));
    }

    /// Main (M) and a branch from M0 (B), into which main was merged (X):
    /// `M0 - M1 - M2` and `M0 - B1 - B2 - B3 - X(B3, M2)`.
    const M0: usize = 0;

    #[test]
    fn a_regression_on_a_branch_is_found_on_it_from_the_old_merge_base() {
        // GOOD M0: M1 1, M2 2, B1 3, B2 4, B3 5, X 6 (parents first).
        let parents = vec![
            vec![],
            vec![M0],
            vec![1],
            vec![M0],
            vec![3],
            vec![4],
            vec![5, 2],
        ];
        for first_bad in [3, 4, 5, 6] {
            let (found, _) = bisected(&parents, first_bad, &[]);
            assert_eq!(found.first_regressed, Some((first_bad, ())), "{first_bad}");
        }
        // A regression on main, merged into the branch, is found on main.
        let (found, judged) = bisected(&parents, 2, &[]);
        assert_eq!(found.first_regressed, Some((2, ())), "{judged:?}");
        assert_eq!(found.last_good, 1);
    }

    #[test]
    fn a_regression_on_a_branch_is_found_on_it_from_the_new_merge_base() {
        // GOOD M2, which main's merge made the merge base: the branch's
        // commits B1 1, B2 2, B3 3 reach it only through X 4; B1's parent
        // M0 is GOOD's ancestor, so GOOD's.
        let parents = vec![vec![], vec![0], vec![1], vec![2], vec![3, 0]];
        let (found, judged) = bisected(&parents, 2, &[]);
        assert_eq!(found.first_regressed, Some((2, ())), "{judged:?}");
        assert_eq!(found.last_good, 1);
        // The merge itself, when the branch was fine, is the one blamed.
        let (found, _) = bisected(&parents, 4, &[]);
        assert_eq!(found.first_regressed, Some((4, ())));
        assert_eq!(found.last_good, 3);
    }

    #[test]
    fn a_merge_halves_what_is_left_by_what_it_reaches() {
        // Two branches of 6 commits each from GOOD, merged: the first
        // commit judged after BAD is the one that best halves the 13.
        let mut parents = vec![vec![]];
        for _branch in 0..2 {
            for at in 0..6 {
                let parent = if at == 0 { 0 } else { parents.len() - 1 };
                parents.push(vec![parent]);
            }
        }
        parents.push(vec![6, 12]);
        let (found, judged) = bisected(&parents, 9, &[]);
        assert_eq!(found.first_regressed, Some((9, ())));
        assert!([6, 12].contains(&judged[1].0), "{judged:?}");
        let searched: BTreeSet<usize> = judged.iter().map(|(at, _)| *at).collect();
        assert!(searched.len() <= 6, "{judged:?}");
    }
}
