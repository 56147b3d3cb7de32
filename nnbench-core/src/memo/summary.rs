//! The summary of the cache: per memo type, what it holds and did.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

use super::TypeStats;
use nnbench_vocab::format_bytes;

/// A table of `stats`, one row per memo type: misses are split into disk
/// hits and computes, and the last column names the types a type's memos
/// are built from.
pub(super) fn render(stats: &[TypeStats]) -> String {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "memo type",
        "entries",
        "resident",
        "hits",
        "misses",
        "disk hits",
        "computes",
        "evictions",
        "spills",
        "built from",
    ]);
    for t in stats {
        table.add_row([
            t.type_name.to_owned(),
            t.stats.entries.to_string(),
            format_bytes(t.stats.resident_bytes),
            t.stats.hits.to_string(),
            t.stats.misses.to_string(),
            t.stats.disk_hits.to_string(),
            t.stats.computes.to_string(),
            t.stats.evictions.to_string(),
            t.stats.spills.to_string(),
            t.built_from.join(", "),
        ]);
    }
    format!("memo cache\n{table}")
}
