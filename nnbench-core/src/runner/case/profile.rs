//! A case's profile (`--profile`): once it is timed, its calls are made
//! again for the measurement time under the sampling profiler, and what
//! they ran is drawn as a flamegraph. Separate from the timing, so that
//! the profiler's interruptions cost the figures nothing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::engine::TimingPlan;
use crate::Result;
use crate::atomic_file;
use crate::measure::Timer;
use crate::measure::cpu::Clocks;
use crate::measure::load::LoadPlan;
use crate::measure::profile::{Profiler, within};
use crate::registry::{Args, Call, Parallel};
use crate::settings::Settings;

/// How long a case's calls are profiled unless its measurement time says.
const PROFILE_TIME: Duration = Duration::from_secs(1);

/// How long each run of calls between two reads of the clock lasts, about.
const BATCH: Duration = Duration::from_millis(10);

/// Ids longer than this are cut in the flamegraph's file name.
const LONGEST_NAME: usize = 96;

/// Profiles the calls of case `id`, each taking about `per_call`, and
/// draws them into `dir`. The outer error is the call's own (it failed or
/// panicked while profiled), and fails the case; the inner one says why
/// there is no profile, a warning.
pub(crate) fn take(
    id: &str,
    call: &Call,
    args: &Args,
    plan: &TimingPlan,
    per_call: Duration,
    dir: &Path,
) -> Result<std::result::Result<PathBuf, String>> {
    let duration = plan.sampling.measurement_time.unwrap_or(PROFILE_TIME);
    let profiler = match Profiler::start() {
        Ok(profiler) => profiler,
        Err(why) => return Ok(Err(why)),
    };
    let called = calls(call, args, plan, per_call, duration);
    let folded = profiler.finish();
    called.map_err(|error| error.context("while profiled"))?;
    let folded = match folded {
        Ok(folded) if folded.samples() == 0 => {
            return Ok(Err(format!(
                "the profiler took no sample of its calls in {}: they waited, and did not compute",
                humantime::format_duration(duration)
            )));
        }
        Ok(folded) => folded,
        Err(why) => return Ok(Err(why)),
    };
    let path = path_of(dir, id);
    let written = atomic_file::write(&path, |file| {
        let mut out = std::io::BufWriter::new(file);
        folded.svg(id, &mut out)?;
        out.flush()
    })
    .and_then(|()| {
        // The stacks themselves, beside: what a differential flamegraph
        // of two builds is drawn from, and what other tools read.
        atomic_file::write(&folded_path(&path), |file| {
            let mut out = std::io::BufWriter::new(file);
            for line in folded.lines() {
                writeln!(out, "{line}")?;
            }
            out.flush()
        })
    });
    Ok(written
        .map(|()| path.clone())
        .map_err(|error| format!("could not write {}: {}", path.display(), error.into_io())))
}

/// The folded stacks beside the flamegraph at `svg`: `<case>.folded`.
pub(crate) fn folded_path(svg: &Path) -> PathBuf {
    svg.with_extension("folded")
}

/// Draws the differential flamegraph of case `id` from the folded stacks
/// of the base build and of this one into `dir/diff`, a call of this one
/// taking `ratio` times as long: the head's stacks, each frame red where
/// its time per call grew, blue where it fell. Returns its path, or why
/// there is none.
pub(crate) fn differential(
    id: &str,
    (base, head): (&str, &str),
    ratio: f64,
    dir: &Path,
) -> std::result::Result<PathBuf, String> {
    let path = path_of(&dir.join("diff"), id);
    atomic_file::write(&path, |file| {
        let mut out = std::io::BufWriter::new(file);
        crate::measure::profile::differential(id, base, head, ratio, &mut out)?;
        out.flush()
    })
    .map(|()| path.clone())
    .map_err(|error| format!("could not write {}: {}", path.display(), error.into_io()))
}

/// Where the flamegraphs of a run go: the run's folder for them, else
/// `profiles` beside its latest record, else under the run's name in
/// `target/nnbench`.
pub(crate) fn dir(settings: &Settings) -> PathBuf {
    let dir = match (&settings.profiling.dir, &settings.output.latest_dir) {
        (Some(dir), _) => dir.clone(),
        (None, Some(latest)) => latest.join("profiles"),
        (None, None) => {
            let run = settings.output.name.as_deref().unwrap_or("nnbench");
            crate::paths::bench_dir(run).join("profiles")
        }
    };
    // Absolute, so that the record's paths hold wherever it is read.
    std::path::absolute(&dir).unwrap_or(dir)
}

/// Makes the case's calls for about `duration`, each inside [`within`],
/// as its timing made them: in runs of about [`BATCH`], on its threads, or
/// as requests in flight.
///
/// The kernel takes the profiler's samples at its ticks (every 4 ms at
/// 250 Hz), whatever frequency is asked, so calls that repeat at a period
/// dividing the tick's are sampled at one point of them again and again.
/// Between runs the thread spins for a random part of a call's CPU time,
/// which moves that point (its samples fall outside [`within`], and are
/// the harness's).
///
/// The runs are timed by the wall clock alone: reading a CPU clock is a
/// system call, and the samples then gather where the runs start (beside
/// a cold build, a function that takes the first third of each call drew
/// up to twice its share of them).
fn calls(
    call: &Call,
    args: &Args,
    plan: &TimingPlan,
    per_call: Duration,
    duration: Duration,
) -> Result<()> {
    let called = |timer: &mut Timer| {
        let mut outcome = Ok(serde_json::Value::Null);
        within(&mut || outcome = call(args, timer));
        outcome.map(drop)
    };
    if let Some(Parallel::Concurrency(level)) = plan.parallel {
        let load = LoadPlan {
            level,
            warm_up: Duration::ZERO,
            duration,
            once: false,
            open: None,
        };
        return called(&mut Timer::new(1).under_load(load));
    }
    let threads = match plan.parallel {
        Some(Parallel::Threads(count)) => count,
        _ => 1,
    };
    let iters = (BATCH.as_nanos() / per_call.as_nanos().max(1)).clamp(1, u128::from(u32::MAX));
    let until = Instant::now() + duration;
    let dither = Dither::up_to(per_call.min(MAX_DITHER));
    loop {
        called(&mut Timer::new(iters as u64).on_threads(threads).wall_only())?;
        if Instant::now() >= until {
            return Ok(());
        }
        dither.spin();
    }
}

/// The longest spin between runs of profiled calls: a tick's length at
/// 100 Hz, the slowest common kernel tick.
const MAX_DITHER: Duration = Duration::from_millis(10);

/// Spins for a random part of `most` of the thread's CPU time, counted in
/// steps. A spin timed by the wall clock, which a neighbour's turn runs
/// past, would end as the thread comes back at a tick: the next run would
/// start one tick before a sample again and again.
struct Dither {
    most: f64,
    /// The steps a nanosecond of CPU time takes.
    steps_per_ns: f64,
}

impl Dither {
    fn up_to(most: Duration) -> Self {
        const STEPS: u64 = 100_000;
        let clocks = Clocks::start();
        steps(STEPS);
        let cpu = clocks.stop().thread_cpu.filter(|cpu| !cpu.is_zero());
        Self {
            most: most.as_nanos() as f64,
            steps_per_ns: cpu.map_or(1.0, |cpu| STEPS as f64 / cpu.as_nanos() as f64),
        }
    }

    fn spin(&self) {
        steps((self.most * fastrand::f64() * self.steps_per_ns) as u64);
    }
}

#[inline(never)]
fn steps(count: u64) {
    let mut x = 0u64;
    for i in 0..count {
        x = std::hint::black_box(x.wrapping_add(i));
    }
}

/// `dir/<id>.svg`, each `/` of the id a folder, other characters that do
/// not belong in a file name replaced; a name that had to change, or be
/// cut, ends in a hash of the id, so that two cases never share a file.
fn path_of(dir: &Path, id: &str) -> PathBuf {
    let mut changed = false;
    let mut segments: Vec<String> = id
        .split('/')
        .map(|segment| {
            // A run of characters a file name should not hold is one `_`.
            let mut clean = String::with_capacity(segment.len());
            for c in segment.chars() {
                match c {
                    'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' | '=' | ',' | '+' => {
                        clean.push(c);
                    }
                    _ if clean.ends_with('_') => {}
                    _ => clean.push('_'),
                }
            }
            if clean.is_empty() || clean.chars().all(|c| c == '.') {
                clean.insert(0, '_');
            }
            if clean.len() > LONGEST_NAME {
                clean.truncate(LONGEST_NAME);
            }
            changed |= clean != segment;
            clean
        })
        .collect();
    if let Some(last) = segments.last_mut() {
        if changed {
            let hash = blake3::hash(id.as_bytes()).to_hex();
            last.push('-');
            last.push_str(&hash[..12]);
        }
        last.push_str(".svg");
    }
    segments.iter().fold(dir.to_owned(), |path, s| path.join(s))
}

/// Why a case timed as `plan` says has no profile, if it has none.
pub(crate) fn refused(plan: &TimingPlan) -> Option<String> {
    (plan.timing == crate::Timing::Instructions).then(|| {
        "its instructions were counted under Callgrind, which a profiler would only slow down"
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_profiled_calls_read_no_cpu_clock() {
        use std::sync::{Arc, Mutex};
        let clocks = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&clocks);
        let call: Box<Call> = Box::new(move |_, timer| {
            timer.time_shared(|| std::hint::black_box(7));
            let elapsed = timer.elapsed().expect("timed");
            let cpu = (
                elapsed.thread_cpu,
                elapsed.process_cpu,
                elapsed.instructions,
            );
            seen.lock().unwrap().push(cpu);
            Ok(serde_json::Value::Null)
        });
        for threads in [None, Some(Parallel::Threads(2))] {
            let plan = TimingPlan {
                timing: crate::settings::Timing::Sampled,
                sampling: crate::settings::Sampling::default(),
                auto_threshold: Duration::ZERO,
                sampler: crate::record::Sampler::Adaptive,
                round: crate::measure::round::Round::CALIBRATE,
                parallel: threads,
                open: Default::default(),
                search: None,
                slo: &[],
                seed: 0,
            };
            let per_call = Duration::from_millis(1);
            calls(
                &*call,
                &Args::default(),
                &plan,
                per_call,
                Duration::from_millis(5),
            )
            .unwrap();
        }
        let clocks = clocks.lock().unwrap();
        assert!(!clocks.is_empty());
        assert!(
            clocks.iter().all(|c| *c == (None, None, None)),
            "{clocks:?}"
        );
    }

    #[test]
    fn a_case_id_names_its_flamegraph() {
        let dir = Path::new("profiles");
        assert_eq!(
            path_of(dir, "classify/model=small,concurrency=16"),
            Path::new("profiles/classify/model=small,concurrency=16.svg")
        );
        assert_eq!(path_of(dir, "sum"), Path::new("profiles/sum.svg"));
    }

    #[test]
    fn a_name_that_had_to_change_keeps_apart_by_its_hash() {
        let dir = Path::new("p");
        let spaced = path_of(dir, "eval/model=Memo(a b)");
        let underscored = path_of(dir, "eval/model=Memo_a_b_");
        assert_ne!(spaced, underscored);
        assert!(spaced.starts_with("p/eval"));
        let name = spaced.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("model=Memo_a_b_-") && name.ends_with(".svg"),
            "{name}"
        );
        let debug = path_of(dir, "count/text=Text { len: 2048 },threads=4");
        let name = debug.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("text=Text_len_2048_,threads=4-"), "{name}");
        // No segment climbs out of the folder.
        assert!(path_of(dir, "../x").starts_with("p/_.."));
        assert!(path_of(dir, "a//b").starts_with("p/a/_"));
        let long = path_of(dir, &"x".repeat(300));
        assert!(long.file_name().unwrap().len() < 120);
    }
}
