//! `nnbench history`: add runs to the history, list them, follow a case.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench_cli::history::{FigureStep, History, Machine, RunFilter, StepSearch};
use nnbench_core::compare::Verdict;
use nnbench_vocab::format_figure;

use crate::inputs;

#[derive(Subcommand)]
pub enum HistoryCommand {
    /// Add run records to the history; a record added before is not added
    /// again.
    #[command(after_help = "Examples:
  nnbench history add target/nnbench/sweep/latest.json
  nnbench history add --machine gpu-runner runs/*.json")]
    Add {
        /// Record files, folders of records, or saved baselines' names.
        #[arg(required = true, value_name = "RECORD")]
        records: Vec<String>,
        /// File the runs under this machine name instead of the machine
        /// their context describes (CPU, cores, memory, OS, toolchain, GPUs).
        #[arg(long, value_name = "NAME")]
        machine: Option<String>,
    },
    /// List the runs in the history, oldest first.
    List {
        #[command(flatten)]
        filter: Filter,
    },
    /// Find steps in each case's figures along the commits of a branch on
    /// one machine, and print the regressions: first bad commit, medians
    /// before and after, change, p-value.
    ///
    /// A step is placed by E-divisive means (Matteson and James 2014), as
    /// Hunter (Fleming et al. 2023) and Apache Otava do, and judged by a
    /// t-test corrected for the splits it was chosen from, a run far off
    /// the runs around it counted as their median; it is reported when it
    /// is also larger than the figure's --fail-on limit.
    #[command(after_help = "Examples:
  nnbench history regressions --branch main
  nnbench history regressions --case accuracy/ --all --format json
  nnbench history regressions --branch main --fail   # in CI, after history add")]
    Regressions {
        #[command(flatten)]
        filter: Filter,
        /// Only cases whose id contains this.
        #[arg(long, value_name = "PATTERN")]
        case: Option<String>,
        /// The corrected p-value under which a step stands.
        #[arg(long, value_name = "P", default_value_t = 0.001, value_parser = crate::probability)]
        significance: f64,
        /// How large a step must be, per figure, as `nnbench compare
        /// --fail-on` takes them (defaults: time=10%, rss=5%+16MiB, ...).
        #[arg(long, value_name = "SPEC", value_parser = crate::limits)]
        fail_on: Option<nnbench_core::compare::Limits>,
        /// Exit 1 when a regression is at the newest commit of its series.
        #[arg(long)]
        fail: bool,
        /// List improvements and steps of unjudged values too.
        #[arg(long)]
        all: bool,
        /// How to write the steps.
        #[arg(long, value_enum, default_value_t = StepsFormat::Table)]
        format: StepsFormat,
    },
    /// The figures of one case in every run, oldest first; a figure far
    /// off the runs around it is marked an outlier.
    #[command(after_help = "Examples:
  nnbench history show 'matmul/n=512'
  nnbench history show 'matmul/n=512' --branch main --format json")]
    Show {
        /// The case's id, as records and `--list` give it.
        case: String,
        #[command(flatten)]
        filter: Filter,
        /// How to write the runs: a table (`*` marks an outlier), or JSON,
        /// each run with its figures and `outlier` on those far off.
        #[arg(long, value_enum, default_value_t = StepsFormat::Table)]
        format: StepsFormat,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum StepsFormat {
    /// A table, one step (or run) a line.
    Table,
    /// Every step (or run), as JSON.
    Json,
}

#[derive(clap::Args)]
pub struct Filter {
    /// Only runs on this machine (its key, or part of its description).
    #[arg(long, value_name = "MACHINE")]
    machine: Option<String>,
    /// Only runs on this branch.
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Only runs of this bench target.
    #[arg(long, value_name = "BENCH")]
    bench: Option<String>,
}

impl Filter {
    pub fn runs(&self) -> RunFilter {
        RunFilter {
            machine: self.machine.clone(),
            branch: self.branch.clone(),
            bench: self.bench.clone(),
        }
    }
}

pub fn run(path: Option<PathBuf>, command: HistoryCommand) -> Result<ExitCode, String> {
    let path = path.unwrap_or_else(History::default_path);
    match command {
        HistoryCommand::Add { records, machine } => add(&path, &records, machine.as_deref()),
        HistoryCommand::List { filter } => list(&path, &filter),
        HistoryCommand::Show {
            case,
            filter,
            format,
        } => show(&path, &case, &filter, format),
        HistoryCommand::Regressions {
            filter,
            case,
            significance,
            fail_on,
            fail,
            all,
            format,
        } => {
            let search = StepSearch {
                filter: filter.runs(),
                case,
                significance,
                limits: fail_on.unwrap_or_default(),
            };
            regressions(&path, &search, all, fail, format)
        }
    }
}

fn regressions(
    path: &Path,
    search: &StepSearch,
    all: bool,
    fail: bool,
    format: StepsFormat,
) -> Result<ExitCode, String> {
    let history = open_existing(path)?;
    let steps: Vec<FigureStep> = history
        .steps(search)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|s| all || s.verdict == Verdict::Regressed)
        .collect();
    match format {
        StepsFormat::Json => {
            let json = serde_json::to_string_pretty(&steps).map_err(|e| e.to_string())?;
            println!("{json}");
        }
        StepsFormat::Table => {
            let mut table = Table::new();
            table.load_style(UTF8_FULL_CONDENSED).set_header([
                "case",
                "figure",
                "verdict",
                "first commit",
                "before",
                "after",
                "change",
                "p-value",
                "machine",
            ]);
            for step in &steps {
                table.add_row([
                    step.case.clone(),
                    step.name(),
                    format!("{:?}", step.verdict).to_lowercase()
                        + if step.newest { " (newest)" } else { "" },
                    short(&step.commit),
                    format_figure(step.figure, step.before),
                    format_figure(step.figure, step.after),
                    step.change_text(),
                    step.p_value_text(),
                    step.machine.clone(),
                ]);
            }
            let what = if all { "steps" } else { "regressions" };
            if steps.is_empty() {
                println!("no {what} in {}", path.display());
            } else {
                println!("{table}\n{} {what} in {}", steps.len(), path.display());
                let commands: Vec<&str> = steps
                    .iter()
                    .filter(|s| s.verdict == Verdict::Regressed)
                    .filter_map(|s| s.bisect.as_deref())
                    .collect();
                if !commands.is_empty() {
                    println!("\nto find the commit of each regression:");
                    commands.iter().for_each(|c| println!("  {c}"));
                }
            }
        }
    }
    let fresh = steps
        .iter()
        .any(|s| s.newest && s.gated && s.verdict == Verdict::Regressed);
    Ok(if fail && fresh {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn add(path: &Path, records: &[String], machine: Option<&str>) -> Result<ExitCode, String> {
    // Every record is read before the history is touched: a bad one
    // adds none.
    let loaded = records
        .iter()
        .map(|name| inputs::load(name).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut history = History::open(path).map_err(|e| e.to_string())?;
    let machine = machine.map(Machine::named);
    for (record, name) in loaded {
        let added = history
            .add(&record, machine.as_ref())
            .map_err(|e| e.to_string())?;
        let commit = record
            .context
            .git
            .as_ref()
            .map_or("no commit".into(), |g| short(&g.commit));
        // A record merged from shards of several machines is one run each.
        let parts = std::iter::once(&added).chain(&added.also);
        for added in parts {
            if added.new {
                println!(
                    "{name}: added as run {} ({} at {commit}, {} cases) on machine {} ({})",
                    added.run,
                    record.run,
                    added.cases,
                    added.machine.key,
                    added.machine.description
                );
            } else {
                println!("{name}: already in the history as run {}", added.run);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn list(path: &Path, filter: &Filter) -> Result<ExitCode, String> {
    let history = open_existing(path)?;
    let runs = history.runs(&filter.runs()).map_err(|e| e.to_string())?;
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "run", "bench", "commit", "branch", "started", "machine", "cases", "failed",
    ]);
    for run in &runs {
        table.add_row([
            run.id.to_string(),
            run.bench.clone(),
            run.commit.as_deref().map_or("-".into(), short) + if run.dirty { "+" } else { "" },
            run.branch.clone().unwrap_or_else(|| "-".into()),
            run.started_at.clone(),
            run.machine.clone(),
            run.cases.to_string(),
            run.failed.to_string(),
        ]);
    }
    println!("{table}\n{} runs in {}", runs.len(), path.display());
    Ok(ExitCode::SUCCESS)
}

fn show(path: &Path, case: &str, filter: &Filter, format: StepsFormat) -> Result<ExitCode, String> {
    let history = open_existing(path)?;
    let runs = history.runs(&filter.runs()).map_err(|e| e.to_string())?;
    let wanted: std::collections::HashSet<i64> = runs.iter().map(|r| r.id).collect();
    let points: Vec<_> = history
        .case(case)
        .map_err(|e| e.to_string())?
        .into_iter()
        .filter(|p| wanted.contains(&p.run))
        .collect();
    if points.is_empty() {
        return Err(format!(
            "{}: no run has a case `{case}` (`nnbench history list` lists the runs; a case's id is as `cargo bench -- --list` gives it)",
            path.display()
        ));
    }
    let outlying = nnbench_cli::history::outlying_runs(&points);
    if let StepsFormat::Json = format {
        let runs: Vec<serde_json::Value> = points
            .iter()
            .map(|point| show_json(point, &outlying))
            .collect();
        let json = serde_json::to_string_pretty(&runs).map_err(|e| e.to_string())?;
        println!("{json}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "run",
        "commit",
        "branch",
        "started",
        "machine",
        "time",
        "load",
        "RSS growth",
        "heap growth",
        "GPU",
        "value",
        "instructions",
    ]);
    for point in &points {
        let mut row = vec![
            point.run.to_string(),
            point.commit.as_deref().map_or("-".into(), short),
            point.branch.clone().unwrap_or_else(|| "-".into()),
            point.started_at.clone(),
            point.machine.clone(),
        ];
        if point.failed {
            row.extend(["failed".into()]);
        } else {
            row.extend(nnbench_cli::history::STORED.map(|figure| {
                let mark = if outlying.contains(&(point.run, figure)) {
                    " *"
                } else {
                    ""
                };
                point
                    .figure(figure)
                    .map_or("-".into(), |v| format_figure(figure, v) + mark)
            }));
        }
        table.add_row(row);
    }
    println!("{case}\n{table}");
    if !outlying.is_empty() {
        println!(
            "* an outlier: more than {} robust standard deviations from the median of the runs around it",
            nnbench_cli::history::steps::OUTLIER_Z
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One run of `history show --format json`: where it ran, and each
/// figure it has, by its `--fail-on` name, as `{"value": ..., "outlier":
/// bool}`; the run's `outlier` is whether any of them is.
fn show_json(
    point: &nnbench_cli::history::CasePoint,
    outlying: &std::collections::BTreeSet<(i64, nnbench_vocab::Figure)>,
) -> serde_json::Value {
    let mut figures = serde_json::Map::new();
    for figure in nnbench_cli::history::STORED {
        if let Some(value) = point.figure(figure) {
            let outlier = outlying.contains(&(point.run, figure));
            figures.insert(
                figure.name().to_owned(),
                serde_json::json!({"value": value, "outlier": outlier}),
            );
        }
    }
    serde_json::json!({
        "run": point.run,
        "commit": point.commit,
        "branch": point.branch,
        "started_at": point.started_at,
        "machine": point.machine,
        "failed": point.failed,
        "outlier": outlying.iter().any(|(run, _)| *run == point.run),
        "figures": figures,
    })
}

/// Reading a history that does not exist is a mistake, not an empty one.
pub fn open_existing(path: &Path) -> Result<History, String> {
    if !path.exists() {
        return Err(format!(
            "{}: no history here (`nnbench history add RECORD` makes it)",
            path.display()
        ));
    }
    History::open(path).map_err(|e| e.to_string())
}

fn short(commit: &str) -> String {
    commit.chars().take(10).collect()
}
