//! [`RunRecord`]: everything one run measured, read and written whole.

use super::*;

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
#[non_exhaustive]
pub struct RunRecord {
    /// Layout version, [`SCHEMA`].
    pub schema: u32,
    /// The run's name: the bench target's name under `cargo bench`.
    pub run: String,
    /// When the run started, RFC 3339 in UTC.
    pub started_at: String,
    /// The machine, the source and the toolchain that produced the figures.
    pub context: RunContext,
    /// One record per case, in the order they ran; written even when
    /// empty (a shard may hold no case), since every reader starts here.
    #[serde(default)]
    pub cases: Vec<CaseRecord>,
    /// What the run did with the memo cache, and what it left in it.
    #[serde(default)]
    pub memo: RunMemoRecord,
    /// How often the cases' memos were loaded, and the plan under a
    /// memory budget.
    #[serde(default)]
    pub memos: MemosRecord,
    /// How each family with a `scaling` parameter grows with it: a power
    /// per figure and combination of its other parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<ScalingRecord>,
    /// The largest size of each family with a `scaling` parameter whose
    /// resident peak fits in the memory the run could have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<CapacityRecord>,
    /// What went wrong outside any case (each case keeps its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Whether the memos of each next case loaded in the background while
    /// a case ran (`--prefetch`); the cases they loaded beside list them in
    /// `memo.prefetched`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prefetch: bool,
    /// Whether the cases ran in worker processes (`--isolate`): their
    /// memory figures are the worker's, whose memos a crash made reload.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub isolate: bool,
    /// What stopped the run before every case ran: the signal that arrived
    /// while a case ran (`"SIGINT"`, `"SIGTERM"`), or `"case-timeout"` when
    /// a case ran past `--case-timeout` without `--isolate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// The shard of a sweep this run ran (`--shard K/N`), or `None` for a
    /// whole sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
    /// In a record merged from shards (`nnbench merge`), each shard's run:
    /// its machine, start and memo cache. Each case's `shard` names its
    /// own. Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<ShardRun>,
    /// The base build of a paired run (`--paired BASE`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<PairedRun>,
}

impl RunRecord {
    /// A record of run `run`, started at `started_at` (RFC 3339) on
    /// `context`, with no cases yet: the record a tool assembles from
    /// other records' parts.
    ///
    /// # Example
    ///
    /// ```
    /// # let json = r#"{"schema":1,"run":"x","started_at":"t",
    /// #   "context":{"host":{"arch":"x86_64","cores":2},"git":null,"nnbench":"0.1.0","command":[]},
    /// #   "cases":[]}"#;
    /// # let context = serde_json::from_str::<nnbench::RunRecord>(json).unwrap().context;
    /// let mut record = nnbench::RunRecord::new("sweep", nnbench::record::now_rfc3339(), context);
    /// record.warnings.push("assembled by hand".into());
    /// assert_eq!((record.cases.len(), record.schema), (0, nnbench::record::SCHEMA));
    /// ```
    pub fn new(run: impl Into<String>, started_at: impl Into<String>, context: RunContext) -> Self {
        Self {
            schema: SCHEMA,
            run: run.into(),
            started_at: started_at.into(),
            context,
            cases: Vec::new(),
            memo: RunMemoRecord::default(),
            memos: MemosRecord::default(),
            scaling: Vec::new(),
            capacity: Vec::new(),
            warnings: Vec::new(),
            prefetch: false,
            isolate: false,
            interrupted: None,
            shard: None,
            shards: Vec::new(),
            paired: None,
        }
    }

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

    /// The machine, source and toolchain `case` ran with: in a record
    /// merged from shards, its shard's; otherwise the run's.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(record: &nnbench::RunRecord) {
    /// for case in &record.cases {
    ///     println!("{} ran on {:?}", case.id, record.context_of(case).host.hostname);
    /// }
    /// # }
    /// ```
    pub fn context_of(&self, case: &CaseRecord) -> &RunContext {
        case.shard
            .and_then(|index| self.shards.iter().find(|s| s.index == index))
            .map_or(&self.context, |shard| &shard.context)
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
    /// # Ok::<(), nnbench::record::RecordError>(())
    /// ```
    pub fn read(path: impl AsRef<Path>) -> Result<Self, RecordError> {
        let path = path.as_ref();
        let text = fs::read_to_string(path).map_err(|source| RecordError::Io {
            path: path.to_owned(),
            source,
        })?;
        let record: Self = serde_json::from_str(&text).map_err(|source| RecordError::Parse {
            path: path.to_owned(),
            source,
        })?;
        if record.schema > SCHEMA {
            return Err(RecordError::Newer {
                path: path.to_owned(),
                schema: record.schema,
            });
        }
        Ok(record)
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
    /// # fn f(record: &nnbench::RunRecord) -> Result<(), nnbench::record::RecordError> {
    /// record.write("results/run.ndjson")?;
    /// # Ok(()) }
    /// ```
    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), RecordError> {
        let path = path.as_ref();
        let bytes = match OutputFormat::of(path)? {
            OutputFormat::Json => {
                // Compact: a sweep of many cases writes megabytes pretty
                // printed; `nnbench show` prints one for people.
                let mut bytes =
                    serde_json::to_vec(self).map_err(|source| RecordError::Serialize {
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
        atomic_file::write(path, |file| file.write_all(&bytes)).map_err(|e| RecordError::Io {
            path: path.to_owned(),
            source: e.into_io(),
        })
    }
}
