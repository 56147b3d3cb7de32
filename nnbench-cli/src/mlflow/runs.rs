//! What a record becomes in MLflow: a parent run per bench run (each
//! shard's run, in a record merged from shards), a child run per case,
//! with the case's parameters as params and its figures as metrics, and
//! the figures of whole families (their capacity) on the parent.

use serde_json::{Value as Json, json};

use crate::record::{CaseRecord, Figure, RunContext, RunRecord, numeric_fields};

/// The tag that holds a parent run's key: what finds it again.
pub(super) const RUN_KEY: &str = "nnbench.run_key";
/// The tag that holds a child run's case id.
pub(super) const CASE: &str = "nnbench.case";
/// MLflow's tag for a child run's parent.
pub(super) const PARENT: &str = "mlflow.parentRunId";

/// The longest param value MLflow takes.
const PARAM_LIMIT: usize = 6000;

/// One bench run of a record: its parent run and its cases.
pub(super) struct Part<'r> {
    /// What identifies the bench run: its name, start, machine and shard.
    /// A shard's record and the record merged from it give the same key.
    pub key: String,
    pub name: String,
    pub started_ms: i64,
    pub tags: Vec<(String, String)>,
    pub cases: Vec<&'r CaseRecord>,
    /// The parent's own metrics: [`run_metrics`] on a record's first part.
    pub metrics: Vec<(String, f64)>,
}

/// The bench runs of `record`: itself, or in a record merged from shards,
/// each shard's run.
pub(super) fn parts(record: &RunRecord) -> Vec<Part<'_>> {
    let mut parts = shard_parts(record);
    if let Some(first) = parts.first_mut() {
        first.metrics = run_metrics(record);
    }
    parts
}

fn shard_parts(record: &RunRecord) -> Vec<Part<'_>> {
    if record.shards.is_empty() {
        let shard = record.shard.as_ref().map(|s| (s.index, s.count));
        return vec![part(
            record,
            &record.started_at,
            &record.context,
            shard,
            record.cases.iter().collect(),
        )];
    }
    record
        .shards
        .iter()
        .map(|run| {
            let cases = record
                .cases
                .iter()
                .filter(|c| c.shard == Some(run.index))
                .collect();
            part(
                record,
                &run.started_at,
                &run.context,
                Some((run.index, run.count)),
                cases,
            )
        })
        .collect()
}

fn part<'r>(
    record: &RunRecord,
    started_at: &str,
    context: &RunContext,
    shard: Option<(usize, usize)>,
    cases: Vec<&'r CaseRecord>,
) -> Part<'r> {
    let host = context.host.hostname.as_deref().unwrap_or("");
    let shard_text = shard.map(|(k, n)| format!("{k}/{n}"));
    let identity = [
        record.run.as_str(),
        started_at,
        host,
        shard_text.as_deref().unwrap_or(""),
    ]
    .join("\0");
    let key = blake3::hash(identity.as_bytes()).to_hex()[..32].to_owned();
    let name = match &shard_text {
        Some(shard) => format!("{} (shard {shard})", record.run),
        None => record.run.clone(),
    };
    let mut tags = vec![
        (RUN_KEY.to_owned(), key.clone()),
        ("mlflow.runName".to_owned(), name.clone()),
        ("nnbench.bench".to_owned(), record.run.clone()),
        ("nnbench.started_at".to_owned(), started_at.to_owned()),
        ("nnbench.version".to_owned(), context.nnbench.clone()),
        ("nnbench.machine.arch".to_owned(), context.host.arch.clone()),
        (
            "nnbench.machine.cores".to_owned(),
            context.host.cores.to_string(),
        ),
    ];
    let optional = [
        ("nnbench.machine", context.host.hostname.clone()),
        ("nnbench.machine.cpu", context.host.cpu.clone()),
        ("nnbench.machine.os", context.host.os.clone()),
        ("nnbench.rustc", context.rustc.clone()),
        ("nnbench.shard", shard_text),
        (
            "mlflow.source.git.commit",
            context.git.as_ref().map(|g| g.commit.clone()),
        ),
        (
            "mlflow.source.git.branch",
            context.git.as_ref().and_then(|g| g.branch.clone()),
        ),
        (
            "nnbench.git.dirty",
            context.git.as_ref().map(|g| g.dirty.to_string()),
        ),
    ];
    tags.extend(
        optional
            .into_iter()
            .filter_map(|(name, value)| Some((name.to_owned(), value?))),
    );
    Part {
        key,
        name,
        started_ms: millis(started_at),
        tags,
        cases,
        metrics: Vec::new(),
    }
}

/// The figures of whole families, which no case's child run holds: each
/// family's capacity, `capacity.<family>` (with its other parameters
/// where it has any: `capacity.train _model_small_`), with `.low` and
/// `.high` (its 95% interval) and `.limit_bytes`. A record merged from
/// shards has them on its first shard's run, having fitted them over
/// every shard's cases.
pub(super) fn run_metrics(record: &RunRecord) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for c in &record.capacity {
        let name = metric_key(&format!("capacity.{}", c.label()));
        out.extend([
            (format!("{name}.low"), c.interval[0]),
            (format!("{name}.high"), c.interval[1]),
            (format!("{name}.limit_bytes"), c.limit_bytes as f64),
            (name, c.n),
        ]);
    }
    out.retain(|(_, value)| value.is_finite());
    out
}

/// An RFC 3339 time in milliseconds since the epoch; 0 where unreadable.
pub(super) fn millis(time: &str) -> i64 {
    humantime::parse_rfc3339_weak(time.trim_end_matches('Z'))
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A child run's tags: its parent, its case, its family, and why it failed.
pub(super) fn case_tags(case: &CaseRecord, parent: &str) -> Vec<(String, String)> {
    let mut tags = vec![
        (PARENT.to_owned(), parent.to_owned()),
        (CASE.to_owned(), case.id.clone()),
        ("mlflow.runName".to_owned(), case.id.clone()),
        ("nnbench.family".to_owned(), case.family.clone()),
    ];
    if !case.tags.is_empty() {
        tags.push(("nnbench.tags".to_owned(), case.tags.join(",")));
    }
    if let Some(error) = &case.error {
        tags.push((
            "nnbench.error".to_owned(),
            format!("{:?}: {}", error.stage, error.message),
        ));
    }
    if let Some(paired) = &case.paired {
        tags.push((
            "nnbench.paired.verdict".to_owned(),
            format!("{:?}", paired.verdict).to_lowercase(),
        ));
    }
    tags
}

/// The case's parameters as MLflow params: each by its name, a string as
/// itself, anything else as its JSON.
pub(super) fn params(case: &CaseRecord) -> Vec<(String, String)> {
    case.params
        .iter()
        .map(|(name, value)| {
            let text = match value {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            (name.to_owned(), clip(text))
        })
        .collect()
}

/// `text` within MLflow's limit on a param's value.
fn clip(text: String) -> String {
    match text.char_indices().nth(PARAM_LIMIT - 1) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The case's figures as MLflow metrics, by name: each figure the case
/// has (`time` in ns per call, `rss`, `heap`, `gpu`, `peak` and `memo`
/// in bytes, `value`, `instructions`, `throughput` per second, ...), each
/// numeric field of a struct value as `value.FIELD`, the time's spread
/// (`time.mean`, `time.min`, `time.max`, `time.ci_low`, `time.ci_high`,
/// `time.cpu`, `time.p50`, `time.p90`), memory in detail (`memory.*`,
/// `memo.<memo>` for each memo's size), and a paired verdict's ratio
/// (`paired.estimate`, `paired.ci_low`, `paired.ci_high`, `paired.limit`,
/// `paired.rounds`). Nothing that is not a finite number.
pub(super) fn metrics(case: &CaseRecord) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Figure::ALL
        .iter()
        .filter_map(|&figure| Some((figure.name().to_owned(), case.figure(figure)?)))
        .collect();
    if case.figure(Figure::Value).is_none() {
        out.extend(
            numeric_fields(&case.value)
                .into_iter()
                .map(|(field, value)| (format!("value.{field}"), value)),
        );
    }
    let t = &case.time;
    if t.samples > 0 && case.error.is_none() {
        out.extend([
            ("time.mean".to_owned(), t.mean_ns),
            ("time.min".to_owned(), t.min_ns),
            ("time.max".to_owned(), t.max_ns),
            ("time.std".to_owned(), t.std_ns),
            ("time.samples".to_owned(), t.samples as f64),
        ]);
        if let Some([low, high]) = t.median_ci_ns {
            out.extend([
                ("time.ci_low".to_owned(), low),
                ("time.ci_high".to_owned(), high),
            ]);
        }
        if let Some(cpu) = t.cpu_median_ns {
            out.push(("time.cpu".to_owned(), cpu));
        }
        if let Some(p) = &t.percentiles {
            out.extend([
                ("time.p50".to_owned(), p.p50_ns),
                ("time.p90".to_owned(), p.p90_ns),
            ]);
        }
    }
    let m = &case.memory;
    let memory = [
        ("memory.rss_peak", m.rss_peak_bytes),
        ("memory.rss_before", m.rss_before_bytes),
        ("memory.call_rss_growth", case.call_rss_growth_bytes()),
        ("memory.heap_peak", m.heap_peak_bytes),
        ("memory.call_heap_growth", case.call_heap_growth_bytes()),
        ("memory.gpu_peak", m.gpu_peak_bytes),
        ("memory.memo_resident", Some(m.memo_resident_bytes)),
    ];
    out.extend(
        memory
            .into_iter()
            .filter_map(|(name, bytes)| Some((name.to_owned(), bytes? as f64))),
    );
    out.extend(case.memo.sizes.iter().map(|size| {
        (
            format!("memo.{}", metric_key(&size.memo)),
            size.bytes as f64,
        )
    }));
    if let Some(paired) = &case.paired {
        out.extend([
            ("paired.estimate".to_owned(), paired.estimate),
            ("paired.ci_low".to_owned(), paired.interval[0]),
            ("paired.ci_high".to_owned(), paired.interval[1]),
            ("paired.limit".to_owned(), paired.limit),
            ("paired.rounds".to_owned(), f64::from(paired.rounds)),
        ]);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|(name, value)| value.is_finite() && seen.insert(name.clone()));
    out
}

/// `text` with what MLflow refuses in a metric's name (anything but
/// letters, digits, `_ - . : /` and spaces) made `_`, at most 250 long.
fn metric_key(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() => c,
            '_' | '-' | '.' | ':' | '/' | ' ' => c,
            _ => '_',
        })
        .take(250)
        .collect()
}

/// `runs/log-batch` bodies for `params` and `metrics`, each within
/// MLflow's limits on one request (100 params, 1000 items).
pub(super) fn batches(
    run_id: &str,
    params: &[(String, String)],
    metrics: &[(String, f64)],
    at_ms: i64,
) -> Vec<Json> {
    let mut bodies = Vec::new();
    for chunk in params.chunks(100) {
        let params: Vec<Json> = chunk
            .iter()
            .map(|(key, value)| json!({ "key": key, "value": value }))
            .collect();
        bodies.push(json!({ "run_id": run_id, "params": params }));
    }
    for chunk in metrics.chunks(1000) {
        let metrics: Vec<Json> = chunk
            .iter()
            .map(
                |(key, value)| json!({ "key": key, "value": value, "timestamp": at_ms, "step": 0 }),
            )
            .collect();
        bodies.push(json!({ "run_id": run_id, "metrics": metrics }));
    }
    bodies
}

/// MLflow's `[{key, value}]` form of `tags`.
pub(super) fn tag_list(tags: &[(String, String)]) -> Vec<Json> {
    tags.iter()
        .map(|(key, value)| json!({ "key": key, "value": clip(value.clone()) }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_becomes_a_name_mlflow_takes() {
        assert_eq!(
            metric_key("Model { seed: 1, side: 128 }"),
            "Model _ seed: 1_ side: 128 _"
        );
    }

    #[test]
    fn a_capacity_is_a_metric_of_the_parent_run() {
        let mut capacity = crate::record::CapacityRecord::default();
        capacity.family = "train".into();
        capacity.params.insert("model", "small".into());
        capacity.n = 3900.0;
        capacity.interval = [3700.0, 4100.0];
        capacity.limit_bytes = 4 << 30;
        let mut record: RunRecord = serde_json::from_str(
            r#"{"schema":1,"run":"sweep","started_at":"2026-11-22T10:00:00Z",
                "context":{"host":{"arch":"x86_64","cores":2},"git":null,"nnbench":"0.1.0"},"cases":[]}"#,
        )
        .expect("a record");
        record.capacity.push(capacity);
        let metrics = run_metrics(&record);
        let named = |key: &str| metrics.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
        assert_eq!(named("capacity.train _model_small_"), Some(3900.0));
        assert_eq!(named("capacity.train _model_small_.low"), Some(3700.0));
        assert_eq!(named("capacity.train _model_small_.high"), Some(4100.0));
        assert_eq!(
            named("capacity.train _model_small_.limit_bytes"),
            Some(4.0 * 1024.0 * 1024.0 * 1024.0)
        );
        assert_eq!(parts(&record)[0].metrics, metrics);
    }

    #[test]
    fn times_are_read_to_the_millisecond() {
        assert_eq!(millis("1970-01-01T00:00:01.500Z"), 1500);
        assert_eq!(millis("2026-01-01T00:00:00Z"), 1_767_225_600_000);
        assert_eq!(millis("yesterday"), 0);
    }

    #[test]
    fn a_batch_stays_within_mlflows_limits() {
        let params: Vec<(String, String)> =
            (0..150).map(|i| (format!("p{i}"), "v".into())).collect();
        let metrics: Vec<(String, f64)> = (0..1500).map(|i| (format!("m{i}"), 1.0)).collect();
        let bodies = batches("r", &params, &metrics, 0);
        assert_eq!(bodies.len(), 4);
        for body in &bodies {
            let params = body["params"].as_array().map_or(0, Vec::len);
            let metrics = body["metrics"].as_array().map_or(0, Vec::len);
            assert!(params <= 100 && params + metrics <= 1000, "{body}");
        }
    }
}
