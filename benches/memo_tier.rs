//! The disk tier against recomputing, side by side in one run, for one
//! array memo of 512 MiB: recompute, reload from disk into memory, and a
//! memory-mapped view (whose resident memory grows only with the pages a
//! case touches), against the physical reference of `std::fs::read` of the
//! same file. The page cache is warm (the entry was just written).
//!
//! `cargo bench --bench memo_tier`

#[path = "support/harness.rs"]
mod harness;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use ndarray::{Array2, Ix2, s};
use nnbench::Memo;
use nnbench::store::{Format, MappedArray, MappedNpy, Npy};
use nnbench_core::measure::rss;
use nnbench_vocab::{format_bytes, format_ns};

fn side() -> usize {
    // 8192² f64 = 512 MiB; 1448² ≈ 16 MiB.
    if harness::test_mode() { 1448 } else { 8192 }
}

fn fill(side: usize) -> Array2<f64> {
    Array2::from_shape_fn((side, side), |(i, j)| (i ^ j) as f64 * 0.5)
}

/// Read into memory on reload.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Owned(usize);

impl Memo for Owned {
    type Value = Array2<f64>;
    fn compute(&self) -> nnbench::Result<Array2<f64>> {
        Ok(fill(self.0))
    }
    fn store(&self) -> Option<Box<dyn Format<Array2<f64>>>> {
        Some(Box::new(Npy))
    }
}

/// Memory-mapped on reload.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Mapped(usize);

impl Memo for Mapped {
    type Value = MappedArray<f64, Ix2>;
    fn compute(&self) -> nnbench::Result<MappedArray<f64, Ix2>> {
        Ok(MappedArray::from_array(fill(self.0)))
    }
    fn store(&self) -> Option<Box<dyn Format<MappedArray<f64, Ix2>>>> {
        Some(Box::new(MappedNpy))
    }
}

/// Time of `f` and the resident memory it added, measured while its
/// result is still held.
fn measure<T>(f: impl FnOnce() -> T) -> (T, Duration, u64) {
    let before = rss::current_bytes().unwrap_or(0);
    let start = Instant::now();
    let out = f();
    let elapsed = start.elapsed();
    let grown = rss::current_bytes().unwrap_or(0).saturating_sub(before);
    (out, elapsed, grown)
}

fn entry_files(dir: &PathBuf) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_dir(t.path()).ok())
        .flat_map(|e| e.flatten().map(|e| e.path()))
        .collect()
}

fn main() {
    if !harness::should_run("memo_tier") {
        return;
    }
    let side = side();
    let bytes = (side * side * 8) as u64;
    let dir = nnbench::record::target_dir()
        .join("nnbench")
        .join("memo-tier-bench");
    let _ = std::fs::remove_dir_all(&dir);

    // Recompute, with the tier off.
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::Off);
    let (value, compute_time, compute_rss) = measure(|| nnbench::memo::resolve(&Owned(side)));
    let expected = value.as_ref().map(|v| v.sum()).unwrap_or(f64::NAN);
    drop(value);
    nnbench::memo::clear();

    // Write both entries (compute + save), then reload each.
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::At(dir.clone()));
    let (_, save_time, _) = measure(|| drop(nnbench::memo::resolve(&Owned(side))));
    drop(nnbench::memo::resolve(&Mapped(side)));
    nnbench::memo::clear();

    let (owned, reload_time, reload_rss) = measure(|| nnbench::memo::resolve(&Owned(side)));
    let owned = owned.unwrap_or_else(|e| panic!("reload: {e:#}"));
    assert_eq!(
        owned.sum(),
        expected,
        "the reloaded array is the computed one"
    );
    drop(owned);
    nnbench::memo::clear();

    let (mapped, map_time, map_rss) = measure(|| nnbench::memo::resolve(&Mapped(side)));
    let mapped = mapped.unwrap_or_else(|e| panic!("map: {e:#}"));
    assert!(mapped.is_mapped());
    let rows = (side / 100).max(1);
    let (_, slice_time, slice_rss) =
        measure(|| black_box(mapped.view().slice(s![..rows, ..]).sum()));
    let (total, full_time, full_rss) = measure(|| mapped.view().sum());
    assert_eq!(total, expected, "the mapped array is the computed one");
    drop(mapped);
    nnbench::memo::clear();

    // The physical reference: reading the same file.
    let files = entry_files(&dir);
    let largest = files
        .iter()
        .max_by_key(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .cloned()
        .unwrap_or_default();
    let (file, read_time, read_rss) = measure(|| std::fs::read(&largest).unwrap_or_default());
    black_box(&file);
    drop(file);

    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "array memo of",
        "time",
        "vs fs::read",
        "RSS growth",
    ]);
    let ratio = |t: Duration| format!("{:.2}x", t.as_secs_f64() / read_time.as_secs_f64());
    let row = |what: &str, t: Duration, grown: u64| {
        [
            what.to_owned(),
            format_ns(t.as_nanos() as f64),
            ratio(t),
            format_bytes(grown),
        ]
    };
    table.add_row(row(
        &format!("{}: recompute", format_bytes(bytes)),
        compute_time,
        compute_rss,
    ));
    table.add_row(row("compute + save to the tier", save_time, 0));
    table.add_row(row(
        "reload into memory (checksum + read)",
        reload_time,
        reload_rss,
    ));
    table.add_row(row(
        "memory-mapped view (checksum + map)",
        map_time,
        map_rss,
    ));
    table.add_row(row("  then touch 1% of the rows", slice_time, slice_rss));
    table.add_row(row("  then read all of it", full_time, full_rss));
    table.add_row(row(
        "reference: std::fs::read of the entry",
        read_time,
        read_rss,
    ));
    harness::table(&table);
    // Mapping reads nothing; touching 1% of the rows makes about 1% resident.
    let touched = map_rss + slice_rss;
    harness::note(format!(
        "memory-mapped view: {} resident after touching 1% of {} {}",
        format_bytes(touched),
        format_bytes(bytes),
        // Pages counted, not time: the same in test mode.
        harness::verdict(
            "mapped view",
            touched <= bytes / 100 + (8 << 20),
            touched <= bytes / 100 + (8 << 20)
        )
    ));
    harness::note(format!(
        "warm page cache; RSS growth measured while the value is held{}",
        if harness::test_mode() {
            " (test mode: a small array, run with --bench to measure)"
        } else {
            ""
        }
    ));
    let _ = std::fs::remove_dir_all(&dir);
    harness::publish("memo_tier");
}
