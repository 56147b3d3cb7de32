//! The first case of a run of streaming cases, and its stream's record:
//! for tests that hold a streamed run to what its service did.

use nnbench::record::{CaseRecord, StreamRecord};

/// The first case `filter` picks, run alone (see `alone.rs`), which must
/// have run without error, and its stream's record.
pub fn streamed(filter: &str) -> (CaseRecord, StreamRecord) {
    let record = super::alone::run(filter);
    let case = record.cases.first().cloned().expect("the case");
    assert!(case.error.is_none(), "{:?}", case.error);
    let stream = *case.stream.clone().expect("a streaming case's record");
    (case, stream)
}
