//! A change that makes a family hold a fifth more memory an `n` fails
//! `nnbench compare` on its capacity: the largest `n` that fits in the
//! limit shrinks, and the verdict names the family and both predictions.
//! One test function in a binary of its own, because resident memory is
//! the whole process's.

mod support;

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use nnbench::memo::DiskTier;
use nnbench::{RunRecord, Runner};

/// What the family holds an `n`: above the most that glibc's allocator
/// keeps in its heap once freed (32 MiB), so that each run's peaks start
/// from what the process held before it, as a run in a new process does.
const UNIT: usize = 64 << 20;

/// Whether the family holds a fifth more an `n`: the change under test.
static HEAVIER: AtomicBool = AtomicBool::new(false);

/// Holds `n` units (a fifth more where [`HEAVIER`]) for the call, every
/// page written.
#[nnbench::product(n = [1, 2, 4, 8, 16], scaling = n, timing = once)]
fn grow(n: usize) -> u64 {
    let bytes = if HEAVIER.load(Ordering::SeqCst) {
        n * UNIT * 6 / 5
    } else {
        n * UNIT
    };
    let mut held = vec![0u8; bytes];
    for page in held.chunks_mut(4096) {
        page[0] = 1;
    }
    black_box(&held)
        .iter()
        .step_by(4096)
        .map(|&b| u64::from(b))
        .sum()
}

/// Under 8 GiB about 127 units fit: within ten times the largest size
/// measured, past which a capacity is not predicted.
fn run() -> RunRecord {
    Runner::from_args(["--capacity-limit", "8GiB"])
        .expect("the flag is known")
        .filter("grow/")
        .test_mode(true)
        .quiet(true)
        .disk_tier(DiskTier::Off)
        .run()
        .expect("the run")
}

#[test]
fn a_fifth_more_memory_an_n_fails_compare_naming_the_capacity_lost() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, record: &RunRecord| {
        let path = dir.path().join(name);
        record.write(&path).unwrap();
        path
    };
    let base_run = run();
    // Exported as a benchmark of its own, more being better.
    let bmf = nnbench_cli::export::bmf(&base_run);
    let fits = &bmf["grow"]["capacity"];
    let number = |key: &str| {
        fits[key]
            .as_f64()
            .unwrap_or_else(|| panic!("the capacity's {key} is a number: {bmf}"))
    };
    let (lower, value, upper) = (
        number("lower_value"),
        number("value"),
        number("upper_value"),
    );
    assert!(lower <= value && value <= upper && lower > 0.0, "{bmf}");
    let bigger = nnbench_cli::export::github(&base_run, false);
    assert!(
        bigger
            .as_array()
            .is_some_and(|entries| entries.iter().any(|e| e["name"] == "grow (capacity)")),
        "{bigger}"
    );
    let base = write("base.json", &base_run);
    let again = write("again.json", &run());
    HEAVIER.store(true, Ordering::SeqCst);
    let head = write("head.json", &run());
    HEAVIER.store(false, Ordering::SeqCst);

    // The cases' own memory figures are off, and so are the time and its
    // fitted power, which a busy machine moves: the capacity alone fails it.
    let compare = |head: &std::path::Path| {
        let output = support::tool()
            .args(["compare", base.to_str().unwrap(), head.to_str().unwrap()])
            .args([
                "--fail-on",
                "time=off,scaling=off,rss=off,heap=off,peak=off",
            ])
            .output()
            .unwrap();
        (output.status.code(), support::said(&output))
    };
    let (code, said) = compare(&head);
    assert_eq!(code, Some(1), "{said}");
    let line = said
        .lines()
        .find(|l| l.starts_with("capacity REGRESSED: grow: fits n ≈ "))
        .unwrap_or_else(|| panic!("{said}"));
    println!("{line}");
    assert!(line.contains("in 8.00 GiB"), "{line}");
    // A fifth more an n: about a sixth fewer n fit.
    let change: f64 = line
        .rsplit('(')
        .next()
        .and_then(|c| c.trim_end_matches("%)").parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((-19.0..=-14.0).contains(&change), "{line}");
    assert!(said.contains("1 capacity lost"), "{said}");
    // The same code again passes.
    let (code, said) = compare(&again);
    assert_eq!(code, Some(0), "{said}");
    assert!(
        said.contains("capacity unchanged: grow: fits n ≈ "),
        "{said}"
    );

    // The report says what the latest run fits, and draws it by run.
    let page = dir.path().join("report.html");
    let output = support::tool()
        .env("NNBENCH_HISTORY", "/no/such/history.sqlite")
        .arg("report")
        .args([&base, &head])
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    let html = std::fs::read_to_string(&page).unwrap();
    let latest = nnbench::RunRecord::read(&head).unwrap().capacity[0].to_string();
    assert!(latest.starts_with("grow: fits up to n ≈ "), "{latest}");
    assert!(
        html.contains(&latest),
        "{latest} is not in the report: {}",
        html.lines()
            .filter(|l| l.contains("fits"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        html.contains("grow: the largest n that fits, by commit"),
        "the capacity chart is not in the report"
    );
}
