//! Steps in the history: each case's figures along the commits of a branch
//! on one machine, searched for steps by [`steps::find`](super::steps::find),
//! and the steps that matter named with their commit.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::runs::STORED;
use super::steps;
use super::{History, HistoryError, RunFilter};
use crate::compare::{Limits, Verdict};
use crate::record::Direction;
use crate::record::Figure;

/// What [`History::steps`] looks for.
///
/// # Example
///
/// ```
/// let search = nnbench_cli::history::StepSearch {
///     case: Some("accuracy/".into()),
///     ..Default::default()
/// };
/// assert_eq!(search.significance, 0.001);
/// ```
#[derive(Clone, Debug)]
pub struct StepSearch {
    /// The runs searched.
    pub filter: RunFilter,
    /// Only cases whose id contains this.
    pub case: Option<String>,
    /// A step stands when its p-value, corrected for the splits it was
    /// chosen from, is under this.
    pub significance: f64,
    /// How large a step must be to be reported, per figure: the limits
    /// comparisons use (`--fail-on`); a figure that is `off` is reported
    /// but never counts as a regression that fails.
    pub limits: Limits,
}

impl Default for StepSearch {
    fn default() -> Self {
        Self {
            filter: RunFilter::default(),
            case: None,
            significance: 0.001,
            limits: Limits::default(),
        }
    }
}

/// A step of one figure of one case.
///
/// # Example
///
/// ```
/// # fn f(step: &nnbench_cli::history::FigureStep) {
/// println!(
///     "{} {}: {:+.1}% from {} (p = {:.1e})",
///     step.case, step.figure, 100.0 * step.change, step.commit, step.p_value
/// );
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FigureStep {
    /// The case's id.
    pub case: String,
    /// The figure that stepped.
    pub figure: Figure,
    /// For the value, the field of a struct metric that stepped (one
    /// its `metric` gives a direction).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The machine's key.
    pub machine: String,
    /// The branch the series follows.
    pub branch: Option<String>,
    /// The bench target.
    pub bench: String,
    /// The first commit after the step (`run N` for a run without git).
    pub commit: String,
    /// The commit before it.
    pub previous: String,
    /// The figure's median over the runs from the step before (or the
    /// start).
    pub before: f64,
    /// The median over the runs from this step to the next (or the end).
    pub after: f64,
    /// `after / before - 1`; for a `scaling` exponent, `after - before`.
    pub change: f64,
    /// The rank-sum test's p-value, corrected for the splits it was chosen
    /// from.
    pub p_value: f64,
    /// Regressed or improved, by which way the figure is better;
    /// not comparable for a value without a `metric` direction.
    pub verdict: Verdict,
    /// Whether a regression of this figure fails (`--fail-on` does not
    /// turn it `off`).
    pub gated: bool,
    /// The step is at the newest commit of its series.
    pub newest: bool,
    /// The `nnbench bisect` command that finds the commit between
    /// `previous` and `commit` that made the step, where both are commits:
    /// the step's case alone, judged at half its change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<String>,
}

impl FigureStep {
    /// The change as people read it: `+15.0%`, or for an exponent `+1.00`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(step: &nnbench_cli::history::FigureStep) {
    /// println!("{} {} at {}", step.name(), step.change_text(), step.commit);
    /// # }
    /// ```
    pub fn change_text(&self) -> String {
        match self.figure {
            Figure::Scaling => format!("{:+.2}", self.change),
            _ => format!("{:+.1}%", 100.0 * self.change),
        }
    }

    /// The p-value as people read it: `3.2e-7`, and under what a double
    /// holds next to 1, `< 1e-15` rather than a zero it is not.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(step: &nnbench_cli::history::FigureStep) {
    /// println!("{} stepped (p {})", step.name(), step.p_value_text());
    /// # }
    /// ```
    pub fn p_value_text(&self) -> String {
        if self.p_value < 1e-15 {
            "< 1e-15".into()
        } else {
            format!("{:.1e}", self.p_value)
        }
    }

    /// What stepped, as limits name it: `time`, or `value.accuracy` for a
    /// field of a struct metric.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(step: &nnbench_cli::history::FigureStep) {
    /// println!("{} stepped at {}", step.name(), step.commit);
    /// # }
    /// ```
    pub fn name(&self) -> String {
        match &self.field {
            Some(field) => format!("{}.{field}", self.figure),
            None => self.figure.to_string(),
        }
    }
}

/// The runs of one case on one machine, branch and bench, commit by commit.
struct Track {
    machine: String,
    branch: Option<String>,
    bench: String,
    case: String,
    direction: Option<Direction>,
    /// Which way each field of a struct metric is better.
    directions: BTreeMap<String, Direction>,
    /// Commits in the order of their first run; each commit's figures.
    commits: Vec<(String, Vec<[Option<f64>; STORED.len()]>)>,
    /// The values of each directed field, by the commit's place in
    /// `commits`.
    fields: BTreeMap<String, Vec<Vec<f64>>>,
    /// Where each commit is in `commits`.
    places: HashMap<String, usize>,
}

impl History {
    /// The steps that `search` finds, oldest first in each series.
    ///
    /// Each series is one case's figure on one machine, branch and bench,
    /// along the commits in the order their first run started; every run
    /// of a commit counts. See [`steps`] for the method.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
    /// use nnbench_core::compare::Verdict;
    /// let steps = history.steps(&Default::default())?;
    /// let fresh = steps.iter().filter(|s| s.newest && s.verdict == Verdict::Regressed);
    /// for step in fresh {
    ///     eprintln!("{} {} regressed at {}", step.case, step.figure, step.commit);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn steps(&self, search: &StepSearch) -> Result<Vec<FigureStep>, HistoryError> {
        let tracks = self.tracks(search).map_err(|e| self.error(e))?;
        let mut steps: Vec<FigureStep> = tracks
            .iter()
            .flat_map(|track| track_steps(track, search))
            .collect();
        steps.extend(self.scaling_steps(search).map_err(|e| self.error(e))?);
        Ok(steps)
    }

    /// The steps of the exponents of the families' `scaling` fits: a
    /// series per fit (family, other parameters, figure) on one machine,
    /// branch and bench, judged by the `scaling` limit (an exponent that
    /// rose regressed). Each is named by its fit's label, the figure
    /// `scaling.time` (or `scaling.call_rss`, `scaling.heap`).
    fn scaling_steps(&self, search: &StepSearch) -> rusqlite::Result<Vec<FigureStep>> {
        let mut statement = self.connection.prepare(&format!(
            "SELECT machines.key, runs.branch, runs.bench, scaling.label, scaling.figure,
                    coalesce(runs.commit_sha, 'run ' || runs.id), scaling.exponent, scaling.family
             FROM scaling
             JOIN runs ON runs.id = scaling.run_id
             JOIN machines ON machines.id = runs.machine_id
             WHERE {}
             ORDER BY machines.key, runs.branch, runs.bench, scaling.label, scaling.figure,
                      runs.started_at, runs.id",
            selected("scaling.label")
        ))?;
        let mut rows = statement.query(selection(search))?;
        // Per series: its identity, its family, and each commit's exponents.
        type Series = (Track, String, String, Vec<(String, Vec<f64>)>);
        let mut series: Vec<Series> = Vec::new();
        while let Some(row) = rows.next()? {
            let (machine, branch, bench, label, figure): (
                String,
                Option<String>,
                String,
                String,
                String,
            ) = (
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
            );
            let (commit, exponent, family): (String, f64, String) =
                (row.get(5)?, row.get(6)?, row.get(7)?);
            let same = series.last().is_some_and(|(t, _, f, _)| {
                t.machine == machine
                    && t.branch == branch
                    && t.bench == bench
                    && t.case == label
                    && *f == figure
            });
            if !same {
                let track = Track {
                    machine,
                    branch,
                    bench,
                    case: label,
                    direction: None,
                    directions: BTreeMap::new(),
                    commits: Vec::new(),
                    fields: BTreeMap::new(),
                    places: HashMap::new(),
                };
                series.push((track, family, figure, Vec::new()));
            }
            let Some((_, _, _, commits)) = series.last_mut() else {
                continue;
            };
            match commits.iter_mut().find(|(c, _)| *c == commit) {
                Some((_, values)) => values.push(exponent),
                None => commits.push((commit, vec![exponent])),
            }
        }
        let limit = search.limits.get(Figure::Scaling);
        let mut found = Vec::new();
        for (track, family, figure, commits) in &series {
            let values = commits.iter().map(|(c, v)| (c.as_str(), v.clone()));
            let steps = series_steps(
                track,
                search,
                values,
                (Figure::Scaling, Some(figure.as_str())),
                limit,
                |before, after| Some(after < before),
            );
            found.extend(steps.into_iter().map(|mut step| {
                // The exponent's change, half of it the bisect's limit; the
                // family's cases, which the fit is of.
                step.change = step.after - step.before;
                step.bisect = bisect_command(
                    (&step.previous, &step.commit),
                    &step.bench,
                    &format!("{family}/"),
                    &format!("scaling={:.2}", (step.change / 2.0).abs().max(0.05)),
                );
                step
            }));
        }
        Ok(found)
    }

    fn tracks(&self, search: &StepSearch) -> rusqlite::Result<Vec<Track>> {
        let mut statement = self.connection.prepare(&format!(
            "SELECT machines.key, runs.branch, runs.bench, figures.case_id,
                    coalesce(runs.commit_sha, 'run ' || runs.id), figures.failed,
                    time_ns, load_ns, rss_bytes, heap_bytes, gpu_bytes, value, instructions,
                    throughput, p99_ns, requests_per_second, case_params.direction,
                    case_params.directions
             FROM figures
             JOIN runs ON runs.id = figures.run_id
             JOIN machines ON machines.id = runs.machine_id
             LEFT JOIN case_params ON case_params.case_id = figures.case_id
             WHERE {}
             ORDER BY machines.key, runs.branch, runs.bench, figures.case_id, runs.started_at, runs.id",
            selected("figures.case_id")
        ))?;
        let mut rows = statement.query(selection(search))?;
        let mut tracks: Vec<Track> = Vec::new();
        while let Some(row) = rows.next()? {
            let (machine, branch, bench, case): (String, Option<String>, String, String) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            let commit: String = row.get(4)?;
            let failed: bool = row.get(5)?;
            let figures = [
                row.get(6)?,
                row.get(7)?,
                row.get(8)?,
                row.get(9)?,
                row.get(10)?,
                row.get(11)?,
                row.get(12)?,
                row.get(13)?,
                row.get(14)?,
                row.get(15)?,
            ];
            let direction =
                super::runs::direction_from(row.get::<_, Option<String>>(16)?.as_deref());
            let directions = super::runs::directions_from(row.get(17)?);
            let same = tracks.last().is_some_and(|t| {
                t.machine == machine && t.branch == branch && t.bench == bench && t.case == case
            });
            if !same {
                tracks.push(Track {
                    machine,
                    branch,
                    bench,
                    case,
                    direction,
                    directions,
                    commits: Vec::new(),
                    fields: BTreeMap::new(),
                    places: HashMap::new(),
                });
            }
            let Some(track) = tracks.last_mut() else {
                continue;
            };
            // A commit run again after others joins its first runs.
            let at = match track.places.get(&commit) {
                Some(&at) => at,
                None => {
                    track.places.insert(commit.clone(), track.commits.len());
                    track.commits.push((commit, Vec::new()));
                    track.commits.len() - 1
                }
            };
            if !failed {
                track.commits[at].1.push(figures);
            }
        }
        self.add_fields(search, &mut tracks)?;
        Ok(tracks)
    }

    /// Adds the values of each track's directed fields, commit by commit.
    fn add_fields(&self, search: &StepSearch, tracks: &mut [Track]) -> rusqlite::Result<()> {
        if tracks.iter().all(|t| t.directions.is_empty()) {
            return Ok(());
        }
        let at: HashMap<(&str, Option<&str>, &str, &str), usize> = tracks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    (
                        t.machine.as_str(),
                        t.branch.as_deref(),
                        t.bench.as_str(),
                        t.case.as_str(),
                    ),
                    i,
                )
            })
            .collect();
        let mut statement = self.connection.prepare(&format!(
            "SELECT machines.key, runs.branch, runs.bench, field_values.case_id,
                    coalesce(runs.commit_sha, 'run ' || runs.id), field_values.field,
                    field_values.value
             FROM field_values
             JOIN runs ON runs.id = field_values.run_id
             JOIN machines ON machines.id = runs.machine_id
             WHERE {}",
            selected("field_values.case_id")
        ))?;
        let mut rows = statement.query(selection(search))?;
        let mut found: Vec<(usize, String, String, f64)> = Vec::new();
        while let Some(row) = rows.next()? {
            let (machine, branch, bench, case): (String, Option<String>, String, String) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            let key = (
                machine.as_str(),
                branch.as_deref(),
                bench.as_str(),
                case.as_str(),
            );
            if let Some(&track) = at.get(&key) {
                found.push((track, row.get(4)?, row.get(5)?, row.get(6)?));
            }
        }
        for (track, commit, field, value) in found {
            let track = &mut tracks[track];
            let (Some(&place), true) = (
                track.places.get(&commit),
                track.directions.contains_key(&field),
            ) else {
                continue;
            };
            let commits = track.commits.len();
            let series = track
                .fields
                .entry(field)
                .or_insert_with(|| vec![Vec::new(); commits]);
            series[place].push(value);
        }
        Ok(())
    }
}

/// The condition on the rows `search` selects, its case id in `case_column`
/// (a column name of this file's queries, never input): parameters ?1 to
/// ?4 are [`selection`]'s.
fn selected(case_column: &str) -> String {
    format!(
        "(?1 IS NULL OR machines.key = ?1 OR instr(machines.description, ?1) > 0)
         AND (?2 IS NULL OR runs.branch = ?2)
         AND (?3 IS NULL OR runs.bench = ?3)
         AND (?4 IS NULL OR instr({case_column}, ?4) > 0)"
    )
}

/// The parameters of [`selected`]'s condition.
fn selection(search: &StepSearch) -> impl rusqlite::Params + '_ {
    let filter = &search.filter;
    (
        filter.machine.as_deref(),
        filter.branch.as_deref(),
        filter.bench.as_deref(),
        search.case.as_deref(),
    )
}

/// The steps of each figure of `track`, and of each field its metric
/// gives a direction, that are large enough to matter.
fn track_steps(track: &Track, search: &StepSearch) -> Vec<FigureStep> {
    let mut found = Vec::new();
    for (slot, figure) in STORED.into_iter().enumerate() {
        let values = track.commits.iter().map(|(commit, runs)| {
            (
                commit.as_str(),
                runs.iter().filter_map(|r| r[slot]).collect(),
            )
        });
        let better = |before: f64, after: f64| match (figure, track.direction) {
            (Figure::Value, Some(direction)) => Some(direction.improves(before, after)),
            (Figure::Value, None) => None,
            (rate, _) if rate.higher_is_better() => Some(after > before),
            _ => Some(after < before),
        };
        let limit = search.limits.get(figure);
        found.extend(series_steps(
            track,
            search,
            values,
            (figure, None),
            limit,
            better,
        ));
    }
    for (field, per_commit) in &track.fields {
        let Some(&direction) = track.directions.get(field) else {
            continue;
        };
        let values = track
            .commits
            .iter()
            .zip(per_commit)
            .map(|((commit, _), values)| (commit.as_str(), values.clone()));
        let better = |before: f64, after: f64| Some(direction.improves(before, after));
        let limit = search.limits.get_field(field);
        let named = (Figure::Value, Some(field.as_str()));
        found.extend(series_steps(track, search, values, named, limit, better));
    }
    found
}

/// The steps of one series of `track` (each commit and its values), of
/// `figure` (and field), beyond `limit`, judged by `better`.
fn series_steps<'a>(
    track: &Track,
    search: &StepSearch,
    values: impl Iterator<Item = (&'a str, Vec<f64>)>,
    (figure, field): (Figure, Option<&str>),
    limit: crate::compare::Limit,
    better: impl Fn(f64, f64) -> Option<bool>,
) -> Vec<FigureStep> {
    let (commits, series): (Vec<&str>, Vec<Vec<f64>>) =
        values.filter(|(_, values)| !values.is_empty()).unzip();
    steps::find(&series, search.significance)
        .into_iter()
        .filter(|step| limit.exceeded(step.before, step.after))
        .map(|step| FigureStep {
            case: track.case.clone(),
            figure,
            field: field.map(str::to_owned),
            machine: track.machine.clone(),
            branch: track.branch.clone(),
            bench: track.bench.clone(),
            commit: commits[step.at].to_owned(),
            previous: commits[step.at - 1].to_owned(),
            before: step.before,
            after: step.after,
            change: step.after / step.before - 1.0,
            p_value: step.p_value,
            verdict: match better(step.before, step.after) {
                Some(true) => Verdict::Improved,
                Some(false) => Verdict::Regressed,
                None => Verdict::NotComparable,
            },
            gated: limit.gated,
            newest: step.at + 1 == commits.len(),
            bisect: bisect_command(
                (commits[step.at - 1], commits[step.at]),
                &track.bench,
                &track.case,
                &format!(
                    "{}={:.1}%",
                    field.map_or_else(|| figure.to_string(), |f| format!("{figure}.{f}")),
                    ((step.after / step.before - 1.0) * 50.0).abs().max(0.5)
                ),
            ),
        })
        .collect()
}

/// `nnbench bisect GOOD BAD --bench B --case 'ID' --fail-on LIMIT`, the
/// limit half the step's change; `None` where a side is a run without git.
fn bisect_command(
    (good, bad): (&str, &str),
    bench: &str,
    case: &str,
    limit: &str,
) -> Option<String> {
    let commit = |c: &str| !c.is_empty() && c.chars().all(|c| c.is_ascii_hexdigit());
    if !(commit(good) && commit(bad)) {
        return None;
    }
    let quoted = format!("'{}'", case.replace('\'', r#"'\''"#));
    Some(format!(
        "nnbench bisect {} {} --bench {bench} --case {quoted} --fail-on {limit}",
        &good[..good.len().min(12)],
        &bad[..bad.len().min(12)],
    ))
}
