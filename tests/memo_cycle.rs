//! A memo whose compute resolves itself, directly or through other memos,
//! fails with the cycle named; it never hangs.

use std::sync::mpsc;
use std::time::Duration;

use nnbench::{Memo, Runner};

/// Runs `f` on its own thread and fails the test if it has not returned
/// within half a minute: a hang must not hang the test suite.
fn within_time<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("resolving a memo cycle hung")
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Tokenizer;

impl Memo for Tokenizer {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        // A vocabulary "derived from itself": a bug a refactor can make.
        let vocabulary = nnbench::memo::resolve(&Tokenizer)?;
        Ok(vocabulary.to_vec())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Encoder(u8);

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Decoder(u8);

impl Memo for Encoder {
    type Value = Vec<f32>;
    fn compute(&self) -> nnbench::Result<Vec<f32>> {
        // Tied weights, each side built from the other.
        let decoder = nnbench::memo::resolve(&Decoder(self.0))?;
        Ok(decoder.to_vec())
    }
}

impl Memo for Decoder {
    type Value = Vec<f32>;
    fn compute(&self) -> nnbench::Result<Vec<f32>> {
        let encoder = nnbench::memo::resolve(&Encoder(self.0))?;
        Ok(encoder.to_vec())
    }
}

#[nnbench::product(encoder = [Encoder(2)], timing = once)]
fn tied(encoder: &[f32]) -> usize {
    encoder.len()
}

#[test]
fn a_memo_that_resolves_itself_fails_naming_the_cycle() {
    let error = within_time(|| nnbench::memo::resolve(&Tokenizer).unwrap_err());
    let text = format!("{error:#}");
    assert!(text.contains("memo Tokenizer failed"), "{text}");
    assert!(
        text.contains("memo cycle: Tokenizer -> Tokenizer"),
        "{text}"
    );
    // The failure is kept: the next resolve fails at once, the same way.
    let again = within_time(|| nnbench::memo::resolve(&Tokenizer).unwrap_err());
    assert!(format!("{again:#}").contains("Tokenizer -> Tokenizer"));
}

#[test]
fn a_cycle_through_another_memo_names_both_in_the_case_that_asked() {
    let record = within_time(|| {
        Runner::new()
            .filter("tied/")
            .quiet(true)
            .memory(false)
            .run()
            .unwrap()
    });
    let case = &record.cases[0];
    let error = case.error.as_ref().expect("the case fails");
    let text = format!("{} {}", error.message, error.causes.join(" "));
    assert!(
        text.contains("memo cycle: Encoder(2) -> Decoder(2) -> Encoder(2)"),
        "{text}"
    );
}

#[test]
fn two_threads_resolving_the_same_cycle_both_fail() {
    let handles: Vec<_> = (0..2)
        .map(|_| std::thread::spawn(|| nnbench::memo::resolve(&Encoder(7)).is_err()))
        .collect();
    let failed = within_time(move || {
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert_eq!(failed, [true, true]);
}
