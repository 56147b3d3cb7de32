//! The labels of an axis's ticks: each distinct from its neighbours, short
//! enough for the margin it is drawn in, and zero as `0`.

use nnbench_vocab::Unit;

/// The most characters a y tick's label takes: the chart's left margin
/// holds about eleven of the 11-unit font.
const MOST_CHARS: usize = 10;

/// About how wide a character of a tick's label is, in the chart's units.
pub(super) const CHAR_WIDTH: f64 = 6.6;

/// The labels of `ticks` as `write` writes them, where they are distinct
/// and short; else in one scale for the whole axis, with as many decimals
/// as the step between ticks needs.
pub(super) fn labels(ticks: &[f64], unit: Unit, write: impl Fn(f64) -> String) -> Vec<String> {
    let written: Vec<String> = ticks
        .iter()
        .map(|&t| if t == 0.0 { "0".to_owned() } else { write(t) })
        .collect();
    if distinct(&written) && written.iter().all(|l| l.chars().count() <= MOST_CHARS) {
        return written;
    }
    let top = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    let step = ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|gap| *gap > 0.0)
        .fold(f64::INFINITY, f64::min);
    let (scale, suffix) = scale_of(unit, top);
    let decimals = if step.is_finite() {
        (-(step / scale).log10() - 1e-9).ceil().clamp(0.0, 9.0) as usize
    } else {
        2
    };
    ticks
        .iter()
        .map(|&t| {
            if t == 0.0 {
                "0".to_owned()
            } else {
                format!("{:.decimals$}{suffix}", t / scale)
            }
        })
        .collect()
}

fn distinct(labels: &[String]) -> bool {
    let mut seen = std::collections::HashSet::new();
    labels.iter().all(|l| seen.insert(l))
}

/// The scale and suffix an axis reaching `top` is written in.
fn scale_of(unit: Unit, top: f64) -> (f64, &'static str) {
    const TIME: [(f64, &str); 4] = [(1e9, " s"), (1e6, " ms"), (1e3, " µs"), (1.0, " ns")];
    const BYTES: [(f64, &str); 5] = [
        (1_099_511_627_776.0, " TiB"),
        (1_073_741_824.0, " GiB"),
        (1_048_576.0, " MiB"),
        (1024.0, " KiB"),
        (1.0, " B"),
    ];
    const COUNT: [(f64, &str); 7] = [
        (1e18, "E"),
        (1e15, "P"),
        (1e12, "T"),
        (1e9, "G"),
        (1e6, "M"),
        (1e3, "k"),
        (1.0, ""),
    ];
    let scales: &[(f64, &str)] = match unit {
        Unit::Time => &TIME,
        Unit::Bytes => &BYTES,
        _ => &COUNT,
    };
    scales
        .iter()
        .copied()
        .find(|&(scale, _)| top >= scale)
        .unwrap_or((1.0, scales[scales.len() - 1].1))
}

/// Every how many of `labels`, placed `spacing` apart, one is drawn, so
/// that no two drawn run into each other: the first is drawn from its
/// place rightwards and the last leftwards, so a neighbour of either
/// needs room for one label and a half, and a gap.
pub(super) fn every(labels: &[String], spacing: f64) -> usize {
    const GAP: f64 = 10.0;
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR_WIDTH;
    if spacing <= 0.0 {
        return labels.len().max(1);
    }
    ((1.5 * widest + GAP) / spacing).ceil().max(1.0) as usize
}

#[cfg(test)]
mod tests {
    use nnbench_vocab::{Unit, format_amount};

    use super::*;

    fn of(unit: Unit, ticks: &[f64]) -> Vec<String> {
        labels(ticks, unit, |v| format_amount(unit, v))
    }

    #[test]
    fn close_ticks_get_distinct_labels() {
        let ticks = [24_400.0, 24_450.0, 24_500.0, 24_550.0];
        let shown = of(Unit::Count, &ticks);
        assert!(distinct(&shown), "{shown:?}");
        assert_eq!(shown, ["24.40k", "24.45k", "24.50k", "24.55k"]);
        let times = of(Unit::Time, &[24_400.0, 24_450.0, 24_500.0]);
        assert_eq!(times, ["24.40 µs", "24.45 µs", "24.50 µs"]);
    }

    #[test]
    fn zero_reads_0() {
        assert_eq!(of(Unit::Time, &[0.0, 500.0, 1000.0])[0], "0");
        assert_eq!(of(Unit::Bytes, &[0.0, 1024.0])[0], "0");
    }

    #[test]
    fn huge_numbers_fit_the_margin() {
        let ticks = [2.0e15, 2.5e15, 3.0e15];
        let shown = of(Unit::Number, &ticks);
        assert_eq!(shown, ["2.0P", "2.5P", "3.0P"]);
        assert!(shown.iter().all(|l| l.chars().count() <= MOST_CHARS));
    }

    #[test]
    fn labels_that_already_fit_are_kept() {
        assert_eq!(
            of(Unit::Time, &[0.0, 1e6, 2e6]),
            ["0", "1.00 ms", "2.00 ms"]
        );
    }

    #[test]
    fn drawn_labels_leave_room_between_them() {
        let labels: Vec<String> = (0..365).map(|i| format!("{i:08x}")).collect();
        let spacing = 626.0 / 364.0;
        let every = every(&labels, spacing);
        // The first label, drawn rightwards from its place, ends before the
        // next drawn one, centred on its own, begins.
        let width = 8.0 * CHAR_WIDTH;
        assert!(
            every as f64 * spacing - width / 2.0 > width,
            "every {every}"
        );
    }
}
