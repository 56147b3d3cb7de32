//! A family of streaming cases in the report: time to first token and
//! time per output token (median and 99th percentile) against the rate
//! each case was offered.

use nnbench_vocab::Unit;

use super::chart::{Chart, Line, XAxis};
use crate::history::{History, HistoryError, RunStream};
use crate::record::StreamRecord;

/// A latency of a stream's record, in nanoseconds.
type Latency = fn(&StreamRecord) -> f64;

/// The latencies drawn, each a line of every group of cases.
const DRAWN: [(&str, Latency); 4] = [
    ("TTFT p50", |s| s.ttft.p50_ns),
    ("TTFT p99", |s| s.ttft.p99_ns),
    ("TPOT p50", |s| s.tpot.p50_ns),
    ("TPOT p99", |s| s.tpot.p99_ns),
];

/// The chart of `family`'s streaming cases among `cases` in run `run`;
/// none where fewer than two were offered a rate.
pub(super) fn shown(
    history: &History,
    run: i64,
    family: &str,
    cases: &[&str],
) -> Result<Option<Chart>, HistoryError> {
    let streams: Vec<RunStream> = history
        .run_streams(run)?
        .into_iter()
        .filter(|(case, _, _)| cases.contains(&case.as_str()))
        .collect();
    Ok(chart(family, &streams))
}

/// The case `id` of `family` without its rate: the group its rates are a
/// curve of (`model=small` of `serve/model=small,rate=20`).
fn group(family: &str, id: &str) -> String {
    let params = id.strip_prefix(&format!("{family}/")).unwrap_or(id);
    params
        .split(',')
        .filter(|p| !p.starts_with("rate="))
        .collect::<Vec<_>>()
        .join(",")
}

/// TTFT and TPOT against the rate, a line each for every group of cases
/// that differ only in their rate, on log-log axes.
fn chart(family: &str, streams: &[RunStream]) -> Option<Chart> {
    let rated: Vec<(String, f64, &StreamRecord)> = streams
        .iter()
        .filter_map(|(case, rate, s)| Some((group(family, case), (*rate)?, s)))
        .filter(|(_, rate, _)| *rate > 0.0)
        .collect();
    if rated.len() < 2 {
        return None;
    }
    let mut groups: Vec<&str> = rated.iter().map(|(g, _, _)| g.as_str()).collect();
    groups.dedup();
    let mut lines = Vec::new();
    for group in &groups {
        for (name, value) in DRAWN {
            let mut points: Vec<(f64, f64)> = rated
                .iter()
                .filter(|(g, _, _)| g == group)
                .map(|(_, rate, s)| (*rate, value(s)))
                .filter(|(_, v)| *v > 0.0)
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if points.is_empty() {
                continue;
            }
            lines.push(Line {
                name: if groups.len() > 1 && !group.is_empty() {
                    format!("{group}: {name}")
                } else {
                    name.to_owned()
                },
                colour: lines.len(),
                points,
                outliers: Vec::new(),
            });
        }
    }
    Some(Chart {
        title: format!("{family}: time to first token and per token against the rate"),
        x: XAxis::Numbers("requests a second".into()),
        unit: Unit::Time,
        lines,
        markers: Vec::new(),
        log_log: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(ttft_ms: f64, tpot_ms: f64) -> StreamRecord {
        let mut s: StreamRecord = serde_json::from_value(serde_json::json!({
            "requests": 100,
            "ttft": {"p50_ns": ttft_ms * 1e6, "p90_ns": 0.0, "p99_ns": 3.0 * ttft_ms * 1e6, "max_ns": 0.0, "mean_ns": 0.0},
            "tpot": {"p50_ns": tpot_ms * 1e6, "p90_ns": 0.0, "p99_ns": 2.0 * tpot_ms * 1e6, "max_ns": 0.0, "mean_ns": 0.0},
            "itl": {"p50_ns": 0.0, "p90_ns": 0.0, "p99_ns": 0.0, "max_ns": 0.0, "mean_ns": 0.0},
            "e2e": {"p50_ns": 0.0, "p90_ns": 0.0, "p99_ns": 0.0, "max_ns": 0.0, "mean_ns": 0.0},
            "tokens_per_s": 10.0,
            "output_tokens": {"mean": 32.0, "p50": 32.0, "p99": 32.0},
        }))
        .unwrap();
        s.requests = 100;
        s
    }

    #[test]
    fn each_model_s_rates_make_its_curves_in_rate_order() {
        let streams: Vec<RunStream> = vec![
            (
                "serve/model=big,rate=20".into(),
                Some(20.0),
                stream(40.0, 2.0),
            ),
            (
                "serve/model=big,rate=5".into(),
                Some(5.0),
                stream(10.0, 1.0),
            ),
            (
                "serve/model=small,rate=5".into(),
                Some(5.0),
                stream(5.0, 0.5),
            ),
            (
                "serve/model=small,rate=20".into(),
                Some(20.0),
                stream(8.0, 0.6),
            ),
            (
                "serve/model=small,concurrency=4".into(),
                None,
                stream(1.0, 1.0),
            ),
        ];
        let drawn = chart("serve", &streams).expect("a chart");
        assert!(drawn.log_log);
        let names: Vec<&str> = drawn.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(
            names[..4],
            [
                "model=big: TTFT p50",
                "model=big: TTFT p99",
                "model=big: TPOT p50",
                "model=big: TPOT p99"
            ]
        );
        assert_eq!(drawn.lines.len(), 8, "{names:?}");
        assert_eq!(drawn.lines[0].points, [(5.0, 10e6), (20.0, 40e6)]);
        assert_eq!(drawn.lines[7].points, [(5.0, 1e6), (20.0, 1.2e6)]);
        let one = &streams[..1];
        assert!(chart("serve", one).is_none(), "one rate is no curve");
    }

    #[test]
    fn a_single_group_s_lines_are_named_by_the_latency_alone() {
        let streams: Vec<RunStream> = vec![
            ("serve/rate=5".into(), Some(5.0), stream(10.0, 1.0)),
            ("serve/rate=10".into(), Some(10.0), stream(12.0, 1.1)),
        ];
        let drawn = chart("serve", &streams).expect("a chart");
        assert_eq!(drawn.lines[1].name, "TTFT p99");
        assert_eq!(group("serve", "serve/rate=5"), "");
    }
}
