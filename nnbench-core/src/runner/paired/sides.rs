//! The base build of a paired run, checked before any case runs: an
//! executable, a bench binary of this bench that speaks this build's
//! worker messages, and the cases it has.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::runner::workers::Socket;
use crate::runner::workers::protocol::{OLDEST_PROTOCOL, PROTOCOL};
use crate::runner::workers::watch::{self, Limits, Start};
use crate::settings::Settings;

/// The first line of a file that stands for a base revision without the
/// bench, as `nnbench build-base` writes it: paired with it, every case is
/// new. The lines after it say why.
pub(crate) const NO_BASE_BUILD: &str = "nnbench: no base build";

/// Why there is no base build, where `base` is a file that says there is
/// none ([`NO_BASE_BUILD`]).
pub(crate) fn no_base_build(base: &std::path::Path) -> Option<String> {
    let mut start = [0u8; NO_BASE_BUILD.len()];
    let mut file = std::fs::File::open(base).ok()?;
    std::io::Read::read_exact(&mut file, &mut start).ok()?;
    if start != NO_BASE_BUILD.as_bytes() {
        return None;
    }
    let mut why = String::new();
    std::io::Read::read_to_string(&mut file, &mut why).ok()?;
    let why = why.trim();
    Some(if why.is_empty() {
        "the base revision has no build of this bench".into()
    } else {
        why.replace('\n', " ")
    })
}

/// Checks `--paired BASE` before the run: `Err` names what is wrong with
/// BASE, for an exit with status 2.
pub(crate) fn check_base(settings: &Settings, bench: &str) -> Result<(), String> {
    let Some(base) = &settings.pairing.base else {
        return Ok(());
    };
    let fail = |message: String| format!("--paired {}: {message}", base.display());
    let metadata = std::fs::metadata(base).map_err(|e| fail(e.to_string()))?;
    if !metadata.is_file() {
        return Err(fail(
            "not a file: BASE is the executable of another build of this bench".into(),
        ));
    }
    if no_base_build(base).is_some() {
        return Ok(());
    }
    let socket = Socket::open("--paired").map_err(|e| e.to_string())?;
    let start = Start {
        exe: base.clone(),
        args: super::worker_args(settings),
        cpu: None,
        env: Vec::new(),
    };
    let checked = hello(&socket, &start, bench).map_err(fail)?;
    *CHECKED.lock().unwrap_or_else(PoisonError::into_inner) = Some((base.clone(), checked));
    Ok(())
}

/// What [`check_base`] learnt of the base build, for the run to take
/// rather than start its worker a second time.
static CHECKED: Mutex<Option<(PathBuf, Base)>> = Mutex::new(None);

/// What the base build at `base` said when the run was checked, once.
pub(super) fn checked(base: &Path) -> Option<Base> {
    match CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        Some((checked, said)) if checked == base => Some(said),
        _ => None,
    }
}

/// Has both builds' workers start from copies of their executables, made
/// alike side by side in one new folder, under names of one length.
/// One bench binary, paired with its own copy in another folder, called
/// its multi-threaded cases slower by a few percent in every run, always
/// the copy that cargo's linker wrote slower than the one copied; two
/// copies made alike were within noise of each other. A base that is
/// a script (which sets an environment and runs a build) is left where it
/// is, and the head then too, so that both are treated alike.
///
/// Returns the folder, which must outlive the workers; `None` where the
/// base is a script.
pub(super) fn same_footing(
    head: &mut Start,
    base: &mut Start,
) -> std::io::Result<Option<tempfile::TempDir>> {
    let mut start = [0u8; 2];
    let read = std::fs::File::open(&base.exe)
        .and_then(|mut file| std::io::Read::read(&mut file, &mut start))?;
    if read == 2 && &start == b"#!" {
        return Ok(None);
    }
    let dir = tempfile::Builder::new()
        .prefix("nnbench-paired-")
        .tempdir()?;
    for (start, name) in [(head, "head"), (base, "base")] {
        let copy = dir.path().join(name);
        std::fs::copy(&start.exe, &copy)?;
        start.exe = copy;
    }
    Ok(Some(dir))
}

/// What a base build said of itself.
pub(super) struct Base {
    /// The cases its command line selects.
    pub cases: HashSet<String>,
    /// Whether its workers can be kept for several rounds.
    pub keeps: bool,
    /// Whether it is a copy of this build (its workers say this build's
    /// digest): its fixtures are then kept apart from the head's all the
    /// same, so that both sides compute their own.
    pub twin: bool,
}

/// Starts a worker of `start` that runs nothing: what it says of itself,
/// or why it cannot be a base build of `bench`.
pub(super) fn hello(socket: &Socket, start: &Start, bench: &str) -> Result<Base, String> {
    let report = watch::run_in_new_worker(
        socket,
        start,
        &[],
        &Settings::default(),
        &Limits::of_machine(),
        &|| None,
        &mut |_| {},
    );
    match (report.hello, report.lost) {
        (_, Some(lost)) => Err(format!(
            "not a bench binary that nnbench can pair with: it {lost}"
        )),
        (None, None) => Err(
            "its workers do not say which bench they are: it was built with an nnbench that has no --paired; build the base revision with this one".into(),
        ),
        (Some(hello), None) if !(OLDEST_PROTOCOL..=PROTOCOL).contains(&hello.protocol) => {
            Err(format!(
                "its workers speak version {} of the worker messages, this build {PROTOCOL}: build both with one nnbench",
                hello.protocol
            ))
        }
        (Some(hello), None) if hello.bench != bench => Err(format!(
            "a build of bench `{}`, not of `{bench}`",
            hello.bench
        )),
        (Some(hello), None) => Ok(Base {
            keeps: hello.protocol >= 3,
            twin: hello.build.is_some() && hello.build.as_deref() == crate::memo::this_build(),
            cases: hello.cases.into_iter().collect(),
        }),
    }
}
