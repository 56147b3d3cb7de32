//! Service-level objectives of a case that streams, such as
//! `slo = "ttft <= 200ms, tpot <= 25ms"`.

use std::time::Duration;

/// A latency of a streamed request that an objective may bound.
///
/// # Example
///
/// ```
/// use nnbench_vocab::StreamLatency;
/// assert_eq!(StreamLatency::Ttft.name(), "ttft");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamLatency {
    /// Time to first token, from when the request was due.
    Ttft,
    /// Time per output token: the last token less the first over the
    /// tokens less one.
    Tpot,
    /// A gap between two tokens; per request, its longest.
    Itl,
    /// From when the request was due to its last token.
    E2e,
}

impl StreamLatency {
    const ALL: [StreamLatency; 4] = [Self::Ttft, Self::Tpot, Self::Itl, Self::E2e];

    /// Its name in an objective: `ttft`, `tpot`, `itl` or `e2e`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Ttft => "ttft",
            Self::Tpot => "tpot",
            Self::Itl => "itl",
            Self::E2e => "e2e",
        }
    }
}

/// One objective: a latency of every request, or a percentile of it across
/// the requests, and the most it may be.
///
/// # Example
///
/// ```
/// let slo = nnbench_vocab::parse_slo("ttft <= 200ms, p99 tpot <= 25ms").unwrap();
/// assert_eq!(slo[0].quantile, None, "each request's own");
/// assert_eq!(slo[1].quantile, Some(0.99));
/// assert_eq!(slo[1].limit, std::time::Duration::from_millis(25));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    /// The latency it bounds.
    pub latency: StreamLatency,
    /// `None` where each request must meet it (such a request counts
    /// towards goodput), else the percentile, as a fraction, that the
    /// requests' latencies must keep within the limit.
    pub quantile: Option<f64>,
    /// The most it may be.
    pub limit: Duration,
}

impl std::fmt::Display for Objective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(q) = self.quantile {
            let percent = format!("{:.1}", q * 100.0);
            write!(f, "p{} ", percent.trim_end_matches(".0"))?;
        }
        write!(
            f,
            "{} <= {}",
            self.latency.name(),
            humantime::format_duration(self.limit)
        )
    }
}

/// Objectives as written in `slo`: `ttft <= 200ms, tpot <= 25ms`.
///
/// # Example
///
/// ```
/// let slo = nnbench_vocab::parse_slo("ttft<=0.2,tpot <= 25ms").unwrap();
/// assert_eq!(nnbench_vocab::format_slo(&slo), "ttft <= 200ms, tpot <= 25ms");
/// ```
pub fn format_slo(objectives: &[Objective]) -> String {
    objectives
        .iter()
        .map(Objective::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Comma-separated objectives, each a latency (`ttft`, `tpot`, `itl`,
/// `e2e`), `<=` and a duration; a percentile before the latency, as in
/// `p99 ttft <= 300ms`, bounds that percentile across the requests, and
/// without one each request must meet it.
///
/// # Errors
///
/// A message that names the objective and says what is wrong with it.
///
/// # Example
///
/// ```
/// assert!(nnbench_vocab::parse_slo("ttft <= 200ms").is_ok());
/// let err = nnbench_vocab::parse_slo("ttft <= 200ms, latency <= 1s").unwrap_err();
/// assert!(err.contains("`latency`"), "{err}");
/// ```
pub fn parse_slo(text: &str) -> Result<Vec<Objective>, String> {
    const FORM: &str = "an objective is a latency (ttft, tpot, itl or e2e), `<=` and a duration, \
                        with a percentile before it where the requests' percentile is bounded: \
                        \"ttft <= 200ms, p99 tpot <= 25ms\"";
    let mut objectives: Vec<Objective> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let Some((name, limit)) = part.split_once("<=") else {
            return Err(format!("`{part}`: {FORM}"));
        };
        let mut words = name.split_whitespace().collect::<Vec<_>>();
        let quantile = match words.as_slice() {
            [percentile, _] => {
                let q = crate::target::quantile_of(percentile)
                    .ok_or_else(|| format!("`{percentile}` is no percentile: {FORM}"))?;
                words.remove(0);
                Some(q)
            }
            [_] => None,
            _ => return Err(format!("`{part}`: {FORM}")),
        };
        let latency = StreamLatency::ALL
            .into_iter()
            .find(|l| l.name() == words[0])
            .ok_or_else(|| format!("`{}` is no latency of a stream: {FORM}", words[0]))?;
        let limit = crate::parse_duration(limit).map_err(|e| format!("`{}`: {e}", limit.trim()))?;
        let objective = Objective {
            latency,
            quantile,
            limit,
        };
        if objectives
            .iter()
            .any(|o| o.latency == latency && o.quantile == quantile)
        {
            return Err(format!("`{part}`: that latency is bounded twice"));
        }
        objectives.push(objective);
    }
    Ok(objectives)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_read_and_write_back() {
        for text in [
            "ttft <= 200ms",
            "ttft <= 200ms, tpot <= 25ms",
            "p99 ttft <= 1s, itl <= 50ms, e2e <= 2s",
            "p99.9 tpot <= 10ms",
        ] {
            assert_eq!(format_slo(&parse_slo(text).unwrap()), text);
        }
    }

    #[test]
    fn a_bad_objective_is_named() {
        for (text, says) in [
            ("", "``"),
            ("ttft 200ms", "`ttft 200ms`"),
            ("p95 ttft <= 1s", "`p95` is no percentile"),
            ("wait <= 1s", "`wait` is no latency"),
            ("ttft <= soon", "`soon`"),
            ("ttft <= 1s, ttft <= 2s", "bounded twice"),
            ("p99 ttft x <= 1s", "`p99 ttft x <= 1s`"),
        ] {
            let err = parse_slo(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
        assert!(parse_slo("ttft <= 1s, p99 ttft <= 2s").is_ok());
    }
}
