//! The seed sweep: three models (square `f64` matrices stored as `.npy`)
//! scored against one dataset, one model resident at a time.
//!
//! The matrices are generated deterministically under
//! `target/nnbench/sweep-data/` on first use; `NNBENCH_SWEEP_N` sets the
//! models' side (default 512: 2 MiB each; 4096 makes them 128 MiB, 8000
//! the 512 MB of `benches/seed_sweep.rs`).
//!
//! `cargo bench --bench sweep -- --out run.json`

#[path = "support/matrices.rs"]
mod matrices;
#[path = "support/sweep_family.rs"]
mod sweep_family;

nnbench::main!();
