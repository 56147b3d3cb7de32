//! The worker of `--isolate`: the bench binary again, started by its
//! supervisor with [`WORKER_ENV`](super::protocol::WORKER_ENV) naming the
//! supervisor's socket. It runs the cases it is given, in its own memo
//! cache, and says as each starts, enters a step and finishes.

use std::collections::HashSet;
use std::io::BufReader;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use super::protocol::{FromWorker, Lines, PROTOCOL, Read, ToWorker, send};
use crate::memo::{self, journal};
use crate::record::{CaseRecord, RunMemoRecord, Stage};
use crate::registry::{self, Case};
use crate::runner::case_loop::{self, Sink};
use crate::runner::console::Console;
use crate::runner::interrupt::{self, Signal};
use crate::runner::select;
use crate::settings::Settings;

/// Runs as the worker of the supervisor at `socket`, and exits.
pub(crate) fn main(mut settings: Settings, socket: &Path) -> ! {
    die_with_parent();
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
    let mut lines = match stream.try_clone() {
        Ok(reading) => Lines::new(BufReader::new(reading)),
        Err(e) => lost(&e),
    };
    let all = registry::cases();
    let mut sink = ToSupervisor {
        stream,
        stop: Arc::new(AtomicI32::new(0)),
        interruptible: settings.process.interruptible,
    };
    sink.send(&FromWorker::Hello {
        bench: settings.output.name.clone().unwrap_or_default(),
        protocol: PROTOCOL,
        cases: select::select(&settings, &all)
            .0
            .iter()
            .map(|c| c.id.clone())
            .collect(),
    });
    let ids: HashSet<String> = match lines.read::<ToWorker>() {
        Ok(Read::Message(ToWorker::Run { ids, rounds })) => {
            settings.timing.rounds = rounds.map(Arc::new);
            ids.into_iter().collect()
        }
        Ok(_) => std::process::exit(2),
        Err(e) => lost(&e),
    };
    listen(lines, Arc::clone(&sink.stop));

    let selected: Vec<&Case> = all.iter().filter(|c| ids.contains(&c.id)).collect();
    // Its cases' lines and the table are the supervisor's to print; what
    // criterion prints goes out as it would in one process.
    let console = Console::new(settings.output.quiet, 0);
    let cache = memo::global_cache();
    let (end, memo) = memo::with_disk_tier(settings.memory.disk_tier.clone(), || {
        let _recording = journal::record();
        let before = cache.stats();
        let end = case_loop::run(&selected, &settings, &console, &mut sink);
        let after = cache.stats();
        let memo = RunMemoRecord {
            counters: after.counters - before.counters,
            entries_at_end: after.entries,
            resident_bytes_at_end: after.resident_bytes,
            disk_bytes_at_end: after.disk_bytes,
        };
        (end, memo)
    });
    sink.send(&FromWorker::Ended {
        memo,
        warnings: end.warnings,
        interrupted: end.interrupted.map(Signal::number),
    });
    if settings.memory.print_cache {
        println!("\n{}", memo::summary());
    }
    std::process::exit(0)
}

/// The supervisor is gone: nobody is left to record what this worker does.
fn lost(error: &std::io::Error) -> ! {
    eprintln!("error: the worker lost its supervisor: {error}");
    std::process::exit(2)
}

/// Reads the supervisor's messages: a stop, or the end of the stream when
/// the supervisor is gone.
fn listen(mut lines: Lines<BufReader<UnixStream>>, stop: Arc<AtomicI32>) {
    let spawned = std::thread::Builder::new()
        .name("nnbench-worker-listen".into())
        .spawn(move || {
            loop {
                match lines.read::<ToWorker>() {
                    Ok(Read::Message(ToWorker::Stop { signal })) => {
                        stop.store(signal, Ordering::Release)
                    }
                    Ok(Read::Message(ToWorker::Run { .. }) | Read::Nothing) => {}
                    Ok(Read::Closed) | Err(_) => std::process::exit(2),
                }
            }
        });
    if let Err(e) = spawned {
        lost(&e);
    }
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
