//! Which cases a run selects: filters, skips and tags, as libtest has
//! them, and the cases an interrupted run left.

/// The selection group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Selection")]
pub(crate) struct Selection {
    /// Run only cases whose id contains any of these.
    #[arg(value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Match filters and --skip against whole ids.
    #[arg(long)]
    pub exact: bool,
    /// Leave out cases whose id contains this (repeatable).
    #[arg(long, value_name = "PATTERN")]
    pub skip: Vec<String>,
    /// Run only cases with any of these tags (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Run only the cases that the last run, interrupted or killed, did not
    /// finish (its finished cases are kept in
    /// target/nnbench/<bench>/progress.ndjson as it goes).
    #[arg(long)]
    pub resume: bool,
    /// Run only ignored cases; nnbench ignores none, so this selects
    /// nothing (libtest's flag).
    #[arg(long, help_heading = "Test harness compatibility")]
    pub ignored: bool,
}

impl Selection {
    /// Whether the case `id`, of a family tagged `tags`, is selected.
    pub(crate) fn selects(&self, id: &str, tags: &[&str]) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                id == pattern
            } else {
                id.contains(pattern.as_str())
            }
        };
        !self.ignored
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
            && (self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(&t.as_str())))
    }

    /// Exactly the cases `ids`.
    pub(crate) fn exactly(ids: Vec<String>) -> Self {
        Self {
            filters: ids,
            exact: true,
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_selection_selects_everything() {
        assert!(Selection::default().selects("any/x=1", &[]));
    }

    #[test]
    fn filters_skips_and_tags_combine() {
        let selection = Selection {
            filters: vec!["acc".into(), "lat".into()],
            skip: vec!["batch=64".into()],
            tags: vec!["cpu".into()],
            ..Selection::default()
        };
        assert!(selection.selects("accuracy/batch=32", &["cpu"]));
        assert!(selection.selects("latency/batch=32", &["gpu", "cpu"]));
        assert!(!selection.selects("accuracy/batch=64", &["cpu"]), "skipped");
        assert!(
            !selection.selects("accuracy/batch=32", &["gpu"]),
            "untagged"
        );
        assert!(
            !selection.selects("throughput/batch=32", &["cpu"]),
            "unfiltered"
        );
    }

    #[test]
    fn exact_compares_whole_ids_for_filters_and_skips() {
        let selection = Selection::exactly(vec!["startup".into()]);
        assert!(selection.selects("startup", &[]));
        assert!(!selection.selects("startup_cold", &[]));
        let skip = Selection {
            skip: vec!["startup".into()],
            exact: true,
            ..Selection::default()
        };
        assert!(skip.selects("startup_cold", &[]));
        assert!(!skip.selects("startup", &[]));
    }

    #[test]
    fn ignored_selects_nothing() {
        let selection = Selection {
            ignored: true,
            ..Selection::default()
        };
        assert!(!selection.selects("any", &[]));
    }
}
