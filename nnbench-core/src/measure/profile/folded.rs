//! The stacks a profile keeps, folded as flamegraph tools read them (one
//! line per stack, root first, frames between `;`, then the count), and
//! drawn as an SVG.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use super::WITHIN;

/// Threads whose names start so are the harness's (the prefetcher, the
/// watchdog, a worker's listener), run a case's calls (inside
/// [`within`](super::within)), or are its runtime's.
const HARNESS_THREADS: &str = "nnbench-";

/// Frames that start a thread, before what it runs.
const STARTING_FRAMES: [&str; 7] = [
    "clone",
    "__clone",
    "start_thread",
    "std::sys::",
    "<std::sys::",
    "core::ops::function::",
    "<alloc::boxed::Box<F,A> as core::ops::function::",
];

/// Frames between [`within`](super::within) and the case's own function:
/// the generated closure, the timer, the threads and the runtime that make
/// the calls. Only a run of them at the root of a stack is cut, so that
/// what the function itself calls is kept whatever it is.
const CALLING_FRAMES: [&str; 12] = [
    "nnbench_core::",
    "<nnbench_core::",
    "std::thread::",
    "core::ops::function::",
    "<F as core::ops::function::",
    "tokio::",
    "<tokio::",
    "futures_util::",
    "<futures_util::",
    "core::future::",
    "<core::future::",
    "<core::pin::Pin<P> as core::future::",
];

/// What the frames of the closures the attributes generate contain.
const GENERATED: &str = "::__nnbench_cases::";

/// One stack the profiler saw, and how many times.
pub(crate) struct Stack<'a> {
    /// The name of its thread (at most 15 bytes on Linux).
    pub thread: &'a str,
    /// Whether its thread started the profiler.
    pub on_caller: bool,
    /// Function names, the innermost first.
    pub frames: Vec<String>,
    pub count: u64,
}

/// The case's stacks, folded: those inside [`within`](super::within) from
/// the call down, and whole those of threads the case's calls started
/// themselves (a runtime's workers, a thread pool), under the thread's
/// name. The harness's stacks are left out: the starting thread's outside
/// the calls, and every stack of its named threads.
#[derive(Debug, Default)]
pub(crate) struct Folded {
    lines: BTreeMap<String, u64>,
}

impl Folded {
    pub(crate) fn new<'a>(stacks: impl IntoIterator<Item = Stack<'a>>) -> Self {
        let mut lines = BTreeMap::new();
        for stack in stacks {
            let Some(line) = fold(&stack) else { continue };
            *lines.entry(line).or_default() += stack.count;
        }
        Self { lines }
    }

    /// How many samples were kept.
    pub(crate) fn samples(&self) -> u64 {
        self.lines.values().sum()
    }

    /// The folded lines, `root;...;leaf count`.
    pub(crate) fn lines(&self) -> impl Iterator<Item = String> + '_ {
        self.lines
            .iter()
            .map(|(stack, count)| format!("{stack} {count}"))
    }

    /// Draws the flamegraph, titled `title`, into `out`.
    #[cfg(feature = "profile")]
    pub(crate) fn svg(&self, title: &str, out: impl Write) -> std::io::Result<()> {
        use inferno::flamegraph::{self, Options, color};
        let mut options = Options::default();
        options.title = title.to_owned();
        options.subtitle = Some(format!(
            "{} samples of its calls, memo loading and the harness left out",
            self.samples()
        ));
        options.count_name = "samples".to_owned();
        options.colors = color::Palette::Multi(color::MultiPalette::Rust);
        options.deterministic = true;
        let lines: Vec<String> = self.lines().collect();
        flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), out)
    }

    /// Draws nothing: flamegraphs are the `profile` feature's.
    #[cfg(not(feature = "profile"))]
    pub(crate) fn svg(&self, _title: &str, _out: impl Write) -> std::io::Result<()> {
        Err(std::io::Error::other(super::UNAVAILABLE))
    }
}

/// Draws the differential flamegraph of `base` against `head` (folded
/// lines, `root;...;leaf count`), titled `title`, into `out`. A profile
/// samples for a while, whatever a call takes, so its counts say where a
/// call's time goes, not how long it is: `ratio`, the head's time per call
/// over the base's (the paired estimate), scales them. Each frame of the
/// head's stacks is red where its time per call (its own and its
/// callees') grew, by the share of the base's call it added, blue where it
/// fell, the deeper the more; the subtitle names those that grew most.
#[cfg(feature = "profile")]
pub(crate) fn differential(
    title: &str,
    base: &str,
    head: &str,
    ratio: f64,
    out: impl Write,
) -> std::io::Result<()> {
    use inferno::flamegraph::{self, color::Color, color::PaletteMap};
    let ((before, base_samples), (after, head_samples)) = (shares(base), shares(head));
    let ratio = if ratio.is_finite() && ratio > 0.0 {
        ratio
    } else {
        1.0
    };
    let share =
        |shares: &HashMap<String, f64>, name: &str| shares.get(name).copied().unwrap_or(0.0);
    // The change, and twice its standard error: a share drawn from n
    // samples is off by sqrt(p (1 - p) / n) or so.
    let delta = |name: &str| {
        let (b, h) = (share(&before, name), share(&after, name));
        let error = |p: f64, n: u64| (p * (1.0 - p) / n.max(1) as f64).sqrt();
        let noise = 2.0 * (error(h, head_samples) * ratio + error(b, base_samples));
        (h * ratio - b, noise.max(0.005))
    };
    let largest = after
        .keys()
        .map(|name| delta(name).0.abs())
        .fold(0.01, f64::max);
    let mut palette = PaletteMap::default();
    for name in after.keys() {
        let (d, noise) = delta(name);
        // Within the profiles' noise: as it was.
        let pale = 250 - (150.0 * d.abs() / largest).min(150.0) as u8;
        let color = if d.abs() <= noise {
            Color {
                r: 250,
                g: 250,
                b: 250,
            }
        } else if d > 0.0 {
            Color {
                r: 255,
                g: pale,
                b: pale,
            }
        } else {
            Color {
                r: pale,
                g: pale,
                b: 255,
            }
        };
        palette.insert(name, color);
    }
    let mut grew: Vec<(&str, f64, f64)> = after
        .keys()
        .map(|name| (name.as_str(), delta(name)))
        .filter(|&(_, (d, noise))| d > noise)
        .map(|(name, (d, noise))| (name, d, noise))
        .collect();
    // The frames that grew as much as the most, within their noise, come
    // first: what explains the call's growth. Among them, those whose own
    // base time grew the most: a caller grows by its callee's time, which
    // is less of its own, and code that the part that grew shares with
    // parts that did not grows by less of its own than that part.
    let top = grew.iter().map(|g| g.1).fold(0.0, f64::max);
    let relative = |name: &str, d: f64| {
        let b = share(&before, name);
        if b > 0.0 { d / b } else { f64::INFINITY }
    };
    grew.sort_by(|a, b| {
        (a.1 < top - a.2)
            .cmp(&(b.1 < top - b.2))
            .then(relative(b.0, b.1).total_cmp(&relative(a.0, a.1)))
            .then(b.1.total_cmp(&a.1))
            .then(a.0.cmp(b.0))
    });
    let named: Vec<String> = grew
        .iter()
        .take(3)
        .map(|(name, d, _)| format!("{name} {:+.1}%", 100.0 * d))
        .collect();
    let mut options = flamegraph::Options::default();
    options.title = format!("{title}: base build against this one");
    options.subtitle = Some(format!(
        "this build's calls ({:+.1}% a call): red where a frame's time per call grew, blue where it fell{}",
        100.0 * (ratio - 1.0),
        if named.is_empty() {
            String::new()
        } else {
            format!("; grew most: {}", named.join(", "))
        }
    ));
    options.count_name = "samples".to_owned();
    options.deterministic = true;
    options.palette_map = Some(&mut palette);
    flamegraph::from_lines(&mut options, head.lines(), out)
}

/// Draws nothing: flamegraphs are the `profile` feature's.
#[cfg(not(feature = "profile"))]
pub(crate) fn differential(
    _title: &str,
    _base: &str,
    _head: &str,
    _ratio: f64,
    _out: impl Write,
) -> std::io::Result<()> {
    Err(std::io::Error::other(super::UNAVAILABLE))
}

/// Per frame name, the share of the samples in stacks through it (each
/// stack counted once, however often the name recurs in it); and how many
/// samples there are.
#[cfg(feature = "profile")]
fn shares(folded: &str) -> (HashMap<String, f64>, u64) {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut total = 0;
    for line in folded.lines() {
        let Some((stack, count)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(count) = count.trim().parse::<u64>() else {
            continue;
        };
        total += count;
        let mut seen: Vec<&str> = Vec::new();
        for name in stack.split(';') {
            if !seen.contains(&name) {
                seen.push(name);
                *counts.entry(name.to_owned()).or_default() += count;
            }
        }
    }
    let shares = counts
        .into_iter()
        .map(|(name, count)| (name, count as f64 / total.max(1) as f64))
        .collect();
    (shares, total)
}

/// `stack` root first, as one folded line without its count; `None` when
/// it is the harness's.
fn fold(stack: &Stack<'_>) -> Option<String> {
    let within = stack.frames.iter().position(|name| name == WITHIN);
    let (frames, root) = match within {
        Some(at) => (cut(&stack.frames[..at], calling), None),
        None if stack.on_caller || harness(stack.thread) => return None,
        None => (cut(&stack.frames, starting), Some(stack.thread)),
    };
    if frames.is_empty() {
        return None;
    }
    let names = root
        .into_iter()
        .chain(frames.iter().rev().map(String::as_str))
        // `;` separates frames, and the last space the count.
        .map(|name| name.replace(';', ":"));
    Some(names.collect::<Vec<_>>().join(";"))
}

/// `frames` (innermost first) without the run at their root that `is`
/// picks.
fn cut(frames: &[String], is: fn(&str) -> bool) -> &[String] {
    let root = frames.iter().rev().take_while(|name| is(name)).count();
    &frames[..frames.len() - root]
}

/// Whether a thread named `name` is the harness's.
fn harness(name: &str) -> bool {
    name.starts_with(HARNESS_THREADS) && !name.starts_with(crate::measure::RUNTIME_THREADS)
}

/// Whether frame `name` starts a thread.
fn starting(name: &str) -> bool {
    STARTING_FRAMES.iter().any(|p| name.starts_with(p))
}

/// Whether frame `name` is of what makes the case's calls.
fn calling(name: &str) -> bool {
    name.contains(GENERATED) || CALLING_FRAMES.iter().any(|p| name.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack<'a>(thread: &'a str, on_caller: bool, frames: &[&str], count: u64) -> Stack<'a> {
        Stack {
            thread,
            on_caller,
            frames: frames.iter().map(|f| (*f).to_owned()).collect(),
            count,
        }
    }

    fn folded(stacks: Vec<Stack<'_>>) -> Vec<String> {
        Folded::new(stacks).lines().collect()
    }

    #[test]
    fn the_calls_are_drawn_from_the_case_down() {
        let lines = folded(vec![
            stack("main", true, &["hot", "case", WITHIN, "engine", "main"], 7),
            stack("main", true, &["case", WITHIN, "engine", "main"], 2),
            stack("main", true, &["hot", "case", WITHIN, "other", "main"], 1),
        ]);
        assert_eq!(lines, ["case 2", "case;hot 8"]);
    }

    #[test]
    fn what_makes_the_calls_is_cut_from_the_root() {
        let generated = "bench::_::__nnbench_cases::{{closure}}";
        let lines = folded(vec![
            stack(
                "main",
                true,
                &[
                    "core::slice::sort",
                    "nnbench_core::helper",
                    "bench::model",
                    "nnbench_core::measure::timer::Timer::time",
                    generated,
                    "core::ops::function::Fn::call",
                    "nnbench_core::runner::case::profile::calls::{{closure}}",
                    WITHIN,
                ],
                3,
            ),
            // The timer's own work, inside the calls' frame.
            stack(
                "main",
                true,
                &[
                    "nnbench_core::measure::perf::open",
                    "nnbench_core::measure::timer::Timer::time",
                    WITHIN,
                ],
                1,
            ),
        ]);
        assert_eq!(
            lines,
            ["bench::model;nnbench_core::helper;core::slice::sort 3"]
        );
    }

    #[test]
    fn the_harness_is_left_out() {
        let lines = folded(vec![
            // The starting thread between calls: sampling bookkeeping.
            stack("main", true, &["median", "engine", "main"], 5),
            // The next case's memo, loading beside the calls.
            stack("nnbench-prefet", false, &["memo_compute", "start"], 9),
            // A thread of `threads = [...]` before it reached the calls.
            stack("nnbench-thread-", false, &["gate", "start"], 1),
            stack("nnbench-thread-", false, &["hot", WITHIN, "start"], 3),
            // The stack the profiler was in when it ran.
            stack("main", true, &[WITHIN, "engine"], 1),
        ]);
        assert_eq!(lines, ["hot 3"]);
    }

    #[test]
    fn threads_the_case_started_are_kept_whole_under_their_name() {
        let lines = folded(vec![
            stack(
                "rayon-worker",
                false,
                &[
                    "forward",
                    "blocking;task",
                    "std::sys::thread::start",
                    "clone3",
                ],
                4,
            ),
            stack("nnbench-async", false, &["forward", "tokio::blocking"], 2),
        ]);
        assert_eq!(
            lines,
            [
                "nnbench-async;tokio::blocking;forward 2",
                "rayon-worker;blocking:task;forward 4"
            ]
        );
    }

    /// The colour of frame `name`'s box in `svg`.
    #[cfg(feature = "profile")]
    pub(crate) fn fill(svg: &str, name: &str) -> [u8; 3] {
        let at = svg.find(&format!("<title>{name} (")).unwrap();
        let from = at + svg[at..].find("fill=\"rgb(").unwrap() + 10;
        let to = from + svg[from..].find(')').unwrap();
        let parts: Vec<u8> = svg[from..to]
            .split(',')
            .map(|c| c.trim().parse().unwrap())
            .collect();
        [parts[0], parts[1], parts[2]]
    }

    #[test]
    #[cfg(feature = "profile")]
    fn a_differential_flamegraph_marks_what_grew() {
        let base = "main;steady 100\nmain;slow_part 100\n";
        let head = "main;steady 100\nmain;slow_part 300\n";
        let mut svg = Vec::new();
        // Three times the work in slow_part: a call takes twice as long.
        differential("case", base, head, 2.0, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert_eq!(fill(&svg, "slow_part")[0], 255, "red: it grew");
        assert!(fill(&svg, "steady").iter().all(|&c| c >= 250), "as it was");
        assert_eq!(fill(&svg, "main")[0], 255, "what calls it grew with it");
        assert!(svg.contains("base build against this one"));
        assert!(svg.contains("(+100.0% a call)"), "{svg}");
        assert!(
            svg.contains("grew most: slow_part +100.0%, main +100.0%"),
            "{svg}"
        );

        // A call as long as before, its time moved from one part to another.
        let mut svg = Vec::new();
        differential("case", base, head, 1.0, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert_eq!(fill(&svg, "slow_part")[0], 255);
        assert_eq!(fill(&svg, "steady")[2], 255, "blue: it fell");
    }

    #[test]
    #[cfg(feature = "profile")]
    fn what_grew_most_is_the_part_that_grew_not_code_it_shares() {
        // Both parts run the same loop; slow_part runs it twice as long.
        // The sampled `next` is read high in the head, within its noise of
        // the call's growth, yet it grew by less of its own time.
        let base = "main;steady;spin;next 60\nmain;steady;spin 90\n\
                    main;slow_part;spin;next 60\nmain;slow_part;spin 90\n";
        let head = "main;steady;spin;next 52\nmain;steady;spin 48\n\
                    main;slow_part;spin;next 100\nmain;slow_part;spin 100\n";
        let mut svg = Vec::new();
        differential("case", base, head, 1.5, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains("grew most: slow_part +50.0%, "), "{svg}");
    }

    #[test]
    #[cfg(feature = "profile")]
    fn a_short_profile_still_names_the_part_that_grew_before_its_callers() {
        // Sixty samples a side: slow_part's share is known to a few tenths,
        // the callers' (in every stack) exactly.
        let base = "main;case;steady;spin;fold 30\nmain;case;slow_part;spin;fold 30\n";
        let head = "main;case;steady;spin;fold 20\nmain;case;slow_part;spin;fold 40\n";
        let mut svg = Vec::new();
        differential("case", base, head, 1.5, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains("grew most: slow_part +50.0%, "), "{svg}");
    }

    #[test]
    #[cfg(feature = "profile")]
    fn the_svg_names_the_frames_and_counts_the_samples() {
        let folded = Folded::new(vec![stack("main", true, &["hot_loop", WITHIN], 12)]);
        assert_eq!(folded.samples(), 12);
        let mut svg = Vec::new();
        folded.svg("sum/n=3", &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.starts_with("<?xml"), "{svg}");
        assert!(svg.contains("hot_loop"));
        assert!(svg.contains("sum/n=3"));
        assert!(svg.contains("12 samples of its calls"));
    }
}
