//! The README's quick start in a crate of its own, against the
//! workspace's packages packed as crates.io would serve them: what the
//! quick start's test runs, and what the build-cost figure bench builds.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The packages, the runtime's four first: a bench depends on those.
pub const CRATES: [&str; 5] = [
    "nnbench-vocab",
    "nnbench-macros",
    "nnbench-core",
    "nnbench",
    "nnbench-cli",
];

/// The workspace's root, from any of its packages.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|dir| dir.join("nnbench-core").is_dir())
        .expect("the workspace above the package")
        .to_owned()
}

pub fn readme() -> String {
    std::fs::read_to_string(workspace().join("README.md")).unwrap()
}

/// The README's fenced blocks of `language` (its first word after the
/// fence), in order.
pub fn blocks(text: &str, language: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        match (&mut current, line.strip_prefix("```")) {
            (None, Some(info)) if info.split([',', ' ']).next() == Some(language) => {
                current = Some(String::new());
            }
            (Some(block), Some("")) => {
                found.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            _ => {}
        }
    }
    found
}

/// The README's block whose first line is `// path` or `# path`.
pub fn file_block(blocks: &[String], path: &str) -> String {
    blocks
        .iter()
        .find(|b| b.lines().next().is_some_and(|l| l.ends_with(path)))
        .unwrap_or_else(|| panic!("the README has no block for {path}"))
        .clone()
}

/// Packs the workspace's crates and unpacks them under `dir`: the folders
/// of the packages, in `CRATES` order.
pub fn packed(dir: &Path) -> Vec<PathBuf> {
    let target = dir.join("package-target");
    let packing = Command::new(env!("CARGO"))
        .args(["package", "--workspace", "--no-verify", "--allow-dirty"])
        .arg("--target-dir")
        .arg(&target)
        .current_dir(workspace())
        .output()
        .unwrap();
    assert!(packing.status.success(), "{}", super::said(&packing));
    let unpacked = dir.join("crates");
    let _ = std::fs::remove_dir_all(&unpacked);
    std::fs::create_dir_all(&unpacked).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    CRATES
        .iter()
        .map(|name| {
            let file = target
                .join("package")
                .join(format!("{name}-{version}.crate"));
            let untar = Command::new("tar")
                .arg("xzf")
                .arg(&file)
                .arg("-C")
                .arg(&unpacked)
                .output()
                .unwrap();
            assert!(untar.status.success(), "{}", super::said(&untar));
            unpacked.join(format!("{name}-{version}"))
        })
        .collect()
}

/// A new library crate at `dir` with the README's lines, its data program
/// and its bench, depending on the packed `packages` (from [`packed`]) as
/// on crates.io's, and on the rest of the graph at the workspace's locked
/// versions.
pub fn quick_start_crate(dir: &Path, packages: &[PathBuf]) {
    for gone in ["Cargo.toml", "src", "benches", "examples", ".cargo"] {
        let path = dir.join(gone);
        let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
    }
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "//! A crate with a library.\n").unwrap();
    let readme = readme();
    let toml = file_block(&blocks(&readme, "toml"), "Cargo.toml");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"user-sweep\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n{toml}"
        ),
    )
    .unwrap();
    let rust = blocks(&readme, "rust");
    for path in ["examples/make_data.rs", "benches/sweep.rs"] {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, file_block(&rust, path)).unwrap();
    }
    let mut config = String::from("[patch.crates-io]\n");
    for (name, path) in CRATES.iter().zip(packages).take(4) {
        config.push_str(&format!("{name} = {{ path = {:?} }}\n", path));
    }
    std::fs::create_dir_all(dir.join(".cargo")).unwrap();
    std::fs::write(dir.join(".cargo/config.toml"), config).unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}
