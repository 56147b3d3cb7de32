//! What a value was made from: the memo's own version and fingerprint when
//! it was made, and those of every memo its compute resolved, and of what
//! they resolved in turn. A value is used again, from memory in a later
//! run or from the disk tier, only while all of them still hold.

use serde::{Deserialize, Serialize};

pub(super) mod files;

use super::ErasedMemo;
use files::Seen;

/// What one value was made from.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stamp {
    /// The memo's own inputs.
    pub seen: Seen,
    /// The memos its compute resolved, in first-resolve order.
    pub inputs: Vec<Input>,
}

/// A memo a compute resolved, as it was then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Input {
    /// The memo's type.
    #[serde(rename = "type")]
    pub type_name: String,
    /// Its `Debug` description.
    pub memo: String,
    #[serde(flatten)]
    pub seen: Seen,
    /// What its own compute resolved.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inputs: Vec<Input>,
}

/// How to take again what an input looks like now, where this process has
/// its memo: `None` where it has not.
pub(crate) type AtHand<'a> = &'a dyn Fn(&Input) -> Option<Seen>;

impl Input {
    /// `memo`, made under `stamp`, as an input of the value being made: the
    /// files its fingerprint read get the digest of their bytes, so that a
    /// file touched later and unchanged does not make that value stale.
    pub(crate) fn of(memo: &dyn ErasedMemo, stamp: &Stamp) -> Input {
        Input {
            type_name: memo.type_name().to_owned(),
            memo: memo.describe(),
            seen: stamp.seen.with_digests(),
            inputs: stamp.inputs.clone(),
        }
    }

    /// This input or one below it whose fingerprint could not be taken
    /// when the value was made: such a value cannot be checked later.
    pub(crate) fn unreadable(&self) -> Option<&Input> {
        if self.seen.unreadable.is_some() {
            return Some(self);
        }
        self.inputs.iter().find_map(Input::unreadable)
    }

    /// Why this input, or one it was built from, is not what it was.
    fn stale(&self, at_hand: AtHand<'_>) -> Option<String> {
        let why = match at_hand(self) {
            Some(now) => self.seen.changed_to(&now),
            None if self.seen.unreadable.is_some() => {
                Some("it could not be fingerprinted when the value was made".to_owned())
            }
            None if self.seen.fingerprint.is_none() => None,
            None if self.seen.files.is_empty() => Some(
                "its fingerprint can only be taken again by the memo itself, which this \
                 process has not resolved (a fingerprint made with memo::file_fingerprint or \
                 memo::file_digest is taken again from its files)"
                    .to_owned(),
            ),
            None if self.seen.besides_files() => Some(
                "its fingerprint has a part besides its files, which only the memo itself can \
                 take again, and this process has not resolved it"
                    .to_owned(),
            ),
            None => self.seen.files_changed(),
        };
        if let Some(why) = why {
            return Some(format!("its input `{}` changed: {why}", self.memo));
        }
        self.inputs
            .iter()
            .find_map(|inner| inner.stale(at_hand))
            .map(|why| format!("{why}, through `{}`", self.memo))
    }
}

/// Why a value made from `inputs` may not be used now, or `None` when
/// each of them, and what each was built from, is as it was.
pub(crate) fn stale(inputs: &[Input], at_hand: AtHand<'_>) -> Option<String> {
    inputs.iter().find_map(|input| input.stale(at_hand))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memo::file_fingerprint;
    use crate::memo::test_memos::Data;

    fn chain(dir: &std::path::Path) -> (std::path::PathBuf, Input) {
        let file = dir.join("split.txt");
        std::fs::write(&file, b"1,2,3").unwrap();
        let split = Stamp {
            seen: Seen::take(0, || file_fingerprint(&file).map(Some)),
            inputs: Vec::new(),
        };
        let trained = Stamp {
            seen: Seen::default(),
            inputs: vec![Input::of(&Data(1), &split)],
        };
        (file, Input::of(&Data(2), &trained))
    }

    #[test]
    fn an_input_two_levels_down_is_checked_by_its_files_without_its_memo() {
        let dir = tempfile::tempdir().unwrap();
        let (file, trained) = chain(dir.path());
        let nothing_at_hand = |_: &Input| None;
        assert_eq!(
            stale(std::slice::from_ref(&trained), &nothing_at_hand),
            None
        );
        std::fs::write(&file, b"1,2,3,4").unwrap();
        let why = stale(std::slice::from_ref(&trained), &nothing_at_hand).unwrap();
        assert!(
            why.starts_with("its input `Data(1)` changed: file "),
            "{why}"
        );
        assert!(why.ends_with("split.txt, through `Data(2)`"), "{why}");
    }

    #[test]
    fn an_input_at_hand_is_asked_again_and_an_opaque_one_elsewhere_is_stale() {
        let opaque = Input::of(
            &Data(3),
            &Stamp {
                seen: Seen::take(0, || Ok(Some("etag-1".into()))),
                inputs: Vec::new(),
            },
        );
        let inputs = std::slice::from_ref(&opaque);
        let same = |_: &Input| Some(Seen::take(0, || Ok(Some("etag-1".into()))));
        let other = |_: &Input| Some(Seen::take(0, || Ok(Some("etag-2".into()))));
        assert_eq!(stale(inputs, &same), None);
        assert!(stale(inputs, &other).unwrap().contains("etag-1 -> etag-2"));
        let why = stale(inputs, &|_: &Input| None).unwrap();
        assert!(
            why.contains("only be taken again by the memo itself"),
            "{why}"
        );
    }

    #[test]
    fn an_input_that_could_not_be_fingerprinted_is_found_below() {
        let failed = Stamp {
            seen: Seen::take(0, || Err(crate::Error::msg("no such file"))),
            inputs: Vec::new(),
        };
        let outer = Input::of(
            &Data(5),
            &Stamp {
                seen: Seen::default(),
                inputs: vec![Input::of(&Data(4), &failed)],
            },
        );
        assert_eq!(outer.unreadable().unwrap().memo, "Data(4)");
    }

    #[test]
    fn an_input_with_a_setting_beside_its_files_is_stale_without_its_memo() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("split.txt");
        std::fs::write(&file, b"1,2,3").unwrap();
        let split = Stamp {
            seen: Seen::take(0, || {
                Ok(Some(format!("{}+seed=7", file_fingerprint(&file)?)))
            }),
            inputs: Vec::new(),
        };
        let input = Input::of(&Data(1), &split);
        let why = stale(std::slice::from_ref(&input), &|_: &Input| None).unwrap();
        assert!(why.contains("a part besides its files"), "{why}");
        // Where the memo is at hand, the whole fingerprint is taken again.
        let again = |_: &Input| Some(split.seen.clone());
        assert_eq!(stale(std::slice::from_ref(&input), &again), None);
    }
}
