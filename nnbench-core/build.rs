//! Records which compiler built the harness, for the run record's context,
//! and, with the `tch` feature, compiles the shim that reads libtorch's
//! device allocator against the libtorch that torch-sys found.

use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    println!("cargo:rustc-env=NNBENCH_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-env-changed=RUSTC");
    // docs.rs documents the `tch` items with torch-sys's `doc-only`, which
    // fetches no libtorch to compile against; nothing is linked there.
    println!("cargo:rerun-if-env-changed=DOCS_RS");
    #[cfg(feature = "tch")]
    if std::env::var_os("DOCS_RS").is_none() {
        torch_shim();
    }
}

#[cfg(feature = "tch")]
fn torch_shim() {
    use std::path::PathBuf;

    const SHIM: &str = "shim/torch_allocator.cpp";
    println!("cargo:rerun-if-changed={SHIM}");
    println!("cargo:rerun-if-env-changed=LIBTORCH_CXX11_ABI");
    // torch-sys's `links = "tch"` hands its libtorch lib folder to direct
    // dependents; the headers sit beside it.
    let Some(lib) = std::env::var_os("DEP_TCH_LIBTORCH_LIB").map(PathBuf::from) else {
        panic!("torch-sys did not say where libtorch is (DEP_TCH_LIBTORCH_LIB)");
    };
    let include = lib
        .parent()
        .map_or_else(|| lib.join("include"), |p| p.join("include"));
    let abi = std::env::var("LIBTORCH_CXX11_ABI").unwrap_or_else(|_| "1".into());
    cc::Build::new()
        .cpp(true)
        .pic(true)
        .warnings(false)
        .include(&include)
        .include(include.join("torch/csrc/api/include"))
        .flag("-std=c++17")
        .flag(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
        .flag("-DGLOG_USE_GLOG_EXPORT")
        .file(SHIM)
        .compile("nnbench_torch_shim");
}
