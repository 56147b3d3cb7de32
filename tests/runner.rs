//! Selection, order, memo lifetimes and failure isolation of a run.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use nnbench::record::Stage;
use nnbench::{Memo, Params, Runner, State};

fn quiet() -> Runner {
    Runner::new().quiet(true).test_mode(true)
}

// --- selection --------------------------------------------------------------

#[nnbench::product(n = [1, 2, 3])]
fn select_alpha(n: u8) -> u8 {
    n
}

#[nnbench::benchmark(tags = ["gpu"])]
fn select_beta() {}

#[nnbench::benchmark(tags = ["cpu", "slow"])]
fn select_gamma() {}

#[test]
fn filters_match_substrings_and_any_of_several() {
    let ids = quiet()
        .filter("select_alpha/n=2")
        .filter("select_beta")
        .list();
    assert_eq!(ids, ["select_alpha/n=2", "select_beta"]);
}

#[test]
fn exact_matches_whole_ids_only() {
    assert!(
        quiet()
            .filter("select_alpha/n=")
            .exact(true)
            .list()
            .is_empty()
    );
    assert_eq!(
        quiet().filter("select_beta").exact(true).list(),
        ["select_beta"]
    );
}

#[test]
fn skip_leaves_out_matching_cases() {
    let ids = quiet().filter("select_").skip("n=1").skip("beta").list();
    assert_eq!(
        ids,
        ["select_alpha/n=2", "select_alpha/n=3", "select_gamma"]
    );
}

#[test]
fn tags_select_any_of_them() {
    assert_eq!(
        quiet().filter("select_").tag("slow").list(),
        ["select_gamma"]
    );
    assert_eq!(
        quiet().filter("select_").tag("gpu").tag("cpu").list(),
        ["select_beta", "select_gamma"]
    );
    assert!(quiet().filter("select_").tag("tpu").list().is_empty());
}

#[test]
fn flags_parse_like_a_bench_binary() {
    let runner = Runner::from_args([
        "select_", "--skip", "alpha", "--tag", "cpu", "--quiet", "--bench",
    ])
    .unwrap();
    assert_eq!(runner.list(), ["select_gamma"]);
    let err = Runner::from_args(["--frobnicate"]).unwrap_err();
    assert!(err.to_string().contains("--frobnicate"), "{err}");
}

// --- memo order and eviction ------------------------------------------------

/// Records every compute and every drop of its values.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model(u8);

static MODEL_COMPUTES: Mutex<Vec<u8>> = Mutex::new(Vec::new());
static MODELS_ALIVE: AtomicUsize = AtomicUsize::new(0);

struct Weights(u8);

impl Drop for Weights {
    fn drop(&mut self) {
        MODELS_ALIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Memo for Model {
    type Value = Weights;
    fn compute(&self) -> nnbench::Result<Weights> {
        MODEL_COMPUTES.lock().unwrap().push(self.0);
        MODELS_ALIVE.fetch_add(1, Ordering::SeqCst);
        Ok(Weights(self.0))
    }
    fn size_of(&self, _: &Weights) -> Option<u64> {
        Some(64 << 20)
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Dataset(u8);

impl Memo for Dataset {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![self.0; 16])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

static PEAK_ALIVE: AtomicUsize = AtomicUsize::new(0);

#[nnbench::product(data = [Dataset(1), Dataset(2)], model = [Model(1), Model(2), Model(3)])]
fn data_by_model(data: &[u8], model: &Weights) -> u32 {
    PEAK_ALIVE.fetch_max(MODELS_ALIVE.load(Ordering::SeqCst), Ordering::SeqCst);
    u32::from(data[0]) * 10 + u32::from(model.0)
}

#[test]
fn a_data_by_model_product_computes_each_model_once_and_holds_one_at_a_time() {
    let record = quiet().filter("data_by_model/").run().unwrap();
    assert_eq!(record.failed(), 0);
    assert_eq!(record.cases.len(), 6);

    let mut computes = MODEL_COMPUTES.lock().unwrap().clone();
    computes.sort();
    assert_eq!(computes, [1, 2, 3], "each model computed exactly once");
    assert_eq!(
        PEAK_ALIVE.load(Ordering::SeqCst),
        1,
        "one model resident at a time"
    );
    assert_eq!(
        MODELS_ALIVE.load(Ordering::SeqCst),
        0,
        "evicted models are freed"
    );
    for memo in [Model(1), Model(2), Model(3)] {
        assert!(!nnbench::memo::contains(&memo));
    }
    assert!(!nnbench::memo::contains(&Dataset(1)) && !nnbench::memo::contains(&Dataset(2)));

    // The cases that share a model ran one after the other.
    let models: Vec<u64> = record
        .cases
        .iter()
        .map(|c| c.value.as_u64().unwrap() % 10)
        .collect();
    assert_eq!(models, [1, 1, 2, 2, 3, 3]);
    // The first case of each model computed it (and the first of each dataset).
    let misses: Vec<u64> = record.cases.iter().map(|c| c.memo.misses).collect();
    assert_eq!(misses, [2, 1, 1, 0, 1, 0]);
    assert_eq!(record.cases[1].memo.evicted, ["Model(1)"]);
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Kept(u8);

impl Memo for Kept {
    type Value = u8;
    fn compute(&self) -> nnbench::Result<u8> {
        Ok(self.0)
    }
}

#[nnbench::product(k = [Kept(1), Kept(2)])]
fn keep_memos_case(k: &u8) -> u8 {
    *k
}

#[test]
fn keep_memos_leaves_them_in_the_cache() {
    let record = quiet()
        .filter("keep_memos_case/")
        .keep_memos(true)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0);
    assert!(nnbench::memo::contains(&Kept(1)) && nnbench::memo::contains(&Kept(2)));
    assert!(record.cases.iter().all(|c| c.memo.evicted.is_empty()));
    assert!(nnbench::memo::evict(&Kept(1)) && nnbench::memo::evict(&Kept(2)));
}

// --- hooks ------------------------------------------------------------------

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Hooked(u8);

impl Memo for Hooked {
    type Value = u8;
    fn compute(&self) -> nnbench::Result<u8> {
        Ok(self.0)
    }
}

static HOOK_LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn log_setup(state: &State, params: &Params) {
    let memo = params.memo::<Hooked>("m").map(|m| m.0);
    let batch = params.get::<usize>("batch").copied();
    HOOK_LOG.lock().unwrap().push(format!(
        "setup {} {}/{} {memo:?} {batch:?}",
        state.family, state.family_index, state.family_size
    ));
}

fn evict_in_teardown(state: &State, params: &Params) -> nnbench::Result<()> {
    let m = params
        .memo::<Hooked>("m")
        .ok_or_else(|| nnbench::Error::msg("no memo m"))?;
    let evicted = nnbench::memo::evict(m);
    HOOK_LOG
        .lock()
        .unwrap()
        .push(format!("teardown {} evicted={evicted}", state.name));
    Ok(())
}

#[nnbench::product(m = [Hooked(7)], batch = [32, 64], setup = log_setup, teardown = evict_in_teardown)]
fn hooked(m: &u8, batch: usize) -> usize {
    usize::from(*m) * batch
}

#[test]
fn hooks_see_the_state_and_params_and_teardown_can_evict() {
    let record = quiet().filter("hooked/").run().unwrap();
    assert_eq!(record.failed(), 0);
    assert_eq!(
        *HOOK_LOG.lock().unwrap(),
        [
            "setup hooked 0/2 Some(7) Some(32)",
            "teardown hooked/m=Hooked(7),batch=32 evicted=true",
            "setup hooked 1/2 Some(7) Some(64)",
            "teardown hooked/m=Hooked(7),batch=64 evicted=true",
        ]
    );
    // Evicted by the teardown after the first case, computed again for the second.
    assert_eq!(record.cases[0].memo.misses, 1);
    assert_eq!(record.cases[1].memo.misses, 1);
    assert_eq!(record.cases[0].memo.evicted, ["Hooked(7)"]);
}

// --- failures ---------------------------------------------------------------

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Broken;

static BROKEN_COMPUTES: AtomicUsize = AtomicUsize::new(0);

impl Memo for Broken {
    type Value = u8;
    fn compute(&self) -> nnbench::Result<u8> {
        BROKEN_COMPUTES.fetch_add(1, Ordering::SeqCst);
        let bytes = std::fs::read("/no/such/weights.bin")?;
        Ok(bytes[0])
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Panicky;

impl Memo for Panicky {
    type Value = u8;
    fn compute(&self) -> nnbench::Result<u8> {
        panic!("checkpoint is corrupt")
    }
}

static TEARDOWNS: AtomicUsize = AtomicUsize::new(0);

fn count_teardown(_: &State, _: &Params) {
    TEARDOWNS.fetch_add(1, Ordering::SeqCst);
}

#[nnbench::product(m = [Broken], n = [1, 2], teardown = count_teardown)]
fn fail_memo_error(m: &u8, n: u8) -> u8 {
    m + n
}

#[nnbench::product(m = [Panicky])]
fn fail_memo_panic(m: &u8) -> u8 {
    *m
}

#[nnbench::benchmark(teardown = count_teardown)]
fn fail_call_panic() -> u8 {
    panic!("index out of bounds in layer 3")
}

fn failing_setup(_: &State, _: &Params) -> Result<(), String> {
    Err("no GPU here".into())
}

#[nnbench::benchmark(setup = failing_setup, teardown = count_teardown)]
fn fail_setup() -> u8 {
    unreachable!("the call is skipped when setup fails")
}

fn panicking_teardown(_: &State, _: &Params) {
    panic!("teardown exploded")
}

#[nnbench::benchmark(teardown = panicking_teardown)]
fn fail_teardown() -> u8 {
    3
}

#[nnbench::benchmark]
fn fail_zz_survivor() -> u8 {
    42
}

#[test]
fn failures_are_recorded_per_case_and_the_run_goes_on() {
    let record = quiet().filter("fail_").run().unwrap();
    assert_eq!(record.cases.len(), 7);
    let error = |id: &str| {
        record
            .case(id)
            .unwrap()
            .error
            .clone()
            .unwrap_or_else(|| panic!("{id} passed"))
    };

    for id in [
        "fail_memo_error/m=Broken,n=1",
        "fail_memo_error/m=Broken,n=2",
    ] {
        let e = error(id);
        assert_eq!(e.stage, Stage::Memo);
        assert_eq!(e.message, "memo Broken failed");
        assert!(e.causes[0].contains("No such file"), "{:?}", e.causes);
    }
    assert_eq!(
        BROKEN_COMPUTES.load(Ordering::SeqCst),
        1,
        "the failure is not paid twice"
    );

    let e = error("fail_memo_panic/m=Panicky");
    assert_eq!(
        (e.stage, e.message.as_str()),
        (Stage::Memo, "memo Panicky panicked: checkpoint is corrupt")
    );

    let e = error("fail_call_panic");
    assert_eq!(e.stage, Stage::Call);
    assert!(e.message.contains("index out of bounds in layer 3"));

    let e = error("fail_setup");
    assert_eq!((e.stage, e.message.as_str()), (Stage::Setup, "no GPU here"));

    let case = record.case("fail_teardown").unwrap();
    assert_eq!(case.value, 3, "the call's value is kept");
    assert_eq!(case.error.as_ref().unwrap().stage, Stage::Teardown);

    assert_eq!(
        TEARDOWNS.load(Ordering::SeqCst),
        4,
        "teardown runs after every failure"
    );
    assert!(
        !nnbench::memo::contains(&Broken),
        "a failed memo is evicted after its last use too"
    );
    assert_eq!(record.case("fail_zz_survivor").unwrap().value, 42);
    assert_eq!(record.failed(), 6);
}

// --- records ----------------------------------------------------------------

#[nnbench::product(x = [1.5, 2.5])]
fn recorded(x: f64) -> f64 {
    x * 2.0
}

#[test]
fn records_are_written_as_json_and_ndjson_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("nested/run.json");
    let record = quiet()
        .filter("recorded/")
        .out(&json)
        .name("unit")
        .run()
        .unwrap();
    let back = nnbench::RunRecord::read(&json).unwrap();
    assert_eq!(back, record);
    assert_eq!(back.run, "unit");
    assert_eq!(back.schema, 2);
    assert_eq!(back.cases[1].value, 5.0);
    assert!(back.cases[0].memory.rss_before_bytes.is_some());

    let ndjson = dir.path().join("run.ndjson");
    quiet().filter("recorded/").out(&ndjson).run().unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&ndjson)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "recorded/x=1.5");

    let latest = dir.path().join("latest");
    quiet()
        .filter("recorded/")
        .latest_dir(&latest)
        .run()
        .unwrap();
    assert!(latest.join("latest.json").is_file());
}

static BAD_OUT_RUNS: AtomicUsize = AtomicUsize::new(0);

#[nnbench::benchmark]
fn bad_out_target() {
    BAD_OUT_RUNS.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn a_bad_output_extension_is_refused_before_anything_runs() {
    let err = quiet()
        .filter("bad_out_target")
        .out("run.csv")
        .run()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("run.csv: the output file must end in .json or .ndjson"),
        "{err}"
    );
    assert_eq!(BAD_OUT_RUNS.load(Ordering::SeqCst), 0);
}

// --- a memo shared across threads -------------------------------------------

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Shared;

impl Memo for Shared {
    type Value = Arc<str>;
    fn compute(&self) -> nnbench::Result<Arc<str>> {
        Ok(Arc::from("shared"))
    }
}

#[nnbench::product(a = [Shared], b = [Shared])]
fn same_memo_twice(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b)
}

#[test]
fn one_memo_in_two_parameters_is_one_entry() {
    let record = quiet().filter("same_memo_twice/").run().unwrap();
    assert_eq!(record.cases[0].value, true);
    assert_eq!(
        (record.cases[0].memo.misses, record.cases[0].memo.hits),
        (1, 1)
    );
    assert!(!nnbench::memo::contains(&Shared));
}

// --- memory of memos ----------------------------------------------------------

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Held(u8);

static HELD_ALIVE: AtomicUsize = AtomicUsize::new(0);

struct HeldValue;

impl Drop for HeldValue {
    fn drop(&mut self) {
        HELD_ALIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Memo for Held {
    type Value = HeldValue;
    fn compute(&self) -> nnbench::Result<HeldValue> {
        HELD_ALIVE.fetch_add(1, Ordering::SeqCst);
        Ok(HeldValue)
    }
    fn size_of(&self, _: &HeldValue) -> Option<u64> {
        Some(3 << 20)
    }
}

static KEPT_BY_HOOK: Mutex<Vec<Arc<HeldValue>>> = Mutex::new(Vec::new());

/// Keeps a reference to memo 2's value: its eviction cannot free it.
fn keep_a_reference(_: &State, params: &Params) {
    if let Some(memo) = params.memo::<Held>("held").filter(|m| m.0 == 2) {
        KEPT_BY_HOOK
            .lock()
            .unwrap()
            .push(nnbench::memo::resolve(memo).unwrap());
    }
}

#[nnbench::product(held = [Held(1), Held(2)], twice = [1, 2], teardown = keep_a_reference)]
fn held_memos(held: &HeldValue, twice: u8) -> u8 {
    let _ = held;
    twice
}

#[test]
fn an_evicted_value_still_referenced_is_reported_and_others_are_freed() {
    let record = quiet().filter("held_memos/").run().unwrap();
    assert_eq!(record.failed(), 0);
    let leaks: Vec<_> = record
        .cases
        .iter()
        .flat_map(|c| c.memo.leaked.clone())
        .collect();
    assert_eq!(leaks.len(), 1, "{leaks:?}");
    assert_eq!(leaks[0].memo, "Held(2)");
    let warned: Vec<&String> = record.cases.iter().flat_map(|c| &c.warnings).collect();
    assert_eq!(
        warned.len(),
        1,
        "the leak is a warning of its case: {warned:?}"
    );
    assert!(
        warned[0].starts_with("memo Held(2) was evicted while 2 other references"),
        "{warned:?}"
    );
    assert_eq!(
        leaks[0].references, 2,
        "the hook kept two Arcs, one per case"
    );
    assert_eq!(
        HELD_ALIVE.load(Ordering::SeqCst),
        1,
        "Held(1) was freed on eviction, Held(2) was not"
    );
    KEPT_BY_HOOK.lock().unwrap().clear();
    assert_eq!(HELD_ALIVE.load(Ordering::SeqCst), 0);

    // The second case of each memo starts with that memo resident.
    let resident: Vec<u64> = record
        .cases
        .iter()
        .map(|c| c.memory.memo_resident_bytes)
        .collect();
    assert!(
        resident[1] >= 3 << 20 && resident[3] >= 3 << 20,
        "{resident:?}"
    );
}

#[test]
fn without_a_gpu_the_context_says_why_and_figures_are_absent() {
    let record = quiet().filter("select_beta").run().unwrap();
    let gpu = &record.context.gpu;
    let case = &record.cases[0];
    if gpu.available {
        assert!(gpu.method.is_some() && !gpu.devices.is_empty());
        // A GPU's energy is counted, or the record says why not.
        let energy = case.energy.as_deref().expect("an energy entry");
        assert!(
            energy.method.is_some() == energy.joules.is_some()
                && energy.joules.is_some() != energy.reason.is_some(),
            "{energy:?}"
        );
    } else {
        assert!(gpu.reason.as_deref().is_some_and(|r| !r.is_empty()));
        assert_eq!(case.memory.gpu_peak_bytes, None);
        assert_eq!(case.memory.gpu_method, None);
        assert_eq!(case.energy, None, "no GPU, no energy entry");
        let json = serde_json::to_value(case).unwrap();
        assert!(json.get("energy").is_none(), "absent, not null: {json}");
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Reported;

impl Memo for Reported {
    type Value = [u8; 4];
    fn compute(&self) -> nnbench::Result<[u8; 4]> {
        Ok([0; 4])
    }
    fn size_of(&self, _: &[u8; 4]) -> Option<u64> {
        Some(4)
    }
}

#[test]
fn the_cache_report_lists_memo_types() {
    nnbench::memo::resolve(&Reported).unwrap();
    nnbench::memo::resolve(&Reported).unwrap();
    let report = nnbench::memo::summary();
    let row = report
        .lines()
        .find(|l| l.contains("runner::Reported"))
        .unwrap_or_else(|| panic!("{report}"));
    let cells: Vec<&str> = row
        .split(['│', '┆'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cells,
        ["runner::Reported", "1", "4 B", "1", "1", "0", "1", "0", "0"]
    );
    nnbench::memo::evict(&Reported);
}

#[test]
fn a_setting_the_run_cannot_honour_is_a_warning_of_the_run() {
    let record = quiet()
        .filter("select_beta")
        .save_baseline("main")
        .run()
        .unwrap();
    assert_eq!(record.warnings.len(), 1, "{:?}", record.warnings);
    assert!(
        record.warnings[0].contains("baseline `main`") && record.warnings[0].contains("test mode"),
        "{:?}",
        record.warnings
    );
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["warnings"][0], record.warnings[0].as_str());
    assert_eq!(
        json["cases"][0].get("warnings"),
        None,
        "a case without warnings has none written"
    );
}

static UNWRITTEN_CALLS: AtomicUsize = AtomicUsize::new(0);

#[nnbench::benchmark]
fn never_written() -> usize {
    UNWRITTEN_CALLS.fetch_add(1, Ordering::Relaxed)
}

#[test]
fn an_out_file_that_cannot_be_written_fails_before_any_case_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let out = file.join("run.json");
    let error = quiet()
        .filter("never_written")
        .test_mode(true)
        .out(&out)
        .run()
        .expect_err("the record cannot be written there");
    assert_eq!(UNWRITTEN_CALLS.load(Ordering::Relaxed), 0, "no case ran");
    let message = format!("{error:#}");
    assert!(message.starts_with(&out.display().to_string()), "{message}");
    // The cause is said once.
    let cause = message.split(": ").nth(1).unwrap().to_owned();
    assert_eq!(message.matches(&cause).count(), 1, "{message}");
}
