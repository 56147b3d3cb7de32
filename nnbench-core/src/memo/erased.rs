//! A memo with its type erased, so one cache and one `Params` can hold memos
//! of every type.

use std::any::{Any, TypeId};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, LazyLock};

use super::Memo;
use crate::Result;

/// One hasher state for the whole process, so a memo hashes the same way in
/// the cache and in the scheduler.
static HASH_STATE: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// What a computed memo hands the cache: the value and, if the memo knows it,
/// its exact size in bytes.
pub(crate) type ErasedValue = (Arc<dyn Any + Send + Sync>, Option<u64>);

/// Object-safe view of a [`Memo`].
pub(crate) trait ErasedMemo: Send + Sync + 'static {
    fn as_any(&self) -> &dyn Any;
    /// Structural equality: same type and `==`.
    fn same_as(&self, other: &dyn ErasedMemo) -> bool;
    /// Hash of the type and the description.
    fn key_hash(&self) -> u64;
    /// The `Debug` form, which names the memo in ids, records and errors.
    fn describe(&self) -> String;
    fn type_name(&self) -> &'static str;
    fn compute_erased(&self) -> Result<ErasedValue>;
    fn clone_boxed(&self) -> Box<dyn ErasedMemo>;
}

impl<M: Memo> ErasedMemo for M {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same_as(&self, other: &dyn ErasedMemo) -> bool {
        other.as_any().downcast_ref::<M>() == Some(self)
    }

    fn key_hash(&self) -> u64 {
        HASH_STATE.hash_one((TypeId::of::<M>(), self))
    }

    fn describe(&self) -> String {
        format!("{self:?}")
    }

    fn type_name(&self) -> &'static str {
        std::any::type_name::<M>()
    }

    fn compute_erased(&self) -> Result<ErasedValue> {
        let value = self.compute()?;
        let bytes = self.size_of(&value);
        Ok((Arc::new(value), bytes))
    }

    fn clone_boxed(&self) -> Box<dyn ErasedMemo> {
        Box::new(self.clone())
    }
}

pub(crate) fn key_of<M: Memo>(memo: &M) -> &dyn ErasedMemo {
    memo
}
