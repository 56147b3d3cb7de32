//! The `tch` feature on this machine's libtorch (`eval "$(scripts/libtorch.sh)"`,
//! then `cargo test -p nnbench --features tch --test torch`): tensors in
//! benchmarks, and the GPU paths answering for the accelerator there is,
//! or "unavailable" where libtorch has none. Without the feature, the one
//! test here says how to run them.

#[cfg(feature = "tch")]
#[path = "torch/cases.rs"]
mod cases;

#[cfg(not(feature = "tch"))]
#[test]
#[ignore = "built without the tch feature: eval \"$(scripts/libtorch.sh)\", then cargo test -p nnbench --features tch --test torch"]
fn the_torch_tests_need_the_tch_feature() {
    panic!(
        "built without the tch feature: eval \"$(scripts/libtorch.sh)\", then cargo test -p nnbench --features tch --test torch"
    );
}
