//! A scatter chart of a trade-off in SVG: one point per case where the
//! latest run put it, a hollow one where the run before did, the latest
//! run's Pareto front as a staircase, and the cases that left the front
//! ringed and named.

use std::fmt::Write as _;

use nnbench_vocab::{Unit, format_amount, format_field};

use super::frame::{self, COLOURS};
use super::scale::{Scale, bounds};
use super::xml::escape;

/// One case: where it is now, and where it was.
pub(super) struct Spot {
    pub name: String,
    /// Which of the page's colours: the case's colour in its family's other
    /// charts.
    pub colour: usize,
    pub now: (f64, f64),
    pub before: Option<(f64, f64)>,
    /// On the latest run's front.
    pub on_front: bool,
    /// On the front of the run before, and not on the latest one.
    pub left_front: bool,
}

pub(super) struct Scatter {
    pub title: String,
    pub x_name: String,
    pub x_unit: Unit,
    /// The struct metric's field on the y axis, written in the unit its
    /// name ends with.
    pub y_name: String,
    pub spots: Vec<Spot>,
    /// What the hollow points are, for the caption.
    pub before: Option<String>,
}

impl Scatter {
    /// The chart as an `<svg>` element.
    pub(super) fn svg(&self) -> String {
        let mut out = String::new();
        frame::open(&mut out, &self.title);
        let xy = || {
            self.spots
                .iter()
                .flat_map(|s| std::iter::once(s.now).chain(s.before))
        };
        if self.spots.is_empty() {
            frame::close_empty(&mut out);
            return out;
        }
        let (left, right) = frame::x_span();
        let (low, high) = bounds(xy().map(|p| p.0));
        let x = Scale::spanning_with_margin(low, high, left, right);
        let (bottom, top) = frame::y_span();
        let y = Scale::padded(xy().map(|p| p.1), bottom, top);
        frame::y_axis(&mut out, &y, Unit::Number, |v| {
            format_field(&self.y_name, v)
        });
        frame::x_numbers(&mut out, &x, self.x_unit, &self.x_name);
        let at = |(a, b): (f64, f64)| (x.place(a), y.place(b));
        self.front(&mut out, &at);
        for spot in &self.spots {
            let class = format!("l{}", spot.colour % COLOURS);
            let (nx, ny) = at(spot.now);
            if let Some(before) = spot.before {
                let (bx, by) = at(before);
                let _ = write!(
                    out,
                    r#"<line class="moved {class}" x1="{bx:.1}" y1="{by:.1}" x2="{nx:.1}" y2="{ny:.1}"/><circle class="before {class}" cx="{bx:.1}" cy="{by:.1}" r="3.5"><title>{} before: {}</title></circle>"#,
                    escape(&spot.name),
                    escape(&self.describe(before))
                );
            }
            if spot.left_front {
                let _ = write!(
                    out,
                    r#"<circle class="left-front" cx="{nx:.1}" cy="{ny:.1}" r="8"/><text class="left-front" x="{:.1}" y="{:.1}">{}</text>"#,
                    nx + 10.0,
                    ny - 8.0,
                    escape(&spot.name)
                );
            }
            let front = if spot.on_front { " on-front" } else { "" };
            let _ = write!(
                out,
                r#"<circle class="dot {class}{front}" cx="{nx:.1}" cy="{ny:.1}" r="4.5"><title>{}: {}</title></circle>"#,
                escape(&spot.name),
                escape(&self.describe(spot.now))
            );
        }
        out.push_str("</svg>");
        out
    }

    /// The front as a staircase: from each case on it, level to the next
    /// one's x and then to its y, which bounds what the front's cases
    /// dominate.
    fn front(&self, out: &mut String, at: &impl Fn((f64, f64)) -> (f64, f64)) {
        let mut on: Vec<(f64, f64)> = self
            .spots
            .iter()
            .filter(|s| s.on_front)
            .map(|s| s.now)
            .collect();
        on.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut path = Vec::new();
        for (i, &point) in on.iter().enumerate() {
            if i > 0 {
                let corner = at((point.0, on[i - 1].1));
                path.push(format!("{:.1},{:.1}", corner.0, corner.1));
            }
            let (px, py) = at(point);
            path.push(format!("{px:.1},{py:.1}"));
        }
        let _ = write!(
            out,
            r#"<polyline class="front" points="{}"><title>the latest run's Pareto front</title></polyline>"#,
            path.join(" ")
        );
    }

    fn describe(&self, (x, y): (f64, f64)) -> String {
        format!(
            "{} {}, {} {}",
            self.x_name,
            format_amount(self.x_unit, x),
            self.y_name,
            format_field(&self.y_name, y)
        )
    }

    /// The chart in a `<figure>`: below it, which point is which case (every
    /// case while each has a colour of its own, else those on the front
    /// and those that left it), what the marks mean, and the cases that
    /// left the front.
    pub(super) fn html(&self) -> String {
        let mut out = format!(
            "<figure class=\"chart trade-off\">{}<figcaption>",
            self.svg()
        );
        let every = self.spots.len() <= COLOURS;
        for spot in self
            .spots
            .iter()
            .filter(|s| every || s.on_front || s.left_front)
        {
            frame::key(&mut out, spot.colour, &spot.name);
        }
        let _ = write!(
            out,
            "<span class=\"note\">filled: the latest run; {}line: its Pareto front</span>",
            self.before
                .as_ref()
                .map_or(String::new(), |b| format!("hollow: {}; ", escape(b)))
        );
        let left: Vec<String> = self
            .spots
            .iter()
            .filter(|s| s.left_front)
            .map(|s| escape(&s.name))
            .collect();
        if !left.is_empty() {
            let _ = write!(
                out,
                "<span class=\"bad left-front\">left the front: {}</span>",
                left.join(", ")
            );
        }
        out.push_str("</figcaption></figure>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spot(name: &str, now: (f64, f64), on_front: bool, left_front: bool) -> Spot {
        Spot {
            name: name.into(),
            colour: 0,
            now,
            before: Some((now.0 * 0.9, now.1)),
            on_front,
            left_front,
        }
    }

    #[test]
    fn the_front_is_a_staircase_through_its_cases() {
        let chart = Scatter {
            title: "m: accuracy against time".into(),
            x_name: "time per call".into(),
            x_unit: Unit::Time,
            y_name: "accuracy".into(),
            spots: vec![
                spot("a", (1e6, 0.8), true, false),
                spot("b", (2e6, 0.7), false, true),
                spot("c", (3e6, 0.9), true, false),
            ],
            before: Some("commit 1234".into()),
        };
        let svg = chart.svg();
        let front = svg
            .split("<polyline class=\"front\" points=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or_default();
        assert_eq!(front.split(' ').count(), 3, "a, the corner, c: {front}");
        assert_eq!(svg.matches("class=\"before ").count(), 3);
        assert_eq!(svg.matches("on-front").count(), 2);
        assert!(svg.contains("<text class=\"left-front\""));
        let html = chart.html();
        assert!(html.contains("left the front: b</span>"), "{html}");
        assert!(html.contains("hollow: commit 1234"));
    }
}
