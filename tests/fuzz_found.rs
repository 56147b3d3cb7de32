//! The inputs the fuzzers found to crash a reader (`fuzz/found/TARGET/`),
//! each fed again to the reader its target fuzzes: each returns an error
//! that names the file and what is wrong, or a value, and none panics. The
//! `.npy` header of unclosed brackets (a dict, then 18 lists), which the
//! literal parser takes exponentially long in their depth to refuse, is
//! refused before it is parsed.

use std::path::{Path, PathBuf};

use ndarray::{Ix1, Ix2, IxDyn};
use nnbench::{RunRecord, npy};

/// The inputs kept for the fuzz target `target`.
fn found(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/found")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// `read` on a copy of `input` in a folder of its own, whose error, if
/// any, must name the copy.
fn named_or_read<T, E: std::fmt::Display>(input: &Path, read: impl Fn(&Path) -> Result<T, E>) {
    let dir = tempfile::tempdir().expect("a folder");
    let copy = dir.path().join(input.file_name().expect("a file name"));
    std::fs::copy(input, &copy).expect("the input copied");
    if let Err(error) = read(&copy) {
        let said = error.to_string();
        assert!(
            said.contains(&copy.display().to_string()),
            "{}: the error does not name the file: {said}",
            input.display()
        );
    }
}

#[test]
fn every_npy_input_found_is_read_or_refused() {
    let inputs = found("npy");
    assert!(!inputs.is_empty(), "fuzz/found/npy holds the inputs found");
    for input in &inputs {
        named_or_read(input, |p| npy::read_header(p));
        named_or_read(input, |p| npy::read::<f64, IxDyn>(p));
        named_or_read(input, |p| npy::read::<f32, Ix2>(p));
        named_or_read(input, |p| npy::read::<i64, Ix1>(p));
        named_or_read(input, |p| npy::map::<f64, IxDyn>(p));
    }
}

#[test]
fn a_header_of_unclosed_brackets_is_refused_before_it_is_parsed() {
    let input = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/found/npy/nested-brackets.npy");
    let error = npy::read_header(&input)
        .expect_err("a corrupt header")
        .to_string();
    assert!(error.contains("nests brackets 19 deep"), "{error}");
}

#[test]
fn every_record_input_found_is_read_or_refused() {
    for input in found("record") {
        named_or_read(&input, |p| RunRecord::read(p));
    }
}
