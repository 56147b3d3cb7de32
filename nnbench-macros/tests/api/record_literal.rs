// The record's types can gain fields and variants in a minor release: a
// user reads them and builds them through their constructors, never with
// a struct literal or an exhaustive match.
use nnbench::record::{CaseError, Git, Stage, Verdict};

fn main() {
    let _ = Git {
        commit: String::new(),
        branch: None,
        dirty: false,
    };
    let _ = CaseError {
        stage: Stage::Call,
        message: String::new(),
        causes: Vec::new(),
        also: Vec::new(),
    };
}

fn said(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Improved => "improved",
        Verdict::Unchanged => "unchanged",
        Verdict::NotComparable => "not comparable",
        Verdict::Regressed => "regressed",
    }
}
