//! `nnbench bisect GOOD BAD --bench NAME`: the first commit between GOOD
//! and BAD at which a selected case regressed, each commit tried judged by
//! a paired run of its build against GOOD's, which holds on a shared
//! machine where unpaired runs would not.

mod judge;
mod report;
mod search;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, ValueEnum};
use nnbench_core::compare::Limits;

use crate::build_base::{Bases, BuildError, Request, short};
use judge::Judge;
use report::{Commit, Report, Step};
use search::Purpose;

/// What to bisect, as the command line says.
#[derive(Args)]
pub struct Bisect {
    /// A revision where no selected case regressed.
    #[arg(value_name = "GOOD")]
    good: String,
    /// A later revision, GOOD one of its ancestors, where one did.
    #[arg(value_name = "BAD")]
    bad: String,
    /// The bench target whose cases are judged.
    #[arg(long, value_name = "NAME")]
    bench: String,
    /// Only the cases whose id contains FILTER (as the bench's own filter).
    #[arg(long, value_name = "FILTER")]
    case: Option<String>,
    /// Limits of a regression, as `nnbench compare` takes them (its
    /// defaults, but time=3%: time is judged by the paired rounds).
    #[arg(long, value_name = "SPEC")]
    fail_on: Option<String>,
    /// Rounds of a paired run at most (the bench's default otherwise).
    #[arg(long, value_name = "N")]
    max_rounds: Option<u32>,
    /// The package of the bench, where it is not the current folder's.
    #[arg(short, long, value_name = "SPEC")]
    package: Option<String>,
    /// Features to build it with, as cargo takes them.
    #[arg(short = 'F', long, value_name = "FEATURES")]
    features: Option<String>,
    /// How to write what it found.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write it to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Lines for a person, as each commit is judged and at the end.
    Text,
    /// Every step as JSON.
    Json,
    /// GitHub-flavoured markdown, for a step summary.
    Markdown,
}

/// Bisects as `bisect` says: exit 0 when it ran (a commit found or not),
/// 1 when GOOD does not build; bad input is an error (exit 2), and so are
/// a `--case` that selects no case and a BAD that could not be judged,
/// which would otherwise read as "no regression".
pub fn run(bisect: Bisect) -> Result<ExitCode, String> {
    let started = Instant::now();
    let limits = match &bisect.fail_on {
        Some(spec) => crate::limits(spec).map_err(|e| format!("--fail-on {spec}: {e}"))?,
        None => Limits::default(),
    };
    let bases = Bases::here().map_err(|e| e.to_string())?;
    let good = bases.commit(&bisect.good).map_err(|e| e.to_string())?;
    let bad = bases.commit(&bisect.bad).map_err(|e| e.to_string())?;
    if good == bad {
        return Err(format!(
            "GOOD and BAD are both {}: nothing lies between",
            short(&good)
        ));
    }
    if bases
        .git(&["merge-base", "--is-ancestor", &good, &bad])
        .is_err()
    {
        return Err(format!(
            "GOOD {} ({}) is not an ancestor of BAD {} ({}): bisect needs a BAD that descends from GOOD",
            bisect.good,
            short(&good),
            bisect.bad,
            short(&bad)
        ));
    }
    // As git bisect: the commits BAD reaches and GOOD does not, on every
    // side of a merge, each listed after its parents.
    let between = bases
        .git(&[
            "rev-list",
            "--reverse",
            "--topo-order",
            "--parents",
            &format!("{good}..{bad}"),
        ])
        .map_err(|e| e.to_string())?;
    let (commits, parents) = history(&bases, &good, &between);
    let request = Request {
        revision: bisect.good.clone(),
        bench: bisect.bench.clone(),
        package: bisect.package.clone(),
        features: bisect.features.clone(),
    };
    let text = matches!(bisect.format, Format::Text) && bisect.out.is_none();
    if text {
        println!(
            "bisect: bench `{}`, {} commits after {} up to {}",
            bisect.bench,
            commits.len() - 1,
            short(&good),
            short(&bad)
        );
    }
    let good_exe = match bases.build(&request, &good) {
        Ok(exe) => exe,
        Err(error @ BuildError::BuildFailed { .. }) => {
            eprintln!("error: GOOD does not build: {error}");
            return Ok(ExitCode::from(1));
        }
        Err(error) => return Err(format!("GOOD {}: {error}", bisect.good)),
    };
    selected_cases(&good_exe, &bisect)?;
    let records = tempfile::tempdir().map_err(|e| format!("a folder for the records: {e}"))?;
    let mut judge = Judge {
        bases: &bases,
        request,
        good: good_exe,
        filter: bisect.case.clone(),
        fail_on: bisect.fail_on.clone(),
        limits,
        max_rounds: bisect.max_rounds,
        records: records.path(),
        built: std::iter::once(good.clone()).collect(),
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut bad_unjudged = None;
    let found = search::bisect(&search::History::new(&parents), &mut |at, purpose| {
        let step_started = Instant::now();
        let verdict = judge.judge(&commits[at].hash);
        if let (true, search::Verdict::Skipped(why)) = (at == commits.len() - 1, &verdict) {
            bad_unjudged = Some(why.clone());
        }
        let step = Step::new(
            &commits[at],
            purpose == Purpose::Confirm,
            &verdict,
            step_started,
        );
        if text {
            println!("{}", step.line(steps.len() + 1));
        }
        steps.push(step);
        verdict
    });
    if let (None, Some(why)) = (&found.first_regressed, bad_unjudged) {
        return Err(format!(
            "BAD {} ({}) could not be judged, so no boundary can be told: {why}",
            bisect.bad,
            short(&bad)
        ));
    }
    // The boundary's differential flamegraphs: where the regressed cases
    // spend more of their time at the first regressed commit than at the
    // commit before it.
    let profiles = found.first_regressed.as_ref().map(|(at, judged)| {
        if text {
            println!("drawing the differential flamegraphs of the boundary");
        }
        judge.profiles(
            &commits[found.last_good].hash,
            &commits[*at].hash,
            &judged.regressed,
        )
    });
    let mut report = Report::new(
        &bisect.bench,
        (&commits[0], commits.last().unwrap_or(&commits[0])),
        &commits,
        &found,
        judge.built.len(),
        steps,
        started.elapsed(),
    );
    report.profiles(profiles);
    let rendered = match bisect.format {
        Format::Text if text => report.summary(),
        Format::Text => report.text(),
        Format::Json => report.json(),
        Format::Markdown => report.markdown(),
    };
    crate::write(bisect.out.as_deref(), &rendered)?;
    Ok(ExitCode::SUCCESS)
}

/// The cases `bisect` selects, as GOOD's build lists them: an error when
/// there are none, which no commit could regress.
fn selected_cases(good: &std::path::Path, bisect: &Bisect) -> Result<usize, String> {
    let listed = std::process::Command::new(good)
        .arg("--list")
        .args(&bisect.case)
        .output()
        .map_err(|e| format!("GOOD's build {} did not start: {e}", good.display()))?;
    let cases = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|line| line.ends_with(": benchmark"))
        .count();
    if cases == 0 {
        return Err(match &bisect.case {
            Some(filter) => format!(
                "--case {filter}: no case of bench `{}` at GOOD ({}) matches it",
                bisect.bench, bisect.good
            ),
            None => format!(
                "bench `{}` has no case at GOOD ({})",
                bisect.bench, bisect.good
            ),
        });
    }
    Ok(cases)
}

/// GOOD and the commits `listed` (by `rev-list --parents`, parents
/// first), with each one's parents among them: a parent not listed is
/// one GOOD reaches, so GOOD's (0).
fn history(bases: &Bases, good: &str, listed: &str) -> (Vec<Commit>, Vec<Vec<usize>>) {
    let mut commits = vec![commit(bases, good)];
    let mut parents = vec![Vec::new()];
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in listed.lines() {
        let mut hashes = line.split_whitespace();
        let Some(hash) = hashes.next() else { continue };
        let mut own: Vec<usize> = hashes
            .map(|parent| index.get(parent).copied().unwrap_or(0))
            .collect();
        own.dedup();
        index.insert(hash, commits.len());
        commits.push(commit(bases, hash));
        parents.push(own);
    }
    (commits, parents)
}

/// `hash` with its subject.
fn commit(bases: &Bases, hash: &str) -> Commit {
    Commit {
        hash: hash.to_owned(),
        subject: bases
            .git(&["log", "-1", "--format=%s", hash])
            .unwrap_or_default(),
    }
}
