//! Judging one commit of a bisection: its bench built (once, kept under
//! `target/nnbench/base/`), then run paired against GOOD's build on the
//! selected cases, and its record judged as `nnbench compare --paired`
//! judges one. Every build runs from the same target folder, so the
//! fixtures its cases persist are computed once, for all of them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use nnbench_core::RunRecord;
use nnbench_core::compare::Limits;
use nnbench_core::record::Verdict as CaseVerdict;
use serde::Serialize;

use super::search::Verdict;
use crate::build_base::{Bases, BuildError, Request, short};

/// How a selected case moved at a commit, against GOOD.
#[derive(Clone, Debug, Serialize)]
pub struct Shift {
    /// The case's id.
    pub case: String,
    /// `regressed`, `improved`, `unchanged`...
    pub verdict: String,
    /// Head over base, the paired estimate (time); `None` where the
    /// case was not paired (it failed, or GOOD lacks it).
    pub estimate: Option<f64>,
    /// Its 99% interval.
    pub interval: Option<[f64; 2]>,
    /// The clock the rounds were judged on.
    pub clock: Option<String>,
    /// How many rounds measured both builds.
    pub rounds: Option<u32>,
}

/// What a judged commit's cases did.
#[derive(Clone, Debug, Serialize)]
pub struct Judged {
    /// The cases that regressed.
    pub regressed: Vec<String>,
    /// Every selected case.
    pub cases: Vec<Shift>,
}

/// Builds and runs commits against GOOD's build.
pub struct Judge<'a> {
    pub bases: &'a Bases,
    pub request: Request,
    pub good: PathBuf,
    pub filter: Option<String>,
    pub fail_on: Option<String>,
    pub limits: Limits,
    pub max_rounds: Option<u32>,
    /// Where the paired runs write their records.
    pub records: &'a Path,
    /// The commits whose executable was built or found built.
    pub built: BTreeSet<String>,
}

impl Judge<'_> {
    /// Judges `commit`: skipped where it does not build or its paired run
    /// ends without a record.
    pub fn judge(&mut self, commit: &str) -> Verdict<Judged> {
        let request = Request {
            revision: short(commit).to_owned(),
            ..self.request.clone()
        };
        let exe = match self.bases.build(&request, commit) {
            Ok(exe) => exe,
            Err(error @ (BuildError::BuildFailed { .. } | BuildError::NoSuchBench { .. })) => {
                return Verdict::Skipped(error.to_string());
            }
            Err(other) => return Verdict::Skipped(other.to_string()),
        };
        self.built.insert(commit.to_owned());
        match self.paired(&exe, commit) {
            Ok(judged) if judged.regressed.is_empty() => Verdict::Good(judged),
            Ok(judged) => Verdict::Regressed(judged),
            Err(why) => Verdict::Skipped(why),
        }
    }

    /// Runs `exe` paired against GOOD's build; its cases judged.
    fn paired(&self, exe: &Path, commit: &str) -> Result<Judged, String> {
        let mut command = Command::new(exe);
        command.arg("--bench").arg("--paired").arg(&self.good);
        if let Some(filter) = &self.filter {
            command.arg(filter);
        }
        let record = self.run(&mut command, exe, commit)?;
        if !record.cases.iter().any(|case| case.paired.is_some()) {
            return Err(
                "no selected case was compared with GOOD's build (each was new, or failed)".into(),
            );
        }
        Ok(judged(&record, &self.limits))
    }

    /// The differential flamegraphs of the cases `cases`, at `bad`, against
    /// the commit right before, `good`, from a paired run of their builds
    /// with `--profile`: the paths drawn, or why there are none.
    pub fn profiles(&self, good: &str, bad: &str, cases: &[String]) -> Result<Vec<String>, String> {
        let build = |commit: &str| {
            let request = Request {
                revision: short(commit).to_owned(),
                ..self.request.clone()
            };
            self.bases
                .build(&request, commit)
                .map_err(|e| e.to_string())
        };
        let (before, exe) = (build(good)?, build(bad)?);
        let mut command = Command::new(&exe);
        command
            .arg("--bench")
            .arg("--paired")
            .arg(&before)
            .args(["--profile", "--exact"])
            .args(cases);
        let record = self.run(&mut command, &exe, &format!("{}-profiled", short(bad)))?;
        let drawn: Vec<String> = record
            .cases
            .iter()
            .filter_map(|c| c.profile.as_ref())
            .map(|p| p.display().to_string())
            .collect();
        if drawn.is_empty() {
            let said: Vec<&str> = record
                .cases
                .iter()
                .flat_map(|c| &c.warnings)
                .filter(|w| w.contains("flamegraph"))
                .map(String::as_str)
                .collect();
            return Err(if said.is_empty() {
                "no case regressed in the run that profiles them".to_owned()
            } else {
                said.join("; ")
            });
        }
        Ok(drawn)
    }

    /// Runs `command` (a paired run of `exe`) quietly with the bisection's
    /// limits, recording to a file named after `name`; its record.
    fn run(&self, command: &mut Command, exe: &Path, name: &str) -> Result<RunRecord, String> {
        let out = self.records.join(format!("{name}.json"));
        let _ = std::fs::remove_file(&out);
        command.args(["--quiet", "--out"]).arg(&out);
        // Read by the bench binary: its latest record, progress and
        // profiles go to bisect's folder, not over the user's.
        command.env(
            "NNBENCH_LATEST_DIR",
            self.bases.bisect_dir(&self.request.bench),
        );
        if let Some(spec) = &self.fail_on {
            command.args(["--fail-on", spec]);
        }
        if let Some(rounds) = self.max_rounds {
            command.args(["--max-rounds", &rounds.to_string()]);
        }
        let output = command
            .output()
            .map_err(|e| format!("{} did not start: {e}", exe.display()))?;
        let record = RunRecord::read(&out).map_err(|e| {
            let said = String::from_utf8_lossy(&output.stderr);
            let last: Vec<&str> = said.lines().rev().take(3).collect();
            format!(
                "its paired run ended ({}) without a record ({e}){}",
                output.status,
                if last.is_empty() {
                    String::new()
                } else {
                    format!(
                        ": {}",
                        last.into_iter().rev().collect::<Vec<_>>().join(" / ")
                    )
                }
            )
        })?;
        Ok(record)
    }
}

/// The cases of a paired run's `record`, judged under `limits`.
pub fn judged(record: &RunRecord, limits: &Limits) -> Judged {
    let comparison = nnbench_core::compare::paired(record, limits);
    let mut regressed: Vec<String> = comparison
        .cases
        .iter()
        .filter(|c| c.regressed())
        .map(|c| c.id.clone())
        .collect();
    // A family whose growth regressed, apart from its cases at each size.
    let grew: Vec<Shift> = comparison
        .scaling
        .iter()
        .filter(|s| s.regressed())
        .map(|s| Shift {
            case: format!("scaling of {} ({})", s.label(), s.figure),
            verdict: "regressed".to_owned(),
            estimate: None,
            interval: None,
            clock: None,
            rounds: None,
        })
        .collect();
    regressed.extend(grew.iter().map(|s| s.case.clone()));
    let cases = comparison
        .cases
        .iter()
        .map(|c| {
            let paired = record.case(&c.id).and_then(|r| r.paired.as_ref());
            Shift {
                case: c.id.clone(),
                verdict: verdict_name(c.verdict).to_owned(),
                estimate: paired.map(|p| p.estimate).filter(|e| e.is_finite()),
                interval: paired.map(|p| p.interval),
                clock: paired.map(|p| format!("{:?}", p.clock).to_lowercase()),
                rounds: paired.map(|p| p.rounds),
            }
        })
        .chain(grew)
        .collect();
    Judged { regressed, cases }
}

fn verdict_name(verdict: CaseVerdict) -> &'static str {
    match verdict {
        CaseVerdict::Regressed => "regressed",
        CaseVerdict::Improved => "improved",
        CaseVerdict::Unchanged => "unchanged",
        _ => "not comparable",
    }
}
