use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use super::*;

/// Counts computes and live values per test, through its own statics.
macro_rules! counted_memo {
    ($name:ident, $computes:ident, $alive:ident) => {
        static $computes: AtomicUsize = AtomicUsize::new(0);
        static $alive: AtomicUsize = AtomicUsize::new(0);

        #[derive(Clone, Debug, Hash, PartialEq, Eq)]
        struct $name(u32);

        impl Memo for $name {
            type Value = Tracked;
            fn compute(&self) -> crate::Result<Tracked> {
                $computes.fetch_add(1, Ordering::SeqCst);
                // Slow enough that concurrent resolves overlap.
                thread::sleep(Duration::from_millis(20));
                Ok(Tracked::new(&$alive, self.0))
            }
        }
    };
}

struct Tracked {
    alive: &'static AtomicUsize,
    id: u32,
}

impl Tracked {
    fn new(alive: &'static AtomicUsize, id: u32) -> Self {
        alive.fetch_add(1, Ordering::SeqCst);
        Self { alive, id }
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.alive.fetch_sub(1, Ordering::SeqCst);
    }
}

#[test]
fn equal_descriptions_share_one_entry_and_unequal_ones_do_not() {
    counted_memo!(Ident, COMPUTES, ALIVE);
    let a = resolve(&Ident(1)).unwrap();
    let b = resolve(&Ident(1)).unwrap();
    let c = resolve(&Ident(2)).unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!((a.id, c.id), (1, 2));
    assert_eq!(COMPUTES.load(Ordering::SeqCst), 2);
    assert!(evict(&Ident(1)) && evict(&Ident(2)));
    drop((a, b, c));
    assert_eq!(ALIVE.load(Ordering::SeqCst), 0);
}

#[test]
fn same_fields_of_another_type_are_another_entry() {
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    struct A(u8);
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    struct B(u8);
    impl Memo for A {
        type Value = &'static str;
        fn compute(&self) -> crate::Result<&'static str> {
            Ok("a")
        }
    }
    impl Memo for B {
        type Value = &'static str;
        fn compute(&self) -> crate::Result<&'static str> {
            Ok("b")
        }
    }
    assert_eq!(*resolve(&A(1)).unwrap(), "a");
    assert_eq!(*resolve(&B(1)).unwrap(), "b");
    assert!(evict(&A(1)) && evict(&B(1)));
}

#[test]
fn eight_threads_resolving_one_memo_compute_it_once() {
    counted_memo!(Flight, COMPUTES, ALIVE);
    let barrier = Arc::new(Barrier::new(8));
    let values: Vec<Arc<Tracked>> = (0..8)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                resolve(&Flight(9)).unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert_eq!(COMPUTES.load(Ordering::SeqCst), 1);
    assert!(values.iter().all(|v| Arc::ptr_eq(v, &values[0])));
    assert!(evict(&Flight(9)));
    drop(values);
    assert_eq!(ALIVE.load(Ordering::SeqCst), 0);
}

#[test]
fn eviction_drops_the_value_once_nobody_holds_it() {
    counted_memo!(Dropped, COMPUTES, ALIVE);
    let held = resolve(&Dropped(1)).unwrap();
    assert_eq!(ALIVE.load(Ordering::SeqCst), 1);
    assert!(evict(&Dropped(1)));
    assert!(!contains(&Dropped(1)));
    assert_eq!(ALIVE.load(Ordering::SeqCst), 1, "still held by the caller");
    drop(held);
    assert_eq!(
        ALIVE.load(Ordering::SeqCst),
        0,
        "freed with the last reference"
    );

    resolve(&Dropped(2)).unwrap();
    assert_eq!(ALIVE.load(Ordering::SeqCst), 1);
    assert!(evict(&Dropped(2)));
    assert_eq!(ALIVE.load(Ordering::SeqCst), 0, "freed at eviction");
    assert!(!evict(&Dropped(2)), "nothing left to evict");

    resolve(&Dropped(3)).unwrap();
    assert_eq!(COMPUTES.load(Ordering::SeqCst), 3);
}

#[test]
fn evict_value_finds_the_entry_by_identity() {
    counted_memo!(ByValue, COMPUTES, ALIVE);
    let a = resolve(&ByValue(1)).unwrap();
    let b = resolve(&ByValue(2)).unwrap();
    let stranger = Tracked::new(&ALIVE, 1);
    assert!(
        !evict_value(&stranger),
        "an equal value elsewhere is not the entry"
    );
    assert!(evict_value(&*a));
    assert!(!contains(&ByValue(1)));
    assert!(contains(&ByValue(2)));
    assert!(!evict_value(&*a), "already evicted");
    assert!(evict_value(&*b));
    drop((a, b, stranger));
    assert_eq!(ALIVE.load(Ordering::SeqCst), 0);
    assert_eq!(COMPUTES.load(Ordering::SeqCst), 2);
}

#[test]
fn an_error_names_the_memo_keeps_its_cause_and_is_remembered_until_evicted() {
    static COMPUTES: AtomicUsize = AtomicUsize::new(0);
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    struct Missing(&'static str);
    impl Memo for Missing {
        type Value = Vec<u8>;
        fn compute(&self) -> crate::Result<Vec<u8>> {
            COMPUTES.fetch_add(1, Ordering::SeqCst);
            Ok(std::fs::read(self.0)?)
        }
    }
    let memo = Missing("/no/such/model.bin");
    let err = resolve(&memo).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"memo Missing("/no/such/model.bin") failed"#
    );
    let messages = err.messages();
    assert_eq!(messages.len(), 2);
    assert!(messages[1].contains("No such file"), "{messages:?}");

    assert!(resolve(&memo).is_err());
    assert_eq!(COMPUTES.load(Ordering::SeqCst), 1, "the failure is cached");
    assert!(evict(&memo));
    assert!(resolve(&memo).is_err());
    assert_eq!(
        COMPUTES.load(Ordering::SeqCst),
        2,
        "evicting lets it try again"
    );
    evict(&memo);
}

#[test]
fn a_panic_in_compute_is_an_error_for_every_waiter() {
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    struct Explodes;
    impl Memo for Explodes {
        type Value = u8;
        fn compute(&self) -> crate::Result<u8> {
            thread::sleep(Duration::from_millis(20));
            panic!("weights are NaN")
        }
    }
    let barrier = Arc::new(Barrier::new(4));
    let errors: Vec<String> = (0..4)
        .map(|_| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                resolve(&Explodes).unwrap_err().to_string()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert!(
        errors
            .iter()
            .all(|e| e == "memo Explodes panicked: weights are NaN"),
        "{errors:?}"
    );
    evict(&Explodes);
}

#[test]
fn stats_count_hits_misses_failures_and_resident_bytes() {
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    struct Sized(usize);
    impl Memo for Sized {
        type Value = Vec<u8>;
        fn compute(&self) -> crate::Result<Vec<u8>> {
            Ok(vec![0; self.0])
        }
        fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
            Some(value.len() as u64)
        }
    }
    let before = stats();
    resolve(&Sized(1000)).unwrap();
    resolve(&Sized(1000)).unwrap();
    assert_eq!(global().resident_bytes(&Sized(1000)), Some(1000));
    let after = stats();
    // Other tests run alongside: the counters only grow by at least ours.
    assert!(after.misses > before.misses);
    assert!(after.hits > before.hits);
    evict(&Sized(1000));
    assert!(stats().evictions > before.evictions);
}
