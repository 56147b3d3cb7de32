//! A run: the selected cases, in this process or in workers, recorded
//! and written where the settings say.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::Runner;
use super::order::Schedule;
use super::order::{self, Planning};
use super::report::console::Console;
use super::report::ledger::{Closing, Ledger, Stop};
use super::report::progress::{self, Progress};
use super::setup::{interrupt, provenance, select};
use super::sweep::case_loop::{self, Sink};
use super::sweep::watchdog::{self, Watchdog};
use crate::memo;
use crate::memo::journal::{self, Said};
use crate::record::{OutputFormat, RecordError, RunMemoRecord, RunRecord};
use crate::registry::{self, Case};
use crate::settings::Settings;
use crate::{Error, Result};

impl Runner {
    /// The ids of the selected cases, in the order a run would start them
    /// (a run may reorder further once it knows which memos are large).
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::parametrize([(n = 1), (n = 2)])]
    /// fn listed(n: u32) -> u32 { n }
    ///
    /// let ids = nnbench::Runner::new().filter("listed/").list();
    /// assert_eq!(ids, ["listed/n=1", "listed/n=2"]);
    /// ```
    pub fn list(&self) -> Vec<String> {
        self.listing().ids
    }

    /// [`list`](Self::list); with `--shard` one line on the shard (its
    /// cases, memo loads and share of the expected cost); with a memory
    /// budget the plan's lines (the loads, bytes and peak it expects, and
    /// the lower bound).
    pub(crate) fn listing(&self) -> Listing {
        let cases = registry::cases();
        let (selected, shard) = select::select(&self.settings, &cases);
        let mut schedule = Schedule::new(&selected);
        let mut plan = Vec::new();
        if let Some(mut planning) = Planning::new(&self.settings, &schedule) {
            planning.plan(&mut schedule);
            plan = planning
                .into_record()
                .map(|p| order::describe(&p))
                .unwrap_or_default();
        }
        let ids = std::iter::from_fn(|| {
            let next = schedule.next(|_| None)?;
            schedule.finish(next);
            Some(selected[next].id.clone())
        })
        .collect();
        Listing {
            ids,
            shard: shard.map(|s| s.describe()),
            plan,
        }
    }

    /// Runs the selected cases and writes the record where configured.
    ///
    /// A failing case does not stop the run: its error is in its record, and
    /// [`RunRecord::failed`] counts them.
    ///
    /// # Errors
    ///
    /// When an output file has neither a `.json` nor an `.ndjson` extension
    /// (checked before any case runs), or a record cannot be written.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark(tags = ["doc"])]
    /// fn answer() -> u8 { 42 }
    ///
    /// let record = nnbench::Runner::new().tag("doc").test_mode(true).quiet(true).run().unwrap();
    /// assert_eq!(record.failed(), 0);
    /// ```
    pub fn run(&self) -> Result<RunRecord> {
        let settings = &self.settings;
        if let Some(out) = &settings.output.out {
            OutputFormat::of(out)?;
            crate::atomic_file::check_writable(out).map_err(|source| RecordError::Io {
                path: out.clone(),
                source,
            })?;
        }
        // The run's disk tier is in force on this thread, where its cases
        // and their hooks resolve memos; a run beside it keeps its own.
        memo::with_disk_tier(settings.memory.disk_tier.clone(), || {
            let _recording = journal::record();
            self.run_recorded()
        })
    }

    fn run_recorded(&self) -> Result<RunRecord> {
        let settings = &self.settings;
        refuse_unrunnable(settings)?;
        if settings.memory.clears_disk_tier() {
            memo::clear_disk_tier()?;
        }
        let cases = registry::cases();
        let Started {
            mut selected,
            console,
            ledger,
            closing,
        } = start(settings, &cases);
        let stop = || {
            settings
                .process
                .interruptible
                .then(interrupt::requested)
                .flatten()
        };
        let mode = Mode::of(settings);
        // A bench binary counts instructions in workers under Callgrind;
        // elsewhere a counted case fails, saying so. A paired run pairs
        // them in such workers itself.
        let counted: Vec<&Case> =
            if settings.process.bench_binary && !matches!(mode, Mode::Paired(_)) {
                let (counted, timed) = selected
                    .into_iter()
                    .partition(|case| super::case::engine::counted(case, settings));
                selected = timed;
                counted
            } else {
                Vec::new()
            };
        let on = On {
            settings,
            stop: &stop,
            ledger: &ledger,
            console: &console,
        };
        let mut ran = match mode {
            Mode::InProcess => Ran {
                stopped: run_in_process(&selected, &on, &closing)?,
                ..Ran::default()
            },
            Mode::Isolated => run_in_workers(&selected, &on, false)?,
            Mode::Paired(base) => run_paired(&selected, &on, base)?,
        };
        if ran.stopped.is_none() && !counted.is_empty() {
            let before = ran.memo.take().unwrap_or_else(|| closing.local_memo());
            let counted = run_counted(&counted, &on, before)?;
            (ran.stopped, ran.memo) = (counted.stopped, counted.memo);
        }
        let mut record = closing.record(&mut lock(&ledger), ran.stopped, ran.memo);
        record.paired = ran.paired;
        closing.finish(&record, &console)?;
        Ok(record)
    }
}

/// What a run has once it starts its first case: the cases left to run,
/// in the selection's order, and where their records go.
struct Started<'c> {
    selected: Vec<&'c Case>,
    console: Console,
    ledger: Arc<Mutex<Ledger>>,
    closing: Arc<Closing>,
}

/// Everything before the first case: the selection (this shard's, less
/// what a resumed run finished), the context, the warnings so far, and the
/// ledger the cases' records go to.
fn start<'c>(settings: &Settings, cases: &'c [Case]) -> Started<'c> {
    let started_at = crate::record::now_rfc3339();
    let repo_dir = settings
        .output
        .repo_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("."));
    // The context (git, host, GPU) takes milliseconds to gather: it is
    // gathered while the grids are built, and done before the first case
    // starts, so that it disturbs no case's figures.
    let command: Vec<String> = std::env::args().collect();
    // A thread's exit raises the process's lasting peak to the mark
    // (which getrusage then reports): lowered to what is resident
    // first, as an earlier run's memory was freed, the context's
    // thread leaves no peak above the cases' to read around.
    if !settings.memory.no_memory {
        crate::measure::rss::reset_peak();
    }
    let context = std::thread::Builder::new()
        .name("nnbench-context".into())
        .spawn({
            let (dir, command) = (repo_dir.clone(), command.clone());
            move || provenance::collect(&dir, command)
        });
    let (mut selected, shard) = select::select(settings, cases);
    if let Some(shard) = &shard
        && !settings.output.quiet
    {
        eprintln!("{}", shard.describe());
    }
    let shard = shard.map(|s| s.record);
    let progress_path = settings
        .output
        .latest_dir
        .as_ref()
        .map(|dir| dir.join("progress.ndjson"));
    let total = selected.len();
    let (previous, mut resumed) = resume(settings, progress_path.as_deref(), &mut selected);
    // Room for every record at once: growing a vector of ten thousand
    // copies it, page by page, a dozen times.
    resumed.reserve_exact(selected.len());
    if !settings.memory.no_memory {
        fault_in_spare_capacity(&mut resumed);
    }

    let console = Console::new(settings.output.quiet, selected.len());
    // Cases this process runs have their records' parameters made
    // while git finishes: work of the cases' loop, done off it.
    if !settings.isolation.isolate && settings.pairing.base.is_none() {
        for case in &selected {
            case.prepare_record();
        }
    }
    let mut context = match context {
        Ok(handle) => handle
            .join()
            .unwrap_or_else(|_| provenance::collect(&repo_dir, command)),
        Err(_) => provenance::collect(&repo_dir, command),
    };
    // The roofs, where a case declares its work: from the machine's cache,
    // or measured now, before the first case.
    let declared = selected.iter().any(|case| case.work.is_some());
    context.machine = Some(super::setup::machine::for_run(
        &context,
        declared,
        settings.timing.test_mode,
    ));
    let mut warnings = run_warnings(settings);
    let counts = selected
        .iter()
        .any(|case| super::case::engine::counted(case, settings));
    if counts && let Some(why) = crate::measure::perf::unavailable() {
        warnings.push(format!(
                "no hardware instruction counts here, beside Callgrind's ({why}): time.hw_instructions is null"
            ));
    }
    warnings.extend(previous.warnings);
    let progress = open_progress(settings, progress_path.as_deref(), &resumed, &mut warnings);
    let ledger = Arc::new(Mutex::new(Ledger {
        records: resumed,
        warnings,
        said: Vec::new(),
        progress,
        loading: super::report::ledger::Loading::default(),
    }));
    let closing = Arc::new(Closing {
        settings: settings.clone(),
        name: settings
            .output
            .name
            .clone()
            .unwrap_or_else(default_run_name),
        started_at,
        context,
        busy: crate::measure::busy::before(),
        stats_before: memo::global_cache().stats(),
        total,
        shard,
    });
    Started {
        selected,
        console,
        ledger,
        closing,
    }
}

/// `progress.ndjson`, appended to by a resumed run; a warning where it
/// cannot be written, and the run goes on without it.
fn open_progress(
    settings: &Settings,
    path: Option<&std::path::Path>,
    resumed: &[crate::CaseRecord],
    warnings: &mut Vec<String>,
) -> Option<Progress> {
    let path = path?;
    match Progress::open(path, settings.selection.resume && !resumed.is_empty()) {
        Ok(progress) => Some(progress),
        Err(e) => {
            warnings.push(format!(
                "{}: finished cases are not written as the run goes ({e})",
                path.display()
            ));
            None
        }
    }
}

/// What `--list` prints.
pub(crate) struct Listing {
    /// The cases, in the order a run would start them.
    pub ids: Vec<String>,
    /// With `--shard`, what the shard takes.
    pub shard: Option<String>,
    /// With a memory budget, what the plan expects.
    pub plan: Vec<String>,
}

fn lock(ledger: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    ledger.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Refuses settings this process cannot run, before anything starts.
fn refuse_unrunnable(settings: &Settings) -> Result<()> {
    if (settings.isolation.isolate
        || settings.isolation.case_timeout.is_some()
        || settings.pairing.base.is_some())
        && !settings.process.bench_binary
    {
        return Err(Error::msg(
            "--isolate, --paired and --case-timeout work in a bench binary (`nnbench::main!()`), which starts itself again as a worker or ends on a timed-out case",
        ));
    }
    #[cfg(not(feature = "criterion"))]
    if settings.timing.forced.0 == Some(crate::settings::Timing::Criterion) {
        return Err(Error::msg(super::case::criterion_sampler::UNAVAILABLE));
    }
    Ok(())
}

/// With `--resume`, what an interrupted run left in its progress file at
/// `progress`: the records of the `selected` cases it finished, which
/// leave `selected`.
fn resume(
    settings: &Settings,
    progress: Option<&std::path::Path>,
    selected: &mut Vec<&Case>,
) -> (progress::Previous, Vec<crate::CaseRecord>) {
    let previous = match (progress, settings.selection.resume) {
        (Some(path), true) => progress::read(path),
        (None, true) => progress::Previous {
            warnings: vec![
                "--resume: only a measuring bench binary (cargo bench) keeps the progress of its runs: every case runs".into(),
            ],
            ..progress::Previous::default()
        },
        _ => progress::Previous::default(),
    };
    let finished = previous.ids();
    let resumed: Vec<crate::CaseRecord> = previous
        .cases
        .iter()
        .filter(|c| selected.iter().any(|s| s.id == c.id))
        .cloned()
        .collect();
    selected.retain(|c| !finished.contains(c.id.as_str()));
    (previous, resumed)
}

/// How a run's cases run; each mode has a function of its own below.
enum Mode<'a> {
    /// One after another in this process.
    InProcess,
    /// In worker processes of this bench binary (`--isolate`).
    Isolated,
    /// In rounds beside the workers of the build at the path (`--paired`).
    Paired(&'a std::path::Path),
}

impl<'a> Mode<'a> {
    fn of(settings: &'a Settings) -> Self {
        match (&settings.pairing.base, settings.isolation.isolate) {
            (_, true) => Mode::Isolated,
            (Some(base), false) => Mode::Paired(base),
            (None, false) => Mode::InProcess,
        }
    }
}

/// What every mode runs its cases on.
struct On<'a> {
    settings: &'a Settings,
    stop: &'a dyn Fn() -> Option<interrupt::Signal>,
    ledger: &'a Arc<Mutex<Ledger>>,
    console: &'a Console,
}

/// What a mode comes to besides its cases: what stopped it early, what
/// its workers' memo caches did (in this process's cache otherwise), and
/// a paired run's side of the pairing.
#[derive(Default)]
struct Ran {
    stopped: Option<Stop>,
    memo: Option<RunMemoRecord>,
    paired: Option<crate::record::PairedRun>,
}

/// Runs `selected` in this process, under a watchdog with
/// `--case-timeout`. Says what stopped the run early, if anything.
fn run_in_process(selected: &[&Case], on: &On, closing: &Arc<Closing>) -> Result<Option<Stop>> {
    let On {
        settings,
        stop,
        ledger,
        console,
    } = *on;
    let watchdog = match settings.isolation.case_timeout {
        Some(limit) => Some(
            Watchdog::start(limit, close_on_timeout(limit, ledger, closing))
                .map_err(|e| Error::msg(format!("--case-timeout: no watchdog thread: {e}")))?,
        ),
        None => None,
    };
    let mut sink = Local {
        ledger,
        console,
        stop,
        watchdog: watchdog.as_ref(),
    };
    let end = case_loop::run_cases(selected, &[], settings, console, &mut sink);
    drop(watchdog);
    let mut ledger = lock(ledger);
    ledger.warnings.extend(end.warnings);
    Said::merge(&mut ledger.said, end.said);
    ledger.loading = end.loading;
    for rounds in end.rounds {
        rounds.apply(&mut ledger.records);
    }
    Ok(end.interrupted.map(Stop::Signal))
}

/// Runs the cases whose instructions are counted, in workers under
/// Callgrind, after the others; their memo figures add to `before`, what
/// the rest of the run did.
fn run_counted(counted: &[&Case], on: &On, before: RunMemoRecord) -> Result<Ran> {
    let mut ran = run_in_workers(counted, on, true)?;
    let mut memo = ran.memo.take().unwrap_or_default();
    memo.counters += before.counters;
    memo.entries_at_end = before.entries_at_end;
    memo.resident_bytes_at_end = before.resident_bytes_at_end;
    memo.disk_bytes_at_end = before.disk_bytes_at_end;
    ran.memo = Some(memo);
    Ok(ran)
}

/// Runs `selected` in worker processes of this bench binary: plain ones
/// (`--isolate`), or, when `counted`, ones under Callgrind, which counts
/// their instructions. Says what stopped the run early, if anything, and
/// what the workers' memo caches did.
#[cfg(unix)]
fn run_in_workers(selected: &[&Case], on: &On, counted: bool) -> Result<Ran> {
    let On {
        settings,
        stop,
        ledger,
        console,
    } = *on;
    let flag = if counted {
        "counting instructions"
    } else {
        "--isolate"
    };
    let mut start = super::workers::watch::Start::this_binary()
        .map_err(|e| Error::msg(format!("{flag}: this bench binary's path: {e}")))?;
    // Its folder of dumps lives as long as the workers.
    let callgrind = counted
        .then(super::workers::valgrind::Callgrind::find)
        .transpose()?;
    if let Some(callgrind) = &callgrind {
        start = callgrind.wrap(&start);
    }
    let outcome =
        super::workers::supervise(selected, settings, &start, flag, stop, &mut |record| {
            lock(ledger).add(record, console)
        })?;
    let mut ledger = lock(ledger);
    ledger.warnings.extend(outcome.warnings);
    Said::merge(&mut ledger.said, outcome.said);
    Ok(Ran {
        stopped: outcome.interrupted.map(Stop::Signal),
        memo: Some(outcome.memo),
        paired: None,
    })
}

#[cfg(not(unix))]
fn run_in_workers(_: &[&Case], _: &On, counted: bool) -> Result<Ran> {
    Err(Error::msg(if counted {
        "counting instructions needs a Unix system"
    } else {
        "--isolate needs a Unix system"
    }))
}

/// Runs `selected` paired with the build at `base` (`--paired`).
#[cfg(unix)]
fn run_paired(selected: &[&Case], on: &On, base: &std::path::Path) -> Result<Ran> {
    let On {
        settings,
        stop,
        ledger,
        console,
    } = *on;
    let outcome = super::paired::supervise(selected, settings, base, stop, &mut |record| {
        lock(ledger).add(record, console)
    })?;
    lock(ledger).warnings.extend(outcome.warnings);
    Ok(Ran {
        stopped: outcome.interrupted.map(Stop::Signal),
        memo: Some(outcome.memo),
        paired: outcome.run,
    })
}

#[cfg(not(unix))]
fn run_paired(_: &[&Case], _: &On, _: &std::path::Path) -> Result<Ran> {
    Err(Error::msg("--paired needs a Unix system"))
}

/// What the watchdog does with a case that ran past `limit`: records it,
/// closes the run with the cases finished, and ends the process, since the
/// case's thread cannot be stopped.
fn close_on_timeout(
    limit: std::time::Duration,
    ledger: &Arc<Mutex<Ledger>>,
    closing: &Arc<Closing>,
) -> impl FnOnce(watchdog::Overdue) + Send + 'static {
    let (ledger, closing) = (Arc::clone(ledger), Arc::clone(closing));
    move |overdue| {
        let record = overdue.into_record(limit);
        let id = record.id.clone();
        let mut ledger = lock(&ledger);
        ledger.keep(record);
        let run = closing.record(&mut ledger, Some(Stop::CaseTimeout), None);
        let written = closing.finish(&run, &Console::new(closing.settings.output.quiet, 0));
        eprintln!(
            "error: {id} ran past --case-timeout {}; the run stopped there (--isolate kills such a case and goes on); `--resume` runs the cases left",
            humantime::format_duration(limit)
        );
        if let Err(error) = written {
            eprintln!("error: {error:#}");
        }
        std::process::exit(1)
    }
}

/// The sink of cases run in this process: the console, the progress file
/// and the ledger, and the watchdog of `--case-timeout`.
struct Local<'a> {
    ledger: &'a Mutex<Ledger>,
    console: &'a Console,
    stop: &'a dyn Fn() -> Option<interrupt::Signal>,
    watchdog: Option<&'a Watchdog>,
}

impl Sink for Local<'_> {
    fn starting(&mut self, case: &Case) {
        if let Some(watchdog) = self.watchdog {
            watchdog.arm(case);
        }
    }

    fn stage(&mut self, stage: crate::record::Stage) {
        if let Some(watchdog) = self.watchdog {
            watchdog.stage(stage);
        }
    }

    fn finished(&mut self, record: crate::CaseRecord) {
        if let Some(watchdog) = self.watchdog {
            watchdog.disarm();
        }
        lock(self.ledger).add(record, self.console);
    }

    fn stop(&mut self) -> Option<interrupt::Signal> {
        (self.stop)()
    }
}

/// Makes the memory `records` has room for resident now. The records fill
/// it as cases finish; faulted in then, it would grow what is resident
/// between cases, and make each case after read it again.
fn fault_in_spare_capacity<T>(records: &mut Vec<T>) {
    fault_in_advised(records, huge_pages_on_advice());
}

/// [`fault_in_spare_capacity`], advised to take huge pages while it faults
/// in where `advise` says so; whether the kernel took the advice.
fn fault_in_advised<T>(records: &mut Vec<T>, advise: bool) -> bool {
    let spare = records.spare_capacity_mut();
    let bytes = std::mem::size_of_val(spare);
    let start = spare.as_mut_ptr().cast::<u8>();
    in_huge_pages(start, bytes, advise, || {
        // A write per page of the smallest size, which any page size divides.
        for offset in (0..bytes).step_by(4096) {
            // SAFETY: `offset` lies within the spare capacity, memory the
            // vector owns and has not initialized: writing a byte there is
            // allowed, and no element reads it before one is pushed over it.
            unsafe { start.add(offset).write_volatile(0) };
        }
    })
}

/// Runs `fault_in`, which faults in the `bytes` at `start`, with those
/// bytes advised to take huge pages where `advise` says so (the run asks
/// where the kernel gives them on advice, transparent huge pages on
/// `madvise`), and says whether the advice was taken: a grid of ten thousand cases then
/// takes a few faults for its records, where it would take thousands of
/// small ones. The advice is taken back as soon as they are resident: the
/// pages stay huge, and once the records are freed, the user's own memory
/// that the allocator places there is faulted in small pages again, as
/// everywhere else, so no later case's memory figures see larger steps.
#[cfg(target_os = "linux")]
fn in_huge_pages(start: *mut u8, bytes: usize, advise: bool, fault_in: impl FnOnce()) -> bool {
    const HUGE: usize = 2 << 20;
    let first = (start as usize).next_multiple_of(HUGE);
    let end = (start as usize).saturating_add(bytes) / HUGE * HUGE;
    let give = |advice| {
        // SAFETY: the range lies within memory the vector owns; the advice
        // changes how it is backed, never what it holds, and a kernel
        // without transparent huge pages refuses it harmlessly.
        unsafe { libc::madvise(first as *mut libc::c_void, end - first, advice) == 0 }
    };
    let advised = end > first && advise && give(libc::MADV_HUGEPAGE);
    fault_in();
    if advised {
        // Under `madvise`, a range advised against huge pages is backed as
        // one never advised.
        give(libc::MADV_NOHUGEPAGE);
    }
    advised
}

#[cfg(not(target_os = "linux"))]
fn in_huge_pages(_start: *mut u8, _bytes: usize, _advise: bool, fault_in: impl FnOnce()) -> bool {
    fault_in();
    false
}

/// Whether the kernel backs memory with transparent huge pages only where
/// advised to: elsewhere it does so always (and the advice adds nothing)
/// or never.
#[cfg(target_os = "linux")]
fn huge_pages_on_advice() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|modes| modes.contains("[madvise]"))
}

/// Settings that ask for something the run will not do, or that were
/// given under a name they no longer have.
fn run_warnings(settings: &Settings) -> Vec<String> {
    let baselines = &settings.baselines;
    let baseline = baselines.save.as_ref().or(baselines.compare.as_ref());
    let mut warnings = settings.renamed.clone();
    if let Some(name) = baseline
        && settings.timing.test_mode
    {
        warnings.push(format!(
            "baseline `{name}` is neither saved nor compared: in test mode (no --bench) no case is sampled"
        ));
    }
    warnings
}

/// The executable's name without cargo's hash suffix.
fn default_run_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash))
                if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                name.to_owned()
            }
            _ => stem,
        })
        .unwrap_or_else(|| "nnbench".into())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The `VmFlags` of every mapping of this process that overlaps
    /// `[start, end)`, from `/proc/self/smaps`.
    fn flags_over(start: usize, end: usize) -> Vec<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
        let mut overlaps = false;
        let mut flags = Vec::new();
        for line in smaps.lines() {
            let range = line.split_once(' ').and_then(|(range, _)| {
                let (low, high) = range.split_once('-')?;
                Some((
                    usize::from_str_radix(low, 16).ok()?,
                    usize::from_str_radix(high, 16).ok()?,
                ))
            });
            if let Some((low, high)) = range {
                overlaps = low < end && start < high;
            } else if let Some(vm_flags) = line.strip_prefix("VmFlags:")
                && overlaps
            {
                flags.push(vm_flags.trim().to_owned());
            }
        }
        flags
    }

    #[test]
    fn the_records_room_is_resident_and_keeps_no_huge_page_advice() {
        let mut records: Vec<[u8; 1024]> = Vec::with_capacity(8 << 10);
        // Advised whatever this machine's setting, so that the advice is
        // there to be taken back on any kernel with transparent huge pages.
        let advised = super::fault_in_advised(&mut records, true);
        let thp = std::fs::metadata("/sys/kernel/mm/transparent_hugepage/enabled").is_ok();
        assert_eq!(
            advised, thp,
            "the kernel's huge pages are advised where it has them"
        );
        let start = records.as_ptr() as usize;
        let end = start + records.capacity() * 1024;
        let flags = flags_over(start, end);
        assert!(!flags.is_empty(), "no mapping holds the records' room");
        // Advice left on the room would outlive the records: the user's
        // memory that the allocator puts there later would fault in 2 MiB
        // at a time, and show so in its cases' figures.
        assert!(
            flags.iter().all(|f| !f.split(' ').any(|flag| flag == "hg")),
            "the room keeps its huge page advice: {flags:?}"
        );
        let resident = crate::measure::rss::current_bytes().expect("statm is readable");
        assert!(resident >= 8 << 20, "{resident} bytes resident");
    }
}
