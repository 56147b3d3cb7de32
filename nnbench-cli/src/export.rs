//! A run record in the formats CI tools read: Bencher Metric Format, and
//! github-action-benchmark's `customSmallerIsBetter` /
//! `customBiggerIsBetter` input.

use serde_json::{Map, Value as Json, json};

use crate::record::{CaseRecord, Direction, Figure, RunRecord, numeric_fields};

/// Bencher Metric Format: `{"<case id>": {"<measure>": {"value",
/// "lower_value", "upper_value"}}}` with the measures `latency` (ns per
/// call: the median, bounded by the fastest and slowest sample),
/// `load-latency` (ns resolving memos), `peak-rss` (bytes the case grew
/// resident memory by), `gpu-peak` (bytes), for a case counted under
/// Callgrind `instructions` and `estimated-cycles` in place of `latency`,
/// `throughput` (elements or bytes per second) for a family that declares
/// one, `latency-p50`, `latency-p90` and `latency-p99` (ns) for calls timed
/// one by one, and the returned value under the family's name (a struct of numbers:
/// each field under `family-field`); a family's `capacity` (the largest
/// `n` that fits, bounded by its interval) under the family's label.
/// Failed cases are left out.
///
/// # Example
///
/// ```
/// #[nnbench::benchmark(metric = higher)]
/// fn exported_accuracy() -> f64 { 0.93 }
///
/// let record = nnbench::Runner::new().filter("exported_accuracy").test_mode(true).quiet(true).run().unwrap();
/// let bmf = nnbench_cli::export::bmf(&record);
/// assert_eq!(bmf["exported_accuracy"]["exported-accuracy"]["value"], 0.93);
/// assert!(bmf["exported_accuracy"]["latency"]["value"].as_f64().unwrap() > 0.0);
/// ```
pub fn bmf(record: &RunRecord) -> Json {
    let mut out = Map::new();
    for case in record.cases.iter().filter(|c| c.error.is_none()) {
        let mut measures = Map::new();
        let t = &case.time;
        if case.figure(Figure::Time).is_some() {
            measures.insert(
                "latency".into(),
                json!({ "value": t.median_ns, "lower_value": t.min_ns, "upper_value": t.max_ns }),
            );
        }
        if let Some(count) = t.instructions {
            measures.insert("instructions".into(), json!({ "value": count as f64 }));
        }
        if let Some(rate) = &case.throughput {
            measures.insert("throughput".into(), json!({ "value": rate.per_second }));
        }
        if let Some(p) = &t.percentiles {
            for (name, ns) in [
                ("latency-p50", p.p50_ns),
                ("latency-p90", p.p90_ns),
                ("latency-p99", p.p99_ns),
            ] {
                measures.insert(name.into(), json!({ "value": ns }));
            }
        }
        if let Some(callgrind) = &t.callgrind {
            measures.insert(
                "estimated-cycles".into(),
                json!({ "value": callgrind.estimated_cycles as f64 }),
            );
        }
        if case.uses_memos() {
            measures.insert(
                "load-latency".into(),
                json!({ "value": case.load_ns as f64 }),
            );
        }
        if let Some(growth) = case.rss_growth_bytes() {
            measures.insert("peak-rss".into(), json!({ "value": growth as f64 }));
        }
        if let Some(growth) = case.call_rss_growth_bytes() {
            measures.insert("call-rss".into(), json!({ "value": growth as f64 }));
        }
        if let Some(gpu) = case.memory.gpu_peak_bytes {
            measures.insert("gpu-peak".into(), json!({ "value": gpu as f64 }));
        }
        for (name, value, _) in metrics(case) {
            measures.insert(name, json!({ "value": value }));
        }
        out.insert(case.id.clone(), Json::Object(measures));
    }
    // A family's capacity, under its label: a benchmark of its own.
    for c in &record.capacity {
        let mut measures = Map::new();
        measures.insert(
            "capacity".into(),
            json!({ "value": c.n, "lower_value": c.interval[0], "upper_value": c.interval[1] }),
        );
        out.insert(c.label(), Json::Object(measures));
    }
    Json::Object(out)
}

/// github-action-benchmark's input, `[{"name", "unit", "value", "range"?,
/// "extra"?}]`: for `smaller` (`customSmallerIsBetter`) the time per call,
/// its 99th percentile (calls timed one by one), memo load time, RSS
/// growth, GPU peak and the values of `metric = lower` families; otherwise
/// (`customBiggerIsBetter`) throughput, the values of `metric = higher`
/// families and each family's capacity. Failed cases are left out.
///
/// # Example
///
/// ```
/// #[nnbench::benchmark]
/// fn exported_latency() -> u8 { 1 }
///
/// let record = nnbench::Runner::new().filter("exported_latency").test_mode(true).quiet(true).run().unwrap();
/// let entries = nnbench_cli::export::github(&record, true);
/// assert_eq!(entries[0]["name"], "exported_latency (time)");
/// assert_eq!(entries[0]["unit"], "ns");
/// ```
pub fn github(record: &RunRecord, smaller: bool) -> Json {
    let mut out = Vec::new();
    for case in record.cases.iter().filter(|c| c.error.is_none()) {
        let entry = |what: &str, unit: &str, value: f64| json!({ "name": format!("{} ({what})", case.id), "unit": unit, "value": value });
        if smaller {
            let t = &case.time;
            if case.figure(Figure::Time).is_some() {
                let mut time = entry("time", "ns", t.median_ns);
                time["range"] = json!(format!("± {:.1}", t.std_ns));
                time["extra"] = json!(format!("{} samples, {} calls", t.samples, t.iters));
                out.push(time);
            }
            if let Some(count) = t.instructions {
                out.push(entry("instructions", "instructions", count as f64));
            }
            if let Some(p) = &t.percentiles {
                out.push(entry("p99", "ns", p.p99_ns));
            }
            if case.uses_memos() {
                out.push(entry("memo load", "ns", case.load_ns as f64));
            }
            if let Some(growth) = case.rss_growth_bytes() {
                out.push(entry("peak RSS", "bytes", growth as f64));
            }
            if let Some(growth) = case.call_rss_growth_bytes() {
                out.push(entry("call RSS", "bytes", growth as f64));
            }
            if let Some(gpu) = case.memory.gpu_peak_bytes {
                out.push(entry("GPU peak", "bytes", gpu as f64));
            }
        }
        let wanted = if smaller {
            Direction::Lower
        } else {
            Direction::Higher
        };
        if let (false, Some(rate)) = (smaller, &case.throughput) {
            out.push(entry(
                "throughput",
                rate.unit.per_second_label(),
                rate.per_second,
            ));
        }
        for (name, value, direction) in metrics(case) {
            if direction == Some(wanted) {
                out.push(entry(&name, "", value));
            }
        }
    }
    if !smaller {
        for c in &record.capacity {
            out.push(json!({
                "name": format!("{} (capacity)", c.label()),
                "unit": c.parameter,
                "value": c.n,
                "range": format!("{:.0}-{:.0}", c.interval[0], c.interval[1]),
                "extra": format!("in {} bytes ({})", c.limit_bytes, c.limit_from),
            }));
        }
    }
    Json::Array(out)
}

/// The numbers a case returned, each with a slug and its direction: the
/// family's name for a number, `family-field` for the numeric fields of a
/// struct (nested ones too: `family-eval-top5`), each with the direction
/// its `metric` gives it (a struct whose family says `metric = higher`
/// has it for every field).
fn metrics(case: &CaseRecord) -> Vec<(String, f64, Option<Direction>)> {
    let family = slug(&case.family);
    match &case.value {
        Json::Number(n) => n
            .as_f64()
            .map(|v| vec![(family, v, case.direction)])
            .unwrap_or_default(),
        value => numeric_fields(value)
            .into_iter()
            .map(|(path, v)| {
                let direction = case.directions.get(&path).copied().or(case.direction);
                (format!("{family}-{}", slug(&path)), v, direction)
            })
            .collect(),
    }
}

/// Lowercase letters, digits and dashes, as Bencher's slugs are.
fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_lowercase_words_joined_by_dashes() {
        assert_eq!(slug("accuracy"), "accuracy");
        assert_eq!(slug("Top_1 Accuracy!"), "top-1-accuracy");
        assert_eq!(slug("bench::loss"), "bench-loss");
    }
}
