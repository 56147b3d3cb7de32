//! The global cache as a whole: its own test binary, since `clear` and
//! `len` see every entry of the process.

use std::sync::atomic::{AtomicUsize, Ordering};

use nnbench::{Memo, Runner};

static COMPUTES: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Layer(u8);

impl Memo for Layer {
    type Value = Vec<f32>;
    fn compute(&self) -> nnbench::Result<Vec<f32>> {
        COMPUTES.fetch_add(1, Ordering::SeqCst);
        Ok(vec![f32::from(self.0); 1024])
    }
    fn size_of(&self, value: &Vec<f32>) -> Option<u64> {
        Some(std::mem::size_of_val(value.as_slice()) as u64)
    }
}

#[nnbench::product(model = [Layer(1), Layer(2), Layer(3)], scale = [1.0f32, 2.0])]
fn layer_sum(model: &[f32], scale: f32) -> f32 {
    model.iter().sum::<f32>() * scale
}

#[test]
fn the_cache_is_empty_after_a_run_and_len_clear_and_stats_agree() {
    assert!(nnbench::memo::is_empty());
    let record = Runner::new().test_mode(true).quiet(true).run().unwrap();
    assert_eq!(record.failed(), 0);
    assert_eq!(record.cases.len(), 6);
    assert_eq!(COMPUTES.load(Ordering::SeqCst), 3);
    assert_eq!(record.memo.misses, 3);
    assert_eq!(record.memo.hits, 3);
    assert_eq!(record.memo.evictions, 3);
    assert_eq!(record.memo.entries_at_end, 0);
    assert_eq!(record.memo.resident_bytes_at_end, 0);
    assert!(nnbench::memo::is_empty());

    for n in 1..=3 {
        nnbench::memo::resolve(&Layer(n)).unwrap();
    }
    assert_eq!(nnbench::memo::len(), 3);
    assert_eq!(nnbench::memo::stats().resident_bytes, 3 * 4096);
    assert_eq!(nnbench::memo::clear(), 3);
    assert!(nnbench::memo::is_empty());
    assert_eq!(nnbench::memo::stats().entries, 0);
}
