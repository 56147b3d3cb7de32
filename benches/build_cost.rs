//! What depending on nnbench costs a user's build: cold `cargo bench
//! --no-run` of four crates of one bench each, side by side against one
//! warmed registry: a divan hello, a criterion hello, the floor (a crate
//! that depends on exactly the packages nnbench is built on: criterion
//! without default features, ndarray, ndarray-npy, serde, serde_json,
//! inventory, sysinfo, syn), and the README's quick start against this
//! workspace's packages packed as crates.io would serve them. Each build
//! starts from an empty target folder; the floor and the quick start are
//! built twice, in the order floor, quick start, quick start, floor, so
//! that the machine's drift falls on both alike. Prints the packages
//! (`cargo tree`), seconds and target folder of each, and the quick
//! start's ratios to the floor. Goals: time within 1.4x the floor's, at
//! most 90 packages, the target folder within 1.3x the floor's.
//!
//! In test mode nothing is built: the floor's and the quick start's
//! packages are counted from the workspace's lock file, offline.
//!
//! `scripts/figures.sh build_cost`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
#[path = "../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench_vocab::format_bytes;
use support::quick_start::{packed, quick_start_crate, workspace};

/// The packages of the quick start's graph, at most.
const PACKAGES_GOAL: usize = 90;
/// The quick start's cold build over the floor's, at most.
const TIME_GOAL: f64 = 1.4;
/// The quick start's target folder over the floor's, at most.
const SIZE_GOAL: f64 = 1.3;

const DIVAN_BENCH: &str = r#"fn main() {
    divan::main();
}

#[divan::bench]
fn hello() -> u64 {
    divan::black_box(2) + 2
}
"#;

const CRITERION_BENCH: &str = r#"use criterion::{Criterion, criterion_group, criterion_main};

fn hello(c: &mut Criterion) {
    c.bench_function("hello", |b| b.iter(|| std::hint::black_box(2) + 2));
}

criterion_group!(benches, hello);
criterion_main!(benches);
"#;

const FLOOR_DEPENDENCIES: &str = r#"criterion = { version = "0.8", default-features = false }
ndarray = "0.16"
ndarray-npy = { version = "0.9", default-features = false }
serde = { version = "1", features = ["derive"] }
serde_json = "1"
inventory = "0.3"
sysinfo = { version = "0.38", default-features = false, features = ["system"] }
syn = { version = "2", features = ["full"] }
"#;

/// Uses each of the floor's packages, so that each is built and linked.
const FLOOR_BENCH: &str = r#"use criterion::{Criterion, criterion_group, criterion_main};

#[derive(serde::Serialize)]
struct Figure(f64);

pub struct Family(&'static str);
inventory::collect!(Family);
inventory::submit!(Family("hello"));

fn hello(c: &mut Criterion) {
    let model = ndarray::Array2::<f64>::ones((4, 4));
    let mut npy = Vec::new();
    ndarray_npy::WriteNpyExt::write_npy(&model, &mut npy).unwrap();
    let parsed: syn::Expr = syn::parse_str("1 + 1").unwrap();
    let host = sysinfo::System::new();
    let json = serde_json::to_string(&Figure(model.sum())).unwrap();
    let names = inventory::iter::<Family>.into_iter().count();
    std::hint::black_box((npy.len(), parsed, host.cpus().len(), json, names));
    c.bench_function("hello", |b| b.iter(|| std::hint::black_box(2) + 2));
}

criterion_group!(benches, hello);
criterion_main!(benches);
"#;

/// One crate of the comparison, and what building it cost.
struct Scratch {
    name: &'static str,
    dir: PathBuf,
    packages: usize,
    seconds: Vec<f64>,
    target_bytes: Vec<u64>,
}

fn main() {
    if !harness::should_run("build_cost") {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("build-cost");
    std::fs::create_dir_all(&dir).expect("the scratch folder");
    let quick = dir.join("quick-start");
    quick_start_crate(&quick, &packed(&dir.join("packed")));
    let floor = bench_crate(&dir, "floor", FLOOR_DEPENDENCIES, FLOOR_BENCH);
    std::fs::copy(workspace().join("Cargo.lock"), floor.join("Cargo.lock")).expect("the lock file");

    let mut floor = Scratch::new("floor", floor);
    let mut quick = Scratch::new("README quick start", quick);
    if harness::test_mode() {
        for scratch in [&mut floor, &mut quick] {
            scratch.packages = packages(&scratch.dir, true);
        }
        print(&[floor, quick]);
        harness::publish("build_cost");
        return;
    }
    let divan = bench_crate(&dir, "divan-hello", "divan = \"0.1\"\n", DIVAN_BENCH);
    let criterion = bench_crate(
        &dir,
        "criterion-hello",
        "criterion = \"0.8\"\n",
        CRITERION_BENCH,
    );
    let mut crates = [
        Scratch::new("divan hello", divan),
        Scratch::new("criterion hello", criterion),
        floor,
        quick,
    ];
    // One warmed registry: every crate's sources fetched before any build.
    for scratch in &mut crates {
        cargo(&scratch.dir, &["fetch"]);
        scratch.packages = packages(&scratch.dir, false);
    }
    for at in [0, 1, 2, 3, 3, 2] {
        crates[at].build();
    }
    print(&crates);
    harness::publish("build_cost");
}

impl Scratch {
    fn new(name: &'static str, dir: PathBuf) -> Self {
        Self {
            name,
            dir,
            packages: 0,
            seconds: Vec::new(),
            target_bytes: Vec::new(),
        }
    }

    /// A cold `cargo bench --no-run`: its seconds and target folder.
    fn build(&mut self) {
        let target = self.dir.join("target");
        let _ = std::fs::remove_dir_all(&target);
        let started = Instant::now();
        cargo(&self.dir, &["bench", "--no-run", "--offline"]);
        self.seconds.push(started.elapsed().as_secs_f64());
        self.target_bytes.push(size(&target));
        let _ = std::fs::remove_dir_all(&target);
    }

    fn mean_seconds(&self) -> f64 {
        self.seconds.iter().sum::<f64>() / self.seconds.len().max(1) as f64
    }

    fn mean_bytes(&self) -> f64 {
        self.target_bytes.iter().sum::<u64>() as f64 / self.target_bytes.len().max(1) as f64
    }
}

/// A new crate `name` under `dir` with `dependencies` (dev-dependencies)
/// and one bench, `benches/hello.rs`.
fn bench_crate(dir: &Path, name: &str, dependencies: &str, bench: &str) -> PathBuf {
    let root = dir.join(name);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("src")).expect("the crate's folder");
    std::fs::create_dir_all(root.join("benches")).expect("the crate's folder");
    std::fs::write(root.join("src/lib.rs"), "//! A crate with a bench.\n").expect("lib.rs");
    std::fs::write(root.join("benches/hello.rs"), bench).expect("the bench");
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             # A workspace of its own.\n[workspace]\n\n\
             [dev-dependencies]\n{dependencies}\n\
             [lib]\nbench = false\n\n[[bench]]\nname = \"hello\"\nharness = false\n"
        ),
    )
    .expect("Cargo.toml");
    root
}

/// Runs cargo in `dir` with its own target folder, as a user's shell
/// would; panics with what it said when it fails.
fn cargo(dir: &Path, args: &[&str]) {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("CARGO_INCREMENTAL")
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {} in {}:\n{}",
        args.join(" "),
        dir.display(),
        support::said(&output)
    );
}

/// The packages in the graph of `dir`'s crate, itself included.
fn packages(dir: &Path, offline: bool) -> usize {
    let mut command = Command::new(env!("CARGO"));
    command
        .args(["tree", "--edges", "normal,build,dev", "--prefix", "none"])
        .current_dir(dir);
    if offline {
        command.arg("--offline");
    }
    let output = command.output().expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree in {}:\n{}",
        dir.display(),
        support::said(&output)
    );
    let tree = String::from_utf8_lossy(&output.stdout);
    let mut names: Vec<&str> = tree
        .lines()
        .filter_map(|line| {
            let mut words = line.split(' ');
            Some((words.next()?, words.next()?))
        })
        .map(|(name, _version)| name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names.len()
}

/// The bytes of the files under `dir`.
fn size(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn print(crates: &[Scratch]) {
    let floor = crates
        .iter()
        .find(|c| c.name == "floor")
        .expect("the floor");
    let quick = crates
        .iter()
        .find(|c| c.name == "README quick start")
        .expect("the quick start");
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "crate",
        "packages",
        "cold build",
        "target folder",
    ]);
    for scratch in crates {
        let built = |text: String| {
            if scratch.seconds.is_empty() {
                "-".to_owned()
            } else {
                text
            }
        };
        table.add_row([
            scratch.name.to_owned(),
            scratch.packages.to_string(),
            built(format!(
                "{:.0} s ({})",
                scratch.mean_seconds(),
                scratch
                    .seconds
                    .iter()
                    .map(|s| format!("{s:.0}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            built(format_bytes(scratch.mean_bytes() as u64)),
        ]);
    }
    harness::table(&table);
    // A count of the lock file's packages: exact in test mode too.
    let packages_met = quick.packages <= PACKAGES_GOAL;
    harness::note(format!(
        "packages: {} in the quick start's graph, goal at most {PACKAGES_GOAL} {}",
        quick.packages,
        harness::verdict("packages", packages_met, packages_met)
    ));
    if quick.seconds.is_empty() {
        harness::note("test mode: packages counted from the lock file, nothing built");
        return;
    }
    // Each interleaved pair of cold builds gives a ratio; the target
    // folder's size does not vary from build to build.
    let times: Vec<f64> = quick
        .seconds
        .iter()
        .zip(&floor.seconds)
        .map(|(q, f)| q / f)
        .collect();
    let bytes = quick.mean_bytes() / floor.mean_bytes();
    harness::note(format!(
        "quick start / floor: cold build {}; target folder {bytes:.2}x, goal at most {SIZE_GOAL}x {}",
        harness::judged(
            "cold build",
            &times,
            Goal::AtMost(TIME_GOAL),
            1.0,
            |v| format!("{v:.2}x")
        ),
        harness::verdict("target folder", bytes <= SIZE_GOAL, true)
    ));
}
