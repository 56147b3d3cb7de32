//! Large records made up from one real case, for the benches of what
//! happens after a run (compare, history).

use nnbench::{RunRecord, Runner};

#[nnbench::benchmark(metric = higher)]
fn template() -> f64 {
    0.9
}

/// A record of `cases` cases of 100 samples each, the head side `factor`
/// times slower in every tenth case.
pub fn synthetic(cases: usize, samples: usize, factor: f64) -> RunRecord {
    let mut record = Runner::new()
        .filter("template")
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("template run");
    let template = record.cases.pop().expect("one case");
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut noise = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        1.0 + (seed % 1000) as f64 / 20_000.0
    };
    record.cases = (0..cases)
        .map(|i| {
            let mut case = template.clone();
            case.id = format!("model/layer={i},batch=32");
            let slow = if i % 10 == 0 { factor } else { 1.0 };
            case.time.samples_ns = (0..samples).map(|_| 1000.0 * slow * noise()).collect();
            let mut sorted = case.time.samples_ns.clone();
            sorted.sort_by(f64::total_cmp);
            case.time.median_ns = sorted[samples / 2];
            case.time.min_ns = sorted[0];
            case.time.max_ns = sorted[samples - 1];
            case.time.samples = samples as u64;
            case
        })
        .collect();
    record
}
