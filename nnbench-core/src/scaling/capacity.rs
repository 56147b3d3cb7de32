//! The largest size that fits: a family's peak memory against its
//! `scaling` parameter, fitted as a fixed part and a part that grows as a
//! power, `peak ≈ fixed + per · n^k`, and solved for the `n` whose peak
//! reaches a limit.
//!
//! The scaling fit's power alone cannot answer this: a process holds its
//! code, its runtime and its model at every size, so its peak is nowhere
//! near a power of `n` until `n` is large, and a power fitted on log-log
//! axes through it would bend the extrapolation. The fixed part is fitted
//! with the growth instead, by least squares on relative errors (a peak of
//! a few MiB and one of a few GiB count alike), at the exponent that fits
//! best; the interval of the size that fits comes from refitting the
//! points with their residuals drawn again (a residual bootstrap).

use crate::measure::memory_limit::Bound;

/// The memory a capacity is predicted under, and where it was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    /// What the cases may have: the limit less [`Limit::others`].
    pub bytes: u64,
    pub from: LimitFrom,
    /// What the rest of the limiting cgroup held beside the cases (the
    /// supervisor of isolated workers, the shell or the CI agent that
    /// started the run): the cases compete with it for the cgroup's limit.
    pub others: u64,
}

impl Limit {
    /// `--capacity-limit` where it is given, else the memory this process
    /// may have (its cgroup's limit, less what the rest of the cgroup
    /// holds, else the machine's). `cases_here`: whether the cases ran in
    /// this process, whose own memory their fit holds already.
    pub(crate) fn of_run(given: Option<u64>, cases_here: bool) -> Option<Self> {
        if let Some(bytes) = given {
            return Some(Self {
                bytes,
                from: LimitFrom::Flag,
                others: 0,
            });
        }
        let room = crate::measure::memory_limit::room()?;
        let own = if cases_here {
            crate::measure::memory_limit::own_anonymous().unwrap_or(0)
        } else {
            0
        };
        let others = room.charged.saturating_sub(own);
        Some(Self {
            bytes: room.limit.saturating_sub(others),
            from: match room.bound {
                Bound::Cgroup => LimitFrom::Cgroup,
                Bound::Machine => LimitFrom::Machine,
            },
            others,
        })
    }

    /// The limit `record` was predicted under.
    pub(crate) fn of(record: &crate::record::CapacityRecord) -> Option<Self> {
        Some(Self {
            bytes: record.limit_bytes,
            from: LimitFrom::named(&record.limit_from)?,
            others: record.others_bytes.unwrap_or(0),
        })
    }

    /// The memory of the smallest GPU `gpu` lists: a case on any one of
    /// them fits there.
    pub(crate) fn of_devices(gpu: &crate::record::GpuContext) -> Option<Self> {
        let bytes = gpu.devices.iter().filter_map(|d| d.memory_bytes).min()?;
        Some(Self {
            bytes,
            from: LimitFrom::Device,
            others: 0,
        })
    }
}

/// The limits a run's capacities are predicted under, by the memory
/// fitted: resident memory (`rss`) and the GPU's (`gpu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Limits {
    pub rss: Option<Limit>,
    pub gpu: Option<Limit>,
}

impl Limits {
    /// A run's: [`Limit::of_run`] for resident memory, the devices' for
    /// the GPU's.
    pub(crate) fn of_run(
        given: Option<u64>,
        cases_here: bool,
        gpu: &crate::record::GpuContext,
    ) -> Self {
        Self {
            rss: Limit::of_run(given, cases_here),
            gpu: Limit::of_devices(gpu),
        }
    }

    /// The limits `record`'s capacities were predicted under.
    pub(crate) fn of(record: &crate::RunRecord) -> Self {
        let of_figure = |figure: &str| {
            record
                .capacity
                .iter()
                .filter(|c| c.figure == figure)
                .find_map(Limit::of)
        };
        Self {
            rss: of_figure("rss"),
            gpu: of_figure("gpu"),
        }
    }

    /// Each of these limits, else `other`'s.
    pub(crate) fn or(self, other: Self) -> Self {
        Self {
            rss: self.rss.or(other.rss),
            gpu: self.gpu.or(other.gpu),
        }
    }
}

/// Where a limit was taken from, as the record names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LimitFrom {
    /// The run's memory cgroup.
    Cgroup,
    /// The machine's memory.
    Machine,
    /// `--capacity-limit`.
    Flag,
    /// The GPU's memory.
    Device,
}

impl LimitFrom {
    const NAMES: [(LimitFrom, &'static str); 4] = [
        (LimitFrom::Cgroup, "cgroup"),
        (LimitFrom::Machine, "machine"),
        (LimitFrom::Flag, "flag"),
        (LimitFrom::Device, "device"),
    ];

    pub(crate) fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(from, _)| *from == self)
            .map_or("machine", |(_, name)| name)
    }

    fn named(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(from, _)| *from)
    }
}

/// One size's peak.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point {
    pub x: f64,
    pub bytes: f64,
}

/// `bytes ≈ fixed + per · x^exponent`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Affine {
    pub fixed: f64,
    pub per: f64,
    pub exponent: f64,
}

impl Affine {
    /// The peak the fit predicts at `x`.
    pub(crate) fn at(&self, x: f64) -> f64 {
        self.fixed + self.per * x.powf(self.exponent)
    }

    /// The size whose predicted peak is `limit`: the largest that fits.
    /// 0 where the fixed part alone reaches it.
    pub(crate) fn largest_under(&self, limit: f64) -> f64 {
        if limit <= self.fixed {
            0.0
        } else {
            ((limit - self.fixed) / self.per).powf(1.0 / self.exponent)
        }
    }
}

/// What the fit says of one limit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Capacity {
    pub fit: Affine,
    /// The largest size that fits under the limit.
    pub n: f64,
    /// Its 95% interval.
    pub interval: [f64; 2],
}

/// The exponents searched: from a growth slower than a square root to
/// one faster than a fourth power.
const EXPONENTS: (f64, f64) = (0.25, 4.0);

/// The grid the exponent is first searched on, before it is refined.
const STEP: f64 = 0.01;

/// Resamples of the residual bootstrap.
const RESAMPLES: usize = 400;

/// The fewest sizes a capacity is fitted from: three parameters, and one
/// size more to say how well they fit.
pub(crate) const MIN_POINTS: usize = 4;

/// The least the fitted peak must grow over the sizes run for a capacity
/// to be said: a family whose call holds nothing that grows still moves
/// the process's peak by tens of KiB from case to case, and a growth
/// fitted through that would put its capacity anywhere.
pub(crate) const MIN_GROWTH_BYTES: f64 = 1024.0 * 1024.0;

/// The capacity under `limit` bytes from `points` (at least
/// [`MIN_POINTS`] sizes, each size and peak positive and finite); `None`
/// otherwise, or where no growth fits them (a peak that falls as `n`
/// grows) or the fitted growth over the sizes is under
/// [`MIN_GROWTH_BYTES`]. `seed` makes the bootstrap repeatable.
pub(crate) fn capacity(points: &[Point], limit: f64, seed: u64) -> Option<Capacity> {
    let usable = |p: &Point| p.x.is_finite() && p.x > 0.0 && p.bytes.is_finite() && p.bytes > 0.0;
    if points.len() < MIN_POINTS || !points.iter().all(usable) || limit.is_nan() || limit <= 0.0 {
        return None;
    }
    let fit = fit(points)?;
    let (smallest, largest) = points.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
        (lo.min(p.x), hi.max(p.x))
    });
    if fit.at(largest) - fit.at(smallest) < MIN_GROWTH_BYTES {
        return None;
    }
    let n = fit.largest_under(limit);
    // The points' relative residuals, widened for the three parameters the
    // fit took from them, drawn again for each resample.
    let dof = (points.len() - 3) as f64;
    let widen = (points.len() as f64 / dof).sqrt();
    let residuals: Vec<f64> = points
        .iter()
        .map(|p| (p.bytes / fit.at(p.x) - 1.0) * widen)
        .collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut sizes: Vec<f64> = (0..RESAMPLES)
        .filter_map(|_| {
            let drawn: Vec<Point> = points
                .iter()
                .map(|p| Point {
                    x: p.x,
                    bytes: fit.at(p.x) * (1.0 + residuals[rng.usize(..residuals.len())]),
                })
                .collect();
            if drawn.iter().any(|p| p.bytes <= 0.0) {
                return None;
            }
            Some(self::fit(&drawn)?.largest_under(limit))
        })
        .collect();
    sizes.sort_by(f64::total_cmp);
    let interval = if sizes.len() < RESAMPLES / 2 {
        // Most resamples fit no growth: the points say too little.
        [0.0, f64::INFINITY]
    } else {
        // Held to hold the estimate: peaks the fit passes through exactly
        // resample to the same fit, whose size can round a hair apart.
        [
            percentile(&sizes, 0.025).min(n),
            percentile(&sizes, 0.975).max(n),
        ]
    };
    Some(Capacity { fit, n, interval })
}

/// The fixed part and growth through `points`, at the exponent whose fit
/// leaves the least squared relative error: searched on a grid, then
/// refined between its neighbours.
pub(crate) fn fit(points: &[Point]) -> Option<Affine> {
    let steps = ((EXPONENTS.1 - EXPONENTS.0) / STEP).round() as usize;
    let (mut best, mut best_error) = (None, f64::INFINITY);
    for step in 0..=steps {
        let exponent = EXPONENTS.0 + step as f64 * STEP;
        if let Some((fit, error)) = at_exponent(points, exponent)
            && error < best_error
        {
            (best, best_error) = (Some(fit), error);
        }
    }
    let coarse: Affine = best?;
    // Golden-section search on the bracket around the grid's best.
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut low, mut high) = (
        (coarse.exponent - STEP).max(EXPONENTS.0),
        (coarse.exponent + STEP).min(EXPONENTS.1),
    );
    let error = |k: f64| at_exponent(points, k).map_or(f64::INFINITY, |(_, e)| e);
    for _ in 0..40 {
        let a = high - ratio * (high - low);
        let b = low + ratio * (high - low);
        if error(a) < error(b) {
            high = b;
        } else {
            low = a;
        }
    }
    match at_exponent(points, (low + high) / 2.0) {
        Some((fine, error)) if error <= best_error => Some(fine),
        _ => Some(coarse),
    }
}

/// The least-squares fixed part and growth at `exponent`, on relative
/// errors, with the fixed part held at 0 or more; `None` where no growth
/// fits (its coefficient would be 0 or less). With the squared error.
fn at_exponent(points: &[Point], exponent: f64) -> Option<(Affine, f64)> {
    // Divided by each peak, the model is `1 ≈ fixed·u + per·z`.
    let (mut uu, mut uz, mut zz, mut u1, mut z1) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in points {
        let u = 1.0 / p.bytes;
        let z = p.x.powf(exponent) / p.bytes;
        uu += u * u;
        uz += u * z;
        zz += z * z;
        u1 += u;
        z1 += z;
    }
    let det = uu * zz - uz * uz;
    let (mut fixed, mut per) = if det.abs() > f64::EPSILON * uu * zz {
        ((u1 * zz - z1 * uz) / det, (uu * z1 - uz * u1) / det)
    } else {
        (0.0, z1 / zz)
    };
    if fixed < 0.0 {
        (fixed, per) = (0.0, z1 / zz);
    }
    let fits = per > 0.0 && per.is_finite() && fixed.is_finite();
    if !fits {
        return None;
    }
    let fit = Affine {
        fixed,
        per,
        exponent,
    };
    let error = points
        .iter()
        .map(|p| (1.0 - fit.at(p.x) / p.bytes).powi(2))
        .sum();
    Some((fit, error))
}

/// The `q` quantile of `sorted` (not empty), by linear interpolation.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (low, high) = (at.floor() as usize, at.ceil() as usize);
    sorted[low] + (sorted[high] - sorted[low]) * (at - low as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    /// The peaks of `shape` at sizes 16x apart, each off by up to
    /// `noise` (a fraction), alternately above and below.
    fn points(shape: impl Fn(f64) -> f64, noise: f64) -> Vec<Point> {
        [64.0, 128.0, 256.0, 512.0, 1024.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| Point {
                x,
                bytes: shape(x) * (1.0 + if i % 2 == 0 { noise } else { -noise }),
            })
            .collect()
    }

    #[test]
    fn a_fixed_model_and_linear_activations_fit_to_the_size_that_fills_the_limit() {
        // 300 MiB of weights and runtime, 1 MiB an item.
        let shape = |n: f64| 300.0 * MIB + n * MIB;
        let c = capacity(&points(shape, 0.0), 4096.0 * MIB, 1).expect("a fit");
        assert!((c.fit.exponent - 1.0).abs() < 1e-3, "{c:?}");
        assert!((c.fit.fixed / MIB - 300.0).abs() < 1.0, "{c:?}");
        assert!((c.n - 3796.0).abs() < 5.0, "{c:?}");
    }

    #[test]
    fn peaks_on_the_fit_itself_give_an_interval_that_holds_the_estimate() {
        // As a test process read them: 10.35 MiB held, 1 MiB an item.
        let on_fit: Vec<Point> = [16.0, 32.0, 64.0, 128.0, 256.0]
            .iter()
            .map(|&x| Point {
                x,
                bytes: 10_854_400.0 + x * MIB,
            })
            .collect();
        for seed in 0..20 {
            let c = capacity(&on_fit, 1024.0 * MIB, seed).expect("a fit");
            assert!(
                c.interval[0] <= c.n && c.n <= c.interval[1],
                "seed {seed}: {c:?}"
            );
        }
    }

    #[test]
    fn a_quadratic_growth_is_fitted_as_one() {
        let shape = |n: f64| 40.0 * MIB + 64.0 * n * n;
        let c = capacity(&points(shape, 0.0), 1024.0 * MIB, 2).expect("a fit");
        assert!((c.fit.exponent - 2.0).abs() < 1e-3, "{c:?}");
        let real = ((1024.0 - 40.0) * MIB / 64.0).sqrt();
        assert!((c.n / real - 1.0).abs() < 0.01, "{} against {real}", c.n);
    }

    #[test]
    fn noisy_peaks_give_an_interval_that_holds_the_real_size() {
        let shape = |n: f64| 100.0 * MIB + 2.0 * n * MIB;
        let c = capacity(&points(shape, 0.02), 2048.0 * MIB, 3).expect("a fit");
        let real = (2048.0 - 100.0) / 2.0;
        assert!(c.interval[0] < c.n && c.n < c.interval[1], "{c:?}");
        assert!(c.interval[0] <= real && real <= c.interval[1], "{c:?}");
        assert!(c.interval[1] / c.interval[0] < 1.5, "{c:?}");
    }

    #[test]
    fn a_limit_the_fixed_part_reaches_fits_nothing() {
        let shape = |n: f64| 500.0 * MIB + n * MIB;
        let c = capacity(&points(shape, 0.0), 256.0 * MIB, 4).expect("a fit");
        assert_eq!(c.n, 0.0);
    }

    #[test]
    fn a_peak_that_does_not_grow_says_no_capacity() {
        // The process's 12 MiB, moved by a few KiB from case to case.
        let flat = points(|_| 12.0 * MIB, 0.002);
        assert!(capacity(&flat, 1024.0 * MIB, 7).is_none());
    }

    #[test]
    fn too_few_sizes_or_a_peak_that_falls_fit_nothing() {
        let three = &points(|n| n * MIB, 0.0)[..3];
        assert!(capacity(three, 1e12, 5).is_none());
        let falling = points(|n| 1e12 / n, 0.0);
        assert!(capacity(&falling, 1e13, 6).is_none());
    }
}
