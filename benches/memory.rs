//! Memory figures, each measured side by side in one run:
//!
//! 1. the seed sweep with 128 MiB models: the run's peak resident memory
//!    divided by the largest model, with automatic eviction and without,
//!    and the same for Python nnbench 0.4 with numpy (the peer of
//!    `benches/seed_sweep.rs`) with its teardown's eviction and without;
//! 2. the per-case cost of resetting and reading the peak, in a small
//!    process and with 1 GiB and 4 GiB resident;
//! 3. the cost per allocation of the tracking allocator against the system
//!    allocator alone.
//!
//! `cargo bench --bench memory` (`NNBENCH_MEMORY_N` sets the models' side;
//! default 4096, 128 MiB each).

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
#[path = "support/matrices.rs"]
mod matrices;
#[path = "support/peer.rs"]
mod peer;
use harness::stats;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use ndarray::Array2;
use nnbench::Runner;
use nnbench::alloc::TrackingAllocator;
use nnbench_core::measure::rss;
use nnbench_vocab::{format_bytes, format_ns};
use stats::median;

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator::system();

const MIB: u64 = 1 << 20;

fn side() -> usize {
    if harness::test_mode() {
        return 256;
    }
    std::env::var("NNBENCH_MEMORY_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(4096)
}

/// The seed sweep without any teardown: only the runner evicts.
#[nnbench::product(model = matrices::models(side()), data = [matrices::dataset(side())])]
fn memory_sweep(model: &Array2<f64>, data: &Array2<f64>) -> f64 {
    matrices::accuracy(model, data)
}

/// The largest per-case peak of a run of the sweep.
fn sweep_peak(keep_memos: bool) -> u64 {
    let record = Runner::new()
        .filter("memory_sweep/")
        .timing(nnbench::Timing::Once)
        .keep_memos(keep_memos)
        .quiet(true)
        .run()
        .unwrap_or_else(|e| panic!("the sweep could not run: {e:#}"));
    assert_eq!(
        record.failed(),
        0,
        "the sweep failed: {:?}",
        record.cases[0].error
    );
    nnbench::memo::clear();
    record
        .cases
        .iter()
        .filter_map(|c| c.memory.rss_peak_bytes)
        .max()
        .unwrap_or(0)
}

/// The peak resident memory of Python nnbench's run of the same sweep on
/// the same files, evicting each model in its teardown or keeping all.
fn python_sweep_peak(python: &std::path::Path, keep: bool) -> Result<u64, String> {
    let data = nnbench::record::target_dir().join("nnbench/sweep-data");
    Ok(peer::sweep(python, &data, side(), matrices::BATCH, keep)?.1)
}

/// Median over `batches` of the time per call of `f`, called `calls` times
/// a batch.
fn median_ns(batches: usize, calls: u32, f: impl FnMut()) -> f64 {
    median(batch_ns(batches, calls, f))
}

/// The time per call of each of `batches` batches of `calls` calls.
fn batch_ns(batches: usize, calls: u32, mut f: impl FnMut()) -> Vec<f64> {
    (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(calls)
        })
        .collect()
}

/// What the runner does per case for resident memory: reset, read now,
/// read the peak, read now again.
fn reset_and_read() {
    black_box(rss::reset_peak());
    black_box(rss::current_bytes());
    black_box(rss::peak_bytes());
    black_box(rss::current_bytes());
}

/// Holds `bytes` resident while measuring [`reset_and_read`].
fn reset_cost_with_resident(bytes: usize) -> f64 {
    let mut ballast = vec![0u8; bytes];
    for page in ballast.chunks_mut(4096) {
        page[0] = 1;
    }
    let cost = median_ns(21, 200, reset_and_read);
    black_box(&ballast);
    cost
}

/// Median ns per alloc + dealloc of 64 bytes through `allocator`, with
/// batches alternating between the two allocators so both see the same
/// machine.
fn allocation_costs() -> (f64, f64) {
    let layout = Layout::from_size_align(64, 8).expect("a valid layout");
    let pair = |allocator: &dyn GlobalAlloc| {
        // SAFETY: the pointer comes from the same allocator with the same layout.
        unsafe {
            let ptr = allocator.alloc(layout);
            black_box(ptr);
            if !ptr.is_null() {
                allocator.dealloc(ptr, layout);
            }
        }
    };
    let (mut system, mut tracked) = (Vec::new(), Vec::new());
    for _ in 0..31 {
        system.push(median_ns(1, 100_000, || pair(&System)));
        tracked.push(median_ns(1, 100_000, || pair(&ALLOC)));
    }
    (median(&system), median(&tracked))
}

fn main() {
    if !harness::should_run("memory") {
        return;
    }

    let largest = (side() * side() * std::mem::size_of::<f64>()) as u64;
    let auto = sweep_peak(false);
    let kept = sweep_peak(true);
    // The Python runs read the files the sweep above wrote.
    let python = peer::python().and_then(|python| {
        Ok((
            python_sweep_peak(&python, false)?,
            python_sweep_peak(&python, true)?,
        ))
    });
    let ratio = |peak: u64| peak as f64 / largest as f64;
    let allowance = 1.05 + 16.0 * MIB as f64 / largest as f64;

    let smalls = batch_ns(21, 2000, reset_and_read);
    let small = median(&smalls);
    let (one, four) = if harness::test_mode() {
        (16 << 20, 64 << 20)
    } else {
        (1 << 30, 4 << 30)
    };
    let one_gib = reset_cost_with_resident(one);
    let four_gib = reset_cost_with_resident(four);
    let (system, tracked) = allocation_costs();

    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["figure", "measured", "target / reference"]);
    table.add_row([
        format!(
            "sweep peak RSS / largest model ({}), automatic eviction",
            format_bytes(largest)
        ),
        format!("{:.3} ({})", ratio(auto), format_bytes(auto)),
        // One sweep's peak: memory, which the machine's mood does not
        // move; test mode's models are kilobytes, and the process's own
        // pages, unoptimized, may take twice the allowance's 16 MiB.
        format!(
            "<= 1.05 + 16 MiB = {allowance:.3} {}",
            harness::verdict(
                "sweep peak",
                ratio(auto) <= allowance,
                ratio(auto) <= allowance + 16.0 * MIB as f64 / largest as f64
            )
        ),
    ]);
    table.add_row([
        "sweep peak RSS / largest model, --keep-memos".to_owned(),
        format!("{:.3} ({})", ratio(kept), format_bytes(kept)),
        String::new(),
    ]);
    let python_rows = match python {
        Ok((evicting, keeping)) => [
            format!("{:.3} ({})", ratio(evicting), format_bytes(evicting)),
            format!("{:.3} ({})", ratio(keeping), format_bytes(keeping)),
        ],
        Err(e) => [
            harness::peer_missing("Python nnbench", &e),
            "not measured".to_owned(),
        ],
    };
    let [evicting, keeping] = python_rows;
    table.add_row([
        "  Python nnbench 0.4 + numpy, evicting in its teardown".to_owned(),
        evicting,
        String::new(),
    ]);
    table.add_row([
        "  Python nnbench 0.4 + numpy, no teardown".to_owned(),
        keeping,
        String::new(),
    ]);
    table.add_row([
        "reset + read of the peak per case, small process".to_owned(),
        format_ns(small),
        harness::judged(
            "reset + read",
            &smalls,
            Goal::AtMost(20_000.0),
            harness::DEBUG_SLACK,
            format_ns,
        ),
    ]);
    table.add_row([
        format!("  with {} resident", format_bytes(one as u64)),
        format!("{} ({:.2}x small)", format_ns(one_gib), one_gib / small),
        String::new(),
    ]);
    table.add_row([
        format!("  with {} resident", format_bytes(four as u64)),
        format!("{} ({:.2}x small)", format_ns(four_gib), four_gib / small),
        String::new(),
    ]);
    table.add_row([
        "alloc + dealloc of 64 B, system allocator".to_owned(),
        format_ns(system),
        String::new(),
    ]);
    table.add_row([
        "  through TrackingAllocator".to_owned(),
        format!(
            "{} ({:.2}x, +{:.1} ns)",
            format_ns(tracked),
            tracked / system,
            tracked - system
        ),
        String::new(),
    ]);
    harness::table(&table);
    harness::note(format!(
        "medians of repeated batches; peak per case from {}",
        rss_method()
    ));
    harness::publish("memory");
}

fn rss_method() -> &'static str {
    if rss::reset_peak() {
        "VmHWM, reset per case"
    } else {
        "1 ms sampling"
    }
}
