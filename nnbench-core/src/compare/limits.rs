//! How much change each figure may show before it counts, and which
//! figures can fail a comparison.

use nnbench_vocab::{Figure, FigureLimit, Limit as Spec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How far a figure may move before it counts as a change: more than
/// `relative` (a fraction: 0.05 is 5%) *and* more than `absolute` (in the
/// figure's unit: ns, bytes, or the value's own). A figure that is not
/// `gated` is reported but never fails a comparison.
///
/// # Example
///
/// ```
/// use nnbench_core::compare::Limit;
/// let rss = Limit::new(0.02, 4.0 * 1048576.0);
/// assert!(!rss.exceeded(100e6, 103e6), "3% but under 4 MiB");
/// assert!(rss.exceeded(100e6, 110e6));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Limit {
    /// The change allowed, as a fraction of the base figure.
    pub relative: f64,
    /// The change allowed, in the figure's unit.
    pub absolute: f64,
    /// Whether a regression of this figure fails the comparison.
    pub gated: bool,
}

impl Limit {
    /// A gated limit: a change must exceed `relative` (a fraction of
    /// the base figure) and `absolute` (in the figure's unit).
    ///
    /// # Example
    ///
    /// ```
    /// let time = nnbench_core::compare::Limit::new(0.1, 0.0);
    /// assert!(time.gated);
    /// ```
    pub fn new(relative: f64, absolute: f64) -> Self {
        Limit {
            relative,
            absolute,
            gated: true,
        }
    }

    /// Whether going from `base` to `head` moves more than allowed, either way.
    ///
    /// # Example
    ///
    /// ```
    /// let t = nnbench_core::compare::Limit::new(0.1, 0.0);
    /// assert!(t.exceeded(100.0, 89.0) && !t.exceeded(100.0, 109.0));
    /// ```
    pub fn exceeded(&self, base: f64, head: f64) -> bool {
        let change = (head - base).abs();
        change > self.absolute && change > self.relative * base.abs()
    }
}

/// The limits of every figure, and the significance level of the time
/// test.
///
/// The defaults are for shared CI runners:
/// - time must move by more than 10% (asv's default factor) in the lower
///   quartile of the per-call times, the median moving the same way, with p < 0.001 (a bench
///   binary's `--baseline` also measures a slower case twice more, and two
///   of three must agree); a
///   case timed by one call on either side, which cannot be tested, must
///   double (or move by ten times the limit, if that is more) and by
///   more than 1 ms;
/// - memory by more than 5% and more than 16 MiB of RSS (code pages and the
///   allocator's own make a few MiB of noise); the heap's limit 1 MiB,
///   the GPU memory's limit 16 MiB; the whole case's peak RSS (`peak`, memos included) as
///   RSS; the case's memos' bytes (`memo`) by more than 5% and 1 MiB;
/// - a value with a `metric` direction by more than a billionth of itself
///   (a float sum reordered differs in its last bits); a field of a struct
///   metric whose name says it is a time or a rate (`latency_ms`,
///   `images_per_second`, see [`measured_field`]) by more than time's
///   relative limit, since it is a measurement, not a result;
/// - instructions counted by Callgrind by more than 0.5% and more than 100
///   instructions: two runs of one build count the same, give or take the
///   few instructions where collection starts and stops;
/// - throughput (items or bytes per second) as time: by more than 10%,
///   tested on the same samples;
/// - memo load time, the 99th percentile of the time per call and the
///   requests per second under load are reported, not gated (`p99=20%`
///   and `requests=10%` gate the latter two).
///
/// # Example
///
/// ```
/// use nnbench_core::compare::Limits;
/// use nnbench::record::Figure;
/// let t = Limits::default().with_spec("time=5%,rss=2%+4MiB,value=-0.01").unwrap();
/// assert_eq!(t.get(Figure::Time).relative, 0.05);
/// assert_eq!(t.get(Figure::Rss).absolute, 4.0 * 1048576.0);
/// assert_eq!(t.get(Figure::Value).absolute, 0.01);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Limits {
    /// Per figure.
    pub figures: BTreeMap<Figure, Limit>,
    /// Per field of a struct metric (`value.accuracy=0.5%`), by its path;
    /// a field not here has the value's limit.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, Limit>,
    /// The p-value under which a time change is significant.
    pub significance: f64,
    /// The figures whose limit a specification gave, so that a limit
    /// equal to a default still counts as asked for (a paired run's time
    /// limit is not compare's).
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub named: std::collections::BTreeSet<Figure>,
}

const MIB: f64 = 1048576.0;

impl Default for Limits {
    fn default() -> Self {
        let t = |relative, absolute, gated| Limit {
            relative,
            absolute,
            gated,
        };
        Self {
            figures: BTreeMap::from([
                (Figure::Time, t(0.10, 0.0, true)),
                (Figure::Load, t(0.25, 1e6, false)),
                (Figure::Rss, t(0.05, 16.0 * MIB, true)),
                (Figure::Heap, t(0.05, MIB, true)),
                (Figure::Gpu, t(0.05, 16.0 * MIB, true)),
                (Figure::Peak, t(0.05, 16.0 * MIB, true)),
                (Figure::Memo, t(0.05, MIB, true)),
                (Figure::Value, t(1e-9, 0.0, true)),
                (Figure::Instructions, t(0.005, 100.0, true)),
                (Figure::Throughput, t(0.10, 0.0, true)),
                (Figure::P99, t(0.10, 0.0, false)),
                (Figure::Requests, t(0.10, 0.0, false)),
                (Figure::MaxRate, t(0.10, 0.0, true)),
                (Figure::MaxGoodputRate, t(0.10, 0.0, true)),
                (Figure::RoofFraction, t(0.10, 0.0, true)),
                // Tails of a few hundred requests: a wider limit than a
                // median's.
                (Figure::Ttft, t(0.20, 0.0, true)),
                (Figure::Tpot, t(0.20, 0.0, true)),
                (Figure::Itl, t(0.20, 0.0, true)),
                (Figure::E2e, t(0.20, 0.0, true)),
                (Figure::Scaling, t(0.0, 0.1, true)),
                (Figure::Capacity, t(0.05, 0.0, true)),
            ]),
            fields: BTreeMap::new(),
            significance: 0.001,
            named: std::collections::BTreeSet::new(),
        }
    }
}

impl Limits {
    /// The limit of `figure`.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench_core::compare::Limits;
    /// use nnbench::record::Figure;
    /// assert!(!Limits::default().get(Figure::Load).gated);
    /// ```
    pub fn get(&self, figure: Figure) -> Limit {
        self.figures.get(&figure).copied().unwrap_or(Limit {
            relative: 0.0,
            absolute: 0.0,
            gated: false,
        })
    }

    /// The limit of field `path` of a struct metric: its own where
    /// one was given (`value.accuracy=0.5%`); time's relative limit for a
    /// field whose name says it is a time or a rate ([`measured_field`]);
    /// else the value's.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench_core::compare::Limits;
    /// use nnbench::record::Figure;
    /// let t = Limits::default().with_spec("value.accuracy=0.5%").unwrap();
    /// assert_eq!(t.get_field("accuracy").relative, 0.005);
    /// assert_eq!(t.get_field("loss"), t.get(Figure::Value));
    /// assert_eq!(t.get_field("latency_ms").relative, t.get(Figure::Time).relative);
    /// ```
    pub fn get_field(&self, path: &str) -> Limit {
        if let Some(own) = self.fields.get(path) {
            return *own;
        }
        if measured_field(path) {
            let time = self.get(Figure::Time);
            return Limit {
                relative: time.relative,
                absolute: 0.0,
                gated: time.gated && self.get(Figure::Value).gated,
            };
        }
        self.get(Figure::Value)
    }

    /// These limits with those of `spec` over them: comma-separated
    /// `figure=limit`, where a limit is `P%`, an amount (`4MiB` for memory,
    /// `2ms` for time, a number for the value; a leading `-` or `+` is
    /// ignored), `P%+amount`, or `off` (reported, never failing). Naming a
    /// figure gates it.
    ///
    /// # Errors
    ///
    /// [`LimitError`] naming the part that is not understood.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench_core::compare::Limits;
    /// use nnbench::record::Figure;
    /// let t = Limits::default().with_spec("load=50%,gpu=off").unwrap();
    /// assert!(t.get(Figure::Load).gated && !t.get(Figure::Gpu).gated);
    /// assert!(Limits::default().with_spec("speed=5%").is_err());
    /// ```
    pub fn with_spec(mut self, spec: &str) -> Result<Self, LimitError> {
        for FigureLimit {
            figure,
            field,
            limit,
        } in nnbench_vocab::parse_limits(spec)?
        {
            let limit = match limit {
                Spec::Off => Limit {
                    gated: false,
                    ..Limits::default().get(figure)
                },
                Spec::Within { relative, absolute } => Limit {
                    relative,
                    absolute,
                    gated: true,
                },
            };
            match field {
                Some(path) => {
                    self.fields.insert(path, limit);
                }
                None => {
                    self.named.insert(figure);
                    self.figures.insert(figure, limit);
                }
            }
        }
        Ok(self)
    }
}

/// Whether the field at `path` of a struct metric is, by its name, a time
/// or a rate: a measurement that varies from run to run like time, not a
/// result that only a change of code moves. Its last segment ends in a
/// unit of time (`_ns`, `_us`, `_ms`, `_s`, `_sec`, `_secs`, `_seconds`,
/// `_minutes`, `_hours`), in `_latency`, `_duration`, `_time` or
/// `_throughput`, or in a unit of rate (`_per_second`, `_per_sec`, `_per_s`,
/// `_ps`, `_qps`, `_rps`, `_fps`, `_hz`), or is one of `latency`,
/// `duration`, `elapsed`, `seconds`, `throughput`, `qps`, `rps`, `fps`.
///
/// # Example
///
/// ```
/// use nnbench_core::compare::measured_field;
/// assert!(measured_field("latency_ms") && measured_field("eval.images_per_second"));
/// assert!(!measured_field("accuracy") && !measured_field("loss") && !measured_field("mass"));
/// ```
pub fn measured_field(path: &str) -> bool {
    const NAMES: [&str; 8] = [
        "latency",
        "duration",
        "elapsed",
        "seconds",
        "throughput",
        "qps",
        "rps",
        "fps",
    ];
    const ENDINGS: [&str; 21] = [
        "_latency",
        "_duration",
        "_time",
        "_throughput",
        "_ns",
        "_us",
        "_ms",
        "_s",
        "_sec",
        "_secs",
        "_seconds",
        "_minutes",
        "_hours",
        "_per_second",
        "_per_sec",
        "_per_s",
        "_ps",
        "_qps",
        "_rps",
        "_fps",
        "_hz",
    ];
    let name = path.rsplit('.').next().unwrap_or(path).to_ascii_lowercase();
    NAMES.contains(&name.as_str()) || ENDINGS.iter().any(|end| name.ends_with(end))
}

/// Why a limit specification was refused: the part not understood.
///
/// # Example
///
/// ```
/// let err = nnbench_core::compare::Limits::default().with_spec("time=fast").unwrap_err();
/// assert!(err.to_string().contains("time=fast"));
/// ```
pub type LimitError = nnbench_vocab::LimitError;

/// The name [`Limits`] had before 0.1.0.
#[doc(hidden)]
#[deprecated(since = "0.1.0", note = "renamed `Limits`")]
pub type Thresholds = Limits;

/// The name [`Limit`] had before 0.1.0.
#[doc(hidden)]
#[deprecated(since = "0.1.0", note = "renamed `Limit`")]
pub type Threshold = Limit;

/// The name [`LimitError`] had before 0.1.0.
#[doc(hidden)]
#[deprecated(since = "0.1.0", note = "renamed `LimitError`")]
pub type ThresholdError = LimitError;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_into_each_figures_unit() {
        let t = Limits::default()
            .with_spec("time=5%+2ms, heap=1%+512KiB, value=+0.5, load=off")
            .unwrap();
        assert_eq!(
            t.get(Figure::Time),
            Limit {
                relative: 0.05,
                absolute: 2e6,
                gated: true
            }
        );
        assert_eq!(t.get(Figure::Heap).absolute, 512.0 * 1024.0);
        assert_eq!(t.get(Figure::Value).absolute, 0.5);
        assert!(!t.get(Figure::Load).gated);
        assert_eq!(t.get(Figure::Rss), Limits::default().get(Figure::Rss));
        assert!(Limits::default().with_spec("time=-5%x").is_err());
    }

    #[test]
    fn a_limit_equal_to_the_default_is_still_named() {
        let t = Limits::default().with_spec("time=10%").unwrap();
        assert_eq!(t.get(Figure::Time), Limits::default().get(Figure::Time));
        assert!(t.named.contains(&Figure::Time));
        assert!(!t.named.contains(&Figure::Rss));
    }

    #[test]
    fn measured_fields_take_times_limit_and_their_own_over_it() {
        let t = Limits::default().with_spec("time=20%").unwrap();
        assert_eq!(t.get_field("images_per_second").relative, 0.2);
        assert!(t.get_field("images_per_second").gated);
        let t = t.with_spec("value.images_per_second=off").unwrap();
        assert!(!t.get_field("images_per_second").gated);
        let off = Limits::default().with_spec("time=off").unwrap();
        assert!(!off.get_field("latency_ms").gated);
        assert_eq!(off.get_field("accuracy"), off.get(Figure::Value));
        for name in [
            "p50_latency",
            "step_duration",
            "Latency_MS",
            "eval.tokens_per_sec",
        ] {
            assert!(measured_field(name), "{name}");
        }
        for name in ["loss", "params", "f1", "bits", "class"] {
            assert!(!measured_field(name), "{name}");
        }
    }
}
