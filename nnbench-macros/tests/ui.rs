//! Mistakes in the attributes are compile errors that point at the
//! offending name. Expected messages are checked in next to each case.
//!
//! The cases are built against the facade as a user's crate takes it, by
//! default without its `tokio` feature: here, not in the facade's tests,
//! so that the crate trybuild builds depends on this package's few
//! dependencies rather than on the facade's test and bench dependencies.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    // An async function needs the `tokio` feature, and says so without it.
    cases.compile_fail("tests/ui-no-tokio/*.rs");
}

/// The public types that may grow are `#[non_exhaustive]`: a user's struct
/// literal or exhaustive match does not compile, so adding a field or a
/// variant breaks nobody.
#[test]
fn api() {
    trybuild::TestCases::new().compile_fail("tests/api/*.rs");
}
