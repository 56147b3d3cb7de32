//! `nnbench export --format mlflow` against a real MLflow tracking server:
//! MLflow from PyPI (`eval "$(scripts/mlflow.sh)"` sets `NNBENCH_MLFLOW`),
//! started on a free local port with a SQLite store in a folder of its
//! own, and stopped when the test ends. The records are real runs of this
//! binary (`harness = false`) as a bench: a paired run of three cases
//! returning a struct of metrics, and the two shards of the same sweep
//! with their merge. Everything is read back through MLflow's REST API.
//!
//! An end-to-end test (`NNBENCH_E2E=1`); it skips without MLflow, unless
//! `NNBENCH_REQUIRE_MLFLOW` says it must run (as in CI).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value as Json, json};

#[derive(Serialize)]
struct Eval {
    accuracy: f64,
    loss: f64,
}

#[nnbench::product(n = [1, 2, 3], metric = "accuracy:higher, loss:lower")]
fn evaluate(n: u64) -> Eval {
    let spun = support::spin(20_000 * n, &[1, 2, 3, 4]);
    Eval {
        accuracy: 0.9 + n as f64 / 100.0,
        loss: 1.0 / (n + spun % 2) as f64,
    }
}

fn main() {
    support::main(
        "mlflow",
        support::checks!(
            a_paired_run_lands_as_a_parent_and_a_child_per_case_once,
            a_shard_and_its_merge_log_each_case_once,
        ),
    );
}

/// `NNBENCH_MLFLOW`'s `mlflow` command, where it runs.
fn mlflow() -> Option<PathBuf> {
    let mlflow = PathBuf::from(std::env::var_os("NNBENCH_MLFLOW")?);
    let runs = Command::new(&mlflow)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    runs.then_some(mlflow)
}

/// Whether the test runs: an end-to-end test, with MLflow here.
fn here(test: &str) -> Option<PathBuf> {
    if !support::end_to_end(test) {
        return None;
    }
    let mlflow = mlflow();
    support::here_or_skip(
        mlflow.is_some(),
        "MLflow",
        "NNBENCH_REQUIRE_MLFLOW",
        "eval \"$(scripts/mlflow.sh)\" makes one from PyPI",
    );
    mlflow
}

/// `mlflow server` on a free local port, stopped when dropped.
struct Server {
    child: Child,
    uri: String,
}

impl Server {
    fn start(mlflow: &Path, dir: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = {
            use std::os::unix::process::CommandExt as _;
            Command::new(mlflow)
                .arg("server")
                .arg("--backend-store-uri")
                .arg(format!("sqlite:///{}", dir.join("mlflow.db").display()))
                .arg("--artifacts-destination")
                .arg(dir.join("artifacts"))
                .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--workers", "1"])
                .stdout(std::fs::File::create(dir.join("server.log")).expect("log"))
                .stderr(std::fs::File::create(dir.join("server.err")).expect("log"))
                // Its own group, so that its workers stop with it.
                .process_group(0)
                .spawn()
                .expect("mlflow server starts")
        };
        let uri = format!("http://127.0.0.1:{port}");
        let server = Self { child, uri };
        let deadline = Instant::now() + Duration::from_secs(180);
        while ureq::get(format!("{}/health", server.uri)).call().is_err() {
            assert!(
                Instant::now() < deadline,
                "mlflow server did not answer in 3 minutes: {}",
                std::fs::read_to_string(dir.join("server.err")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
        server
    }

    fn stop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.child.wait();
    }

    /// `POST /api/2.0/mlflow/{path}`'s answer.
    fn post(&self, path: &str, body: &Json) -> Json {
        let mut answer = ureq::post(format!("{}/api/2.0/mlflow/{path}", self.uri))
            .send_json(body)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        answer.body_mut().read_json().expect("JSON")
    }

    fn experiment(&self, name: &str) -> String {
        let mut answer = ureq::get(format!(
            "{}/api/2.0/mlflow/experiments/get-by-name",
            self.uri
        ))
        .query("experiment_name", name)
        .call()
        .expect("the experiment is there");
        let json: Json = answer.body_mut().read_json().expect("JSON");
        json["experiment"]["experiment_id"]
            .as_str()
            .expect("an id")
            .to_owned()
    }

    /// The experiment's active runs that `filter` picks.
    fn runs(&self, experiment: &str, filter: &str) -> Vec<Json> {
        let answer = self.post(
            "runs/search",
            &json!({ "experiment_ids": [experiment], "filter": filter, "max_results": 1000 }),
        );
        answer["runs"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn tag<'j>(run: &'j Json, key: &str) -> Option<&'j str> {
    run["data"]["tags"]
        .as_array()?
        .iter()
        .find(|t| t["key"] == key)?["value"]
        .as_str()
}

fn metric(run: &Json, key: &str) -> Option<f64> {
    run["data"]["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["key"] == key)?["value"]
        .as_f64()
}

fn param<'j>(run: &'j Json, key: &str) -> Option<&'j str> {
    run["data"]["params"]
        .as_array()?
        .iter()
        .find(|p| p["key"] == key)?["value"]
        .as_str()
}

/// This binary as the bench, in target folder `target`, with `args`.
fn bench(target: &Path, args: &[&str]) -> Output {
    let output = support::bench_binary()
        .env("CARGO_TARGET_DIR", target)
        .args(["--bench", "--quiet"])
        .args(args)
        .arg("evaluate/")
        .output()
        .expect("the bench runs");
    assert!(
        output.status.code().is_some_and(|c| c <= 1),
        "{}",
        support::said(&output)
    );
    output
}

fn export(record: &Path, uri: &str, experiment: &str) -> Output {
    support::tool()
        .args(["export", "--format", "mlflow"])
        .arg(record)
        .args(["--tracking-uri", uri, "--experiment", experiment])
        .env_remove("MLFLOW_TRACKING_URI")
        .output()
        .expect("nnbench runs")
}

fn exported(output: &Output) -> String {
    let said = support::said(output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn a_paired_run_lands_as_a_parent_and_a_child_per_case_once() {
    let Some(mlflow) = here("a_paired_run_lands_as_a_parent_and_a_child_per_case_once") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let base = support::build_script(dir.path(), "base", &[], &[]);
    let out = dir.path().join("paired.json");
    bench(
        dir.path(),
        &[
            "--paired",
            base.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let mut record = nnbench::RunRecord::read(&out).unwrap();
    assert_eq!(record.cases.len(), 3);
    assert!(record.cases.iter().all(|c| c.paired.is_some()));
    // A family's capacity, as a sweep with `scaling` records it.
    let mut capacity = nnbench::record::CapacityRecord::default();
    capacity.family = "train".into();
    capacity.n = 3900.0;
    capacity.interval = [3700.0, 4100.0];
    record.capacity.push(capacity);
    record.write(&out).unwrap();

    let mut server = Server::start(&mlflow, dir.path());
    let said = exported(&export(&out, &server.uri, "paired sweeps"));
    assert!(said.contains("3 logged now, 0 there already"), "{said}");
    let experiment = server.experiment("paired sweeps");
    let parents = server.runs(&experiment, "tags.`nnbench.run_key` != ''");
    assert_eq!(parents.len(), 1, "{parents:#?}");
    let parent = &parents[0];
    let parent_id = parent["info"]["run_id"].as_str().unwrap();
    assert_eq!(parent["info"]["status"], "FINISHED");
    assert_eq!(tag(parent, "nnbench.bench"), Some(record.run.as_str()));
    assert_eq!(metric(parent, "capacity.train"), Some(3900.0));
    assert_eq!(metric(parent, "capacity.train.high"), Some(4100.0));
    let commit = record.context.git.as_ref().map(|g| g.commit.as_str());
    assert_eq!(tag(parent, "mlflow.source.git.commit"), commit);
    assert_eq!(
        tag(parent, "nnbench.rustc"),
        record.context.rustc.as_deref()
    );
    let artifacts: Json = ureq::get(format!("{}/api/2.0/mlflow/artifacts/list", server.uri))
        .query("run_id", parent_id)
        .call()
        .expect("the parent's artifacts")
        .body_mut()
        .read_json()
        .expect("JSON");
    assert!(
        artifacts["files"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f["path"] == "record.json")),
        "{artifacts}"
    );

    for case in &record.cases {
        let filter = format!("tags.`nnbench.case` = '{}'", case.id);
        let children = server.runs(&experiment, &filter);
        assert_eq!(children.len(), 1, "{}: {children:#?}", case.id);
        let child = &children[0];
        assert_eq!(tag(child, "mlflow.parentRunId"), Some(parent_id));
        assert_eq!(child["info"]["status"], "FINISHED");
        let n = case.params["n"].to_string();
        assert_eq!(param(child, "n"), Some(n.as_str()));
        for field in ["accuracy", "loss"] {
            let path = format!("value.{field}");
            let expected = nnbench::record::field(&case.value, field).and_then(Json::as_f64);
            assert_eq!(metric(child, &path), expected, "{}: {path}", case.id);
        }
        assert_eq!(metric(child, "time"), Some(case.time.median_ns));
        let paired = case.paired.as_ref().unwrap();
        assert_eq!(metric(child, "paired.estimate"), Some(paired.estimate));
        assert!(tag(child, "nnbench.paired.verdict").is_some());
    }

    // Again: nothing new.
    let said = exported(&export(&out, &server.uri, "paired sweeps"));
    assert!(said.contains("0 logged now, 3 there already"), "{said}");
    assert_eq!(server.runs(&experiment, "").len(), 4);

    // An export cut short: its parent still running, a case half-logged,
    // a case never logged. The next export completes it.
    let children = server.runs(
        &experiment,
        &format!("tags.mlflow.parentRunId = '{parent_id}'"),
    );
    let (first, second) = (
        children[0]["info"]["run_id"].as_str().unwrap(),
        children[1]["info"]["run_id"].as_str().unwrap(),
    );
    server.post(
        "runs/update",
        &json!({ "run_id": parent_id, "status": "RUNNING" }),
    );
    server.post(
        "runs/update",
        &json!({ "run_id": first, "status": "RUNNING" }),
    );
    server.post("runs/delete", &json!({ "run_id": second }));
    let said = exported(&export(&out, &server.uri, "paired sweeps"));
    assert!(said.contains("2 logged now, 1 there already"), "{said}");
    let children = server.runs(
        &experiment,
        &format!("tags.mlflow.parentRunId = '{parent_id}'"),
    );
    assert_eq!(children.len(), 3, "{children:#?}");
    assert!(children.iter().all(|c| c["info"]["status"] == "FINISHED"));

    // A server that is gone: exit 2, naming it.
    let uri = server.uri.clone();
    server.stop();
    let output = export(&out, &uri, "paired sweeps");
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(said.contains(&uri), "{said}");
}

fn a_shard_and_its_merge_log_each_case_once() {
    let Some(mlflow) = here("a_shard_and_its_merge_log_each_case_once") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let shards = dir.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    for k in 1..=2 {
        let out = shards.join(format!("shard-{k}.json"));
        bench(
            dir.path(),
            &[
                "--once",
                "--shard",
                &format!("{k}/2"),
                "--out",
                out.to_str().unwrap(),
            ],
        );
    }
    let merged = dir.path().join("merged.json");
    let output = support::tool()
        .arg("merge")
        .arg(&shards)
        .arg("-o")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::said(&output));

    let server = Server::start(&mlflow, dir.path());
    let first = shards.join("shard-1.json");
    let shard_cases = nnbench::RunRecord::read(&first).unwrap().cases.len();
    let said = exported(&export(&first, &server.uri, "shards"));
    assert!(
        said.contains(&format!("{shard_cases} logged now")),
        "{said}"
    );
    let said = exported(&export(&merged, &server.uri, "shards"));
    assert!(
        said.contains(&format!(
            "{} logged now, {shard_cases} there already",
            3 - shard_cases
        )),
        "{said}"
    );
    let experiment = server.experiment("shards");
    let parents = server.runs(&experiment, "tags.`nnbench.run_key` != ''");
    assert_eq!(parents.len(), 2, "a parent run per shard: {parents:#?}");
    let cases = server.runs(&experiment, "tags.`nnbench.case` != ''");
    let mut ids: Vec<&str> = cases
        .iter()
        .filter_map(|c| tag(c, "nnbench.case"))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["evaluate/n=1", "evaluate/n=2", "evaluate/n=3"]);
}
