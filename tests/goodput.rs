//! A streaming case's inputs and objectives: `request_input` takes each
//! request's prompt from a memo, `slo` judges each request's tokens, and
//! `goodput` searches the highest rate at which enough of them meet it.
//! The service sleeps its costs, so that a busy machine only lengthens
//! them: a prefill in proportion to the prompt, then a gap a token.

#[path = "support/alone.rs"]
mod alone;
#[path = "support/streamed.rs"]
mod streamed;

use std::sync::Mutex;
use std::time::Duration;

use alone::run;
use nnbench::Memo;
use streamed::streamed;

/// The prefill's cost a prompt token.
const PER_PROMPT_TOKEN: Duration = Duration::from_micros(500);
const SHORT: usize = 4;
const LONG: usize = 64;
const TOKENS: usize = 4;

/// Prompt lengths: one in four long.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct PromptLengths;

impl Memo for PromptLengths {
    type Value = Vec<usize>;
    fn compute(&self) -> nnbench::Result<Vec<usize>> {
        Ok((0..40)
            .map(|i| if i % 4 == 0 { LONG } else { SHORT })
            .collect())
    }
}

/// An answer to a prompt of `prompt` tokens: its prefill now, then a
/// token each `gap`.
fn answer(prompt: usize, gap: Duration) -> impl Iterator<Item = usize> {
    std::thread::sleep(PER_PROMPT_TOKEN * prompt as u32);
    (0..TOKENS).inspect(move |&token| {
        if token > 0 {
            std::thread::sleep(gap);
        }
    })
}

/// A long prompt's prefill (32 ms) always misses the first-token
/// objective, a short one's (2 ms) meets it unless the machine delays it
/// by 14 ms.
#[nnbench::product(prompts = [PromptLengths], stream, rate = [25], slo = "ttft <= 16ms",
                   warm_up_time = "100ms", measurement_time = "2s")]
#[allow(clippy::ptr_arg)] // A memo is passed as a reference to its value.
fn answers_by_prompt(prompts: &Vec<usize>) -> Vec<usize> {
    let Some(&prompt) = nnbench::request_input(prompts) else {
        return Vec::new();
    };
    answer(prompt, Duration::from_millis(1)).collect()
}

/// One server, which answers one request at a time: 2 ms of prefill, then
/// a token each millisecond, about 6 ms a request.
static SERVER: Mutex<()> = Mutex::new(());

#[nnbench::benchmark(stream, rate = [40], slo = "ttft <= 30ms", goodput = 0.9,
                     warm_up_time = "100ms", measurement_time = "1s")]
fn served_one_at_a_time() -> impl Iterator<Item = usize> {
    let server = SERVER.lock().unwrap_or_else(|e| e.into_inner());
    answer(SHORT, Duration::from_millis(1)).inspect(move |_| {
        let _held = &server;
    })
}

#[test]
fn each_request_takes_a_prompt_and_is_judged_against_the_objectives() {
    let (case, stream) = streamed("answers_by_prompt");
    // A delay of a hundredth of the first token's limit changes no
    // verdict: only a later one is the client's.
    let load = case.load.as_deref().expect("an open loop");
    assert_eq!(load.late_after_ns, Some(160e3));
    let inputs = stream.input_tokens.expect("the prompts' lengths");
    assert_eq!((inputs.p50, inputs.p99), (SHORT as f64, LONG as f64));
    // Whole passes through the list hold a long prompt in four.
    let quarter = (LONG + 3 * SHORT) as f64 / 4.0;
    assert!((inputs.mean - quarter).abs() < 0.2 * quarter, "{inputs:?}");
    let goodput = stream.goodput.expect("the objectives' record");
    assert_eq!(goodput.slo, "ttft <= 16ms");
    // No long prompt can meet it; the short ones do, on any but a
    // stalled machine.
    let long = stream.requests as f64 * (inputs.mean - SHORT as f64) / (LONG - SHORT) as f64;
    assert!(
        goodput.met as f64 <= stream.requests as f64 - long + 0.5,
        "{goodput:?} of {} requests",
        stream.requests
    );
    assert!(goodput.share > 0.4 && goodput.share < 0.9, "{goodput:?}");
    assert!(goodput.share_bound < goodput.share);
    assert!(goodput.per_s > 0.0 && goodput.per_s < 25.0, "{goodput:?}");
}

#[test]
fn the_search_finds_the_highest_rate_whose_goodput_holds() {
    let record = run("served_one_at_a_time");
    // A case at the rate listed, and the search's.
    assert_eq!(record.cases.len(), 2);
    let case = record
        .cases
        .iter()
        .find(|c| c.search.is_some())
        .expect("the search's case");
    assert!(case.error.is_none(), "{:?}", case.error);
    let search = case.search.as_deref().expect("a search");
    assert_eq!(search.goodput, Some(0.9));
    let load = case.load.as_deref().expect("the found step's open loop");
    assert_eq!(load.late_after_ns, Some(300e3));
    assert_eq!(search.target, "goodput >= 0.9 under ttft <= 30ms");
    // Each step judged on its goodput's bound.
    for step in &search.steps {
        let (share, bound) = (step.goodput.unwrap(), step.goodput_bound.unwrap());
        assert!(bound <= share, "{step:?}");
        assert_eq!(step.meets, bound >= 0.9 && !step.client_bound, "{step:?}");
    }
    // The server answers at most one request each 6 ms: 166 a second.
    let found = search.max_rate.expect("a rate found");
    assert!((40.0..166.0 * 1.1).contains(&found), "{search:?}");
    use nnbench::record::Figure;
    assert_eq!(case.figure(Figure::MaxGoodputRate), Some(found));
    assert_eq!(case.figure(Figure::MaxRate), None, "a latency search's");
    // The case's stream is the step's at the rate found, which held it.
    let stream = case.stream.as_deref().expect("the found step's stream");
    assert!(
        stream.goodput.as_ref().is_some_and(|g| g.holds(0.9)),
        "{stream:?}"
    );
}
