//! `--baseline NAME` in a bench binary: the run judged against the record
//! saved with `--save-baseline NAME`, as `asv continuous` judges; and a
//! paired run judged against the base build it was paired with.

use std::path::Path;

use crate::compare::{CaseComparison, Comparison, Format, Verdict, compare, compare_case};
use crate::record::Figure;
use crate::settings::{Output, Selection, Settings};
use crate::{Result, RunRecord, Runner};

/// The baseline `--baseline NAME` names, when measuring.
pub(in crate::runner) fn load(
    settings: &Settings,
) -> std::result::Result<Option<(String, RunRecord)>, String> {
    let (Some(name), Some(dir)) = (&settings.baselines.compare, &settings.output.latest_dir) else {
        return Ok(None);
    };
    let path = crate::paths::baseline_path(dir, name);
    if !Path::new(&path).is_file() {
        return Err(format!(
            "{}: no baseline `{name}` for this bench; save one with --save-baseline {name}",
            path.display()
        ));
    }
    RunRecord::read(&path)
        .map(|record| Some((name.clone(), record)))
        .map_err(|e| e.to_string())
}

/// Compares `record` with `base`; prints what changed unless quiet.
///
/// A case whose time regressed is measured again, a moment apart, and
/// counts as slower only if two of three measurements say so: on a shared
/// runner a neighbour, or a change of clock speed, now and then moves every
/// call of a run for seconds. The measurement that agrees with the verdict
/// replaces the first in the record, which is written again where the run
/// wrote it.
pub(in crate::runner) fn judge(
    settings: &Settings,
    name: &str,
    base: &RunRecord,
    record: &mut RunRecord,
) -> Result<Comparison> {
    let thresholds = settings.baselines.fail_on.clone().unwrap_or_default();
    let first = compare(base, record, &thresholds);
    let suspects = slower_cases(&first);
    // Per suspect: measurements saying slower, and saying not.
    let mut votes: Vec<(String, usize, usize)> =
        suspects.iter().map(|id| (id.clone(), 1, 0)).collect();
    for _ in 0..2 {
        let pending: Vec<String> = votes
            .iter()
            .filter(|(_, yes, no)| *yes < 2 && *no < 2)
            .map(|(id, ..)| id.clone())
            .collect();
        if pending.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
        let again = Runner::with_settings(Settings {
            selection: Selection::exactly(pending),
            output: Output {
                out: None,
                latest_dir: None,
                quiet: true,
                ..settings.output.clone()
            },
            ..settings.clone()
        })
        .run()?;
        for case in again.cases {
            let Some(slot) = record.cases.iter_mut().find(|c| c.id == case.id) else {
                continue;
            };
            let Some(vote) = votes.iter_mut().find(|(id, ..)| *id == case.id) else {
                continue;
            };
            let slower = base
                .cases
                .iter()
                .find(|c| c.id == case.id)
                .is_some_and(|old| time_regressed(&compare_case(old, &case, &thresholds)));
            if slower {
                vote.1 += 1;
            } else {
                vote.2 += 1;
            }
            // Keep the measurement that settles the verdict.
            if vote.1 == 2 || vote.2 == 2 {
                let warnings = std::mem::take(&mut slot.warnings);
                *slot = case;
                slot.warnings.splice(0..0, warnings);
            }
        }
    }
    for (id, yes, no) in &votes {
        if let Some(case) = record.cases.iter_mut().find(|c| c.id == *id) {
            case.warnings.push(format!(
                "time measured {} times: {yes} slower than baseline {name}, {no} not",
                yes + no
            ));
        }
    }
    if !votes.is_empty() {
        if let Some(dir) = &settings.output.latest_dir {
            record.write(dir.join("latest.json"))?;
        }
        if let Some(out) = &settings.output.out {
            record.write(out)?;
        }
    }
    let comparison =
        compare(base, record, &thresholds).with_sources(format!("baseline {name}"), "this run");
    if !settings.output.quiet {
        if !suspects.is_empty() {
            println!(
                "\n{} case(s) slower than baseline {name}, measured again to confirm: {}",
                suspects.len(),
                suspects.join(", ")
            );
        }
        print!("\n{}", comparison.render(Format::Table));
    }
    Ok(comparison)
}

/// A paired run (`--paired BASE`) judged against the base build's figures
/// it keeps; prints what changed unless quiet.
pub(in crate::runner) fn judge_paired(settings: &Settings, record: &RunRecord) -> Comparison {
    let thresholds = settings.baselines.fail_on.clone().unwrap_or_default();
    let comparison = crate::compare::paired(record, &thresholds);
    if !settings.output.quiet {
        print!(
            "\n{}{}",
            crate::compare::rounds_table(record),
            comparison.render(Format::Table)
        );
    }
    comparison
}

/// Cases whose time regressed.
fn slower_cases(comparison: &Comparison) -> Vec<String> {
    comparison
        .cases
        .iter()
        .filter(|c| time_regressed(c))
        .map(|c| c.id.clone())
        .collect()
}

fn time_regressed(case: &CaseComparison) -> bool {
    case.figures
        .iter()
        .any(|f| f.figure == Figure::Time && f.verdict == Verdict::Regressed && f.gated)
}
