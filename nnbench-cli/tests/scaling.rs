//! `scaling = n`: families whose work grows as n, n² and n log n by
//! construction get those exponents, with intervals near them; a
//! build in which the linear family turned quadratic fails `nnbench
//! compare` on that family's scaling alone; a parameter that cannot be
//! fitted against is an error naming it. Nothing asserts on a time: only
//! on how time grows with n, side by side in one run.

#[path = "../../benches/support/steps.rs"]
mod steps;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use nnbench::{RunRecord, Runner, Sampling};
use steps::work;

/// Makes `linear` do n² work: the "build" that regressed.
static TURNED_QUADRATIC: AtomicBool = AtomicBool::new(false);

#[nnbench::product(n = [256, 512, 1024, 2048, 4096], scaling = n)]
fn linear(n: u64) -> u64 {
    if TURNED_QUADRATIC.load(Ordering::SeqCst) {
        work(n * n / 4)
    } else {
        work(64 * n)
    }
}

// From 4096 steps: below that, the call's fixed cost bends the fit.
#[nnbench::product(n = [64, 128, 256, 512, 1024], scaling = n)]
fn quadratic(n: u64) -> u64 {
    work(n * n)
}

#[nnbench::product(n = [256, 512, 1024, 2048, 4096], scaling = n)]
fn n_log_n(n: u64) -> u64 {
    work(4 * n * u64::from(n.ilog2()))
}

/// Each combination of the other parameters is fitted on its own.
#[nnbench::product(n = [256, 512, 1024, 2048], k = [1, 4], scaling = n)]
fn per_k(n: u64, k: u64) -> u64 {
    work(64 * k * n)
}

/// A table every size of a family reads: a memo.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table;

impl nnbench::Memo for Table {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        Ok((0..1024).collect())
    }
}

#[nnbench::product(n = [256, 512, 1024, 2048], table = [Table], scaling = n)]
fn with_table(n: u64, table: &[u64]) -> u64 {
    work(64 * n) ^ table[(n % 1024) as usize]
}

/// Values made by an expression: only the run can tell there are two.
const TWO_SIZES: [u64; 2] = [64, 128];

#[nnbench::product(n = TWO_SIZES, scaling = n)]
fn too_few_sizes(n: u64) -> u64 {
    n
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

fn run(filter: &str) -> RunRecord {
    // The default timing: each case sampled by nnbench's own sampler
    // until its median is known within 1%, or for the measurement time.
    Runner::new()
        .filter(filter)
        .quiet(true)
        .sampling(
            Sampling::new()
                .sample_size(10)
                .warm_up_time(Duration::from_millis(20))
                .measurement_time(Duration::from_millis(150)),
        )
        .run()
        .unwrap()
}

fn time_fit<'a>(record: &'a RunRecord, family: &str) -> &'a nnbench::record::ScalingRecord {
    record
        .scaling
        .iter()
        .find(|s| s.family == family && s.figure == "time")
        .unwrap_or_else(|| panic!("{family} was fitted: {:#?}", record.scaling))
}

/// The exponent a least-squares line through log(cost(n)) against log(n)
/// has over `sizes`: what a family built as `cost` should measure.
fn expected(sizes: &[f64], cost: impl Fn(f64) -> f64) -> f64 {
    let xs: Vec<f64> = sizes.iter().map(|n| n.ln()).collect();
    let ys: Vec<f64> = sizes.iter().map(|&n| cost(n).ln()).collect();
    let (mx, my) = (
        xs.iter().sum::<f64>() / xs.len() as f64,
        ys.iter().sum::<f64>() / ys.len() as f64,
    );
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// Whether a fit's 95% interval reaches within 0.05 of `k`: the calls'
/// fixed cost moves the power by a few hundredths, which its interval
/// does not count.
fn near(interval: [f64; 2], k: f64) -> bool {
    interval[0] <= k + 0.05 && k - 0.05 <= interval[1]
}

#[test]
fn families_built_as_n_n_squared_and_n_log_n_fit_those_exponents() {
    let _serial = serial();
    TURNED_QUADRATIC.store(false, Ordering::SeqCst);
    let sizes = [256.0, 512.0, 1024.0, 2048.0, 4096.0];
    for (family, k) in [
        ("linear", 1.0),
        ("quadratic", 2.0),
        ("n_log_n", expected(&sizes, |n| n * n.log2().floor())),
    ] {
        let record = run(&format!("{family}/"));
        assert_eq!(record.failed(), 0);
        let fit = time_fit(&record, family);
        assert_eq!((fit.parameter.as_str(), fit.points), ("n", 5));
        // Fitted from the rounds in which the run timed every size once,
        // which a machine whose speed drifts slows alike.
        assert!(fit.rounds >= 3, "{fit:?}");
        for case in &record.cases {
            assert_eq!(case.time.rounds_ns.len(), fit.rounds, "{}", case.id);
            assert!(case.time.rounds_ns.iter().all(|&t| t > 0.0), "{}", case.id);
        }
        assert!(
            (fit.exponent - k).abs() < 0.1,
            "{family}, expected {k}: {fit:?}"
        );
        assert!(
            near(fit.interval, k),
            "{family}: the interval is near {k}: {fit:?}"
        );
        // Not held to `fit == "power"`: a neighbour busy part of the time
        // slows the long samples of the largest size throughout, while the
        // short ones of small sizes can fall between its bursts, and their
        // fast quartile does, which bends the fit at the largest size.
        assert!(fit.constant > 0.0, "{fit:?}");
        assert!(
            record
                .cases
                .iter()
                .all(|c| c.scales_with.as_deref() == Some("n"))
        );
    }
    let per_k = run("per_k/");
    let fits: Vec<String> = per_k
        .scaling
        .iter()
        .filter(|s| s.figure == "time")
        .map(|s| s.label())
        .collect();
    assert_eq!(fits, ["per_k (k=1)", "per_k (k=4)"]);
    // Its calls allocate nothing: the few pages they fault in are noise,
    // not a growth of memory to fit.
    assert!(
        per_k.scaling.iter().all(|s| s.figure == "time"),
        "{:#?}",
        per_k.scaling
    );
    assert!(
        per_k
            .scaling
            .iter()
            .all(|s| (s.exponent - 1.0).abs() < 0.1 && s.rounds >= 3),
        "{:#?}",
        per_k.scaling
    );
}

#[test]
fn a_family_timed_in_rounds_loads_its_memo_once_and_evicts_it_after_them() {
    let _serial = serial();
    let record = run("with_table/");
    assert_eq!(record.failed(), 0);
    let loads: u64 = record.cases.iter().map(|c| c.memo.loads).sum();
    assert_eq!(loads, 1, "the rounds load nothing");
    let evicted: Vec<(&str, &Vec<String>)> = record
        .cases
        .iter()
        .filter(|c| !c.memo.evicted.is_empty())
        .map(|c| (c.id.as_str(), &c.memo.evicted))
        .collect();
    assert_eq!(
        evicted.len(),
        1,
        "evicted once, after the rounds: {evicted:?}"
    );
    assert_eq!(evicted[0].1.len(), 1, "{evicted:?}");
    let fit = time_fit(&record, "with_table");
    assert!(
        fit.rounds >= 3 && (fit.exponent - 1.0).abs() < 0.1,
        "{fit:?}"
    );
}

#[test]
fn a_family_that_turned_quadratic_fails_compare_on_its_scaling_alone() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, record: &RunRecord| {
        let path = dir.path().join(name);
        record.write(&path).unwrap();
        path
    };
    TURNED_QUADRATIC.store(false, Ordering::SeqCst);
    let base = write("base.json", &run("linear/"));
    let base_quadratic = run("quadratic/");
    TURNED_QUADRATIC.store(true, Ordering::SeqCst);
    let head_linear = run("linear/");
    TURNED_QUADRATIC.store(false, Ordering::SeqCst);
    let head = write("head.json", &head_linear);
    let turned = time_fit(&head_linear, "linear");
    assert!((turned.exponent - 2.0).abs() < 0.15, "{turned:?}");

    let compared = support::tool()
        .args(["compare", base.to_str().unwrap(), head.to_str().unwrap()])
        .output()
        .unwrap();
    let said = support::said(&compared);
    assert_eq!(compared.status.code(), Some(1), "{said}");
    // The base's power is 1 within the fit's noise (0.99 or 1.01), the
    // head's 2 within it.
    let line = said
        .lines()
        .find(|l| l.starts_with("scaling REGRESSED: linear: time ∝ n^"))
        .unwrap_or_else(|| panic!("{said}"));
    let powers: Vec<f64> = line
        .split("n^")
        .skip(1)
        .filter_map(|p| p.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(
        powers.len() == 2 && (powers[0] - 1.0).abs() < 0.1 && (powers[1] - 2.0).abs() < 0.15,
        "{line}"
    );
    assert!(said.contains("scaling regressed"), "{said}");
    let json = support::tool()
        .args([
            "compare",
            base.to_str().unwrap(),
            head.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let time = json["scaling"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["figure"] == "time")
        .unwrap();
    assert_eq!(
        (time["family"].as_str(), time["verdict"].as_str()),
        (Some("linear"), Some("regressed"))
    );
    assert!(time["head"]["exponent"].as_f64().unwrap() > 1.8);

    // The quadratic family, measured again unchanged, is unchanged.
    let again = run("quadratic/");
    let comparison = nnbench_core::compare::compare(&base_quadratic, &again, &Default::default());
    let quadratic = comparison
        .scaling
        .iter()
        .find(|s| s.figure == "time")
        .unwrap();
    assert_eq!(
        quadratic.verdict,
        nnbench::record::Verdict::Unchanged,
        "{}",
        quadratic.line()
    );
    // A limit of off reports it without failing.
    let lenient = support::tool()
        .args(["compare", base.to_str().unwrap(), head.to_str().unwrap()])
        .args(["--fail-on", "scaling=off,time=off"])
        .output()
        .unwrap();
    assert_eq!(
        lenient.status.code(),
        Some(0),
        "{}",
        support::said(&lenient)
    );

    // The report draws the family's time against n on log-log axes, with
    // the power of each run.
    let page = dir.path().join("report.html");
    let drawn = support::tool()
        .args([
            "report",
            base.to_str().unwrap(),
            head.to_str().unwrap(),
            "-o",
        ])
        .arg(&page)
        .output()
        .unwrap();
    assert!(drawn.status.success(), "{}", support::said(&drawn));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("linear: time per call against n, log-log, with the powers fitted"),
        "the chart"
    );
    // Each power as drawn, within its fit's noise of 2 and of 1.
    let power_after = |label: &str| -> Option<f64> {
        let at = html.find(label)? + label.len();
        html[at..]
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()?
            .parse()
            .ok()
    };
    let (now, before) = (power_after("fitted: n^"), power_after("the run before: n^"));
    assert!(
        now.is_some_and(|p| (p - 2.0).abs() < 0.15)
            && before.is_some_and(|p| (p - 1.0).abs() < 0.1),
        "both fits: {now:?}, {before:?}"
    );
}

#[test]
fn a_parameter_with_too_few_values_fails_its_cases_naming_it() {
    let record = Runner::new()
        .filter("too_few_sizes/")
        .quiet(true)
        .test_mode(true)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 2);
    let error = record.cases[0].error.as_ref().unwrap();
    assert_eq!(error.stage, nnbench::record::Stage::Grid);
    assert!(
        error
            .message
            .contains("scaling = n: `n` takes 2 distinct values"),
        "{}",
        error.message
    );
    assert!(record.scaling.is_empty());
}
