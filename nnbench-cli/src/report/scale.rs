//! From figures to a drawing's coordinates, and the round values an axis
//! marks.

/// A linear or logarithmic map from `low..high` to `from..to`.
pub(super) struct Scale {
    low: f64,
    high: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    pub(super) fn linear(low: f64, high: f64, from: f64, to: f64) -> Self {
        Self {
            low,
            high,
            from,
            to,
            log: false,
        }
    }

    pub(super) fn log(low: f64, high: f64, from: f64, to: f64) -> Self {
        Self {
            low: low.log2(),
            high: high.log2(),
            from,
            to,
            log: true,
        }
    }

    /// A scale for a parameter or a figure across `low..=high`: logarithmic
    /// when they span more than a factor of 20 and are all positive (a
    /// sweep of sizes in powers of two), and widened when they are one.
    pub(super) fn spanning(low: f64, high: f64, from: f64, to: f64) -> Self {
        if low > 0.0 && high / low > 20.0 {
            Self::log(low, high, from, to)
        } else if low == high {
            Self::linear(low - 1.0, high + 1.0, from, to)
        } else {
            Self::linear(low, high, from, to)
        }
    }

    /// [`Scale::spanning`] with a margin either side, so that the points
    /// at the ends are drawn whole: a scatter's x axis.
    pub(super) fn spanning_with_margin(low: f64, high: f64, from: f64, to: f64) -> Self {
        if low > 0.0 && high / low > 20.0 {
            return Self::log(low / 1.15, high * 1.15, from, to);
        }
        let margin = 0.05 * (high - low);
        let below = if low >= 0.0 {
            (low - margin).max(0.0)
        } else {
            low - margin
        };
        Self::spanning(below, high + margin, from, to)
    }

    /// The range of `values`, padded, from 0 when they are nearer 0 than
    /// their spread: the y axis of a chart.
    pub(super) fn padded(values: impl Iterator<Item = f64>, from: f64, to: f64) -> Self {
        let (low, high) = bounds(values);
        // Figures all zero get an axis of round numbers, not of fractions
        // of a byte.
        if low == 0.0 && high == 0.0 {
            return Self::linear(0.0, 1.0, from, to);
        }
        let spread = (high - low).max(high.abs() * 0.02).max(1e-12);
        let low = if low >= 0.0 && low < spread {
            0.0
        } else {
            low - 0.08 * spread
        };
        let high = high + 0.08 * spread;
        Self::linear(low, high, from, to)
    }

    pub(super) fn place(&self, value: f64) -> f64 {
        let value = if self.log {
            value.max(f64::MIN_POSITIVE).log2()
        } else {
            value
        };
        let span = self.high - self.low;
        let share = if span == 0.0 {
            0.5
        } else {
            (value - self.low) / span
        };
        self.from + share * (self.to - self.from)
    }

    /// Round values across the range: 1, 2 or 5 times a power of ten
    /// apart (powers of two on a log scale).
    pub(super) fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (first, last) = (self.low.ceil() as i32, self.high.floor() as i32);
            let every = ((last - first) / 6).max(1);
            return (first..=last)
                .step_by(every as usize)
                .map(|p| 2f64.powi(p))
                .collect();
        }
        let span = self.high - self.low;
        if span.is_nan() || span <= 0.0 {
            return vec![self.low];
        }
        let rough = span / 5.0;
        let power = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|m| m * power)
            .find(|s| span / s <= 6.0)
            .unwrap_or(10.0 * power);
        let mut tick = (self.low / step).ceil() * step;
        let mut ticks = Vec::new();
        while tick <= self.high + step * 1e-9 && ticks.len() < 12 {
            ticks.push(if tick.abs() < step * 1e-9 { 0.0 } else { tick });
            tick += step;
        }
        ticks
    }
}

/// The least and the greatest of `values`.
pub(super) fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    })
}

#[cfg(test)]
mod tests {
    use super::Scale;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let scale = Scale::linear(0.0, 1234.0, 0.0, 1.0);
        assert_eq!(scale.ticks(), [0.0, 500.0, 1000.0]);
        let scale = Scale::linear(0.899, 0.931, 0.0, 1.0);
        assert_eq!(scale.ticks().len(), 4, "{:?}", scale.ticks());
        let log = Scale::log(1.0, 1024.0, 0.0, 1.0);
        assert_eq!(
            log.ticks(),
            [
                1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0
            ]
        );
    }

    #[test]
    fn figures_all_zero_get_round_ticks() {
        let zero = Scale::padded([0.0, 0.0].into_iter(), 100.0, 0.0);
        let ticks = zero.ticks();
        assert_eq!((ticks[0], ticks[ticks.len() - 1]), (0.0, 1.0), "{ticks:?}");
    }

    #[test]
    fn wide_positive_spans_are_logarithmic() {
        let wide = Scale::spanning(1.0, 1024.0, 0.0, 10.0);
        assert!((wide.place(32.0) - 5.0).abs() < 1e-9);
        let narrow = Scale::spanning(10.0, 20.0, 0.0, 10.0);
        assert!((narrow.place(15.0) - 5.0).abs() < 1e-9);
        let one = Scale::spanning(3.0, 3.0, 0.0, 10.0);
        assert!((one.place(3.0) - 5.0).abs() < 1e-9);
    }
}
