//! Mistakes in the attributes are compile errors that point at the
//! offending name. Expected messages are checked in next to each case.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    // An async function needs the `tokio` feature, and says so without it.
    #[cfg(not(feature = "tokio"))]
    cases.compile_fail("tests/ui-no-tokio/*.rs");
}
