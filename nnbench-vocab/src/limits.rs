//! Regression limits: how far each figure of a case may move.

use std::fmt;

use crate::{Figure, Unit};

/// How far one figure may move.
///
/// # Example
///
/// ```
/// use nnbench_vocab::{parse_limits, Limit};
/// let limits = parse_limits("rss=2%+4MiB").unwrap();
/// assert_eq!(limits[0].limit, Limit::Within { relative: 0.02, absolute: 4194304.0 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limit {
    /// Reported, never failing.
    Off,
    /// A change counts when it is more than `relative` (a fraction of the
    /// base figure: 0.05 is 5%) and more than `absolute` (in the figure's
    /// unit).
    Within {
        /// The change allowed, as a fraction of the base figure.
        relative: f64,
        /// The change allowed, in the figure's unit.
        absolute: f64,
    },
}

/// One `figure=limit` part of a specification.
///
/// # Example
///
/// ```
/// use nnbench_vocab::Figure;
/// let limits = nnbench_vocab::parse_limits("time=10%, gpu=off, value.accuracy=0.5%").unwrap();
/// assert_eq!((limits[0].figure, limits[1].figure), (Figure::Time, Figure::Gpu));
/// assert_eq!((limits[2].figure, limits[2].field.as_deref()), (Figure::Value, Some("accuracy")));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FigureLimit {
    /// The figure it limits.
    pub figure: Figure,
    /// For the value, one field of a struct metric (`value.accuracy`):
    /// its path, nested fields joined by dots.
    pub field: Option<String>,
    /// Its limit.
    pub limit: Limit,
}

/// Why a specification was refused.
///
/// # Example
///
/// ```
/// let err = nnbench_vocab::parse_limits("time=fast").unwrap_err();
/// assert!(err.to_string().contains("time=fast"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitError {
    /// A figure that does not exist.
    UnknownFigure(String),
    /// A part that is not `figure=limit`.
    Malformed(String),
    /// A figure named twice.
    Repeated(String),
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitError::UnknownFigure(name) => {
                write!(f, "{}", crate::figure::UnknownFigure(name.clone()))
            }
            LimitError::Malformed(part) => write!(
                f,
                "`{part}` is not a limit: write figure=P%, figure=amount, figure=P%+amount or figure=off"
            ),
            LimitError::Repeated(name) => write!(f, "`{name}` is given twice"),
        }
    }
}

impl std::error::Error for LimitError {}

/// Parses comma-separated `figure=limit`, where a limit is `P%`, an amount
/// in the figure's unit (`4MiB`, `2ms`, `0.01`; a leading `-` or `+` is
/// ignored, since a limit bounds a change either way), both as `P%+amount`
/// (a change must pass both), or `off`. A field of a struct metric is the
/// figure `value.FIELD` (`value.accuracy=0.5%`, `value.eval.top5=0.01`).
///
/// # Errors
///
/// [`LimitError`] naming the part that is not understood.
///
/// # Example
///
/// ```
/// use nnbench_vocab::{parse_limits, Limit};
/// let limits = parse_limits("time=5%+2ms,value=-0.01,load=off").unwrap();
/// assert_eq!(limits[0].limit, Limit::Within { relative: 0.05, absolute: 2e6 });
/// assert_eq!(limits[1].limit, Limit::Within { relative: 0.0, absolute: 0.01 });
/// assert_eq!(limits[2].limit, Limit::Off);
/// assert!(parse_limits("speed=5%").is_err());
/// ```
pub fn parse_limits(spec: &str) -> Result<Vec<FigureLimit>, LimitError> {
    let mut out: Vec<FigureLimit> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, limit) = part
            .split_once('=')
            .ok_or_else(|| LimitError::Malformed(part.to_owned()))?;
        let name = name.trim();
        let (figure, field) = match name.split_once('.') {
            Some(("value", path)) if crate::is_field_path(path) => {
                (Figure::Value, Some(path.to_owned()))
            }
            Some(("value", _)) => return Err(LimitError::Malformed(part.to_owned())),
            _ => (
                name.parse()
                    .map_err(|_| LimitError::UnknownFigure(name.to_owned()))?,
                None,
            ),
        };
        if out.iter().any(|l| l.figure == figure && l.field == field) {
            return Err(LimitError::Repeated(name.to_owned()));
        }
        let limit = parse_limit(figure.unit(), limit.trim())
            .ok_or_else(|| LimitError::Malformed(part.to_owned()))?;
        out.push(FigureLimit {
            figure,
            field,
            limit,
        });
    }
    Ok(out)
}

/// `P%`, `amount`, `P%+amount` or `off`.
fn parse_limit(unit: Unit, limit: &str) -> Option<Limit> {
    if limit == "off" {
        return Some(Limit::Off);
    }
    let limit = limit.strip_prefix(['-', '+']).unwrap_or(limit);
    let (mut relative, mut absolute) = (None, None);
    for term in limit.split('+').map(str::trim) {
        match term.strip_suffix('%') {
            Some(percent) if relative.is_none() => {
                relative = Some(percent.trim().parse::<f64>().ok()? / 100.0);
            }
            None if absolute.is_none() && !term.is_empty() => {
                absolute = Some(amount(unit, term)?);
            }
            _ => return None,
        }
    }
    let (relative, absolute) = (relative.unwrap_or(0.0), absolute.unwrap_or(0.0));
    (relative.is_finite() && absolute.is_finite() && relative >= 0.0 && absolute >= 0.0)
        .then_some(Limit::Within { relative, absolute })
}

/// An amount in `unit`.
fn amount(unit: Unit, text: &str) -> Option<f64> {
    match unit {
        Unit::Bytes => text
            .parse::<bytesize::ByteSize>()
            .ok()
            .map(|b| b.as_u64() as f64),
        Unit::Time => text.parse::<f64>().ok().or_else(|| {
            crate::parse_duration(text)
                .ok()
                .map(|d| d.as_nanos() as f64)
        }),
        Unit::Number => text.parse::<f64>().ok(),
        Unit::Count => {
            let (digits, scale) = match text.char_indices().last() {
                Some((at, 'k' | 'K')) => (&text[..at], 1e3),
                Some((at, 'M')) => (&text[..at], 1e6),
                Some((at, 'G')) => (&text[..at], 1e9),
                _ => (text, 1.0),
            };
            digits
                .parse::<f64>()
                .ok()
                .filter(|n| *n >= 0.0)
                .map(|n| n * scale)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(spec: &str) -> Limit {
        parse_limits(spec).unwrap()[0].limit
    }

    #[test]
    fn each_figure_reads_amounts_in_its_unit() {
        let within = |relative, absolute| Limit::Within { relative, absolute };
        assert_eq!(one("time=5%+2ms"), within(0.05, 2e6));
        assert_eq!(one("load=150"), within(0.0, 150.0));
        assert_eq!(one("heap=1%+512KiB"), within(0.01, 512.0 * 1024.0));
        assert_eq!(one("gpu=16MiB"), within(0.0, 16.0 * 1048576.0));
        assert_eq!(one("value=+0.5"), within(0.0, 0.5));
        assert_eq!(one(" rss = off "), Limit::Off);
        assert_eq!(one("instructions=0.5%+20k"), within(0.005, 20_000.0));
        assert_eq!(one("value.eval.top5=0.01"), within(0.0, 0.01));
        let both = parse_limits("value=1%, value.accuracy=0.5%").unwrap();
        assert_eq!(
            (both[0].field.as_deref(), both[1].field.as_deref()),
            (None, Some("accuracy"))
        );
        assert_eq!(one("instructions=1.5M"), within(0.0, 1_500_000.0));
        assert!(parse_limits("").unwrap().is_empty());
    }

    #[test]
    fn nonsense_names_the_part() {
        for bad in [
            "time",
            "time=",
            "time=x%",
            "rss=lots",
            "time=-5%x",
            "gpu=1%+1%+",
            "value=1MiB",
            "time=NaN%",
            "time=5%%",
            "instructions=5T",
            "value.=1%",
            "value.a..b=1%",
        ] {
            let err = parse_limits(bad).unwrap_err();
            assert!(
                matches!(err, LimitError::Malformed(ref part) if bad.contains(part.as_str())),
                "{bad}: {err}"
            );
        }
        assert_eq!(
            parse_limits("speed=5%"),
            Err(LimitError::UnknownFigure("speed".into()))
        );
        assert_eq!(
            parse_limits("time=5%,time=6%"),
            Err(LimitError::Repeated("time".into()))
        );
        assert_eq!(
            parse_limits("value.a=5%,value.a=6%"),
            Err(LimitError::Repeated("value.a".into()))
        );
    }
}
