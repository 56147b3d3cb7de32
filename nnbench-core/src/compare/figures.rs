//! The verdict of each figure of a case, and how two runs' contexts differ.

use serde_json::Value as Json;

use super::mann_whitney;
use nnbench_vocab::{format_count, format_ns};

use super::{CaseComparison, FigureComparison, Limit, Limits, Presence, Verdict};
use crate::record::{
    CaseRecord, Clock, Figure, PairedRecord, RunContext, RunRecord, ThroughputRecord, TimeRecord,
    TimingMode, numeric_fields,
};

/// Compares one case present on both sides, under `t` with the head
/// family's own `fail_on` limits over it.
pub(crate) fn case(base: &CaseRecord, head: &CaseRecord, t: &Limits) -> CaseComparison {
    let mut notes = changed_inputs(base, head);
    let borrowed = other_builds(base, head);
    let rests_on_other_build = !borrowed.is_empty();
    notes.extend(borrowed);
    let own;
    let t = match head
        .fail_on
        .as_deref()
        .map(|spec| t.clone().with_spec(spec))
    {
        None => t,
        Some(Ok(limits)) => {
            own = limits;
            &own
        }
        Some(Err(error)) => {
            notes.push(format!(
                "its fail_on is not understood ({error}): the comparison's limits apply"
            ));
            t
        }
    };
    let base_error = base.error.as_ref().map(|e| e.summary());
    let head_error = head.error.as_ref().map(|e| e.summary());
    let failed = base_error.is_some() || head_error.is_some();
    let mut figures: Vec<FigureComparison> = if failed {
        Vec::new()
    } else {
        Figure::ALL
            .into_iter()
            .flat_map(|figure| match figure {
                Figure::Value if is_struct(base) || is_struct(head) => fields(base, head, t),
                _ => compare_figure(figure, base, head, t).into_iter().collect(),
            })
            .collect()
    };
    if rests_on_other_build {
        not_comparable_values(&mut figures);
    }
    let late = client_fell_behind(base, head);
    if let Some(why) = &late {
        not_comparable_latencies(&mut figures, why);
        notes.push(why.clone());
    }
    let verdict = match (&base_error, &head_error) {
        // A case that fails now and did not before is the plainest regression.
        (None, Some(_)) => Verdict::Regressed,
        (Some(_), _) => Verdict::NotComparable,
        (None, None) => match overall(&figures) {
            Verdict::Regressed => Verdict::Regressed,
            _ if rests_on_other_build || late.is_some() => Verdict::NotComparable,
            verdict => verdict,
        },
    };
    CaseComparison {
        id: head.id.clone(),
        presence: Presence::Both,
        base_error,
        head_error,
        trade_off: trade_off(&figures),
        figures,
        verdict,
        notes,
        profile: super::profile_of(head),
    }
}

/// The memos whose version or fingerprint differs between the sides: the
/// case measured other inputs, which its figures alone do not say.
fn changed_inputs(base: &CaseRecord, head: &CaseRecord) -> Vec<String> {
    let mut notes = Vec::new();
    for input in &head.memo.inputs {
        let Some(old) = base.memo.inputs.iter().find(|i| i.memo == input.memo) else {
            continue;
        };
        if old.version != input.version {
            notes.push(format!(
                "memo {} changed version: {} → {}",
                input.memo, old.version, input.version
            ));
        } else if old.fingerprint != input.fingerprint {
            notes.push(format!(
                "memo {} has other inputs: fingerprint {} → {}",
                input.memo,
                old.fingerprint.as_deref().unwrap_or("none"),
                input.fingerprint.as_deref().unwrap_or("none")
            ));
        }
    }
    notes
}

/// The memos either side measured as another build computed them: a
/// change to how they are computed between the builds is not in the
/// figures.
fn other_builds(base: &CaseRecord, head: &CaseRecord) -> Vec<String> {
    [("base", base), ("head", head)]
        .into_iter()
        .flat_map(|(side, case)| {
            case.memo.made_by_other_build.iter().map(move |memo| {
                format!(
                    "the {side}'s memo {memo} was loaded from the disk tier as another build \
                     computed it: a change to its compute is not in these figures (a memo that \
                     no build changes says Memo::build_independent)"
                )
            })
        })
        .collect()
}

/// Which side's client fell behind its open loop's rate, if either did:
/// its latencies, counted from when each request was due, hold the
/// client's own delay.
fn client_fell_behind(base: &CaseRecord, head: &CaseRecord) -> Option<String> {
    let late = |case: &CaseRecord| {
        case.load
            .as_deref()
            .filter(|l| l.client_fell_behind())
            .map(|l| l.late_fraction)
    };
    let sides: Vec<String> = [("base", late(base)), ("head", late(head))]
        .into_iter()
        .filter_map(|(side, f)| Some(format!("{side} {:.1}%", 100.0 * f?)))
        .collect();
    (!sides.is_empty()).then(|| {
        format!(
            "the client sent requests late ({}): its latencies hold its own delay, not comparable",
            sides.join(", ")
        )
    })
}

/// Marks the latency figures (time, p99) not comparable: a client that
/// fell behind is not a slower service.
fn not_comparable_latencies(figures: &mut [FigureComparison], why: &str) {
    for figure in figures.iter_mut() {
        if matches!(figure.figure, Figure::Time | Figure::P99) {
            figure.verdict = Verdict::NotComparable;
            figure.note = Some(why.to_owned());
        }
    }
}

/// Marks the value's figures not comparable where a side's value rests on
/// a memo another build computed: that the value held or improved says
/// nothing of the head's own compute. A value worse than the base's stays
/// regressed: the head measured it, on whatever fixture.
fn not_comparable_values(figures: &mut [FigureComparison]) {
    for figure in figures.iter_mut() {
        if figure.figure == Figure::Value && figure.verdict != Verdict::Regressed {
            figure.verdict = Verdict::NotComparable;
            figure.note = Some(
                "rests on a memo another build computed (see the case's notes): not comparable"
                    .into(),
            );
        }
    }
}

/// Regressed if a gated figure regressed, else improved if a gated one
/// improved: a figure that cannot fail the comparison cannot pass it either.
fn overall(figures: &[FigureComparison]) -> Verdict {
    let any = |verdict| figures.iter().any(|f| f.gated && f.verdict == verdict);
    if any(Verdict::Regressed) {
        Verdict::Regressed
    } else if any(Verdict::Improved) {
        Verdict::Improved
    } else {
        Verdict::Unchanged
    }
}

/// Whether a gated figure improved while another got worse (gated or
/// not): the change bought one figure with another.
fn trade_off(figures: &[FigureComparison]) -> bool {
    figures
        .iter()
        .any(|f| f.gated && f.verdict == Verdict::Improved)
        && figures.iter().any(|f| f.verdict == Verdict::Regressed)
}

/// `None` when the figure is on neither side.
fn compare_figure(
    figure: Figure,
    base: &CaseRecord,
    head: &CaseRecord,
    t: &Limits,
) -> Option<FigureComparison> {
    let limit = t.get(figure);
    match figure {
        // A side counted under Callgrind was timed many times slower than
        // natively: its instructions are compared instead.
        Figure::Time if counted(base) || counted(head) => None,
        Figure::Time => Some(match &head.paired {
            Some(paired) => paired_time(paired, &head.time, limit),
            None => time(&base.time, &head.time, limit, t.significance),
        }),
        Figure::Load => amounts(figure, base.figure(figure), head.figure(figure), limit),
        // The function's own growth, unless a side was recorded before it
        // was: then the whole case's on both sides, one quantity.
        Figure::Rss | Figure::Heap => match (base.call_growth(figure), head.call_growth(figure)) {
            (Some(b), Some(h)) => amounts(figure, Some(b), Some(h), limit),
            _ => amounts(
                figure,
                base.whole_growth(figure),
                head.whole_growth(figure),
                limit,
            ),
        },
        Figure::Gpu => {
            let mut out = amounts(figure, base.figure(figure), head.figure(figure), limit)?;
            // NVML counts the process's whole footprint, the allocator live
            // tensors alone: figures of two methods are not one quantity.
            if let (Some(b), Some(h)) = (base.memory.gpu_method, head.memory.gpu_method)
                && b != h
            {
                out.verdict = Verdict::NotComparable;
                out.note = Some(format!(
                    "measured by {b:?} on the base side, {h:?} on the head side"
                ));
            }
            Some(out)
        }
        Figure::Peak => amounts(figure, base.figure(figure), head.figure(figure), limit),
        Figure::Memo => memos(base, head, limit),
        Figure::Value => value(base, head, limit),
        Figure::Instructions
        | Figure::P99
        | Figure::Ttft
        | Figure::Tpot
        | Figure::Itl
        | Figure::E2e => amounts(figure, base.figure(figure), head.figure(figure), limit),
        Figure::Requests => rates(figure, base.figure(figure), head.figure(figure), limit),
        Figure::MaxRate | Figure::MaxGoodputRate => max_rate(figure, base, head, limit),
        Figure::RoofFraction => rates(figure, base.figure(figure), head.figure(figure), limit),
        Figure::Throughput => throughput(base, head, limit, t.significance),
        // A family's, compared apart from its cases; a figure this version
        // does not know is not compared.
        _ => None,
    }
}

/// The bytes of the case's memos, judged as their sum, with the memos
/// that grew or shrank past the limit named.
fn memos(base: &CaseRecord, head: &CaseRecord, limit: Limit) -> Option<FigureComparison> {
    let mut out = amounts(
        Figure::Memo,
        base.figure(Figure::Memo),
        head.figure(Figure::Memo),
        limit,
    )?;
    let bytes = |s: &crate::record::MemoSize| (s.bytes + s.device_bytes) as f64;
    let moved: Vec<String> = head
        .memo
        .sizes
        .iter()
        .filter_map(|h| {
            let b = base.memo.sizes.iter().find(|b| b.memo == h.memo)?;
            limit.exceeded(bytes(b), bytes(h)).then(|| {
                format!(
                    "memo {} {} → {}",
                    h.memo,
                    nnbench_vocab::format_bytes(bytes(b) as u64),
                    nnbench_vocab::format_bytes(bytes(h) as u64)
                )
            })
        })
        .collect();
    if !moved.is_empty() {
        out.note = Some(moved.join("; "));
    }
    Some(out)
}

/// Items or bytes per second, judged as time is: on the same samples, as
/// time per item, so that what a call handles may differ between the sides.
fn throughput(
    base: &CaseRecord,
    head: &CaseRecord,
    limit: Limit,
    alpha: f64,
) -> Option<FigureComparison> {
    let (b, h) = (
        base.throughput.as_deref().copied(),
        head.throughput.as_deref().copied(),
    );
    if b.is_none() && h.is_none() {
        return None;
    }
    let rate = |t: Option<ThroughputRecord>| t.map(|t| t.per_second);
    let mut out = comparison(Figure::Throughput, rate(b), rate(h));
    out.gated = limit.gated;
    let why_not = match (b, h) {
        (Some(b), Some(h)) if b.unit != h.unit => {
            "counted in elements on one side, bytes on the other"
        }
        (Some(b), Some(h)) if b.per_call == 0 || h.per_call == 0 => {
            "a side handles nothing per call"
        }
        (Some(_), Some(_)) => "",
        _ => "declared on one side only",
    };
    let (Some(b), Some(h), "") = (b, h, why_not) else {
        out.verdict = Verdict::NotComparable;
        out.note = Some(why_not.to_owned());
        return Some(out);
    };
    let per_item = |time: &TimeRecord, per_call: u64| TimeRecord {
        median_ns: time.median_ns / per_call as f64,
        samples_ns: time
            .samples_ns
            .iter()
            .map(|ns| ns / per_call as f64)
            .collect(),
        ..time.clone()
    };
    // Time per item rises exactly when items per second fall: one verdict.
    let timed = match &head.paired {
        Some(paired) => paired_time(paired, &head.time, limit),
        None => time(
            &per_item(&base.time, b.per_call),
            &per_item(&head.time, h.per_call),
            limit,
            alpha,
        ),
    };
    out.p = timed.p;
    out.verdict = timed.verdict;
    out.note = Some(match timed.note {
        Some(note) if head.paired.is_none() => format!("as time per item: {note}"),
        Some(note) => note,
        None => "as time per item".to_owned(),
    });
    Some(out)
}

/// Whether the case's call was counted under Callgrind.
fn counted(case: &CaseRecord) -> bool {
    case.time.mode == TimingMode::Instructions
}

fn comparison(figure: Figure, base: Option<f64>, head: Option<f64>) -> FigureComparison {
    FigureComparison {
        figure,
        field: None,
        base,
        head,
        ratio: base.zip(head).and_then(|(b, h)| (b != 0.0).then(|| h / b)),
        p: None,
        verdict: Verdict::Unchanged,
        gated: false,
        note: None,
    }
}

/// The time per call: the samples tested, and a change beyond the limit.
fn time(base: &TimeRecord, head: &TimeRecord, limit: Limit, alpha: f64) -> FigureComparison {
    let samples = |t: &TimeRecord| -> Vec<f64> {
        match (t.samples_ns.is_empty(), t.samples) {
            (false, _) => t.samples_ns.clone(),
            // A record written before samples were kept: its median alone.
            (true, n) if n > 0 => vec![t.median_ns],
            _ => Vec::new(),
        }
    };
    let (b, h) = (samples(base), samples(head));
    let mut out = comparison(Figure::Time, Some(base.median_ns), Some(head.median_ns));
    out.gated = limit.gated;
    if b.is_empty() || h.is_empty() {
        out.verdict = Verdict::NotComparable;
        out.note = Some("the function did not run on one side".into());
        return out;
    }
    let changed = if b.len() >= 2 && h.len() >= 2 {
        let p = mann_whitney::test(&b, &h).map_or(1.0, |r| r.p);
        out.p = Some(p);
        // Contention on a shared runner slows some samples and never speeds
        // one up: the fast end of the samples is the steadiest estimate of
        // the cost, and a real change moves it, and the median the same
        // way. Not the fastest sample itself: criterion's first samples
        // hold a call or two, which miss a cost paid every few calls.
        let (fast_b, fast_h) = (lower_quartile(&b), lower_quartile(&h));
        out.note = Some(format!(
            "lower quartile {} → {} ({:+.1}%)",
            format_ns(fast_b),
            format_ns(fast_h),
            (fast_h / fast_b - 1.0) * 100.0
        ));
        let same_way = (head.median_ns > base.median_ns) == (fast_h > fast_b);
        p < alpha && same_way && limit.exceeded(fast_b, fast_h)
    } else {
        // One call cannot be tested, and one call of page-faulting work
        // varies by half on a shared runner: only a doubling counts, as
        // github-action-benchmark alerts at 200% by default, and only past
        // a millisecond, under which one call measures caches and timers.
        out.note = Some("one call on a side: no significance test, counts from 2x and 1 ms".into());
        let wide = Limit {
            relative: (10.0 * limit.relative).max(1.0),
            absolute: limit.absolute.max(1e6),
            ..limit
        };
        wide.exceeded(base.median_ns, head.median_ns)
    };
    out.verdict = match (changed, head.median_ns > base.median_ns) {
        (false, _) => Verdict::Unchanged,
        (true, true) => Verdict::Regressed,
        (true, false) => Verdict::Improved,
    };
    out
}

/// The sample a quarter of the way up, by nearest rank.
fn lower_quartile(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[(sorted.len() - 1) / 4]
}

/// A figure where more is worse (memory, load time), judged by limit.
fn amounts(
    figure: Figure,
    base: Option<f64>,
    head: Option<f64>,
    limit: Limit,
) -> Option<FigureComparison> {
    if base.is_none() && head.is_none() {
        return None;
    }
    let mut out = comparison(figure, base, head);
    out.gated = limit.gated;
    out.verdict = match base.zip(head) {
        None => {
            out.note = Some("measured on one side only".into());
            Verdict::NotComparable
        }
        Some((b, h)) if !limit.exceeded(b, h) => Verdict::Unchanged,
        Some((b, h)) if h > b => Verdict::Regressed,
        Some(_) => Verdict::Improved,
    };
    Some(out)
}

/// A rate, of which more is better: judged as an amount, the other way.
fn rates(
    figure: Figure,
    base: Option<f64>,
    head: Option<f64>,
    limit: Limit,
) -> Option<FigureComparison> {
    let mut out = amounts(figure, base, head, limit)?;
    out.verdict = match out.verdict {
        Verdict::Regressed => Verdict::Improved,
        Verdict::Improved => Verdict::Regressed,
        other => other,
    };
    Some(out)
}

/// The highest rate under a latency target, judged as a rate past the
/// limit, and only where the searches' brackets do not overlap: a head
/// regressed where it was shown to miss the target at a rate the base was
/// shown to meet (improved the other way), since each figure is known
/// only to within its bracket.
fn max_rate<'a>(
    figure: Figure,
    base: &'a CaseRecord,
    head: &'a CaseRecord,
    limit: Limit,
) -> Option<FigureComparison> {
    // A latency search's rate is `max_rate`, a goodput search's
    // `max_goodput_rate`.
    let of = |case: &'a CaseRecord| {
        case.search
            .as_deref()
            .filter(|s| s.goodput.is_some() == (figure == Figure::MaxGoodputRate))
    };
    let (b, h) = (of(base), of(head));
    if let (Some(b), Some(h)) = (b, h) {
        let bound: Vec<String> = [("base", b), ("head", h)]
            .into_iter()
            .filter_map(|(side, s)| Some(format!("{side} at {}/s", format_count(s.client_bound?))))
            .collect();
        if !bound.is_empty() {
            let mut out = comparison(figure, b.max_rate, h.max_rate);
            out.gated = limit.gated;
            out.verdict = Verdict::NotComparable;
            out.note = Some(format!(
                "the client fell behind ({}): the search found no rate of the service",
                bound.join(", ")
            ));
            return Some(out);
        }
    }
    let mut out = rates(
        figure,
        b.and_then(|s| s.max_rate),
        h.and_then(|s| s.max_rate),
        limit,
    )?;
    let (Some(b), Some(h)) = (b, h) else {
        return Some(out);
    };
    let (Some(base_rate), Some(head_rate)) = (b.max_rate, h.max_rate) else {
        return Some(out);
    };
    let apart = match out.verdict {
        Verdict::Regressed => h.missed_at.is_some_and(|missed| missed <= base_rate),
        Verdict::Improved => b.missed_at.is_some_and(|missed| missed <= head_rate),
        _ => true,
    };
    if !apart {
        out.verdict = Verdict::Unchanged;
        out.note = Some("within the searches' brackets".into());
    }
    Some(out)
}

/// Whether the case returned a struct (an object) rather than a number.
fn is_struct(case: &CaseRecord) -> bool {
    case.value.is_object()
}

/// A struct metric, field by field: every numeric field on either side,
/// those the family's `metric` names judged by their direction and limit
/// (`value.FIELD=...`, else the value's), the others shown, never judged.
fn fields(base: &CaseRecord, head: &CaseRecord, t: &Limits) -> Vec<FigureComparison> {
    let head_fields = numeric_fields(&head.value);
    let base_fields = numeric_fields(&base.value);
    let mut paths: Vec<&str> = head_fields.iter().map(|(p, _)| p.as_str()).collect();
    for (path, _) in &base_fields {
        if !paths.contains(&path.as_str()) {
            paths.push(path);
        }
    }
    let of = |fields: &[(String, f64)], path: &str| {
        fields.iter().find(|(p, _)| p == path).map(|(_, v)| *v)
    };
    paths
        .into_iter()
        .map(|path| {
            let (b, h) = (of(&base_fields, path), of(&head_fields, path));
            let mut out = comparison(Figure::Value, b, h);
            out.field = Some(path.to_owned());
            let direction = head.directions.get(path).or(base.directions.get(path));
            out.verdict = match (b, h, direction) {
                (Some(b), Some(h), None) if same_number(b, h) => Verdict::Unchanged,
                (Some(_), Some(_), None) => {
                    out.note = Some("no direction (metric = \"field:higher\"): not judged".into());
                    Verdict::NotComparable
                }
                (Some(b), Some(h), Some(direction)) => {
                    let limit = t.get_field(path);
                    out.gated = limit.gated;
                    match (limit.exceeded(b, h), direction.improves(b, h)) {
                        (false, _) => Verdict::Unchanged,
                        (true, true) => Verdict::Improved,
                        (true, false) => Verdict::Regressed,
                    }
                }
                _ => {
                    out.gated = direction.is_some();
                    out.note = Some("on one side only".into());
                    Verdict::NotComparable
                }
            };
            out
        })
        .collect()
}

/// Float sums reordered by alignment or threads differ in the last bits:
/// that is the same value, not a change to report.
fn same_number(b: f64, h: f64) -> bool {
    (h - b).abs() <= 1e-9 * b.abs().max(h.abs())
}

/// The returned value: a number judged by its family's direction.
fn value(base: &CaseRecord, head: &CaseRecord, limit: Limit) -> Option<FigureComparison> {
    if base.value.is_null() && head.value.is_null() {
        return None;
    }
    let (b, h) = (base.value.as_f64(), head.value.as_f64());
    let mut out = comparison(Figure::Value, b, h);
    let Some(direction) = head.direction else {
        let same = |(b, h): (f64, f64)| same_number(b, h);
        out.verdict = if base.value == head.value || b.zip(h).is_some_and(same) {
            Verdict::Unchanged
        } else {
            out.note = Some("no metric direction (metric = higher | lower): not judged".into());
            Verdict::NotComparable
        };
        return Some(out);
    };
    out.gated = limit.gated;
    out.verdict = match (b, h) {
        (Some(b), Some(h)) if !limit.exceeded(b, h) => Verdict::Unchanged,
        (Some(b), Some(h)) if direction.improves(b, h) => Verdict::Improved,
        (Some(_), Some(_)) => Verdict::Regressed,
        _ if base.value == head.value => Verdict::Unchanged,
        _ => {
            out.note = Some(format!(
                "not a number: {} vs {}",
                short(&base.value),
                short(&head.value)
            ));
            Verdict::NotComparable
        }
    };
    Some(out)
}

fn short(value: &Json) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// What differs between the runs' machines and toolchains. In records
/// merged from shards each case is judged with its own shard's machine:
/// what differs is said once per pair of shards, naming them.
pub(super) fn differences(base: &RunRecord, head: &RunRecord) -> Vec<String> {
    let mut out = if base.shards.is_empty() && head.shards.is_empty() {
        context_differences(&base.context, &head.context)
    } else {
        let by_id: std::collections::HashMap<&str, &CaseRecord> =
            base.cases.iter().map(|c| (c.id.as_str(), c)).collect();
        let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
        let mut out: Vec<String> = Vec::new();
        for h in &head.cases {
            let Some(b) = by_id.get(h.id.as_str()) else {
                continue;
            };
            if pairs.contains(&(b.shard, h.shard)) {
                continue;
            }
            pairs.push((b.shard, h.shard));
            let side = |shard: Option<usize>, record: &RunRecord| match shard {
                Some(k) if !record.shards.is_empty() => format!("shard {k}"),
                _ => "the run".to_owned(),
            };
            let label = format!(
                "cases of {} on the base side and {} on the head side",
                side(b.shard, base),
                side(h.shard, head)
            );
            for difference in context_differences(base.context_of(b), head.context_of(h)) {
                let line = format!("{label}: {difference}");
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        out
    };
    if base.schema != head.schema {
        out.push(format!(
            "record schema differs: {} vs {}",
            base.schema, head.schema
        ));
    }
    out
}

/// The figures of how fast a case ran, which another machine's speed
/// decides: a time from one machine says nothing of another's.
const SPEEDS: [Figure; 11] = [
    Figure::Time,
    Figure::Load,
    Figure::P99,
    Figure::Ttft,
    Figure::Tpot,
    Figure::Itl,
    Figure::E2e,
    Figure::Throughput,
    Figure::Requests,
    Figure::MaxRate,
    Figure::MaxGoodputRate,
];

/// Where the two sides ran on other hardware (architecture, CPU, cores or
/// GPUs differ), what differs, for the note on their times.
pub(crate) fn other_machine(b: &RunContext, h: &RunContext) -> Option<String> {
    let hardware = |c: &RunContext| {
        let gpus: Vec<String> = c
            .gpu
            .devices
            .iter()
            .map(|d| d.name.clone().unwrap_or_else(|| "?".into()))
            .collect();
        format!(
            "{} {} ×{}{}",
            c.host.arch,
            c.host.cpu.as_deref().unwrap_or("unknown CPU"),
            c.host.cores,
            if gpus.is_empty() {
                String::new()
            } else {
                format!(", {}", gpus.join(" + "))
            }
        )
    };
    let (base, head) = (hardware(b), hardware(h));
    (base != head).then(|| {
        format!("not comparable, other machine ({base} on the base side, {head} on the head side)")
    })
}

/// Marks `case`'s speed figures not comparable, for sides measured on
/// other machines (`why`), and judges it again on what remains: memory,
/// its metric and the share of its roof.
pub(crate) fn judged_elsewhere(case: &mut CaseComparison, why: &str) {
    for figure in case
        .figures
        .iter_mut()
        .filter(|f| SPEEDS.contains(&f.figure))
    {
        figure.verdict = Verdict::NotComparable;
        figure.note = Some(why.to_owned());
    }
    if case.base_error.is_none() && case.head_error.is_none() {
        case.verdict = match (case.verdict, overall(&case.figures)) {
            (_, Verdict::Regressed) => Verdict::Regressed,
            // Not comparable for a reason of its own (a late client).
            (Verdict::NotComparable, _) => Verdict::NotComparable,
            (_, verdict) => verdict,
        };
        case.trade_off = trade_off(&case.figures);
    }
}

/// What differs between two contexts' machines and toolchains.
fn context_differences(b: &RunContext, h: &RunContext) -> Vec<String> {
    let gpus = |c: &RunContext| -> Vec<String> {
        c.gpu
            .devices
            .iter()
            .map(|d| d.name.clone().unwrap_or_else(|| "?".into()))
            .collect()
    };
    let show = |v: &dyn std::fmt::Debug| format!("{v:?}");
    let pairs: [(&str, String, String); 8] = [
        ("CPU", show(&b.host.cpu), show(&h.host.cpu)),
        ("architecture", show(&b.host.arch), show(&h.host.arch)),
        ("cores", show(&b.host.cores), show(&h.host.cores)),
        (
            "memory",
            show(&b.host.memory_bytes),
            show(&h.host.memory_bytes),
        ),
        ("operating system", show(&b.host.os), show(&h.host.os)),
        ("rustc", show(&b.rustc), show(&h.rustc)),
        ("nnbench", show(&b.nnbench), show(&h.nnbench)),
        ("GPUs", show(&gpus(b)), show(&gpus(h))),
    ];
    pairs
        .into_iter()
        .filter(|(_, b, h)| b != h)
        .map(|(what, b, h)| format!("{what} differs: {b} on the base side, {h} on the head side"))
        .collect()
}

/// The time figure of a paired case: the medians on the clock the rounds
/// were judged on, the estimated ratio and the rounds' verdict.
pub(super) fn paired_time(p: &PairedRecord, head: &TimeRecord, limit: Limit) -> FigureComparison {
    let on_clock = |t: &TimeRecord| match p.clock {
        Clock::Cpu => t.cpu_median_ns.unwrap_or(t.median_ns),
        Clock::Wall | Clock::Instructions => t.median_ns,
    };
    let clock = match p.clock {
        Clock::Cpu => "CPU",
        Clock::Wall | Clock::Instructions => "wall",
    };
    FigureComparison {
        figure: Figure::Time,
        field: None,
        base: Some(on_clock(&p.base.time)),
        head: Some(on_clock(head)),
        ratio: p.estimate.is_finite().then_some(p.estimate),
        p: None,
        verdict: p.verdict,
        gated: limit.gated,
        note: Some(format!(
            "paired: {} rounds by {clock} time, 99% interval {:.3}–{:.3}, limit {:.1}%",
            p.rounds,
            p.interval[0],
            p.interval[1],
            p.limit * 100.0
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::TimingMode;

    fn timed(samples: Vec<f64>) -> TimeRecord {
        let mut sorted = samples.clone();
        sorted.sort_by(f64::total_cmp);
        TimeRecord {
            mode: TimingMode::Sampled,
            samples: samples.len() as u64,
            iters: samples.len() as u64,
            median_ns: sorted[sorted.len() / 2],
            min_ns: sorted[0],
            max_ns: sorted[sorted.len() - 1],
            samples_ns: samples,
            ..TimeRecord::default()
        }
    }

    /// `n` samples around `ns`, within ±1%.
    fn around(ns: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ns * (0.99 + 0.02 * i as f64 / n as f64))
            .collect()
    }

    fn verdict(base: Vec<f64>, head: Vec<f64>) -> Verdict {
        let t = Limits::default();
        time(
            &timed(base),
            &timed(head),
            t.get(Figure::Time),
            t.significance,
        )
        .verdict
    }

    /// A searched case that met its target up to `max` requests a second
    /// and missed it at `missed`.
    fn searched(max: f64, missed: f64) -> CaseRecord {
        let mut case = scored(0.0, &[]);
        case.search = Some(Box::new(crate::record::SearchRecord {
            max_rate: Some(max),
            missed_at: Some(missed),
            ..Default::default()
        }));
        case
    }

    #[test]
    fn latencies_of_a_client_that_fell_behind_are_not_comparable() {
        let loaded = |late: f64, median_ns: f64| {
            let mut case = scored(0.0, &[]);
            case.time.median_ns = median_ns;
            case.time.samples_ns = vec![median_ns; 10];
            case.time.samples = 10;
            case.load = Some(Box::new(crate::record::LoadRecord {
                late_fraction: late,
                requests: 1000,
                ..Default::default()
            }));
            case
        };
        let t = Limits::default();
        let judged = |base: &CaseRecord, head: &CaseRecord| {
            let out = super::case(base, head, &t);
            let time = out
                .figures
                .iter()
                .find(|f| f.figure == Figure::Time)
                .cloned();
            (out.verdict, time.map(|f| f.verdict))
        };
        // Twice as slow, with the head's client 5% late: not comparable.
        let (verdict, time) = judged(&loaded(0.0, 1e6), &loaded(0.05, 2e6));
        assert_eq!(time, Some(Verdict::NotComparable));
        assert_eq!(verdict, Verdict::NotComparable);
        // The same with a client that kept up: regressed.
        let (verdict, _) = judged(&loaded(0.0, 1e6), &loaded(0.002, 2e6));
        assert_eq!(verdict, Verdict::Regressed);
    }

    #[test]
    fn a_highest_rate_regresses_only_past_the_limit_and_the_brackets() {
        let judged = |base: &CaseRecord, head: &CaseRecord| {
            max_rate(
                Figure::MaxRate,
                base,
                head,
                Limits::default().get(Figure::MaxRate),
            )
            .expect("both sides searched")
            .verdict
        };
        let base = searched(640.0, 672.0);
        // Shown to miss at 530/s, which the base was shown to meet.
        assert_eq!(judged(&base, &searched(500.0, 530.0)), Verdict::Regressed);
        // 12% lower, but the head was not shown to miss at 640/s.
        assert_eq!(judged(&base, &searched(560.0, 700.0)), Verdict::Unchanged);
        // Within the limit.
        assert_eq!(judged(&base, &searched(620.0, 650.0)), Verdict::Unchanged);
        assert_eq!(judged(&searched(500.0, 530.0), &base), Verdict::Improved);
        // A head whose client fell behind found no rate of the service.
        let mut bound = searched(300.0, 672.0);
        if let Some(search) = bound.search.as_deref_mut() {
            (search.max_rate, search.client_bound) = (None, Some(336.4));
        }
        let out = max_rate(
            Figure::MaxRate,
            &base,
            &bound,
            Limits::default().get(Figure::MaxRate),
        );
        let out = out.expect("both sides searched");
        assert_eq!(out.verdict, Verdict::NotComparable);
        assert!(out.note.is_some_and(|n| n.contains("head at 336/s")));
        assert_eq!(bound.figure(Figure::MaxRate), None, "no figure to gate on");
    }

    fn scored(value: f64, made_by_other_build: &[&str]) -> CaseRecord {
        let mut case: CaseRecord = serde_json::from_value(serde_json::json!({
            "id": "accuracy/model=Trained(1)", "family": "accuracy", "params": {}, "tags": [],
            "value": value, "error": null, "direction": "higher",
            "time": {"mode": "once", "samples": 1, "iters": 1, "mean_ns": 100.0,
                     "median_ns": 100.0, "std_ns": 0.0, "min_ns": 100.0, "max_ns": 100.0},
            "load_ns": 0, "memory": {}, "memo": {"hits": 0, "misses": 0, "evicted": []}
        }))
        .unwrap();
        case.memo.made_by_other_build = made_by_other_build.iter().map(|m| (*m).into()).collect();
        case
    }

    #[test]
    fn a_value_on_another_builds_memo_is_not_comparable_unless_it_is_worse() {
        let t = Limits::default();
        let value_verdict = |c: &CaseComparison| {
            c.figures
                .iter()
                .find(|f| f.figure == Figure::Value)
                .map(|f| f.verdict)
        };
        let own = case(&scored(0.9, &[]), &scored(0.9, &[]), &t);
        assert_eq!(own.verdict, Verdict::Unchanged);
        assert_eq!(value_verdict(&own), Some(Verdict::Unchanged));
        for (base, head) in [
            (scored(0.9, &[]), scored(0.9, &["Trained(1)"])),
            (scored(0.9, &["Trained(1)"]), scored(0.9, &[])),
            (scored(0.9, &[]), scored(0.95, &["Trained(1)"])),
        ] {
            let borrowed = case(&base, &head, &t);
            assert_eq!(borrowed.verdict, Verdict::NotComparable, "{borrowed:?}");
            assert_eq!(value_verdict(&borrowed), Some(Verdict::NotComparable));
            assert!(
                borrowed
                    .notes
                    .iter()
                    .any(|n| n.contains("another build computed it")),
                "{:?}",
                borrowed.notes
            );
        }
        let worse = case(&scored(0.9, &[]), &scored(0.5, &["Trained(1)"]), &t);
        assert_eq!(worse.verdict, Verdict::Regressed);
    }

    #[test]
    fn a_shift_of_every_sample_past_the_threshold_is_a_change_either_way() {
        assert_eq!(
            verdict(around(100.0, 30), around(120.0, 30)),
            Verdict::Regressed
        );
        assert_eq!(
            verdict(around(120.0, 30), around(100.0, 30)),
            Verdict::Improved
        );
        assert_eq!(
            verdict(around(100.0, 30), around(103.0, 30)),
            Verdict::Unchanged
        );
    }

    #[test]
    fn a_burst_that_leaves_the_fast_samples_alone_is_not_a_regression() {
        // Two thirds of the head's samples slowed by half, the rest as fast
        // as ever: the median moves, the lower quartile does not.
        let mut head = around(100.0, 10);
        head.extend(around(150.0, 20));
        assert_eq!(verdict(around(100.0, 30), head), Verdict::Unchanged);
    }

    #[test]
    fn a_cost_paid_every_few_calls_is_caught_though_a_short_sample_misses_it() {
        // Every fifth call twice as long: samples of many calls are 20%
        // slower, and the first, of a call or two, are not.
        let mut head: Vec<f64> = vec![100.0, 100.0, 100.0];
        head.extend(around(120.0, 27));
        assert_eq!(verdict(around(100.0, 30), head), Verdict::Regressed);
    }

    #[test]
    fn too_few_samples_for_significance_are_unchanged() {
        assert_eq!(
            verdict(vec![100.0, 101.0], vec![120.0, 121.0]),
            Verdict::Unchanged
        );
    }

    #[test]
    fn one_call_counts_only_from_a_doubling_past_a_millisecond() {
        assert_eq!(verdict(vec![10e6], vec![19e6]), Verdict::Unchanged);
        assert_eq!(verdict(vec![10e6], vec![21e6]), Verdict::Regressed);
        assert_eq!(verdict(vec![300.0], vec![900.0]), Verdict::Unchanged);
    }
}
