//! Console output of a run.

use std::io::{self, Write as _};

use comfy_table::{Cell, ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde_json::Value as Json;

use super::{format_bytes, format_ns};
use crate::record::{CaseRecord, RunRecord, TimingMode};

/// Prints progress and the final table, unless quiet.
pub(crate) struct Console {
    quiet: bool,
    total: usize,
    done: usize,
}

impl Console {
    pub(crate) fn new(quiet: bool, total: usize) -> Self {
        Self {
            quiet,
            total,
            done: 0,
        }
    }

    /// One line per finished case.
    pub(crate) fn case(&mut self, case: &CaseRecord) {
        self.done += 1;
        if self.quiet {
            return;
        }
        let width = self.total.to_string().len();
        let line = match &case.error {
            None => format!(
                "[{:>width$}/{}] ok    {} = {}  ({}{}{})",
                self.done,
                self.total,
                case.id,
                metric(&case.value),
                time(case),
                load(case),
                peak(case),
            ),
            Some(error) => format!(
                "[{:>width$}/{}] FAIL  {}  ({:?}: {})",
                self.done,
                self.total,
                case.id,
                error.stage,
                error.summary()
            ),
        };
        let mut out = io::stdout().lock();
        // A closed stdout (piped into `head`) must not fail the run.
        let _ = writeln!(out, "{line}");
    }

    /// The table of all cases and a summary line.
    pub(crate) fn summary(&self, record: &RunRecord) {
        if self.quiet || record.cases.is_empty() {
            return;
        }
        let mut table = Table::new();
        table
            .load_style(UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_header(["case", "value", "time", "load", "peak RSS", "GPU"]);
        for case in &record.cases {
            let value = match &case.error {
                None => metric(&case.value),
                Some(e) => format!("FAILED ({:?})", e.stage).to_lowercase(),
            };
            table.add_row([
                Cell::new(&case.id),
                Cell::new(value),
                Cell::new(time(case)),
                Cell::new(format_ns(case.load_ns as f64)),
                Cell::new(case.memory.rss_peak_bytes.map_or("-".into(), format_bytes)),
                Cell::new(case.memory.gpu_peak_bytes.map_or("-".into(), format_bytes)),
            ]);
        }
        let failed = record.failed();
        let mut out = io::stdout().lock();
        let _ = writeln!(out, "\n{table}");
        let _ = writeln!(
            out,
            "{} cases: {} ok, {} failed; memos: {} computed, {} reused, {} evicted, {} left",
            record.cases.len(),
            record.cases.len() - failed,
            failed,
            record.memo.misses,
            record.memo.hits,
            record.memo.evictions,
            record.memo.entries_at_end,
        );
    }
}

fn metric(value: &Json) -> String {
    let text = match value {
        Json::Null => return "-".into(),
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
/// the number of samples.
fn time(case: &CaseRecord) -> String {
    let t = &case.time;
    match t.mode {
        _ if t.samples == 0 => "-".into(),
        TimingMode::Once => format_ns(t.median_ns),
        TimingMode::Sampled => format!(
            "{} ± {} ({}×)",
            format_ns(t.median_ns),
            format_ns(t.std_ns),
            t.samples
        ),
    }
}

fn load(case: &CaseRecord) -> String {
    if case.memo.hits + case.memo.misses == 0 {
        String::new()
    } else {
        format!(", load {}", format_ns(case.load_ns as f64))
    }
}

fn peak(case: &CaseRecord) -> String {
    case.memory
        .rss_peak_bytes
        .map_or(String::new(), |b| format!(", peak {}", format_bytes(b)))
}
