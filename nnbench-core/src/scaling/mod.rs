//! How a family's figures grow with its `scaling` parameter (`scaling = n`
//! on `#[product]` or `#[parametrize]`): a power fitted on log-log axes to
//! the time per call, the call's growth of resident memory (sizes where it
//! reaches a MiB) and of the heap, against the parameter, per combination
//! of the family's other parameters.

mod fit;

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::record::{CaseRecord, Figure, ScalingRecord, TimingMode};

/// What a fit is of: a family, its parameter and its other parameters.
type Fit = (String, String, Map<String, Json>);

/// The figures fitted, as the record names them.
const FIGURES: [&str; 3] = ["time", "call_rss", "heap"];

/// The least growth of resident memory a call must show for its size to be
/// fitted: a call that allocates nothing still faults in tens of KiB of
/// stack and allocator pages, differently from run to run, and a power
/// fitted through that is noise that a comparison could call a
/// regression. The heap is counted byte by byte and has no such floor.
const RSS_FLOOR_BYTES: f64 = 1024.0 * 1024.0;

/// The powers of the families among `cases` that have a `scaling`
/// parameter: one per family, figure and combination of its other
/// parameters, over the cases that passed, where at least three values of
/// the parameter have the figure (for `call_rss`, a growth of at least a
/// MiB).
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for fitted in nnbench_core::scaling::fit(&record.cases) {
///     println!("{}: {} ∝ n^{:.2}", fitted.label(), fitted.figure, fitted.exponent);
/// }
/// # }
/// ```
pub fn fit(cases: &[CaseRecord]) -> Vec<ScalingRecord> {
    // Families, then combinations of their other parameters, in the order
    // they first come.
    let mut groups: Vec<(Fit, Vec<&CaseRecord>)> = Vec::new();
    for case in cases.iter().filter(|c| c.error.is_none()) {
        let Some(parameter) = &case.scales_with else {
            continue;
        };
        let mut others = case.params.clone();
        others.remove(parameter);
        let key = (case.family.clone(), parameter.clone(), others);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(case),
            None => groups.push((key, vec![case])),
        }
    }
    let mut out = Vec::new();
    for ((family, parameter, params), members) in groups {
        // Time by the thread's CPU time where every call computed on one
        // thread: a busy machine stretches wall time, size by size.
        let cpu = members.iter().all(|c| c.time.computes_on_one_thread());
        for figure in FIGURES {
            let sizes = sizes(&members, &parameter, figure, cpu);
            let seed = seed(&[&family, figure, &Json::Object(params.clone()).to_string()]);
            let Some(power) = fit::fit(&sizes, seed) else {
                continue;
            };
            out.push(ScalingRecord {
                family: family.clone(),
                parameter: parameter.clone(),
                figure: figure.to_owned(),
                clock: (figure == "time").then(|| if cpu { "cpu" } else { "wall" }.to_owned()),
                params: params.clone(),
                exponent: power.exponent,
                interval: power.interval,
                constant: power.constant,
                fit: match power.bend {
                    Some(bend) => format!(
                        "bends at {parameter}={}: {parameter}^{:.2} below, {parameter}^{:.2} above",
                        bend.at, bend.below, bend.above
                    ),
                    None => "power".to_owned(),
                },
                points: sizes.len(),
            });
        }
    }
    out
}

/// The fits of `record`: those it keeps, else fitted from its cases (a
/// record written before it kept them).
///
/// # Example
///
/// ```
/// let json = r#"{"schema":1,"run":"sweep","started_at":"2026-01-01T00:00:00Z",
///   "context":{"host":{"arch":"x86_64","cores":2},"git":null,"nnbench":"0.1.0"},"cases":[]}"#;
/// let record: nnbench::RunRecord = serde_json::from_str(json).unwrap();
/// assert!(nnbench_core::scaling::of_record(&record).is_empty());
/// ```
pub fn of_record(record: &crate::RunRecord) -> Vec<ScalingRecord> {
    if record.scaling.is_empty() {
        fit(&record.cases)
    } else {
        record.scaling.clone()
    }
}

/// The observations of `figure` at each value of `parameter`, sorted by
/// it; cases of one value pooled.
fn sizes(cases: &[&CaseRecord], parameter: &str, figure: &str, cpu: bool) -> Vec<fit::Size> {
    let mut by_size: BTreeMap<u64, fit::Size> = BTreeMap::new();
    for case in cases {
        let Some(x) = case.params.get(parameter).and_then(Json::as_f64) else {
            continue;
        };
        let samples: Vec<f64> = match figure {
            "time" if case.time.mode == TimingMode::Instructions || case.time.samples == 0 => {
                Vec::new()
            }
            "time" if cpu => case.time.cpu_samples_ns.clone(),
            "time" if !case.time.samples_ns.is_empty() => case.time.samples_ns.clone(),
            "time" => vec![case.time.median_ns],
            "call_rss" => case
                .call_growth(Figure::Rss)
                .filter(|&bytes| bytes >= RSS_FLOOR_BYTES)
                .into_iter()
                .collect(),
            _ => case.call_growth(Figure::Heap).into_iter().collect(),
        };
        if samples.is_empty() {
            continue;
        }
        by_size
            .entry(x.to_bits())
            .or_insert_with(|| fit::Size {
                x,
                samples: Vec::new(),
            })
            .samples
            .extend(samples);
    }
    let mut sizes: Vec<fit::Size> = by_size.into_values().collect();
    sizes.sort_by(|a, b| a.x.total_cmp(&b.x));
    sizes
}

/// A seed from `parts`, the same in every run (FNV-1a).
fn seed(parts: &[&str]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in parts.iter().flat_map(|p| p.bytes().chain([0])) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A case of `family` at `n` whose call grew resident memory by
    /// `growth` bytes.
    fn case(n: u64, growth: u64) -> CaseRecord {
        serde_json::from_value(json!({
            "id": format!("grow/n={n}"),
            "family": "grow",
            "params": {"n": n},
            "scales_with": "n",
            "tags": [],
            "value": null,
            "error": null,
            "load_ns": 0,
            "memo": serde_json::to_value(crate::record::MemoRecord::default()).unwrap(),
            "time": serde_json::to_value(crate::record::TimeRecord::default()).unwrap(),
            "memory": {"call_rss_before_bytes": 1u64 << 30, "call_rss_peak_bytes": (1u64 << 30) + growth},
        }))
        .unwrap()
    }

    fn rss_fits(growth: impl Fn(u64) -> u64) -> Vec<ScalingRecord> {
        let cases: Vec<CaseRecord> = [1, 2, 4, 8].map(|n| case(n, growth(n))).into();
        fit(&cases)
            .into_iter()
            .filter(|f| f.figure == "call_rss")
            .collect()
    }

    #[test]
    fn resident_growth_of_a_mib_or_more_is_fitted() {
        let fits = rss_fits(|n| n << 21);
        assert_eq!(fits.len(), 1, "{fits:?}");
        assert!((fits[0].exponent - 1.0).abs() < 1e-9, "{fits:?}");
        assert_eq!(fits[0].points, 4);
    }

    #[test]
    fn resident_growth_within_the_page_noise_is_not_fitted() {
        // Tens of KiB that differ by size: what a call that allocates
        // nothing shows.
        assert_eq!(rss_fits(|n| 40_000 + 7_000 * (n % 3)), []);
        // Sizes under the floor are left out, not fitted as noise.
        let fits = rss_fits(|n| if n == 1 { 60_000 } else { n << 21 });
        assert_eq!(fits.len(), 1, "{fits:?}");
        assert_eq!(fits[0].points, 3);
    }
}
