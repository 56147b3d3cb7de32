//! The small languages of [nnbench](https://docs.rs/nnbench) that both its
//! attributes (checked at compile time) and its command lines read, so that
//! both accept exactly the same things:
//!
//! - durations (`warm_up = "500ms"`, `--warm-up-time 0.5`): seconds (`1.5`)
//!   or a duration with its unit (`500ms`, `2s`, `1m 30s`), never zero;
//! - regression limits (`fail_on = "time=10%"`, `--fail-on rss=2%+4MiB`):
//!   comma-separated `figure=limit`.

#![warn(missing_docs)]

mod duration;
mod limits;

pub use duration::parse_duration;
pub use limits::{FIGURES, FigureLimit, Limit, LimitError, Unit, parse_limits};
