//! A comparison as people and CI read it: a terminal table, markdown for a
//! pull request or `$GITHUB_STEP_SUMMARY`, or JSON.

use std::fmt::Write as _;

use comfy_table::{Cell, Table, presets::UTF8_FULL_CONDENSED};

use nnbench_vocab::{Figure, Unit, format_count, format_field, format_figure};

use super::{CaseComparison, Comparison, FigureComparison, Presence, Verdict};

/// How [`Comparison::render`] writes a comparison.
///
/// # Example
///
/// ```
/// use nnbench_core::compare::Format;
/// assert_eq!("markdown".parse::<Format>().unwrap(), Format::Markdown);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// A table of the cases that changed, and a summary line.
    Table,
    /// The same table, coloured: regressions red, improvements green.
    ColorTable,
    /// GitHub-flavoured markdown.
    Markdown,
    /// The [`Comparison`] itself, as JSON.
    Json,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "table" => Ok(Format::Table),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(format!(
                "unknown format `{other}`: write table, markdown or json"
            )),
        }
    }
}

impl Comparison {
    /// The comparison written as `format`. Cases that did not change are
    /// counted, not listed (JSON lists every case).
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// std::fs::write("summary.md", c.render(nnbench_core::compare::Format::Markdown)).unwrap();
    /// # }
    /// ```
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Json => serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            Format::Markdown => markdown(self),
            Format::Table => table(self, false),
            Format::ColorTable => table(self, true),
        }
    }

    /// One line: how many cases regressed, improved, and so on.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// eprintln!("{}", c.summary());
    /// # }
    /// ```
    pub fn summary(&self) -> String {
        let count =
            |presence: Presence| self.cases.iter().filter(|c| c.presence == presence).count();
        let both = |verdict: Verdict| {
            self.cases
                .iter()
                .filter(|c| c.presence == Presence::Both && c.verdict == verdict)
                .count()
        };
        let trade_offs = self.cases.iter().filter(|c| c.trade_off).count();
        let failing = self.cases.iter().filter(|c| c.head_error.is_some()).count();
        format!(
            "{} cases: {} regressed, {} improved, {} unchanged, {} not comparable, {} new, {} gone{}{}",
            self.cases.len(),
            both(Verdict::Regressed),
            both(Verdict::Improved),
            both(Verdict::Unchanged),
            both(Verdict::NotComparable),
            count(Presence::New),
            count(Presence::Gone),
            match trade_offs {
                0 => String::new(),
                1 => " (1 a trade-off)".to_owned(),
                n => format!(" ({n} trade-offs)"),
            },
            match failing {
                0 => String::new(),
                n => format!("; {n} failing in the head run"),
            },
        ) + &match self.scaling.iter().filter(|s| s.regressed()).count() {
            0 => String::new(),
            n => format!("; {n} scaling regressed"),
        } + &match self.capacity.iter().filter(|c| c.regressed()).count() {
            0 => String::new(),
            n => format!("; {n} capacity lost"),
        }
    }
}

/// Cases worth a row: all but the unchanged without notes, worst first.
fn listed(c: &Comparison) -> Vec<&CaseComparison> {
    let mut rows: Vec<&CaseComparison> = c
        .cases
        .iter()
        .filter(|k| {
            !(k.presence == Presence::Both && k.verdict == Verdict::Unchanged && k.notes.is_empty())
        })
        .collect();
    let rank = |k: &CaseComparison| match (k.presence, k.verdict) {
        (Presence::Both, Verdict::Regressed) => 0,
        (Presence::Both, Verdict::NotComparable) => 1,
        (Presence::Both, _) => 2,
        (Presence::New, _) => 3,
        (Presence::Gone, _) => 4,
    };
    rows.sort_by_key(|k| rank(k));
    rows
}

fn status(case: &CaseComparison) -> &'static str {
    match (case.presence, case.verdict) {
        (Presence::New, _) if case.head_error.is_some() => "new, FAILS",
        (Presence::New, _) => "new",
        (Presence::Gone, _) => "gone",
        (_, _) if case.head_error.is_some() => "FAILS",
        (_, Verdict::Regressed) if case.trade_off => "REGRESSED (trade-off)",
        (_, Verdict::Regressed) => "REGRESSED",
        (_, _) if case.trade_off => "trade-off",
        (_, Verdict::Improved) => "improved",
        (_, Verdict::NotComparable) => "not comparable",
        (_, Verdict::Unchanged) => "unchanged",
    }
}

/// What changed in a case, figure by figure, and its notes.
fn details(case: &CaseComparison) -> String {
    let changes: Vec<String> = if let Some(error) = &case.head_error {
        vec![format!("fails: {error}")]
    } else if let Some(error) = &case.base_error {
        vec![format!("failed on the base side: {error}")]
    } else {
        case.figures
            .iter()
            .filter(|f| f.verdict != Verdict::Unchanged)
            .map(figure_line)
            .collect()
    };
    let notes = case.notes.iter().map(|n| format!("note: {n}"));
    changes
        .into_iter()
        .chain(notes)
        .collect::<Vec<_>>()
        .join("; ")
}

fn figure_line(f: &FigureComparison) -> String {
    // A value is written whole: the digits a comparison saw move.
    let amount = |v: Option<f64>| match (v, f.figure.unit()) {
        (None, _) => "-".to_owned(),
        (Some(v), Unit::Number) => number(v),
        (Some(v), _) => format_figure(f.figure, v),
    };
    let name = match &f.field {
        Some(field) => format!("{}.{field}", f.figure),
        None => f.figure.to_string(),
    };
    let mut line = format!("{name} {} → {}", amount(f.base), amount(f.head));
    if let Some(ratio) = f.ratio {
        let _ = write!(line, " ({:+.1}%)", (ratio - 1.0) * 100.0);
    }
    if let Some(p) = f.p {
        let _ = write!(line, ", p={p:.2e}");
    }
    let verdict = match f.verdict {
        Verdict::Regressed if f.gated => " regressed",
        Verdict::Regressed => " worse (not gated)",
        Verdict::Improved => " improved",
        Verdict::NotComparable => " not comparable",
        Verdict::Unchanged => "",
    };
    line.push_str(verdict);
    if let Some(note) = &f.note {
        let _ = write!(line, " [{note}]");
    }
    line
}

/// A metric as people read it: six significant digits at most, without
/// the last-bit noise of arithmetic (`12 × 1.2` is 14.399999999999999).
fn number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let decimals = (5 - v.abs().log10().floor() as i32).clamp(0, 15) as usize;
    let text = format!("{v:.decimals$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_owned(),
        false => text,
    }
}

fn header(c: &Comparison) -> String {
    let side = |s: &super::Side| match &s.commit {
        Some(commit) => format!(
            "{} ({})",
            s.source,
            commit.chars().take(10).collect::<String>()
        ),
        None => s.source.clone(),
    };
    format!("{} → {}", side(&c.base), side(&c.head))
}

fn table(c: &Comparison, color: bool) -> String {
    let mut out = format!("{}\n", header(c));
    for difference in &c.differences {
        let _ = writeln!(out, "note: {difference}");
    }
    let rows = listed(c);
    if !rows.is_empty() {
        let mut table = Table::new();
        crate::terminal_table::fit(&mut table)
            .load_style(UTF8_FULL_CONDENSED)
            .set_header(["case", "verdict", "what changed"]);
        for case in rows {
            let mut verdict = status(case).to_string();
            if color {
                let color = if case.fails() {
                    console::Color::Red
                } else if case.verdict == Verdict::Improved {
                    console::Color::Green
                } else {
                    console::Color::Yellow
                };
                verdict = crate::terminal_table::colored(&verdict, color);
            }
            table.add_row([
                Cell::new(&case.id),
                Cell::new(verdict),
                Cell::new(details(case)),
            ]);
        }
        let _ = writeln!(out, "{table}");
    }
    for s in &c.scaling {
        let _ = writeln!(out, "scaling {}: {}", verdict_name(s), s.line());
    }
    for f in &c.capacity {
        let _ = writeln!(out, "capacity {}: {}", verdict_name(f), f.line());
    }
    let _ = writeln!(out, "{}", c.summary());
    out
}

/// `case`'s details, and a link to its flamegraph where it has one.
fn details_linked(case: &CaseComparison) -> String {
    let details = cell(&details(case));
    match &case.profile {
        Some(path) => format!(
            "{details} [flamegraph]({})",
            path.replace(' ', "%20")
                .replace('(', "%28")
                .replace(')', "%29")
        ),
        None => details,
    }
}

fn markdown(c: &Comparison) -> String {
    let icon = if c.fails() { "❌" } else { "✅" };
    let mut out = format!("### {icon} nnbench: {}\n\n{}\n\n", header(c), c.summary());
    for difference in &c.differences {
        let _ = writeln!(out, "> **Note:** {difference}");
    }
    if !c.differences.is_empty() {
        out.push('\n');
    }
    let rows = listed(c);
    if rows.is_empty() {
        return out;
    }
    out.push_str("| case | verdict | what changed |\n|---|---|---|\n");
    for case in rows {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            cell(&case.id),
            status(case),
            details_linked(case)
        );
    }
    if !c.scaling.is_empty() {
        out.push_str("\n| scaling | verdict | base | head |\n|---|---|---|---|\n");
        for s in &c.scaling {
            let exponent = |e: &super::Exponent| {
                format!(
                    "{}^{:.2} [{:.2}, {:.2}]",
                    s.parameter, e.exponent, e.interval[0], e.interval[1]
                )
            };
            let _ = writeln!(
                out,
                "| `{}` {} | {} | {} | {} |",
                cell(&s.label()),
                s.figure,
                verdict_name(s),
                exponent(&s.base),
                exponent(&s.head)
            );
        }
    }
    if !c.capacity.is_empty() {
        out.push_str("\n| capacity | verdict | fits |\n|---|---|---|\n");
        for f in &c.capacity {
            let _ = writeln!(
                out,
                "| `{}` {} | {} | {} |",
                cell(&crate::record::scaling_label(&f.family, &f.params)),
                f.figure,
                verdict_name(f),
                cell(&f.line())
            );
        }
    }
    out.push_str(&head_figures(c));
    out
}

/// A scaling or capacity comparison's verdict, as the tables write it.
fn verdict_name(s: &impl FamilyVerdict) -> &'static str {
    match s.verdict_gated() {
        (Verdict::Regressed, true) => "REGRESSED",
        (Verdict::Regressed, false) => "worse (not gated)",
        (Verdict::Improved, _) => "improved",
        _ => "unchanged",
    }
}

/// A family's verdict, apart from its cases', and whether it is gated.
trait FamilyVerdict {
    fn verdict_gated(&self) -> (Verdict, bool);
}

impl FamilyVerdict for super::ScalingComparison {
    fn verdict_gated(&self) -> (Verdict, bool) {
        (self.verdict, self.gated)
    }
}

impl FamilyVerdict for super::CapacityComparison {
    fn verdict_gated(&self) -> (Verdict, bool) {
        (self.verdict, self.gated)
    }
}

/// A figure to three or four significant digits: a table's cell, where
/// [`figure_line`] writes the digits a comparison saw move.
fn at_a_glance(figure: Figure, value: f64) -> String {
    match (figure, figure.unit()) {
        (Figure::Throughput | Figure::Requests, _) => format!("{}/s", format_count(value)),
        (_, Unit::Number) if value.abs() >= 1e4 => format_count(value),
        (_, Unit::Number) => {
            let text = format!("{value:.4}");
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        _ => format_figure(figure, value),
    }
}

/// Text made safe for a markdown table's cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The head run's figures, a column for each field of a struct metric and
/// for time, throughput, p99 and requests per second, folded under a
/// summary: how a sweep of models reads at a glance. Empty when no case
/// has a struct metric, a throughput, a p99 or a load.
fn head_figures(c: &Comparison) -> String {
    let both: Vec<&CaseComparison> = c
        .cases
        .iter()
        .filter(|k| k.presence == Presence::Both)
        .collect();
    let mut columns: Vec<(Figure, Option<&str>)> = Vec::new();
    for f in both.iter().flat_map(|k| &k.figures) {
        let column = (f.figure, f.field.as_deref());
        if f.head.is_some() && f.field.is_some() && !columns.contains(&column) {
            columns.push(column);
        }
    }
    let extras = [Figure::Throughput, Figure::P99, Figure::Requests];
    let present = |figure: Figure| {
        both.iter()
            .flat_map(|k| &k.figures)
            .any(|f| f.figure == figure && f.head.is_some())
    };
    if columns.is_empty() && !extras.into_iter().any(present) {
        return String::new();
    }
    columns.push((Figure::Time, None));
    columns.extend(
        extras
            .into_iter()
            .filter(|f| present(*f))
            .map(|f| (f, None)),
    );
    let names: Vec<String> = columns
        .iter()
        .map(|(figure, field)| field.map_or_else(|| figure.to_string(), str::to_owned))
        .collect();
    let mut out = format!(
        "\n<details><summary>The head run's figures</summary>\n\n| case | {} |\n|---|{}\n",
        names.join(" | "),
        "---|".repeat(names.len())
    );
    for case in both {
        let cells: Vec<String> = columns
            .iter()
            .map(|(figure, field)| {
                case.figures
                    .iter()
                    .find(|f| f.figure == *figure && f.field.as_deref() == *field)
                    .and_then(|f| f.head)
                    .map_or_else(
                        || "-".to_owned(),
                        |v| match field {
                            Some(field) => format_field(field, v),
                            None => at_a_glance(*figure, v),
                        },
                    )
            })
            .collect();
        let _ = writeln!(out, "| `{}` | {} |", cell(&case.id), cells.join(" | "));
    }
    out.push_str("\n</details>\n");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_metric_is_shown_to_six_significant_digits() {
        assert_eq!(super::number(12.0 * 1.2), "14.4");
        assert_eq!(super::number(0.882), "0.882");
        assert_eq!(super::number(12.0), "12");
        assert_eq!(super::number(-1234567.0), "-1234567");
        assert_eq!(super::number(1e-9), "0.000000001");
        assert_eq!(super::number(0.0), "0");
    }
}
