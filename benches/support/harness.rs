//! What the figure benches (custom `main`s) share with bench binaries made
//! by `nnbench::main!()`: `--list`, name filters, and test mode; and how
//! they judge and publish their figures.

#[path = "stats.rs"]
pub mod stats;

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

/// How many times slower than a release build an unoptimized one runs
/// nnbench's own code, at most, as test mode builds it: what a target on
/// time or on a ratio of times may be missed by there and still be
/// explained by the build.
#[allow(dead_code, reason = "not every figure bench has a time target")]
pub const DEBUG_SLACK: f64 = 30.0;

/// The verdict on `figure`'s target: `(met)` or `(MISSED)` when
/// measuring. In test mode, whose small sizes and debug build are not worth
/// judging, nothing; but the bench fails where the figure is not even
/// `explained`: missed by more than those explain.
#[allow(
    dead_code,
    reason = "not every figure bench has a target measured once"
)]
pub fn verdict(figure: &str, met: bool, explained: bool) -> &'static str {
    if test_mode() {
        assert!(
            explained,
            "{figure}: its target is missed by more than test mode's small sizes and debug build explain"
        );
        return "";
    }
    if met { "(met)" } else { "(MISSED)" }
}

/// Which way a figure must lie of its goal.
#[allow(dead_code, reason = "not every figure bench has each kind of goal")]
#[derive(Clone, Copy)]
pub enum Goal {
    /// At most this.
    AtMost(f64),
    /// At least this.
    AtLeast(f64),
    /// From the first to the second ("within").
    Within(f64, f64),
}

/// `figure`'s median over repeated runs (`values`), with its verdict on its
/// two-sided 95% bounds (distribution-free): `(met)` where both bounds
/// lie within `goal`, `(MISSED)` where both lie outside it, else `(not
/// shown by N runs)`, as also where five runs or fewer cannot bound a
/// median at 95%. `show` writes a value. In test mode, the median alone,
/// and the bench fails where it misses `goal` widened by `slack` (a factor
/// for time, 1 for what the debug build and small sizes do not change).
#[allow(dead_code, reason = "not every figure bench judges a median")]
pub fn judged(
    figure: &str,
    values: &[f64],
    goal: Goal,
    slack: f64,
    show: impl Fn(f64) -> String,
) -> String {
    let median = stats::median(values);
    let inside = |v: f64, slack: f64| match goal {
        Goal::AtMost(g) => v <= g * slack,
        Goal::AtLeast(g) => v * slack >= g,
        Goal::Within(lo, hi) => v * slack >= lo && v <= hi * slack,
    };
    let wanted = match goal {
        Goal::AtMost(g) => format!("at most {}", show(g)),
        Goal::AtLeast(g) => format!("at least {}", show(g)),
        Goal::Within(lo, hi) => format!("within {}-{}", show(lo), show(hi)),
    };
    if test_mode() {
        assert!(
            inside(median, slack),
            "{figure}: {} misses {wanted} by more than test mode's small sizes and debug build explain",
            show(median)
        );
        return format!("{}, {wanted}", show(median));
    }
    let Some((low, high)) = stats::median_bounds(values, 0.95) else {
        return format!(
            "{}, {wanted} (not shown by {} runs)",
            show(median),
            values.len()
        );
    };
    let verdict = if inside(low, 1.0) && inside(high, 1.0) {
        "(met)".to_owned()
    } else if outside_together(goal, low, high) {
        "(MISSED)".to_owned()
    } else {
        format!("(not shown by {} runs)", values.len())
    };
    format!(
        "{} (95% bounds {}-{}), {wanted} {verdict}",
        show(median),
        show(low),
        show(high)
    )
}

/// As [`judged`], for a ratio of whole runs whose length follows the
/// machine's noise (a paired run takes more rounds on a busier machine,
/// where a plain one stops sooner): one test-mode run of it says nothing
/// of its goal, so test mode shows it and judges nothing.
#[allow(dead_code, reason = "not every figure bench times whole runs")]
pub fn judged_on_full_runs(
    figure: &str,
    values: &[f64],
    goal: Goal,
    show: impl Fn(f64) -> String,
) -> String {
    if test_mode() {
        return format!(
            "{} (one test-mode run: not judged)",
            show(stats::median(values))
        );
    }
    judged(figure, values, goal, 1.0, show)
}

/// Whether the bounds `low`-`high` lie wholly on one side outside `goal`
/// (not straddling a goal's range).
fn outside_together(goal: Goal, low: f64, high: f64) -> bool {
    match goal {
        Goal::AtMost(g) => low > g,
        Goal::AtLeast(g) => high < g,
        Goal::Within(lo, hi) => high < lo || low > hi,
    }
}

/// A target on how often something happens in trials.
#[allow(dead_code, reason = "not every figure bench counts a rate")]
#[derive(Clone, Copy)]
pub enum Rate {
    /// At most this share of the trials (false alarms).
    AtMost(f64),
    /// At least this share (changes caught).
    AtLeast(f64),
}

/// The verdict on `figure`, seen `k` times in `n` trials, against
/// `target`, on the rate's one-sided 95% Clopper-Pearson bounds: `(met)`
/// where the bound on the target's side lies within it, `(MISSED)` where
/// the other lies outside it, and `(not shown by N trials)` where the
/// trials cannot tell (no alarm in 20 trials bounds a rate at 13.9%, which
/// cannot show "at most 1 in 20"). In test mode, which runs few trials,
/// nothing; but the bench fails on a rate plainly missed.
#[allow(dead_code, reason = "not every figure bench counts a rate")]
pub fn rate(figure: &str, k: usize, n: usize, target: Rate) -> String {
    let (low, high) = stats::rate_bounds(k, n, 0.95);
    let (met, missed) = match target {
        Rate::AtMost(p) => (high <= p, low > p),
        Rate::AtLeast(p) => (low >= p, high < p),
    };
    if test_mode() {
        assert!(
            !missed,
            "{figure}: {k} in {n} misses its target beyond what {n} trials leave likely"
        );
        return String::new();
    }
    match (met, missed) {
        (true, _) => "(met)".to_owned(),
        (_, true) => "(MISSED)".to_owned(),
        _ => format!("(not shown by {n} trials)"),
    }
}

/// What a bench prints where a peer it compares with is missing (`what`,
/// not there because `why`): where `NNBENCH_REQUIRE_PEERS` is set, as in
/// CI, the bench fails instead, so that a comparison is never dropped
/// unseen.
#[allow(dead_code, reason = "not every figure bench has a peer")]
pub fn peer_missing(what: &str, why: &str) -> String {
    assert!(
        std::env::var_os("NNBENCH_REQUIRE_PEERS").is_none(),
        "NNBENCH_REQUIRE_PEERS is set and {what} is missing: {why}"
    );
    format!("{what}: not measured ({why})")
}

/// The case `id` of `record`, run without error; else what went wrong, or
/// the ids there are.
#[allow(dead_code, reason = "not every figure bench reads a case by its id")]
pub fn case<'a>(
    record: &'a nnbench::record::RunRecord,
    id: &str,
) -> Result<&'a nnbench::record::CaseRecord, String> {
    let case = record.cases.iter().find(|c| c.id == id).ok_or_else(|| {
        let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
        format!("{id}: no such case among {ids:?}")
    })?;
    match &case.error {
        Some(error) => Err(format!("{id}: {}", error.message)),
        None => Ok(case),
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
    assert!(
        !page().trim().is_empty(),
        "`{bench}` printed no figure for its section"
    );
    if test_mode() || std::env::var_os("NNBENCH_FIGURES").is_none() {
        return;
    }
    let day = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let section = format!(
        "{start}\n`scripts/figures.sh {bench}` on {}, at {}, {} ({} cores):\n\n{}{end}",
        &day[..10],
        commit(&figures),
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

/// The commit measured: `git rev-parse --short=10 HEAD` in the repository
/// of `page`, with `-dirty` where files outside the book differ from it
/// (the book's pages are what the benches write), or `unknown commit`.
/// `scripts/figures.sh --stale` reads it back.
fn commit(page: &std::path::Path) -> String {
    let repo = page.parent().unwrap_or(page);
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(repo)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let Some(head) = git(&["rev-parse", "--short=10", "HEAD"]) else {
        return "unknown commit".to_owned();
    };
    let top = git(&["rev-parse", "--show-toplevel"]).unwrap_or_default();
    let changed = git(&[
        "-C",
        &top,
        "status",
        "--porcelain",
        "-uno",
        "--",
        ".",
        ":!docs",
    ]);
    match changed {
        Some(changed) if changed.is_empty() => head,
        _ => format!("{head}-dirty"),
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
