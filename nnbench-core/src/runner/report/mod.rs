//! What a run keeps and says: the cases so far and the record they make
//! ([`ledger`]), each case appended as it finishes ([`progress`]), the
//! console's lines and table ([`console`], quieting what prints on its
//! own: `silence`), and the verdict against a baseline ([`gate`]).

pub(super) mod console;
pub(super) mod gate;
pub(super) mod ledger;
pub(super) mod progress;
#[cfg(feature = "criterion")]
pub(super) mod silence;
