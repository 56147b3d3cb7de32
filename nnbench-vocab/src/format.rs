//! Amounts written for people: times and sizes in the unit that keeps three
//! significant digits.

use crate::{Figure, Unit};

/// A duration in nanoseconds, in the unit that keeps 3 significant digits.
///
/// # Example
///
/// ```
/// use nnbench_vocab::format_ns;
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

/// A size in bytes, in binary units (KiB, MiB, GiB, TiB).
///
/// # Example
///
/// ```
/// use nnbench_vocab::format_bytes;
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

/// An amount of `figure` in its unit: a time, a size (negative sizes as
/// zero), or a number as it is, to six decimals at most.
///
/// # Example
///
/// ```
/// use nnbench_vocab::{Figure, format_figure};
/// assert_eq!(format_figure(Figure::Time, 12_345.0), "12.3 µs");
/// assert_eq!(format_figure(Figure::Rss, 3.0 * 1048576.0), "3.00 MiB");
/// assert_eq!(format_figure(Figure::Value, 0.93), "0.93");
/// ```
pub fn format_figure(figure: Figure, amount: f64) -> String {
    format_amount(figure.unit(), amount)
}

/// An amount in `unit`, as [`format_figure`] writes it.
///
/// # Example
///
/// ```
/// use nnbench_vocab::{Unit, format_amount};
/// assert_eq!(format_amount(Unit::Bytes, 2048.0), "2.00 KiB");
/// assert_eq!(format_amount(Unit::Number, 1.5), "1.5");
/// ```
pub fn format_amount(unit: Unit, amount: f64) -> String {
    match unit {
        Unit::Time => format_ns(amount),
        Unit::Bytes => format_bytes(amount.max(0.0) as u64),
        Unit::Number => {
            let text = format!("{amount:.6}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        Unit::Count => format_count(amount),
    }
}

/// A count of events, to 3 significant digits with a k, M or G suffix.
///
/// # Example
///
/// ```
/// use nnbench_vocab::format_count;
/// assert_eq!(format_count(850.0), "850");
/// assert_eq!(format_count(18_019.0), "18.0k");
/// assert_eq!(format_count(1_234_567_890.0), "1.23G");
/// ```
pub fn format_count(count: f64) -> String {
    const UNITS: [(f64, &str); 3] = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    match UNITS.iter().find(|&&(scale, _)| count.abs() >= scale) {
        Some(&(scale, suffix)) => format!("{}{suffix}", three_digits(count / scale)),
        None => format!("{count:.0}"),
    }
}

/// An amount to 3 significant digits, scaled by its SI prefix (`T`, `G`,
/// `M`, `k` or none): what a rate is printed with.
///
/// # Example
///
/// ```
/// use nnbench_vocab::si_scaled;
/// assert_eq!(si_scaled(41_230_000_000.0), ("41.2".to_owned(), "G"));
/// assert_eq!(si_scaled(512.0), ("512".to_owned(), ""));
/// ```
pub fn si_scaled(amount: f64) -> (String, &'static str) {
    const PREFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    match PREFIXES.iter().find(|&&(scale, _)| amount.abs() >= scale) {
        Some(&(scale, prefix)) => (three_digits(amount / scale), prefix),
        None => (three_digits(amount), ""),
    }
}

/// A rate of `unit` a second, to 3 significant digits with its SI prefix:
/// `41.2 GFLOP/s`, `3.10 GB/s`.
///
/// # Example
///
/// ```
/// use nnbench_vocab::format_rate;
/// assert_eq!(format_rate(41_230_000_000.0, "FLOP"), "41.2 GFLOP/s");
/// assert_eq!(format_rate(3.1e9, "B"), "3.10 GB/s");
/// ```
pub fn format_rate(per_second: f64, unit: &str) -> String {
    let (number, prefix) = si_scaled(per_second);
    format!("{number} {prefix}{unit}/s")
}

fn three_digits(value: f64) -> String {
    match value.abs() {
        v if v >= 100.0 => format!("{value:.0}"),
        v if v >= 10.0 => format!("{value:.1}"),
        _ => format!("{value:.2}"),
    }
}
