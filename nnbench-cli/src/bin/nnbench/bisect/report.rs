//! What a bisection found, for a person (text), for CI (markdown) and for
//! programs (JSON).

use std::time::{Duration, Instant};

use serde::Serialize;

use super::judge::{Judged, Shift};
use super::search::{Found, Verdict};
use crate::build_base::short;

/// A commit of the range.
pub struct Commit {
    pub hash: String,
    pub subject: String,
}

/// One commit judged.
#[derive(Serialize)]
pub struct Step {
    pub commit: String,
    pub subject: String,
    /// `good`, `regressed` or `skipped`.
    pub verdict: &'static str,
    /// Whether it was judged again, to confirm the boundary.
    pub confirmation: bool,
    /// The cases that regressed.
    pub cases: Vec<String>,
    /// How every selected case moved.
    pub shifts: Vec<Shift>,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub seconds: f64,
}

impl Step {
    pub fn new(
        commit: &Commit,
        confirmation: bool,
        verdict: &Verdict<Judged>,
        started: Instant,
    ) -> Self {
        let (name, judged, why) = match verdict {
            Verdict::Good(judged) => ("good", Some(judged), None),
            Verdict::Regressed(judged) => ("regressed", Some(judged), None),
            Verdict::Skipped(why) => ("skipped", None, Some(why.clone())),
        };
        Step {
            commit: commit.hash.clone(),
            subject: commit.subject.clone(),
            verdict: name,
            confirmation,
            cases: judged.map(|j| j.regressed.clone()).unwrap_or_default(),
            shifts: judged.map(|j| j.cases.clone()).unwrap_or_default(),
            why,
            seconds: started.elapsed().as_secs_f64(),
        }
    }

    /// `[3] 1a2b3c4d5e6f regressed  subject: case +5.1% [+4.2%, +6.0%] (14 s)`.
    pub fn line(&self, number: usize) -> String {
        let detail = match (self.verdict, &self.why) {
            (_, Some(why)) => format!(": {why}"),
            ("regressed", None) => format!(
                ": {}",
                self.shifts
                    .iter()
                    .filter(|s| self.cases.contains(&s.case))
                    .map(shift)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => String::new(),
        };
        format!(
            "[{number}] {} {:<9}{} {}{detail} ({})",
            short(&self.commit),
            self.verdict,
            if self.confirmation { " (again)" } else { "" },
            self.subject,
            seconds(self.seconds)
        )
    }
}

/// `case +5.1% [+4.2%, +6.0%]`, or the case and its verdict where it was
/// not paired.
fn shift(s: &Shift) -> String {
    match (s.estimate, s.interval) {
        (Some(estimate), Some([lo, hi])) if hi.is_finite() => format!(
            "{} {} [{}, {}]",
            s.case,
            percent(estimate),
            percent(lo),
            percent(hi)
        ),
        (Some(estimate), _) => format!("{} {}", s.case, percent(estimate)),
        _ => format!("{} {}", s.case, s.verdict),
    }
}

fn percent(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

fn seconds(s: f64) -> String {
    humantime::format_duration(Duration::from_secs(s.round() as u64)).to_string()
}

/// The commit found.
#[derive(Serialize)]
pub struct FirstRegressed {
    pub commit: String,
    pub subject: String,
    /// The cases that regressed there.
    pub cases: Vec<String>,
    /// How they moved at its last judgement: the paired estimate and its
    /// 99% interval.
    pub shifts: Vec<Shift>,
    /// Whether a second paired run said so too.
    pub confirmed: bool,
    /// Commits right before it that were skipped: the regression may be
    /// in one of them.
    pub or_skipped: Vec<String>,
    /// Differential flamegraphs of its regressed cases against the commit
    /// before it (the frames that grew in red).
    pub profiles: Vec<String>,
    /// Why there are none, where there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_profiles: Option<String>,
}

/// What a bisection found.
#[derive(Serialize)]
pub struct Report {
    pub bench: String,
    pub good: String,
    pub bad: String,
    pub first_regressed: Option<FirstRegressed>,
    /// The last commit found good before the first regressed one.
    pub last_good: Option<String>,
    /// Commits whose bench was built (or found built before).
    pub builds: usize,
    /// Commits that could not be judged, in the order tried.
    pub skipped: Vec<String>,
    pub steps: Vec<Step>,
    pub seconds: f64,
}

impl Report {
    pub fn new(
        bench: &str,
        (good, bad): (&Commit, &Commit),
        commits: &[Commit],
        found: &Found<Judged>,
        builds: usize,
        steps: Vec<Step>,
        took: Duration,
    ) -> Self {
        let mut skipped: Vec<String> = Vec::new();
        for step in steps.iter().filter(|s| s.verdict == "skipped") {
            if !skipped.contains(&step.commit) {
                skipped.push(step.commit.clone());
            }
        }
        let first_regressed = found.first_regressed.as_ref().map(|(at, judged)| {
            let hash = &commits[*at].hash;
            FirstRegressed {
                commit: hash.clone(),
                subject: commits[*at].subject.clone(),
                cases: judged.regressed.clone(),
                shifts: judged
                    .cases
                    .iter()
                    .filter(|s| judged.regressed.contains(&s.case))
                    .cloned()
                    .collect(),
                confirmed: steps
                    .iter()
                    .any(|s| s.confirmation && &s.commit == hash && s.verdict == "regressed"),
                or_skipped: found
                    .skipped_between
                    .iter()
                    .map(|&at| commits[at].hash.clone())
                    .collect(),
                profiles: Vec::new(),
                no_profiles: None,
            }
        });
        Report {
            bench: bench.to_owned(),
            good: good.hash.clone(),
            bad: bad.hash.clone(),
            last_good: first_regressed
                .as_ref()
                .map(|_| commits[found.last_good].hash.clone()),
            first_regressed,
            builds,
            skipped,
            steps,
            seconds: took.as_secs_f64(),
        }
    }

    /// Adds the boundary's flamegraphs, or why there are none.
    pub fn profiles(&mut self, drawn: Option<Result<Vec<String>, String>>) {
        if let (Some(found), Some(drawn)) = (self.first_regressed.as_mut(), drawn) {
            match drawn {
                Ok(paths) => found.profiles = paths,
                Err(why) => found.no_profiles = Some(why),
            }
        }
    }

    /// The end of what `text` prints: the commit found, or that none was.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        match &self.first_regressed {
            Some(found) => {
                out.push_str(&format!(
                    "first regressed: {} {}{}\n",
                    short(&found.commit),
                    found.subject,
                    if found.confirmed {
                        ""
                    } else {
                        " (not confirmed by a second run)"
                    }
                ));
                for s in &found.shifts {
                    out.push_str(&format!(
                        "  {}{}\n",
                        shift(s),
                        s.rounds
                            .map(|r| format!(
                                " ({} time, {r} rounds)",
                                s.clock.as_deref().unwrap_or("wall")
                            ))
                            .unwrap_or_default()
                    ));
                }
                for path in &found.profiles {
                    out.push_str(&format!("  differential flamegraph: {path}\n"));
                }
                if let Some(why) = &found.no_profiles {
                    out.push_str(&format!("  no differential flamegraph: {why}\n"));
                }
                if !found.or_skipped.is_empty() {
                    let named: Vec<&str> = found.or_skipped.iter().map(|c| short(c)).collect();
                    out.push_str(&format!(
                        "  or one of the commits before it that were skipped: {}\n",
                        named.join(", ")
                    ));
                }
            }
            None => out.push_str(&format!(
                "no regression: no selected case of {} regressed against {}\n",
                short(&self.bad),
                short(&self.good)
            )),
        }
        let skipped: Vec<String> = self
            .skipped
            .iter()
            .map(|c| {
                let why = self
                    .steps
                    .iter()
                    .find_map(|s| (&s.commit == c).then_some(s.why.as_deref()).flatten())
                    .unwrap_or_default();
                format!("{} ({why})", short(c))
            })
            .collect();
        out.push_str(&format!(
            "built {} {}, skipped {}{}, in {}\n",
            self.builds,
            if self.builds == 1 {
                "commit"
            } else {
                "commits"
            },
            self.skipped.len(),
            if skipped.is_empty() {
                String::new()
            } else {
                format!(": {}", skipped.join(", "))
            },
            seconds(self.seconds)
        ));
        out
    }

    /// Every step, then the summary.
    pub fn text(&self) -> String {
        let lines: Vec<String> = self
            .steps
            .iter()
            .enumerate()
            .map(|(at, s)| s.line(at + 1))
            .collect();
        format!("{}\n{}", lines.join("\n"), self.summary())
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    pub fn markdown(&self) -> String {
        let mut out = format!("### nnbench bisect: `{}`\n\n", self.bench);
        match &self.first_regressed {
            Some(found) => {
                out.push_str(&format!(
                    "**First regressed commit:** `{}` {}{}\n\n| case | change | 99% interval |\n|---|---|---|\n",
                    short(&found.commit),
                    found.subject,
                    if found.confirmed { "" } else { " (not confirmed)" }
                ));
                for s in &found.shifts {
                    let interval = match s.interval {
                        Some([lo, hi]) if hi.is_finite() => {
                            format!("{} to {}", percent(lo), percent(hi))
                        }
                        _ => "-".to_owned(),
                    };
                    out.push_str(&format!(
                        "| `{}` | {} | {interval} |\n",
                        s.case,
                        s.estimate.map_or_else(|| s.verdict.clone(), percent)
                    ));
                }
                for path in &found.profiles {
                    out.push_str(&format!(
                        "\n[Differential flamegraph]({})\n",
                        path.replace(' ', "%20")
                    ));
                }
                if !found.or_skipped.is_empty() {
                    let named: Vec<String> = found
                        .or_skipped
                        .iter()
                        .map(|c| format!("`{}`", short(c)))
                        .collect();
                    out.push_str(&format!(
                        "\nOr one of the skipped commits before it: {}.\n",
                        named.join(", ")
                    ));
                }
            }
            None => out.push_str(&format!(
                "No selected case regressed at `{}` against `{}`.\n",
                short(&self.bad),
                short(&self.good)
            )),
        }
        out.push_str(&format!(
            "\n<details><summary>{} steps, {} builds, {} skipped, {}</summary>\n\n| # | commit | verdict | subject |\n|---|---|---|---|\n",
            self.steps.len(),
            self.builds,
            self.skipped.len(),
            seconds(self.seconds)
        ));
        for (at, s) in self.steps.iter().enumerate() {
            out.push_str(&format!(
                "| {} | `{}` | {}{} | {} |\n",
                at + 1,
                short(&s.commit),
                s.verdict,
                if s.confirmation { " (again)" } else { "" },
                s.subject.replace('|', "\\|")
            ));
        }
        out.push_str("\n</details>\n");
        out
    }
}
