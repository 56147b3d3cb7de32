//! Where nnbench keeps its files: under cargo's target folder, in
//! `target/nnbench/` (each bench's records and baselines, the disk tier of
//! memos, the history).

use std::path::{Path, PathBuf};

/// Cargo's target folder, where bench binaries keep their records and
/// benches can keep the data they generate: `CARGO_TARGET_DIR` if set, else
/// the folder above the running executable that cargo marked with
/// `CACHEDIR.TAG`, else `target` in the current folder.
///
/// # Example
///
/// ```
/// let data = nnbench::record::target_dir().join("nnbench").join("data");
/// assert!(data.ends_with("nnbench/data"));
/// ```
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return dir.into();
    }
    std::env::current_exe()
        .ok()
        .and_then(|exe| {
            exe.ancestors()
                .skip(1)
                .find(|dir| dir.join("CACHEDIR.TAG").is_file())
                .map(Path::to_owned)
        })
        .unwrap_or_else(|| "target".into())
}

/// `target/nnbench`.
pub(crate) fn nnbench_dir() -> PathBuf {
    target_dir().join("nnbench")
}

/// Where bench `bench` keeps `latest.json`, its progress and baselines.
pub(crate) fn bench_dir(bench: &str) -> PathBuf {
    nnbench_dir().join(bench)
}

/// Baseline `name` of the bench whose records go to `dir`.
pub(crate) fn baseline_path(dir: &Path, name: &str) -> PathBuf {
    dir.join("baselines").join(format!("{name}.json"))
}

/// The default folder of the memos' disk tier.
pub(crate) fn memo_cache_dir() -> PathBuf {
    nnbench_dir().join("memo-cache")
}
