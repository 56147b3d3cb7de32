//! `nnbench report`: one self-contained page of a history, checked as
//! written and, where a Chromium is (`scripts/chromium.sh`), as a browser
//! draws it: every chart there, the trade-off's front drawn, no script
//! error, screenshots in light and dark kept under the target folder.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use nnbench::{RunRecord, Runner};
use nnbench_cli::history::History;
use serde::Serialize;

/// A sweep of model size × batch size, each call a multiply of a batch
/// of vectors by a size × size matrix of f64s.
#[nnbench::product(
    size = [64, 128, 256],
    batch = [1, 8, 32, 128],
    flops = 2 * size * size * batch,
    bytes = 8 * size * (size + 2 * batch),
    timing = once
)]
fn throughput(size: u64, batch: u64) -> u64 {
    size * batch
}

#[derive(Serialize)]
struct Scores {
    accuracy: f64,
    loss: f64,
}

/// Models of growing width: slower, and more accurate.
#[nnbench::product(width = [16, 32, 64, 128], metric = "accuracy:higher", timing = once)]
fn quality(width: u64) -> Scores {
    Scores {
        accuracy: 0.6 + 0.05 * (width as f64).log2(),
        loss: 1.0 / width as f64,
    }
}

/// The width=64 model of [`quality`] in the history below: at the last
/// commit it is less accurate than the faster width=32 one, and leaves the
/// front it was on.
const LEFT_THE_FRONT: &str = "width=64";

/// A history of 24 commits, two runs each: `throughput/size=128,batch=32`
/// 30% slower from commit 16 on; `quality/width=64` less accurate at the
/// last commit.
fn history(path: &Path) {
    let template = Runner::new()
        .filter("throughput/")
        .filter("quality/")
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("the run");
    assert_eq!(template.cases.len(), 12 + 4);
    let mut history = History::open(path).expect("a new history");
    let roofs: nnbench::record::MachineRoofs = serde_json::from_value(serde_json::json!({
        "flops_f32": {"one_core": 2e11, "all_cores": 4e11},
        "flops_f64": {"one_core": 1e11, "all_cores": 2e11},
        "bandwidth": {"one_core": 2e10, "all_cores": 3e10},
        "method": {"units": "avx512f fma", "cores": 2, "triad_array_bytes": 134217728,
                   "measured_at": "2026-05-01T09:00:00Z", "seconds": 1.5, "noisy": false},
    }))
    .expect("roofs");
    let mut wobble = 0u64;
    for commit in 0..24u64 {
        for run in 0..2 {
            let mut record: RunRecord = template.clone();
            record.started_at = format!("2026-05-{:02}T10:{run:02}:00Z", commit + 1);
            record.context.git = Some(nnbench::record::Git::new(
                format!("{:040x}", 0xC0FFEE + commit * 7919),
                Some("main".into()),
                false,
            ));
            for case in &mut record.cases {
                wobble = wobble
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let noise = 1.0 + ((wobble >> 40) % 1000) as f64 / 50_000.0;
                if case.family == "quality" {
                    let width = case.params["width"].as_f64().unwrap_or(1.0);
                    let worse = case.id.ends_with(LEFT_THE_FRONT) && commit == 23;
                    let accuracy = 0.6 + 0.05 * width.log2() - if worse { 0.1 } else { 0.0 };
                    case.value =
                        serde_json::json!({"accuracy": accuracy * noise, "loss": 1.0 / width});
                    case.time.median_ns = 10_000.0 * width * noise;
                    continue;
                }
                let size = case.params["size"].as_f64().unwrap_or(1.0);
                let batch = case.params["batch"].as_f64().unwrap_or(1.0);
                let slower = if case.id == "throughput/size=128,batch=32" && commit >= 16 {
                    1.3
                } else {
                    1.0
                };
                case.time.median_ns = 50.0 * size * batch.sqrt() * slower * noise;
                case.memory.rss_before_bytes = Some(200 << 20);
                case.memory.rss_peak_bytes =
                    Some((200 << 20) + (size as u64) * (batch as u64) * 4096);
                // As fast as a multiply of this shape runs: near the memory
                // roof at one vector, near the compute roof at many.
                let (flops, bytes) = (2.0 * size * size * batch, 8.0 * size * (size + 2.0 * batch));
                let roof = (flops / bytes * 2e10).min(1e11);
                let mut work = nnbench::record::WorkRecord::new(
                    Some(flops),
                    Some(bytes),
                    0.6 * roof / flops / slower / noise,
                );
                work.place(&roofs, 1);
                case.work = Some(Box::new(work));
            }
            let mut machine = nnbench::record::MachineContext::default();
            machine.roofs = Some(roofs.clone());
            record.context.machine = Some(machine);
            history.add(&record, None).expect("added");
        }
    }
}

fn report(args: &[&str]) -> std::process::Output {
    // A history named by the environment does not stand in the way of
    // records given.
    Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .env("NNBENCH_HISTORY", "/no/such/history.sqlite")
        .arg("report")
        .args(args)
        .output()
        .expect("nnbench runs")
}

/// The page for the history above, written by the tool.
fn page(dir: &Path) -> (PathBuf, String) {
    let db = dir.join("history.sqlite");
    history(&db);
    let out = dir.join("report.html");
    let made = report(&[
        "--history",
        db.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--title",
        "sweep on main",
    ]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let html = std::fs::read_to_string(&out).expect("the page");
    (out, html)
}

/// Charts: of `throughput`, time, RSS growth, the value, the grid (no
/// GPU) and the roofline; of `quality`, time, RSS growth, the grid and
/// the trade-off of accuracy against time.
const CHARTS: usize = 9;

#[test]
fn the_report_is_one_page_with_its_charts_and_its_regression() {
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = page(dir.path());
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_eq!(html.matches("<svg class=\"chart\"").count(), CHARTS);
    for title in [
        "<h1>sweep on main</h1>",
        "throughput: time per call (8 of 12 cases)",
        "throughput: peak RSS growth (8 of 12 cases)",
        "throughput: time per call against batch, latest run",
        "48 runs, 24 commits",
    ] {
        assert!(html.contains(title), "{title}");
    }
    // The regression, in the table and marked on the chart.
    assert!(
        html.contains("<td>throughput/throughput/size=128,batch=32</td>")
            || html.contains("<td>throughput/size=128,batch=32</td><td>time</td>")
    );
    assert!(html.contains("class=\"step regressed\""));
    assert!(html.contains("+30"), "the step's size");
    // Grid lines, one a size, named by it.
    for size in ["size=64", "size=128", "size=256"] {
        assert!(html.contains(&format!("</svg>{size}</span>")), "{size}");
    }
    // The trade-off: the front, the previous commit, the case that left it.
    assert!(html.contains("quality: accuracy (higher is better) against time per call"));
    assert_eq!(html.matches("<polyline class=\"front\"").count(), 1);
    assert_eq!(html.matches("class=\"before ").count(), 4);
    assert!(html.contains(&format!("left the front: {LEFT_THE_FRONT}</span>")));
    assert_eq!(html.matches("<circle class=\"left-front\"").count(), 1);
    // The roofline: both roofs of f64 under the latest run's cases.
    assert!(html.contains("throughput: roofline, FLOP/s against FLOP a byte"));
    assert_eq!(html.matches("<polyline class=\"roof").count(), 2);
    assert!(html.contains("size=256,batch=128: "), "a case's point");
    for roof in ["% of the compute roof", "% of the memory roof"] {
        assert!(html.contains(roof), "a case placed under each roof");
    }
    // Its fields in the table, the judged one marked.
    assert!(html.contains("<th>accuracy ↑</th><th>loss</th>"));
    // Self-contained, and readable in both schemes.
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    assert!(html.contains("prefers-color-scheme: dark"));
}

/// A test-mode run of the cases `filter` picks, written to `dir`, and the
/// page the tool makes of it alone (`one.html`).
fn one_run_report(dir: &Path, filter: &str) -> (RunRecord, String) {
    let record = Runner::new()
        .filter(filter)
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("the run");
    let file = dir.join("run.json");
    record.write(&file).unwrap();
    let out = dir.join("one.html");
    let made = report(&[file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    (record, std::fs::read_to_string(&out).unwrap())
}

#[test]
fn records_are_drawn_without_a_history() {
    let dir = tempfile::tempdir().unwrap();
    let (_, html) = one_run_report(dir.path(), "throughput/");
    assert!(html.contains("1 runs, 1 commits"), "{html}");
    let out = dir.path().join("one.html");
    assert!(html.contains("against batch"));
    let missing = report(&["/no/such/run.json", "-o", out.to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/no/such/run.json"));
}

/// One server: requests wait for it in turn.
static SERVER: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[nnbench::benchmark(rate = [200], latency_target = "p90 <= 20ms")]
fn searched_service() {
    let _serving = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    std::thread::sleep(std::time::Duration::from_micros(500));
}

#[test]
fn a_search_is_drawn_as_latency_against_the_rates_tried() {
    let dir = tempfile::tempdir().unwrap();
    let (record, html) = one_run_report(dir.path(), "searched_service/rate=max");
    let search = record.cases[0].search.as_deref().expect("searched");
    assert!(
        html.contains("searched_service: latency against the rate tried, searching p90 &lt;= 20ms"),
        "no chart of the search"
    );
    let found = format!(
        "searched_service/rate=max: p90 &lt;= 20ms {}",
        search.outcome()
    );
    assert!(html.contains(&found), "{found} is not in the report");
}

/// A test-mode run of the cases `filter` picks, started at `at`.
fn run_at(filter: &str, at: &str) -> RunRecord {
    let mut record = Runner::new()
        .filter(filter)
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("the run");
    record.started_at = at.to_owned();
    record
}

#[test]
fn every_family_of_every_bench_target_has_its_section() {
    let dir = tempfile::tempdir().unwrap();
    // One bench target's run, then another target's, then a run of the
    // first filtered to one case: each family's latest run is its own.
    let runs = [
        ("sweep.json", run_at("throughput/", "2026-06-01T10:00:00Z")),
        (
            "serving.json",
            run_at("searched_service/", "2026-06-01T11:00:00Z"),
        ),
        (
            "filtered.json",
            run_at("quality/width=16", "2026-06-01T12:00:00Z"),
        ),
    ];
    let mut files = Vec::new();
    for (name, record) in &runs {
        let file = dir.path().join(name);
        record.write(&file).unwrap();
        files.push(file);
    }
    let out = dir.path().join("all.html");
    let mut args: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    args.extend(["-o", out.to_str().unwrap()]);
    let made = report(&args);
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let html = std::fs::read_to_string(&out).unwrap();
    for family in ["throughput", "searched_service", "quality"] {
        assert!(
            html.contains(&format!("<section class=\"family\"><h2>{family}</h2>")),
            "no section for {family}"
        );
    }
    // The first target's family shows its own latest run, all its cases.
    for case in &runs[0].1.cases {
        assert!(
            html.contains(&format!("<td>{}</td>", case.id)),
            "{} is not in the table",
            case.id
        );
    }
    // The same runs in a history, added in turn, make the same sections.
    let db = dir.path().join("history.sqlite");
    let mut history = History::open(&db).expect("a new history");
    for (_, record) in &runs {
        history.add(record, None).expect("added");
    }
    drop(history);
    let page = dir.path().join("history.html");
    let made = report(&[
        "--history",
        db.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(made.status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    for family in ["throughput", "searched_service", "quality"] {
        assert!(
            html.contains(&format!("<section class=\"family\"><h2>{family}</h2>")),
            "no section for {family} from the history"
        );
    }
}

/// The browser: `NNBENCH_CHROMIUM`, else a Chromium on PATH.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("NNBENCH_CHROMIUM") {
        return Some(path.into());
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(PathBuf::from)
}

#[test]
fn a_browser_draws_every_chart_without_a_script_error() {
    let browser = chromium();
    support::here_or_skip(
        browser.is_some(),
        "Chromium",
        "NNBENCH_REQUIRE_BROWSER",
        "scripts/chromium.sh installs Debian's",
    );
    let Some(browser) = browser else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (out, _) = page(dir.path());
    let url = format!("file://{}", out.display());
    let headless = |extra: &[&str]| {
        Command::new(&browser)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
            ])
            .args(["--enable-logging=stderr", "--v=0"])
            .args(extra)
            .arg(&url)
            .output()
            .expect("Chromium runs")
    };
    let dom = headless(&["--dump-dom"]);
    let (drawn, log) = (
        String::from_utf8_lossy(&dom.stdout),
        String::from_utf8_lossy(&dom.stderr),
    );
    assert!(
        drawn.contains(&format!("data-drawn=\"{CHARTS}\"")),
        "the page's script ran and counted {CHARTS} charts: {}",
        &drawn[..drawn.len().min(300)]
    );
    assert!(!log.contains("Uncaught"), "a script error: {log}");
    assert!(
        drawn.contains("data-fronts=\"1\""),
        "the trade-off's front has a length on the page"
    );
    assert!(drawn.matches("<polyline").count() >= 8 + 8 + 3);
    let shots = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::copy(&out, shots.join("report.html")).expect("the page kept");
    for (name, extra) in [
        ("report-light.png", &[][..]),
        ("report-dark.png", &["--force-dark-mode"][..]),
    ] {
        let shot = shots.join(name);
        let _ = std::fs::remove_file(&shot);
        let flag = format!("--screenshot={}", shot.display());
        let mut args = vec![flag.as_str(), "--window-size=1400,1400"];
        args.extend(extra);
        let taken = headless(&args);
        let size = std::fs::metadata(&shot).map_or(0, |m| m.len());
        assert!(
            size > 20_000,
            "{name}: {size} bytes; {}",
            String::from_utf8_lossy(&taken.stderr)
        );
        eprintln!("screenshot: {}", shot.display());
    }
}

/// An answer of four tokens, a millisecond apart, at two rates.
#[nnbench::benchmark(stream, rate = [20, 40], warm_up_time = "20ms", measurement_time = "300ms")]
fn streamed_answers() -> impl Iterator<Item = u8> {
    (0..4u8).inspect(|_| std::thread::sleep(std::time::Duration::from_millis(1)))
}

#[test]
fn streaming_cases_are_drawn_as_their_tokens_latencies_against_the_rate() {
    let dir = tempfile::tempdir().unwrap();
    let (record, html) = one_run_report(dir.path(), "streamed_answers/");
    assert_eq!(record.cases.len(), 2);
    assert!(record.cases.iter().all(|c| c.stream.is_some()));
    assert!(
        html.contains("streamed_answers: time to first token and per token against the rate"),
        "no chart of the streams"
    );
    for line in ["TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"] {
        assert!(html.contains(line), "no line {line}");
    }
}
