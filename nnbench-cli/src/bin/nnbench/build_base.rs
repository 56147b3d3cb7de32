//! `nnbench build-base REV --bench B`: the executable of bench `B` built
//! from revision `REV`, for `cargo bench --bench B -- --paired BASE`.
//!
//! The revision is checked out in a git worktree of the repository, kept
//! under the target folder at one path for every revision, and built into
//! a target folder of its own beside it, kept too: the next base builds
//! only what changed since the last one. Not into the workspace's own
//! target folder: cargo names a workspace's crates by their path within
//! the workspace, so the two checkouts' crates would overwrite each
//! other's builds there. The executable is copied out under a name of its
//! own (the bench, the commit, and a digest of the toolchain, profile
//! settings and flags it was built with), so that the next base built
//! does not replace it; the copy is written aside and renamed into place,
//! so that an interrupted copy is never taken for a build. One build-base
//! at a time uses a repository's base folder: a second waits for the lock
//! on it, saying so.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value as Json;

/// What to build, as the command line says.
#[derive(Clone)]
pub struct Request {
    pub revision: String,
    pub bench: String,
    pub package: Option<String>,
    pub features: Option<String>,
}

/// Why no base was built: said with the revision, the bench or the
/// command at fault.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{what}: {why}")]
    Command { what: String, why: String },
    #[error(
        "not in a git repository (build-base checks the revision out of the repository around the current folder): {0}"
    )]
    NotARepository(String),
    #[error("`{0}` is not a revision of this repository")]
    UnknownRevision(String),
    #[error("revision {revision} did not build bench `{bench}` (cargo's messages are above)")]
    BuildFailed { revision: String, bench: String },
    #[error("revision {revision} did not build bench `{bench}`: it has no bench of that name")]
    NoSuchBench { revision: String, bench: String },
    #[error("{}: {source}", path.display())]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Builds the base as `request` says; returns the executable's path. A
/// base revision without the bench that this checkout has (the change adds
/// it) gets a file that says so instead, with which a paired run takes
/// every case as new; a bench that neither has is an error.
pub fn run(request: &Request) -> Result<PathBuf, BuildError> {
    let bases = Bases::here()?;
    let commit = bases.commit(&request.revision)?;
    match bases.build(request, &commit) {
        Err(BuildError::NoSuchBench { revision, bench })
            if has_bench(&bases.top.join(&bases.prefix), request) =>
        {
            eprintln!(
                "build-base: revision {revision} has no bench `{bench}`, which this checkout adds: a paired run with it takes every case as new"
            );
            bases.no_base_build(request, &commit, &revision)
        }
        built => built,
    }
}

/// The repository around the current folder, and where its bases are
/// checked out, built and kept.
pub struct Bases {
    /// The repository's top folder.
    pub top: PathBuf,
    /// Where the current folder sits in the repository: a base is built
    /// from the same place in its checkout.
    prefix: String,
    /// `target/nnbench/base`.
    dir: PathBuf,
}

impl Bases {
    /// Those of the repository around the current folder.
    pub fn here() -> Result<Self, BuildError> {
        let top = PathBuf::from(git(None, &["rev-parse", "--show-toplevel"]).map_err(|e| {
            BuildError::NotARepository(match e {
                BuildError::Command { why, .. } => why,
                other => other.to_string(),
            })
        })?);
        let prefix = git(None, &["rev-parse", "--show-prefix"])?;
        Ok(Self {
            top,
            prefix,
            dir: target_dir()?.join("nnbench").join("base"),
        })
    }

    /// The commit `revision` names.
    pub fn commit(&self, revision: &str) -> Result<String, BuildError> {
        git(
            Some(&self.top),
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{revision}^{{commit}}"),
            ],
        )
        .map_err(|_| BuildError::UnknownRevision(revision.to_owned()))
    }

    /// The executable of `request`'s bench at `commit`: built once, and
    /// kept under a name of the bench, the commit and the package and
    /// features asked for, where the next request for it finds it.
    pub fn build(&self, request: &Request, commit: &str) -> Result<PathBuf, BuildError> {
        let out = self.dir.join(self.name(request, commit));
        if out.is_file() {
            return Ok(out);
        }
        let _held = self.hold()?;
        // Another build-base may have built it while this one waited.
        if out.is_file() {
            return Ok(out);
        }
        let worktree = self.dir.join("worktree");
        check_out(&self.top, &worktree, commit)?;
        eprintln!(
            "build-base: building bench `{}` of {} ({}) in {}",
            request.bench,
            request.revision,
            short(commit),
            worktree.display()
        );
        let built = build(
            &worktree.join(&self.prefix),
            &self.dir.join("target"),
            request,
            commit,
        )?;
        install(&built, &out)?;
        Ok(out)
    }

    /// The lock on the base folder, held while its worktree and target
    /// folder are used: taken at once, or waited for, saying so.
    fn hold(&self) -> Result<std::fs::File, BuildError> {
        let path = self.dir.join(".lock");
        let file_error = |source| BuildError::File {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(file_error)?;
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(file_error)?;
        match lock.try_lock() {
            Ok(()) => return Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) => eprintln!(
                "build-base: waiting for another build-base, which holds {}",
                path.display()
            ),
            Err(std::fs::TryLockError::Error(source)) => return Err(file_error(source)),
        }
        lock.lock().map_err(file_error)?;
        Ok(lock)
    }

    /// The file that stands for `request`'s bench at `commit`, which the
    /// revision does not have: `--paired` reads its first line, as
    /// nnbench's paired runs define it, and says the rest.
    fn no_base_build(
        &self,
        request: &Request,
        commit: &str,
        revision: &str,
    ) -> Result<PathBuf, BuildError> {
        let out = self
            .dir
            .join(format!("{}.none", self.name(request, commit)));
        let file_error = |source| BuildError::File {
            path: out.clone(),
            source,
        };
        std::fs::create_dir_all(&self.dir).map_err(file_error)?;
        let says = format!(
            "nnbench: no base build\nrevision {revision} has no bench `{}`\n",
            request.bench
        );
        std::fs::write(&out, says).map_err(file_error)?;
        Ok(out)
    }

    /// `BENCH-COMMIT`, then `-pPACKAGE` and `-fFEATURES` where asked for,
    /// then `-tDIGEST` of the toolchain and the build's settings.
    fn name(&self, request: &Request, commit: &str) -> String {
        let mut name = format!("{}-{}", request.bench, short(commit));
        for (mark, asked) in [("-p", &request.package), ("-f", &request.features)] {
            if let Some(asked) = asked {
                name.push_str(mark);
                name.extend(asked.chars().map(|c| {
                    if c.is_ascii_alphanumeric() || "_-,".contains(c) {
                        c
                    } else {
                        '_'
                    }
                }));
            }
        }
        name.push_str("-t");
        name.push_str(&toolchain_digest()[..12]);
        name
    }

    /// Where bisect's runs of `bench` keep what they write (their latest
    /// record, progress and profiles): `target/nnbench/<bench>/bisect`,
    /// apart from the user's own runs.
    pub fn bisect_dir(&self, bench: &str) -> PathBuf {
        let nnbench = self.dir.parent().unwrap_or(&self.dir);
        nnbench.join(bench).join("bisect")
    }

    /// Runs git in the repository; its trimmed output.
    pub fn git(&self, args: &[&str]) -> Result<String, BuildError> {
        git(Some(&self.top), args)
    }
}

/// A digest of what else makes one build of a commit differ from another:
/// the compiler (`rustc -vV`) and the flags and profile settings cargo
/// reads from the environment.
fn toolchain_digest() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(rustc)
        .arg("-vV")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut settings: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| {
            name == "RUSTFLAGS"
                || name == "CARGO_ENCODED_RUSTFLAGS"
                || name.starts_with("CARGO_PROFILE_")
                || name.starts_with("CARGO_BUILD_")
                || name.starts_with("CARGO_TARGET_") && name.ends_with("_RUSTFLAGS")
        })
        .collect();
    settings.sort();
    let mut hasher = blake3::Hasher::new();
    hasher.update(version.as_bytes());
    for (name, value) in settings {
        hasher.update(format!("\n{name}={value}").as_bytes());
    }
    hasher.finalize().to_hex().to_string()
}

/// Copies the built executable to `out` whole or not at all: written
/// beside it and renamed into place.
fn install(built: &Path, out: &Path) -> Result<(), BuildError> {
    let aside = out.with_extension(format!("partial-{}", std::process::id()));
    let file_error = |path: &Path| {
        let path = path.to_owned();
        move |source| BuildError::File { path, source }
    };
    std::fs::copy(built, &aside).map_err(file_error(&aside))?;
    std::fs::rename(&aside, out).map_err(|source| {
        let _ = std::fs::remove_file(&aside);
        BuildError::File {
            path: out.to_owned(),
            source,
        }
    })
}

pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// The target folder cargo builds this workspace into.
pub fn target_dir() -> Result<PathBuf, BuildError> {
    let output = Command::new(cargo())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| command_error("cargo metadata", e.to_string()))?;
    if !output.status.success() {
        return Err(command_error(
            "cargo metadata",
            format!("exited with {}", output.status),
        ));
    }
    let metadata: Json = serde_json::from_slice(&output.stdout)
        .map_err(|e| command_error("cargo metadata", e.to_string()))?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| command_error("cargo metadata", "no target_directory".into()))
}

/// Has `worktree` hold `commit`, detached: a new worktree the first time,
/// the same one checked out anew after.
fn check_out(top: &Path, worktree: &Path, commit: &str) -> Result<(), BuildError> {
    let is_worktree = worktree.join(".git").exists()
        && git(Some(worktree), &["rev-parse", "--is-inside-work-tree"]).is_ok();
    if is_worktree {
        git(
            Some(worktree),
            &["checkout", "--quiet", "--force", "--detach", commit],
        )?;
        git(Some(worktree), &["clean", "--quiet", "-d", "--force", "-x"])?;
        return Ok(());
    }
    // A folder left by a removed repository or a broken checkout.
    if worktree.exists() {
        std::fs::remove_dir_all(worktree).map_err(|source| BuildError::File {
            path: worktree.to_owned(),
            source,
        })?;
    }
    // Only this folder's record, should git still hold one: pruning every
    // worktree would drop those of the user's others on unmounted disks.
    let path = worktree.to_string_lossy();
    let _ = git(Some(top), &["worktree", "remove", "--force", &path]);
    git(
        Some(top),
        &[
            "worktree", "add", "--quiet", "--force", "--detach", &path, commit,
        ],
    )?;
    Ok(())
}

/// Runs `cargo bench --no-run` for the bench in `dir` into `target`, and
/// returns the executable cargo says it built.
fn build(
    dir: &Path,
    target: &Path,
    request: &Request,
    commit: &str,
) -> Result<PathBuf, BuildError> {
    let revision = || format!("{} ({})", request.revision, short(commit));
    if !has_bench(dir, request) {
        return Err(BuildError::NoSuchBench {
            revision: revision(),
            bench: request.bench.clone(),
        });
    }
    let mut args: Vec<OsString> = [
        "bench",
        "--no-run",
        "--message-format",
        "json-render-diagnostics",
        "--bench",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    args.push(request.bench.clone().into());
    if let Some(package) = &request.package {
        args.extend(["--package".into(), package.into()]);
    }
    if let Some(features) = &request.features {
        args.extend(["--features".into(), features.into()]);
    }
    let mut child = Command::new(cargo())
        .args(&args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| command_error("cargo bench --no-run", e.to_string()))?;
    let mut executable = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let Ok(message) = serde_json::from_str::<Json>(&line) else {
                continue;
            };
            if let Some(path) = bench_executable(&message, &request.bench) {
                executable = Some(path);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| command_error("cargo bench --no-run", e.to_string()))?;
    if !status.success() {
        return Err(BuildError::BuildFailed {
            revision: revision(),
            bench: request.bench.clone(),
        });
    }
    executable.ok_or_else(|| BuildError::NoSuchBench {
        revision: revision(),
        bench: request.bench.clone(),
    })
}

/// Whether the workspace in `dir` has the bench asked for (in the package
/// asked for): its manifests say so even where its code does not build. A
/// manifest cargo cannot read is left to the build to report.
fn has_bench(dir: &Path, request: &Request) -> bool {
    let Ok(output) = Command::new(cargo())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(dir)
        .stderr(Stdio::null())
        .output()
    else {
        return true;
    };
    let Ok(metadata) = serde_json::from_slice::<Json>(&output.stdout) else {
        return true;
    };
    let packages = metadata["packages"].as_array().into_iter().flatten();
    packages
        .filter(|p| {
            request
                .package
                .as_deref()
                .is_none_or(|name| p["name"] == name)
        })
        .flat_map(|p| p["targets"].as_array().into_iter().flatten())
        .any(|t| {
            t["name"] == request.bench.as_str()
                && t["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|k| k == "bench"))
        })
}

/// The executable of bench `bench` that a cargo message reports built.
fn bench_executable(message: &Json, bench: &str) -> Option<PathBuf> {
    let target = &message["target"];
    let is_bench = message["reason"] == "compiler-artifact"
        && target["name"] == bench
        && target["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "bench"));
    is_bench
        .then(|| message["executable"].as_str().map(PathBuf::from))
        .flatten()
}

/// The cargo that runs this tool (`cargo run`), else the one on `PATH`.
fn cargo() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

/// Runs git in `dir` (the current folder when `None`); its trimmed output.
fn git(dir: Option<&Path>, args: &[&str]) -> Result<String, BuildError> {
    let mut command = Command::new("git");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let what = format!("git {}", args.join(" "));
    let output = command
        .args(args)
        .output()
        .map_err(|e| command_error(&what, e.to_string()))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    } else {
        Err(command_error(
            &what,
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ))
    }
}

fn command_error(what: &str, why: String) -> BuildError {
    BuildError::Command {
        what: what.to_owned(),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_executable_is_read_off_cargos_messages() {
        let built = serde_json::json!({
            "reason": "compiler-artifact",
            "target": {"name": "sweep", "kind": ["bench"]},
            "executable": "/t/release/deps/sweep-0123"
        });
        assert_eq!(
            bench_executable(&built, "sweep"),
            Some(PathBuf::from("/t/release/deps/sweep-0123"))
        );
        assert_eq!(bench_executable(&built, "mnist"), None);
        let library = serde_json::json!({
            "reason": "compiler-artifact",
            "target": {"name": "sweep", "kind": ["lib"]},
            "executable": null
        });
        assert_eq!(bench_executable(&library, "sweep"), None);
    }
}
