//! How fast `nnbench::npy::read` loads a large array from a warm page
//! cache, side by side in one run with:
//!
//! - ndarray-npy's `read_npy` through a buffered reader (what `npy::read`
//!   did before: a freshly faulted 4 KiB-page buffer);
//! - the physical reference: one `read` of the file into a buffer advised
//!   for transparent huge pages;
//! - numpy's `np.load`, in the Python peer's environment
//!   (`scripts/python-peer.sh`, from PyPI, cached).
//!
//! Medians of alternating rounds; the ratios are to the reference, each
//! round's own, judged on their medians' 95% bounds.
//!
//! `cargo bench --bench npy_load` (`NNBENCH_NPY_MIB` sets the array's size;
//! default 512).

#[path = "support/harness.rs"]
mod harness;
#[path = "support/peer.rs"]
mod peer;
use harness::Goal;
use harness::stats;

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

/// `np.load` of the file, timed inside the peer's Python, over `rounds`
/// loads.
fn numpy(path: &Path, rounds: usize) -> Result<Vec<Duration>, String> {
    let script = format!(
        "import time, numpy as np\nfor _ in range({rounds}):\n    t = time.perf_counter(); a = np.load({:?}); print(time.perf_counter() - t); del a",
        path.display().to_string()
    );
    let python = peer::python()?;
    let out = Command::new(&python)
        .args(["-c", &script])
        .output()
        .map_err(|e| format!("{}: {e}", python.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            python.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let times: Vec<Duration> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .map(Duration::from_secs_f64)
        .collect();
    if times.len() == rounds {
        Ok(times)
    } else {
        Err(format!("{} times of {rounds} loads printed", times.len()))
    }
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
    let rounds = if harness::test_mode() { 1 } else { 9 };
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
    let seconds =
        |times: &[Duration]| -> Vec<f64> { times.iter().map(Duration::as_secs_f64).collect() };
    let reference = median(seconds(&physical));
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["loader", "time", "vs. the reference"]);
    let mut row = |name: &str, times: &[Duration]| {
        let m = median(seconds(times));
        table.add_row([
            name.to_owned(),
            format!("{:.1} ms", m * 1e3),
            format!("{:.2}x", m / reference),
        ]);
    };
    row("nnbench::npy::read", &direct);
    row("ndarray-npy read_npy (buffered)", &buffered);
    row(
        "one read into a huge-page buffer (the reference)",
        &physical,
    );
    let numpy = numpy(&path, rounds);
    if let Ok(times) = &numpy {
        row("numpy np.load", times);
    }
    harness::note(format!(
        "loading a {side}x{side} f64 array ({mib} MiB), warm page cache, median of {rounds}:"
    ));
    harness::table(&table);
    let ratios = |to: &[Duration]| -> Vec<f64> {
        direct
            .iter()
            .zip(to)
            .map(|(d, t)| d.as_secs_f64() / t.as_secs_f64())
            .collect()
    };
    let ratio = |figure: &str, to: &[Duration]| {
        harness::judged(
            figure,
            &ratios(to),
            Goal::AtMost(1.25),
            harness::DEBUG_SLACK,
            |v| format!("{v:.2}"),
        )
    };
    match &numpy {
        Ok(times) => harness::note(format!(
            "npy::read / np.load: {}",
            ratio("npy::read / np.load", times)
        )),
        Err(why) => harness::note(harness::peer_missing("numpy np.load", why)),
    }
    harness::note(format!(
        "npy::read / reference: {}",
        ratio("npy::read / reference", &physical)
    ));
    harness::publish("npy_load");
}
