//! A family's searches of the highest rate under a latency target in the
//! report: the rate found, and the latency at each rate tried.

use std::fmt::Write as _;

use nnbench_vocab::{Unit, format_count};

use super::chart::{Chart, Line, XAxis};
use super::xml::escape;
use crate::history::{History, HistoryError, RunSummary};

use super::Shown;

/// The searches of `family`'s cases (`cases`) in the latest of `runs`: a
/// paragraph each (the target and the rate found), and their rate-latency
/// curves, a line a search, with the target as a line of its own.
pub(super) fn shown(
    history: &History,
    runs: &[&RunSummary],
    family: &str,
    cases: &[&str],
) -> Result<Shown, HistoryError> {
    let Some(last) = runs.last() else {
        return Ok(Shown {
            lines: String::new(),
            chart: None,
        });
    };
    let searches: Vec<(String, crate::record::SearchRecord)> = history
        .run_searches(last.id)?
        .into_iter()
        .filter(|(case, _)| cases.contains(&case.as_str()))
        .collect();
    let mut lines = String::new();
    let mut curves = Vec::new();
    let (mut low, mut high, mut limit) = (f64::INFINITY, 0.0f64, None);
    for (at, (case, search)) in searches.iter().enumerate() {
        let missed = search
            .missed_at
            .map(|m| format!(", missed at {}/s", format_count(m)))
            .unwrap_or_default();
        let _ = write!(
            lines,
            "<p class=\"search\">{}: {} {}{missed}</p>",
            escape(case),
            escape(&search.target),
            escape(&search.outcome())
        );
        let mut points: Vec<(f64, f64)> = search
            .steps
            .iter()
            .filter(|s| s.latency_ns.is_finite())
            .map(|s| (s.rate, s.latency_ns))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for &(rate, _) in &points {
            (low, high) = (low.min(rate), high.max(rate));
        }
        limit = limit.or_else(|| {
            nnbench_vocab::parse_latency_target(&search.target)
                .ok()
                .map(|t| t.limit.as_nanos() as f64)
        });
        curves.push(Line {
            name: case
                .strip_prefix(&format!("{family}/"))
                .unwrap_or(case)
                .to_owned(),
            colour: at,
            points,
            outliers: Vec::new(),
        });
    }
    let chart = (!curves.is_empty()).then(|| {
        if let Some(limit) = limit.filter(|_| low <= high) {
            let colour = curves.len();
            curves.push(Line {
                name: "the target".into(),
                colour,
                points: vec![(low, limit), (high, limit)],
                outliers: Vec::new(),
            });
        }
        let target = searches.first().map_or("", |(_, s)| s.target.as_str());
        Chart {
            title: format!("{family}: latency against the rate tried, searching {target}"),
            x: XAxis::Numbers("requests a second".into()),
            unit: Unit::Time,
            lines: curves,
            markers: Vec::new(),
            log_log: false,
        }
    });
    Ok(Shown { lines, chart })
}
