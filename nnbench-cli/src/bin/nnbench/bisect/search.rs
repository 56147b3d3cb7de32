//! The search of a bisection, apart from building and running: commits
//! numbered from GOOD (0) to BAD (the last), each judged at most once
//! except at the boundary, where both sides are judged again to confirm
//! it. A commit that cannot be judged (it does not build) is skipped, and
//! the next one nearest the middle is tried instead, as `git bisect skip`
//! does.

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
    /// The last good commit before it.
    pub last_good: usize,
    /// Commits between the two that were skipped: the regression may be in
    /// one of them.
    pub skipped_between: Vec<usize>,
}

/// How many times a boundary that a confirmation contradicts is searched
/// for again before the last one found is taken.
const SEARCHES: usize = 3;

/// Bisects commits `0..=last`, 0 known good, judging with `judge`.
pub fn bisect<T: Clone>(
    last: usize,
    judge: &mut dyn FnMut(usize, Purpose) -> Verdict<T>,
) -> Found<T> {
    let mut skipped: BTreeSet<usize> = BTreeSet::new();
    let mut bad: Vec<(usize, T)> = Vec::new();
    // The bad end: BAD, or the nearest commit below it that can be judged.
    let mut hi = last;
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
                hi -= 1;
            }
        }
    }
    let mut lo = 0;
    let mut good: BTreeSet<usize> = BTreeSet::new();
    for search in 1..=SEARCHES {
        narrow(&mut lo, &mut hi, &mut skipped, &mut bad, judge);
        good.insert(lo);
        if search == SEARCHES {
            break;
        }
        // Confirm both sides: a side that says otherwise the second time
        // was noise, and the search goes on from it.
        let regressed = |bad: &[(usize, T)], at: usize| bad.iter().any(|(b, _)| *b == at);
        match judge(hi, Purpose::Confirm) {
            Verdict::Regressed(said) => record(&mut bad, hi, said),
            Verdict::Good(_) => {
                bad.retain(|(b, _)| *b != hi);
                good.insert(hi);
                lo = hi;
                match bad.iter().map(|(b, _)| *b).filter(|&b| b > lo).min() {
                    Some(next) => hi = next,
                    None => return none(lo),
                }
                continue;
            }
            Verdict::Skipped(_) => {}
        }
        if lo == 0 || !regressed(&bad, hi) {
            break;
        }
        match judge(lo, Purpose::Confirm) {
            Verdict::Regressed(said) => {
                record(&mut bad, lo, said);
                good.remove(&lo);
                hi = lo;
                lo = good.range(..hi).next_back().copied().unwrap_or(0);
            }
            Verdict::Good(_) | Verdict::Skipped(_) => break,
        }
    }
    let said = bad
        .iter()
        .find(|(b, _)| *b == hi)
        .map(|(_, said)| said.clone());
    Found {
        first_regressed: said.map(|said| (hi, said)),
        last_good: lo,
        skipped_between: skipped.range(lo + 1..hi).copied().collect(),
    }
}

/// Narrows `lo..hi` (good, regressed) to neighbours, or to commits whose
/// every one between was skipped.
fn narrow<T>(
    lo: &mut usize,
    hi: &mut usize,
    skipped: &mut BTreeSet<usize>,
    bad: &mut Vec<(usize, T)>,
    judge: &mut dyn FnMut(usize, Purpose) -> Verdict<T>,
) {
    loop {
        let middle = (*lo + *hi) / 2;
        let next = (*lo + 1..*hi)
            .filter(|at| !skipped.contains(at))
            .min_by_key(|&at| (at.abs_diff(middle), at));
        let Some(at) = next else { return };
        match judge(at, Purpose::Search) {
            Verdict::Good(_) => *lo = at,
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

    /// A history whose commits from `first_bad` on are regressed and
    /// those in `broken` do not build; the commits judged, in order.
    fn run(last: usize, first_bad: usize, broken: &[usize]) -> (Found<()>, Vec<(usize, Purpose)>) {
        let mut judged = Vec::new();
        let found = bisect(last, &mut |at, purpose| {
            judged.push((at, purpose));
            if broken.contains(&at) {
                Verdict::Skipped("does not build".into())
            } else if at >= first_bad {
                Verdict::Regressed(())
            } else {
                Verdict::Good(())
            }
        });
        (found, judged)
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
        let found = bisect(15, &mut |at, _| {
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
}
