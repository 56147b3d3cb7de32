//! Which way a returned value is better: `higher` or `lower` for a number,
//! and for a value that serializes to an object, a direction per field
//! (`metric = "accuracy:higher, latency_ms:lower"`, nested fields by dots:
//! `"eval.top5:higher"`).

use std::fmt;

/// Which way a metric is better: accuracy is `higher`, a loss `lower`.
///
/// # Example
///
/// ```
/// use nnbench_vocab::Direction;
/// assert!(Direction::Higher.improves(0.90, 0.93));
/// assert!(Direction::Lower.improves(0.40, 0.31));
/// assert_eq!("lower".parse::<Direction>(), Ok(Direction::Lower));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum Direction {
    /// Larger values are better.
    Higher,
    /// Smaller values are better.
    Lower,
}

impl Direction {
    /// Whether going from `base` to `head` is a change for the better.
    ///
    /// # Example
    ///
    /// ```
    /// assert!(!nnbench_vocab::Direction::Higher.improves(2.0, 1.0));
    /// ```
    pub fn improves(self, base: f64, head: f64) -> bool {
        match self {
            Direction::Higher => head > base,
            Direction::Lower => head < base,
        }
    }

    /// `higher` or `lower`.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench_vocab::Direction::Lower.name(), "lower");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
        }
    }
}

impl std::str::FromStr for Direction {
    type Err = MetricError;
    fn from_str(text: &str) -> Result<Self, MetricError> {
        match text {
            "higher" => Ok(Direction::Higher),
            "lower" => Ok(Direction::Lower),
            other => Err(MetricError::Direction(other.to_owned())),
        }
    }
}

/// One field of a struct metric and which way it is better.
///
/// # Example
///
/// ```
/// let fields = nnbench_vocab::parse_metric("accuracy:higher, eval.latency_ms:lower").unwrap();
/// assert_eq!(fields[1].path, "eval.latency_ms");
/// assert_eq!(fields[1].direction, nnbench_vocab::Direction::Lower);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricField {
    /// The field's name, nested fields joined by dots.
    pub path: String,
    /// Which way it is better.
    pub direction: Direction,
}

/// Why a metric specification was refused.
///
/// # Example
///
/// ```
/// let err = nnbench_vocab::parse_metric("accuracy:up").unwrap_err();
/// assert!(err.to_string().contains("`up`"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MetricError {
    /// A part that is not `field:direction`.
    Malformed(String),
    /// A field name that is not words joined by dots.
    Field(String),
    /// A direction that is neither `higher` nor `lower`.
    Direction(String),
    /// A field named twice.
    Repeated(String),
    /// No field at all.
    Empty,
}

impl fmt::Display for MetricError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricError::Malformed(part) => write!(
                f,
                "`{part}` is not `field:higher` or `field:lower` (write \"accuracy:higher, latency_ms:lower\")"
            ),
            MetricError::Field(name) => write!(
                f,
                "`{name}` is not a field name: letters, digits and `_`, nested fields joined by dots (`eval.top5`)"
            ),
            MetricError::Direction(word) => {
                write!(f, "`{word}` is not a direction: write `higher` or `lower`")
            }
            MetricError::Repeated(name) => write!(f, "field `{name}` is named twice"),
            MetricError::Empty => write!(f, "names no field (write \"accuracy:higher\")"),
        }
    }
}

impl std::error::Error for MetricError {}

/// Parses `field:direction, ...`.
///
/// # Errors
///
/// [`MetricError`] naming the part that is not understood.
///
/// # Example
///
/// ```
/// use nnbench_vocab::{parse_metric, Direction};
/// let fields = parse_metric("accuracy:higher,latency_ms:lower").unwrap();
/// assert_eq!((fields[0].path.as_str(), fields[0].direction), ("accuracy", Direction::Higher));
/// assert!(parse_metric("accuracy").is_err());
/// assert!(parse_metric("a b:higher").is_err());
/// ```
pub fn parse_metric(spec: &str) -> Result<Vec<MetricField>, MetricError> {
    let mut fields: Vec<MetricField> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (path, direction) = part
            .rsplit_once(':')
            .ok_or_else(|| MetricError::Malformed(part.to_owned()))?;
        let (path, direction) = (path.trim(), direction.trim());
        if !is_field_path(path) {
            return Err(MetricError::Field(path.to_owned()));
        }
        let direction = direction.parse()?;
        if fields.iter().any(|f| f.path == path) {
            return Err(MetricError::Repeated(path.to_owned()));
        }
        fields.push(MetricField {
            path: path.to_owned(),
            direction,
        });
    }
    if fields.is_empty() {
        return Err(MetricError::Empty);
    }
    Ok(fields)
}

/// Words of letters, digits and `_`, joined by dots.
///
/// # Example
///
/// ```
/// assert!(nnbench_vocab::is_field_path("eval.top5"));
/// assert!(!nnbench_vocab::is_field_path("eval..top5"));
/// ```
pub fn is_field_path(path: &str) -> bool {
    !path.is_empty()
        && path.split('.').all(|word| {
            !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_directions_parse_and_mistakes_name_the_part() {
        let fields = parse_metric(" accuracy : higher , eval.latency_ms:lower,").unwrap();
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0].path, "accuracy");
        assert_eq!(fields[1].path, "eval.latency_ms");
        assert_eq!(parse_metric(""), Err(MetricError::Empty));
        assert_eq!(
            parse_metric("accuracy"),
            Err(MetricError::Malformed("accuracy".into()))
        );
        assert_eq!(
            parse_metric("accuracy:better"),
            Err(MetricError::Direction("better".into()))
        );
        assert_eq!(
            parse_metric("a.:higher"),
            Err(MetricError::Field("a.".into()))
        );
        assert_eq!(
            parse_metric("a:higher,a:lower"),
            Err(MetricError::Repeated("a".into()))
        );
    }
}
