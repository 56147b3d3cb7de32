//! Line charts in SVG, drawn here so that a report needs no script and no
//! network to show them.

use std::fmt::Write as _;

use nnbench_vocab::{Unit, format_amount};

use super::frame::{self, BOTTOM, COLOURS, HEIGHT, TOP};
use super::scale::{Scale, bounds};
use super::ticks;
use super::xml::escape;

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
    /// Runs far off their segment, which the line leaves out: each drawn
    /// alone as a ring.
    pub outliers: Vec<(f64, f64)>,
}

/// A step marked on the chart: a dashed rule at `x`, labelled.
pub(crate) struct Marker {
    pub x: f64,
    pub label: String,
    /// Drawn as a regression (else as an improvement or a change).
    pub regressed: bool,
    /// The command that finds the step's commit, shown on hover.
    pub bisect: Option<String>,
}

pub(crate) struct Chart {
    pub title: String,
    pub x: XAxis,
    pub unit: Unit,
    pub lines: Vec<Line>,
    pub markers: Vec<Marker>,
    /// Logarithmic axes, both (the x axis a parameter's values): a power
    /// is a straight line on them.
    pub log_log: bool,
}

impl Chart {
    /// The chart as an `<svg>` element.
    pub(crate) fn svg(&self) -> String {
        let mut out = String::new();
        frame::open(&mut out, &self.title);
        let points: Vec<(f64, f64)> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().chain(&l.outliers).copied())
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .collect();
        if points.is_empty() {
            frame::close_empty(&mut out);
            return out;
        }
        let x_scale = self.x_scale(&points);
        let (bottom, top) = frame::y_span();
        let y_scale = if self.log_log && points.iter().all(|p| p.1 > 0.0) {
            let low = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
            let high = points.iter().map(|p| p.1).fold(0.0, f64::max);
            Scale::log(low / 1.3, high * 1.3, bottom, top)
        } else {
            Scale::padded(points.iter().map(|p| p.1), bottom, top)
        };
        frame::y_axis(&mut out, &y_scale, self.unit, |v| {
            format_amount(self.unit, v)
        });
        self.x_axis(&mut out, &x_scale);
        for marker in &self.markers {
            let x = x_scale.place(marker.x);
            let class = if marker.regressed {
                "step regressed"
            } else {
                "step"
            };
            let title = marker
                .bisect
                .as_deref()
                .map(|command| format!("<title>{}</title>", escape(command)))
                .unwrap_or_default();
            let _ = write!(
                out,
                r#"<g class="{class}">{title}<line class="{class}" x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}"/><text class="{class}" x="{:.1}" y="{}">{}</text></g>"#,
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
            for &(x, y) in line
                .outliers
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
            {
                let _ = write!(
                    out,
                    r#"<circle class="outlier {class}" cx="{:.1}" cy="{:.1}" r="4"><title>{}: an outlier, left out of its line</title></circle>"#,
                    x_scale.place(x),
                    y_scale.place(y),
                    escape(&line.name)
                );
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
            frame::key(&mut out, line.colour, &line.name);
        }
        out.push_str("</figcaption></figure>");
        out
    }

    fn x_scale(&self, points: &[(f64, f64)]) -> Scale {
        let (left, right) = frame::x_span();
        match &self.x {
            XAxis::Places(labels) => Scale::linear(
                0.0,
                labels.len().saturating_sub(1).max(1) as f64,
                left,
                right,
            ),
            XAxis::Numbers(_) => {
                let (low, high) = bounds(points.iter().map(|p| p.0));
                if self.log_log && low > 0.0 && high > low {
                    Scale::log(low, high, left, right)
                } else {
                    Scale::spanning(low, high, left, right)
                }
            }
        }
    }

    fn x_axis(&self, out: &mut String, x: &Scale) {
        match &self.x {
            XAxis::Places(labels) => {
                let spacing = x.place(1.0) - x.place(0.0);
                let every = ticks::every(labels, spacing);
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
                        HEIGHT - BOTTOM + 16.0,
                        escape(label)
                    );
                }
                frame::x_name(out, "commits, oldest first");
            }
            XAxis::Numbers(name) => frame::x_numbers(out, x, Unit::Number, name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                outliers: Vec::new(),
            }],
            markers: vec![Marker {
                x: 2.0,
                label: "+50%".into(),
                regressed: true,
                bisect: Some("nnbench bisect a1b2 c3d4 --bench b --case 'x'".into()),
            }],
            log_log: false,
        };
        let svg = chart.svg();
        assert!(svg.contains("time of &lt;model&gt; &amp; co"));
        assert!(chart.html().contains("case &quot;x&quot;</span>"));
        assert!(svg.contains(r#"class="step regressed""#));
        assert!(
            svg.contains("<title>nnbench bisect a1b2 c3d4 --bench b --case &#39;x&#39;</title>")
        );
        assert_eq!(svg.matches("<circle").count(), 3);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
    }
}
