//! The command line of bench binaries made by `nnbench::main!()`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use crate::Runner;
use crate::runner::select::Selection as CaseSelection;

/// Flags of a bench binary: `cargo bench [--bench NAME] -- [FLAGS]`.
#[derive(Debug, Parser)]
#[command(
    name = "nnbench",
    about = "Runs the benchmarks registered with #[benchmark], #[parametrize] and #[product]",
    disable_version_flag = true
)]
pub(crate) struct Cli {
    /// Run only cases whose id contains any of these.
    #[arg(value_name = "FILTER")]
    filters: Vec<String>,
    /// Match filters and --skip against whole ids.
    #[arg(long)]
    exact: bool,
    /// Leave out cases whose id contains this (repeatable).
    #[arg(long, value_name = "PATTERN")]
    skip: Vec<String>,
    /// Run only cases with any of these tags (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// List the selected cases and exit.
    #[arg(long)]
    list: bool,
    /// Keep memos in the cache after their last use.
    #[arg(long)]
    keep_memos: bool,
    /// Print, at the end, what the memo cache holds and did, per memo type
    /// (also NNBENCH_PRINT_CACHE_SIZE=1).
    #[arg(long)]
    print_cache: bool,
    /// Also write the record to FILE (.json, or .ndjson for one case per line).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print no progress lines and no table.
    #[arg(short, long)]
    quiet: bool,
    /// Passed by `cargo bench`; accepted and ignored.
    #[arg(long, hide = true)]
    bench: bool,
}

impl Cli {
    pub(crate) fn try_parse_args(
        args: impl IntoIterator<Item = OsString>,
    ) -> Result<Self, clap::Error> {
        Self::try_parse_from(args)
    }

    pub(crate) fn runner(&self) -> Runner {
        let runner = Runner::new()
            .set_selection(CaseSelection {
                filters: self.filters.clone(),
                skip: self.skip.clone(),
                tags: self.tags.clone(),
                exact: self.exact,
            })
            .keep_memos(self.keep_memos)
            .print_cache(self.print_cache || env_flag("NNBENCH_PRINT_CACHE_SIZE"))
            .quiet(self.quiet);
        match &self.out {
            Some(out) => runner.out(out),
            None => runner,
        }
    }
}

/// Parses the command line, runs, writes `latest.json`, exits: 0 when every
/// case passed, 1 when any failed or the record could not be written, 2 for
/// bad flags.
pub(crate) fn main(bench: &str, manifest_dir: &str) -> ! {
    let cli = Cli::try_parse().unwrap_or_else(|e| e.exit());
    let runner = cli.runner();
    if cli.list {
        for id in runner.list() {
            println!("{id}: bench");
        }
        std::process::exit(0);
    }
    let latest = crate::target_dir().join("nnbench").join(bench);
    let outcome = runner
        .name(bench)
        .repo_dir(manifest_dir)
        .latest_dir(latest)
        .run();
    match outcome {
        Ok(record) if record.failed() > 0 => {
            eprintln!(
                "error: {} of {} cases failed",
                record.failed(),
                record.cases.len()
            );
            std::process::exit(1)
        }
        Ok(_) => std::process::exit(0),
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::exit(1)
        }
    }
}

/// Whether the environment variable is set to something other than `0` or empty.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}
