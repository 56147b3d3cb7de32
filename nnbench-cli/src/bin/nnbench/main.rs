//! `nnbench`: what happens around a run. Builds the base revision's bench
//! for a paired run, compares runs to gate a pull request, exports records
//! for Bencher and github-action-benchmark, and keeps the history of runs.
//!
//! Exit status: 0 fine, 1 a regression (or a failed case) found, 2 bad
//! input, with a message naming the file.

mod bisect;
mod build_base;
mod disk_tier_command;
mod history_command;
mod inputs;
mod machine_command;
mod merge;

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use nnbench_core::compare::{Format, Limits};

#[derive(Parser)]
#[command(
    name = "nnbench",
    version,
    about = "Compare, export and keep the history of nnbench run records"
)]
struct Tool {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build bench BENCH of revision REV, for `cargo bench --bench BENCH --
    /// --paired BASE`; print the executable's path.
    ///
    /// REV is checked out in a git worktree under the target folder
    /// (target/nnbench/base/worktree, one for every revision) and built
    /// into target/nnbench/base/target, kept between builds, so that the
    /// next base builds only what changed. The executable is copied to
    /// target/nnbench/base/BENCH-COMMIT.
    #[command(after_help = "Examples:
  BASE=$(nnbench build-base main --bench sweep)
  cargo bench --bench sweep -- --paired \"$BASE\"
  nnbench build-base origin/main --bench mnist --features tch")]
    BuildBase {
        /// The revision: a branch, tag or commit.
        #[arg(value_name = "REV")]
        revision: String,
        /// The bench target to build.
        #[arg(long, value_name = "BENCH")]
        bench: String,
        /// The package of the bench, where it is not the current folder's.
        #[arg(short, long, value_name = "SPEC")]
        package: Option<String>,
        /// Features to build it with, as cargo takes them.
        #[arg(short = 'F', long, value_name = "FEATURES")]
        features: Option<String>,
    },
    /// Find the first commit between GOOD and BAD at which a selected case
    /// regressed: each commit tried is built (once; kept under
    /// target/nnbench/base) and run paired against GOOD's build. A commit
    /// that does not build is skipped; the boundary found is confirmed by a
    /// second paired run of the commits on each side. Exit 0 when it ran,
    /// 1 when GOOD does not build, 2 on bad input.
    #[command(after_help = "Examples:
  nnbench bisect v0.3.0 HEAD --bench sweep --fail-on time=2%
  nnbench bisect main~20 main --bench mnist -F tch --case model=small --format markdown")]
    Bisect(bisect::Bisect),
    /// Compare HEAD against BASE, case by case; exit 1 if any case regressed
    /// or fails in HEAD.
    ///
    /// Each side is a record file (target/nnbench/<bench>/latest.json, or
    /// one written with --out), a folder of records, or the name of a
    /// baseline saved with `cargo bench -- --save-baseline NAME`.
    ///
    /// Time is judged on the raw samples (Mann-Whitney U, p < 0.001) and
    /// must also move by more than its limit; memory and the metric by
    /// limits alone. With --paired RECORD, the record of a paired run
    /// (`cargo bench -- --paired BASE`) is judged against the base build's
    /// figures it keeps, time by its rounds' verdicts.
    #[command(after_help = "Examples:
  nnbench compare main target/nnbench/sweep/latest.json
  nnbench compare base.json head.json --format markdown >> \"$GITHUB_STEP_SUMMARY\"
  nnbench compare main head/ --fail-on time=5%,rss=2%+4MiB,gpu=off,value=0.01
  nnbench compare --paired target/nnbench/sweep/latest.json --format markdown")]
    Compare {
        /// The run compared against.
        #[arg(required_unless_present = "paired", conflicts_with = "paired")]
        base: Option<String>,
        /// The run judged.
        #[arg(required_unless_present = "paired")]
        head: Option<String>,
        /// A paired run's record, judged on its own.
        #[arg(long, value_name = "RECORD")]
        paired: Option<String>,
        /// Limits over the defaults: figure=P%, figure=amount,
        /// figure=P%+amount or figure=off, comma-separated, for the figures
        /// time, load, rss, heap, gpu, peak, memo, value, instructions,
        /// throughput, p99 and a struct metric's value.FIELD (defaults:
        /// time=10%, rss=5%+16MiB, heap=5%+1MiB, gpu=5%+16MiB,
        /// peak=5%+16MiB, memo=5%+1MiB, value=1e-7%, instructions=0.5%+100,
        /// throughput=10%, load=off, p99=off; a field named as a time or a
        /// rate has time's percentage, another the value's).
        #[arg(long, value_name = "SPEC", value_parser = limits)]
        fail_on: Option<Limits>,
        /// The p-value under which a time change counts as real.
        #[arg(long, value_name = "P", default_value_t = 0.001, value_parser = crate::probability)]
        significance: f64,
        /// How to write the comparison.
        #[arg(long, value_enum, default_value_t = CompareFormat::Table)]
        format: CompareFormat,
        /// Write it to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Write a record as Bencher Metric Format or github-action-benchmark
    /// input, or log it to an MLflow tracking server.
    ///
    /// With `--format mlflow`, each bench run becomes a parent run (its
    /// name, commit, branch, machine and toolchain as tags, the record as
    /// its artifact) and each case a child run (its parameters as params,
    /// its figures as metrics). Exporting a record again adds nothing.
    #[command(after_help = "Examples:
  nnbench export --format bmf target/nnbench/sweep/latest.json > results.json
  bencher run --adapter json --file results.json
  nnbench export --format github-smaller latest.json --out smaller.json
  nnbench export --format mlflow latest.json --tracking-uri http://127.0.0.1:5000 --experiment sweeps")]
    Export {
        /// The output format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// A record file, a folder of records, or a saved baseline's name.
        record: String,
        /// Write it to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// The MLflow tracking server (`--format mlflow`; other formats
        /// leave it aside).
        #[arg(long, value_name = "URI", env = "MLFLOW_TRACKING_URI")]
        tracking_uri: Option<String>,
        /// The MLflow experiment the runs go in, made where missing
        /// (default: the bench's name).
        #[arg(long, value_name = "NAME", env = "MLFLOW_EXPERIMENT_NAME")]
        experiment: Option<String>,
    },
    /// Merge the records of a sweep's shards (`cargo bench -- --shard K/N`)
    /// into one: refuses (exit 2) shards of different commits, case sets or
    /// plans, a shard or case given twice, and says which shards are
    /// missing. Each case keeps its shard, and each shard its machine.
    #[command(after_help = "Examples:
  nnbench merge shards/ -o run.json                 # every *.json under shards/
  nnbench merge shard-1.json shard-2.json shard-3.json -o run.json
  nnbench compare main run.json")]
    Merge {
        /// The shards' record files, or folders holding them.
        #[arg(required = true, value_name = "RECORD")]
        records: Vec<PathBuf>,
        /// Where to write the merged record (.json, or .ndjson).
        #[arg(short, long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Print a record as indented JSON, for people: a bench writes it
    /// compact, leaving out what it did not measure.
    #[command(after_help = "Examples:
  nnbench show target/nnbench/sweep/latest.json
  nnbench show main                                  # the baseline saved as `main`")]
    Show {
        /// A record file, or the name of a saved baseline.
        #[arg(value_name = "RECORD")]
        record: String,
    },
    /// Write one self-contained HTML page of the history (or of records):
    /// per family, trend charts of time, RSS, GPU and the value across
    /// commits with their steps marked, the latest run's parameter grid as
    /// a chart, and its table.
    #[command(after_help = "Examples:
  nnbench report -o report.html                      # the history, target/nnbench/history.sqlite
  nnbench report --branch main --title nightly -o nightly.html
  nnbench report runs/*.json -o report.html          # records, oldest first, without a history")]
    Report {
        /// Records to draw instead of the history: files, folders or
        /// baselines' names, in the order they ran.
        #[arg(value_name = "RECORD")]
        records: Vec<String>,
        /// The history to draw when no RECORD is given (default
        /// target/nnbench/history.sqlite).
        #[arg(long, value_name = "FILE", env = "NNBENCH_HISTORY")]
        history: Option<PathBuf>,
        /// Where to write the page. Flamegraphs in its folder, or below,
        /// are linked relative to it, so that the folder can move whole.
        #[arg(short, long, value_name = "FILE")]
        out: PathBuf,
        /// The page's title.
        #[arg(long, default_value = "nnbench report")]
        title: String,
        #[command(flatten)]
        filter: history_command::Filter,
        /// The corrected p-value under which a step stands.
        #[arg(long, value_name = "P", default_value_t = 0.001, value_parser = crate::probability)]
        significance: f64,
        /// How large a step must be to be marked, as `nnbench compare
        /// --fail-on` takes them.
        #[arg(long, value_name = "SPEC", value_parser = limits)]
        fail_on: Option<Limits>,
    },
    /// The disk tier of persisted memos: list its entries (type, memo, size,
    /// the memos each was built from, last use), prune it to a size, or
    /// clear it.
    #[command(
        name = "disk-tier",
        alias = "cache",
        after_help = "Examples:
  nnbench disk-tier                            # target/nnbench/memo-cache, most recently used first
  nnbench disk-tier prune --max 50GiB
  nnbench disk-tier --dir /scratch/memos clear
  nnbench disk-tier --format json"
    )]
    DiskTier(disk_tier_command::DiskTierCommand),
    /// This machine's roofs: peak f32 and f64 operations a second and
    /// memory bandwidth (STREAM's triad), on one core and on all, which
    /// place each case that declares its work (`flops`, `bytes`) under
    /// them. Measured once per machine, in a few seconds, by an optimized
    /// build, and kept in target/nnbench/machine/KEY.json, where its bench
    /// binaries take them from; KEY is the machine's key in `nnbench
    /// history`.
    #[command(after_help = "Examples:
  nnbench machine
  nnbench machine --measure-again --format json")]
    Machine(machine_command::MachineCommand),
    /// The history of runs, in an SQLite file: add runs, list them, follow
    /// a case across them.
    History {
        /// The history's file (default target/nnbench/history.sqlite).
        #[arg(long, value_name = "FILE", env = "NNBENCH_HISTORY", global = true)]
        history: Option<PathBuf>,
        #[command(subcommand)]
        command: history_command::HistoryCommand,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum CompareFormat {
    /// A table of what changed (coloured on a terminal).
    Table,
    /// GitHub-flavoured markdown, for a step summary or a pull request comment.
    Markdown,
    /// Every case and figure, as JSON.
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// Bencher Metric Format.
    Bmf,
    /// github-action-benchmark, customSmallerIsBetter: time, load, memory.
    GithubSmaller,
    /// github-action-benchmark, customBiggerIsBetter: metrics where higher is better.
    GithubBigger,
    /// MLflow: runs logged to the server at --tracking-uri.
    Mlflow,
}

/// `nnbench export --format mlflow`: the record logged, a line on what
/// landed where.
fn mlflow_export(
    record: &nnbench_core::RunRecord,
    out: Option<PathBuf>,
    tracking_uri: Option<String>,
    experiment: Option<String>,
) -> Result<ExitCode, String> {
    if out.is_some() {
        return Err(
            "--out: --format mlflow logs to the tracking server, and writes no file".into(),
        );
    }
    let tracking_uri = tracking_uri.ok_or(
        "--format mlflow needs the tracking server: --tracking-uri URI, or MLFLOW_TRACKING_URI",
    )?;
    let target = nnbench_cli::mlflow::Target {
        experiment: experiment.unwrap_or_else(|| record.run.clone()),
        tracking_uri,
    };
    let done = nnbench_cli::mlflow::export(record, &target).map_err(|e| e.to_string())?;
    println!(
        "{} case{} of `{}` in experiment `{}` (id {}) at {}: {} logged now, {} there already; run{} {}{}",
        done.cases,
        if done.cases == 1 { "" } else { "s" },
        record.run,
        target.experiment,
        done.experiment_id,
        target.tracking_uri,
        done.added,
        done.cases - done.added,
        if done.parents.len() == 1 { "" } else { "s" },
        done.parents.join(", "),
        if done.record_attached {
            ""
        } else {
            " (the server keeps no artifacts: the record is not attached)"
        },
    );
    Ok(ExitCode::SUCCESS)
}

/// A p-value limit: between 0 and 1, both left out.
pub(crate) fn probability(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 1.0 => Ok(p),
        _ => Err(format!(
            "{text}: write a probability between 0 and 1, such as 0.001"
        )),
    }
}

pub(crate) fn limits(spec: &str) -> Result<Limits, String> {
    Limits::default().with_spec(spec).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("cache") {
        eprintln!(
            "warning: `nnbench cache` is renamed `nnbench disk-tier`: the old name is taken until the next release"
        );
    }
    match run(Tool::parse()) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(tool: Tool) -> Result<ExitCode, String> {
    match tool.command {
        Command::BuildBase {
            revision,
            bench,
            package,
            features,
        } => {
            let request = build_base::Request {
                revision,
                bench,
                package,
                features,
            };
            let executable = build_base::run(&request).map_err(|e| e.to_string())?;
            println!("{}", executable.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare {
            base,
            head,
            paired,
            fail_on,
            significance,
            format,
            out,
        } => {
            let mut limits = fail_on.unwrap_or_default();
            limits.significance = significance;
            let comparison = match (paired, base, head) {
                (Some(paired), _, _) => {
                    let (record, _) = inputs::load(&paired).map_err(|e| e.to_string())?;
                    if record.paired.is_none() {
                        return Err(format!(
                            "{paired}: not the record of a paired run (cargo bench -- --paired BASE)"
                        ));
                    }
                    nnbench_core::compare::paired(&record, &limits)
                }
                (None, Some(base), Some(head)) => {
                    let (base_record, base_name) =
                        inputs::load(&base).map_err(|e| e.to_string())?;
                    let (head_record, head_name) =
                        inputs::load(&head).map_err(|e| e.to_string())?;
                    nnbench_core::compare::compare(&base_record, &head_record, &limits)
                        .with_sources(base_name, head_name)
                }
                _ => return Err("compare takes BASE and HEAD, or --paired RECORD".into()),
            };
            let format = match format {
                CompareFormat::Table if out.is_none() && std::io::stdout().is_terminal() => {
                    Format::ColorTable
                }
                CompareFormat::Table => Format::Table,
                CompareFormat::Markdown => Format::Markdown,
                CompareFormat::Json => Format::Json,
            };
            write(out.as_deref(), &comparison.render(format))?;
            Ok(if comparison.fails() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Export {
            format,
            record,
            out,
            tracking_uri,
            experiment,
        } => {
            let (record, _) = inputs::load(&record).map_err(|e| e.to_string())?;
            let json = match format {
                ExportFormat::Bmf => nnbench_cli::export::bmf(&record),
                ExportFormat::GithubSmaller => nnbench_cli::export::github(&record, true),
                ExportFormat::GithubBigger => nnbench_cli::export::github(&record, false),
                ExportFormat::Mlflow => {
                    return mlflow_export(&record, out, tracking_uri, experiment);
                }
            };
            let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())? + "\n";
            write(out.as_deref(), &text)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Bisect(bisect) => bisect::run(bisect),
        Command::DiskTier(tier) => disk_tier_command::run(tier),
        Command::Machine(machine) => machine_command::run(machine),
        Command::History { history, command } => history_command::run(history, command),
        Command::Show { record } => {
            let (record, _) = inputs::load(&record).map_err(|e| e.to_string())?;
            let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?;
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Merge { records, out } => {
            merge::run(&records, &out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Report {
            records,
            history,
            out,
            title,
            filter,
            significance,
            fail_on,
        } => {
            let search = nnbench_cli::history::StepSearch {
                filter: filter.runs(),
                case: None,
                significance,
                limits: fail_on.unwrap_or_default(),
            };
            let history = if records.is_empty() {
                history_command::open_existing(
                    &history.unwrap_or_else(nnbench_cli::history::History::default_path),
                )?
            } else {
                let mut memory =
                    nnbench_cli::history::History::in_memory().map_err(|e| e.to_string())?;
                for name in &records {
                    let (record, _) = inputs::load(name).map_err(|e| e.to_string())?;
                    memory.add(&record, None).map_err(|e| e.to_string())?;
                }
                memory
            };
            let folder = std::path::absolute(&out)
                .ok()
                .and_then(|page| page.parent().map(std::path::Path::to_owned));
            let page = nnbench_cli::report::page(&history, &search, &title, folder.as_deref())
                .map_err(|e| e.to_string())?;
            write(Some(&out), &page)?;
            eprintln!("wrote {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
    }
}

pub(crate) fn write(out: Option<&std::path::Path>, text: &str) -> Result<(), String> {
    match out {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            // A closed pipe (`| head`) is not an error of the comparison.
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            Ok(())
        }
    }
}
