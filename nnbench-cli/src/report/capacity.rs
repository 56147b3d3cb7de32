//! A family's capacity in the report: what the latest run predicts fits,
//! and how the prediction moved over the commits.

use std::collections::HashMap;

use nnbench_vocab::Unit;

use super::chart::{Chart, Line, XAxis};
use super::xml::escape;
use crate::history::{History, HistoryError, RunSummary};
use crate::record::CapacityRecord;

/// The most fits of one family (combinations of its other parameters)
/// drawn in its chart.
const MOST_FITS: usize = super::frame::COLOURS;

use super::Shown;

/// The capacities of `family` among `runs` (`run_commit`: a run's place
/// among `labels`): the latest run's, a paragraph each as the console
/// prints them, and each fit's prediction by commit; nothing where no run
/// has one.
pub(super) fn shown(
    history: &History,
    runs: &[&RunSummary],
    family: &str,
    run_commit: &HashMap<i64, usize>,
    labels: &[String],
) -> Result<Shown, HistoryError> {
    let mut lines: Vec<Line> = Vec::new();
    let mut latest: Vec<CapacityRecord> = Vec::new();
    for run in runs {
        let fits: Vec<CapacityRecord> = history
            .run_capacity(run.id)?
            .into_iter()
            .filter(|c| c.family == family)
            .collect();
        if fits.is_empty() {
            continue;
        }
        if let Some(&place) = run_commit.get(&run.id) {
            for fit in fits.iter().filter(|c| c.n.is_finite()) {
                let point = (place as f64, fit.n);
                let name = fit.label();
                if let Some(line) = lines.iter_mut().find(|l| l.name == name) {
                    // A later run of the same commit stands for it.
                    match line.points.last_mut() {
                        Some(last) if last.0 == point.0 => *last = point,
                        _ => line.points.push(point),
                    }
                } else if lines.len() < MOST_FITS {
                    let colour = lines.len();
                    lines.push(Line {
                        name,
                        colour,
                        points: vec![point],
                        outliers: Vec::new(),
                    });
                }
            }
        }
        latest = fits;
    }
    let text = latest
        .iter()
        .map(|fit| format!("<p class=\"capacity\">{}</p>", escape(&fit.to_string())))
        .collect();
    let chart = latest.first().map(|first| Chart {
        title: format!(
            "{family}: the largest {} that fits, by commit",
            first.parameter
        ),
        x: XAxis::Places(labels.to_vec()),
        unit: Unit::Count,
        lines,
        markers: Vec::new(),
        log_log: false,
    });
    Ok(Shown { lines: text, chart })
}
