//! Memos that compute nothing, for the unit tests of what handles memos
//! by their descriptions: the graph, the schedule.

/// Defines unit-valued memos keyed by a `u8`.
macro_rules! unit_memos {
    ($($name:ident),*) => {$(
        #[derive(Clone, Debug, Hash, PartialEq, Eq)]
        pub(crate) struct $name(pub u8);

        impl crate::Memo for $name {
            type Value = ();
            fn compute(&self) -> crate::Result<()> {
                Ok(())
            }
        }
    )*};
}

unit_memos!(Data, Model, Small);
