//! What an attribute registers: a family of cases, its options and the
//! builder of its cases.

use serde_json::Value as Json;

use super::Args;
use crate::measure::Timer;
use crate::param::{Param, Params};
use crate::record::{Direction, ThroughputUnit};
use crate::settings::{Sampling, Timing};
use crate::{Result, State};

/// One annotated function: its name, options and parameter grid.
pub struct Family {
    /// The function's name, or the `name` option.
    pub name: &'static str,
    /// `module_path!()` where it was declared, to tell apart two families
    /// of one name.
    pub module_path: &'static str,
    /// `file!()` and `line!()`: families run in source order.
    pub file: &'static str,
    /// See `file`.
    pub line: u32,
    /// The `tags` option.
    pub tags: &'static [&'static str],
    /// The `setup` option.
    pub setup: Option<Hook>,
    /// The `teardown` option.
    pub teardown: Option<Hook>,
    /// The `timing` option; `None` leaves it to the run.
    pub timing: Option<Timing>,
    /// The `sample_size`, `warm_up_time` and `measurement_time` options.
    pub sampling: Sampling,
    /// The `metric` option for a number: which way it is better.
    pub direction: Option<Direction>,
    /// The `metric` option for a struct value: which way each field it
    /// names is better, by the field's path (nested fields by dots).
    pub directions: &'static [(&'static str, Direction)],
    /// The `fail_on` option: regression limits over the comparison's own,
    /// for the figures it names (`"time=10%,rss=off"`).
    pub fail_on: Option<&'static str>,
    /// The `concurrency` option: requests in flight, one case per level.
    pub concurrency: &'static [usize],
    /// The `threads` option: threads making each call, one case per count.
    pub threads: &'static [usize],
    /// The `rate` option: requests a second of an open loop, one case per
    /// rate.
    pub rate: &'static [f64],
    /// The `arrivals` option: how an open loop's gaps are drawn.
    pub arrivals: crate::measure::arrivals::Arrivals,
    /// The `request_timeout` option: an open loop's request that takes
    /// longer counts as timed out.
    pub request_timeout: Option<std::time::Duration>,
    /// The `latency_target` option: the highest rate whose latency meets
    /// it is searched, in a case of its own.
    pub latency_target: Option<nnbench_vocab::LatencyTarget>,
    /// The `slo` option of a family with `stream`: the objectives each
    /// request (or a percentile across them) is judged against.
    pub slo: &'static [nnbench_vocab::Objective],
    /// The `goodput` option: the highest rate at which at least this
    /// share of the requests meets every objective of `slo` is searched,
    /// in a case of its own.
    pub goodput: Option<f64>,
    /// The `scaling` option: the numeric parameter the family's figures
    /// are fitted against.
    pub scaling: Option<&'static str>,
    /// Builds the family's cases in declared order.
    pub cases: fn() -> Vec<CaseSpec>,
}

impl Family {
    /// The levels a case of this family runs at, each a case of its own,
    /// from its `concurrency`, `threads` or `rate` option; empty without
    /// any.
    pub(crate) fn levels(&self) -> Vec<Parallel> {
        let concurrency = self.concurrency.iter().map(|&n| Parallel::Concurrency(n));
        let threads = self.threads.iter().map(|&n| Parallel::Threads(n));
        let rate = self.rate.iter().map(|&r| Parallel::Rate(r));
        let search =
            (self.latency_target.is_some() || self.goodput.is_some()).then_some(Parallel::Search);
        concurrency
            .chain(threads)
            .chain(rate)
            .chain(search)
            .collect()
    }
}

/// How many threads make a case's calls at once, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Parallel {
    /// Each call is made on this many threads, started together.
    Threads(usize),
    /// This many requests are kept in flight for the timed period.
    Concurrency(usize),
    /// Requests are due at this many a second, for the timed period.
    Rate(f64),
    /// The highest rate that meets the family's `latency_target` (or
    /// keeps its `goodput` under its `slo`) is searched, a timed period a
    /// rate tried.
    Search,
}

inventory::collect!(Family);

/// A setup or teardown hook, wrapped so that `()` and `Result` returns look alike.
pub type Hook = fn(&State, &Params) -> Result<()>;

/// The call of one case: fetches its arguments from `Args`, times the user's
/// function with `Timer`, and turns its return value into the metric.
pub type Call = dyn Fn(&Args, &mut Timer) -> Result<Json> + Send + Sync;

/// Counts what one call of a case handles, from its arguments: the
/// expression of a family's `throughput = elements(EXPR)`.
pub type Count = dyn Fn(&Args) -> Result<u64> + Send + Sync;

/// Gives the work one call of a case does, from its arguments: the
/// expressions of a family's `flops = EXPR` and `bytes = EXPR`.
pub type WorkCount = dyn Fn(&Args) -> Result<Work> + Send + Sync;

/// The work one call does: floating point operations and bytes moved,
/// each where the family declares it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Floating point operations one call does.
    pub flops: Option<f64>,
    /// Bytes one call moves to or from memory.
    pub bytes: Option<f64>,
    /// Whether the operations are in single precision (`flops = f32(..)`).
    pub single: bool,
}

/// One case of a family before selection: its parameters and its call.
pub struct CaseSpec {
    pub(crate) params: Params,
    pub(crate) call: Box<Call>,
    pub(crate) throughput: Option<(ThroughputUnit, Box<Count>)>,
    pub(crate) work: Option<Box<WorkCount>>,
}

impl CaseSpec {
    /// A case with these parameters, in signature order, and this call.
    pub fn new(
        params: Vec<Param>,
        call: impl Fn(&Args, &mut Timer) -> Result<Json> + Send + Sync + 'static,
    ) -> Self {
        Self {
            params: Params::new(params),
            call: Box::new(call),
            throughput: None,
            work: None,
        }
    }

    /// The case handles what `count` says per call, in `unit`s.
    #[must_use]
    pub fn throughput(
        mut self,
        unit: ThroughputUnit,
        count: impl Fn(&Args) -> Result<u64> + Send + Sync + 'static,
    ) -> Self {
        self.throughput = Some((unit, Box::new(count)));
        self
    }

    /// One call of the case does the work `work` says.
    #[must_use]
    pub fn work(mut self, work: impl Fn(&Args) -> Result<Work> + Send + Sync + 'static) -> Self {
        self.work = Some(Box::new(work));
        self
    }
}

impl Parallel {
    /// The parameter that holds the level in the case's id and record.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Parallel::Threads(_) => "threads",
            Parallel::Concurrency(_) => "concurrency",
            Parallel::Rate(_) | Parallel::Search => "rate",
        }
    }

    /// Threads or requests in flight; a rate's requests a second, whole.
    pub(crate) fn level(self) -> usize {
        match self {
            Parallel::Threads(n) | Parallel::Concurrency(n) => n,
            Parallel::Rate(r) => r.round() as usize,
            Parallel::Search => 0,
        }
    }

    /// The level as the case's parameter: a rate as it was written.
    pub(crate) fn param(self) -> crate::param::Param {
        match self {
            // A whole rate reads as one: `rate=200`.
            Parallel::Rate(r) if r.fract() == 0.0 && r < 1e15 => {
                crate::param::Param::plain(self.name(), r, serde_json::Value::from(r as u64))
            }
            Parallel::Rate(r) => {
                crate::param::Param::plain(self.name(), r, serde_json::Value::from(r))
            }
            Parallel::Search => {
                crate::param::Param::plain(self.name(), "max", serde_json::Value::from("max"))
            }
            _ => crate::param::Param::plain(
                self.name(),
                self.level(),
                serde_json::Value::from(self.level()),
            ),
        }
    }
}
