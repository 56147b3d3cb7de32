//! Serving under load, measured against theory: `rate = [...]`'s open
//! loop on one server that takes requests in the order they arrive.
//!
//! - **M/D/1.** A server of exactly 1 ms a request (it keeps its schedule
//!   in time, and each request sleeps until its end), Poisson arrivals at
//!   utilisation 0.5 and 0.8: the mean time in system against M/D/1
//!   theory, plus what the machine adds waking each request after its end
//!   (measured). A trial is a case of its own, so that each draws its own
//!   arrivals.
//! - **A server that computes.** Each request computes for 1 ms behind a
//!   lock, so that one request computes at a time, on the one core the
//!   client leaves to requests: Poisson arrivals at utilisation 0.2 to 0.8,
//!   the share of requests the client issued over 100 µs late, and the mean
//!   time in system against M/D/1 theory. Then the search of the highest
//!   rate under `p99 <= 5ms` against the M/D/1 rate whose p99 is 5 ms.
//! - **The client's own lateness** at 10,000 requests a second of a
//!   request that does nothing: the share issued more than 100 µs after it
//!   was due.
//! - **A stall** of 50 ms planted in the server every second: the p99 of
//!   the open loop at 400 requests a second against the closed loop's
//!   (`concurrency = [1]`, one request after another), on the same server.
//!
//! `cargo bench --bench serving`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats::median;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::record::{CaseRecord, RunRecord};
use nnbench::{Runner, Sampling};

/// The server's time, per request.
const SERVICE: Duration = Duration::from_millis(1);
/// A stalled server stops this long every [`STALL_EVERY`].
const STALL: Duration = Duration::from_millis(50);
const STALL_EVERY: Duration = Duration::from_secs(1);
const TRIALS: usize = 15;
/// Searches of the highest rate: the fewest whose median 95% bounds hold.
const SEARCHES: usize = 6;
/// The latency target of the searches: their p99 at most this.
const TARGET: Duration = Duration::from_millis(5);

/// One server: when it is free, whether it stalls (from when), and by how
/// long each request was woken after its end, in seconds.
struct Server {
    free_at: Option<Instant>,
    stalls_from: Option<Instant>,
    woken_late: Vec<f64>,
}

static SERVER: Mutex<Server> = Mutex::new(Server {
    free_at: None,
    stalls_from: None,
    woken_late: Vec::new(),
});

/// One request: it starts when the server is free (and not stalled), ends
/// [`SERVICE`] later, and returns once it has ended.
fn serve() -> u64 {
    let arrived = Instant::now();
    let end = {
        let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
        let mut start = server.free_at.map_or(arrived, |free| free.max(arrived));
        if let Some(from) = server.stalls_from {
            let into = start.saturating_duration_since(from).as_nanos() % STALL_EVERY.as_nanos();
            if into < STALL.as_nanos() {
                start += STALL - Duration::from_nanos(into as u64);
            }
        }
        let end = start + SERVICE;
        server.free_at = Some(end);
        end
    };
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let late = Instant::now().saturating_duration_since(end).as_secs_f64();
    let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    server.woken_late.push(late);
    1
}

#[nnbench::product(trial = 1..=TRIALS, rate = [500, 800])]
fn queue(trial: usize) -> u64 {
    std::hint::black_box(trial);
    serve()
}

/// One request to the server that computes: [`SERVICE`] of work, one
/// request at a time.
fn compute() -> u64 {
    static LOCK: Mutex<()> = Mutex::new(());
    let _one = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    let mut spins = 0u64;
    while start.elapsed() < SERVICE {
        spins = std::hint::black_box(spins + 1);
    }
    spins
}

#[nnbench::product(trial = 1..=TRIALS, rate = [200, 400, 600, 800])]
fn computed(trial: usize) -> u64 {
    std::hint::black_box(trial);
    compute()
}

#[nnbench::product(trial = 1..=SEARCHES, rate = [100], latency_target = "p99 <= 5ms")]
fn computed_search(trial: usize) -> u64 {
    std::hint::black_box(trial);
    compute()
}

#[nnbench::product(trial = 1..=TRIALS, rate = [10_000])]
fn nothing(trial: usize) -> usize {
    std::hint::black_box(trial)
}

#[nnbench::product(trial = 1..=TRIALS, rate = [400])]
fn stalled_open(trial: usize) -> u64 {
    std::hint::black_box(trial);
    serve()
}

#[nnbench::product(trial = 1..=TRIALS, concurrency = [1])]
fn stalled_closed(trial: usize) -> u64 {
    std::hint::black_box(trial);
    serve()
}

/// The cases `filter` picks, each timed for `period`, on a fresh server
/// (stalling where `stalls`); the mean of how late the machine woke each
/// request after its end, in seconds.
fn run(filter: &str, period: Duration, stalls: bool) -> Result<(RunRecord, f64), String> {
    {
        let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
        server.free_at = None;
        server.stalls_from = stalls.then(Instant::now);
        server.woken_late.clear();
    }
    let record = Runner::new()
        .filter(filter)
        .sampling(
            Sampling::new()
                .warm_up_time(Duration::from_millis(100))
                .measurement_time(period),
        )
        .memory(false)
        .quiet(true)
        .run()
        .map_err(|e| e.to_string())?;
    if let Some(case) = record.cases.iter().find(|c| c.error.is_some()) {
        return Err(format!("{}: {:?}", case.id, case.error));
    }
    let server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let late = server.woken_late.iter().sum::<f64>() / server.woken_late.len().max(1) as f64;
    Ok((record, late))
}

fn trials() -> usize {
    if harness::test_mode() { 1 } else { TRIALS }
}

/// `family/trial=N`'s cases, one a trial.
fn filter(family: &str, trial: usize) -> String {
    format!("{family}/trial={trial},")
}

fn p99(case: &CaseRecord) -> f64 {
    case.time
        .percentiles
        .as_deref()
        .map_or(f64::NAN, |p| p.p99_ns)
}

fn md1(table: &mut Table) -> Result<Vec<String>, String> {
    let period = if harness::test_mode() { 500 } else { 10_000 };
    let mut ratios = [Vec::new(), Vec::new()];
    let mut shown = [(0.0, 0.0, 0u64); 2];
    for trial in 1..=trials() {
        for (at, rate) in [500.0, 800.0].into_iter().enumerate() {
            let (record, woken_late) = run(
                &format!("{}rate={rate}", filter("queue", trial)),
                Duration::from_millis(period),
                false,
            )?;
            let case = record.cases.first().ok_or("no queue case ran")?;
            let service = SERVICE.as_secs_f64();
            let utilisation = rate * service;
            let theory = service + utilisation * service / (2.0 * (1.0 - utilisation)) + woken_late;
            let measured = case.time.mean_ns / 1e9;
            ratios[at].push(measured / theory);
            let requests = case.load.as_deref().map_or(0, |l| l.requests);
            shown[at] = (measured, theory, shown[at].2 + requests);
        }
    }
    let mut verdicts = Vec::new();
    for (at, utilisation) in [0.5, 0.8].into_iter().enumerate() {
        table.add_row([
            format!("M/D/1 at utilisation {utilisation}: mean time in system"),
            format!("{:.3} ms (last trial)", shown[at].0 * 1e3),
            format!("{:.3} ms", shown[at].1 * 1e3),
            format!("{:.3}", median(&ratios[at])),
            format!("{}", shown[at].2),
        ]);
        verdicts.push(format!(
            "M/D/1 at {utilisation}, measured / theory: {}",
            harness::judged(
                &format!("M/D/1 at {utilisation}"),
                &ratios[at],
                Goal::Within(0.9, 1.1),
                1.3,
                |v| format!("{v:.3}")
            )
        ));
    }
    Ok(verdicts)
}

/// M/D/1's probability that a request waits at most `wait` for a server of
/// `service` a request at `rate` requests a second (Erlang's formula, as
/// Franx states it): `(1 - rho) * sum over k <= wait/service of
/// (rate (k service - wait))^k / k! * exp(-rate (k service - wait))`.
fn md1_waits_at_most(rate: f64, service: f64, wait: f64) -> f64 {
    let rho = rate * service;
    if rho >= 1.0 {
        return 0.0;
    }
    let mut sum = 0.0;
    let mut factorial = 1.0;
    for k in 0..=((wait / service).floor() as i32) {
        if k > 0 {
            factorial *= f64::from(k);
        }
        let x = rate * (f64::from(k) * service - wait);
        sum += x.powi(k) / factorial * (-x).exp();
    }
    (1.0 - rho) * sum
}

/// The highest rate at which M/D/1's `quantile` of the time in system
/// (the wait and the service) is at most `target`, by bisection.
fn md1_max_rate(service: f64, quantile: f64, target: f64) -> f64 {
    let (mut low, mut high) = (0.0, 1.0 / service);
    for _ in 0..60 {
        let middle = (low + high) / 2.0;
        if md1_waits_at_most(middle, service, target - service) >= quantile {
            low = middle;
        } else {
            high = middle;
        }
    }
    low
}

fn computing(table: &mut Table) -> Result<Vec<String>, String> {
    let period = if harness::test_mode() { 300 } else { 3_000 };
    let rates = [200.0, 400.0, 600.0, 800.0];
    let (mut late, mut ratios) = (vec![Vec::new(); rates.len()], vec![Vec::new(); rates.len()]);
    let mut requests = vec![0u64; rates.len()];
    let service = SERVICE.as_secs_f64();
    for trial in 1..=trials() {
        for (at, rate) in rates.into_iter().enumerate() {
            let (record, _) = run(
                &format!("{}rate={rate}", filter("computed", trial)),
                Duration::from_millis(period),
                false,
            )?;
            let case = record.cases.first().ok_or("no computed case ran")?;
            let load = case.load.as_deref().ok_or("no load of computed")?;
            let utilisation = rate * service;
            let theory = service + utilisation * service / (2.0 * (1.0 - utilisation));
            late[at].push(load.late_fraction);
            ratios[at].push(case.time.mean_ns / 1e9 / theory);
            requests[at] += load.requests;
        }
    }
    let mut verdicts = Vec::new();
    for (at, rate) in rates.into_iter().enumerate() {
        let utilisation = rate * service;
        table.add_row([
            format!("computing at utilisation {utilisation:.1}: requests sent over 100 µs late"),
            format!("{:.2}%", 100.0 * median(&late[at])),
            "-".to_owned(),
            "-".to_owned(),
            format!("{}", requests[at]),
        ]);
        table.add_row([
            format!("computing at utilisation {utilisation:.1}: mean time in system"),
            "-".to_owned(),
            format!(
                "{:.3} ms",
                1e3 * (service + utilisation * service / (2.0 * (1.0 - utilisation)))
            ),
            format!("{:.3}", median(&ratios[at])),
            format!("{}", requests[at]),
        ]);
        // The client's goal holds to 0.6; at 0.8 it is shown, not judged.
        if utilisation <= 0.6 + 1e-9 {
            verdicts.push(format!(
                "computing at {utilisation:.1}, the share sent over 100 µs late: {}",
                harness::judged(
                    &format!("late computing at {utilisation:.1}"),
                    &late[at],
                    Goal::AtMost(0.01),
                    // An unoptimized dispatcher, on a machine building beside it.
                    10.0,
                    |v| format!("{:.2}%", 100.0 * v)
                )
            ));
        }
    }
    let theory = md1_max_rate(service, 0.99, TARGET.as_secs_f64());
    // Erlang's formula held to what is known apart from it, at utilisation
    // 0.5: P(W = 0) = 1 - rho, and its mean wait is Pollaczek-Khinchine's
    // rho D / (2 (1 - rho)).
    assert!((md1_waits_at_most(500.0, service, 0.0) - 0.5).abs() < 1e-12);
    let step = service / 100.0;
    let mean_wait: f64 = (0..2_000)
        .map(|i| step * (1.0 - md1_waits_at_most(500.0, service, (f64::from(i) + 0.5) * step)))
        .sum();
    assert!(
        (mean_wait / (service / 2.0) - 1.0).abs() < 1e-3,
        "M/D/1's mean wait at 0.5: {mean_wait}"
    );
    if harness::test_mode() {
        verdicts.push(
            "computing, the highest rate: not searched in test mode (a step at p99 takes 1,521 requests; tests/open_loop.rs searches)".to_owned(),
        );
        return Ok(verdicts);
    }
    let (mut found, mut bound) = (Vec::new(), 0);
    let period = Duration::from_millis(3_000);
    for trial in 1..=SEARCHES {
        let (record, _) = run(
            &format!("{}rate=max", filter("computed_search", trial)),
            period,
            false,
        )?;
        let case = record.cases.first().ok_or("no search ran")?;
        let search = case.search.as_deref().ok_or("no search record")?;
        // A client-bound search's rate is the client's, not the server's.
        if search.client_bound.is_some() {
            bound += 1;
        } else {
            found.push(search.max_rate.unwrap_or(0.0) / theory);
        }
    }
    table.add_row([
        format!(
            "computing: highest rate under p99 <= {} ms",
            TARGET.as_millis()
        ),
        format!("{:.0}/s", median(&found) * theory),
        format!("{theory:.0}/s"),
        format!("{:.3}", median(&found)),
        format!("{SEARCHES} searches, {bound} client-bound"),
    ]);
    verdicts.push(format!(
        "computing, the highest rate under p99 <= {} ms against M/D/1's: {}",
        TARGET.as_millis(),
        harness::judged(
            "computing max rate",
            &found,
            Goal::Within(0.9, 1.1),
            1.0,
            |v| format!("{v:.3}")
        )
    ));
    Ok(verdicts)
}

fn lateness(table: &mut Table) -> Result<String, String> {
    let period = if harness::test_mode() { 300 } else { 2_000 };
    let mut late = Vec::new();
    let mut requests = 0;
    for trial in 1..=trials() {
        let (record, _) = run(
            &filter("nothing", trial),
            Duration::from_millis(period),
            false,
        )?;
        let load = record
            .cases
            .first()
            .and_then(|c| c.load.as_deref())
            .ok_or("no load of nothing")?;
        late.push(load.late_fraction);
        requests += load.requests;
    }
    table.add_row([
        "the client at 10,000/s: requests sent over 100 µs late".to_owned(),
        format!("{:.2}%", 100.0 * median(&late)),
        "-".to_owned(),
        "-".to_owned(),
        format!("{requests}"),
    ]);
    Ok(format!(
        "the client at 10,000 requests a second, the share sent over 100 µs late: {}",
        harness::judged(
            "late at 10,000/s",
            &late,
            Goal::AtMost(0.01),
            // An unoptimized dispatcher, on a machine building beside it.
            10.0,
            |v| format!("{:.2}%", 100.0 * v)
        )
    ))
}

fn stall(table: &mut Table) -> Result<Vec<String>, String> {
    let period = Duration::from_millis(if harness::test_mode() { 1_200 } else { 5_000 });
    let (mut open, mut closed) = (Vec::new(), Vec::new());
    let mut rates = (0.0, 0.0);
    for trial in 1..=trials() {
        let (record, _) = run(&filter("stalled_open", trial), period, true)?;
        let case = record.cases.first().ok_or("no open loop ran")?;
        open.push(p99(case));
        rates.0 = case.load.as_deref().map_or(0.0, |l| l.achieved_rate);
        let (record, _) = run(&filter("stalled_closed", trial), period, true)?;
        let case = record.cases.first().ok_or("no closed loop ran")?;
        closed.push(p99(case));
        rates.1 = case
            .concurrency
            .as_deref()
            .map_or(0.0, |c| c.requests_per_second);
    }
    for (name, p99s, rate) in [
        ("open loop at 400/s", &open, rates.0),
        ("closed loop, 1 in flight", &closed, rates.1),
    ] {
        table.add_row([
            format!("50 ms stall a second: {name}, p99"),
            format!("{:.2} ms", median(p99s) / 1e6),
            "-".to_owned(),
            "-".to_owned(),
            format!("{rate:.0}/s achieved"),
        ]);
    }
    let ms = |v: f64| format!("{:.2} ms", v / 1e6);
    Ok(vec![
        format!(
            "open loop's p99 under the stall: {}",
            // One stall in a test-mode run: its few requests place the p99.
            harness::judged("open p99", &open, Goal::AtLeast(40e6), 1.5, ms)
        ),
        format!(
            "closed loop's p99 under the same stall: {}",
            harness::judged("closed p99", &closed, Goal::AtMost(5e6), 1.5, ms)
        ),
    ])
}

fn measure() -> Result<(), String> {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "figure",
        "measured",
        "theory",
        "measured / theory (median)",
        "requests",
    ]);
    let mut verdicts = md1(&mut table)?;
    verdicts.extend(computing(&mut table)?);
    verdicts.push(lateness(&mut table)?);
    verdicts.extend(stall(&mut table)?);
    harness::note(format!(
        "{} trials each, a 1 ms server, Poisson arrivals:",
        trials()
    ));
    harness::table(&table);
    for verdict in verdicts {
        harness::note(verdict);
    }
    Ok(())
}

fn main() {
    if !harness::should_run("serving") {
        return;
    }
    if let Err(message) = measure() {
        eprintln!("serving: {message}");
        std::process::exit(1);
    }
    harness::publish("serving");
}
