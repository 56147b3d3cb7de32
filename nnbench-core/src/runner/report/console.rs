//! Console output of a run: a line per finished case and a table at the
//! end; on a terminal, a progress bar below the lines with cases done,
//! failures and the time left. Warnings go to stderr. Quiet prints nothing.

use std::cell::Cell as Counter;
use std::io::{self, IsTerminal as _, Write as _};
use std::time::Duration;

use comfy_table::{Cell, Table, presets::UTF8_FULL_CONDENSED};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value as Json;

#[cfg(feature = "criterion")]
use super::silence;
use crate::record::{CaseRecord, RunRecord, TimingMode, numeric_fields};
use nnbench_vocab::{format_bytes, format_count, format_field, format_ns};

/// Prints progress, warnings and the final table, unless quiet.
pub(crate) struct Console {
    quiet: bool,
    total: usize,
    done: Counter<usize>,
    failed: Counter<usize>,
    /// Drawn only when stdout is a terminal: CI logs get plain lines.
    bar: Option<ProgressBar>,
}

impl Console {
    pub(crate) fn new(quiet: bool, total: usize) -> Self {
        let bar = (!quiet && total > 0 && io::stdout().is_terminal()).then(|| progress_bar(total));
        Self {
            quiet,
            total,
            done: Counter::new(0),
            failed: Counter::new(0),
            bar,
        }
    }

    /// One line per finished case, with its warnings.
    pub(crate) fn case(&self, case: &CaseRecord) {
        let done = self.done.get() + 1;
        let failed = self.failed.get() + usize::from(case.error.is_some());
        self.done.set(done);
        self.failed.set(failed);
        if self.quiet {
            return;
        }
        let width = self.total.to_string().len();
        let line = match &case.error {
            None => format!(
                "[{:>width$}/{}] ok    {} = {}  ({}{}{})",
                done,
                self.total,
                case.id,
                metric(&case.value),
                time(case),
                load(case),
                peak(case),
            ),
            Some(error) => format!(
                "[{:>width$}/{}] FAIL  {}  ({:?}: {})",
                done,
                self.total,
                case.id,
                error.stage,
                error.summary()
            ),
        };
        self.above_bar(|| {
            // A closed stdout (piped into `head`) must not fail the run.
            let _ = writeln!(io::stdout().lock(), "{line}");
        });
        for warning in &case.warnings {
            self.warn(&format!("{}: {warning}", case.id));
        }
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
            bar.set_message(match failed {
                0 => String::new(),
                n => format!(", {n} failed"),
            });
        }
    }

    /// A warning on stderr, unless quiet.
    pub(crate) fn warn(&self, warning: &str) {
        if !self.quiet {
            self.above_bar(|| eprintln!("warning: {warning}"));
        }
    }

    /// Runs `f`, which prints on its own (criterion): with the progress bar
    /// out of its way, and silenced when the run is quiet.
    #[cfg(feature = "criterion")]
    pub(crate) fn foreign_output<T>(&self, f: impl FnOnce() -> T) -> T {
        match (&self.bar, self.quiet) {
            (_, true) => silence::output(f),
            (Some(bar), false) => bar.suspend(f),
            (None, false) => f(),
        }
    }

    fn above_bar(&self, print: impl FnOnce()) {
        match &self.bar {
            Some(bar) => bar.suspend(print),
            None => print(),
        }
    }

    /// The table of all cases and a summary line.
    pub(crate) fn summary(&self, record: &RunRecord) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if self.quiet {
            return;
        }
        for warning in &record.warnings {
            self.warn(warning);
        }
        if record.cases.is_empty() {
            return;
        }
        let table = cases_table(record);
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "\n{table}");
        for line in closing_lines(record) {
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The table of a run's cases: a row each, a struct metric's numeric
/// fields as columns of their own, and the columns of figures only where
/// some case has them.
fn cases_table(record: &RunRecord) -> Table {
    // A struct metric's numeric fields are columns of their own; a
    // "value" column holds what is not a struct.
    let ok = record.cases.iter().filter(|c| c.error.is_none());
    let mut fields: Vec<String> = Vec::new();
    for case in ok.clone() {
        for (path, _) in numeric_fields(&case.value) {
            if !fields.contains(&path) {
                fields.push(path);
            }
        }
    }
    let plain_values = fields.is_empty()
        || ok
            .clone()
            .any(|c| !c.value.is_object() && !c.value.is_null());
    let mut header = vec!["case".to_owned()];
    if plain_values {
        header.push("value".into());
    }
    header.extend(fields.iter().cloned());
    header.push("time".into());
    // Throughput, the tail, the load and the threads' spread show only
    // where some case has them.
    let extras: Vec<(&str, Extra)> = EXTRAS
        .into_iter()
        .filter(|(_, cell)| record.cases.iter().any(|c| cell(c).is_some()))
        .collect();
    header.extend(extras.iter().map(|(name, _)| (*name).to_owned()));
    header.extend(["load", "call RSS", "GPU"].map(String::from));
    let mut table = Table::new();
    crate::terminal_table::fit(&mut table)
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(header);
    for case in &record.cases {
        let mut row = vec![Cell::new(&case.id)];
        let failed = case
            .error
            .as_ref()
            .map(|e| format!("FAILED ({:?})", e.stage).to_lowercase());
        if plain_values {
            let value = match (&failed, case.value.is_object()) {
                (Some(failed), _) => failed.clone(),
                (None, true) => "-".into(),
                (None, false) => metric(&case.value),
            };
            row.push(Cell::new(value));
        }
        for (at, path) in fields.iter().enumerate() {
            let cell = match (&failed, crate::record::field(&case.value, path)) {
                (Some(failed), _) if at == 0 && !plain_values => failed.clone(),
                (None, Some(value)) => value
                    .as_f64()
                    .map_or_else(|| metric(value), |n| format_field(path, n)),
                _ => "-".into(),
            };
            row.push(Cell::new(cell));
        }
        row.push(Cell::new(time(case)));
        for (_, cell) in &extras {
            row.push(Cell::new(cell(case).unwrap_or_else(|| "-".into())));
        }
        row.extend([
            Cell::new(format_ns(case.load_ns as f64)),
            Cell::new(call_growth(case).unwrap_or_else(|| "-".into())),
            Cell::new(case.memory.gpu_peak_bytes.map_or("-".into(), format_bytes)),
        ]);
        table.add_row(row);
    }
    table
}

/// The lines after the table: the run's counts, and its fits, capacities,
/// searches, pairing and flamegraphs.
fn closing_lines(record: &RunRecord) -> Vec<String> {
    let failed = record.failed();
    let mut lines = vec![format!(
        "{} cases: {} ok, {} failed; memos: {} computed, {} read from disk, {} reused, {} evicted, {} left",
        record.cases.len(),
        record.cases.len() - failed,
        failed,
        record.memo.computes,
        record.memo.disk_hits,
        record.memo.hits,
        record.memo.evictions,
        record.memo.entries_at_end,
    )];
    lines.extend(record.scaling.iter().map(scaling_line));
    lines.extend(record.capacity.iter().map(ToString::to_string));
    lines.extend(
        record
            .cases
            .iter()
            .filter_map(|case| Some(search_line(&case.id, case.search.as_deref()?))),
    );
    lines.extend(record.paired.as_ref().and_then(paired_line));
    let drawn: Vec<&std::path::Path> = record
        .cases
        .iter()
        .filter_map(|c| c.profile.as_deref())
        .collect();
    if let Some(dir) = common_folder(&drawn) {
        lines.push(format!(
            "flamegraphs of {} cases: {}",
            drawn.len(),
            dir.display()
        ));
    }
    lines
}

/// `paired: workers kept for Model(1), Model(2); memos built (this build /
/// base): Model(1) 1 / 1, Model(2) 1 / 1`; `None` where no group kept its
/// workers and the cases use no memos.
fn paired_line(run: &crate::record::PairedRun) -> Option<String> {
    if run.builds.is_empty() && run.kept.is_empty() {
        return None;
    }
    let kept = if run.kept.is_empty() {
        "new workers every round".to_owned()
    } else {
        format!("workers kept for {}", run.kept.join("; "))
    };
    let builds: Vec<String> = run
        .builds
        .iter()
        .map(|b| format!("{} {} / {}", b.memo, b.head, b.base))
        .collect();
    Some(format!(
        "paired: {kept}; memos built (this build / base): {}",
        if builds.is_empty() {
            "none".to_owned()
        } else {
            builds.join(", ")
        }
    ))
}

/// `linear: time ∝ n^1.01 [0.98, 1.04]`, and where one power does not fit,
/// where it bends.
pub(crate) fn scaling_line(s: &crate::record::ScalingRecord) -> String {
    let mut line = format!(
        "{}: {} ∝ {}^{:.2} [{:.2}, {:.2}]",
        s.label(),
        s.figure,
        s.parameter,
        s.exponent,
        s.interval[0],
        s.interval[1]
    );
    if s.fit != "power" {
        line.push_str(&format!(" ({})", s.fit));
    }
    line
}

/// The deepest folder that holds every one of `files`.
fn common_folder(files: &[&std::path::Path]) -> Option<std::path::PathBuf> {
    let (first, rest) = files.split_first()?;
    let mut folder = first.parent()?.to_owned();
    while !rest.iter().all(|file| file.starts_with(&folder)) {
        if !folder.pop() {
            return None;
        }
    }
    Some(folder)
}

/// `serve/rate=max: p99 <= 20ms up to 640/s (672/s missed): 400/s 11.2 ms
/// ✓, 800/s 31.0 ms ✗, ...`: the rate found, and the rate-latency curve of
/// the steps tried, by rate (under a goodput search, each step's share of
/// good requests: `400/s 98.5% good ✓`).
fn search_line(id: &str, search: &crate::record::SearchRecord) -> String {
    let found = search.outcome();
    let missed = search
        .missed_at
        .map(|m| format!(" ({}/s missed)", format_count(m)))
        .unwrap_or_default();
    let mut steps: Vec<&crate::record::SearchStep> = search.steps.iter().collect();
    steps.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let curve: Vec<String> = steps
        .iter()
        .map(|s| {
            // A goodput search's steps say their goodput, a latency
            // search's their percentile.
            let measured = match s.goodput {
                Some(share) => format!("{:.1}% good", share * 100.0),
                None => format_ns(s.latency_ns),
            };
            format!(
                "{}/s {measured} {}",
                format_count(s.rate),
                match (s.meets, s.client_bound) {
                    (_, true) => "client-bound",
                    (true, _) => "✓",
                    _ => "✗",
                }
            )
        })
        .collect();
    format!(
        "{id}: {} {found}{missed}: {}",
        search.target,
        curve.join(", ")
    )
}

/// A column of the table that some cases have a cell in.
type Extra = fn(&CaseRecord) -> Option<String>;

/// The columns shown only when some case has a cell in them.
const EXTRAS: [(&str, Extra); 10] = [
    ("throughput", |c| {
        c.throughput.as_ref().map(|t| t.to_string())
    }),
    ("work", |c| c.work.as_ref().map(|w| w.to_string())),
    ("p99", |c| {
        c.time.percentiles.as_ref().map(|p| format_ns(p.p99_ns))
    }),
    ("p99.9", |c| {
        c.time
            .percentiles
            .as_ref()
            .and_then(|p| p.p999_ns)
            .map(format_ns)
    }),
    ("requests/s", |c| {
        c.concurrency
            .as_ref()
            .map(|l| format_count(l.requests_per_second))
            .or_else(|| {
                c.load.as_ref().map(|l| {
                    format!(
                        "{} of {}",
                        format_count(l.achieved_rate),
                        format_count(l.offered_rate)
                    )
                })
            })
    }),
    ("TTFT p50 / p99", |c| {
        c.stream.as_ref().map(|s| median_and_tail(&s.ttft))
    }),
    ("TPOT p50 / p99", |c| {
        c.stream.as_ref().map(|s| median_and_tail(&s.tpot))
    }),
    ("tokens/s", |c| {
        c.stream.as_ref().map(|s| format_count(s.tokens_per_s))
    }),
    ("goodput", |c| {
        let goodput = c.stream.as_ref()?.goodput.as_ref()?;
        Some(format!(
            "{:.1}%, {}/s",
            goodput.share * 100.0,
            format_count(goodput.per_s)
        ))
    }),
    ("thread spread", |c| {
        c.threads
            .as_ref()
            .map(|t| format!("{:.0}%", t.spread * 100.0))
    }),
];

/// A streamed latency's cell: `10.1 ms / 10.6 ms`.
fn median_and_tail(latency: &crate::record::LatencyPercentiles) -> String {
    format!(
        "{} / {}",
        format_ns(latency.p50_ns),
        format_ns(latency.p99_ns)
    )
}

/// `[=====>    ] 12/40 cases, 1 failed, 3m left`, redrawn a few times a
/// second, on stdout with the case lines above it.
fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stdout());
    let style = ProgressStyle::with_template(
        "[{bar:30.cyan/blue}] {pos}/{len} cases{msg}, {elapsed} elapsed, {eta} left",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// A value as a line shows it: a number to a few digits, a struct as its
/// numeric fields.
fn metric(value: &Json) -> String {
    let text = match value {
        Json::Null => return "-".into(),
        Json::Object(_) if !numeric_fields(value).is_empty() => numeric_fields(value)
            .iter()
            .map(|(path, n)| format!("{path} {}", metric(&Json::from(*n))))
            .collect::<Vec<_>>()
            .join(", "),
        Json::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f != 0.0 && !(1e-3..1e6).contains(&f.abs()) => {
                format!("{f:.4e}")
            }
            Some(f) if n.is_f64() => {
                let s = format!("{f:.6}");
                s.trim_end_matches('0').trim_end_matches('.').to_owned()
            }
            _ => n.to_string(),
        },
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    const MAX: usize = 48;
    if text.chars().count() > MAX {
        format!("{}…", text.chars().take(MAX - 1).collect::<String>())
    } else {
        text
    }
}

/// Once: the call's time. Sampled: the median per call, its spread and
/// the number of samples. Counted: the call's instructions.
fn time(case: &CaseRecord) -> String {
    let t = &case.time;
    match t.mode {
        _ if t.samples == 0 => "-".into(),
        // Under load, each request's latency: the median of all of them.
        _ if case.concurrency.is_some() || case.load.is_some() => {
            format!(
                "{} ({} req)",
                format_ns(t.median_ns),
                format_count(t.iters as f64)
            )
        }
        TimingMode::Once => format_ns(t.median_ns),
        TimingMode::Instructions => match t.instructions {
            Some(count) => format!("{} instr", format_count(count as f64)),
            None => "-".into(),
        },
        TimingMode::Sampled => format!(
            "{} ± {} ({}×{})",
            format_ns(t.median_ns),
            format_ns(t.std_ns),
            t.samples,
            short_of_target(t)
        ),
    }
}

/// Where nnbench's sampler stopped short of its precision (on the
/// machine's spread, or at the time cap), the precision it reached.
fn short_of_target(t: &crate::record::TimeRecord) -> String {
    match &t.precision {
        Some(p) if p.stopped_by != crate::record::StopReason::Target => {
            format!(", median ±{:.1}%", 100.0 * p.reached)
        }
        _ => String::new(),
    }
}

fn load(case: &CaseRecord) -> String {
    if !case.uses_memos() {
        String::new()
    } else {
        format!(", load {}", format_ns(case.load_ns as f64))
    }
}

fn peak(case: &CaseRecord) -> String {
    call_growth(case).map_or(String::new(), |g| format!(", call RSS {g}"))
}

/// What the function itself added to resident memory at its peak, memos
/// and hooks left out (the whole case's figures stay in the record).
fn call_growth(case: &CaseRecord) -> Option<String> {
    case.call_rss_growth_bytes()
        .map(|b| format!("+{}", format_bytes(b)))
}
