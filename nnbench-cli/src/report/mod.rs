//! `nnbench report`: one self-contained HTML page of a history, or of
//! records read into one, with its charts drawn here as SVG.

mod capacity;
mod chart;
mod frame;
mod html;
mod roofline;
mod scale;
mod scatter;
mod search;
mod stream;
mod ticks;
mod tradeoff;
mod xml;

pub use html::page;

/// What the report shows of a figure of a family beside its charts.
struct Shown {
    /// Paragraphs of the latest run's figures, as the console says them.
    lines: String,
    chart: Option<chart::Chart>,
}
