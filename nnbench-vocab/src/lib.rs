//! The vocabulary that [nnbench](https://docs.rs/nnbench)'s attributes
//! (checked at compile time), its library and its command lines share, so
//! that all of them accept and write exactly the same things:
//!
//! - the figures of a case that regression tracking follows ([`Figure`]),
//!   and their units;
//! - durations (`warm_up_time = "500ms"`, `--warm-up-time 0.5`): seconds (`1.5`)
//!   or a duration with its unit (`500ms`, `2s`, `1m 30s`), never zero;
//! - regression limits (`fail_on = "time=10%"`, `--fail-on rss=2%+4MiB`):
//!   comma-separated `figure=limit`, a struct metric's field as
//!   `value.accuracy=0.5%`;
//! - which way a metric is better (`metric = "accuracy:higher,
//!   latency_ms:lower"`);
//! - latency targets (`latency_target = "p99 <= 20ms"`) and a stream's
//!   objectives (`slo = "ttft <= 200ms, tpot <= 25ms"`);
//! - amounts written for people (`12.3 µs`, `3.00 MiB`), and a struct
//!   metric's fields in the unit their names end with (`latency_ms`).

#![warn(missing_docs)]

mod bounds;
mod duration;
mod field;
mod figure;
mod format;
mod limits;
mod metric;
mod slo;
mod target;

pub use bounds::{MAX_LEVEL, MAX_RATE, MIN_SAMPLE_SIZE};
pub use duration::parse_duration;
pub use field::format_field;
pub use figure::{Figure, Unit, UnknownFigure};
pub use format::{
    format_amount, format_bytes, format_count, format_figure, format_ns, format_rate, si_scaled,
};
pub use limits::{FigureLimit, Limit, LimitError, parse_limits};
pub use metric::{Direction, MetricError, MetricField, is_field_path, parse_metric};
pub use slo::{Objective, StreamLatency, format_slo, parse_slo};
pub use target::{LatencyTarget, parse_latency_target};
