//! How fast `nnbench::npy::read` loads a large array from a warm page
//! cache, side by side in one run with:
//!
//! - ndarray-npy's `read_npy` through a buffered reader (what `npy::read`
//!   did before: a freshly faulted 4 KiB-page buffer);
//! - the physical reference: one `read` of the file into a buffer advised
//!   for transparent huge pages;
//! - numpy's `np.load`, where `python3 -c "import numpy"` works.
//!
//! Medians of alternating rounds; the ratios are to the reference.
//!
//! `cargo bench --bench npy_load` (`NNBENCH_NPY_MIB` sets the array's size;
//! default 512).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/stats.rs"]
mod stats;

use std::io::{BufReader, Read};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use ndarray::Array2;
use ndarray_npy::ReadNpyExt;
use stats::median;

fn mib() -> usize {
    if harness::test_mode() {
        return 8;
    }
    std::env::var("NNBENCH_NPY_MIB")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(512)
}

/// One `read` of the whole file into a buffer advised for huge pages.
fn reference(path: &Path) -> usize {
    let len = std::fs::metadata(path).expect("metadata").len() as usize;
    let mut buffer: Vec<u8> = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = (buffer.as_mut_ptr() as usize).next_multiple_of(HUGE);
        let end = (buffer.as_mut_ptr() as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: advice on memory this buffer owns.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    std::fs::File::open(path)
        .expect("open")
        .read_to_end(&mut buffer)
        .expect("read");
    buffer.len()
}

/// `np.load` of the file, timed inside Python, over `rounds` loads.
fn numpy(path: &Path, rounds: usize) -> Option<Vec<Duration>> {
    let script = format!(
        "import time, numpy as np\nfor _ in range({rounds}):\n    t = time.perf_counter(); a = np.load({:?}); print(time.perf_counter() - t); del a",
        path.display().to_string()
    );
    let out = Command::new("python3")
        .args(["-c", &script])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let times: Vec<Duration> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .map(Duration::from_secs_f64)
        .collect();
    (!times.is_empty()).then_some(times)
}

fn main() {
    if !harness::should_run("npy_load") {
        return;
    }
    let mib = mib();
    let side = ((mib << 20) / 8).isqrt();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("model.npy");
    nnbench::npy::write(&path, &Array2::<f64>::from_elem((side, side), 0.5)).expect("write");
    let rounds = if harness::test_mode() { 1 } else { 7 };
    let (mut direct, mut buffered, mut physical) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let start = Instant::now();
        let array: Array2<f64> = nnbench::npy::read(&path).expect("npy::read");
        direct.push(start.elapsed());
        assert_eq!(array[[side - 1, side - 1]], 0.5);
        drop(array);

        let start = Instant::now();
        let file = std::fs::File::open(&path).expect("open");
        let array = Array2::<f64>::read_npy(BufReader::new(file)).expect("read_npy");
        buffered.push(start.elapsed());
        drop(array);

        let start = Instant::now();
        std::hint::black_box(reference(&path));
        physical.push(start.elapsed());
    }
    let reference = median(physical.iter().map(Duration::as_secs_f64));
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["loader", "time", "vs. the reference"]);
    let mut row = |name: &str, times: Vec<Duration>| {
        let m = median(times.iter().map(Duration::as_secs_f64));
        table.add_row([
            name.to_owned(),
            format!("{:.1} ms", m * 1e3),
            format!("{:.2}x", m / reference),
        ]);
        m
    };
    let ours = row("nnbench::npy::read", direct);
    row("ndarray-npy read_npy (buffered)", buffered);
    row(
        "one read into a huge-page buffer (the reference)",
        vec![Duration::from_secs_f64(reference)],
    );
    let numpy = numpy(&path, rounds).map(|times| row("numpy np.load", times));
    harness::note(format!(
        "loading a {side}x{side} f64 array ({mib} MiB), warm page cache, median of {rounds}:"
    ));
    harness::table(&table);
    match numpy {
        Some(np) => harness::note(format!(
            "npy::read / np.load: {:.2} (target <= 1.25) {}",
            ours / np,
            harness::verdict(ours / np <= 1.25)
        )),
        None => harness::note("numpy np.load: not measured (python3 with numpy not found)"),
    }
    harness::note(format!(
        "npy::read / reference: {:.2} (target <= 1.25) {}",
        ours / reference,
        harness::verdict(ours / reference <= 1.25)
    ));
    harness::publish("npy_load");
}
