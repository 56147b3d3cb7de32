//! A memo with its type erased, so one cache and one `Params` can hold memos
//! of every type.

use std::any::{Any, TypeId};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, LazyLock};

use super::Memo;
use super::disk::{self, EntryError, Key, Meta};
use super::made_from::Input;
use super::made_from::files::Seen;
use crate::Result;
use crate::record::MemoInput;

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
    /// What its inputs look like now, for the record: `None` for a memo
    /// with neither a version nor a fingerprint.
    fn input(&self) -> Option<MemoInput>;
    /// Bytes of `value` (this memo's) in GPU memory.
    fn device_bytes_erased(&self, value: &(dyn Any + Send + Sync)) -> u64;
    fn compute_erased(&self) -> Result<ErasedValue>;
    fn clone_boxed(&self) -> Box<dyn ErasedMemo>;
    /// Whether it keeps its value in the disk tier.
    fn persists(&self) -> bool;
    /// [`Memo::build_independent`].
    fn build_independent(&self) -> bool;
    /// Its version and fingerprint now, with the files the fingerprint read.
    fn seen(&self) -> Seen;
    /// Its disk entry's path and key, for inputs that look as `seen` says;
    /// `None` when it does not persist, its inputs cannot be
    /// fingerprinted, or the tier is off.
    fn disk_key(&self, seen: &Seen) -> Option<(std::path::PathBuf, Key)>;
    /// Loads the value from its disk entry, unless `stale` finds what it
    /// was made from changed.
    fn load_erased(
        &self,
        path: &std::path::Path,
        key: &Key,
        stale: &dyn Fn(&[Input]) -> Option<String>,
    ) -> std::result::Result<(ErasedValue, Meta), EntryError>;
    /// Saves `value` (this memo's) to its disk entry, which says `meta`.
    fn save_erased(
        &self,
        path: &std::path::Path,
        key: &Key,
        meta: &Meta,
        value: &(dyn Any + Send + Sync),
    ) -> Result<u64>;
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

    fn input(&self) -> Option<MemoInput> {
        let version = self.version();
        let fingerprint = match self.fingerprint() {
            Ok(fingerprint) => fingerprint,
            Err(error) => Some(format!("unreadable: {error}")),
        };
        (version != 0 || fingerprint.is_some()).then(|| MemoInput {
            memo: self.describe(),
            version,
            fingerprint,
        })
    }

    fn device_bytes_erased(&self, value: &(dyn Any + Send + Sync)) -> u64 {
        value
            .downcast_ref::<M::Value>()
            .map_or(0, |v| self.device_bytes(v))
    }

    fn compute_erased(&self) -> Result<ErasedValue> {
        let value = self.compute()?;
        let bytes = self.size_of(&value);
        Ok((Arc::new(value), bytes))
    }

    fn clone_boxed(&self) -> Box<dyn ErasedMemo> {
        Box::new(self.clone())
    }

    fn persists(&self) -> bool {
        self.store().is_some()
    }

    fn build_independent(&self) -> bool {
        Memo::build_independent(self)
    }

    fn seen(&self) -> Seen {
        Seen::take(self.version(), || self.fingerprint())
    }

    fn disk_key(&self, seen: &Seen) -> Option<(std::path::PathBuf, Key)> {
        if seen.unreadable.is_some() {
            return None;
        }
        let format = self.store()?;
        let dir = disk::dir()?;
        let key = Key {
            type_name: std::any::type_name::<M>().to_owned(),
            memo: self.describe(),
            version: seen.version,
            fingerprint: seen.fingerprint.clone(),
            format: format.name().to_owned(),
            build: (super::build::per_build() && !Memo::build_independent(self))
                .then(super::build::build_key)
                .flatten(),
        };
        Some((key.path(&dir), key))
    }

    fn load_erased(
        &self,
        path: &std::path::Path,
        key: &Key,
        stale: &dyn Fn(&[Input]) -> Option<String>,
    ) -> std::result::Result<(ErasedValue, Meta), EntryError> {
        let format = self.store().ok_or(EntryError::Missing)?;
        let (value, meta) = disk::load(path, key, stale, |payload| format.load(payload))?;
        let bytes = self.size_of(&value);
        Ok(((Arc::new(value), bytes), meta))
    }

    fn save_erased(
        &self,
        path: &std::path::Path,
        key: &Key,
        meta: &Meta,
        value: &(dyn Any + Send + Sync),
    ) -> Result<u64> {
        let format = self
            .store()
            .ok_or_else(|| crate::Error::msg(format!("memo {self:?} is not persisted")))?;
        let value = value.downcast_ref::<M::Value>().ok_or_else(|| {
            crate::Error::msg(format!("memo {self:?}: the value is of another type"))
        })?;
        disk::save(path, key, meta, |out| format.save(value, out))
    }
}

pub(crate) fn key_of<M: Memo>(memo: &M) -> &dyn ErasedMemo {
    memo
}
