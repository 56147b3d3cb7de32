//! The `.npy` reader on any bytes: the header alone, whole arrays of the
//! element types and dimensions a user asks for, and a memory-mapped view.
//! Each returns a value or an error, and allocates no more than the file
//! holds (libFuzzer's memory limit stops one that does).

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use ndarray::{Ix1, Ix2, IxDyn};
use nnbench::npy;

static DIR: LazyLock<tempfile::TempDir> =
    LazyLock::new(|| tempfile::tempdir().expect("a folder for the inputs"));

fuzz_target!(|bytes: &[u8]| {
    let path = DIR.path().join("input.npy");
    std::fs::write(&path, bytes).expect("the input written");
    let _ = npy::read_header(&path);
    let _ = npy::read::<f64, IxDyn>(&path);
    let _ = npy::read::<f32, Ix2>(&path);
    let _ = npy::read::<i64, Ix1>(&path);
    let _ = npy::read::<u8, IxDyn>(&path);
    let _ = npy::read::<bool, Ix1>(&path);
    if let Ok(mapped) = npy::map::<f64, IxDyn>(&path) {
        let _ = mapped.view().sum();
    }
});
