//! How a family's figures grow with its `scaling` parameter (`scaling = n`
//! on `#[product]` or `#[parametrize]`): a power fitted on log-log axes to
//! the time per call, the call's growth of resident memory (sizes where it
//! reaches a MiB) and of the heap, against the parameter, per combination
//! of the family's other parameters.

pub(crate) mod capacity;
pub(crate) mod fit;

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::record::{CapacityRecord, CaseRecord, Figure, ScalingRecord, TimingMode};

/// What a fit is of: a family, its parameter and its other parameters.
type Fit = (String, String, crate::record::ParamMap);

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
    let mut out = Vec::new();
    for ((family, parameter, params), members) in groups(cases) {
        // Time by the thread's CPU time where every call computed on one
        // thread: a busy machine stretches wall time, size by size.
        let cpu = members.iter().all(|c| c.time.computes_on_one_thread());
        let counted = members
            .iter()
            .all(|c| c.time.mode == TimingMode::Instructions && c.time.instructions.is_some());
        for figure in FIGURES {
            let rounds = (figure == "time" && !counted)
                .then(|| in_rounds(&members, &parameter, cpu))
                .flatten();
            let (sizes, rounds) = match rounds {
                Some((sizes, rounds)) => (sizes, rounds),
                None => (sizes(&members, &parameter, figure, cpu, counted), 0),
            };
            let seed = seed(&[&family, figure, &params.to_json().to_string()]);
            let Some(power) = fit::fit(&sizes, seed) else {
                continue;
            };
            let clock = match (figure, counted, cpu) {
                ("time", true, _) => Some("instructions"),
                ("time", false, true) => Some("cpu"),
                ("time", false, false) => Some("wall"),
                _ => None,
            };
            out.push(ScalingRecord {
                family: family.clone(),
                parameter: parameter.clone(),
                figure: figure.to_owned(),
                clock: clock.map(str::to_owned),
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
                rounds,
            });
        }
    }
    out
}

/// The cases of `cases` that passed and have a `scaling` parameter, by
/// family, then combination of their other parameters, in the order they
/// first come.
fn groups(cases: &[CaseRecord]) -> Vec<(Fit, Vec<&CaseRecord>)> {
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
    groups
}

/// The largest size of each family with a `scaling` parameter whose
/// peaks fit under `limits`: its resident peak under the memory the run
/// may have, its GPU peak under the device's. One per family, memory and
/// combination of its other parameters, over the cases that passed and
/// recorded that peak, where at least [`capacity::MIN_POINTS`] values of
/// the parameter have one (the largest peak of a value's cases).
pub(crate) fn capacities(cases: &[CaseRecord], limits: capacity::Limits) -> Vec<CapacityRecord> {
    type Peak = fn(&CaseRecord) -> Option<u64>;
    let figures: [(&str, Option<capacity::Limit>, Peak); 2] = [
        ("rss", limits.rss, unreclaimable_peak),
        ("gpu", limits.gpu, |c| c.memory.gpu_peak_bytes),
    ];
    let mut out = Vec::new();
    for ((family, parameter, params), members) in groups(cases) {
        for (figure, limit, peak) in figures {
            let Some(limit) = limit else {
                continue;
            };
            let mut peaks: BTreeMap<u64, capacity::Point> = BTreeMap::new();
            for case in &members {
                let (Some(x), Some(bytes)) = (
                    case.params.get(&parameter).and_then(Json::as_f64),
                    peak(case),
                ) else {
                    continue;
                };
                let point = peaks
                    .entry(x.to_bits())
                    .or_insert(capacity::Point { x, bytes: 0.0 });
                point.bytes = point.bytes.max(bytes as f64);
            }
            let points: Vec<capacity::Point> = peaks.into_values().collect();
            let seed = seed(&[&family, "capacity", figure, &params.to_json().to_string()]);
            let Some(found) = capacity::capacity(&points, limit.bytes as f64, seed) else {
                continue;
            };
            out.push(CapacityRecord {
                family: family.clone(),
                parameter: parameter.clone(),
                params: params.clone(),
                figure: figure.to_owned(),
                n: found.n,
                interval: found.interval,
                limit_bytes: limit.bytes,
                limit_from: limit.from.name().to_owned(),
                others_bytes: (limit.others > 0).then_some(limit.others),
                fixed_bytes: found.fit.fixed,
                per_bytes: found.fit.per,
                exponent: found.fit.exponent,
                points: points.len(),
                largest_measured: points.iter().map(|p| p.x).fold(0.0, f64::max),
            });
        }
    }
    out
}

/// A case's resident peak less the file-backed pages resident as it
/// started (code and mapped files, much of a libtorch process's), which
/// the kernel reclaims before a cgroup's limit kills anything. Pages the
/// case maps in as it runs count with its peak: the peak's share of
/// file-backed pages is not known, only that it holds those it started
/// with, so what is left is the most the peak can hold that the kernel
/// cannot reclaim.
fn unreclaimable_peak(case: &CaseRecord) -> Option<u64> {
    let peak = case.memory.rss_peak_bytes?;
    Some(peak.saturating_sub(case.memory.rss_file_before_bytes.unwrap_or(0)))
}

/// The least number of interleaved rounds a time fit is made from: fewer
/// say too little of the spread between rounds.
pub(crate) const MIN_ROUNDS: usize = 3;

/// The power through interleaved rounds: `rounds[m][r]`, the time per
/// call of the size `xs[m]` in round `r` (every size has every round, all
/// positive). Each round is scaled to the rounds' common level before the
/// sizes are fitted (its figures divided by their geometric mean, times
/// that of all rounds): a round the machine slowed is slower at every
/// size alike, which leaves the sizes' ratios, and so the power, as they
/// are. `None` with fewer than three sizes or [`MIN_ROUNDS`] rounds.
pub(crate) fn fit_rounds(xs: &[f64], rounds: &[&[f64]], seed: u64) -> Option<fit::Power> {
    fit::fit(&leveled(xs, rounds)?, seed)
}

/// The sizes of [`fit_rounds`], each round scaled to the common level.
fn leveled(xs: &[f64], rounds: &[&[f64]]) -> Option<Vec<fit::Size>> {
    let count = rounds.first()?.len();
    if xs.len() != rounds.len()
        || count < MIN_ROUNDS
        || rounds
            .iter()
            .any(|r| r.len() != count || r.iter().any(|&t| t.is_nan() || t <= 0.0))
    {
        return None;
    }
    let level: Vec<f64> = (0..count)
        .map(|r| rounds.iter().map(|times| times[r].ln()).sum::<f64>() / rounds.len() as f64)
        .collect();
    let common = level.iter().sum::<f64>() / count as f64;
    let mut sizes: Vec<fit::Size> = xs
        .iter()
        .zip(rounds)
        .map(|(&x, times)| fit::Size {
            x,
            samples: times
                .iter()
                .zip(&level)
                .map(|(t, level)| (t.ln() - level + common).exp())
                .collect(),
        })
        .collect();
    sizes.sort_by(|a, b| a.x.total_cmp(&b.x));
    Some(sizes)
}

/// The time sizes of `cases` from their interleaved rounds, on the CPU
/// clock if `cpu`, and how many rounds: where every case has the same
/// number of rounds, and each its own value of `parameter`.
fn in_rounds(cases: &[&CaseRecord], parameter: &str, cpu: bool) -> Option<(Vec<fit::Size>, usize)> {
    let mut xs = Vec::with_capacity(cases.len());
    let mut rounds = Vec::with_capacity(cases.len());
    for case in cases {
        let x = case.params.get(parameter).and_then(Json::as_f64)?;
        if xs.contains(&x) {
            return None;
        }
        xs.push(x);
        rounds.push(if cpu {
            case.time.cpu_rounds_ns.as_slice()
        } else {
            case.time.rounds_ns.as_slice()
        });
    }
    let sizes = leveled(&xs, &rounds)?;
    Some((sizes, rounds[0].len()))
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
/// it; cases of one value pooled. Time is the instructions counted where
/// every case was `counted`, and nothing of a counted case otherwise: a
/// count and a time do not fit on one line.
fn sizes(
    cases: &[&CaseRecord],
    parameter: &str,
    figure: &str,
    cpu: bool,
    counted: bool,
) -> Vec<fit::Size> {
    let mut by_size: BTreeMap<u64, fit::Size> = BTreeMap::new();
    for case in cases {
        let Some(x) = case.params.get(parameter).and_then(Json::as_f64) else {
            continue;
        };
        let samples: Vec<f64> = match figure {
            "time" if counted => case
                .time
                .instructions
                .map(|n| n as f64)
                .into_iter()
                .collect(),
            "time" if case.time.mode == TimingMode::Instructions => Vec::new(),
            "time" if case.time.samples == 0 => Vec::new(),
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
    use crate::record::TimeRecord;
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

    /// A case of `family` at `n`, timed in each round as `rounds` says,
    /// with a sample per round taken size after size as `samples` says.
    fn timed(n: u64, samples: Vec<f64>, rounds: Vec<f64>) -> CaseRecord {
        let mut case = case(n, 0);
        case.memory = crate::record::MemoryRecord::default();
        case.time = TimeRecord {
            samples: samples.len() as u64,
            median_ns: samples[samples.len() / 2],
            samples_ns: samples,
            rounds_ns: rounds,
            ..TimeRecord::once(1.0)
        };
        case
    }

    #[test]
    fn rounds_slowed_alike_leave_the_power_as_it_is() {
        // Sizes timed one after another while the machine slowed by half
        // each time bend the power; rounds each slowed alike do not.
        let sizes = [64u64, 128, 256, 512, 1024];
        let drift = |step: usize| 1.0 + 0.5 * step as f64;
        let cases: Vec<CaseRecord> = sizes
            .iter()
            .enumerate()
            .map(|(at, &n)| {
                let cost = (n * n) as f64;
                let samples = (0..10).map(|_| cost * drift(at)).collect();
                let rounds = (0..12).map(|r| cost * drift(r % 4)).collect();
                timed(n, samples, rounds)
            })
            .collect();
        let fits = fit(&cases);
        let time = fits.iter().find(|f| f.figure == "time").unwrap();
        assert_eq!(time.rounds, 12);
        assert!((time.exponent - 2.0).abs() < 1e-9, "{time:?}");
        assert!(
            time.interval[0] <= 2.0 && 2.0 <= time.interval[1],
            "{time:?}"
        );
        // Without their rounds, the drift shows in the power.
        let mut alone = cases.clone();
        for case in &mut alone {
            case.time.rounds_ns.clear();
        }
        let bent = fit(&alone)
            .into_iter()
            .find(|f| f.figure == "time")
            .unwrap();
        assert_eq!(bent.rounds, 0);
        assert!(bent.exponent > 2.3, "{bent:?}");
    }

    #[test]
    fn rounds_of_unequal_length_are_not_fitted_as_rounds() {
        let cases: Vec<CaseRecord> = [8u64, 16, 32]
            .iter()
            .map(|&n| {
                let rounds = if n == 8 {
                    vec![8.0; 3]
                } else {
                    vec![n as f64; 4]
                };
                timed(n, vec![n as f64; 5], rounds)
            })
            .collect();
        let time = fit(&cases)
            .into_iter()
            .find(|f| f.figure == "time")
            .unwrap();
        assert_eq!(time.rounds, 0, "fitted from the samples: {time:?}");
        assert!((time.exponent - 1.0).abs() < 1e-9, "{time:?}");
    }

    #[test]
    fn counted_instructions_are_fitted_on_their_own_clock() {
        let cases: Vec<CaseRecord> = [100u64, 200, 400, 800]
            .iter()
            .map(|&n| {
                let mut case = timed(n, vec![1.0], Vec::new());
                case.time.mode = TimingMode::Instructions;
                case.time.instructions = Some(3 * n * n + 50);
                case
            })
            .collect();
        let time = fit(&cases)
            .into_iter()
            .find(|f| f.figure == "time")
            .unwrap();
        assert_eq!(time.clock.as_deref(), Some("instructions"));
        assert!((time.exponent - 2.0).abs() < 0.01, "{time:?}");
    }

    #[test]
    fn a_family_counted_in_part_has_no_time_fit() {
        let cases: Vec<CaseRecord> = [100u64, 200, 400, 800]
            .iter()
            .map(|&n| {
                let mut case = timed(n, vec![n as f64; 3], Vec::new());
                if n >= 400 {
                    case.time.mode = TimingMode::Instructions;
                    case.time.instructions = Some(1000 * n);
                }
                case
            })
            .collect();
        // Two timed sizes are too few, and the counts are not times.
        assert!(fit(&cases).iter().all(|f| f.figure != "time"));
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

    #[test]
    fn a_gpu_peak_is_predicted_under_the_devices_memory_and_rss_under_the_runs() {
        const MIB: u64 = 1 << 20;
        let cases: Vec<CaseRecord> = [1u64, 2, 4, 8, 16]
            .map(|n| {
                let mut case = case(n, 0);
                case.memory.rss_peak_bytes = Some(100 * MIB + n * MIB);
                case.memory.gpu_peak_bytes = Some(500 * MIB + 64 * n * MIB);
                case
            })
            .into();
        let gpu: crate::record::GpuContext = serde_json::from_value(json!({
            "available": true,
            "devices": [{"index": 0, "memory_bytes": 80u64 << 30}, {"index": 1, "memory_bytes": 40u64 << 30}],
        }))
        .unwrap();
        let limits = capacity::Limits::of_run(Some(1 << 30), true, &gpu);
        let found = capacities(&cases, limits);
        let of = |figure: &str| {
            found
                .iter()
                .find(|c| c.figure == figure)
                .unwrap_or_else(|| panic!("no {figure} capacity: {found:?}"))
        };
        let gpu = of("gpu");
        assert_eq!(
            (gpu.limit_bytes, gpu.limit_from.as_str()),
            (40 << 30, "device")
        );
        let expected = ((40u64 << 30) - 500 * MIB) as f64 / (64 * MIB) as f64;
        assert!((gpu.n / expected - 1.0).abs() < 0.01, "{gpu:?}");
        let rss = of("rss");
        assert_eq!(
            (rss.limit_bytes, rss.limit_from.as_str()),
            (1 << 30, "flag")
        );
        assert!((rss.n / 924.0 - 1.0).abs() < 0.01, "{rss:?}");
        // Read back, each under its own limit.
        let mut record: crate::RunRecord = serde_json::from_value(json!({
            "schema": 2, "run": "grow", "started_at": "2026-11-28T10:00:00Z",
            "context": {"host": {"arch": "x86_64", "cores": 2}, "git": null, "nnbench": "0.1.0"},
            "cases": [],
        }))
        .unwrap();
        record.capacity = found.clone();
        assert_eq!(capacity::Limits::of(&record), limits);
    }

    #[test]
    fn file_backed_pages_resident_at_the_start_are_left_out_of_the_capacity() {
        const MIB: u64 = 1 << 20;
        // 60 MiB of a framework's code, 40 MiB of its heap, 1 MiB an item.
        let cases: Vec<CaseRecord> = [1u64, 2, 4, 8, 16]
            .map(|n| {
                let mut case = case(n, 0);
                case.memory.rss_peak_bytes = Some(100 * MIB + n * MIB);
                case.memory.rss_file_before_bytes = Some(60 * MIB);
                case
            })
            .into();
        let limits = capacity::Limits::of_run(Some(1 << 30), true, &Default::default());
        let found = capacities(&cases, limits);
        let rss = found
            .iter()
            .find(|c| c.figure == "rss")
            .expect("a capacity");
        assert!((rss.fixed_bytes / MIB as f64 - 40.0).abs() < 0.5, "{rss:?}");
        assert!((rss.n / 984.0 - 1.0).abs() < 0.01, "{rss:?}");
    }
}
