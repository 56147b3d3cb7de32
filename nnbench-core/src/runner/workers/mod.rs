//! The worker processes: with `--isolate` (and for paired runs and counted
//! cases) the cases run in a worker process that the bench binary starts
//! from its own executable, so that a case that aborts, segfaults,
//! is killed by the OOM killer or runs past `--case-timeout` takes only
//! itself down. The supervisor records that case as failed, with how it
//! died, and starts a new worker for the cases left; the new worker loads
//! its memos again (from the disk tier where they persist). The records are
//! the worker's own, as a run in one process makes them.

pub(crate) mod affinity;
mod death;
pub(crate) mod protocol;
mod redraw;
mod tail;
pub(crate) mod valgrind;
pub(crate) mod watch;
pub(crate) mod worker;

use std::os::unix::net::UnixListener;
use std::path::PathBuf;

pub(crate) use protocol::WORKER_ENV;

use crate::memo::journal::Said;
use crate::record::{CaseRecord, MemoryRecord, RunMemoRecord, Stage};
use crate::registry::Case;
use crate::runner::case::lifecycle;
use crate::runner::order::Schedule;
use crate::runner::setup::interrupt::Signal;
use crate::settings::Settings;
use crate::{Error, Result};

/// Where workers reach their supervisor: a socket in a folder of its own,
/// removed with it.
pub(crate) struct Socket {
    _dir: tempfile::TempDir,
    pub listener: UnixListener,
    pub path: PathBuf,
}

impl Socket {
    /// A new socket, listening; `flag` names what wanted it in an error.
    pub(crate) fn open(flag: &str) -> Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix("nnbench-workers-")
            .tempdir()
            .map_err(|e| Error::msg(format!("{flag}: no folder for the workers' socket: {e}")))?;
        let path = dir.path().join("worker.sock");
        let listener = UnixListener::bind(&path)
            .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
            .map_err(|e| Error::msg(format!("{flag}: {}: {e}", path.display())))?;
        Ok(Self {
            _dir: dir,
            listener,
            path,
        })
    }
}

/// How the isolated run went, apart from its cases' records.
#[derive(Default)]
pub(crate) struct Outcome {
    /// The signal that stopped it before every case ran.
    pub interrupted: Option<Signal>,
    /// What was said outside any case, in the workers and here.
    pub warnings: Vec<String>,
    /// What the workers' cases said once a run.
    pub said: Vec<Said>,
    /// What the workers' memo caches did, summed; what the last one held.
    pub memo: RunMemoRecord,
}

/// Runs `selected` in workers started as `start` says, a new one after
/// each that dies; every case's record goes to `done`, in the order the
/// cases end. `flag` names what asked for workers in an error.
pub(crate) fn supervise(
    selected: &[&Case],
    settings: &Settings,
    start: &watch::Start,
    flag: &str,
    stop: &dyn Fn() -> Option<Signal>,
    done: &mut dyn FnMut(CaseRecord),
) -> Result<Outcome> {
    let socket = Socket::open(flag)?;
    let limits = watch::Limits::of_machine();
    let mut left: Vec<&Case> = Schedule::static_order(selected)
        .into_iter()
        .map(|at| selected[at])
        .collect();
    let mut outcome = Outcome::default();
    while !left.is_empty() {
        if let Some(signal) = stop() {
            outcome.interrupted = Some(signal);
            break;
        }
        let report = watch::run_in_new_worker(&socket, start, &left, settings, &limits, stop, done);
        left.retain(|c| !report.settled.contains(&c.id));
        if report.ended.is_none() {
            outcome.memo.counters += report.cases_memo;
        }
        if let Some(ended) = report.ended {
            outcome.memo.counters += ended.memo.counters;
            outcome.memo.entries_at_end = ended.memo.entries_at_end;
            outcome.memo.resident_bytes_at_end = ended.memo.resident_bytes_at_end;
            outcome.memo.disk_bytes_at_end = ended.memo.disk_bytes_at_end;
            outcome.warnings.extend(ended.warnings);
            Said::merge(&mut outcome.said, ended.said);
            if ended.interrupted.is_some() {
                outcome.interrupted = ended.interrupted;
                break;
            }
        }
        if left.is_empty() {
            break;
        }
        if report.settled.is_empty() {
            // A worker that settles no case would be followed by another
            // that does the same: the cases left are recorded as not run.
            let why = report
                .lost
                .unwrap_or_else(|| "ended without running them".into());
            for case in left.drain(..) {
                done(lifecycle::unfinished(
                    case,
                    Stage::Memo,
                    format!("did not run: its worker process {why}"),
                    Vec::new(),
                    MemoryRecord::default(),
                ));
            }
            break;
        }
        if let Some(how) = report.lost {
            outcome.warnings.push(format!(
                "a worker process {how}; a new one runs the {} cases left",
                left.len()
            ));
        }
    }
    Ok(outcome)
}
