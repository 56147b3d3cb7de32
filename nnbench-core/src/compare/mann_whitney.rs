//! The Mann-Whitney U test (Wilcoxon rank-sum): whether one sample of
//! timings tends to be larger than another, without assuming a
//! distribution, as asv judges timings.
//!
//! Without ties and with at most [`EXACT_LIMIT`] values a side, the p-value
//! is exact: the null distribution of U is counted with Harding's
//! generating function (E. F. Harding, "An efficient, minimal-storage
//! procedure for calculating the Mann-Whitney U, generalized Wilcoxon and
//! similar distributions", Applied Statistics 33(1), 1984). Otherwise it is
//! the normal approximation with tie and continuity corrections (Mann and
//! Whitney, Annals of Mathematical Statistics 18(1), 1947).

/// The largest sample on either side whose p-value is computed exactly.
pub(crate) const EXACT_LIMIT: usize = 100;

/// U of the first sample, and the two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct MannWhitney {
    pub u: f64,
    pub p: f64,
}

/// Tests `a` against `b`; `None` when either is empty or holds a NaN.
pub(crate) fn test(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    let (n, m) = (a.len(), b.len());
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Average ranks over runs of equal values; `ties` sums t³ - t.
    let (mut rank_sum_a, mut ties) = (0.0, 0.0);
    let mut start = 0;
    while start < all.len() {
        let end = (start..all.len())
            .find(|&k| all[k].0 != all[start].0)
            .unwrap_or(all.len());
        let rank = (start + 1 + end) as f64 / 2.0;
        let t = (end - start) as f64;
        ties += t * t * t - t;
        rank_sum_a += rank * all[start..end].iter().filter(|(_, in_a)| *in_a).count() as f64;
        start = end;
    }
    let u = rank_sum_a - (n * (n + 1)) as f64 / 2.0;
    let p = if ties == 0.0 && n <= EXACT_LIMIT && m <= EXACT_LIMIT {
        exact_p(u, n, m)
    } else {
        normal_p(u, n, m, ties)
    };
    Some(MannWhitney { u, p: p.min(1.0) })
}

/// Two-sided exact p-value of `u` for samples of `n` and `m` without ties.
fn exact_p(u: f64, n: usize, m: usize) -> f64 {
    let counts = u_distribution(n, m);
    let total: f64 = counts.iter().sum();
    let k = u.round() as usize;
    let below: f64 = counts[..=k.min(n * m)].iter().sum();
    let above: f64 = counts[k.min(n * m)..].iter().sum();
    2.0 * below.min(above) / total
}

/// How many orderings give each U from 0 to n·m: the coefficients of
/// ∏_{i=1..m} (1 - x^(n+i)) / (1 - x^i).
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    let len = n * m + 1;
    let mut poly = vec![0.0; len];
    poly[0] = 1.0;
    for i in 1..=m {
        // Times (1 - x^(n+i)), from the top so each term is read once.
        for k in (n + i..len).rev() {
            poly[k] -= poly[k - n - i];
        }
        // Divided by (1 - x^i): a running sum with stride i.
        for k in i..len {
            poly[k] += poly[k - i];
        }
    }
    poly
}

/// Two-sided p-value from the normal approximation.
fn normal_p(u: f64, n: usize, m: usize, ties: f64) -> f64 {
    let (n, m) = (n as f64, m as f64);
    let total = n + m;
    let mean = n * m / 2.0;
    let variance = n * m / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, to about 1.2e-7 relative error
/// (Chebyshev fit of W. H. Press et al., Numerical Recipes, 2nd ed., §6.2).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scipys_documented_example_gives_its_u_and_exact_p() {
        // scipy.stats.mannwhitneyu docs: ages of males and females,
        // method="exact": statistic 17.0, p-value 0.1111111111111111.
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let females = [20.0, 11.0, 17.0, 12.0];
        let r = test(&males, &females).unwrap();
        assert_eq!(r.u, 17.0);
        assert!((r.p - 0.111_111_111_111_111_1).abs() < 1e-12, "{}", r.p);
    }

    #[test]
    fn the_exact_distribution_counts_every_ordering() {
        // n = m = 2: U in 0..=4 with counts 1, 1, 2, 1, 1 (6 = C(4, 2)).
        assert_eq!(u_distribution(2, 2), [1.0, 1.0, 2.0, 1.0, 1.0]);
        let big = u_distribution(100, 100);
        let total: f64 = big.iter().sum();
        // C(200, 100) = 9.054851465610328e58.
        assert!(
            (total / 9.054_851_465_610_328e58 - 1.0).abs() < 1e-9,
            "{total}"
        );
    }

    #[test]
    fn separated_samples_are_significant_and_identical_ones_are_not() {
        let low: Vec<f64> = (0..10).map(f64::from).collect();
        let high: Vec<f64> = (100..110).map(f64::from).collect();
        let r = test(&low, &high).unwrap();
        // Complete separation: p = 2 / C(20, 10).
        assert_eq!(r.u, 0.0);
        assert!((r.p - 2.0 / 184_756.0).abs() < 1e-15, "{}", r.p);
        assert!(test(&low, &low).unwrap().p > 0.9);
    }

    #[test]
    fn the_normal_approximation_agrees_with_the_exact_test_on_large_samples() {
        let a: Vec<f64> = (0..120).map(|i| f64::from(i) * 1.01).collect();
        let b: Vec<f64> = (0..120).map(|i| f64::from(i) + 7.5).collect();
        let approx = test(&a, &b).unwrap().p;
        let exact = exact_p(test(&a, &b).unwrap().u, 120, 120);
        assert!((approx - exact).abs() < 0.01, "{approx} vs {exact}");
        assert!((erfc(0.0) - 1.0).abs() < 1e-7 && (erfc(1.0) - 0.157_299_207).abs() < 1e-7);
    }

    #[test]
    fn ties_and_bad_input_are_handled() {
        let r = test(&[1.0, 1.0, 2.0], &[1.0, 2.0, 2.0]).unwrap();
        assert!(r.p > 0.3 && r.p <= 1.0, "{r:?}");
        assert_eq!(test(&[], &[1.0]), None);
        assert_eq!(test(&[f64::NAN], &[1.0]), None);
        assert_eq!(test(&[5.0], &[5.0]).unwrap().p, 1.0);
    }
}
