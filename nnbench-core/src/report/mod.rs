//! `nnbench report`: one self-contained HTML page of a history, or of
//! records read into one, with its charts drawn here as SVG.

mod chart;
mod html;

pub use html::page;
