//! A family's roofline in the report: each case of its latest run a
//! point, its floating point operations a second against its arithmetic
//! intensity (operations a byte moved), under the roofs of the machine it
//! ran on, both axes logarithmic (Williams, Waterman and Patterson,
//! "Roofline", CACM 2009). Each roof is a line: the memory bandwidth
//! times the intensity, rising to the peak compute, flat from there; one
//! core's solid, all cores' dashed.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::frame::{self, COLOURS, HEIGHT, LEFT, WIDTH};
use super::scale::{Scale, bounds};
use super::xml::escape;
use crate::history::{History, HistoryError};
use crate::record::{FloatPrecision, MachineRoofs, ParamMap, RoofRates, WorkRecord};

/// One case of the family, where the run placed it.
pub(super) struct Spot {
    pub name: String,
    /// The case's series: its parameters other than the one the family
    /// sweeps most widely (`kernel=naive` of a sweep of `n`).
    pub series: String,
    /// Which of the page's colours: its series'.
    pub colour: usize,
    /// Where it lies along the series: the swept parameter's value.
    pub along: f64,
    /// Operations a byte.
    pub intensity: f64,
    /// Operations a second.
    pub rate: f64,
    pub work: WorkRecord,
}

pub(super) struct Roofline {
    pub title: String,
    pub roofs: MachineRoofs,
    pub spots: Vec<Spot>,
    /// Cases that declared bytes or operations alone: no intensity to
    /// place them at.
    pub unplaced: usize,
}

/// One roof as drawn: its bandwidth and peak, and how it is named.
struct Line {
    bandwidth: f64,
    peak: f64,
    name: String,
    class: &'static str,
}

/// The roofline of the family whose latest run is `run` and whose cases
/// are `cases` (their ids, and their parameters where the history knows
/// them), where the run had roofs and a case of the family declared both
/// its operations and its bytes.
pub(super) fn shown(
    history: &History,
    run: i64,
    family: &str,
    cases: &[(&str, Option<&ParamMap>)],
    within: impl Fn(&str) -> String,
) -> Result<Option<Roofline>, HistoryError> {
    let work: Vec<(String, WorkRecord)> = history
        .run_work(run)?
        .into_iter()
        .filter(|(case, _)| cases.iter().any(|(id, _)| id == case))
        .collect();
    if work.is_empty() {
        return Ok(None);
    }
    let Some(roofs) = history.run_roofs(run)? else {
        return Ok(None);
    };
    let series = Series::of(cases);
    let mut spots = Vec::new();
    let mut unplaced = 0;
    for (case, work) in work {
        match (work.intensity, work.flops_per_s) {
            (Some(intensity), Some(rate)) if intensity > 0.0 && rate > 0.0 => {
                let (name, colour, along) = series.of_case(&case, || within(&case));
                spots.push(Spot {
                    name: within(&case),
                    series: name,
                    colour,
                    along,
                    intensity,
                    rate,
                    work,
                });
            }
            _ => unplaced += 1,
        }
    }
    if spots.is_empty() {
        return Ok(None);
    }
    spots.sort_by(|a, b| a.colour.cmp(&b.colour).then(a.along.total_cmp(&b.along)));
    Ok(Some(Roofline {
        title: format!("{family}: roofline, FLOP/s against FLOP a byte"),
        roofs,
        spots,
        unplaced,
    }))
}

/// How a family's cases fall into series: along the numeric parameter
/// with the most distinct values, one series for each combination of the
/// others, in the order the cases come.
struct Series<'a> {
    order: Vec<&'a str>,
    axis: Option<&'a str>,
    params: HashMap<&'a str, &'a ParamMap>,
    names: Vec<String>,
}

impl<'a> Series<'a> {
    fn of(cases: &[(&'a str, Option<&'a ParamMap>)]) -> Self {
        let params: HashMap<&str, &ParamMap> = cases
            .iter()
            .filter_map(|(id, p)| Some((*id, (*p)?)))
            .collect();
        let numeric = |name: &str| {
            params
                .values()
                .all(|p| p.get(name).is_some_and(serde_json::Value::is_number))
        };
        let distinct = |name: &str| {
            let mut values: Vec<String> = params
                .values()
                .filter_map(|p| Some(p.get(name)?.to_string()))
                .collect();
            values.sort();
            values.dedup();
            values.len()
        };
        let axis = params
            .values()
            .next()
            .into_iter()
            .flat_map(|p| p.keys())
            .filter(|name| numeric(name) && distinct(name) > 1)
            .max_by_key(|name| distinct(name));
        let mut series = Self {
            order: cases.iter().map(|(id, _)| *id).collect(),
            axis,
            params,
            names: Vec::new(),
        };
        for (id, _) in cases {
            if let Some(name) = series.name(id)
                && !series.names.contains(&name)
            {
                series.names.push(name);
            }
        }
        series
    }

    /// The series of case `id`: its other parameters, written as its id
    /// writes them.
    fn name(&self, id: &str) -> Option<String> {
        let axis = self.axis?;
        let others: Vec<String> = self
            .params
            .get(id)?
            .iter()
            .filter(|(name, _)| *name != axis)
            .map(|(name, value)| match value {
                serde_json::Value::String(text) => format!("{name}={text}"),
                value => format!("{name}={value}"),
            })
            .collect();
        Some(if others.is_empty() {
            format!("by {axis}")
        } else {
            others.join(",")
        })
    }

    /// The series, colour and place along it of case `id`; a case of its
    /// own (named by `alone`) where the family has no series.
    fn of_case(&self, id: &str, alone: impl Fn() -> String) -> (String, usize, f64) {
        let along = self
            .axis
            .and_then(|axis| self.params.get(id)?.get(axis)?.as_f64())
            .unwrap_or(0.0);
        match self.name(id) {
            Some(name) => {
                let colour = self.names.iter().position(|n| *n == name).unwrap_or(0);
                (name, colour, along)
            }
            None => {
                let colour = self.order.iter().position(|c| *c == id).unwrap_or(0);
                (alone(), colour, along)
            }
        }
    }
}

impl Roofline {
    /// The roofs drawn: of each precision a case used, on one core and on
    /// all, where those differ.
    fn lines(&self) -> Vec<Line> {
        let mut lines = Vec::new();
        for (precision, peak) in [
            (FloatPrecision::F64, self.roofs.flops_f64),
            (FloatPrecision::F32, self.roofs.flops_f32),
        ] {
            let used = self
                .spots
                .iter()
                .any(|s| s.work.precision.unwrap_or(FloatPrecision::F64) == precision);
            if !used {
                continue;
            }
            let name = match precision {
                FloatPrecision::F32 => "f32",
                _ => "f64",
            };
            let cores = self.roofs.method.cores;
            let mut add = |rates: fn(RoofRates) -> f64, who: String, class| {
                lines.push(Line {
                    bandwidth: rates(self.roofs.bandwidth),
                    peak: rates(peak),
                    name: format!("{name}, {who}"),
                    class,
                });
            };
            add(|r| r.one_core, "one core".to_owned(), "roof");
            if cores > 1 {
                add(|r| r.all_cores, format!("{cores} cores"), "roof all");
            }
        }
        lines
    }

    /// The chart as an `<svg>` element.
    pub(super) fn svg(&self) -> String {
        let mut out = String::new();
        frame::open(&mut out, &self.title);
        let lines = self.lines();
        // Wide enough for every case and every roof's ridge point, where
        // the memory roof meets the compute roof.
        let ridges = lines.iter().map(|l| l.peak / l.bandwidth);
        let (x_low, x_high) = bounds(self.spots.iter().map(|s| s.intensity).chain(ridges));
        let (left, right) = frame::x_span();
        let x = Scale::log(x_low / 4.0, x_high * 4.0, left, right);
        let peaks = lines.iter().map(|l| l.peak);
        let (y_low, y_high) = bounds(self.spots.iter().map(|s| s.rate).chain(peaks));
        let (bottom, top) = frame::y_span();
        let y = Scale::log(y_low / 3.0, y_high * 2.0, bottom, top);
        axes(
            &mut out,
            &x,
            &y,
            (x_low / 4.0, x_high * 4.0),
            (y_low / 3.0, y_high * 2.0),
        );
        for line in &lines {
            // From the left edge (or where the memory roof enters the
            // chart) up to the ridge, then flat to the right edge.
            let start = (x_low / 4.0).max(y_low / 3.0 / line.bandwidth);
            let ridge = line.peak / line.bandwidth;
            let points = [
                (start, start * line.bandwidth),
                (ridge, line.peak),
                (x_high * 4.0, line.peak),
            ];
            let path: Vec<String> = points
                .iter()
                .map(|&(a, b)| format!("{:.1},{:.1}", x.place(a), y.place(b)))
                .collect();
            let _ = write!(
                out,
                r#"<polyline class="{}" points="{}"><title>{}: {}, {}</title></polyline>"#,
                line.class,
                path.join(" "),
                escape(&line.name),
                nnbench_vocab::format_rate(line.peak, "FLOP"),
                nnbench_vocab::format_rate(line.bandwidth, "B")
            );
            let _ = write!(
                out,
                r#"<text class="roof-name" x="{:.1}" y="{:.1}">{}</text>"#,
                frame::x_span().1 - 4.0,
                y.place(line.peak) - 4.0,
                escape(&format!(
                    "{}: {}",
                    line.name,
                    nnbench_vocab::format_rate(line.peak, "FLOP")
                ))
            );
        }
        for series in self.spots.chunk_by(|a, b| a.series == b.series) {
            if series.len() > 1 {
                let path: Vec<String> = series
                    .iter()
                    .map(|s| format!("{:.1},{:.1}", x.place(s.intensity), y.place(s.rate)))
                    .collect();
                let _ = write!(
                    out,
                    r#"<polyline class="series l{}" points="{}"/>"#,
                    series[0].colour % COLOURS,
                    path.join(" ")
                );
            }
        }
        for spot in &self.spots {
            let _ = write!(
                out,
                r#"<circle class="dot l{}" cx="{:.1}" cy="{:.1}" r="4.5"><title>{}: {} at {} FLOP a byte{}</title></circle>"#,
                spot.colour % COLOURS,
                x.place(spot.intensity),
                y.place(spot.rate),
                escape(&spot.name),
                nnbench_vocab::format_rate(spot.rate, "FLOP"),
                nnbench_vocab::si_scaled(spot.intensity).0,
                spot.work.roof_fraction.zip(spot.work.roof).map_or(
                    String::new(),
                    |(f, roof)| format!(", {:.0}% of the {roof} roof", 100.0 * f)
                )
            );
        }
        out.push_str("</svg>");
        out
    }

    /// The chart in a `<figure>`, with which point is which case and what
    /// the lines are.
    pub(super) fn html(&self) -> String {
        let mut out = format!(
            "<figure class=\"chart roofline\">{}<figcaption>",
            self.svg()
        );
        let series: Vec<&Spot> = self
            .spots
            .chunk_by(|a, b| a.series == b.series)
            .map(|s| &s[0])
            .collect();
        for first in series.iter().take(COLOURS) {
            frame::key(&mut out, first.colour, &first.series);
        }
        if series.len() > COLOURS {
            let _ = write!(
                out,
                "<span class=\"note\">and {} more, in the same colours: a point's tooltip names its case</span>",
                series.len() - COLOURS
            );
        }
        let method = &self.roofs.method;
        let _ = write!(
            out,
            "<span class=\"note\">solid: one core's roofs; dashed: the {} cores' together; measured {} with {} kernels{}{}</span>",
            method.cores,
            escape(&method.measured_at),
            escape(&method.units),
            if method.noisy {
                ", on a busy machine: they may read low"
            } else {
                ""
            },
            if self.unplaced > 0 {
                format!(
                    "; {} case{} declaring only bytes or only operations not drawn",
                    self.unplaced,
                    if self.unplaced == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        );
        out.push_str("</figcaption></figure>");
        out
    }
}

/// Both log axes, ticked at powers of ten within `x_range` and `y_range`.
fn axes(out: &mut String, x: &Scale, y: &Scale, x_range: (f64, f64), y_range: (f64, f64)) {
    let (bottom, right) = (HEIGHT - frame::BOTTOM, WIDTH - frame::RIGHT);
    for tick in decades(y_range) {
        let at = y.place(tick);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" x2="{right}" y1="{at:.1}" y2="{at:.1}"/><text class="tick y" x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT - 6.0,
            at + 4.0,
            decade_label(tick, true)
        );
    }
    for tick in decades(x_range) {
        let at = x.place(tick);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{at:.1}" x2="{at:.1}" y1="{}" y2="{bottom}"/><text class="tick x" x="{at:.1}" y="{:.1}">{}</text>"#,
            frame::TOP,
            bottom + 16.0,
            decade_label(tick, false)
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}"/><line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{}" y2="{bottom}"/>"#,
        frame::TOP
    );
    frame::x_name(out, "arithmetic intensity, FLOP a byte");
}

/// The powers of ten from `low` to `high`.
fn decades((low, high): (f64, f64)) -> Vec<f64> {
    let (first, last) = (low.log10().ceil() as i32, high.log10().floor() as i32);
    (first..=last).map(|p| 10f64.powi(p)).collect()
}

/// A power of ten (or any amount) as a tick shows it: `100 G`, `1 M`,
/// `0.1`; a rate (`rate`) with its SI prefix, else a plain number.
fn decade_label(value: f64, rate: bool) -> String {
    let trimmed = |text: &str| {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text.to_owned()
        }
    };
    if rate {
        let (number, prefix) = nnbench_vocab::si_scaled(value);
        return format!("{} {prefix}", trimmed(&number))
            .trim_end()
            .to_owned();
    }
    trimmed(&format!("{value:.3}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roofs() -> MachineRoofs {
        serde_json::from_value(serde_json::json!({
            "flops_f32": {"one_core": 2e11, "all_cores": 4e11},
            "flops_f64": {"one_core": 1e11, "all_cores": 2e11},
            "bandwidth": {"one_core": 2e10, "all_cores": 3e10},
            "method": {"units": "avx512f fma", "cores": 2, "triad_array_bytes": 134217728,
                       "measured_at": "2026-12-07T10:00:00Z", "seconds": 1.5, "noisy": false},
        }))
        .expect("roofs")
    }

    fn spot(name: &str, intensity: f64, rate: f64) -> Spot {
        let mut work = WorkRecord::new(Some(rate), Some(rate / intensity), 1.0);
        work.place(&roofs(), 1);
        Spot {
            name: name.into(),
            series: "kernel=a".into(),
            colour: 0,
            along: intensity,
            intensity,
            rate,
            work,
        }
    }

    #[test]
    fn each_roof_rises_to_its_ridge_then_runs_flat() {
        let chart = Roofline {
            title: "gemm: roofline".into(),
            roofs: roofs(),
            spots: vec![spot("n=64", 2.7, 3e10), spot("n=1024", 42.7, 9e10)],
            unplaced: 1,
        };
        let svg = chart.svg();
        // One core's and both cores' f64 roofs: no case is in f32.
        assert_eq!(svg.matches("<polyline class=\"roof").count(), 2, "{svg}");
        assert!(svg.contains("f64, one core: 100 GFLOP/s"), "{svg}");
        let one_core = svg
            .split("<polyline class=\"roof\" points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        let points: Vec<(f64, f64)> = one_core
            .split(' ')
            .filter_map(|p| p.split_once(','))
            .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
            .collect();
        assert_eq!(points.len(), 3, "{one_core}");
        assert!(
            points[0].1 > points[1].1,
            "rising (up the page) to the ridge"
        );
        assert_eq!(points[1].1, points[2].1, "flat from the ridge");
        assert!(
            svg.contains("n=1024: 90.0 GFLOP/s at 42.7 FLOP a byte, 90% of the compute roof"),
            "{svg}"
        );
        assert!(chart.html().contains("1 case declaring only bytes"));
    }

    #[test]
    fn cases_fall_into_series_along_the_parameter_swept_most_widely() {
        let params = |kernel: &str, n: u64| -> ParamMap {
            [
                ("kernel", serde_json::json!(kernel)),
                ("n", serde_json::json!(n)),
            ]
            .into_iter()
            .collect()
        };
        let made = [
            ("g/kernel=naive,n=64", params("naive", 64)),
            ("g/kernel=naive,n=128", params("naive", 128)),
            ("g/kernel=fast,n=64", params("fast", 64)),
            ("g/kernel=fast,n=128", params("fast", 128)),
        ];
        let cases: Vec<(&str, Option<&ParamMap>)> =
            made.iter().map(|(id, p)| (*id, Some(p))).collect();
        let series = Series::of(&cases);
        assert_eq!(series.axis, Some("n"));
        let alone = || unreachable!("every case is in a series");
        assert_eq!(
            series.of_case("g/kernel=fast,n=128", alone),
            ("kernel=fast".to_owned(), 1, 128.0)
        );
        assert_eq!(series.of_case("g/kernel=naive,n=64", alone).1, 0);
        // With nothing swept, each case is its own.
        let one = params("naive", 64);
        let single = Series::of(&[("g/kernel=naive,n=64", Some(&one))]);
        assert_eq!(single.axis, None);
        assert_eq!(
            single.of_case("g/kernel=naive,n=64", || "it".into()).0,
            "it"
        );
    }

    #[test]
    fn ticks_are_the_decades_within_the_range() {
        assert_eq!(decades((0.3, 250.0)), [1.0, 10.0, 100.0]);
        assert_eq!(decade_label(1e11, true), "100 G");
        assert_eq!(decade_label(1e9, true), "1 G");
        assert_eq!(decade_label(100.0, true), "100");
        assert_eq!(decade_label(0.1, false), "0.1");
        assert_eq!(decade_label(100.0, false), "100");
    }
}
