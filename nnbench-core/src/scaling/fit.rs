//! A power `y = c · x^k` fitted on log-log axes: the exponent `k` by least
//! squares over each size's lower quartile (a shared machine only ever
//! slows a sample, so the fast end of each size's samples is the steadiest
//! estimate of its cost, as comparisons judge time), its 95% interval from
//! the spread of each size's samples (a bootstrap) and of the quartiles
//! about the line,
//! and a check that one power fits all the sizes: two lines, split where
//! they fit best, that differ by much and fit far better than one are a
//! bend (a cache that stopped hitting, an algorithm that changed).

use statrs::distribution::{ContinuousCDF as _, StudentsT};

/// The observations at one size: its samples (one for a figure measured
/// once), all positive.
pub(crate) struct Size {
    pub x: f64,
    pub samples: Vec<f64>,
}

/// What the fit found.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Power {
    pub exponent: f64,
    pub interval: [f64; 2],
    pub constant: f64,
    /// Where it bends, and the exponents below and above.
    pub bend: Option<Bend>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bend {
    /// The first size above the bend.
    pub at: f64,
    pub below: f64,
    pub above: f64,
}

/// Bootstrap resamples: enough for the standard error of a slope.
const RESAMPLES: usize = 400;

/// The power through `sizes` (at least three, each with a sample, every
/// size and sample positive), sorted by size; `None` otherwise. `seed`
/// makes the bootstrap repeatable.
pub(crate) fn fit(sizes: &[Size], seed: u64) -> Option<Power> {
    if sizes.len() < 3
        || sizes
            .iter()
            .any(|s| s.x <= 0.0 || s.samples.is_empty() || s.samples.iter().any(|&v| v <= 0.0))
    {
        return None;
    }
    let xs: Vec<f64> = sizes.iter().map(|s| s.x.ln()).collect();
    let ys: Vec<f64> = sizes.iter().map(|s| quartile(&s.samples).ln()).collect();
    let line = Line::through(&xs, &ys)?;
    // The quartiles' spread about the line: what the sizes say of the slope.
    let dof = sizes.len() - 2;
    let residual = if dof > 0 {
        (line.sse / dof as f64).sqrt() / line.sxx.sqrt()
    } else {
        0.0
    };
    // The samples' spread: what the slope would be on other samples.
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut slopes = Vec::with_capacity(RESAMPLES);
    if sizes.iter().any(|s| s.samples.len() > 1) {
        for _ in 0..RESAMPLES {
            let ys: Vec<f64> = sizes
                .iter()
                .map(|s| {
                    let drawn: Vec<f64> = (0..s.samples.len())
                        .map(|_| s.samples[rng.usize(..s.samples.len())])
                        .collect();
                    quartile(&drawn).ln()
                })
                .collect();
            if let Some(l) = Line::through(&xs, &ys) {
                slopes.push(l.slope);
            }
        }
    }
    let sampled = deviation(&slopes);
    let error = (residual * residual + sampled * sampled).sqrt();
    let t = StudentsT::new(0.0, 1.0, dof.max(1) as f64)
        .map(|d| d.inverse_cdf(0.975))
        .unwrap_or(1.96);
    Some(Power {
        exponent: line.slope,
        interval: [line.slope - t * error, line.slope + t * error],
        constant: line.intercept.exp(),
        bend: bend(&xs, &ys, &line, sizes),
    })
}

/// Two lines that meet at a size (a hinge), at the interior size where
/// they fit best: a bend when they fit the quartiles four times better than
/// one line and their slopes differ by more than 0.3.
fn bend(xs: &[f64], ys: &[f64], line: &Line, sizes: &[Size]) -> Option<Bend> {
    if xs.len() < 4 {
        return None;
    }
    let (knee, hinge) = (1..xs.len() - 1)
        .filter_map(|knee| Some((knee, Hinge::at(xs, ys, xs[knee])?)))
        .min_by(|a, b| a.1.sse.total_cmp(&b.1.sse))?;
    let better = hinge.sse < line.sse / 4.0;
    (better && (hinge.above - hinge.below).abs() > 0.3).then(|| Bend {
        at: sizes[knee].x,
        below: hinge.below,
        above: hinge.above,
    })
}

/// `y = a + b x + c max(0, x - knee)`, fitted by least squares.
struct Hinge {
    below: f64,
    above: f64,
    sse: f64,
}

impl Hinge {
    fn at(xs: &[f64], ys: &[f64], knee: f64) -> Option<Hinge> {
        let rows: Vec<[f64; 3]> = xs.iter().map(|&x| [1.0, x, (x - knee).max(0.0)]).collect();
        // The normal equations, solved by Cramer's rule.
        let mut m = [[0.0; 3]; 3];
        let mut v = [0.0; 3];
        for (row, y) in rows.iter().zip(ys) {
            for i in 0..3 {
                v[i] += row[i] * y;
                for j in 0..3 {
                    m[i][j] += row[i] * row[j];
                }
            }
        }
        let det = |m: &[[f64; 3]; 3]| {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        };
        let whole = det(&m);
        if whole.abs() < 1e-12 {
            return None;
        }
        let solved: Vec<f64> = (0..3)
            .map(|k| {
                let mut replaced = m;
                for (i, row) in replaced.iter_mut().enumerate() {
                    row[k] = v[i];
                }
                det(&replaced) / whole
            })
            .collect();
        let sse = rows
            .iter()
            .zip(ys)
            .map(|(row, y)| (y - (0..3).map(|i| row[i] * solved[i]).sum::<f64>()).powi(2))
            .sum();
        Some(Hinge {
            below: solved[1],
            above: solved[1] + solved[2],
            sse,
        })
    }
}

/// A least-squares line.
struct Line {
    slope: f64,
    intercept: f64,
    /// The squared residuals, summed.
    sse: f64,
    /// The spread of the x's: Σ (x - x̄)².
    sxx: f64,
}

impl Line {
    fn through(xs: &[f64], ys: &[f64]) -> Option<Line> {
        let n = xs.len() as f64;
        let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        if sxx <= 0.0 {
            return None;
        }
        let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let slope = sxy / sxx;
        let intercept = my - slope * mx;
        let sse = xs
            .iter()
            .zip(ys)
            .map(|(x, y)| (y - intercept - slope * x).powi(2))
            .sum();
        Some(Line {
            slope,
            intercept,
            sse,
            sxx,
        })
    }
}

/// The lower quartile, interpolated between the samples around it.
fn quartile(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = 0.25 * (sorted.len() - 1) as f64;
    let (below, share) = (at.floor() as usize, at.fract());
    let above = (below + 1).min(sorted.len() - 1);
    sorted[below] * (1.0 - share) + sorted[above] * share
}

fn deviation(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sizes `xs`, each with `samples` noisy observations of `cost(x)`
    /// (a few percent of spread, as a shared machine gives).
    fn observed(xs: &[f64], samples: usize, cost: impl Fn(f64) -> f64) -> Vec<Size> {
        let mut rng = fastrand::Rng::with_seed(7);
        xs.iter()
            .map(|&x| Size {
                x,
                samples: (0..samples)
                    .map(|_| cost(x) * (1.0 + 0.04 * (rng.f64() - 0.5)))
                    .collect(),
            })
            .collect()
    }

    const SIZES: [f64; 6] = [1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0];

    #[test]
    fn powers_are_found_with_intervals_that_hold_them() {
        for (k, cost) in [
            (1.0, (|x: f64| 3.0 * x) as fn(f64) -> f64),
            (2.0, |x| 0.5 * x * x),
            (0.5, |x| 10.0 * x.sqrt()),
        ] {
            let power = fit(&observed(&SIZES, 30, cost), 1).unwrap();
            assert!((power.exponent - k).abs() < 0.01, "{power:?}");
            assert!(power.interval[0] < k && k < power.interval[1], "{power:?}");
            assert!(power.interval[1] - power.interval[0] < 0.05, "{power:?}");
            assert!(power.bend.is_none(), "{power:?}");
        }
        let linear = fit(&observed(&SIZES, 30, |x| 3.0 * x), 1).unwrap();
        assert!((linear.constant - 3.0).abs() < 0.1, "{linear:?}");
    }

    #[test]
    fn n_log_n_is_a_little_over_one_and_one_measurement_a_size_is_enough() {
        let power = fit(&observed(&SIZES, 1, |x| x * x.ln()), 1).unwrap();
        // log(x ln x) against log x over these sizes: 1 + 1/ln(x) on average.
        assert!((power.exponent - 1.12).abs() < 0.02, "{power:?}");
        assert!(power.interval[0] < power.exponent && power.exponent < power.interval[1]);
    }

    #[test]
    fn a_cache_cliff_is_a_bend_named_where_it_is() {
        let cliff = |x: f64| if x < 8192.0 { x } else { x * x / 8192.0 };
        let power = fit(&observed(&SIZES, 10, cliff), 1).unwrap();
        let bend = power.bend.expect("a bend");
        assert_eq!(bend.at, 8192.0);
        assert!(
            (bend.below - 1.0).abs() < 0.05 && (bend.above - 2.0).abs() < 0.05,
            "{bend:?}"
        );
    }

    #[test]
    fn too_few_sizes_or_a_figure_that_is_not_positive_has_no_fit() {
        assert!(fit(&observed(&SIZES[..2], 5, |x| x), 1).is_none());
        assert!(fit(&observed(&SIZES, 5, |x| x - 2048.0), 1).is_none());
    }
}
