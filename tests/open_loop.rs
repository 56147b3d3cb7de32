//! `rate = [...]`: requests at a set arrival rate, each timed from when it
//! was due, checked against queueing theory. The service is one server
//! that takes requests in the order they arrive and spends exactly 1 ms on
//! each: an M/D/1 queue. It keeps its schedule in time itself (a request
//! that arrives while the server is busy starts when the one before it
//! ends) and each request sleeps until its own end, so that no handing
//! over between threads adds to the service, and nothing spins on the
//! cores the dispatcher needs. What the machine adds on top, a request
//! woken after its end, is measured and added to the theory.

#[path = "support/alone.rs"]
mod alone;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use alone::run;
use nnbench::record::CaseRecord;

/// The service's time, per request.
const SERVICE: Duration = Duration::from_millis(1);

/// The server: when it is free, and by how long each request was woken
/// after its end, in seconds.
struct Server {
    free_at: Option<Instant>,
    woken_late: Vec<f64>,
}

static SERVER: Mutex<Server> = Mutex::new(Server {
    free_at: None,
    woken_late: Vec::new(),
});

fn serve() -> u64 {
    serve_for(SERVICE)
}

/// One request of `service` to the server.
fn serve_for(service: Duration) -> u64 {
    let arrived = Instant::now();
    let end = {
        let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
        let start = server.free_at.map_or(arrived, |free| free.max(arrived));
        let end = start + service;
        server.free_at = Some(end);
        end
    };
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    let late = Instant::now().saturating_duration_since(end).as_secs_f64();
    SERVER
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .woken_late
        .push(late);
    u64::from(late > 0.0)
}

/// Utilisation 0.5 and 0.8 of a 1 ms server, Poisson arrivals.
#[nnbench::benchmark(rate = [500, 800], warm_up_time = "200ms", measurement_time = "4s")]
fn queue() -> u64 {
    serve()
}

/// The same server, one request at a time (a closed loop).
#[nnbench::benchmark(concurrency = [1], warm_up_time = "100ms", measurement_time = "1s")]
fn one_at_a_time() -> u64 {
    serve()
}

/// Half the server's capacity, as `queue/rate=500`, in bursts: gaps
/// whose standard deviation is four times their mean.
#[nnbench::benchmark(rate = [500], arrivals = gamma(4), warm_up_time = "200ms", measurement_time = "4s")]
fn bursts() -> u64 {
    serve()
}

/// Even gaps, and a timeout no request of a server this idle reaches.
#[nnbench::benchmark(rate = [100], arrivals = uniform, request_timeout = "1s", warm_up_time = "50ms", measurement_time = "500ms")]
fn even() -> u64 {
    serve()
}

/// The case's record, the service's time and how late the machine woke
/// its requests after their end, on average, in seconds.
fn served(filter: &str) -> (CaseRecord, f64, f64) {
    {
        let mut server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
        server.free_at = None;
        server.woken_late.clear();
    }
    let record = run(filter);
    let case = record
        .cases
        .first()
        .cloned()
        .unwrap_or_else(|| panic!("{filter} ran"));
    assert!(case.error.is_none(), "{:?}", case.error);
    let server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    let late = server.woken_late.iter().sum::<f64>() / server.woken_late.len() as f64;
    (case, SERVICE.as_secs_f64(), late)
}

/// The standard error of `case`'s mean latency, in seconds, by batch
/// means: its windows' means in time order, in ten batches. A queue's
/// waits are correlated over its busy periods, so its requests are not
/// independent samples, but batches that long nearly are.
fn standard_error(case: &CaseRecord) -> f64 {
    const BATCHES: usize = 10;
    let windows = &case.time.samples_ns;
    let n = windows.len();
    assert!(n >= BATCHES, "{n} windows");
    let means: Vec<f64> = (0..BATCHES)
        .map(|b| {
            let batch = &windows[b * n / BATCHES..(b + 1) * n / BATCHES];
            batch.iter().sum::<f64>() / batch.len() as f64
        })
        .collect();
    let mean = means.iter().sum::<f64>() / BATCHES as f64;
    let variance = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (BATCHES - 1) as f64;
    (variance / BATCHES as f64).sqrt() / 1e9
}

/// The share of requests the client may send late for its latencies to
/// be checked against theory: past it, they hold the client's delay.
const KEPT_UP: f64 = 0.05;

/// How many times a run is made again where the machine kept the client
/// from keeping up.
const ATTEMPTS: usize = 3;

#[test]
fn the_mean_time_in_system_is_queueing_theorys_at_half_and_four_fifths_load() {
    for rate in [500.0, 800.0] {
        let mut attempt = 0;
        let (case, service, woken_late) = loop {
            attempt += 1;
            let served = served(&format!("queue/rate={rate}"));
            let late = served.0.load.as_deref().map_or(0.0, |l| l.late_fraction);
            if late <= KEPT_UP {
                break served;
            }
            // A machine too busy for the client to keep up: the run says so,
            // and its latencies cannot be held to the theory.
            assert!(
                served
                    .0
                    .warnings
                    .iter()
                    .any(|w| w.contains("the latencies hold its delay")),
                "{:?}",
                served.0.warnings
            );
            if attempt == ATTEMPTS {
                break served;
            }
        };
        let load = case.load.as_deref().expect("an open loop's record");
        assert_eq!(load.offered_rate, rate);
        assert_eq!(load.arrivals, "poisson");
        let utilisation = rate * service;
        // M/D/1: the service, and the wait behind the requests ahead.
        let theory = service + utilisation * service / (2.0 * (1.0 - utilisation)) + woken_late;
        let measured = case.time.mean_ns / 1e9;
        println!(
            "rate {rate}: utilisation {utilisation:.2}, mean time in system {:.3} ms, theory {:.3} ms (woken {:.3} ms late), {} requests, {:.2}% sent late",
            measured * 1e3,
            theory * 1e3,
            woken_late * 1e3,
            load.requests,
            100.0 * load.late_fraction
        );
        if load.late_fraction <= KEPT_UP {
            // A run of a few seconds knows its mean only so well: near full
            // load one long busy period moves it by tens of percent. The
            // theory holds within what the run's own spread allows, and a
            // little for what the model leaves out.
            let error = standard_error(&case);
            assert!(
                (measured - theory).abs() < 0.15 * theory + 4.0 * error,
                "rate {rate}: {measured} s where theory says {theory} s (the mean known to {error} s): {load:?}"
            );
        } else {
            // A client that fell behind in every run: each request is
            // still timed from when it was due, so its delay adds to the
            // queue's time and never hides in it.
            eprintln!(
                "rate {rate}: the client fell behind in {ATTEMPTS} runs: the latencies were held \
                 only to at least the theory's"
            );
            assert!(
                measured > 0.8 * theory,
                "rate {rate}: {measured} s, under theory's {theory} s, though the client was late: {load:?}"
            );
        }
        assert!(load.requests as f64 > 0.8 * rate * 4.0, "{load:?}");
        assert!((load.achieved_rate / rate - 1.0).abs() < 0.15, "{load:?}");
        let p = case.time.percentiles.expect("percentiles");
        assert!(
            p.p999_ns.is_some(),
            "a thousand requests or more place p99.9: {p:?}"
        );
    }
}

#[test]
fn a_closed_loop_reports_the_service_where_the_open_loop_reports_the_queue() {
    let (closed, service, _) = served("one_at_a_time/");
    let closed_mean = closed.time.mean_ns / 1e9;
    assert!(closed.load.is_none() && closed.concurrency.is_some());
    assert!(
        closed_mean < 1.5 * service,
        "one at a time, a request takes the service: {closed_mean} s against {service} s"
    );
    let (open, service, _) = served("queue/rate=800");
    let open_mean = open.time.mean_ns / 1e9;
    assert!(
        open_mean > 2.0 * service,
        "at four fifths load, requests wait behind each other: {open_mean} s against {service} s"
    );
}

#[test]
fn bursts_at_the_same_rate_wait_longer_in_the_tail_than_poisson_arrivals() {
    let (bursty, _, _) = served("bursts/");
    let load = bursty.load.as_deref().expect("an open loop's record");
    assert_eq!(load.arrivals, "gamma(4)");
    let (poisson, _, _) = served("queue/rate=500");
    let tail = |case: &CaseRecord| case.time.percentiles.as_ref().expect("percentiles").p99_ns;
    // Waits grow with the square of the gaps' coefficient of variation
    // (Kingman): sixteen times Poisson's here, which no noise of the
    // machine's hides.
    assert!(
        tail(&bursty) > 2.0 * tail(&poisson),
        "p99 {} ns in bursts against {} ns at Poisson arrivals",
        tail(&bursty),
        tail(&poisson)
    );
    assert!(
        (load.achieved_rate / 500.0 - 1.0).abs() < 0.3,
        "bursts keep the mean rate: {load:?}"
    );
}

#[test]
fn uniform_arrivals_and_a_timeout_are_recorded() {
    let (case, _, _) = served("even/");
    let load = case.load.as_deref().expect("an open loop's record");
    assert_eq!(load.arrivals, "uniform");
    assert_eq!(load.timeout_ns, Some(1e9));
    assert_eq!((load.timed_out, load.dropped), (0, 0));
    assert_eq!(load.requests, 50, "{load:?}");
    assert_eq!(case.params["rate"], 100.0);
    // The dispatcher takes a core of its own wherever there are two.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let placed = if cores >= 2 { "own core" } else { "shared" };
    let dispatcher = load.dispatcher.as_deref().unwrap_or_default();
    assert!(
        dispatcher.starts_with(placed),
        "{dispatcher} on {cores} cores"
    );
}

/// Requests that compute for 20 ms each, searched under a target they
/// meet at 40 a second on a core of their own.
#[nnbench::benchmark(rate = [40], latency_target = "p90 <= 100ms", warm_up_time = "100ms", measurement_time = "1s")]
fn computing() -> u64 {
    let start = Instant::now();
    let mut spins = 0u64;
    while start.elapsed() < Duration::from_millis(20) {
        spins = std::hint::black_box(spins + 1);
    }
    spins
}

#[test]
fn a_search_whose_client_falls_behind_finds_no_rate_of_the_service() {
    // On one core, the dispatcher wakes behind requests that compute for
    // 20 ms: it issues many late, and the steps hold its delay. The
    // runner's threads take this thread's one core.
    let record = std::thread::spawn(|| {
        let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(0, &mut one) };
        let set = unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&one), &one) };
        assert_eq!(set, 0, "this thread on core 0");
        run("computing/rate=max")
    })
    .join()
    .expect("the run");
    let case = &record.cases[0];
    let load = case.load.as_deref().expect("the load of the last step");
    let dispatcher = load.dispatcher.as_deref().unwrap_or_default();
    assert!(dispatcher.starts_with("shared"), "{dispatcher}");
    client_bound(case);
}

/// Checks that `case`'s search ended at its first step whose client fell
/// behind, with no rate to gate on.
fn client_bound(case: &CaseRecord) {
    let search = case.search.as_deref().expect("the search's record");
    let last = search.steps.last().expect("a step");
    assert!(last.client_bound && !last.meets, "{search:?}");
    assert!(last.late_fraction > 0.01, "{search:?}");
    assert_eq!(search.client_bound, Some(last.rate), "{search:?}");
    assert_eq!(search.max_rate, None, "no rate of the service: {search:?}");
    assert!(
        search.steps[..search.steps.len() - 1]
            .iter()
            .all(|s| !s.client_bound),
        "the search ends at the first step whose client fell behind: {search:?}"
    );
    assert_eq!(case.figure(nnbench::record::Figure::MaxRate), None);
}

/// A slower server (10 ms a request, 100 a second at most), searched for
/// the highest Poisson rate whose p90 stays within three of its requests:
/// long enough that a busy machine's late wake-ups (milliseconds) do not
/// decide it.
#[nnbench::benchmark(rate = [40], latency_target = "p90 <= 30ms", warm_up_time = "100ms", measurement_time = "1s")]
fn searched() -> u64 {
    serve_for(SLOW_SERVICE)
}

const SLOW_SERVICE: Duration = Duration::from_millis(10);

#[test]
fn the_highest_rate_under_a_latency_target_is_bracketed_within_five_percent() {
    // A machine too busy for the client to keep up ends the search there:
    // run again, and where it stays so, the run says so.
    let mut attempt = 0;
    let case = loop {
        attempt += 1;
        let (case, _, _) = served("searched/rate=max");
        let search = case.search.as_deref().expect("the search's record");
        if search.client_bound.is_none() {
            break case;
        }
        // The step's latencies hold the client's delay: the run says
        // client-bound and gives no rate, which is all it can say.
        client_bound(&case);
        if attempt == ATTEMPTS {
            eprintln!(
                "the client fell behind in {ATTEMPTS} runs of a server that sleeps: a machine \
                 too busy to judge the bracket: {search:?}"
            );
            return;
        }
    };
    let search = case.search.as_deref().expect("the search's record");
    let max_rate = search
        .max_rate
        .expect("a rate found, where the client kept up");
    let capacity = 1.0 / SLOW_SERVICE.as_secs_f64();
    for step in &search.steps {
        println!(
            "  {:>6.1}/s: p90 {:.2} ms [{:.2}, {:.2}], {} requests{}",
            step.rate,
            step.latency_ns / 1e6,
            step.interval_ns[0] / 1e6,
            step.interval_ns[1] / 1e6,
            step.requests,
            if step.meets { ", meets" } else { "" }
        );
    }
    println!(
        "max rate {:.1}/s of a capacity of {capacity:.0}/s",
        max_rate
    );
    assert_eq!(search.target, "p90 <= 30ms");
    assert_eq!(case.params["rate"], "max");
    let share = max_rate / capacity;
    assert!(share <= 1.0, "{share} of the capacity: {search:?}");
    // M/D/1 at 0.4 of its capacity has a p90 of about 1.3 requests' time:
    // a first step that missed three met a machine that slowed the service
    // itself, and the search answered for that machine, lower; wherever it
    // ended, its bracket holds.
    if search.steps[0].meets {
        assert!(share >= 0.4, "{share} of the capacity: {search:?}");
    } else {
        eprintln!("the service missed its target at 0.4 of its capacity: a busy machine");
    }
    let missed = search.missed_at.expect("a rate above it missed");
    let at = |rate: f64| search.steps.iter().find(|s| s.rate == rate).expect("tried");
    assert!(!at(missed).meets, "{search:?}");
    if max_rate > 0.0 {
        assert!(missed / max_rate <= 1.05 + 1e-9, "{search:?}");
        assert!(at(max_rate).meets, "{search:?}");
        // The case's time is the step's at the rate found.
        let load = case.load.as_deref().expect("the load at the rate found");
        assert_eq!(load.offered_rate, max_rate);
    } else {
        // Halved as far as it goes: no rate tried met the target.
        assert!(search.steps.iter().all(|s| !s.meets), "{search:?}");
    }
}
