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

/// What the bench printed so far, as the Markdown of its section of the
/// book's page of measured figures.
static PAGE: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

fn page() -> std::sync::MutexGuard<'static, String> {
    PAGE.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Prints `table`, and keeps it for [`publish`].
pub fn table(table: &comfy_table::Table) {
    println!("{table}");
    let mut markdown = table.clone();
    markdown.load_style(comfy_table::presets::ASCII_MARKDOWN);
    let mut page = page();
    page.push_str(&markdown.to_string());
    page.push_str("\n\n");
}

/// Prints a line about the figures, and keeps it for [`publish`].
#[allow(dead_code, reason = "not every figure bench adds lines to its tables")]
pub fn note(line: impl std::fmt::Display) {
    let line = line.to_string();
    println!("{line}");
    let mut page = page();
    page.push_str(&line);
    page.push_str("\n\n");
}

/// The book's page of measured figures, whose section between the markers
/// of each figure bench that bench writes: the workspace's, above the
/// root package or the tool's.
fn figures_page() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("docs/src/figures.md"))
        .find(|page| page.is_file())
        .expect("docs/src/figures.md above the bench's package")
}

fn markers(bench: &str) -> (String, String) {
    (
        format!("<!-- figures {bench}: written by `scripts/figures.sh {bench}` -->"),
        format!("<!-- end figures {bench} -->"),
    )
}

/// Ends the bench `bench`: measuring with `NNBENCH_FIGURES=1` (as
/// `scripts/figures.sh` runs it), rewrites its section of the book's page
/// with what it printed, headed by the command, the day and the machine,
/// and the same section of any other page of the book that has its
/// markers; in test mode, checks that the page has that section, so that a
/// figure bench cannot go unpublished.
pub fn publish(bench: &str) {
    let figures = figures_page();
    let text =
        std::fs::read_to_string(&figures).unwrap_or_else(|e| panic!("{}: {e}", figures.display()));
    let (start, end) = markers(bench);
    if !(text.contains(&start) && text.contains(&end)) {
        panic!(
            "{} has no section for `{bench}`: add the lines\n{start}\n{end}",
            figures.display()
        );
    }
    if test_mode() || std::env::var_os("NNBENCH_FIGURES").is_none() {
        return;
    }
    let day = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let section = format!(
        "{start}\n`scripts/figures.sh {bench}` on {}, {} ({} cores):\n\n{}{end}",
        &day[..10],
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        page()
    );
    let book = figures.parent().expect("the book's folder");
    for page in std::fs::read_dir(book).into_iter().flatten().flatten() {
        let path = page.path();
        if path.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let (Some(from), Some(to)) = (text.find(&start), text.find(&end)) else {
            continue;
        };
        let written = format!("{}{section}{}", &text[..from], &text[to + end.len()..]);
        std::fs::write(&path, written).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// The processor's name, as Linux tells it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")?
                    .split_once(':')
                    .map(|(_, v)| v.trim().to_owned())
            })
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned())
}
