//! What cases and memos cost, as an earlier run measured them: the
//! weights that balance shards (`--shard-costs`).

use std::collections::HashMap;
use std::io::Read as _;
use std::path::Path;

use super::ShardError;
use crate::RunRecord;

/// What each case of a sweep cost when it last ran, to balance shards by:
/// its calls' time, and the time it spent loading memos.
///
/// Every shard of a sweep must plan from the same costs, or the shards
/// would not add up to the sweep: give each the same file (a record or
/// baseline kept as an artifact), not one each machine made.
/// A record's plan digest lets `nnbench merge` catch shards that did not.
///
/// # Example
///
/// ```
/// let json = r#"{"schema":1,"run":"sweep","started_at":"2026-01-01T00:00:00Z",
///   "context":{"host":{"arch":"x86_64","cores":2},"git":null,"nnbench":"0.1.0"},"cases":[]}"#;
/// let record: nnbench::RunRecord = serde_json::from_str(json).unwrap();
/// let costs = nnbench::shard::ShardCosts::from_record(&record);
/// assert!(costs.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShardCosts {
    cases: HashMap<String, CaseCost>,
    /// The order the cases ran in, when the source says: the first case
    /// that used a memo is the one that loaded it.
    order: Option<Vec<String>>,
}

/// One case's measured cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CaseCost {
    /// All its timed calls together.
    pub call_ns: f64,
    /// Resolving its memos.
    pub load_ns: f64,
}

impl ShardCosts {
    /// The costs a run record measured: each case's calls (mean × calls)
    /// and memo loads.
    ///
    /// # Example
    ///
    /// ```no_run
    /// let record = nnbench::RunRecord::read("target/nnbench/sweep/baselines/main.json")?;
    /// let costs = nnbench::shard::ShardCosts::from_record(&record);
    /// # Ok::<(), nnbench::record::RecordError>(())
    /// ```
    pub fn from_record(record: &RunRecord) -> Self {
        let cases = record
            .cases
            .iter()
            .map(|case| {
                let call_ns = case.time.mean_ns * case.time.iters as f64;
                let cost = CaseCost {
                    call_ns: if call_ns.is_finite() { call_ns } else { 0.0 },
                    load_ns: case.load_ns as f64,
                };
                (case.id.clone(), cost)
            })
            .collect();
        Self {
            cases,
            order: Some(record.cases.iter().map(|c| c.id.clone()).collect()),
        }
    }

    /// Reads costs from `path`: a run record (`.json`, such as a saved
    /// baseline or a merged record). When `path` is no file and `bench` is
    /// given, a bare name is the bench's baseline
    /// (`target/nnbench/<bench>/baselines/<name>.json`).
    ///
    /// # Errors
    ///
    /// [`ShardError::Costs`] naming the file when it is missing or no
    /// record (a history's SQLite file is refused with what to give).
    ///
    /// # Example
    ///
    /// ```
    /// let err = nnbench::shard::ShardCosts::read("/no/such/costs.json", None).unwrap_err();
    /// assert!(err.to_string().contains("/no/such/costs.json"));
    /// ```
    pub fn read(path: impl AsRef<Path>, bench: Option<&str>) -> Result<Self, ShardError> {
        let given = path.as_ref();
        let baseline = bench
            .filter(|_| !given.exists() && is_bare_name(given))
            .map(|bench| {
                crate::paths::baseline_path(
                    &crate::paths::bench_dir(bench),
                    &given.to_string_lossy(),
                )
            });
        let path = baseline.as_deref().unwrap_or(given);
        let fail = |reason: String| ShardError::Costs {
            path: path.to_owned(),
            reason,
        };
        let mut head = [0u8; 16];
        let is_sqlite = std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok()
            && &head == b"SQLite format 3\0";
        if is_sqlite {
            return Err(fail(
                "a history, which a bench binary does not read: give a run's record \
                 (a baseline, or a merged record)"
                    .into(),
            ));
        }
        let record = RunRecord::read(path).map_err(|e| match e {
            crate::RecordError::Io { source, .. } => fail(source.to_string()),
            other => fail(other.to_string()),
        })?;
        Ok(Self::from_record(&record))
    }

    /// Whether no case has a cost.
    ///
    /// # Example
    ///
    /// ```
    /// assert!(nnbench::shard::ShardCosts::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.cases.is_empty()
    }

    pub(crate) fn case(&self, id: &str) -> Option<CaseCost> {
        self.cases.get(id).copied()
    }

    /// Each case's place in the measured run's order; `None` when the
    /// source does not say.
    pub(crate) fn run_order(&self) -> Option<HashMap<&str, usize>> {
        self.order.as_ref().map(|order| {
            order
                .iter()
                .enumerate()
                .map(|(at, id)| (id.as_str(), at))
                .collect()
        })
    }
}

/// A name such as `main`, as baselines are named, rather than a path.
fn is_bare_name(path: &Path) -> bool {
    path.components().count() == 1 && path.extension().is_none()
}
