//! The run record: what a run measured, as JSON (field names are a contract).
//!
//! A run writes one [`RunRecord`] to `target/nnbench/<bench>/latest.json` and,
//! with `--out FILE`, to `FILE`: a `.json` file holds the whole record, a
//! `.ndjson` file one [`CaseRecord`] per line.
//!
//! These types are the bottom floor of the crate: they import nothing from
//! the modules that measure, run or parse, which all build them.

pub(crate) mod capacity;
mod case;
mod concurrency;
mod context;
mod energy;
mod fields;
mod load;
pub(crate) mod machine;
mod memo;
mod method;
mod paired;
mod params;
mod percentiles;
mod precision;
pub(crate) mod run;
mod scaling;
mod search;
mod shard;
mod stream;
mod threads;
mod throughput;
mod work;
pub(crate) use throughput::per_second;
mod verdict;

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file;

pub use crate::paths::target_dir;
pub use capacity::CapacityRecord;
pub use case::{
    CallgrindRecord, CaseError, CaseRecord, MemoryRecord, Sampler, Stage, TimeRecord, TimingMode,
};
pub use concurrency::ConcurrencyRecord;
pub use context::{Git, GpuContext, GpuDevice, Host, RunContext};
pub use energy::{EnergyMethod, EnergyRecord};
pub use fields::{field, numeric_fields};
pub use load::LoadRecord;
pub(crate) use load::{fell_behind, share_bounds};
pub use memo::{
    LeakRecord, MemoCounters, MemoInput, MemoRecord, MemoSize, MemosRecord, PlanRecord,
    RunMemoRecord,
};
pub use method::{GpuMethod, RssMethod};
pub use nnbench_vocab::{Direction, Figure};
#[allow(deprecated)]
pub use paired::PairedClock;
pub use paired::{MemoBuilds, PairedRecord, PairedRun};
pub use params::ParamMap;
pub use percentiles::Percentiles;
pub(crate) use stream::nearest_rank as stream_nearest_rank;
// Documented at the crate's root, with the runner that returns it.
pub use machine::{Busy, MachineContext, MachineRoofs, RoofRates, RoofsMethod};
pub use precision::{Clock, Precision, StopReason};
#[doc(hidden)]
pub use run::RunRecord;
pub use scaling::ScalingRecord;
pub(crate) use scaling::label as scaling_label;
pub use search::{SearchRecord, SearchStep};
pub use shard::{ShardRecord, ShardRun};
pub use stream::{
    GoodputRecord, LatencyPercentiles, PercentileObjective, StreamRecord, TokenCounts,
};
pub use threads::ThreadsRecord;
pub use throughput::{ThroughputRecord, ThroughputUnit};
pub use verdict::Verdict;
pub use work::{FloatPrecision, Roof, WorkRecord};

/// The version of the record's layout; it changes when a field changes
/// meaning. Schema 2 leaves out what schema 1 wrote as `null`, empty or
/// zero; a reader takes either.
pub const SCHEMA: u32 = 2;

/// Whether a count or flag is its default (zero, false): the record leaves
/// it out, and a reader takes its absence for the default.
pub(crate) fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Now, as records write times: RFC 3339 in UTC, to the millisecond.
///
/// # Example
///
/// ```
/// let now = nnbench::record::now_rfc3339();
/// assert!(now.ends_with('Z') && now.len() == "2026-01-01T00:00:00.000Z".len());
/// ```
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// The formats `--out` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    Json,
    Ndjson,
}

impl OutputFormat {
    pub(crate) fn of(path: &Path) -> Result<Self, RecordError> {
        match path.extension().and_then(|e| e.to_str()) {
            Some("json") => Ok(Self::Json),
            Some("ndjson") => Ok(Self::Ndjson),
            _ => Err(RecordError::Extension {
                path: path.to_owned(),
            }),
        }
    }
}

/// Why a record could not be read or written.
///
/// # Example
///
/// ```
/// let err = nnbench::RunRecord::read("/no/such/run.json").unwrap_err();
/// assert!(err.to_string().contains("/no/such/run.json"));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The record's layout is newer than this nnbench reads.
    #[error(
        "{}: a record of schema {schema}, written by a newer nnbench; this one reads schemas 1 to {SCHEMA}",
        path.display()
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// The schema it says it has.
        schema: u32,
    },
    /// The file is not a run record.
    #[error("{}: not a run record: {source}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where the JSON went wrong.
        source: serde_json::Error,
    },
    /// A value could not be serialized.
    #[error("{}: the record could not be serialized: {source}", path.display())]
    Serialize {
        /// The file.
        path: PathBuf,
        /// What serde said.
        source: serde_json::Error,
    },
    /// The output's extension names no format.
    #[error("{}: the output file must end in .json or .ndjson", path.display())]
    Extension {
        /// The file.
        path: PathBuf,
    },
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value as Json, json};

    use super::*;

    /// A record of one case, for tests.
    pub(crate) fn sample() -> RunRecord {
        RunRecord {
            schema: SCHEMA,
            run: "sweep".into(),
            started_at: "2026-11-22T10:00:00.000Z".into(),
            context: RunContext {
                host: Host {
                    arch: "x86_64".into(),
                    cores: 2,
                    ..Host::default()
                },
                git: Some(Git {
                    commit: "abc".into(),
                    branch: Some("main".into()),
                    dirty: true,
                }),
                nnbench: "0.1.0".into(),
                rustc: None,
                command: vec!["sweep".into(), "--bench".into()],
                gpu: GpuContext::default(),
                machine: None,
            },
            cases: vec![CaseRecord {
                id: "accuracy/model=m1".into(),
                family: "accuracy".into(),
                params: [("model".to_owned(), json!("m1"))].into_iter().collect(),
                tags: vec!["cpu".into()],
                value: Json::Null,
                direction: None,
                throughput: None,
                work: None,
                concurrency: Some(Box::new(ConcurrencyRecord::new(8, 100, 1e9))),
                load: Some(Box::new(LoadRecord {
                    offered_rate: 200.0,
                    arrivals: "poisson".into(),
                    achieved_rate: 198.5,
                    requests: 200,
                    late_fraction: 0.005,
                    late_after_ns: None,
                    dropped: 0,
                    timed_out: 2,
                    timeout_ns: Some(5e7),
                    most_in_flight: 3,
                    dispatcher: Some("own core, real-time".into()),
                })),
                stream: Some(Box::new(StreamRecord {
                    requests: 200,
                    ttft: LatencyPercentiles {
                        p50_ns: 8e6,
                        p90_ns: 9e6,
                        p99_ns: 1.2e7,
                        max_ns: 1.3e7,
                        mean_ns: 8.5e6,
                    },
                    tokens_per_s: 1200.0,
                    output_tokens: TokenCounts {
                        mean: 6.0,
                        p50: 6.0,
                        p99: 6.0,
                    },
                    input_tokens: Some(TokenCounts {
                        mean: 96.0,
                        p50: 64.0,
                        p99: 256.0,
                    }),
                    goodput: Some(GoodputRecord {
                        slo: "ttft <= 10ms, p99 e2e <= 20ms".into(),
                        met: 190,
                        share: 0.95,
                        share_bound: 0.92,
                        per_s: 95.0,
                        percentiles: vec![PercentileObjective {
                            objective: "p99 e2e <= 20ms".into(),
                            value_ns: 1.5e7,
                            upper_ns: 1.6e7,
                            met: true,
                        }],
                    }),
                    ..StreamRecord::default()
                })),
                search: Some(Box::new(SearchRecord {
                    target: "p99 <= 20ms".into(),
                    goodput: None,
                    max_rate: Some(640.0),
                    missed_at: Some(672.0),
                    client_bound: None,
                    steps: vec![SearchStep {
                        rate: 640.0,
                        latency_ns: 1.8e7,
                        interval_ns: [1.6e7, 1.95e7],
                        requests: 1280,
                        late_fraction: 0.0,
                        meets: true,
                        client_bound: false,
                        goodput: None,
                        goodput_bound: None,
                    }],
                })),
                threads: Some(Box::new(ThreadsRecord::new(vec![8.0, 12.0]))),
                profile: Some("target/nnbench/sweep/profiles/accuracy/model=m1.svg".into()),
                fail_on: None,
                error: Some(Box::new(CaseError {
                    stage: Stage::Memo,
                    message: "memo m1 failed".into(),
                    causes: vec!["no such file".into()],
                    also: vec![CaseError {
                        stage: Stage::Teardown,
                        message: "teardown failed".into(),
                        causes: vec![],
                        also: vec![],
                    }],
                })),
                // Every documented figure measured: schema 2 leaves out
                // what was not.
                time: TimeRecord {
                    std_ns: 3.0,
                    ..TimeRecord::default()
                },
                load_ns: 12,
                memory: MemoryRecord {
                    rss_before_bytes: Some(1),
                    rss_peak_bytes: Some(5),
                    rss_after_bytes: Some(4),
                    heap_peak_bytes: Some(3),
                    gpu_peak_bytes: Some(2),
                    ..MemoryRecord::default()
                },
                memo: MemoRecord {
                    counters: MemoCounters {
                        misses: 1,
                        computes: 1,
                        ..MemoCounters::default()
                    },
                    evicted: vec!["m1".into()],
                    leaked: vec![],
                    inputs: vec![],
                    sizes: vec![],
                    prefetched: vec![],
                    made_by_other_build: vec![],
                    computed: vec!["m1".into()],
                    loads: 1,
                    bytes_loaded: 1024,
                },
                warnings: vec![],
                shard: None,
                paired: None,
                directions: Default::default(),
                scales_with: None,
                energy: None,
            }],
            memo: RunMemoRecord::default(),
            memos: MemosRecord::default(),
            scaling: Vec::new(),
            capacity: Vec::new(),
            warnings: vec![],
            prefetch: false,
            isolate: false,
            interrupted: None,
            shard: None,
            shards: Vec::new(),
            paired: None,
        }
    }

    #[test]
    fn a_record_round_trips_through_json() {
        let record = sample();
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<RunRecord>(&text).unwrap(), record);
    }

    #[test]
    fn field_names_are_the_documented_ones() {
        let value = serde_json::to_value(sample()).unwrap();
        for key in ["schema", "run", "started_at", "context", "cases"] {
            assert!(value.get(key).is_some(), "{key}");
        }
        let case = &value["cases"][0];
        for key in [
            "id", "family", "params", "tags", "value", "error", "time", "load_ns", "memory", "memo",
        ] {
            assert!(case.get(key).is_some(), "{key}");
        }
        for key in [
            "mode",
            "samples",
            "iters",
            "mean_ns",
            "median_ns",
            "std_ns",
            "min_ns",
            "max_ns",
        ] {
            assert!(case["time"].get(key).is_some(), "time.{key}");
        }
        for key in [
            "rss_before_bytes",
            "rss_peak_bytes",
            "rss_after_bytes",
            "heap_peak_bytes",
            "gpu_peak_bytes",
        ] {
            assert!(case["memory"].get(key).is_some(), "memory.{key}");
        }
        let mut unknown = sample();
        unknown.cases[0].memory.rss_peak_bytes = None;
        let unknown = serde_json::to_value(unknown).unwrap();
        assert_eq!(
            unknown["cases"][0]["memory"].get("rss_peak_bytes"),
            None,
            "unknown is absent, not null"
        );
        assert_eq!(case["error"]["stage"], "memo");
        assert_eq!(
            case["memo"],
            json!({"misses": 1, "computes": 1, "evicted": ["m1"], "computed": ["m1"], "loads": 1, "bytes_loaded": 1024}),
            "counts of 0 are left out"
        );
        assert_eq!(
            value["memos"],
            json!({}),
            "a run's loads are its cases' sums, made when it is recorded"
        );
        assert_eq!(value["context"]["nnbench"], "0.1.0");
        assert_eq!(value["context"]["git"]["dirty"], true);
    }

    #[test]
    fn only_json_and_ndjson_are_output_formats() {
        assert_eq!(
            OutputFormat::of(Path::new("a/run.json")).unwrap(),
            OutputFormat::Json
        );
        assert_eq!(
            OutputFormat::of(Path::new("run.ndjson")).unwrap(),
            OutputFormat::Ndjson
        );
        for bad in ["run.csv", "run", "run.JSON.gz"] {
            assert!(OutputFormat::of(Path::new(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_file_that_is_not_a_record_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.json");
        std::fs::write(&path, "{\"schema\": 1").unwrap();
        let err = RunRecord::read(&path).unwrap_err();
        assert!(
            err.to_string().starts_with(&path.display().to_string()),
            "{err}"
        );
        assert!(err.to_string().contains("not a run record"), "{err}");
    }
}
