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
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
            && (self.tags.is_empty() || self.tags.iter().any(|t| case.family.tags.contains(t)))
    }
}
