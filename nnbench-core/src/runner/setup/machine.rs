//! The machine's roofs for a run: measured once per machine (a few
//! seconds), then read from `target/nnbench/machine/<key>.json`, keyed as
//! `nnbench history` keys its machines, so that a cached machine adds
//! nothing to a run.

use std::path::{Path, PathBuf};

use crate::record::{MachineContext, MachineRoofs, RunContext};

/// Why a machine's roofs could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MachineError {
    /// nnbench-core was built without optimization: its kernels would
    /// read the roofs many times low.
    #[error(
        "the roofs are measured by an optimized build only (nnbench-core here was built without optimization, which reads them many times low): run `cargo bench`, or the tool built with `--release`"
    )]
    Unoptimized,
    /// The cache could not be written.
    #[error("{}: the measured roofs could not be kept: {source}", path.display())]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// Whether this build of nnbench-core measures roofs that mean something.
const OPTIMIZED: bool = !cfg!(debug_assertions);

/// The cache file of the machine `key` under `dir` (`target/nnbench`).
fn cache_path(dir: &Path, key: &str) -> PathBuf {
    dir.join("machine").join(format!("{key}.json"))
}

/// The roofs kept for `key` under `dir`, marked as taken from the cache;
/// `None` where there are none, or the file does not read as roofs (it
/// is measured again and written over).
fn cached(dir: &Path, key: &str) -> Option<MachineRoofs> {
    let text = std::fs::read(cache_path(dir, key)).ok()?;
    let mut roofs: MachineRoofs = serde_json::from_slice(&text).ok()?;
    roofs.method.cached = true;
    Some(roofs)
}

/// The roofs of the machine `context` describes: from the cache under
/// `dir` unless `again`, else measured now and kept there.
pub(crate) fn roofs_in(
    dir: &Path,
    context: &RunContext,
    again: bool,
) -> Result<MachineRoofs, MachineError> {
    let key = context.machine_key();
    let kept = cached(dir, &key);
    // Roofs kept from a busy machine are measured again once it is quiet:
    // measured while it is still busy, they would read as low again, and
    // each run would pay for them.
    let usable =
        |r: &&MachineRoofs| !r.method.noisy || crate::measure::busy::before().after().noisy();
    if !again && let Some(roofs) = kept.as_ref().filter(usable) {
        return Ok(roofs.clone());
    }
    if !OPTIMIZED {
        // What a busy machine measured beats none; a measurement asked
        // for, this build cannot give.
        return kept.filter(|_| !again).ok_or(MachineError::Unoptimized);
    }
    // Each roof is the best either measurement saw.
    let measured = crate::measure::roofs::measure();
    let roofs = match kept.filter(|k| k.method.noisy && !again) {
        Some(kept) => best_of(measured, &kept),
        None => measured,
    };
    let path = cache_path(dir, &key);
    crate::atomic_file::write(&path, |file| serde_json::to_writer_pretty(file, &roofs)).map_err(
        |e| MachineError::Cache {
            path: path.clone(),
            source: match e {
                crate::atomic_file::WriteError::Io(e) => e,
                crate::atomic_file::WriteError::Fill(e) => e.into(),
            },
        },
    )?;
    Ok(roofs)
}

/// This machine, as a run's context describes it (without the git
/// repository): its host, toolchain and GPUs, which its key is made of.
///
/// # Example
///
/// ```
/// let here = nnbench_core::machine::this_machine();
/// println!("{}: {}", here.machine_key(), here.machine_description());
/// ```
pub fn this_machine() -> RunContext {
    let mut context = super::provenance::collect(Path::new("."), Vec::new());
    context.git = None;
    context
}

/// The roofs of the machine `context` describes (see [`this_machine`]):
/// from its cache under `target/nnbench/machine/` unless `again`, else
/// measured now, in a few seconds, and kept there.
///
/// # Example
///
/// ```no_run
/// let here = nnbench_core::machine::this_machine();
/// match nnbench_core::machine::roofs(&here, false) {
///     Ok(roofs) => println!("{:.0} GFLOP/s f64 on one core", roofs.flops_f64.one_core / 1e9),
///     Err(why) => eprintln!("no roofs: {why}"),
/// }
/// ```
pub fn roofs(context: &RunContext, again: bool) -> Result<MachineRoofs, MachineError> {
    roofs_in(&crate::paths::nnbench_dir(), context, again)
}

/// `measured`, each roof raised to `kept`'s where that was higher: a roof
/// is the most the machine does, and a busy machine only reads it low.
fn best_of(mut measured: MachineRoofs, kept: &MachineRoofs) -> MachineRoofs {
    for (now, before) in [
        (&mut measured.flops_f32, kept.flops_f32),
        (&mut measured.flops_f64, kept.flops_f64),
        (&mut measured.bandwidth, kept.bandwidth),
    ] {
        now.one_core = now.one_core.max(before.one_core);
        now.all_cores = now.all_cores.max(before.all_cores);
    }
    measured
}

/// The machine of a run in `context`: its key, and its roofs where a
/// selected case declares its work (`needed`), from the cache, else
/// measured, except in test mode, which measures nothing.
pub(crate) fn for_run(context: &RunContext, needed: bool, test_mode: bool) -> MachineContext {
    let dir = crate::paths::nnbench_dir();
    let mut machine = MachineContext {
        key: context.machine_key(),
        ..MachineContext::default()
    };
    if !needed {
        return machine;
    }
    let found = if test_mode {
        cached(&dir, &machine.key).ok_or_else(|| {
            "not measured in test mode: `cargo bench` measures them once for this machine".into()
        })
    } else {
        roofs_in(&dir, context, false).map_err(|e| e.to_string())
    };
    match found {
        Ok(roofs) => machine.roofs = Some(roofs),
        Err(why) => machine.roofs_reason = Some(why),
    }
    machine
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> RunContext {
        serde_json::from_value(serde_json::json!({
            "host": {"arch": "x86_64", "cores": 2}, "git": null, "nnbench": "0.1.0",
        }))
        .unwrap()
    }

    fn roofs() -> crate::record::MachineRoofs {
        crate::record::machine::example_roofs()
    }

    #[test]
    fn a_machine_with_roofs_kept_for_its_key_takes_them_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let context = context();
        let path = cache_path(dir.path(), &context.machine_key());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_vec(&roofs()).unwrap()).unwrap();
        let found = roofs_in(dir.path(), &context, false).unwrap();
        assert!(found.method.cached);
        assert_eq!(found.flops_f64.one_core, 1e11);
        // Another machine has none kept.
        let mut other = context.clone();
        other.host.cores = 64;
        assert!(cached(dir.path(), &other.machine_key()).is_none());
    }

    #[test]
    fn roofs_measured_again_keep_the_best_each_saw() {
        let mut busy = roofs();
        busy.method.noisy = true;
        busy.flops_f64.one_core = 5e10;
        busy.bandwidth.all_cores = 9e10;
        let best = best_of(busy, &roofs());
        assert_eq!(best.flops_f64.one_core, 1e11, "the kept one was higher");
        assert_eq!(best.bandwidth.all_cores, 9e10, "the new one was higher");
        assert!(best.method.noisy, "as the new measurement says");
    }

    #[test]
    fn a_corrupt_cache_is_no_cache() {
        let dir = tempfile::tempdir().unwrap();
        let context = context();
        let path = cache_path(dir.path(), &context.machine_key());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"{\"flops_f32\": ").unwrap();
        assert!(cached(dir.path(), &context.machine_key()).is_none());
        if !OPTIMIZED {
            let error = roofs_in(dir.path(), &context, false).unwrap_err();
            assert!(error.to_string().contains("optimized build"), "{error}");
        }
    }
}
