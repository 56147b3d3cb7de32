//! Which cases a run selects: filters, skips and tags, as libtest has them.

use crate::registry::Case;

#[derive(Clone, Debug, Default)]
pub(crate) struct Selection {
    /// A case runs if its id contains any of these (all run when empty).
    pub filters: Vec<String>,
    /// A case is left out if its id contains any of these.
    pub skip: Vec<String>,
    /// A case runs only if its family has any of these tags (when not empty).
    pub tags: Vec<String>,
    /// Filters and skips match whole ids instead of parts.
    pub exact: bool,
    /// Select no case (libtest's `--ignored`: nnbench ignores none).
    pub nothing: bool,
}

impl Selection {
    pub(crate) fn selects(&self, case: &Case) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                case.id == *pattern
            } else {
                case.id.contains(pattern.as_str())
            }
        };
        !self.nothing
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
            && (self.tags.is_empty() || self.tags.iter().any(|t| case.family.tags.contains(t)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::param::Params;
    use crate::registry::{Body, FamilyInfo};

    fn case(id: &str, tags: &[&str]) -> Case {
        Case {
            id: id.to_owned(),
            family: Arc::new(FamilyInfo {
                name: id.split('/').next().unwrap_or(id).to_owned(),
                tags: tags.iter().map(|t| (*t).to_owned()).collect(),
                setup: None,
                teardown: None,
                timing: None,
                sampling: crate::Sampling::default(),
            }),
            params: Params::default(),
            body: Body::BrokenGrid(String::new()),
        }
    }

    #[test]
    fn an_empty_selection_selects_everything() {
        assert!(Selection::default().selects(&case("any/x=1", &[])));
    }

    #[test]
    fn filters_skips_and_tags_combine() {
        let selection = Selection {
            filters: vec!["acc".into(), "lat".into()],
            skip: vec!["batch=64".into()],
            tags: vec!["cpu".into()],
            exact: false,
            nothing: false,
        };
        assert!(selection.selects(&case("accuracy/batch=32", &["cpu"])));
        assert!(selection.selects(&case("latency/batch=32", &["gpu", "cpu"])));
        assert!(
            !selection.selects(&case("accuracy/batch=64", &["cpu"])),
            "skipped"
        );
        assert!(
            !selection.selects(&case("accuracy/batch=32", &["gpu"])),
            "untagged"
        );
        assert!(
            !selection.selects(&case("throughput/batch=32", &["cpu"])),
            "unfiltered"
        );
    }

    #[test]
    fn exact_compares_whole_ids_for_filters_and_skips() {
        let selection = Selection {
            filters: vec!["startup".into()],
            exact: true,
            ..Selection::default()
        };
        assert!(selection.selects(&case("startup", &[])));
        assert!(!selection.selects(&case("startup_cold", &[])));
        let skip = Selection {
            skip: vec!["startup".into()],
            exact: true,
            ..Selection::default()
        };
        assert!(skip.selects(&case("startup_cold", &[])));
        assert!(!skip.selects(&case("startup", &[])));
    }
}
