//! What the figure benches (custom `main`s) share with bench binaries made
//! by `nnbench::main!()`: `--list`, name filters, and test mode.

/// Whether cargo ran this with `--bench`; without it (`cargo test
/// --benches`) the benches run small, only to check that they run.
pub fn test_mode() -> bool {
    !std::env::args().any(|a| a == "--bench")
}

/// Whether the bench called `name` should run: answers `--list` (and then
/// says no) and honours name filters as the other benches do. `--quiet`
/// asks for no output, and a figure bench is nothing but its printed
/// figures: it does not run.
pub fn should_run(name: &str) -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("{name}: benchmark");
        return false;
    }
    if args.iter().any(|a| a == "--quiet" || a == "-q") {
        return false;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

/// `(met)` or `(MISSED)` when measuring; nothing in test mode, whose small
/// sizes and debug build are not worth judging.
pub fn verdict(met: bool) -> &'static str {
    match (test_mode(), met) {
        (true, _) => "",
        (false, true) => "(met)",
        (false, false) => "(MISSED)",
    }
}
