//! A sampled case's struct metric whose fields are measurements the call
//! made of itself (a time or a rate, by name: [`measured_field`]), such as
//! `images_per_second`. The first call, which gives the metric, is also
//! the coldest: its rate can be a tenth of the warm calls' (a device's
//! first kernels, caches, the allocator's first blocks). Such a field is
//! recorded as the median of the kept samples' values; every other field
//! stays the first call's, a result that only a change of code moves.

use serde_json::Value as Json;

use crate::compare::measured_field;
use crate::measure::adaptive;
use crate::record::{field, numeric_fields};

/// The paths of `metric`'s measured fields: none for most metrics, and
/// then no sample's value need be kept.
pub(crate) fn measured_paths(metric: &Json) -> Vec<String> {
    numeric_fields(metric)
        .into_iter()
        .map(|(path, _)| path)
        .filter(|path| measured_field(path))
        .collect()
}

/// Writes into `metric`, at each of `paths`, the median of the values
/// that `samples` (the metrics of the kept samples' calls) hold there. A
/// path that no sample holds a number at keeps the first call's value.
pub(crate) fn settle(metric: &mut Json, paths: &[String], samples: &[Json]) {
    for path in paths {
        let mut values: Vec<f64> = samples
            .iter()
            .filter_map(|sample| field(sample, path)?.as_f64())
            .filter(|v| v.is_finite())
            .collect();
        if values.is_empty() {
            continue;
        }
        values.sort_by(f64::total_cmp);
        let median = adaptive::median(&values);
        if let Some(slot) = field_mut(metric, path) {
            *slot = number_like(slot, median);
        }
    }
}

/// `median` as a number of the kind `was`: an integer field stays one.
fn number_like(was: &Json, median: f64) -> Json {
    if was.is_u64() && median >= 0.0 {
        return Json::from(median.round() as u64);
    }
    if was.is_i64() {
        return Json::from(median.round() as i64);
    }
    serde_json::Number::from_f64(median).map_or_else(|| was.clone(), Json::Number)
}

fn field_mut<'a>(value: &'a mut Json, path: &str) -> Option<&'a mut Json> {
    path.split('.')
        .try_fold(value, |at, name| at.as_object_mut()?.get_mut(name))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_measured_field_takes_the_samples_median_and_a_result_the_first_calls() {
        let mut metric = json!({
            "accuracy": 0.5,
            "images_per_second": 100.0,
            "eval": {"latency_ms": 90.0, "top5": 0.9},
            "name": "mlp",
        });
        let paths = measured_paths(&metric);
        assert_eq!(paths, ["images_per_second", "eval.latency_ms"]);
        let samples = [
            json!({"accuracy": 0.6, "images_per_second": 1000.0, "eval": {"latency_ms": 9.0}}),
            json!({"accuracy": 0.6, "images_per_second": 3000.0, "eval": {"latency_ms": 11.0}}),
            json!({"accuracy": 0.6, "images_per_second": 2000.0, "eval": {"latency_ms": 10.0}}),
        ];
        settle(&mut metric, &paths, &samples);
        assert_eq!(
            metric,
            json!({
                "accuracy": 0.5,
                "images_per_second": 2000.0,
                "eval": {"latency_ms": 10.0, "top5": 0.9},
                "name": "mlp",
            })
        );
    }

    #[test]
    fn an_integer_field_stays_an_integer_and_a_missing_one_the_first_calls() {
        let mut metric = json!({"elapsed_ns": 900, "wait_ms": 7.0});
        let paths = measured_paths(&metric);
        let samples = [json!({"elapsed_ns": 10}), json!({"elapsed_ns": 13})];
        settle(&mut metric, &paths, &samples);
        assert_eq!(metric, json!({"elapsed_ns": 12, "wait_ms": 7.0}));
    }

    #[test]
    fn a_number_alone_has_no_measured_field() {
        assert!(measured_paths(&json!(3.5)).is_empty());
    }
}
