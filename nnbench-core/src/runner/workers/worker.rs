//! The worker of `--isolate` and of paired runs: the bench binary again,
//! started by its supervisor with [`WORKER_ENV`](super::protocol::WORKER_ENV)
//! naming the supervisor's socket. It runs the cases it is given, in its own
//! memo cache, and says as each starts, enters a step and finishes; told
//! that more will come, it waits for the next run with its memos kept.

use std::collections::HashSet;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc;

use super::protocol::{Assignment, FromWorker, Lines, PROTOCOL, Read, ToWorker, send};
use super::{affinity, redraw};
use crate::memo::{self, Distinct, journal};
use crate::record::{CaseRecord, RunMemoRecord, Stage};
use crate::registry::{self, Case};
use crate::runner::report::console::Console;
use crate::runner::setup::interrupt::{self, Signal};
use crate::runner::setup::select;
use crate::runner::sweep::case_loop::{self, End, Sink};
use crate::settings::Settings;

/// Runs as the worker of the supervisor at `socket`, and exits.
pub(crate) fn main(settings: Settings, socket: &Path) -> ! {
    die_with_parent();
    // The hello says this build's digest, a hash of its executable:
    // hashed while the cases are listed and the supervisor is reached, on
    // a thread that has ended before any case starts.
    let hashing = std::thread::Builder::new().spawn(memo::this_build);
    if let Some(limit) = settings.isolation.worker_memory_limit {
        limit_address_space(limit);
    }
    let stream = UnixStream::connect(socket).unwrap_or_else(|e| {
        eprintln!(
            "error: the worker cannot reach its supervisor at {}: {e}",
            socket.display()
        );
        std::process::exit(2)
    });
    let lines = match stream.try_clone() {
        Ok(reading) => Lines::new(BufReader::new(reading)),
        Err(e) => lost(&e),
    };
    let all = registry::cases();
    let mut sink = ToSupervisor {
        stream,
        stop: Arc::new(AtomicI32::new(0)),
        interruptible: settings.process.interruptible,
    };
    let cases = select::select(&settings, &all)
        .0
        .iter()
        .map(|c| c.id.clone())
        .collect();
    if let Ok(hashing) = hashing {
        let _ = hashing.join();
    }
    sink.send(&FromWorker::Hello {
        bench: settings.output.name.clone().unwrap_or_default(),
        protocol: PROTOCOL,
        cases,
        build: memo::this_build().map(str::to_owned),
    });
    let orders = listen(lines, Arc::clone(&sink.stop));
    let mut worker = Worker {
        settings: &settings,
        all: &all,
        cpus: affinity::allowed_cpus(),
        held: Vec::new(),
    };
    // The supervisor's Quit closes the channel.
    while let Ok(order) = orders.recv() {
        let more = order.more;
        let (end, memo) = worker.run_assignment(order, &mut sink);
        sink.send(&FromWorker::Ended {
            memo,
            warnings: end.warnings,
            said: end.said,
            interrupted: end.interrupted.map(Signal::number),
        });
        if !more {
            break;
        }
    }
    if settings.memory.print_cache {
        println!("\n{}", memo::summary());
    }
    std::process::exit(0)
}

/// What a worker keeps between its runs.
struct Worker<'a> {
    settings: &'a Settings,
    all: &'a [Case],
    /// The CPUs the worker was started on, for a run not pinned to one.
    cpus: Vec<usize>,
    /// The cases of the last run and those it was told come later: the
    /// memos it may hold.
    held: Vec<&'a Case>,
}

impl<'a> Worker<'a> {
    /// Runs the cases of `order`; what its memo cache did meanwhile.
    fn run_assignment(
        &mut self,
        order: Assignment,
        sink: &mut ToSupervisor,
    ) -> (End, RunMemoRecord) {
        let mut settings = self.settings.clone();
        settings.timing.rounds = order.rounds.map(Arc::new);
        memo::keep_per_build(order.per_build);
        memo::keep_apart_as(order.twin.as_deref());
        let pick = |ids: &[String]| -> Vec<&'a Case> {
            let ids: HashSet<&str> = ids.iter().map(String::as_str).collect();
            self.all
                .iter()
                .filter(|c| ids.contains(c.id.as_str()))
                .collect()
        };
        let (selected, later) = (pick(&order.ids), pick(&order.later));
        let cache = memo::global_cache();
        let before = cache.stats();
        let kept: Vec<&'a Case> = selected.iter().chain(&later).copied().collect();
        release_stale(&self.held, &kept);
        self.held = kept;
        match order.cpu {
            Some(cpu) => redraw::pin_this_thread(&[cpu]),
            None => redraw::pin_this_thread(&self.cpus),
        }
        // Its cases' lines and the table are the supervisor's to print;
        // what criterion prints goes out as it would in one process.
        let console = Console::new(settings.output.quiet, 0);
        let end = redraw::padded(usize::from(order.pad), || {
            memo::with_disk_tier(settings.memory.disk_tier.clone(), || {
                let _recording = journal::record();
                case_loop::run_cases(&selected, &later, &settings, &console, sink)
            })
        });
        let after = cache.stats();
        let memo = RunMemoRecord {
            counters: after.counters - before.counters,
            entries_at_end: after.entries,
            resident_bytes_at_end: after.resident_bytes,
            disk_bytes_at_end: after.disk_bytes,
        };
        (end, memo)
    }
}

/// Evicts the memos of `held` that no case of `kept` uses, and the inner
/// memos only they were built from.
fn release_stale(held: &[&Case], kept: &[&Case]) {
    let mut keep = Distinct::default();
    for case in kept {
        for (_, memo) in case.params.memos() {
            keep.id(memo);
        }
    }
    let mut stale = Distinct::default();
    for case in held {
        for (_, memo) in case.params.memos() {
            if keep.find(memo).is_none() {
                stale.id(memo);
            }
        }
    }
    if !stale.memos().is_empty() {
        memo::global_cache().release(stale.memos(), keep.memos());
    }
}

/// The supervisor is gone: nobody is left to record what this worker does.
fn lost(error: &std::io::Error) -> ! {
    eprintln!("error: the worker lost its supervisor: {error}");
    std::process::exit(2)
}

/// Reads the supervisor's messages in a thread of their own: a stop, the
/// runs it gives (handed on), its Quit (which ends what it hands on), or
/// the end of the stream when the supervisor is gone.
fn listen(
    mut lines: Lines<BufReader<UnixStream>>,
    stop: Arc<AtomicI32>,
) -> mpsc::Receiver<Assignment> {
    let (orders, given) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("nnbench-worker-listen".into())
        .spawn(move || {
            loop {
                match lines.read::<ToWorker>() {
                    Ok(Read::Message(ToWorker::Stop { signal })) => {
                        stop.store(signal, Ordering::Release)
                    }
                    Ok(Read::Message(ToWorker::Run(order))) => {
                        if orders.send(order).is_err() {
                            return;
                        }
                    }
                    Ok(Read::Message(ToWorker::Quit)) => return,
                    Ok(Read::Nothing) => {}
                    Ok(Read::Closed) | Err(_) => std::process::exit(2),
                }
            }
        });
    if let Err(e) = spawned {
        lost(&e);
    }
    given
}

/// Tells the supervisor how the cases go.
struct ToSupervisor {
    stream: UnixStream,
    stop: Arc<AtomicI32>,
    interruptible: bool,
}

impl ToSupervisor {
    fn send(&mut self, message: &FromWorker) {
        if let Err(e) = send(&mut self.stream, message) {
            lost(&e);
        }
    }
}

impl Sink for ToSupervisor {
    fn starting(&mut self, case: &Case) {
        self.send(&FromWorker::Started {
            id: case.id.clone(),
        });
    }

    fn stage(&mut self, stage: Stage) {
        self.send(&FromWorker::Stage { stage });
    }

    fn finished(&mut self, record: CaseRecord) {
        self.send(&FromWorker::Finished {
            record: Box::new(record),
        });
    }

    fn stop(&mut self) -> Option<Signal> {
        self.interruptible
            .then(interrupt::requested)
            .flatten()
            .or_else(|| match self.stop.load(Ordering::Acquire) {
                0 => None,
                number => Some(Signal::from_number(number)),
            })
    }
}

/// A worker whose supervisor dies (killed by a second Ctrl-C, or by the
/// OOM killer) must not run on unwatched.
fn die_with_parent() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and
    // changes only this process's own setting.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
}

/// `--worker-memory-limit`: allocations past `bytes` of address space fail
/// in this process, which then dies of it as out of memory.
fn limit_address_space(bytes: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write the struct given.
    let set = unsafe {
        libc::getrlimit(libc::RLIMIT_AS, &mut limit) == 0 && {
            limit.rlim_cur = (bytes as libc::rlim_t).min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_AS, &limit) == 0
        }
    };
    if !set {
        eprintln!(
            "warning: --worker-memory-limit: the address space limit could not be set ({})",
            std::io::Error::last_os_error()
        );
    }
}
