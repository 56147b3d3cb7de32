//! Workers under Callgrind. The cases whose instructions are counted
//! (`--instructions`, `timing = instructions`) run in a worker that
//! valgrind starts: the bench binary under valgrind asks Callgrind to
//! collect around each call alone (see `measure::callgrind`), so memo
//! loading, hooks and the harness stay out of the count.
//!
//! The environment is fixed where it would move a count: the simulated
//! caches have one geometry on every machine instead of the host's, and
//! the dumps go to a folder of the supervisor's.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::watch::Start;
use crate::measure::callgrind::{OUT_DIR_ENV, OUT_FILE};
use crate::runner::case::engine::counted;
use crate::settings::Settings;
use crate::{Error, Result};

/// Names the valgrind to run, where the one on `PATH` is not it.
pub(crate) const VALGRIND_ENV: &str = "NNBENCH_VALGRIND";

/// The simulated caches: a 32 KiB, 8-way first-level instruction cache
/// and data cache and an 8 MiB, 16-way last-level one, with 64-byte lines.
const CACHES: [&str; 3] = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"];

/// valgrind, found and working, and the folder its workers dump to.
pub(crate) struct Callgrind {
    valgrind: PathBuf,
    dumps: tempfile::TempDir,
}

impl Callgrind {
    /// Finds valgrind (`NNBENCH_VALGRIND`, else `valgrind` on `PATH`) and
    /// checks that it runs.
    ///
    /// # Errors
    ///
    /// When there is none, naming how to install it.
    pub(crate) fn find() -> Result<Self> {
        let valgrind = valgrind()?;
        let dumps = tempfile::Builder::new()
            .prefix("nnbench-callgrind-")
            .tempdir()
            .map_err(|e| {
                Error::msg(format!(
                    "counting instructions: no folder for Callgrind's dumps: {e}"
                ))
            })?;
        Ok(Self { valgrind, dumps })
    }

    /// A worker as `start` says, under Callgrind.
    pub(crate) fn wrap(&self, start: &Start) -> Start {
        let mut args: Vec<OsString> = [
            "--tool=callgrind",
            "--quiet",
            "--collect-atstart=no",
            "--cache-sim=yes",
            "--dump-instr=no",
            "--dump-line=no",
            // A build may be a script that sets its environment and execs
            // the bench binary: valgrind follows the exec.
            "--trace-children=yes",
        ]
        .iter()
        .chain(&CACHES)
        .map(OsString::from)
        .collect();
        let mut out = OsString::from("--callgrind-out-file=");
        out.push(self.dumps.path().join(format!("{OUT_FILE}.%p")));
        args.push(out);
        // valgrind's own messages (it warns that the host's caches are not
        // the simulated ones) would fill the console.
        let mut log = OsString::from("--log-file=");
        log.push(self.dumps.path().join("valgrind.%p.log"));
        args.push(log);
        args.push(start.exe.clone().into_os_string());
        args.extend(start.args.iter().cloned());
        let mut env = start.env.clone();
        env.push((OUT_DIR_ENV.into(), self.dumps.path().into()));
        Start {
            exe: self.valgrind.clone(),
            args,
            cpu: start.cpu,
            env,
        }
    }
}

/// Checks, before a run, that valgrind is there when a selected case is
/// counted: `Err` says how to install it, for an exit with status 2.
pub(crate) fn check(settings: &Settings) -> std::result::Result<(), String> {
    let cases = crate::registry::cases();
    let (selected, _) = crate::runner::setup::select::select(settings, &cases);
    if selected.iter().any(|case| counted(case, settings)) {
        valgrind().map(drop).map_err(|e| e.to_string())
    } else {
        Ok(())
    }
}

fn valgrind() -> Result<PathBuf> {
    let named = std::env::var_os(VALGRIND_ENV).map(PathBuf::from);
    let valgrind = named.clone().unwrap_or_else(|| PathBuf::from("valgrind"));
    match version(&valgrind) {
        Ok(_) => Ok(valgrind),
        Err(why) => Err(Error::msg(match named {
            Some(path) => format!(
                "counting instructions (--instructions, timing = instructions): {VALGRIND_ENV}={}: {why}",
                path.display()
            ),
            None => format!(
                "counting instructions (--instructions, timing = instructions) needs valgrind, whose Callgrind counts them: {why}; install your system's valgrind package (Debian and Ubuntu: apt-get install valgrind; in nnbench's repository, scripts/valgrind.sh), or set {VALGRIND_ENV} to its path"
            ),
        })),
    }
}

/// What `valgrind --version` says, or why it could not be run.
fn version(valgrind: &Path) -> std::result::Result<String, String> {
    let output = Command::new(valgrind)
        .arg("--version")
        .output()
        .map_err(|e| format!("{} cannot be run ({e})", valgrind.display()))?;
    let said = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if output.status.success() && said.starts_with("valgrind") {
        Ok(said)
    } else {
        Err(format!(
            "{} is not valgrind (it says `{said}`)",
            valgrind.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_valgrind_is_named() {
        let missing = version(Path::new("/no/such/valgrind")).unwrap_err();
        assert!(
            missing.contains("/no/such/valgrind cannot be run"),
            "{missing}"
        );
        let other = version(Path::new("/bin/echo")).unwrap_err();
        assert!(other.contains("is not valgrind"), "{other}");
    }

    #[test]
    fn a_wrapped_worker_is_this_start_under_callgrind_dumping_apart() {
        let callgrind = Callgrind {
            valgrind: "/usr/bin/valgrind".into(),
            dumps: tempfile::tempdir().unwrap(),
        };
        let start = Start {
            exe: "/b/bench".into(),
            args: vec!["--bench".into(), "kernel/".into()],
            cpu: Some(1),
            env: vec![("A".into(), "1".into())],
        };
        let wrapped = callgrind.wrap(&start);
        assert_eq!(wrapped.exe, Path::new("/usr/bin/valgrind"));
        let args: Vec<String> = wrapped
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[0], "--tool=callgrind");
        assert!(args.contains(&"--collect-atstart=no".to_owned()));
        let at = args.iter().position(|a| a == "/b/bench").unwrap();
        assert_eq!(&args[at + 1..], ["--bench", "kernel/"]);
        assert_eq!(wrapped.cpu, Some(1));
        assert_eq!(wrapped.env[0], ("A".into(), "1".into()));
        assert_eq!(wrapped.env[1].0, OsString::from(OUT_DIR_ENV));
    }
}
