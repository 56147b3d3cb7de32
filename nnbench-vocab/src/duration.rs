//! Durations: seconds or a duration with its unit.

use std::time::Duration;

/// Parses seconds (`1.5`) or a duration (`500ms`, `2s`); zero is refused.
///
/// # Errors
///
/// A message that says what to write instead.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// assert_eq!(nnbench_vocab::parse_duration("1.5"), Ok(Duration::from_millis(1500)));
/// assert_eq!(nnbench_vocab::parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert!(nnbench_vocab::parse_duration("0").is_err());
/// assert!(nnbench_vocab::parse_duration("soon").unwrap_err().contains("500ms"));
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let parsed = match text.parse::<f64>() {
        Ok(seconds) => Duration::try_from_secs_f64(seconds).map_err(|e| e.to_string()),
        Err(_) => humantime::parse_duration(text).map_err(|e| e.to_string()),
    };
    match parsed {
        Ok(d) if d.is_zero() => Err("must be longer than zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(format!(
            "{e} (write seconds, such as 1.5, or a duration, such as 500ms)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_and_durations_parse_and_nonsense_does_not() {
        assert_eq!(parse_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration(" 1m 30s "), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("0.001"), Ok(Duration::from_millis(1)));
        for bad in ["-1", "0", "0ms", "", "NaN", "inf", "fast"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
