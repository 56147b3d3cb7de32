//! A run record logged to an MLflow tracking server through its REST API:
//! a parent run per bench run, a child run per case with the case's
//! parameters as params and its figures as metrics, and the record
//! itself as the parent's artifact.
//!
//! The export is idempotent. A parent run carries a key made of the bench
//! run's name, start, machine and shard, and is marked finished only once
//! every case is logged; exporting the same record again finds it and adds
//! nothing, and an export cut short is completed by the next one (a case
//! left half-logged is deleted and logged again). A shard's record and the
//! record merged from the shards give each shard's run the same key, so
//! exporting both logs each case once.

mod client;
mod runs;

use serde_json::{Value as Json, json};

use crate::record::{CaseRecord, RunRecord};
use client::Client;
use runs::Part;

/// Where an export goes.
///
/// # Example
///
/// ```
/// let target = nnbench_cli::mlflow::Target {
///     tracking_uri: "http://127.0.0.1:5000".into(),
///     experiment: "sweep".into(),
/// };
/// # let _ = target;
/// ```
#[derive(Clone, Debug)]
pub struct Target {
    /// The tracking server's address, `http://` or `https://`.
    pub tracking_uri: String,
    /// The experiment the runs go in, made where it does not exist.
    pub experiment: String,
}

/// What an export did.
///
/// # Example
///
/// ```
/// # fn f(done: nnbench_cli::mlflow::Exported) {
/// println!("{} of {} cases were new", done.added, done.cases);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exported {
    /// The experiment's id on the server.
    pub experiment_id: String,
    /// The parent runs' ids: one per bench run (per shard in a merged
    /// record).
    pub parents: Vec<String>,
    /// The record's cases.
    pub cases: usize,
    /// The cases this export logged; the others were there already.
    pub added: usize,
    /// Whether the record went up as the parents' artifact: not where the
    /// server keeps no artifacts of its own.
    pub record_attached: bool,
}

/// Why an export stopped. Each names the server's address and what was
/// being done (the case, where one was being logged).
///
/// # Example
///
/// ```
/// let target = nnbench_cli::mlflow::Target {
///     tracking_uri: "file:///tmp/mlruns".into(),
///     experiment: "sweep".into(),
/// };
/// # let record: nnbench::RunRecord = serde_json::from_str(r#"{"schema":1,"run":"sweep",
/// #   "started_at":"2026-01-01T00:00:00Z","context":{"host":{"arch":"x86_64","cores":2},
/// #   "git":null,"nnbench":"0.1.0","command":[]},"cases":[]}"#).unwrap();
/// let error = nnbench_cli::mlflow::export(&record, &target).unwrap_err();
/// assert!(error.to_string().contains("file:///tmp/mlruns"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum MlflowError {
    /// The address is not an HTTP server's.
    #[error(
        "{uri}: not an MLflow tracking server's address (http:// or https://); `mlflow server` prints the one it listens on"
    )]
    NotHttp {
        /// The address given.
        uri: String,
    },
    /// Nothing answered, or the answer broke off.
    #[error("MLflow at {uri} did not answer while {doing}: {source}")]
    Unreachable {
        /// The server's address.
        uri: String,
        /// What the export was doing.
        doing: String,
        /// What the connection said.
        #[source]
        source: Box<ureq::Error>,
    },
    /// The server answered with an error.
    #[error("MLflow at {uri} refused {doing}: HTTP {status}, {message}")]
    Refused {
        /// The server's address.
        uri: String,
        /// What the export was doing.
        doing: String,
        /// The HTTP status.
        status: u16,
        /// MLflow's error code and message.
        message: String,
    },
    /// The answer was not MLflow's.
    #[error("{uri} answered {doing} with something other than MLflow's JSON: {answer}")]
    NotMlflow {
        /// The server's address.
        uri: String,
        /// What the export was doing.
        doing: String,
        /// The start of the answer.
        answer: String,
    },
}

/// Logs `record` to the tracking server of `target`; see the module's page
/// for what lands where.
///
/// # Errors
///
/// A server that cannot be reached, refuses a request or does not answer
/// as MLflow does: the error names its address and the case being logged.
/// What was logged before it stays, and the next export completes it.
///
/// # Example
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let record = nnbench::RunRecord::read("target/nnbench/sweep/latest.json")?;
/// let target = nnbench_cli::mlflow::Target {
///     tracking_uri: "http://127.0.0.1:5000".into(),
///     experiment: record.run.clone(),
/// };
/// let done = nnbench_cli::mlflow::export(&record, &target)?;
/// println!("{} new cases in experiment {}", done.added, done.experiment_id);
/// # Ok(())
/// # }
/// ```
pub fn export(record: &RunRecord, target: &Target) -> Result<Exported, MlflowError> {
    let client = Client::new(&target.tracking_uri)?;
    let experiment_id = experiment(&client, &target.experiment)?;
    let record_json = serde_json::to_vec_pretty(record).unwrap_or_default();
    let mut done = Exported {
        experiment_id,
        parents: Vec::new(),
        cases: record.cases.len(),
        added: 0,
        record_attached: true,
    };
    for part in runs::parts(record) {
        let (parent, added, attached) =
            export_part(&client, &done.experiment_id, &part, &record_json)?;
        done.parents.push(parent);
        done.added += added;
        done.record_attached &= attached;
    }
    Ok(done)
}

/// The id of experiment `name`, made where there is none.
fn experiment(client: &Client, name: &str) -> Result<String, MlflowError> {
    let doing = format!("finding experiment `{name}`");
    let find = || -> Result<Option<String>, MlflowError> {
        let found = client.get(
            "experiments/get-by-name",
            &[("experiment_name", name)],
            &doing,
        )?;
        Ok(found.and_then(|j| j["experiment"]["experiment_id"].as_str().map(str::to_owned)))
    };
    if let Some(id) = find()? {
        return Ok(id);
    }
    let made = client.post(
        "experiments/create",
        &json!({ "name": name }),
        &format!("making experiment `{name}`"),
    );
    match made {
        Ok(answer) => id_of(client, &answer["experiment_id"], &doing),
        // Another export may have made it meanwhile.
        Err(refused @ MlflowError::Refused { .. }) => find()?.ok_or(refused),
        Err(e) => Err(e),
    }
}

/// Logs one bench run: its parent run, unless a finished one is there,
/// and each of its cases not logged yet. The parent's id, how many cases
/// were logged, and whether the record went up as its artifact.
fn export_part(
    client: &Client,
    experiment_id: &str,
    part: &Part<'_>,
    record_json: &[u8],
) -> Result<(String, usize, bool), MlflowError> {
    let filter = format!("tags.`{}` = '{}'", runs::RUN_KEY, part.key);
    let found = search(
        client,
        experiment_id,
        &filter,
        &format!("finding run `{}`", part.name),
    )?;
    let (parent, artifact_uri) = match found.first() {
        Some(run) if finished(run) => {
            return Ok((info(run, "run_id"), 0, true));
        }
        Some(run) => (info(run, "run_id"), info(run, "artifact_uri")),
        None => {
            let doing = format!("starting run `{}`", part.name);
            let made = client.post(
                "runs/create",
                &json!({
                    "experiment_id": experiment_id,
                    "run_name": part.name,
                    "start_time": part.started_ms,
                    "tags": runs::tag_list(&part.tags),
                }),
                &doing,
            )?;
            let run = &made["run"];
            let id = id_of(client, &run["info"]["run_id"], &doing)?;
            (id, info(run, "artifact_uri"))
        }
    };
    let children = search(
        client,
        experiment_id,
        &format!("tags.`{}` = '{parent}'", runs::PARENT),
        &format!("listing the cases of run `{}`", part.name),
    )?;
    let mut added = 0;
    for case in &part.cases {
        let logged = children
            .iter()
            .find(|run| tag(run, runs::CASE) == Some(case.id.as_str()));
        match logged {
            Some(run) if finished(run) => continue,
            // Cut short by an earlier export: logged again from the start.
            Some(run) => {
                let id = info(run, "run_id");
                client.post(
                    "runs/delete",
                    &json!({ "run_id": id }),
                    &format!("deleting the half-logged case `{}`", case.id),
                )?;
            }
            None => {}
        }
        log_case(client, experiment_id, &parent, part.started_ms, case)?;
        added += 1;
    }
    for body in runs::batches(&parent, &[], &part.metrics, part.started_ms) {
        client.post(
            "runs/log-batch",
            &body,
            &format!("logging the figures of run `{}`", part.name),
        )?;
    }
    let attached = match artifact_uri.strip_prefix("mlflow-artifacts:/") {
        Some(path) => client.put_artifact(
            &format!("{}/record.json", path.trim_matches('/')),
            record_json,
            &format!("attaching the record to run `{}`", part.name),
        )?,
        None => false,
    };
    client.post(
        "runs/update",
        // The record keeps when the bench run started, not when each part
        // of it ended: the runs start and end there.
        &json!({ "run_id": parent, "status": "FINISHED", "end_time": part.started_ms }),
        &format!("finishing run `{}`", part.name),
    )?;
    Ok((parent, added, attached))
}

/// One case as a child run of `parent`: made, its params and metrics
/// logged, then finished (failed, for a failed case).
fn log_case(
    client: &Client,
    experiment_id: &str,
    parent: &str,
    started_ms: i64,
    case: &CaseRecord,
) -> Result<(), MlflowError> {
    let doing = format!("logging case `{}`", case.id);
    let made = client.post(
        "runs/create",
        &json!({
            "experiment_id": experiment_id,
            "run_name": case.id,
            "start_time": started_ms,
            "tags": runs::tag_list(&runs::case_tags(case, parent)),
        }),
        &doing,
    )?;
    let id = id_of(client, &made["run"]["info"]["run_id"], &doing)?;
    let (params, metrics) = (runs::params(case), runs::metrics(case));
    for body in runs::batches(&id, &params, &metrics, started_ms) {
        client.post("runs/log-batch", &body, &doing)?;
    }
    let status = if case.error.is_some() {
        "FAILED"
    } else {
        "FINISHED"
    };
    client.post(
        "runs/update",
        &json!({ "run_id": id, "status": status, "end_time": started_ms }),
        &doing,
    )?;
    Ok(())
}

/// Every active run of the experiment that `filter` picks, page by page.
fn search(
    client: &Client,
    experiment_id: &str,
    filter: &str,
    doing: &str,
) -> Result<Vec<Json>, MlflowError> {
    let mut found = Vec::new();
    let mut page: Option<String> = None;
    loop {
        let mut body = json!({
            "experiment_ids": [experiment_id],
            "filter": filter,
            "run_view_type": "ACTIVE_ONLY",
            "max_results": 1000,
        });
        if let Some(token) = &page {
            body["page_token"] = json!(token);
        }
        let answer = client.post("runs/search", &body, doing)?;
        if let Some(runs) = answer["runs"].as_array() {
            found.extend(runs.iter().cloned());
        }
        match answer["next_page_token"].as_str() {
            Some(token) if !token.is_empty() => page = Some(token.to_owned()),
            _ => return Ok(found),
        }
    }
}

/// A run's terminal state: every case it should have is logged.
fn finished(run: &Json) -> bool {
    matches!(run["info"]["status"].as_str(), Some("FINISHED" | "FAILED"))
}

fn info(run: &Json, field: &str) -> String {
    run["info"][field].as_str().unwrap_or_default().to_owned()
}

fn tag<'j>(run: &'j Json, key: &str) -> Option<&'j str> {
    run["data"]["tags"]
        .as_array()?
        .iter()
        .find(|t| t["key"] == key)?["value"]
        .as_str()
}

/// An id the server sent, or the error that it sent none.
fn id_of(client: &Client, id: &Json, doing: &str) -> Result<String, MlflowError> {
    id.as_str()
        .map(str::to_owned)
        .ok_or_else(|| unreachable_answer(client, doing, &format!("no id in {id}")))
}

fn unreachable_answer(client: &Client, doing: &str, answer: &str) -> MlflowError {
    MlflowError::NotMlflow {
        uri: client.uri().to_owned(),
        doing: doing.to_owned(),
        answer: answer.to_owned(),
    }
}
