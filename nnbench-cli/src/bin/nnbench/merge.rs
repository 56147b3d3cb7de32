//! `nnbench merge`: one record from the records of a sweep's shards.

use std::path::{Path, PathBuf};

use nnbench_core::RunRecord;

/// The record files `inputs` name: files as given, folders searched
/// (recursively, as artifact downloads nest them) for `*.json`.
fn files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for input in inputs {
        if input.is_file() {
            files.push(input.clone());
        } else if input.is_dir() {
            let before = files.len();
            walk(input, &mut files)?;
            if files.len() == before {
                return Err(format!("{}: holds no record (*.json)", input.display()));
            }
        } else {
            return Err(format!("{}: no such file or folder", input.display()));
        }
    }
    Ok(files)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "json") {
            out.push(path);
        }
    }
    Ok(())
}

/// Merges the shards' records `inputs` into `out`.
pub fn run(inputs: &[PathBuf], out: &Path) -> Result<(), String> {
    let mut records = Vec::new();
    for file in files(inputs)? {
        let record = RunRecord::read(&file).map_err(|e| e.to_string())?;
        records.push((file, record));
    }
    let merged = nnbench_core::shard::merge(records).map_err(|e| e.to_string())?;
    merged.write(out).map_err(|e| e.to_string())?;
    eprintln!(
        "merged {} shards ({} cases, {} failed) into {}",
        merged.shards.len(),
        merged.cases.len(),
        merged.failed(),
        out.display()
    );
    Ok(())
}
