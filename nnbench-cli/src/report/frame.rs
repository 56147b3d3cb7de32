//! What every chart of the page shares: its size and margins, its title,
//! and its axes, styled by the page's CSS (classes, never colours) so that
//! they read in light and in dark.

use std::fmt::Write as _;

use nnbench_vocab::{Unit, format_amount};

use super::scale::Scale;
use super::ticks;
use super::xml::escape;

pub(super) const WIDTH: f64 = 720.0;
pub(super) const HEIGHT: f64 = 300.0;
pub(super) const LEFT: f64 = 78.0;
pub(super) const RIGHT: f64 = 16.0;
pub(super) const TOP: f64 = 34.0;
pub(super) const BOTTOM: f64 = 44.0;
/// Cases get classes `l0`..`l7`, which the page colours.
pub(crate) const COLOURS: usize = 8;

/// Opens the `<svg>` of a chart titled `title`.
pub(super) fn open(out: &mut String, title: &str) {
    let title = escape(title);
    let _ = write!(
        out,
        r#"<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{title}"><title>{title}</title><text class="title" x="{LEFT}" y="18">{title}</text>"#
    );
}

/// Closes a chart that has nothing to draw, saying so.
pub(super) fn close_empty(out: &mut String) {
    let _ = write!(
        out,
        r#"<text class="empty" x="{}" y="{}">no figures</text></svg>"#,
        WIDTH / 2.0,
        HEIGHT / 2.0
    );
}

/// The y axis's grid lines and ticks, written by `write` (figures in
/// `unit`), and both axes' lines.
pub(super) fn y_axis(out: &mut String, y: &Scale, unit: Unit, write: impl Fn(f64) -> String) {
    let (bottom, right) = (HEIGHT - BOTTOM, WIDTH - RIGHT);
    let ticks = y.ticks();
    for (tick, label) in ticks.iter().zip(ticks::labels(&ticks, unit, write)) {
        let at = y.place(*tick);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" x2="{right}" y1="{at:.1}" y2="{at:.1}"/><text class="tick y" x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT - 6.0,
            at + 4.0,
            escape(&label)
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{LEFT}" x2="{right}" y1="{bottom}" y2="{bottom}"/><line class="axis" x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{bottom}"/>"#
    );
}

/// A numeric x axis: its ticks in `unit`, and its name below them.
pub(super) fn x_numbers(out: &mut String, x: &Scale, unit: Unit, name: &str) {
    let bottom = HEIGHT - BOTTOM;
    let ticks = x.ticks();
    for (tick, label) in ticks
        .iter()
        .zip(ticks::labels(&ticks, unit, |v| format_amount(unit, v)))
    {
        let at = x.place(*tick);
        let _ = write!(
            out,
            r#"<text class="tick x" x="{at:.1}" y="{:.1}">{}</text>"#,
            bottom + 16.0,
            escape(&label)
        );
    }
    x_name(out, name);
}

/// The x axis's name, centred below its ticks.
pub(super) fn x_name(out: &mut String, name: &str) {
    let _ = write!(
        out,
        r#"<text class="axis-name" x="{:.1}" y="{:.1}">{}</text>"#,
        (LEFT + WIDTH - RIGHT) / 2.0,
        HEIGHT - 6.0,
        escape(name)
    );
}

/// The x range of the plot area.
pub(super) fn x_span() -> (f64, f64) {
    (LEFT, WIDTH - RIGHT)
}

/// The y range of the plot area, bottom first.
pub(super) fn y_span() -> (f64, f64) {
    (HEIGHT - BOTTOM, TOP)
}

/// A case's key in a caption: its colour's swatch and its name.
pub(super) fn key(out: &mut String, colour: usize, name: &str) {
    let _ = write!(
        out,
        r#"<span class="key"><svg class="swatch" viewBox="0 0 10 10"><rect class="swatch l{}" width="10" height="10"/></svg>{}</span>"#,
        colour % COLOURS,
        escape(name)
    );
}
