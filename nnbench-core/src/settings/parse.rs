//! Parsers of flag values, each with a message that says what to write.

use std::time::Duration;

use crate::compare::Limits;

/// Bytes (`1073741824`) or a size with its unit (`8GiB`, `512 MB`).
pub(crate) fn size(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|s| s.as_u64())
        .map_err(|e| format!("{e} (write a size such as 8GiB or 512MiB)"))
}

/// Seconds (`1.5`) or a duration (`500ms`, `2s`), as the attributes take them.
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    nnbench_vocab::parse_duration(text)
}

/// A sample size criterion accepts: [`nnbench_vocab::MIN_SAMPLE_SIZE`] or
/// more.
pub(crate) fn sample_size(text: &str) -> Result<usize, String> {
    const LEAST: usize = nnbench_vocab::MIN_SAMPLE_SIZE;
    match text.trim().parse::<usize>() {
        Ok(n) if n >= LEAST => Ok(n),
        Ok(_) => Err(format!("must be {LEAST} or more")),
        Err(e) => Err(format!("{e} (write a whole number, {LEAST} or more)")),
    }
}

/// A baseline's name becomes a file name: letters, digits, `-`, `_`, `.`.
pub(crate) fn baseline_name(text: &str) -> Result<String, String> {
    let fine = !text.is_empty()
        && !text.starts_with('.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(text.to_owned())
    } else {
        Err("a baseline's name is made of letters, digits, '-', '_' and '.'".into())
    }
}

/// Regression limits over the defaults, as `nnbench compare --fail-on`
/// takes them.
pub(crate) fn thresholds(spec: &str) -> Result<Limits, String> {
    Limits::default().with_spec(spec).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_parse_in_the_forms_criterion_and_people_use() {
        assert_eq!(size("8GiB"), Ok(8 << 30));
        assert_eq!(size("512 MiB"), Ok(512 << 20));
        assert_eq!(size("1000"), Ok(1000));
        assert!(size("lots").unwrap_err().contains("8GiB"));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(duration("0").is_err());
        assert!(duration("-1").is_err());
        assert_eq!(sample_size("10"), Ok(10));
        assert!(sample_size("9").unwrap_err().contains("10 or more"));
    }

    #[test]
    fn baseline_names_stay_file_names() {
        assert_eq!(baseline_name("main-1.2_x"), Ok("main-1.2_x".into()));
        for bad in ["", ".hidden", "a/b", "a b"] {
            assert!(baseline_name(bad).is_err(), "{bad:?}");
        }
    }
}
