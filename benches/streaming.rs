//! Whether a streaming case's figures are the service's: a simulated
//! language model server with known costs, one worker that takes
//! requests first come first served, computes a prefill of `PREFILL` a
//! prompt token and then `DECODE` an output token on the CPU (spinning,
//! not sleeping), and hands each token to the request as it is made.
//! Prompt and output lengths are drawn per request from a seeded
//! generator, uniform over `PROMPTS` and `OUTPUTS`.
//!
//! - At low load, TTFT's median is the case's own first-token time
//!   (timed from its call: the prefill and the handing over, all but the
//!   client's lateness, which the harness's TTFT from when the request was
//!   due adds), and TPOT's is `DECODE`.
//! - At utilisation 0.5 and 0.8 under Poisson arrivals, the mean TTFT is
//!   the M/G/1 queue's (Pollaczek-Khinchine) wait plus the mean prefill.
//! - A 50 ms stall between two tokens of one request in twenty shows in
//!   TPOT p99 and in the longest gap, and leaves TTFT's median as the
//!   steady run's beside it.
//! - `arrivals = gamma(4)` at the same mean rate lengthens TTFT p99.
//! - A token costs the harness less than 1 µs: a stream of empty items
//!   timed beside the same items taken without timestamps.
//!
//! Each figure is a median over rounds, judged on its 95% bounds.
//! `cargo bench --bench streaming`.

#[path = "support/harness.rs"]
mod harness;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use harness::Goal;
use harness::stats::median;
use nnbench::record::StreamRecord;
use nnbench::{RunRecord, Runner};

/// Compute a prompt token costs.
const PREFILL: Duration = Duration::from_micros(20);
/// Compute an output token costs.
const DECODE: Duration = Duration::from_millis(1);
/// Prompt lengths, in tokens.
const PROMPTS: (u64, u64) = (16, 256);
/// Output lengths, in tokens.
const OUTPUTS: (u64, u64) = (4, 16);
/// The stall planted between two tokens of one request in twenty.
const STALL: Duration = Duration::from_millis(50);

fn rounds() -> usize {
    if harness::test_mode() { 1 } else { 6 }
}

/// One request for the worker: its lengths, whether it stalls, and where
/// its tokens go.
struct Job {
    prompt: u64,
    output: u64,
    stall: bool,
    /// Each token, with when the worker made it.
    tokens: Sender<Instant>,
}

/// Each request's first token as the case's own stopwatch times it, ns:
/// from the call that made the request to the token in hand (its wait, its
/// prefill, and the handing over both ways), against which the harness's
/// TTFT, from when the request was due, adds the client's lateness.
static OWN_TTFT: Mutex<Vec<f64>> = Mutex::new(Vec::new());

fn own_ttft() -> std::sync::MutexGuard<'static, Vec<f64>> {
    OWN_TTFT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Computes on the CPU until `deadline`.
fn compute_until(deadline: Instant) {
    let mut x = 1u64;
    while Instant::now() < deadline {
        for _ in 0..64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

/// The server's one worker, started on first use.
fn server() -> &'static Mutex<Sender<Job>> {
    static SERVER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    SERVER.get_or_init(|| {
        let (send, jobs): (Sender<Job>, Receiver<Job>) = mpsc::channel();
        std::thread::Builder::new()
            .name("model-server".into())
            .spawn(move || {
                for job in jobs {
                    let mut at = Instant::now() + PREFILL * job.prompt as u32;
                    for token in 0..job.output {
                        compute_until(at);
                        if job.stall && token == job.output / 2 {
                            compute_until(Instant::now() + STALL);
                        }
                        let _ = job.tokens.send(Instant::now());
                        at = Instant::now() + DECODE;
                    }
                }
            })
            .expect("the server's thread");
        Mutex::new(send)
    })
}

/// Requests made so far by each kind of case, which seeds each one's
/// lengths: the stalled and the steady cases draw the same ones.
static MADE: AtomicU64 = AtomicU64::new(0);
static STALLED_MADE: AtomicU64 = AtomicU64::new(0);

/// A request's lengths, drawn from its number.
fn lengths(number: u64) -> (u64, u64) {
    let mut rng = fastrand::Rng::with_seed(number);
    (
        rng.u64(PROMPTS.0..=PROMPTS.1),
        rng.u64(OUTPUTS.0..=OUTPUTS.1),
    )
}

/// A request to the server: its tokens as the worker makes them.
fn request(stalls: bool) -> impl Iterator<Item = Instant> {
    let made = if stalls { &STALLED_MADE } else { &MADE };
    let number = made.fetch_add(1, Ordering::Relaxed);
    let (prompt, output) = lengths(number);
    let (tokens, arrive) = mpsc::channel();
    let job = Job {
        prompt,
        output,
        stall: stalls && number % 20 == 19,
        tokens,
    };
    let asked = Instant::now();
    let sent = server()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send(job);
    assert!(sent.is_ok(), "the server's worker is gone");
    let mut first = true;
    arrive.into_iter().inspect(move |_| {
        if std::mem::take(&mut first) {
            own_ttft().push(asked.elapsed().as_nanos() as f64);
        }
    })
}

/// Utilisation 0.5 and 0.8 ([`utilisation`]), Poisson arrivals.
#[nnbench::benchmark(stream, rate = [42.7, 68.3], warm_up_time = "500ms", measurement_time = "8s")]
fn served() -> impl Iterator<Item = Instant> {
    request(false)
}

/// Utilisation 0.5 in bursts.
#[nnbench::benchmark(stream, rate = [42.7], arrivals = gamma(4), warm_up_time = "500ms", measurement_time = "8s")]
fn bursty() -> impl Iterator<Item = Instant> {
    request(false)
}

/// Low load: no queue to speak of.
#[nnbench::benchmark(stream, rate = [4], warm_up_time = "200ms", measurement_time = "4s")]
fn idle() -> impl Iterator<Item = Instant> {
    request(false)
}

/// A light load, with one request in twenty stalled or none.
#[nnbench::product(stalls = [true, false], stream, rate = [12], warm_up_time = "200ms", measurement_time = "4s")]
fn light(stalls: bool) -> impl Iterator<Item = Instant> {
    request(stalls)
}

const EMPTY_TOKENS: u64 = 100_000;

/// Tokens that cost nothing to make: what the harness's timestamps cost.
#[nnbench::benchmark(stream, timing = sampled)]
fn empty_tokens() -> std::ops::Range<u64> {
    0..EMPTY_TOKENS
}

/// The same items taken without timestamps.
#[nnbench::benchmark(timing = sampled)]
fn untimed_tokens() -> u64 {
    (0..EMPTY_TOKENS).map(std::hint::black_box).count() as u64
}

/// One run of the cases `filter` picks.
fn run(filter: &str) -> Result<RunRecord, String> {
    // Each run's cases draw the same lengths in turn: the stalled and the
    // steady one alike.
    MADE.store(0, Ordering::Relaxed);
    STALLED_MADE.store(0, Ordering::Relaxed);
    let mut runner = Runner::new().filter(filter).quiet(true).memory(false);
    if harness::test_mode() {
        runner = runner.test_mode(true);
    }
    runner.run().map_err(|e| format!("{e:#}"))
}

fn stream<'a>(record: &'a RunRecord, id: &str) -> Result<&'a StreamRecord, String> {
    harness::case(record, id)?
        .stream
        .as_deref()
        .ok_or_else(|| format!("{id}: no stream"))
}

/// The mean and second moment of a uniform integer over `low..=high`.
fn uniform_moments((low, high): (u64, u64)) -> (f64, f64) {
    let n = (high - low + 1) as f64;
    let mean = (low + high) as f64 / 2.0;
    (mean, mean * mean + (n * n - 1.0) / 12.0)
}

/// The mean service time of a request and its second moment, seconds:
/// the prefill, then a decode for each token after the first.
fn service_moments() -> (f64, f64) {
    let (p, p2) = uniform_moments(PROMPTS);
    let (o, o2) = uniform_moments(OUTPUTS);
    let (cp, cd) = (PREFILL.as_secs_f64(), DECODE.as_secs_f64());
    // S = cp P + cd (O - 1), P and O independent.
    let mean = cp * p + cd * (o - 1.0);
    let decode2 = o2 - 2.0 * o + 1.0;
    let second = cp * cp * p2 + 2.0 * cp * cd * p * (o - 1.0) + cd * cd * decode2;
    (mean, second)
}

/// The utilisation of the server at `rate` requests a second.
fn utilisation(rate: f64) -> f64 {
    rate * service_moments().0
}

/// The M/G/1 queue's mean TTFT at `rate`, seconds: the Pollaczek-Khinchine
/// wait, then the request's own prefill.
fn theory_ttft(rate: f64) -> f64 {
    let (mean, second) = service_moments();
    let rho = rate * mean;
    rate * second / (2.0 * (1.0 - rho)) + PREFILL.as_secs_f64() * uniform_moments(PROMPTS).0
}

fn ratio(v: f64) -> String {
    format!("{v:.3}")
}

fn measure() -> Result<(), String> {
    let mut rows: Vec<(String, Vec<f64>, Goal, String)> = Vec::new();
    let mut add = |name: &str, values: Vec<f64>, goal: Goal, reference: String| {
        rows.push((name.to_owned(), values, goal, reference));
    };
    let collect = |filter: &str, ids: &[&str]| -> Result<Vec<Vec<StreamRecord>>, String> {
        let mut out = vec![Vec::new(); ids.len()];
        for _ in 0..rounds() {
            let record = run(filter)?;
            for (i, id) in ids.iter().enumerate() {
                out[i].push(stream(&record, id)?.clone());
            }
        }
        Ok(out)
    };
    own_ttft().clear();
    let idle = collect("idle/", &["idle/rate=4"])?.remove(0);
    let own = median(own_ttft().iter());
    add(
        "low load: TTFT p50 / the case's own first-token time",
        idle.iter().map(|s| s.ttft.p50_ns / own).collect(),
        Goal::Within(0.9, 1.1),
        format!("{:.2} ms (prefill and handing over)", own / 1e6),
    );
    add(
        "low load: TPOT p50 / the decode of a token",
        idle.iter()
            .map(|s| s.tpot.p50_ns / DECODE.as_nanos() as f64)
            .collect(),
        Goal::Within(0.9, 1.1),
        format!("{:.2} ms", DECODE.as_secs_f64() * 1e3),
    );
    let served = collect("served/", &["served/rate=42.7", "served/rate=68.3"])?;
    for (rate, streams) in [42.7, 68.3].into_iter().zip(&served) {
        let theory = theory_ttft(rate) * 1e9;
        add(
            &format!(
                "utilisation {:.2}: mean TTFT / M/G/1 theory",
                utilisation(rate)
            ),
            streams.iter().map(|s| s.ttft.mean_ns / theory).collect(),
            Goal::Within(0.85, 1.15),
            format!("{:.2} ms", theory / 1e6),
        );
    }
    let bursts = collect("bursty/", &["bursty/rate=42.7"])?.remove(0);
    add(
        "gamma(4) / Poisson at utilisation 0.5: TTFT p99",
        bursts
            .iter()
            .zip(&served[0])
            .map(|(b, p)| b.ttft.p99_ns / p.ttft.p99_ns)
            .collect(),
        Goal::AtLeast(1.0),
        "above 1: bursts queue".to_owned(),
    );
    let pair = collect(
        "light/",
        &["light/stalls=true,rate=12", "light/stalls=false,rate=12"],
    )?;
    add(
        "stall in one of 20: TPOT p99 / p50",
        pair[0]
            .iter()
            .map(|s| s.tpot.p99_ns / s.tpot.p50_ns)
            .collect(),
        Goal::AtLeast(3.0),
        "several times".to_owned(),
    );
    add(
        "stall in one of 20: longest gap / the stall",
        pair[0]
            .iter()
            .map(|s| s.itl.max_ns / STALL.as_nanos() as f64)
            .collect(),
        Goal::AtLeast(1.0),
        format!("{} ms", STALL.as_millis()),
    );
    add(
        "stall in one of 20: TTFT p50 / the steady run's",
        pair[0]
            .iter()
            .zip(&pair[1])
            .map(|(a, b)| a.ttft.p50_ns / b.ttft.p50_ns)
            .collect(),
        Goal::Within(0.9, 1.1),
        "unchanged".to_owned(),
    );
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "figure",
        "median of rounds",
        "reference",
        "verdict",
    ]);
    for (name, values, goal, reference) in rows {
        // Test mode's few requests place no queue: shown, not judged.
        let verdict = harness::judged_on_full_runs(&name, &values, goal, ratio);
        table.add_row([name, ratio(median(&values)), reference, verdict]);
    }
    harness::table(&table);
    token_cost()?;
    harness::note(format!(
        "{} rounds; prompts of {}-{} tokens at {} µs each, outputs of {}-{} tokens at {} ms each, computed on one worker thread, first come first served; the client's dispatcher on a core of its own where there are two.",
        rounds(),
        PROMPTS.0,
        PROMPTS.1,
        PREFILL.as_micros(),
        OUTPUTS.0,
        OUTPUTS.1,
        DECODE.as_millis()
    ));
    Ok(())
}

/// What a token costs the harness: empty items timed, less the same
/// items taken without timestamps, in one run, a round each.
fn token_cost() -> Result<(), String> {
    let mut costs = Vec::new();
    for _ in 0..rounds() {
        let record = run("_tokens")?;
        let timed = harness::case(&record, "empty_tokens")?.time.median_ns;
        let untimed = harness::case(&record, "untimed_tokens")?.time.median_ns;
        costs.push((timed - untimed) / EMPTY_TOKENS as f64);
    }
    let show = |ns: f64| format!("{ns:.1} ns");
    harness::note(format!(
        "A token's timestamp: {}.",
        harness::judged(
            "a token's cost",
            &costs,
            Goal::AtMost(1000.0),
            harness::DEBUG_SLACK,
            show
        )
    ));
    Ok(())
}

fn main() {
    if !harness::should_run("streaming") {
        return;
    }
    if let Err(message) = measure() {
        eprintln!("streaming: {message}");
        std::process::exit(1);
    }
    harness::publish("streaming");
}
