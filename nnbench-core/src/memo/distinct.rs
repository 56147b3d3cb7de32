//! The distinct memos among a selection's cases, each numbered the first
//! time it is seen: what the run's order and the shards' plan count.

use std::collections::HashMap;

use super::ErasedMemo;

/// Numbers memos by identity (equal keys are one memo).
#[derive(Clone, Default)]
pub(crate) struct Distinct<'a> {
    memos: Vec<&'a dyn ErasedMemo>,
    by_hash: HashMap<u64, Vec<usize>>,
}

impl<'a> Distinct<'a> {
    /// The number of `memo`, and whether it was seen for the first time.
    pub(crate) fn id(&mut self, memo: &'a dyn ErasedMemo) -> (usize, bool) {
        let bucket = self.by_hash.entry(memo.key_hash()).or_default();
        if let Some(&id) = bucket.iter().find(|&&id| self.memos[id].same_as(memo)) {
            return (id, false);
        }
        self.memos.push(memo);
        bucket.push(self.memos.len() - 1);
        (self.memos.len() - 1, true)
    }

    /// The number of `memo`, if it was seen.
    pub(crate) fn find(&self, memo: &dyn ErasedMemo) -> Option<usize> {
        self.by_hash
            .get(&memo.key_hash())?
            .iter()
            .copied()
            .find(|&id| self.memos[id].same_as(memo))
    }

    /// The memos, by number.
    pub(crate) fn memos(&self) -> &[&'a dyn ErasedMemo] {
        &self.memos
    }

    /// The memos, by number.
    pub(crate) fn into_memos(self) -> Vec<&'a dyn ErasedMemo> {
        self.memos
    }
}
