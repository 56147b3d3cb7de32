//! The runs of a case that lie far off their neighbours.

use std::collections::{BTreeMap, BTreeSet};

use crate::record::Figure;

use super::runs::{CasePoint, STORED};
use super::steps;

/// The runs among `points` (one case's, in run order) whose figure lies far
/// off the runs around it, as [`steps::outliers`] judges it: per machine
/// and branch, each commit's runs in turn, commits in the order of their
/// first run. A failed run has no figure to judge.
///
/// # Example
///
/// ```
/// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
/// use nnbench::record::Figure;
///
/// let points = history.case("sweep/n=64")?;
/// for (run, figure) in nnbench_cli::history::outlying_runs(&points) {
///     println!("run {run}: its {figure} is an outlier");
/// }
/// # Ok(()) }
/// ```
pub fn outlying_runs(points: &[CasePoint]) -> BTreeSet<(i64, Figure)> {
    let mut tracks: BTreeMap<(&str, Option<&str>), Vec<&CasePoint>> = BTreeMap::new();
    for point in points.iter().filter(|p| !p.failed) {
        tracks
            .entry((point.machine.as_str(), point.branch.as_deref()))
            .or_default()
            .push(point);
    }
    let mut found = BTreeSet::new();
    for track in tracks.values() {
        // Commits in the order of their first run; a run without git is a
        // commit of its own.
        let mut places: Vec<(String, Vec<&CasePoint>)> = Vec::new();
        for point in track {
            let key = point
                .commit
                .clone()
                .unwrap_or_else(|| format!("run {}", point.run));
            match places.iter_mut().find(|(k, _)| *k == key) {
                Some((_, runs)) => runs.push(point),
                None => places.push((key, vec![point])),
            }
        }
        for figure in STORED {
            let runs: Vec<Vec<(i64, f64)>> = places
                .iter()
                .map(|(_, runs)| {
                    runs.iter()
                        .filter_map(|p| Some((p.run, p.figure(figure)?)))
                        .collect::<Vec<_>>()
                })
                .filter(|runs| !runs.is_empty())
                .collect();
            let series: Vec<Vec<f64>> = runs
                .iter()
                .map(|c| c.iter().map(|(_, v)| *v).collect())
                .collect();
            let marked = steps::outliers(&series);
            for (commit, flags) in runs.iter().zip(&marked) {
                for ((run, _), outlier) in commit.iter().zip(flags) {
                    if *outlier {
                        found.insert((*run, figure));
                    }
                }
            }
        }
    }
    found
}
