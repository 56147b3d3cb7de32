//! The figures of a case that regression tracking follows, and their units.

use std::fmt;

/// What a figure counts, which decides how its amounts are read and written.
///
/// # Example
///
/// ```
/// use nnbench_vocab::{Figure, Unit};
/// assert_eq!(Figure::Rss.unit(), Unit::Bytes);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Unit {
    /// Nanoseconds: `2ms`, `150us`, or a number of nanoseconds.
    Time,
    /// Bytes: `4MiB`, `512KiB`, or a number of bytes.
    Bytes,
    /// The figure's own unit: a plain number.
    Number,
    /// A count of events: `1500000`, or with a suffix, `1.5M`, `20k`, `2G`.
    Count,
}

/// A figure of a case that comparisons, limits and the history name.
///
/// # Example
///
/// ```
/// use nnbench_vocab::Figure;
/// assert_eq!("rss".parse::<Figure>().unwrap(), Figure::Rss);
/// assert_eq!(Figure::Time.to_string(), "time");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum Figure {
    /// Time per call of the function (the median; samples tested).
    Time,
    /// Time resolving the case's memos (`load_ns`).
    Load,
    /// Peak resident memory growth.
    Rss,
    /// Peak heap growth (with the tracking allocator).
    Heap,
    /// Peak GPU memory.
    Gpu,
    /// The whole case's peak resident memory: memos loaded and hooks
    /// included, beside [`Figure::Rss`], the function's own growth.
    Peak,
    /// The bytes of the case's memos (host and GPU) once resolved: a
    /// fixture that grew.
    Memo,
    /// The function's returned value, judged by the family's `metric` direction.
    Value,
    /// Instructions one call executed, counted by Callgrind.
    Instructions,
    /// Items or bytes per second, for a family that declares a
    /// `throughput` (more is better).
    Throughput,
    /// The 99th percentile of the time per call, for calls timed one by
    /// one.
    P99,
    /// Requests per second under load, for a family with `concurrency`
    /// (more is better).
    Requests,
    /// The highest rate of requests whose latency meets a family's
    /// `latency_target`, found by search (more is better).
    MaxRate,
    /// The share of the machine's roof a case reached, for a family that
    /// declares its work (`flops`, `bytes`): judged across machines, where
    /// time is not (more is better).
    RoofFraction,
    /// Time to first token, its 99th percentile, for a family with
    /// `stream`.
    Ttft,
    /// Time per output token, its 99th percentile, for a family with
    /// `stream`.
    Tpot,
    /// The gap between two tokens, its 99th percentile, for a family with
    /// `stream`.
    Itl,
    /// A streamed request from when it was due to its last token, its
    /// 99th percentile, for a family with `stream`.
    E2e,
    /// The highest rate of requests whose goodput (the share that meets
    /// every per-request objective of the family's `slo`) stays at least
    /// the family's `goodput`, found by search (more is better).
    MaxGoodputRate,
    /// How a family's figure grows with its `scaling` parameter: the
    /// exponent of the power fitted (`time ∝ n^1.02`); a family's, not a
    /// case's, so not among [`Figure::ALL`]. Its limit is a change of the
    /// exponent (`scaling=0.1`).
    Scaling,
    /// The largest value of a family's `scaling` parameter whose resident
    /// peak fits in the run's memory limit (more is better); a family's,
    /// not a case's, so not among [`Figure::ALL`].
    Capacity,
}

impl Figure {
    /// Every figure, in the order reports list them.
    pub const ALL: [Figure; 19] = [
        Figure::Time,
        Figure::Load,
        Figure::Rss,
        Figure::Heap,
        Figure::Gpu,
        Figure::Peak,
        Figure::Memo,
        Figure::Value,
        Figure::Instructions,
        Figure::Throughput,
        Figure::P99,
        Figure::Requests,
        Figure::MaxRate,
        Figure::RoofFraction,
        Figure::Ttft,
        Figure::Tpot,
        Figure::Itl,
        Figure::E2e,
        Figure::MaxGoodputRate,
    ];

    /// Its name in limits (`time=10%`), records and reports.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench_vocab::Figure::Gpu.name(), "gpu");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Figure::Time => "time",
            Figure::Load => "load",
            Figure::Rss => "rss",
            Figure::Heap => "heap",
            Figure::Gpu => "gpu",
            Figure::Peak => "peak",
            Figure::Memo => "memo",
            Figure::Value => "value",
            Figure::Instructions => "instructions",
            Figure::Throughput => "throughput",
            Figure::P99 => "p99",
            Figure::Requests => "requests",
            Figure::MaxRate => "max_rate",
            Figure::RoofFraction => "roof_fraction",
            Figure::Ttft => "ttft",
            Figure::Tpot => "tpot",
            Figure::Itl => "itl",
            Figure::E2e => "e2e",
            Figure::MaxGoodputRate => "max_goodput_rate",
            Figure::Scaling => "scaling",
            Figure::Capacity => "capacity",
        }
    }

    /// What it counts.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench_vocab::{Figure, Unit};
    /// assert_eq!(Figure::Load.unit(), Unit::Time);
    /// ```
    pub fn unit(self) -> Unit {
        match self {
            Figure::Time
            | Figure::Load
            | Figure::P99
            | Figure::Ttft
            | Figure::Tpot
            | Figure::Itl
            | Figure::E2e => Unit::Time,
            Figure::Rss | Figure::Heap | Figure::Gpu | Figure::Peak | Figure::Memo => Unit::Bytes,
            Figure::Value
            | Figure::Throughput
            | Figure::Requests
            | Figure::MaxRate
            | Figure::MaxGoodputRate
            | Figure::RoofFraction
            | Figure::Scaling
            | Figure::Capacity => Unit::Number,
            Figure::Instructions => Unit::Count,
        }
    }

    /// Whether more of it is better: a rate. A value's direction is its
    /// family's, not the figure's.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench_vocab::Figure;
    /// assert!(Figure::Requests.higher_is_better());
    /// assert!(!Figure::Time.higher_is_better());
    /// ```
    pub fn higher_is_better(self) -> bool {
        matches!(
            self,
            Figure::Throughput
                | Figure::Requests
                | Figure::MaxRate
                | Figure::MaxGoodputRate
                | Figure::RoofFraction
                | Figure::Capacity
        )
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is no figure's.
///
/// # Example
///
/// ```
/// let err = "speed".parse::<nnbench_vocab::Figure>().unwrap_err();
/// assert!(err.to_string().contains("time, load, rss, heap, gpu, peak, memo, value, instructions, throughput, p99, requests, max_rate, roof_fraction, ttft, tpot, itl, e2e, max_goodput_rate, scaling and capacity"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFigure(pub String);

impl fmt::Display for UnknownFigure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown figure `{}`: the figures are time, load, rss, heap, gpu, peak, memo, value, instructions, throughput, p99, requests, max_rate, roof_fraction, ttft, tpot, itl, e2e, max_goodput_rate, scaling and capacity",
            self.0
        )
    }
}

impl std::error::Error for UnknownFigure {}

impl std::str::FromStr for Figure {
    type Err = UnknownFigure;
    fn from_str(text: &str) -> Result<Self, UnknownFigure> {
        Figure::ALL
            .into_iter()
            .chain([Figure::Scaling, Figure::Capacity])
            .find(|f| f.name() == text)
            .ok_or_else(|| UnknownFigure(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_reads_back_from_its_name() {
        for figure in Figure::ALL
            .into_iter()
            .chain([Figure::Scaling, Figure::Capacity])
        {
            assert_eq!(figure.name().parse::<Figure>(), Ok(figure));
        }
        assert_eq!(
            UnknownFigure("speed".into())
                .to_string()
                .matches(", ")
                .count(),
            Figure::ALL.len(),
            "every figure is named"
        );
    }
}
