//! Line charts in SVG, drawn here so that a report needs no script and no
//! network to show them, and styled by the page's CSS (classes, never
//! colours) so that they read in light and in dark.

use std::fmt::Write as _;

use nnbench_units::{Unit, format_amount};

/// The x axis: commits in order, or a numeric parameter.
#[derive(Clone, Debug)]
pub(crate) enum XAxis {
    /// One place per label; points' x is the place's index.
    Places(Vec<String>),
    /// A parameter's values, named; drawn on a log scale when they span
    /// more than a factor of 20 and are all positive.
    Numbers(String),
}

/// One line: a case, or a combination of parameters.
pub(crate) struct Line {
    pub name: String,
    /// Which of the page's colours: the same case keeps its colour in
    /// every chart of its family.
    pub colour: usize,
    pub points: Vec<(f64, f64)>,
}

/// A step marked on the chart: a dashed rule at `x`, labelled.
pub(crate) struct Marker {
    pub x: f64,
    pub label: String,
    /// Drawn as a regression (else as an improvement or a change).
    pub regressed: bool,
}

pub(crate) struct Chart {
    pub title: String,
    pub x: XAxis,
    pub unit: Unit,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 34.0;
const BOTTOM: f64 = 44.0;
/// Lines get classes `l0`..`l7`, which the page colours.
pub(crate) const COLOURS: usize = 8;

impl Chart {
    /// The chart as an `<svg>` element.
    pub(crate) fn svg(&self) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}"><title>{}</title>"#,
            escape(&self.title),
            escape(&self.title)
        );
        let _ = write!(
            out,
            r#"<text class="title" x="{LEFT}" y="18">{}</text>"#,
            escape(&self.title)
        );
        let points: Vec<(f64, f64)> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        if points.is_empty() {
            let _ = write!(
                out,
                r#"<text class="empty" x="{}" y="{}">no figures</text></svg>"#,
                WIDTH / 2.0,
                HEIGHT / 2.0
            );
            return out;
        }
        let x_scale = self.x_scale(&points);
        let y_scale = y_range(points.iter().map(|p| p.1));
        self.axes(&mut out, &x_scale, &y_scale);
        for marker in &self.markers {
            let x = x_scale.place(marker.x);
            let class = if marker.regressed {
                "step regressed"
            } else {
                "step"
            };
            let _ = write!(
                out,
                r#"<line class="{class}" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}"/><text class="{class}" x="{:.1}" y="{}">{}</text>"#,
                HEIGHT - BOTTOM,
                x + 3.0,
                TOP + 11.0,
                escape(&marker.label)
            );
        }
        for line in &self.lines {
            let class = format!("l{}", line.colour % COLOURS);
            let path: Vec<String> = line
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|&(x, y)| format!("{:.1},{:.1}", x_scale.place(x), y_scale.place(y)))
                .collect();
            let _ = write!(
                out,
                r#"<polyline class="line {class}" points="{}"><title>{}</title></polyline>"#,
                path.join(" "),
                escape(&line.name)
            );
            if line.points.len() <= 60 {
                for xy in &path {
                    let (x, y) = xy.split_once(',').unwrap_or(("0", "0"));
                    let _ = write!(
                        out,
                        r#"<circle class="dot {class}" cx="{x}" cy="{y}" r="2.5"/>"#
                    );
                }
            }
        }
        out.push_str("</svg>");
        out
    }

    /// The chart in a `<figure>`, its lines named in a caption below it,
    /// which wraps as the page is narrow or the names long.
    pub(crate) fn html(&self) -> String {
        let mut out = format!("<figure class=\"chart\">{}<figcaption>", self.svg());
        for line in &self.lines {
            let _ = write!(
                out,
                r#"<span class="key"><svg class="swatch" viewBox="0 0 10 10"><rect class="swatch l{}" width="10" height="10"/></svg>{}</span>"#,
                line.colour % COLOURS,
                escape(&line.name)
            );
        }
        out.push_str("</figcaption></figure>");
        out
    }

    fn x_scale(&self, points: &[(f64, f64)]) -> Scale {
        match &self.x {
            XAxis::Places(labels) => Scale::linear(
                0.0,
                labels.len().saturating_sub(1).max(1) as f64,
                LEFT,
                WIDTH - RIGHT,
            ),
            XAxis::Numbers(_) => {
                let (low, high) = points
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                        (a.min(p.0), b.max(p.0))
                    });
                if low > 0.0 && high / low > 20.0 {
                    Scale::log(low, high, LEFT, WIDTH - RIGHT)
                } else {
                    let (low, high) = if low == high {
                        (low - 1.0, high + 1.0)
                    } else {
                        (low, high)
                    };
                    Scale::linear(low, high, LEFT, WIDTH - RIGHT)
                }
            }
        }
    }

    fn axes(&self, out: &mut String, x: &Scale, y: &Scale) {
        let (bottom, right) = (HEIGHT - BOTTOM, WIDTH - RIGHT);
        for tick in y.ticks() {
            let at = y.place(tick);
            let _ = write!(
                out,
                r#"<line class="grid" x1="{LEFT}" x2="{right}" y1="{at:.1}" y2="{at:.1}"/><text class="tick y" x="{:.1}" y="{:.1}">{}</text>"#,
                LEFT - 6.0,
                at + 4.0,
                escape(&format_amount(self.unit, tick))
            );
        }
        let _ = write!(
            out,
            r#"<line class="axis" x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}"/><line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>"#
        );
        match &self.x {
            XAxis::Places(labels) => {
                let every = labels.len().div_ceil(8).max(1);
                let last = labels.len().saturating_sub(1);
                for (index, label) in labels.iter().enumerate().step_by(every) {
                    let at = x.place(index as f64);
                    // The ends' labels stay inside the chart.
                    let anchor = match index {
                        0 => " start",
                        _ if index == last => " end",
                        _ => "",
                    };
                    let _ = write!(
                        out,
                        r#"<text class="tick x{anchor}" x="{at:.1}" y="{:.1}">{}</text>"#,
                        bottom + 16.0,
                        escape(label)
                    );
                }
                let _ = write!(
                    out,
                    r#"<text class="axis-name" x="{:.1}" y="{:.1}">commits, oldest first</text>"#,
                    (LEFT + right) / 2.0,
                    HEIGHT - 6.0
                );
            }
            XAxis::Numbers(name) => {
                for tick in x.ticks() {
                    let at = x.place(tick);
                    let _ = write!(
                        out,
                        r#"<text class="tick x" x="{at:.1}" y="{:.1}">{}</text>"#,
                        bottom + 16.0,
                        escape(&format_amount(Unit::Number, tick))
                    );
                }
                let _ = write!(
                    out,
                    r#"<text class="axis-name" x="{:.1}" y="{:.1}">{}</text>"#,
                    (LEFT + right) / 2.0,
                    HEIGHT - 6.0,
                    escape(name)
                );
            }
        }
    }
}

/// The y range of `values`, padded, from 0 when the figures are nearer 0
/// than their spread.
fn y_range(values: impl Iterator<Item = f64>) -> Scale {
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let spread = (high - low).max(high.abs() * 0.02).max(1e-12);
    let low = if low >= 0.0 && low < spread {
        0.0
    } else {
        low - 0.08 * spread
    };
    let high = high + 0.08 * spread;
    Scale::linear(low, high, HEIGHT - BOTTOM, TOP)
}

/// From values to the drawing's coordinates.
struct Scale {
    low: f64,
    high: f64,
    from: f64,
    to: f64,
    log: bool,
}

impl Scale {
    fn linear(low: f64, high: f64, from: f64, to: f64) -> Self {
        Self {
            low,
            high,
            from,
            to,
            log: false,
        }
    }

    fn log(low: f64, high: f64, from: f64, to: f64) -> Self {
        Self {
            low: low.log2(),
            high: high.log2(),
            from,
            to,
            log: true,
        }
    }

    fn place(&self, value: f64) -> f64 {
        let value = if self.log {
            value.max(f64::MIN_POSITIVE).log2()
        } else {
            value
        };
        let span = self.high - self.low;
        let share = if span == 0.0 {
            0.5
        } else {
            (value - self.low) / span
        };
        self.from + share * (self.to - self.from)
    }

    /// Round values across the range: 1, 2 or 5 times a power of ten
    /// apart (powers of two on a log scale).
    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (first, last) = (self.low.ceil() as i32, self.high.floor() as i32);
            let every = ((last - first) / 6).max(1);
            return (first..=last)
                .step_by(every as usize)
                .map(|p| 2f64.powi(p))
                .collect();
        }
        let span = self.high - self.low;
        if span.is_nan() || span <= 0.0 {
            return vec![self.low];
        }
        let rough = span / 5.0;
        let power = 10f64.powf(rough.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|m| m * power)
            .find(|s| span / s <= 6.0)
            .unwrap_or(10.0 * power);
        let mut tick = (self.low / step).ceil() * step;
        let mut ticks = Vec::new();
        while tick <= self.high + step * 1e-9 && ticks.len() < 12 {
            ticks.push(if tick.abs() < step * 1e-9 { 0.0 } else { tick });
            tick += step;
        }
        ticks
    }
}

/// Text as XML needs it.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        let scale = Scale::linear(0.0, 1234.0, 0.0, 1.0);
        assert_eq!(scale.ticks(), [0.0, 500.0, 1000.0]);
        let scale = Scale::linear(0.899, 0.931, 0.0, 1.0);
        assert_eq!(scale.ticks().len(), 4, "{:?}", scale.ticks());
        let log = Scale::log(1.0, 1024.0, 0.0, 1.0);
        assert_eq!(
            log.ticks(),
            [
                1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0
            ]
        );
    }

    #[test]
    fn a_chart_escapes_its_text_and_marks_its_steps() {
        let chart = Chart {
            title: "time of <model> & co".into(),
            x: XAxis::Places(vec!["a1".into(), "b2".into(), "c3".into()]),
            unit: Unit::Time,
            lines: vec![Line {
                name: "case \"x\"".into(),
                colour: 0,
                points: vec![(0.0, 100.0), (1.0, 100.0), (2.0, 150.0)],
            }],
            markers: vec![Marker {
                x: 2.0,
                label: "+50%".into(),
                regressed: true,
            }],
        };
        let svg = chart.svg();
        assert!(svg.contains("time of &lt;model&gt; &amp; co"));
        assert!(chart.html().contains("case &quot;x&quot;</span>"));
        assert!(svg.contains(r#"class="step regressed""#));
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }
}
