//! One worker, watched: started, given its cases, followed message by
//! message while its memory is sampled, killed when a case runs past
//! `--case-timeout`; if it dies in a case, the case's record says how.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::File;
use std::io::BufReader;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::death::{self, Evidence};
use super::protocol::{Assignment, FromWorker, Lines, Read, ToWorker, WORKER_ENV, send};
use super::tail::Tail;
use crate::memo::journal::Said;
use crate::record::{CaseRecord, MemoCounters, MemoryRecord, RssMethod, RunMemoRecord, Stage};
use crate::registry::Case;
use crate::runner::case::lifecycle;
use crate::runner::setup::interrupt::Signal;
use crate::settings::Settings;

/// How often the supervisor looks at its worker: its memory, the running
/// case's time, a signal to pass on. Between looks it waits for the
/// worker's next message, and takes it as it comes: a round of a paired
/// run's kept workers is a few milliseconds of calls, which waking only
/// at the next look would have lengthened by up to this much a side.
const POLL: Duration = Duration::from_millis(5);

/// How long a worker may take to reach its supervisor.
const CONNECT: Duration = Duration::from_secs(60);

/// How a worker is started: which executable, with which flags, and what
/// it is told besides its cases.
#[derive(Clone)]
pub(crate) struct Start {
    pub exe: PathBuf,
    pub args: Vec<OsString>,
    /// The one CPU the worker runs on; `None`: any this process may use.
    pub cpu: Option<usize>,
    /// Variables set in the worker's environment besides the socket's.
    pub env: Vec<(OsString, OsString)>,
}

impl Start {
    /// This bench binary again, with the same flags.
    pub(crate) fn this_binary() -> std::io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            args: std::env::args_os().skip(1).collect(),
            cpu: None,
            env: Vec::new(),
        })
    }
}

/// What a worker said of itself before its cases.
#[derive(Clone, Debug)]
pub(crate) struct Hello {
    pub bench: String,
    pub protocol: u32,
    pub cases: Vec<String>,
    /// The digest of its executable, where it says it.
    pub build: Option<String>,
}

/// What one worker did.
#[derive(Default)]
pub(crate) struct Report {
    /// What it said of itself first; `None` from a worker of a build that
    /// does not say it.
    pub hello: Option<Hello>,
    /// The cases that have a record: finished, or the one it died in.
    pub settled: HashSet<String>,
    /// What it said when it ended normally.
    pub ended: Option<Ended>,
    /// How it died or failed to start, when that was not in a case.
    pub lost: Option<String>,
    /// What the cases it finished did with its memo cache: all that is
    /// known of a worker that died.
    pub cases_memo: MemoCounters,
}

/// A worker's last message.
pub(crate) struct Ended {
    pub memo: RunMemoRecord,
    pub warnings: Vec<String>,
    pub said: Vec<Said>,
    pub interrupted: Option<Signal>,
}

/// What the supervisor knows of the whole machine, taken once.
pub(crate) struct Limits {
    /// The memory a worker may use: its cgroup's or the machine's.
    pub memory: Option<u64>,
}

impl Limits {
    /// This machine's.
    pub(crate) fn of_machine() -> Self {
        Self {
            memory: death::memory_limit(),
        }
    }
}

/// Runs `cases` in a new worker, once; each record goes to `done`.
pub(crate) fn run_in_new_worker(
    socket: &super::Socket,
    start: &Start,
    cases: &[&Case],
    settings: &Settings,
    limits: &Limits,
    stop: &dyn Fn() -> Option<Signal>,
    done: &mut dyn FnMut(CaseRecord),
) -> Report {
    let mut report = Report::default();
    match Worker::start(socket, start) {
        Ok(worker) => {
            // A run judged against a baseline keeps its fixtures per
            // build in its workers as in itself.
            let order = Assignment {
                per_build: crate::memo::per_build(),
                ..Assignment::default()
            };
            let following = Following {
                settings,
                limits,
                stop,
            };
            worker.assign(order, cases, &following, &mut report, done);
        }
        Err(lost) => report.lost = Some(lost),
    }
    report
}

/// What a worker's runs are followed with.
pub(crate) struct Following<'a> {
    pub settings: &'a Settings,
    pub limits: &'a Limits,
    /// Whether to tell the worker to stop, and why.
    pub stop: &'a dyn Fn() -> Option<Signal>,
}

/// A worker, started and connected: given one run, or several where each
/// but the last says more will come.
pub(crate) struct Worker {
    child: Child,
    memory: ProcessMemory,
    oom_kills: death::OomKills,
    tail: Tail,
    stream: UnixStream,
    lines: Lines<BufReader<UnixStream>>,
    hello: Option<Hello>,
}

impl Worker {
    /// Starts a worker as `start` says and waits for it to connect; `Err`
    /// says how it failed.
    pub(crate) fn start(socket: &super::Socket, start: &Start) -> Result<Self, String> {
        Self::begin(socket, start)?.connect(socket)
    }

    /// Starts a worker's process as `start` says, without waiting for it
    /// to connect: [`Starting::connect`] does, so that several can start
    /// side by side. The worker dies with the thread that began it (it
    /// asks the system to, so that none outlives its supervisor): a
    /// thread that ends before the run does must not begin one.
    pub(crate) fn begin(socket: &super::Socket, start: &Start) -> Result<Starting, String> {
        let (child, tail) =
            spawn(&socket.path, start).map_err(|e| format!("could not be started ({e})"))?;
        Ok(Starting { child, tail })
    }

    /// The CPU time the worker's process has used so far, every thread's;
    /// `None` where the system does not tell.
    pub(crate) fn cpu_time(&self) -> Option<Duration> {
        crate::measure::cpu::cpu_of_process(self.pid())
    }

    /// The worker's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Gives the worker `cases` as `order` says and follows it until it
    /// has run them; each record goes to `done`, and what else it did to
    /// `report`. Returns the worker where it waits for another run
    /// ([`Assignment::more`]); `None` where it ended, or died (in a case, whose
    /// record then says how, or outside one, which `report.lost` says).
    pub(crate) fn assign(
        mut self,
        mut order: Assignment,
        cases: &[&Case],
        following: &Following<'_>,
        report: &mut Report,
        done: &mut dyn FnMut(CaseRecord),
    ) -> Option<Self> {
        order.ids = cases.iter().map(|c| c.id.clone()).collect();
        let more = order.more;
        let mut running = None;
        let outcome = match self.tell(&ToWorker::Run(order)) {
            Ok(()) => self.follow(cases, more, following, &mut running, report, done),
            Err(_) => Followed::Closed,
        };
        report.hello.clone_from(&self.hello);
        if matches!(outcome, Followed::Ended) {
            return Some(self);
        }
        self.bury(outcome, running, following, report, done);
        None
    }

    /// Tells the worker `message`, waiting for room to write it.
    fn tell(&mut self, message: &ToWorker) -> std::io::Result<()> {
        self.stream.set_nonblocking(false)?;
        let sent = send(&mut self.stream, message);
        self.stream.set_nonblocking(true)?;
        sent
    }

    /// Waits for a worker whose run ended otherwise than by waiting for
    /// more, and settles the case it died in.
    fn bury(
        mut self,
        outcome: Followed,
        running: Option<Running<'_>>,
        following: &Following<'_>,
        report: &mut Report,
        done: &mut dyn FnMut(CaseRecord),
    ) {
        let status = match outcome {
            Followed::TimedOut(_) | Followed::Garbled => {
                let _ = self.child.kill();
                self.child.wait()
            }
            Followed::Closed | Followed::Ended => self.child.wait(),
        };
        let mark = running.as_ref().map_or(0, |r| r.stderr_mark);
        let last_words = self.tail.since(mark, Duration::from_millis(200));
        let status = match status {
            Ok(status) => status,
            Err(e) => {
                report.lost = Some(format!("could not be waited for ({e})"));
                return;
            }
        };
        match running {
            Some(running) => {
                let evidence = Evidence {
                    status,
                    timed_out: match outcome {
                        Followed::TimedOut(limit) => Some(limit),
                        _ => None,
                    },
                    oom_killer_ran: match (running.oom_kills, self.oom_kills.read()) {
                        (Some(before), Some(after)) => after > before,
                        _ => false,
                    },
                    stderr_tail: &last_words,
                    last_rss: running.last.map(|(_, rss)| rss),
                    last_vm: running.last.map(|(vm, _)| vm),
                    peak_rss: running.peak,
                    memory_limit: following.limits.memory,
                    address_space_limit: following.settings.isolation.worker_memory_limit,
                };
                let (message, causes) = evidence.describe();
                let memory = MemoryRecord {
                    rss_before_bytes: running.rss_before,
                    rss_peak_bytes: running.peak,
                    rss_method: running.peak.map(|_| RssMethod::Sampled),
                    ..MemoryRecord::default()
                };
                report.settled.insert(running.case.id.clone());
                done(lifecycle::unfinished(
                    running.case,
                    running.stage,
                    message,
                    causes,
                    memory,
                ));
            }
            None if report.ended.is_none() => {
                report.lost = Some(with_last_words(
                    format!("ended ({status}) outside a case"),
                    &last_words,
                ));
            }
            None => {}
        }
    }

    /// Tells a worker that waits for more that none will come, and waits
    /// for it to end: killed where it does not within a few seconds.
    pub(crate) fn quit(self) {
        Self::quit_all([self]);
    }

    /// [`Worker::quit`] for several, told all at once so that they end
    /// side by side.
    pub(crate) fn quit_all(workers: impl IntoIterator<Item = Worker>) {
        let told: Vec<(Worker, bool)> = workers
            .into_iter()
            .map(|mut worker| {
                let told = worker.tell(&ToWorker::Quit).is_ok();
                (worker, told)
            })
            .collect();
        let until = Instant::now() + QUIT;
        for (mut worker, told) in told {
            let mut ended = false;
            while told && !ended && Instant::now() < until {
                ended = !matches!(worker.child.try_wait(), Ok(None));
                if !ended {
                    // A worker told to quit ends within a millisecond or
                    // two: a paired run quits two for each of its groups.
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            if !ended {
                let _ = worker.child.kill();
                let _ = worker.child.wait();
            }
        }
    }
}

impl Drop for Worker {
    /// A worker let go of while it runs (its supervisor failed, or stops)
    /// ends with it, not when the supervisor's process does.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A worker's process, started and not yet connected.
pub(crate) struct Starting {
    child: Child,
    tail: Tail,
}

impl Starting {
    /// Waits for the worker to connect to `socket`, where it was begun;
    /// `Err` says how it failed, and the process is gone.
    pub(crate) fn connect(self, socket: &super::Socket) -> Result<Worker, String> {
        let Starting {
            mut child,
            mut tail,
        } = self;
        let connected = connect(&socket.listener, &mut child).and_then(|stream| {
            let reading = stream
                .set_nonblocking(true)
                .and_then(|()| stream.try_clone())
                .map_err(|e| format!("could not be followed ({e})"))?;
            Ok((stream, reading))
        });
        match connected {
            Ok((stream, reading)) => Ok(Worker {
                memory: ProcessMemory::open(child.id()),
                oom_kills: death::OomKills::open(),
                child,
                tail,
                stream,
                lines: Lines::new(BufReader::new(reading)),
                hello: None,
            }),
            Err(how) => {
                let _ = child.kill();
                let _ = child.wait();
                let last_words = tail.since(0, Duration::from_millis(200));
                Err(with_last_words(how, &last_words))
            }
        }
    }
}

/// How long a worker told to quit may take to end.
const QUIT: Duration = Duration::from_secs(10);

/// Starts a bench binary as `start` says, as a worker of the supervisor
/// at `socket`.
fn spawn(socket: &Path, start: &Start) -> std::io::Result<(Child, Tail)> {
    let mut command = Command::new(&start.exe);
    command
        .args(&start.args)
        .envs(start.env.iter().map(|(k, v)| (k, v)))
        .env(WORKER_ENV, socket)
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(cpu) = start.cpu {
        super::affinity::pin(&mut command, cpu);
    }
    let mut child = command.spawn()?;
    let tail = match child.stderr.take() {
        Some(stderr) => Tail::forward(stderr),
        None => Tail::forward(std::io::empty()),
    };
    Ok((child, tail))
}

/// Waits for the worker to connect.
fn connect(listener: &UnixListener, child: &mut Child) -> Result<UnixStream, String> {
    let until = Instant::now() + CONNECT;
    loop {
        match listener.accept() {
            Ok((stream, _)) => return Ok(stream),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(format!("could not connect ({e})")),
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("ended ({status}) before it started its cases"));
        }
        if Instant::now() >= until {
            return Err(format!(
                "did not start its cases within {}",
                humantime::format_duration(CONNECT)
            ));
        }
        // Woken as the worker connects; a worker that dies first is
        // seen at the next look.
        wait_readable(listener, POLL);
    }
}

fn with_last_words(how: String, tail: &str) -> String {
    match death::last_words(tail) {
        Some(line) => format!("{how}; its last line on stderr: {line}"),
        None => how,
    }
}

/// How following a worker ended.
#[derive(Clone, Copy)]
enum Followed {
    /// It closed the socket: it ended, or died.
    Closed,
    /// The running case ran past this limit.
    TimedOut(Duration),
    /// It sent something that is not a message.
    Garbled,
    /// It ended its run and waits for another.
    Ended,
}

/// The case the worker is running.
struct Running<'a> {
    case: &'a Case,
    since: Instant,
    stage: Stage,
    rss_before: Option<u64>,
    peak: Option<u64>,
    /// The last sample: address space and resident memory.
    last: Option<(u64, u64)>,
    /// The kernel's count of OOM kills at the last look before the case.
    oom_kills: Option<u64>,
    /// How much the worker had written to stderr when the case started.
    stderr_mark: u64,
}

impl Worker {
    fn stderr_seen(&self) -> u64 {
        self.tail.written()
    }

    /// Follows the worker's run of `cases` until it ends it (where `more`
    /// says it waits for another) or closes its socket.
    fn follow<'a>(
        &mut self,
        cases: &[&'a Case],
        more: bool,
        following: &Following<'_>,
        running: &mut Option<Running<'a>>,
        report: &mut Report,
        done: &mut dyn FnMut(CaseRecord),
    ) -> Followed {
        let mut stop_sent = false;
        let mut last_look = Instant::now();
        let mut oom_kills = self.oom_kills.read();
        loop {
            let read = self.lines.read::<FromWorker>();
            let had_message = matches!(read, Ok(Read::Message(_)));
            match read {
                Ok(Read::Message(FromWorker::Hello {
                    bench,
                    protocol,
                    cases,
                    build,
                })) => {
                    self.hello = Some(Hello {
                        bench,
                        protocol,
                        cases,
                        build,
                    });
                }
                Ok(Read::Message(FromWorker::Started { id })) => {
                    let Some(case) = cases.iter().find(|c| c.id == id) else {
                        return Followed::Garbled;
                    };
                    let sample = self.memory.sample();
                    *running = Some(Running {
                        case,
                        stderr_mark: self.stderr_seen(),
                        since: Instant::now(),
                        stage: Stage::Memo,
                        rss_before: sample.map(|(_, rss)| rss),
                        peak: sample.map(|(_, rss)| rss),
                        last: sample,
                        oom_kills,
                    });
                }
                Ok(Read::Message(FromWorker::Stage { stage })) => {
                    if let Some(running) = running {
                        running.stage = stage;
                    }
                }
                Ok(Read::Message(FromWorker::Finished { record })) => {
                    *running = None;
                    report.cases_memo += record.memo.counters;
                    report.cases_memo.evictions += record.memo.evicted.len() as u64;
                    report.settled.insert(record.id.clone());
                    done(*record);
                }
                Ok(Read::Message(FromWorker::Ended {
                    memo,
                    warnings,
                    said,
                    interrupted,
                })) => {
                    report.ended = Some(Ended {
                        memo,
                        warnings,
                        said,
                        interrupted: interrupted.map(Signal::from_number),
                    });
                    if more {
                        return Followed::Ended;
                    }
                    // It exits next: its end is waited for, not polled.
                    let _ = self.stream.set_nonblocking(false);
                    let _ = self.stream.set_read_timeout(Some(CONNECT));
                }
                Ok(Read::Nothing) => {}
                Ok(Read::Closed) => return Followed::Closed,
                Err(_) => return Followed::Garbled,
            }
            // Messages are read as long as they come; the rest is done
            // every POLL.
            if had_message && last_look.elapsed() < POLL {
                continue;
            }
            last_look = Instant::now();
            // Read at each look, not at each case: the kernel writes out
            // every counter it has to give this one.
            oom_kills = self.oom_kills.read();
            if let Some(running) = running {
                if let Some((vm, rss)) = self.memory.sample() {
                    running.last = Some((vm, rss));
                    running.peak = Some(running.peak.map_or(rss, |peak| peak.max(rss)));
                }
                if let Some(limit) = following.settings.isolation.case_timeout
                    && running.since.elapsed() >= limit
                {
                    return Followed::TimedOut(limit);
                }
            }
            if !stop_sent && let Some(signal) = (following.stop)() {
                stop_sent = true;
                let _ = self.tell(&ToWorker::Stop {
                    signal: signal.number(),
                });
            }
            if !had_message {
                wait_readable(&self.stream, POLL);
            }
        }
    }
}

/// Waits until `stream` has something to read, or has closed (a listener:
/// a worker to accept), for at most `timeout`.
fn wait_readable(stream: &impl std::os::fd::AsRawFd, timeout: Duration) {
    let mut fd = libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, which poll writes only its `revents` of;
    // an error or a signal ends the wait early, as a message would.
    unsafe { libc::poll(&mut fd, 1, millis) };
}

/// The worker's memory, read from `/proc/<pid>/statm` where there is one.
struct ProcessMemory {
    statm: Option<File>,
}

impl ProcessMemory {
    /// The memory of process `pid`.
    fn open(pid: u32) -> Self {
        Self {
            statm: File::open(format!("/proc/{pid}/statm")).ok(),
        }
    }

    /// Address space and resident memory, in bytes.
    fn sample(&self) -> Option<(u64, u64)> {
        let file = self.statm.as_ref()?;
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::fs::FileExt as _;
            let mut buffer = [0u8; 128];
            let len = file.read_at(&mut buffer, 0).ok()?;
            let (vm, rss) = crate::measure::rss::statm_bytes(&buffer[..len])?;
            // A process that has died shows nothing until it is reaped.
            (rss > 0).then_some((vm, rss))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = file;
            None
        }
    }
}
