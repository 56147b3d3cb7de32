//! The run record: what a run measured, as JSON (field names are a contract).
//!
//! A run writes one [`RunRecord`] to `target/nnbench/<bench>/latest.json` and,
//! with `--out FILE`, to `FILE`: a `.json` file holds the whole record, a
//! `.ndjson` file one [`CaseRecord`] per line.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use crate::measure::RssMethod;
use crate::measure::gpu::GpuMethod;

/// The version of the record's layout; it changes when a field changes meaning.
pub const SCHEMA: u32 = 1;

/// Everything one run measured.
///
/// # Example
///
/// ```
/// let json = r#"{"schema":1,"run":"sweep","started_at":"2026-01-01T00:00:00Z",
///   "context":{"host":{"arch":"x86_64","cores":2},"git":null,"nnbench":"0.1.0","command":[]},
///   "cases":[]}"#;
/// let record: nnbench::RunRecord = serde_json::from_str(json).unwrap();
/// assert_eq!(record.run, "sweep");
/// assert_eq!(record.failed(), 0);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Layout version, [`SCHEMA`].
    pub schema: u32,
    /// The run's name: the bench target's name under `cargo bench`.
    pub run: String,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// The machine, the source and the toolchain that produced the figures.
    pub context: Context,
    /// One record per case, in the order they ran.
    pub cases: Vec<CaseRecord>,
    /// What the run did with the memo cache, and what it left in it.
    #[serde(default)]
    pub memo: RunMemoRecord,
}

/// The memo cache over a whole run.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let m = &record.memo;
/// println!("{} computes, {} entries left holding {} bytes", m.misses, m.entries_at_end, m.resident_bytes_at_end);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMemoRecord {
    /// Resolves during the run that found their value.
    pub hits: u64,
    /// Resolves during the run that did not find their value in memory.
    pub misses: u64,
    /// Misses loaded from the disk tier.
    #[serde(default)]
    pub disk_hits: u64,
    /// Misses computed.
    #[serde(default)]
    pub computes: u64,
    /// Evicted entries spilled to the disk tier.
    #[serde(default)]
    pub spills: u64,
    /// Computes during the run that failed.
    pub failures: u64,
    /// Entries evicted during the run.
    pub evictions: u64,
    /// Entries in the cache when the run ended.
    pub entries_at_end: usize,
    /// Bytes those entries hold.
    pub resident_bytes_at_end: u64,
    /// Bytes of the disk tier's entries when the run ended.
    #[serde(default)]
    pub disk_bytes_at_end: u64,
}

impl RunRecord {
    /// How many cases failed.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(record: &nnbench::RunRecord) {
    /// if record.failed() > 0 {
    ///     eprintln!("{} cases failed", record.failed());
    /// }
    /// # }
    /// ```
    pub fn failed(&self) -> usize {
        self.cases.iter().filter(|c| c.error.is_some()).count()
    }

    /// The case with id `id`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(record: &nnbench::RunRecord) {
    /// if let Some(case) = record.case("startup") {
    ///     println!("startup took {} ns", case.time.median_ns);
    /// }
    /// # }
    /// ```
    pub fn case(&self, id: &str) -> Option<&CaseRecord> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// Reads a record written as `.json`.
    ///
    /// # Errors
    ///
    /// [`RecordError`] naming the file when it cannot be read or parsed.
    ///
    /// # Example
    ///
    /// ```no_run
    /// let record = nnbench::RunRecord::read("target/nnbench/sweep/latest.json")?;
    /// println!("{} cases", record.cases.len());
    /// # Ok::<(), nnbench::RecordError>(())
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref();
        let text = fs::read_to_string(path).map_err(|source| RecordError::Io {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| RecordError::Parse {
            path: path.to_owned(),
            source,
        })
    }

    /// Writes the record to `path` atomically (a temporary file renamed into
    /// place), creating missing folders. The extension picks the format:
    /// `.json` for the whole record, `.ndjson` for one case per line.
    ///
    /// # Errors
    ///
    /// [`RecordError`] naming the file when the extension is neither, or the
    /// file cannot be written.
    ///
    /// # Example
    ///
    /// ```no_run
    /// # fn f(record: &nnbench::RunRecord) -> Result<(), nnbench::RecordError> {
    /// record.write("results/run.ndjson")?;
    /// # Ok(()) }
    /// ```
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), RecordError> {
        let path = path.as_ref();
        let bytes = match OutputFormat::of(path)? {
            OutputFormat::Json => {
                let mut bytes =
                    serde_json::to_vec_pretty(self).map_err(|source| RecordError::Serialize {
                        path: path.to_owned(),
                        source,
                    })?;
                bytes.push(b'\n');
                bytes
            }
            OutputFormat::Ndjson => {
                let mut bytes = Vec::new();
                for case in &self.cases {
                    serde_json::to_writer(&mut bytes, case).map_err(|source| {
                        RecordError::Serialize {
                            path: path.to_owned(),
                            source,
                        }
                    })?;
                    bytes.push(b'\n');
                }
                bytes
            }
        };
        write_atomically(path, &bytes)
    }
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

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    let io = |source| RecordError::Io {
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(io)?;
    let mut temp = tempfile::NamedTempFile::new_in(&dir).map_err(io)?;
    temp.write_all(bytes).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
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
pub enum RecordError {
    /// The file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
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

/// The machine, source and toolchain behind a run.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let ctx = &record.context;
/// println!("{} cores, nnbench {}", ctx.host.cores, ctx.nnbench);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Context {
    /// The machine.
    pub host: Host,
    /// The repository the bench was run from, when it is one.
    pub git: Option<Git>,
    /// nnbench's version.
    pub nnbench: String,
    /// `rustc --version` of the compiler that built the harness.
    #[serde(default)]
    pub rustc: Option<String>,
    /// The command line of the run.
    #[serde(default)]
    pub command: Vec<String>,
    /// The GPUs figures were taken on, or why there were none.
    #[serde(default)]
    pub gpu: GpuContext,
}

/// The GPUs of the machine, as NVML sees them.
///
/// # Example
///
/// ```
/// # fn f(gpu: &nnbench::record::GpuContext) {
/// match &gpu.reason {
///     Some(why) => println!("no GPU figures: {why}"),
///     None => println!("{} GPUs, driver {:?}", gpu.devices.len(), gpu.driver),
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuContext {
    /// Whether GPU memory was measured.
    pub available: bool,
    /// Why it was not (no driver, no device, disabled).
    #[serde(default)]
    pub reason: Option<String>,
    /// The driver's version.
    #[serde(default)]
    pub driver: Option<String>,
    /// How per-case figures are taken.
    #[serde(default)]
    pub method: Option<GpuMethod>,
    /// The devices.
    #[serde(default)]
    pub devices: Vec<GpuDevice>,
}

/// One GPU.
///
/// # Example
///
/// ```
/// # fn f(d: &nnbench::record::GpuDevice) {
/// println!("GPU {}: {:?}, {:?} bytes", d.index, d.name, d.memory_bytes);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuDevice {
    /// NVML's index of the device.
    pub index: u32,
    /// Its name.
    pub name: Option<String>,
    /// Its total memory.
    pub memory_bytes: Option<u64>,
}

/// The machine a run ran on.
///
/// # Example
///
/// ```
/// # fn f(host: &nnbench::record::Host) {
/// println!("{:?} on {:?}", host.cpu, host.os);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// The host's name.
    #[serde(default)]
    pub hostname: Option<String>,
    /// The operating system and its version.
    #[serde(default)]
    pub os: Option<String>,
    /// The kernel's version.
    #[serde(default)]
    pub kernel: Option<String>,
    /// The CPU architecture, as Rust names it (`x86_64`, `aarch64`).
    pub arch: String,
    /// The CPU's model name.
    #[serde(default)]
    pub cpu: Option<String>,
    /// Logical cores available to the process.
    pub cores: usize,
    /// Physical cores of the machine.
    #[serde(default)]
    pub physical_cores: Option<usize>,
    /// Total memory of the machine.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
}

/// The state of the repository a run was made from.
///
/// # Example
///
/// ```
/// # fn f(git: &nnbench::record::Git) {
/// println!("{}{}", git.commit, if git.dirty { "+dirty" } else { "" });
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Git {
    /// The commit checked out.
    pub commit: String,
    /// The branch checked out, if any.
    pub branch: Option<String>,
    /// Whether tracked files had changes not committed.
    pub dirty: bool,
}

/// What one case measured.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::CaseRecord) {
/// match &case.error {
///     None => println!("{} = {} in {} ns", case.id, case.value, case.time.median_ns),
///     Some(e) => println!("{} failed at {:?}: {}", case.id, e.stage, e.message),
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    /// `family/name=value,...`, unique in the run and stable across runs.
    pub id: String,
    /// The family the case belongs to.
    pub family: String,
    /// Each parameter's description: a memo by its `Debug` form.
    pub params: Map<String, Json>,
    /// The family's tags.
    pub tags: Vec<String>,
    /// What the function returned; `null` for `()` or a failed case.
    pub value: Json,
    /// Why the case failed, or `null`.
    pub error: Option<CaseError>,
    /// How long the function took.
    pub time: TimeRecord,
    /// Time spent resolving the case's memos, apart from `time`.
    pub load_ns: u64,
    /// Resident memory around the case.
    pub memory: MemoryRecord,
    /// What the case did with the memo cache.
    pub memo: MemoRecord,
}

/// How a case was timed and what the timing gave, per call of the function.
///
/// # Example
///
/// ```
/// # fn f(time: &nnbench::record::TimeRecord) {
/// println!("{:?}: median {} ns over {} samples", time.mode, time.median_ns, time.samples);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeRecord {
    /// How the case was timed.
    pub mode: TimingMode,
    /// How many samples were taken (0 when the function never ran).
    pub samples: u64,
    /// How many calls all samples made together.
    pub iters: u64,
    /// Mean time of one call, in nanoseconds.
    pub mean_ns: f64,
    /// Median time of one call.
    pub median_ns: f64,
    /// Standard deviation of the time of one call.
    pub std_ns: f64,
    /// Fastest call.
    pub min_ns: f64,
    /// Slowest call.
    pub max_ns: f64,
}

impl TimeRecord {
    /// The record of a single call that took `ns` nanoseconds.
    ///
    /// # Example
    ///
    /// ```
    /// let t = nnbench::record::TimeRecord::once(1500.0);
    /// assert_eq!((t.samples, t.median_ns, t.std_ns), (1, 1500.0, 0.0));
    /// ```
    pub fn once(ns: f64) -> Self {
        Self {
            mode: TimingMode::Once,
            samples: 1,
            iters: 1,
            mean_ns: ns,
            median_ns: ns,
            std_ns: 0.0,
            min_ns: ns,
            max_ns: ns,
        }
    }
}

/// How a case's function was called and timed.
///
/// # Example
///
/// ```
/// assert_eq!(serde_json::to_string(&nnbench::record::TimingMode::Once).unwrap(), "\"once\"");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimingMode {
    /// One call, its duration.
    #[default]
    Once,
    /// criterion sampled the function; the figures are per call.
    Sampled,
}

/// Memory of the process around one case.
///
/// # Example
///
/// ```
/// # fn f(m: &nnbench::record::MemoryRecord) {
/// if let (Some(before), Some(peak)) = (m.rss_before_bytes, m.rss_peak_bytes) {
///     println!("the case needed {} more bytes at its peak", peak.saturating_sub(before));
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRecord {
    /// Resident memory when the case started, before its memos were resolved.
    pub rss_before_bytes: Option<u64>,
    /// Peak resident memory during the case (memo loading, hooks and call
    /// included): memory that libtorch, BLAS or `mmap` allocate counts.
    pub rss_peak_bytes: Option<u64>,
    /// Resident memory after teardown and eviction.
    pub rss_after_bytes: Option<u64>,
    /// How `rss_peak_bytes` was measured.
    #[serde(default)]
    pub rss_method: Option<RssMethod>,
    /// Heap bytes live when the case started, when a
    /// [`TrackingAllocator`](crate::alloc::TrackingAllocator) is installed.
    #[serde(default)]
    pub heap_before_bytes: Option<u64>,
    /// Peak heap bytes during the case, when the tracker is installed.
    pub heap_peak_bytes: Option<u64>,
    /// Allocations made during the case, when the tracker is installed.
    #[serde(default)]
    pub heap_allocations: Option<u64>,
    /// Peak GPU memory during the case, when a GPU is there to ask; see
    /// `gpu_method` for what it counts.
    pub gpu_peak_bytes: Option<u64>,
    /// How `gpu_peak_bytes` was measured.
    #[serde(default)]
    pub gpu_method: Option<GpuMethod>,
    /// Bytes the memo cache held when the case started.
    #[serde(default)]
    pub memo_resident_bytes: u64,
}

/// What one case did with the memo cache.
///
/// # Example
///
/// ```
/// # fn f(m: &nnbench::record::MemoRecord) {
/// println!("{} computed, {} reused, evicted {:?}", m.misses, m.hits, m.evicted);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoRecord {
    /// The case's memos that were already in the cache.
    pub hits: u64,
    /// The case's memos that were not: loaded from disk or computed.
    pub misses: u64,
    /// Misses loaded from the disk tier.
    #[serde(default)]
    pub disk_hits: u64,
    /// Misses computed.
    #[serde(default)]
    pub computes: u64,
    /// Memos evicted during the case: by its hooks, or by the runner
    /// after their last use.
    pub evicted: Vec<String>,
    /// Evicted memos whose value something else still held, so that its
    /// memory was not freed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leaked: Vec<LeakRecord>,
}

/// A memo evicted while references to its value remained.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::CaseRecord) {
/// for leak in &case.memo.leaked {
///     eprintln!("{} is still held {} times", leak.memo, leak.references);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeakRecord {
    /// The memo's description.
    pub memo: String,
    /// References to its value held outside the cache when it was evicted.
    pub references: usize,
}

/// Why a case failed.
///
/// # Example
///
/// ```
/// # fn f(e: &nnbench::record::CaseError) {
/// eprintln!("{:?}: {}", e.stage, e.message);
/// for cause in &e.causes {
///     eprintln!("  caused by: {cause}");
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaseError {
    /// The step that failed.
    pub stage: Stage,
    /// The error's message.
    pub message: String,
    /// Its chain of causes, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    /// Failures of later steps of the same case (a teardown that failed too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<CaseError>,
}

impl CaseError {
    pub(crate) fn new(stage: Stage, error: &crate::Error) -> Self {
        let mut messages = error.messages().into_iter();
        Self {
            stage,
            message: messages.next().unwrap_or_default(),
            causes: messages.collect(),
            also: Vec::new(),
        }
    }

    /// One line: the message and its causes joined by `: `.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::record::{CaseError, Stage};
    /// let e = CaseError { stage: Stage::Call, message: "outer".into(), causes: vec!["inner".into()], also: vec![] };
    /// assert_eq!(e.summary(), "outer: inner");
    /// ```
    pub fn summary(&self) -> String {
        std::iter::once(self.message.as_str())
            .chain(self.causes.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// The steps of a case's lifecycle, as named in [`CaseError::stage`].
///
/// # Example
///
/// ```
/// assert_eq!(serde_json::to_string(&nnbench::record::Stage::Memo).unwrap(), "\"memo\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Building the family's parameter grid.
    Grid,
    /// Resolving a memo.
    Memo,
    /// The setup hook.
    Setup,
    /// The function itself.
    Call,
    /// The teardown hook.
    Teardown,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sample() -> RunRecord {
        RunRecord {
            schema: SCHEMA,
            run: "sweep".into(),
            started_at: "2026-11-22T10:00:00.000Z".into(),
            context: Context {
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
            },
            cases: vec![CaseRecord {
                id: "accuracy/model=m1".into(),
                family: "accuracy".into(),
                params: [("model".to_owned(), json!("m1"))].into_iter().collect(),
                tags: vec!["cpu".into()],
                value: Json::Null,
                error: Some(CaseError {
                    stage: Stage::Memo,
                    message: "memo m1 failed".into(),
                    causes: vec!["no such file".into()],
                    also: vec![CaseError {
                        stage: Stage::Teardown,
                        message: "teardown failed".into(),
                        causes: vec![],
                        also: vec![],
                    }],
                }),
                time: TimeRecord::default(),
                load_ns: 12,
                memory: MemoryRecord {
                    rss_before_bytes: Some(1),
                    rss_peak_bytes: None,
                    ..MemoryRecord::default()
                },
                memo: MemoRecord {
                    hits: 0,
                    misses: 1,
                    disk_hits: 0,
                    computes: 1,
                    evicted: vec!["m1".into()],
                    leaked: vec![],
                },
            }],
            memo: RunMemoRecord::default(),
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
        assert_eq!(
            case["memory"]["rss_peak_bytes"],
            Json::Null,
            "unknown is null, not absent"
        );
        assert_eq!(case["error"]["stage"], "memo");
        assert_eq!(
            case["memo"],
            json!({"hits": 0, "misses": 1, "disk_hits": 0, "computes": 1, "evicted": ["m1"]})
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
