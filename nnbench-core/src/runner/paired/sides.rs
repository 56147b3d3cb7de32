//! The base build of a paired run, checked before any case runs: an
//! executable, a bench binary of this bench that speaks this build's
//! worker messages, and the cases it has.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use std::time::Instant;

use super::workers::{self, Kept};
use crate::runner::workers::Socket;
use crate::runner::workers::protocol::{Assignment, OLDEST_PROTOCOL, PROTOCOL};
use crate::runner::workers::watch::{Following, Limits, Report, Start};
use crate::settings::{Keep, Settings};

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
/// BASE, for an exit with status 2. The workers that the check starts are
/// the run's, kept for it ([`checked`]).
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
    let ready = Ready::start(settings, bench, base).map_err(fail)?;
    *CHECKED.lock().unwrap_or_else(PoisonError::into_inner) = Some((base.clone(), ready));
    Ok(())
}

/// What [`check_base`] started, for the run to take rather than start its
/// workers a second time.
static CHECKED: Mutex<Option<(PathBuf, Ready)>> = Mutex::new(None);

/// What was started when the run with base `base` was checked, once.
pub(super) fn checked(base: &Path) -> Option<Ready> {
    match CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        Some((checked, ready)) if checked == base => Some(ready),
        _ => None,
    }
}

/// Lets go of what [`check_base`] started where no run took it: its
/// workers quit and the copies of the builds are removed.
pub(crate) fn forget_checked() {
    let forgotten = CHECKED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    if let Some((_, ready)) = forgotten {
        ready.kept.quit();
    }
}

/// Both sides of a paired run, ready for its first round.
pub(super) struct Ready {
    /// What the base build said of itself.
    pub base: Base,
    /// How each side's workers (head, base) start.
    pub starts: [Start; 2],
    /// Where each side's workers connect.
    pub sockets: [Socket; 2],
    /// The folder of the builds' copies ([`same_footing`]), which must
    /// outlive their workers, or why they run where they are.
    pub copies: std::io::Result<Option<tempfile::TempDir>>,
    /// The workers kept for the run, started side by side.
    pub kept: Kept,
    /// What starting each side's kept worker took, in nanoseconds.
    pub start_ns: [u64; 2],
}

impl Ready {
    /// Starts a worker of each build, side by side, from copies made alike
    /// ([`same_footing`]); the base's says what it is, or why it cannot be
    /// a base build of `bench`. Both are kept for the run unless
    /// `--paired-keep off` (or an older base build) starts new workers
    /// each round.
    pub(super) fn start(settings: &Settings, bench: &str, base: &Path) -> Result<Self, String> {
        // Whether the base is a copy of this build is told by this build's
        // digest, a hash of its executable: hashed while the workers start.
        let _ = std::thread::Builder::new().spawn(crate::memo::this_build);
        let mut ready = Self::without_base(settings, base)?;
        let [head_start, base_start] = &mut ready.starts;
        ready.copies = same_footing(head_start, base_start);
        let keep = settings.pairing.keep != Keep::Off;
        let [head_socket, base_socket] = &ready.sockets;
        let [head_start, base_start] = &ready.starts;
        let started = Instant::now();
        let head = keep
            .then(|| workers::begin_kept(head_socket, head_start).ok())
            .flatten();
        let worker = workers::start_kept(base_socket, base_start)
            .map_err(|lost| format!("not a bench binary that nnbench can pair with: it {lost}"))?;
        let base_ns = started.elapsed().as_nanos() as u64;
        let mut report = Report::default();
        let following = Following {
            settings: &Settings::default(),
            limits: &Limits::of_machine(),
            stop: &|| None,
        };
        let order = Assignment {
            more: keep,
            ..Assignment::default()
        };
        let worker = worker.assign(order, &[], &following, &mut report, &mut |_| {});
        let said = said(report, bench);
        let kept_base = worker.filter(|_| keep);
        let kept_head = head.and_then(|head| head.connect(head_socket).ok());
        let head_ns = started.elapsed().as_nanos() as u64;
        let kept = Kept {
            head: kept_head,
            base: kept_base,
        };
        match said {
            Ok(said) if said.keeps => {
                ready.base = said;
                ready.kept = kept;
                ready.start_ns = [head_ns, base_ns];
                Ok(ready)
            }
            Ok(said) => {
                kept.quit();
                ready.base = said;
                Ok(ready)
            }
            Err(why) => {
                kept.quit();
                Err(why)
            }
        }
    }

    /// The sides of a run whose base revision has no build of the bench,
    /// where this build's workers start from where it is.
    pub(super) fn without_base(settings: &Settings, base: &Path) -> Result<Self, String> {
        let args = super::worker_args(settings);
        let mut head =
            Start::this_binary().map_err(|e| format!("this bench binary's path: {e}"))?;
        head.args = args.clone();
        let base_start = Start {
            exe: base.to_path_buf(),
            args,
            cpu: None,
            env: Vec::new(),
        };
        let socket = || Socket::open("--paired").map_err(|e| e.to_string());
        Ok(Self {
            base: Base {
                cases: HashSet::new(),
                keeps: true,
                twin: false,
            },
            starts: [head, base_start],
            sockets: [socket()?, socket()?],
            copies: Ok(None),
            kept: Kept::default(),
            start_ns: [0; 2],
        })
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

/// What a base build's worker said of itself (in `report`, of a run of
/// no cases), or why it cannot be a base build of `bench`.
fn said(report: Report, bench: &str) -> Result<Base, String> {
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
