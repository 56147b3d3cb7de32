//! Tables printed as wide as the terminal that shows them.

use comfy_table::{ContentArrangement, Table};

/// Wraps `table`'s columns to the width of the terminal on standard
/// output; leaves it unwrapped where output goes elsewhere (a file, a
/// pipe, CI's log) or the terminal is too narrow to wrap into, which would
/// squeeze every column to a letter.
pub(crate) fn fit(table: &mut Table) -> &mut Table {
    match console::Term::stdout().size_checked() {
        Some((_, columns)) if columns >= 40 => table
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(columns),
        _ => table.set_content_arrangement(ContentArrangement::Disabled),
    }
}

/// `text` in red, green or yellow for a terminal.
pub(crate) fn colored(text: &str, color: console::Color) -> String {
    console::Style::new()
        .fg(color)
        .force_styling(true)
        .apply_to(text)
        .to_string()
}
