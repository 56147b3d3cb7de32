//! Numbers in human units.

use crate::compare::Figure;

/// A duration in nanoseconds, in the unit that keeps 3 significant digits.
///
/// # Example
///
/// ```
/// use nnbench::report::format_ns;
/// assert_eq!(format_ns(850.0), "850 ns");
/// assert_eq!(format_ns(3.25), "3.25 ns");
/// assert_eq!(format_ns(12_345.0), "12.3 µs");
/// assert_eq!(format_ns(1_500_000_000.0), "1.50 s");
/// ```
pub fn format_ns(ns: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")];
    let (scale, unit) = UNITS
        .iter()
        .copied()
        .find(|&(scale, _)| ns.abs() >= scale)
        .unwrap_or((1.0, "ns"));
    format!("{} {unit}", three_digits(ns / scale))
}

/// A figure's amount in its unit: a time (time, load), a size (RSS, heap,
/// GPU), or the value as it is, to six decimals at most.
///
/// # Example
///
/// ```
/// use nnbench::compare::Figure;
/// use nnbench::report::format_figure;
/// assert_eq!(format_figure(Figure::Time, 12_345.0), "12.3 µs");
/// assert_eq!(format_figure(Figure::Rss, 3.0 * 1048576.0), "3.00 MiB");
/// assert_eq!(format_figure(Figure::Value, 0.93), "0.93");
/// ```
pub fn format_figure(figure: Figure, value: f64) -> String {
    match figure {
        Figure::Time | Figure::Load => format_ns(value),
        Figure::Rss | Figure::Heap | Figure::Gpu => format_bytes(value.max(0.0) as u64),
        Figure::Value => {
            let text = format!("{value:.6}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
    }
}

/// A size in bytes, in binary units (KiB, MiB, GiB, TiB).
///
/// # Example
///
/// ```
/// use nnbench::report::format_bytes;
/// assert_eq!(format_bytes(512), "512 B");
/// assert_eq!(format_bytes(3 << 20), "3.00 MiB");
/// assert_eq!(format_bytes(1536 << 20), "1.50 GiB");
/// ```
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = "B";
    for next in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    format!("{} {unit}", three_digits(value))
}

fn three_digits(value: f64) -> String {
    match value.abs() {
        v if v >= 100.0 => format!("{value:.0}"),
        v if v >= 10.0 => format!("{value:.1}"),
        _ => format!("{value:.2}"),
    }
}
