//! `nnbench report`: one self-contained HTML page of a history (or of
//! records read into one): per family, trend charts of time, RSS, GPU and
//! the value across commits with their steps marked, the parameter grid of
//! the latest run as a chart, for a struct metric each judged field against
//! time with the Pareto front, and the latest run's table. Nothing is
//! fetched: the charts are inline SVG, the styles inline CSS; a line of
//! script marks the page as drawn, for tests that open it in a browser.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value as Json;

use nnbench_vocab::{Unit, format_field, format_figure};

use super::chart::{Chart, Line, Marker, XAxis};
use super::frame::COLOURS;
use super::tradeoff::{self, Figures, Member};
use super::xml::escape;
use crate::compare::Verdict;
use crate::history::{
    CaseInfo, CasePoint, FigureStep, History, HistoryError, RunSummary, StepSearch, outlying_runs,
};
use crate::record::{Direction, Figure, ParamMap, ScalingRecord};

/// The figures charted, with their titles.
const CHARTED: [(Figure, &str); 8] = [
    (Figure::Time, "time per call"),
    (Figure::P99, "p99 time per call"),
    (Figure::Throughput, "throughput (per second)"),
    (Figure::Requests, "requests per second under load"),
    (Figure::Instructions, "instructions per call"),
    (Figure::Rss, "peak RSS growth"),
    (Figure::Gpu, "peak GPU memory"),
    (Figure::Value, "value"),
];

/// How many cases a chart draws: those with steps first.
const MOST_LINES: usize = COLOURS;

/// How many fields of a struct metric the table shows.
const MOST_FIELD_COLUMNS: usize = 8;

/// The page for the runs `search` selects, with its steps.
///
/// `folder` is where the page will be written: a flamegraph in it, or
/// below it, is linked by a path relative to it, so that the folder can be
/// moved or uploaded whole (a CI artifact) and its links still open. Other
/// files, and every file when `folder` is `None`, are linked by their
/// absolute paths, which open on the machine that ran the cases.
///
/// # Errors
///
/// When the history cannot be read.
///
/// # Example
///
/// ```
/// let history = nnbench_cli::history::History::in_memory().unwrap();
/// let page = nnbench_cli::report::page(&history, &Default::default(), "nightly", None).unwrap();
/// assert!(page.starts_with("<!DOCTYPE html>") && page.contains("nightly"));
/// ```
pub fn page(
    history: &History,
    search: &StepSearch,
    title: &str,
    folder: Option<&Path>,
) -> Result<String, HistoryError> {
    // Both sides resolved, so that a link through a symbolic link or a
    // `..` still finds the flamegraph under the folder.
    let folder = folder.map(|folder| std::fs::canonicalize(folder).unwrap_or(folder.to_owned()));
    let runs = history.runs(&search.filter)?;
    let cases: HashMap<String, CaseInfo> = history
        .cases()?
        .into_iter()
        .map(|c| (c.id.clone(), c))
        .collect();
    let steps = if runs.is_empty() {
        Vec::new()
    } else {
        history.steps(search)?
    };
    let mut body = String::new();
    let _ = write!(
        body,
        "<header><h1>{}</h1><p>{} runs, {} commits; generated {} by nnbench {}</p></header>",
        escape(title),
        runs.len(),
        commits(runs.iter()).len(),
        crate::record::now_rfc3339(),
        env!("CARGO_PKG_VERSION")
    );
    if runs.is_empty() {
        body.push_str("<p class=\"empty\">No runs in the history for this selection.</p>");
    } else {
        summary(&mut body, &steps);
        // Figures of two machines or branches are never one series.
        let mut sections: BTreeMap<(String, Option<String>), Vec<&RunSummary>> = BTreeMap::new();
        for run in &runs {
            sections
                .entry((run.machine.clone(), run.branch.clone()))
                .or_default()
                .push(run);
        }
        let many = sections.len() > 1;
        for ((machine, branch), runs) in &sections {
            if many {
                let _ = write!(
                    body,
                    "<h2 class=\"section\">machine {} · branch {}</h2>",
                    escape(machine),
                    escape(branch.as_deref().unwrap_or("none"))
                );
            }
            let section = Section {
                history,
                runs,
                cases: &cases,
                folder: folder.as_deref(),
                steps: steps
                    .iter()
                    .filter(|s| s.machine == *machine && s.branch == *branch)
                    .collect(),
            };
            section.render(&mut body)?;
        }
    }
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"color-scheme\" content=\"light dark\"><title>{}</title><style>{STYLE}{}</style></head>\
         <body>{body}<script>{SCRIPT}</script></body></html>\n",
        escape(title),
        colour_rules()
    ))
}

/// The regressions at the top of the page.
fn summary(body: &mut String, steps: &[FigureStep]) {
    let regressed: Vec<&FigureStep> = steps
        .iter()
        .filter(|s| s.verdict == Verdict::Regressed)
        .collect();
    if regressed.is_empty() {
        body.push_str("<p class=\"ok\">No regressions found along the commits.</p>");
        return;
    }
    body.push_str("<h2>Regressions</h2><table class=\"steps\"><tr><th>case</th><th>figure</th><th>first commit</th><th>before</th><th>after</th><th>change</th><th>p-value</th><th>find the commit</th></tr>");
    for step in regressed {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td class=\"bad\">{}</td><td>{}</td><td><code>{}</code></td></tr>",
            escape(&step.case),
            escape(&step.name()),
            escape(&short(&step.commit)),
            if step.newest { " (newest)" } else { "" },
            escape(&format_figure(step.figure, step.before)),
            escape(&format_figure(step.figure, step.after)),
            escape(&step.change_text()),
            step.p_value_text(),
            escape(step.bisect.as_deref().unwrap_or("-"))
        );
    }
    body.push_str("</table>");
}

/// Ids in the order people expect: `size=64` before `size=128`.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    /// Runs of digits and of anything else.
    fn chunks(text: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let digit = |c: char| c.is_ascii_digit();
        for (at, c) in text.char_indices().skip(1) {
            let before = text[..at].chars().next_back().is_some_and(digit);
            if before != digit(c) {
                out.push((before, &text[start..at]));
                start = at;
            }
        }
        if start < text.len() {
            out.push((
                text[start..].chars().next().is_some_and(digit),
                &text[start..],
            ));
        }
        out
    }
    let (a_chunks, b_chunks) = (chunks(a), chunks(b));
    for (x, y) in a_chunks.iter().zip(&b_chunks) {
        let order = match (x, y) {
            ((true, x), (true, y)) => x.len().cmp(&y.len()).then(x.cmp(y)),
            ((_, x), (_, y)) => x.cmp(y),
        };
        if order.is_ne() {
            return order;
        }
    }
    a_chunks.len().cmp(&b_chunks.len())
}

/// The runs of one machine and branch.
struct Section<'a> {
    history: &'a History,
    runs: &'a [&'a RunSummary],
    cases: &'a HashMap<String, CaseInfo>,
    /// Where the page goes, resolved: links to files below it are relative.
    folder: Option<&'a Path>,
    steps: Vec<&'a FigureStep>,
}

impl Section<'_> {
    fn render(&self, body: &mut String) -> Result<(), HistoryError> {
        let commits = commits(self.runs.iter().copied());
        let place: HashMap<&str, usize> = commits
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        let run_commit: HashMap<i64, usize> = self
            .runs
            .iter()
            .filter_map(|r| Some((r.id, *place.get(commit_of(r).as_str())?)))
            .collect();
        let latest = self.latest_by_family()?;
        let labels: Vec<String> = commits.iter().map(|c| short(c)).collect();
        let mut loaded: HashMap<&str, Vec<CasePoint>> = HashMap::new();
        for (family, latest) in &latest {
            let family = family.as_str();
            let family_cases: Vec<&str> = latest.figures.iter().map(|(c, _)| c.as_str()).collect();
            let family_cases = &family_cases;
            // The runs up to the family's own latest: a later run of another
            // bench target, or one filtered to other cases, leaves it as it was.
            let runs = &self.runs[..=latest.at];
            let latest_figures = &latest.figures;
            let _ = write!(
                body,
                "<section class=\"family\"><h2>{}</h2><div class=\"charts\">",
                escape(family)
            );
            for (figure, name) in CHARTED {
                let mut drawn: Vec<&str> = family_cases
                    .iter()
                    .copied()
                    .filter(|case| {
                        self.steps
                            .iter()
                            .any(|s| s.case == *case && s.figure == figure)
                    })
                    .collect();
                for case in family_cases {
                    if drawn.len() >= MOST_LINES {
                        break;
                    }
                    if !drawn.contains(case) {
                        drawn.push(case);
                    }
                }
                drawn.truncate(MOST_LINES);
                let mut lines = Vec::new();
                for case in &drawn {
                    if !loaded.contains_key(case) {
                        loaded.insert(case, self.history.case(case)?);
                    }
                    let (points, outliers) = trend(&loaded[case], figure, &run_commit);
                    if !points.is_empty() || !outliers.is_empty() {
                        lines.push(Line {
                            name: within(family, case).to_owned(),
                            colour: family_cases.iter().position(|c| c == case).unwrap_or(0),
                            points,
                            outliers,
                        });
                    }
                }
                if lines.is_empty() {
                    continue;
                }
                let markers = self
                    .steps
                    .iter()
                    .filter(|s| s.figure == figure && drawn.contains(&s.case.as_str()))
                    .filter_map(|s| {
                        Some(Marker {
                            x: *place.get(s.commit.as_str())? as f64,
                            label: format!("{:+.0}%", 100.0 * s.change),
                            regressed: s.verdict == Verdict::Regressed,
                            bisect: s.bisect.clone(),
                        })
                    })
                    .collect();
                let more = family_cases.len().saturating_sub(drawn.len());
                let title = if more > 0 {
                    format!(
                        "{family}: {name} ({} of {} cases)",
                        drawn.len(),
                        family_cases.len()
                    )
                } else {
                    format!("{family}: {name}")
                };
                let chart = Chart {
                    title,
                    x: XAxis::Places(labels.clone()),
                    unit: figure.unit(),
                    lines,
                    markers,
                    log_log: false,
                };
                body.push_str(&chart.html());
            }
            for grid in self.grid(family, latest_figures) {
                body.push_str(&grid.html());
            }
            if let Some(chart) = self.scaling_chart(runs, family, latest_figures)? {
                body.push_str(&chart.html());
            }
            let capacity =
                super::capacity::shown(self.history, runs, family, &run_commit, &labels)?;
            if let Some(chart) = &capacity.chart {
                body.push_str(&chart.html());
            }
            let searches = super::search::shown(self.history, runs, family, family_cases)?;
            if let Some(chart) = &searches.chart {
                body.push_str(&chart.html());
            }
            if let Some(chart) =
                super::stream::shown(self.history, latest.run, family, family_cases)?
            {
                body.push_str(&chart.html());
            }
            let with_params: Vec<(&str, Option<&ParamMap>)> = family_cases
                .iter()
                .map(|case| (*case, self.cases.get(*case).map(|c| &c.params)))
                .collect();
            let roofline =
                super::roofline::shown(self.history, latest.run, family, &with_params, |c| {
                    within(family, c).to_owned()
                })?;
            if let Some(chart) = &roofline {
                body.push_str(&chart.html());
            }
            let context = Context {
                latest: latest_figures,
                latest_run: latest.run,
                run_commit: &run_commit,
                labels: &labels,
            };
            for chart in self.tradeoffs(family, family_cases, &context, &mut loaded)? {
                body.push_str(&chart.html());
            }
            body.push_str("</div>");
            body.push_str(&capacity.lines);
            body.push_str(&searches.lines);
            self.table(body, family_cases, latest_figures);
            body.push_str("</section>");
        }
        Ok(())
    }

    /// Each family of the section's runs with its own latest run: the
    /// newest run that has figures of it, and those figures, its cases in
    /// natural order. Runs are read newest first, until every family the
    /// history knows has been met.
    fn latest_by_family(&self) -> Result<BTreeMap<String, FamilyLatest>, HistoryError> {
        let known: std::collections::BTreeSet<&str> =
            self.cases.values().map(|c| c.family.as_str()).collect();
        let mut latest: BTreeMap<String, FamilyLatest> = BTreeMap::new();
        for (at, run) in self.runs.iter().enumerate().rev() {
            let mut found: BTreeMap<String, Vec<(String, CasePoint)>> = BTreeMap::new();
            for (case, point) in self.history.run_figures(run.id)? {
                let family = self
                    .cases
                    .get(&case)
                    .map_or(case.as_str(), |c| c.family.as_str());
                if !latest.contains_key(family) {
                    found
                        .entry(family.to_owned())
                        .or_default()
                        .push((case, point));
                }
            }
            for (family, mut figures) in found {
                figures.sort_by(|a, b| natural(&a.0, &b.0));
                latest.insert(
                    family,
                    FamilyLatest {
                        at,
                        run: run.id,
                        figures,
                    },
                );
            }
            if known.iter().all(|family| latest.contains_key(*family)) {
                break;
            }
        }
        Ok(latest)
    }

    /// Which way each field of the cases' struct metric is better.
    fn directions(&self, cases: &[&str]) -> BTreeMap<String, Direction> {
        cases
            .iter()
            .filter_map(|case| self.cases.get(*case))
            .flat_map(|info| info.directions.iter().map(|(f, d)| (f.clone(), *d)))
            .collect()
    }

    /// Per directed field of the family's struct metric, the field against
    /// time per call: the latest run beside the latest commit before it
    /// that has figures of the family.
    fn tradeoffs<'c>(
        &self,
        family: &str,
        family_cases: &[&'c str],
        context: &Context<'_>,
        loaded: &mut HashMap<&'c str, Vec<CasePoint>>,
    ) -> Result<Vec<super::scatter::Scatter>, HistoryError> {
        let directions = self.directions(family_cases);
        let latest_place = context.run_commit.get(&context.latest_run);
        let (Some(&latest_place), false) = (latest_place, directions.is_empty()) else {
            return Ok(Vec::new());
        };
        for case in family_cases {
            if !loaded.contains_key(case) {
                loaded.insert(case, self.history.case(case)?);
            }
        }
        // An earlier point's commit, when the point can be drawn.
        let earlier = |point: &CasePoint| {
            let place = *context.run_commit.get(&point.run)?;
            let drawable = !point.failed && point.time_ns.is_some() && !point.fields.is_empty();
            (drawable && place < latest_place).then_some(place)
        };
        let before = family_cases
            .iter()
            .filter_map(|case| loaded[case].iter().filter_map(earlier).max())
            .max();
        let members: Vec<Member> = family_cases
            .iter()
            .enumerate()
            .map(|(colour, case)| {
                let now = context
                    .latest
                    .iter()
                    .find(|(id, _)| id == case)
                    .filter(|(_, point)| !point.failed)
                    .and_then(|(_, point)| {
                        Some(Figures {
                            time_ns: point.time_ns?,
                            fields: point.fields.clone(),
                        })
                    });
                let then: Vec<&CasePoint> = loaded[case]
                    .iter()
                    .filter(|p| before.is_some() && earlier(p) == before)
                    .collect();
                Member {
                    name: within(family, case).to_owned(),
                    colour,
                    now,
                    before: mean_figures(&then),
                }
            })
            .collect();
        let label = before.map(|place| {
            let label = &context.labels[place];
            if label.starts_with("run ") {
                label.clone()
            } else {
                format!("commit {label}")
            }
        });
        Ok(tradeoff::charts(
            family,
            &directions,
            &members,
            label.as_deref(),
        ))
    }

    /// The latest run's figure against a numeric parameter, one line for
    /// each combination of the others: the model size × batch size sweep
    /// as lines. Time, or the value when the family has no time; for a
    /// family under load, its latency (median and p99) and its requests per
    /// second against `concurrency`.
    fn grid(&self, family: &str, latest: &[(String, CasePoint)]) -> Vec<Chart> {
        let rows: Vec<(&CaseInfo, &CasePoint)> = latest
            .iter()
            .filter_map(|(id, point)| Some((self.cases.get(id)?, point)))
            .filter(|(case, point)| case.family == family && !point.failed)
            .collect();
        if rows.len() < 3 {
            return Vec::new();
        }
        let numeric = |name: &str| {
            rows.iter()
                .all(|(c, _)| c.params.get(name).is_some_and(Json::is_number))
        };
        if numeric("concurrency") && rows.iter().any(|(_, p)| p.requests_per_second.is_some()) {
            return [
                (Figure::Time, "median latency"),
                (Figure::P99, "p99 latency"),
                (Figure::Requests, "requests per second"),
            ]
            .into_iter()
            .filter_map(|(figure, what)| against(family, &rows, "concurrency", figure, what))
            .collect();
        }
        // The parameter with the most distinct numbers is the x axis.
        let names: Vec<&str> = rows[0].0.params.keys().collect();
        let Some(axis) = names
            .iter()
            .filter(|name| numeric(name))
            .max_by_key(|name| {
                let mut values: Vec<String> = rows
                    .iter()
                    .map(|(c, _)| c.params[**name].to_string())
                    .collect();
                values.sort();
                values.dedup();
                values.len()
            })
        else {
            return Vec::new();
        };
        let (figure, what) = if rows.iter().any(|(_, p)| p.time_ns.is_some()) {
            (Figure::Time, "time per call")
        } else {
            (Figure::Value, "value")
        };
        against(family, &rows, axis, figure, what)
            .into_iter()
            .collect()
    }

    /// For a family with `scaling`: its time per call against the
    /// parameter on log-log axes, the latest run's cases, the power fitted
    /// to them, and the power of the run before it, per combination of the
    /// family's other parameters.
    fn scaling_chart(
        &self,
        runs: &[&RunSummary],
        family: &str,
        latest: &[(String, CasePoint)],
    ) -> Result<Option<Chart>, HistoryError> {
        let of_family = |fits: Vec<ScalingRecord>| -> Vec<ScalingRecord> {
            fits.into_iter()
                .filter(|f| f.family == family && f.figure == "time")
                .collect()
        };
        let Some(last) = runs.last() else {
            return Ok(None);
        };
        let fits = of_family(self.history.run_scaling(last.id)?);
        let Some(parameter) = fits.first().map(|f| f.parameter.clone()) else {
            return Ok(None);
        };
        let mut before = Vec::new();
        for run in runs.iter().rev().skip(1) {
            before = of_family(self.history.run_scaling(run.id)?);
            if !before.is_empty() {
                break;
            }
        }
        let mut lines = Vec::new();
        for (at, fit) in fits.iter().enumerate().take(MOST_LINES / 3) {
            let mut points: Vec<(f64, f64)> = latest
                .iter()
                .filter_map(|(id, point)| {
                    let case = self.cases.get(id)?;
                    let mut others = case.params.clone();
                    let x = others.remove(&parameter)?.as_f64()?;
                    (case.family == family && !point.failed && others == fit.params)
                        .then_some((x, point.time_ns?))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let (Some(&(low, _)), Some(&(high, _))) = (points.first(), points.last()) else {
                continue;
            };
            let line = |f: &ScalingRecord| {
                vec![
                    (low, f.constant * low.powf(f.exponent)),
                    (high, f.constant * high.powf(f.exponent)),
                ]
            };
            let label = if fit.params.is_empty() {
                "measured".to_owned()
            } else {
                fit.label()
            };
            lines.push(Line {
                name: label,
                colour: 3 * at,
                points,
                outliers: Vec::new(),
            });
            lines.push(Line {
                name: format!("fitted: {parameter}^{:.2}", fit.exponent),
                colour: 3 * at + 1,
                points: line(fit),
                outliers: Vec::new(),
            });
            if let Some(earlier) = before.iter().find(|b| b.same_fit(fit)) {
                lines.push(Line {
                    name: format!("the run before: {parameter}^{:.2}", earlier.exponent),
                    colour: 3 * at + 2,
                    points: line(earlier),
                    outliers: Vec::new(),
                });
            }
        }
        Ok((!lines.is_empty()).then(|| Chart {
            title: format!(
                "{family}: time per call against {parameter}, log-log, with the powers fitted"
            ),
            x: XAxis::Numbers(parameter),
            unit: Unit::Time,
            lines,
            markers: Vec::new(),
            log_log: true,
        }))
    }

    /// The latest run's figures of the family's cases, a struct metric's
    /// fields in columns of their own: those with a direction first, marked
    /// with it.
    fn table(&self, body: &mut String, family_cases: &[&str], latest: &[(String, CasePoint)]) {
        let rows: Vec<&(String, CasePoint)> = family_cases
            .iter()
            .filter_map(|case| latest.iter().find(|(c, _)| c == case))
            .collect();
        let directions = self.directions(family_cases);
        let mut fields: Vec<&str> = directions.keys().map(String::as_str).collect();
        for (_, point) in &rows {
            for field in point.fields.keys() {
                if !fields.contains(&field.as_str()) {
                    fields.push(field);
                }
            }
        }
        fields.truncate(MOST_FIELD_COLUMNS);
        let value = fields.is_empty() || rows.iter().any(|(_, p)| p.value.is_some());
        let profiled = rows.iter().any(|(_, p)| p.profile.is_some());
        body.push_str("<table class=\"latest\"><tr><th>case (latest run)</th><th>time</th><th>p99</th><th>throughput /s</th><th>requests /s</th><th>load</th><th>peak RSS growth</th><th>GPU</th>");
        if profiled {
            body.push_str("<th>profile</th>");
        }
        if value {
            body.push_str("<th>value</th>");
        }
        for field in &fields {
            let mark = match directions.get(*field) {
                Some(Direction::Higher) => " ↑",
                Some(Direction::Lower) => " ↓",
                _ => "",
            };
            let _ = write!(body, "<th>{}{mark}</th>", escape(field));
        }
        body.push_str("</tr>");
        let columns = 7 + usize::from(profiled) + usize::from(value) + fields.len();
        for (case, point) in rows {
            if point.failed {
                let _ = write!(
                    body,
                    "<tr><td>{}</td><td colspan=\"{columns}\" class=\"bad\">failed</td></tr>",
                    escape(case)
                );
                continue;
            }
            let cell = |figure: Figure| {
                point
                    .figure(figure)
                    .map_or("-".to_owned(), |v| format_figure(figure, v))
            };
            // A call counted under Callgrind has its instructions for a time.
            let time = match point.instructions {
                Some(count) if point.time_ns.is_none() => {
                    format!("{} instr", format_figure(Figure::Instructions, count))
                }
                _ => cell(Figure::Time),
            };
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td>",
                escape(case),
                escape(&time)
            );
            let mut shown = vec![
                Figure::P99,
                Figure::Throughput,
                Figure::Requests,
                Figure::Load,
                Figure::Rss,
                Figure::Gpu,
            ];
            if value {
                shown.push(Figure::Value);
            }
            for figure in shown {
                let _ = write!(body, "<td>{}</td>", escape(&cell(figure)));
            }
            if profiled {
                match &point.profile {
                    Some(path) => {
                        let _ = write!(
                            body,
                            "<td><a href=\"{}\">flamegraph</a></td>",
                            escape(&href(&link(path, self.folder)))
                        );
                    }
                    None => body.push_str("<td>-</td>"),
                }
            }
            for field in &fields {
                let text = point
                    .fields
                    .get(*field)
                    .map_or("-".to_owned(), |v| format_field(field, *v));
                let _ = write!(body, "<td>{}</td>", escape(&text));
            }
            body.push_str("</tr>");
        }
        body.push_str("</table>");
    }
}

/// The path of the file at `path` from a page in `folder`: relative, its
/// components joined by `/`, where the file lies below the folder; else
/// `path` itself.
fn link(path: &str, folder: Option<&Path>) -> String {
    let Some(folder) = folder else {
        return path.to_owned();
    };
    let file = Path::new(path);
    let file = std::fs::canonicalize(file).unwrap_or(file.to_owned());
    match file.strip_prefix(folder) {
        Ok(below) => below
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.to_owned(),
    }
}

/// A link to the file at `path`, the bytes a URL cannot hold escaped.
fn href(path: &str) -> String {
    let mut link = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'a'..=b'z'
            | b'A'..=b'Z'
            | b'0'..=b'9'
            | b'/'
            | b'.'
            | b'_'
            | b'-'
            | b'~'
            | b'='
            | b','
            | b'+' => link.push(char::from(byte)),
            _ => {
                let _ = write!(link, "%{byte:02X}");
            }
        }
    }
    link
}

/// `figure` of `rows` against their numeric parameter `axis`, a line for
/// each combination of the other parameters; `None` when no line has two
/// points.
fn against(
    family: &str,
    rows: &[(&CaseInfo, &CasePoint)],
    axis: &str,
    figure: Figure,
    what: &str,
) -> Option<Chart> {
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (case, point) in rows {
        let x = case.params.get(axis)?.as_f64()?;
        let Some(y) = point.figure(figure) else {
            continue;
        };
        let others: Vec<String> = case
            .params
            .iter()
            .filter(|(name, _)| *name != axis)
            .map(|(name, value)| {
                format!(
                    "{name}={}",
                    value.as_str().map_or(value.to_string(), str::to_owned)
                )
            })
            .collect();
        lines.entry(others.join(",")).or_default().push((x, y));
    }
    let distinct = lines.values().map(Vec::len).max().unwrap_or(0);
    if distinct < 2 {
        return None;
    }
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = lines.into_iter().collect();
    lines.sort_by(|a, b| natural(&a.0, &b.0));
    let lines: Vec<Line> = lines
        .into_iter()
        .take(MOST_LINES)
        .enumerate()
        .map(|(colour, (name, mut points))| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                name: if name.is_empty() {
                    family.to_owned()
                } else {
                    name
                },
                colour,
                points,
                outliers: Vec::new(),
            }
        })
        .collect();
    Some(Chart {
        title: format!("{family}: {what} against {axis}, latest run"),
        x: XAxis::Numbers(axis.to_owned()),
        unit: figure.unit(),
        lines,
        markers: Vec::new(),
        log_log: false,
    })
}

/// A family's own latest run in a section.
struct FamilyLatest {
    /// Its place among the section's runs.
    at: usize,
    /// Its id.
    run: i64,
    /// The family's figures in it, by case.
    figures: Vec<(String, CasePoint)>,
}

/// What a section's charts of one family draw from: the latest run's
/// figures, each run's commit (its place in the order), and the commits'
/// labels.
struct Context<'a> {
    latest: &'a [(String, CasePoint)],
    /// The family's own latest run.
    latest_run: i64,
    run_commit: &'a HashMap<i64, usize>,
    labels: &'a [String],
}

/// A case's name within its family's charts: the family is the chart's, the
/// parameters tell the cases apart.
fn within<'a>(family: &str, case: &'a str) -> &'a str {
    case.strip_prefix(family)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(case)
}

/// The mean time and fields of a case's runs at one commit.
fn mean_figures(points: &[&CasePoint]) -> Option<Figures> {
    if points.is_empty() {
        return None;
    }
    let n = points.len() as f64;
    let time_ns = points.iter().map(|p| p.time_ns).sum::<Option<f64>>()? / n;
    let mut fields: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for point in points {
        for (field, value) in &point.fields {
            let entry = fields.entry(field.clone()).or_default();
            entry.0 += value;
            entry.1 += 1.0;
        }
    }
    Some(Figures {
        time_ns,
        fields: fields
            .into_iter()
            .map(|(field, (sum, count))| (field, sum / count))
            .collect(),
    })
}

/// Points of a chart, (x, y).
type Points = Vec<(f64, f64)>;

/// A case's figure per commit (the mean of its runs there), in commit
/// order, and apart from it the runs far off their segment, each at its
/// commit.
fn trend(
    points: &[CasePoint],
    figure: Figure,
    run_commit: &HashMap<i64, usize>,
) -> (Points, Points) {
    let here: Vec<CasePoint> = points
        .iter()
        .filter(|p| run_commit.contains_key(&p.run))
        .cloned()
        .collect();
    let outlying = outlying_runs(&here);
    let mut by_commit: BTreeMap<usize, (f64, usize)> = BTreeMap::new();
    let mut outliers = Vec::new();
    for point in &here {
        let (Some(&commit), Some(value)) = (run_commit.get(&point.run), point.figure(figure))
        else {
            continue;
        };
        if outlying.contains(&(point.run, figure)) {
            outliers.push((commit as f64, value));
            continue;
        }
        let entry = by_commit.entry(commit).or_default();
        entry.0 += value;
        entry.1 += 1;
    }
    let line = by_commit
        .into_iter()
        .map(|(commit, (sum, n))| (commit as f64, sum / n as f64))
        .collect();
    (line, outliers)
}

/// The commits of `runs` in the order of their first run.
fn commits<'a>(runs: impl IntoIterator<Item = &'a RunSummary>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    runs.into_iter()
        .map(commit_of)
        .filter(|c| seen.insert(c.clone()))
        .collect()
}

/// The commit a run measured, or `run N` without git, as the steps name it.
fn commit_of(run: &RunSummary) -> String {
    run.commit
        .clone()
        .unwrap_or_else(|| format!("run {}", run.id))
}

fn short(commit: &str) -> String {
    if commit.starts_with("run ") {
        commit.to_owned()
    } else {
        commit.chars().take(8).collect()
    }
}

/// Marks the page as drawn, for tests that open it in a browser: how many
/// charts it has, and how many trade-off fronts have a length.
const SCRIPT: &str = "document.body.dataset.drawn = document.querySelectorAll('svg.chart').length; \
document.body.dataset.fronts = [...document.querySelectorAll('polyline.front')].filter(p => p.getTotalLength() > 0).length;";

/// Light by default, dark when the reader's system is; the lines' colours
/// are told apart in both (and by colour-blind readers: the Okabe-Ito set).
const STYLE: &str = "
:root { --fg: #1b1f24; --muted: #5b636e; --bg: #ffffff; --panel: #f5f6f8; --grid: #e1e4e8; --bad: #c0392b; --good: #1e7d32;
  --c0: #0072b2; --c1: #e69f00; --c2: #009e73; --c3: #cc79a7; --c4: #56b4e9; --c5: #d55e00; --c6: #7a7a00; --c7: #555555; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --muted: #9aa3ad; --bg: #111418; --panel: #1a1f25; --grid: #2c333b; --bad: #ff6b5b; --good: #5fd068;
    --c0: #56b4e9; --c1: #f0b840; --c2: #2fd0a0; --c3: #e79fc8; --c4: #9fd4f5; --c5: #ff8a3d; --c6: #d6d65a; --c7: #b0b0b0; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; max-width: 1500px; padding: 16px 24px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 24px 0 8px; } header p, .empty { color: var(--muted); }
.ok { color: var(--good); } .bad { color: var(--bad); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: 12px; }
figure.chart { margin: 0; background: var(--panel); border-radius: 6px; padding-bottom: 6px; }
svg.chart { width: 100%; height: auto; display: block; }
figcaption { font-size: 12px; padding: 0 10px; display: flex; flex-wrap: wrap; gap: 2px 14px; }
.key { display: inline-flex; align-items: center; gap: 5px; } svg.swatch { width: 10px; height: 10px; }
svg text { fill: var(--fg); font: 11px system-ui, sans-serif; } svg .title { font-size: 13px; font-weight: 600; }
svg .tick.y { text-anchor: end; fill: var(--muted); } svg .tick.x, svg .axis-name, svg .empty { text-anchor: middle; fill: var(--muted); }
svg .tick.x.start { text-anchor: start; } svg .tick.x.end { text-anchor: end; }
svg .grid { stroke: var(--grid); } svg .axis { stroke: var(--muted); }
svg .line { fill: none; stroke-width: 2; } svg .dot { stroke: none; }
svg .outlier { fill: none; stroke-width: 1.5; }
svg .step { stroke: var(--good); stroke-dasharray: 4 3; fill: var(--good); } svg .step.regressed { stroke: var(--bad); fill: var(--bad); }
svg text.step, svg text.step.regressed { stroke: none; font-weight: 600; }
svg .roof { fill: none; stroke: var(--fg); stroke-width: 1.5; } svg .roof.all { stroke-dasharray: 6 3; }
svg .roof-name { text-anchor: end; fill: var(--muted); } svg .series { fill: none; stroke-width: 1.2; opacity: 0.7; }
svg .front { fill: none; stroke: var(--fg); stroke-width: 1.5; stroke-dasharray: 6 3; }
svg .moved { stroke-width: 1; stroke-dasharray: 2 2; opacity: 0.6; } svg .before { fill: var(--panel); stroke-width: 1.5; }
svg .dot.on-front { stroke: var(--fg); stroke-width: 1.5; }
svg circle.left-front { fill: none; stroke: var(--bad); stroke-width: 2; } svg text.left-front { fill: var(--bad); font-weight: 600; }
figcaption .note { color: var(--muted); }
table { border-collapse: collapse; margin: 10px 0; } th, td { text-align: left; padding: 3px 10px; border-bottom: 1px solid var(--grid); }
th { color: var(--muted); font-weight: 600; } td:not(:first-child) { font-variant-numeric: tabular-nums; }
";

/// The rules that colour line `l{i}` with `--c{i}`.
fn colour_rules() -> String {
    (0..COLOURS)
        .map(|i| format!("svg .l{i} {{ stroke: var(--c{i}); }} svg .dot.l{i}, svg .swatch.l{i} {{ fill: var(--c{i}); }}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_escapes_what_a_url_cannot_hold() {
        assert_eq!(
            href("/t/profiles/eval/model=Memo(a b)#1.svg"),
            "/t/profiles/eval/model=Memo%28a%20b%29%231.svg"
        );
        assert_eq!(href("/t/sum.svg"), "/t/sum.svg");
    }

    #[test]
    fn a_file_below_the_page_is_linked_relative_to_it_and_others_absolute() {
        let folder = Path::new("/no/such/site");
        assert_eq!(
            link("/no/such/site/profiles/eval/a.svg", Some(folder)),
            "profiles/eval/a.svg"
        );
        assert_eq!(
            link("/no/such/other/a.svg", Some(folder)),
            "/no/such/other/a.svg"
        );
        assert_eq!(
            link("/no/such/site-b/a.svg", Some(folder)),
            "/no/such/site-b/a.svg"
        );
        assert_eq!(link("/no/such/site/a.svg", None), "/no/such/site/a.svg");
    }

    #[test]
    fn numbers_in_ids_sort_as_numbers() {
        let mut ids = vec![
            "m/size=128,batch=8",
            "m/size=64,batch=32",
            "m/size=64,batch=8",
            "m/size=1024",
        ];
        ids.sort_by(|a, b| super::natural(a, b));
        assert_eq!(
            ids,
            [
                "m/size=64,batch=8",
                "m/size=64,batch=32",
                "m/size=128,batch=8",
                "m/size=1024"
            ]
        );
    }

    #[test]
    fn every_line_colour_has_its_rules() {
        for i in 0..super::COLOURS {
            assert!(super::STYLE.contains(&format!("--c{i}:")), "colour {i}");
        }
    }
}
