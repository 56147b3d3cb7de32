//! The workers of one build in a round: fresh ones, or the one kept for
//! the run, and what each is given so that a build's layout is drawn anew
//! for every round.

use std::collections::HashMap;
use std::ffi::OsString;

use super::Outcome;
use crate::record::{CaseRecord, MemoryRecord, Stage};
use crate::registry::Case;
use crate::runner::case::lifecycle;
use crate::runner::workers::Socket;
use crate::runner::workers::protocol::Assignment;
use crate::runner::workers::watch::{Following, Report, Start, Starting, Worker};

/// How a build's cases get a worker.
pub(super) enum Workers<'a> {
    /// A new worker for these cases alone (and another after each that
    /// dies), on `cpu` where one is given; `padded`: its stack starts at a
    /// place drawn for it.
    Fresh {
        start: &'a Start,
        cpu: Option<usize>,
        padded: bool,
    },
    /// The build's worker kept for the run, in `slot`: started where there
    /// is none, left there waiting for the next round. Each round runs on
    /// `cpu` where one is given, with its layout drawn anew. One that dies
    /// is replaced where `replace`; else the cases it left are left
    /// unrun, without a record, for the caller to run where a worker may
    /// start: a worker dies with the thread that started it, and a thread
    /// that lives for one round would take its replacement with it.
    Kept {
        start: &'a Start,
        slot: &'a mut Option<Worker>,
        cpu: Option<usize>,
        replace: bool,
    },
}

/// The build's kept workers.
#[derive(Default)]
pub(super) struct Kept {
    pub head: Option<Worker>,
    pub base: Option<Worker>,
}

impl Kept {
    /// Lets both go.
    pub(super) fn quit(self) {
        Worker::quit_all([self.head, self.base].into_iter().flatten());
    }
}

/// Starts a worker to keep for the run, as `start` says. Its layout is
/// drawn by each round's order; where the process starts, once, for its
/// first.
pub(super) fn start_kept(socket: &Socket, start: &Start) -> Result<Worker, String> {
    begin_kept(socket, start)?.connect(socket)
}

/// [`start_kept`] without waiting for the worker to connect.
pub(super) fn begin_kept(socket: &Socket, start: &Start) -> Result<Starting, String> {
    Worker::begin(
        socket,
        &Start {
            cpu: None,
            env: [start.env.clone(), vec![layout_padding()]].concat(),
            ..start.clone()
        },
    )
}

/// Runs `cases` on one build as `order` says, in as many workers as it
/// takes: a worker that dies in a case settles that case as failed, and
/// the next one runs the cases left (but where [`Workers::Kept`] says not
/// to replace it).
pub(super) fn run_side(
    socket: &Socket,
    mut workers: Workers<'_>,
    cases: &[&Case],
    order: Assignment,
    following: &Following<'_>,
    outcome: &mut Outcome,
) -> HashMap<String, CaseRecord> {
    let mut records = HashMap::new();
    let mut left: Vec<&Case> = cases.to_vec();
    while !left.is_empty() {
        let mut report = Report::default();
        let mut done = |r: CaseRecord| {
            records.insert(r.id.clone(), r);
        };
        let (exe, lost) = match &mut workers {
            Workers::Fresh { start, cpu, padded } => {
                let mut start = Start {
                    cpu: *cpu,
                    ..(*start).clone()
                };
                if *padded {
                    start.env.push(layout_padding());
                }
                match Worker::start(socket, &start) {
                    Ok(worker) => {
                        // Fresh workers run once.
                        let once = Assignment {
                            more: false,
                            ..order.clone()
                        };
                        if let Some(worker) =
                            worker.assign(once, &left, following, &mut report, &mut done)
                        {
                            worker.quit();
                        }
                        (start.exe, None)
                    }
                    Err(lost) => (start.exe, Some(lost)),
                }
            }
            Workers::Kept {
                start,
                slot,
                cpu,
                replace,
            } => {
                let worker = match slot.take() {
                    Some(worker) => Ok(worker),
                    None if *replace => start_kept(socket, start),
                    None => break,
                };
                match worker {
                    Ok(worker) => {
                        let kept = Assignment {
                            more: true,
                            cpu: *cpu,
                            pad: fastrand::u16(..4096),
                            ..order.clone()
                        };
                        **slot = worker.assign(kept, &left, following, &mut report, &mut done);
                        (start.exe.clone(), None)
                    }
                    Err(lost) => (start.exe.clone(), Some(lost)),
                }
            }
        };
        report.lost = report.lost.or(lost);
        outcome.memo.counters += report.cases_memo;
        if let Some(ended) = &report.ended {
            outcome.warnings.extend(ended.warnings.iter().cloned());
        }
        left.retain(|c| !report.settled.contains(&c.id));
        // A worker that settles no case would be followed by another that
        // does the same; one alive that left cases unrun was not able to.
        if !left.is_empty() && (report.settled.is_empty() || report.ended.is_some()) {
            let why = report
                .lost
                .unwrap_or_else(|| "ended without running them".into());
            for case in left.drain(..) {
                records.insert(
                    case.id.clone(),
                    lifecycle::unfinished(
                        case,
                        Stage::Memo,
                        format!("did not run: the worker of {} {why}", exe.display()),
                        Vec::new(),
                        MemoryRecord::default(),
                    ),
                );
            }
        }
    }
    records
}

/// The variable whose length moves where a worker's stack starts.
const LAYOUT_PAD: &str = "NNBENCH_LAYOUT_PAD";

/// A worker's environment pads its stack by 0 to 4095 bytes, drawn anew
/// for every worker (and a kept worker's stack and heap by as much again
/// for each round). Where a process's stack starts (after its arguments
/// and environment) sets the alignment of what it keeps there, and that
/// alone moves some calls by a few percent: a build whose path is longer
/// would be slower or faster in every round, a bias alternation cannot
/// spread. Drawn per worker, the alignment is noise that the rounds
/// average out, as Mytkowicz et al. ("Producing wrong data without doing
/// anything obviously wrong!", ASPLOS 2009) advise: without it, a bench
/// binary and its copy under a shorter path, paired, called each other
/// slower by a few percent in every run, always the same way.
fn layout_padding() -> (OsString, OsString) {
    (
        LAYOUT_PAD.into(),
        "x".repeat(fastrand::usize(..4096)).into(),
    )
}
