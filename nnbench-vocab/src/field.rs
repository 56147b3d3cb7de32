//! A struct metric's field written with the unit its name ends with:
//! `latency_ms` in milliseconds, `peak_bytes` in bytes, `images_per_second`
//! as a rate. Nothing else tells a field's unit, and these endings are how
//! people name such fields.

use crate::{Unit, format_amount, format_count};

/// What a field's name says its numbers are.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// In `unit`, once multiplied by the factor: `_ms` is 1e6 ns.
    Amount(Unit, f64),
    /// Per second.
    Rate,
    /// Percent.
    Percent,
    /// A number.
    Plain,
}

/// Endings and what they mean, longest first where one ends another.
const ENDINGS: [(&str, Kind); 15] = [
    ("_per_second", Kind::Rate),
    ("_per_sec", Kind::Rate),
    ("_per_s", Kind::Rate),
    ("_seconds", Kind::Amount(Unit::Time, 1e9)),
    ("_secs", Kind::Amount(Unit::Time, 1e9)),
    ("_ns", Kind::Amount(Unit::Time, 1.0)),
    ("_us", Kind::Amount(Unit::Time, 1e3)),
    ("_ms", Kind::Amount(Unit::Time, 1e6)),
    ("_s", Kind::Amount(Unit::Time, 1e9)),
    ("_bytes", Kind::Amount(Unit::Bytes, 1.0)),
    ("_kib", Kind::Amount(Unit::Bytes, 1024.0)),
    ("_mib", Kind::Amount(Unit::Bytes, 1_048_576.0)),
    ("_gib", Kind::Amount(Unit::Bytes, 1_073_741_824.0)),
    ("_pct", Kind::Percent),
    ("_percent", Kind::Percent),
];

fn kind(path: &str) -> Kind {
    let name = path.rsplit('.').next().unwrap_or(path).to_ascii_lowercase();
    ENDINGS
        .iter()
        .find(|(ending, _)| name.ends_with(ending))
        .map_or(Kind::Plain, |&(_, kind)| kind)
}

/// `value` of the struct-metric field `path` (dotted), to three or four
/// significant digits, in the unit the field's last name ends with: `_ns`,
/// `_us`, `_ms`, `_s`, `_secs`, `_seconds` (a time), `_bytes`, `_kib`,
/// `_mib`, `_gib` (a size), `_per_second`, `_per_sec`, `_per_s` (a rate),
/// `_pct`, `_percent`. Any other field is a number; large ones get a k, M
/// or G.
///
/// # Example
///
/// ```
/// use nnbench_vocab::format_field;
/// assert_eq!(format_field("latency_ms", 12.5), "12.5 ms");
/// assert_eq!(format_field("eval.peak_mib", 3.0), "3.00 MiB");
/// assert_eq!(format_field("images_per_second", 1_390_000.0), "1.39M/s");
/// assert_eq!(format_field("accuracy", 0.8375), "0.8375");
/// assert_eq!(format_field("top1_pct", 91.25), "91.25%");
/// ```
pub fn format_field(path: &str, value: f64) -> String {
    match kind(path) {
        Kind::Amount(unit, factor) => format_amount(unit, value * factor),
        Kind::Rate => format!("{}/s", format_count(value)),
        Kind::Percent => format!("{}%", plain(value)),
        Kind::Plain => plain(value),
    }
}

/// A number to four decimals at most, with a k, M or G when it is large.
fn plain(value: f64) -> String {
    if value.abs() >= 1e4 {
        return format_count(value);
    }
    let text = format!("{value:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_name_tells_the_unit() {
        assert_eq!(kind("eval.latency_ms"), Kind::Amount(Unit::Time, 1e6));
        assert_eq!(kind("ms.accuracy"), Kind::Plain, "only the last name");
        assert_eq!(kind("tokens_per_s"), Kind::Rate);
        assert_eq!(kind("Wall_Seconds"), Kind::Amount(Unit::Time, 1e9));
        assert_eq!(kind("loss"), Kind::Plain);
        assert_eq!(format_field("step_us", 1500.0), "1.50 ms");
        assert_eq!(format_field("weights_bytes", -1.0), "0 B");
        assert_eq!(format_field("count", 123_456.0), "123k");
        assert_eq!(format_field("loss", 0.0), "0");
    }
}
