//! Hardware instruction counts come from Linux's perf events: on other
//! systems there are none, and a counting run says so.

/// No counter here.
#[inline]
pub(crate) fn instructions() -> Option<u64> {
    None
}

/// Why there is no counter.
pub(crate) fn unavailable() -> Option<String> {
    Some("hardware instruction counts are read through Linux's perf events".into())
}
