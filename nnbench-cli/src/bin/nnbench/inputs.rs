//! What a side of a comparison names: a record file, a folder of records,
//! or a baseline saved by `cargo bench -- --save-baseline NAME`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use nnbench_core::RunRecord;

/// Why an input could not be used: said with the file or name at fault.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error(transparent)]
    Record(#[from] nnbench_core::RecordError),
    #[error("{}: {source}", path.display())]
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: no such file or folder", .0.display())]
    Missing(PathBuf),
    #[error(transparent)]
    Shards(#[from] nnbench_core::shard::MergeError),
    #[error("{}: holds no run record (*.json)", .0.display())]
    EmptyFolder(PathBuf),
    #[error("`{name}` is neither a file, a folder nor a saved baseline (looked for {pattern})")]
    Unknown { name: String, pattern: String },
    #[error("case `{id}` is in both {} and {}: records of one side must not share a case", first.display(), second.display())]
    Duplicate {
        id: String,
        first: PathBuf,
        second: PathBuf,
    },
}

/// The record `name` stands for, and how to call it in reports.
pub fn load(name: &str) -> Result<(RunRecord, String), InputError> {
    let path = Path::new(name);
    if path.is_file() {
        return Ok((RunRecord::read(path)?, name.to_owned()));
    }
    if path.is_dir() {
        let files = json_files(path)?;
        if files.is_empty() {
            return Err(InputError::EmptyFolder(path.to_owned()));
        }
        return Ok((merge(&files)?, name.to_owned()));
    }
    let looks_like_a_path = name.contains(std::path::MAIN_SEPARATOR)
        || name.contains('/')
        || path.extension().is_some();
    if looks_like_a_path {
        return Err(InputError::Missing(path.to_owned()));
    }
    let baselines = baseline_files(name);
    if baselines.is_empty() {
        return Err(InputError::Unknown {
            name: name.to_owned(),
            pattern: baselines_dir()
                .join("*")
                .join("baselines")
                .join(format!("{name}.json"))
                .display()
                .to_string(),
        });
    }
    Ok((merge(&baselines)?, format!("baseline {name}")))
}

/// `target/nnbench`, under `CARGO_TARGET_DIR` when it is set.
fn baselines_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| PathBuf::from("target"), PathBuf::from)
        .join("nnbench")
}

/// `target/nnbench/<bench>/baselines/<name>.json` of every bench.
fn baseline_files(name: &str) -> Vec<PathBuf> {
    let Ok(benches) = std::fs::read_dir(baselines_dir()) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = benches
        .flatten()
        .map(|bench| bench.path().join("baselines").join(format!("{name}.json")))
        .filter(|file| file.is_file())
        .collect();
    files.sort();
    files
}

/// The records of a folder: its `*.json` files, or, in a folder laid out
/// as `target/nnbench` is, each bench's `latest.json`.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let entries = std::fs::read_dir(dir).map_err(|source| InputError::Folder {
        path: dir.to_owned(),
        source,
    })?;
    let paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    let mut files: Vec<PathBuf> = paths
        .iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .cloned()
        .collect();
    if files.is_empty() {
        files = paths
            .iter()
            .map(|p| p.join("latest.json"))
            .filter(|p| p.is_file())
            .collect();
    }
    files.sort();
    Ok(files)
}

/// One record holding the cases of all of `files`: the shards of one
/// sweep merged as `nnbench merge` does, each case with its machine;
/// otherwise with the first one's context.
fn merge(files: &[PathBuf]) -> Result<RunRecord, InputError> {
    let records = files
        .iter()
        .map(|file| Ok((file.clone(), RunRecord::read(file)?)))
        .collect::<Result<Vec<_>, InputError>>()?;
    if records.len() > 1 && records.iter().all(|(_, r)| r.shard.is_some()) {
        return Ok(nnbench_core::shard::merge(records)?);
    }
    let mut merged: Option<RunRecord> = None;
    let mut owner: HashMap<String, PathBuf> = HashMap::new();
    for (file, record) in records {
        for case in &record.cases {
            if let Some(first) = owner.insert(case.id.clone(), file.clone()) {
                return Err(InputError::Duplicate {
                    id: case.id.clone(),
                    first,
                    second: file,
                });
            }
        }
        match &mut merged {
            None => merged = Some(record),
            Some(all) => {
                all.cases.extend(record.cases);
                all.warnings.extend(record.warnings);
            }
        }
    }
    merged.ok_or_else(|| InputError::EmptyFolder(PathBuf::new()))
}
