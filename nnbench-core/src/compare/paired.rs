//! The comparison a paired run (`--paired BASE`) makes of itself: each
//! case's head figures against the base build's, time by the rounds'
//! verdict, memory and the value as [`compare`](super::compare) judges them.

use super::{CaseComparison, Comparison, Limit, Limits, Presence, Side};
use crate::record::{Clock, RunRecord, TimeRecord, Verdict};

/// A paired run's record judged: its cases against the base build's
/// figures it keeps, under `limits` (time by the rounds' verdicts).
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let comparison = nnbench_core::compare::paired(record, &Default::default());
/// print!("{}", comparison.render(nnbench_core::compare::Format::Markdown));
/// # }
/// ```
pub fn paired(record: &RunRecord, limits: &Limits) -> Comparison {
    let mut cases = Vec::new();
    let mut new = Vec::new();
    for case in &record.cases {
        match (&case.paired, &case.error) {
            (Some(p), _) => cases.push(super::figures::case(&p.base, case, limits)),
            (None, Some(error)) => cases.push(CaseComparison {
                id: case.id.clone(),
                presence: Presence::Both,
                base_error: None,
                head_error: Some(error.summary()),
                figures: Vec::new(),
                verdict: Verdict::Regressed,
                notes: Vec::new(),
                trade_off: false,
                profile: None,
            }),
            (None, None) => new.push(super::one_sided(case, Presence::New)),
        }
    }
    cases.extend(new);
    let base = record.paired.as_ref();
    cases.extend(
        base.into_iter()
            .flat_map(|p| &p.gone)
            .map(|id| CaseComparison {
                id: id.clone(),
                presence: Presence::Gone,
                base_error: None,
                head_error: None,
                figures: Vec::new(),
                verdict: Verdict::NotComparable,
                notes: Vec::new(),
                trade_off: false,
                profile: None,
            }),
    );
    let head = super::side(record);
    Comparison {
        base: Side {
            source: base.map_or_else(String::new, |p| p.base.clone()),
            run: record.run.clone(),
            started_at: record.started_at.clone(),
            commit: None,
        },
        head: Side {
            source: "this build".into(),
            ..head
        },
        limits: limits.clone(),
        cases,
        differences: Vec::new(),
        scaling: super::scaling::compare(
            &super::scaling::paired_base_fits(record),
            &crate::scaling::of_record(record),
            limits,
        ),
        capacity: super::capacity::compare(
            &super::capacity::paired_base_capacities(record),
            &record.capacity,
            limits,
        ),
    }
}

/// Every paired case of `record` in a table: both builds' medians on the
/// clock judged, head over base with its interval, the rounds and the
/// verdict; a paired run prints it above its comparison.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// print!("{}", nnbench_core::compare::rounds_table(record));
/// # }
/// ```
pub fn rounds_table(record: &RunRecord) -> String {
    let mut table = comfy_table::Table::new();
    crate::terminal_table::fit(&mut table)
        .load_style(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_header([
            "case",
            "base",
            "head",
            "head/base (99%)",
            "rounds",
            "clock",
            "verdict",
        ]);
    for case in &record.cases {
        let Some(p) = &case.paired else { continue };
        let ns = |v: Option<f64>| v.map_or_else(|| "-".into(), nnbench_vocab::format_ns);
        let (base, head) = if p.clock == Clock::Instructions {
            let count = |t: &TimeRecord| {
                t.instructions.map_or_else(
                    || "-".into(),
                    |n| format!("{} instr", nnbench_vocab::format_count(n as f64)),
                )
            };
            (count(&p.base.time), count(&case.time))
        } else {
            let time = super::figures::paired_time(
                p,
                &case.time,
                Limit {
                    relative: p.limit,
                    absolute: 0.0,
                    gated: true,
                },
            );
            (ns(time.base), ns(time.head))
        };
        let change = if p.estimate.is_finite() {
            format!(
                "{:.3} [{:.3}, {:.3}]",
                p.estimate, p.interval[0], p.interval[1]
            )
        } else {
            "-".into()
        };
        table.add_row([
            case.id.clone(),
            base,
            head,
            change,
            p.rounds.to_string(),
            format!("{:?}", p.clock).to_lowercase(),
            format!("{:?}", p.verdict).to_lowercase(),
        ]);
    }
    format!("{table}\n")
}
