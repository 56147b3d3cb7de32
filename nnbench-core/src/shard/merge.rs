//! One record from the records of a sweep's shards (`nnbench merge`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::RunRecord;
use crate::record::{MemosRecord, RunMemoRecord, SCHEMA, ShardRecord, ShardRun};
use crate::scaling::capacity;

/// Why shards' records could not be merged: each names the files at fault.
///
/// # Example
///
/// ```
/// let err = nnbench_core::shard::merge(Vec::new()).unwrap_err();
/// assert!(matches!(err, nnbench_core::shard::MergeError::Empty));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no records to merge")]
    Empty,
    /// A record of a whole sweep, or one already merged.
    #[error("{}: not a shard's record ({why})", path.display())]
    NotAShard {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        why: &'static str,
    },
    /// A shard's run that stopped before its cases were done.
    #[error("{}: shard {shard} was interrupted ({why}) and lacks cases; `--resume` on its machine completes it", path.display())]
    Interrupted {
        /// The file.
        path: PathBuf,
        /// `K/N`.
        shard: String,
        /// What stopped it.
        why: String,
    },
    /// Two records that are not shards of one sweep.
    #[error("{} and {} are not shards of one sweep: {what}", first.display(), second.display())]
    Different {
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
        /// How they differ.
        what: String,
    },
    /// The same shard twice.
    #[error("shard {shard} is in both {} and {}", first.display(), second.display())]
    SameShard {
        /// `K/N`.
        shard: String,
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// A case in two shards.
    #[error("case `{id}` is in both {} and {}", first.display(), second.display())]
    DuplicateCase {
        /// The case.
        id: String,
        /// One file.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
    /// Shards not given.
    #[error("{} of {count} shards {} missing: {} (have {})", missing.len(), if missing.len() == 1 { "is" } else { "are" }, list(missing), have.join(", "))]
    Missing {
        /// The missing shards' indices, from 1.
        missing: Vec<usize>,
        /// How many shards the sweep has.
        count: usize,
        /// The files given.
        have: Vec<String>,
    },
    /// All shards given, yet cases missing.
    #[error("the shards hold {found} of the sweep's {expected} cases: {}", files.join(", "))]
    MissingCases {
        /// Cases found.
        found: usize,
        /// Cases the sweep has.
        expected: usize,
        /// The files given.
        files: Vec<String>,
    },
}

fn list(indices: &[usize]) -> String {
    indices
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Merges the records of every shard of one sweep into one record, as if
/// one machine had run the sweep, except that each case keeps the shard
/// it ran in (`case.shard`) and each shard its machine, start and memo
/// cache (`record.shards`): comparisons and the history tell the machines
/// apart ([`RunRecord::context_of`]).
///
/// The records are given with the files they came from, which errors name.
///
/// # Errors
///
/// [`MergeError`] when a record is not a shard's, was interrupted, belongs
/// to another commit, case set, split or plan, repeats a shard or a case,
/// or when shards are missing.
///
/// # Example
///
/// ```no_run
/// use nnbench::RunRecord;
///
/// let files = ["shard-1.json", "shard-2.json", "shard-3.json"];
/// let records = files
///     .iter()
///     .map(|f| Ok((f.into(), RunRecord::read(f)?)))
///     .collect::<Result<Vec<_>, nnbench::record::RecordError>>()?;
/// let run = nnbench_core::shard::merge(records)?;
/// run.write("run.json")?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merge(records: Vec<(PathBuf, RunRecord)>) -> Result<RunRecord, MergeError> {
    let mut shards: Vec<(PathBuf, ShardRecord, RunRecord)> = Vec::with_capacity(records.len());
    for (path, mut record) in records {
        let Some(shard) = record.shard.take() else {
            let why = if record.shards.is_empty() {
                "it ran the whole sweep: shards run with --shard K/N"
            } else {
                "it was merged already"
            };
            return Err(MergeError::NotAShard { path, why });
        };
        if let Some(why) = &record.interrupted {
            return Err(MergeError::Interrupted {
                path,
                shard: format!("{}/{}", shard.index, shard.count),
                why: why.clone(),
            });
        }
        shards.push((path, shard, record));
    }
    let Some((first_path, first, first_record)) = shards.first() else {
        return Err(MergeError::Empty);
    };
    for (path, shard, record) in &shards[1..] {
        let differ = |what: String| MergeError::Different {
            first: first_path.clone(),
            second: path.clone(),
            what,
        };
        if record.run != first_record.run {
            return Err(differ(format!(
                "benches `{}` and `{}`",
                first_record.run, record.run
            )));
        }
        let commit = |r: &RunRecord| r.context.git.as_ref().map(|g| g.commit.clone());
        if commit(record) != commit(first_record) {
            let show = |c: Option<String>| c.unwrap_or_else(|| "no git commit".into());
            return Err(differ(format!(
                "commits {} and {}",
                show(commit(first_record)),
                show(commit(record))
            )));
        }
        if shard.count != first.count {
            return Err(differ(format!(
                "split into {} and {} shards",
                first.count, shard.count
            )));
        }
        if shard.case_set != first.case_set || shard.cases != first.cases {
            return Err(differ(format!(
                "different case sets ({} cases, {} vs {} cases, {}): run every shard with the same binary and filters",
                first.cases, first.case_set, shard.cases, shard.case_set
            )));
        }
        if shard.plan != first.plan {
            return Err(differ(format!(
                "planned differently (plan {} vs {}): give every shard the same --shard-costs, or none",
                first.plan, shard.plan
            )));
        }
    }
    let (count, expected) = (first.count, first.cases);
    let mut by_index: HashMap<usize, &Path> = HashMap::new();
    for (path, shard, _) in &shards {
        if let Some(other) = by_index.insert(shard.index, path) {
            return Err(MergeError::SameShard {
                shard: format!("{}/{}", shard.index, shard.count),
                first: other.to_owned(),
                second: path.clone(),
            });
        }
    }
    let files = || -> Vec<String> {
        shards
            .iter()
            .map(|(p, ..)| p.display().to_string())
            .collect()
    };
    let missing: Vec<usize> = (1..=count).filter(|k| !by_index.contains_key(k)).collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            missing,
            count,
            have: files(),
        });
    }
    let mut owner: HashMap<&str, &Path> = HashMap::new();
    for (path, _, record) in &shards {
        for case in &record.cases {
            if let Some(other) = owner.insert(&case.id, path) {
                return Err(MergeError::DuplicateCase {
                    id: case.id.clone(),
                    first: other.to_owned(),
                    second: path.clone(),
                });
            }
        }
    }
    if owner.len() != expected {
        return Err(MergeError::MissingCases {
            found: owner.len(),
            expected,
            files: files(),
        });
    }
    drop(owner);
    shards.sort_by_key(|(_, shard, _)| shard.index);
    let Some((_, _, lowest)) = shards.first() else {
        return Err(MergeError::Empty);
    };
    let (run, context) = (lowest.run.clone(), lowest.context.clone());
    Ok(combine(run, context, shards))
}

/// The merged record of checked shards, in shard order, named `run` and
/// with the first shard's `context`.
fn combine(
    run: String,
    context: crate::record::RunContext,
    shards: Vec<(PathBuf, ShardRecord, RunRecord)>,
) -> RunRecord {
    let mut runs = Vec::with_capacity(shards.len());
    let mut cases = Vec::new();
    let mut warnings = Vec::new();
    let mut memo = RunMemoRecord::default();
    let (mut prefetch, mut isolate) = (false, false);
    let mut earliest: Option<String> = None;
    let mut limits = capacity::Limits::default();
    for (_, shard, record) in shards {
        limits = limits.or(capacity::Limits::of(&record));
        let started_at = record.started_at.clone();
        if earliest.as_ref().is_none_or(|e| started_at < *e) {
            earliest = Some(started_at.clone());
        }
        memo.counters += record.memo.counters;
        memo.entries_at_end += record.memo.entries_at_end;
        memo.resident_bytes_at_end += record.memo.resident_bytes_at_end;
        memo.disk_bytes_at_end += record.memo.disk_bytes_at_end;
        prefetch |= record.prefetch;
        isolate |= record.isolate;
        warnings.extend(
            record
                .warnings
                .iter()
                .map(|w| format!("shard {}/{}: {w}", shard.index, shard.count)),
        );
        cases.extend(record.cases.into_iter().map(|mut case| {
            case.shard = Some(shard.index);
            case
        }));
        runs.push(ShardRun {
            index: shard.index,
            count: shard.count,
            started_at,
            context: record.context,
            memo: record.memo,
            expected_cost: shard.expected_cost,
            cost_unit: shard.cost_unit,
        });
    }
    let memos = MemosRecord::of_cases(&cases, None, Vec::new());
    // Refitted over every shard's cases: a shard's own fit saw only its part.
    let scaling = crate::scaling::fit(&cases);
    // Under the limit the first shard that predicted one predicted under.
    let capacity = crate::scaling::capacities(&cases, limits);
    RunRecord {
        schema: SCHEMA,
        run,
        started_at: earliest.unwrap_or_default(),
        context,
        cases,
        memo,
        memos,
        scaling,
        capacity,
        warnings,
        prefetch,
        isolate,
        interrupted: None,
        shard: None,
        shards: runs,
        paired: None,
    }
}
