//! Threads counting words into one shared table, three ways: one lock
//! around a map, sixteen locks around sixteen maps (a word's shard by its
//! id), and an atomic counter per word. Swept over 1, 2 and 4 threads,
//! the table shows the time per call of a round (from the threads' start
//! together until the slowest is done) and how far apart the threads
//! were: the one lock makes every thread wait for the others.
//!
//! `cargo bench --bench shared_counts`

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many distinct words there are.
const WORDS: u32 = 4096;

/// How the table is laid out.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum Layout {
    OneLock,
    SixteenLocks,
    Atomics,
}

/// A table of counts per word, shared by the threads that count into it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table(Layout);

enum Counts {
    OneLock(Mutex<HashMap<u32, u64>>),
    SixteenLocks(Vec<Mutex<HashMap<u32, u64>>>),
    Atomics(Vec<AtomicU64>),
}

impl nnbench::Memo for Table {
    type Value = Counts;

    fn compute(&self) -> nnbench::Result<Counts> {
        Ok(match self.0 {
            Layout::OneLock => Counts::OneLock(Mutex::default()),
            Layout::SixteenLocks => {
                Counts::SixteenLocks((0..16).map(|_| Mutex::default()).collect())
            }
            Layout::Atomics => Counts::Atomics((0..WORDS).map(|_| AtomicU64::new(0)).collect()),
        })
    }
}

impl Counts {
    fn add(&self, word: u32) {
        match self {
            Counts::OneLock(map) => {
                *map.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(word)
                    .or_default() += 1;
            }
            Counts::SixteenLocks(shards) => {
                let shard = &shards[word as usize % shards.len()];
                *shard
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry(word)
                    .or_default() += 1;
            }
            Counts::Atomics(counters) => {
                counters[word as usize].fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A text of `len` word ids, the common ones far more frequent, as in
/// natural language.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Text {
    len: usize,
}

impl nnbench::Memo for Text {
    type Value = Vec<u32>;

    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        let mut seed = 0x2545_f491_u32;
        Ok((0..self.len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                // The square of a uniform draw favours small ids.
                let u = (seed % WORDS) as u64;
                (u * u / u64::from(WORDS)) as u32
            })
            .collect())
    }
}

/// Counts every word of the text into the shared table.
#[nnbench::product(
    table = [Table(Layout::OneLock), Table(Layout::SixteenLocks), Table(Layout::Atomics)],
    text = [Text { len: 2048 }],
    threads = [1, 2, 4],
    timing = sampled,
)]
fn count(table: &Counts, text: &[u32]) {
    for &word in text {
        table.add(word);
    }
}

nnbench::main!();
