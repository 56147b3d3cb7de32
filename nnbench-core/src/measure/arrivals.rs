//! When the requests of an open loop are due: `rate = [...]` requests a
//! second, with exponential gaps (`arrivals = poisson`, as independent
//! users make them) or even ones (`arrivals = uniform`), from a seeded
//! generator so that a case's schedule is the same in every run.

use std::time::Duration;

/// How the gaps between requests are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arrivals {
    /// Exponential gaps of mean `1 / rate`: a Poisson process.
    #[default]
    Poisson,
    /// Gaps of exactly `1 / rate`.
    Uniform,
}

impl Arrivals {
    /// The name the attribute and the record give it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Arrivals::Poisson => "poisson",
            Arrivals::Uniform => "uniform",
        }
    }
}

/// An open loop: requests due at a set rate, whether or not the earlier
/// ones are done.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct OpenLoop {
    /// Requests a second, on average.
    pub rate: f64,
    pub arrivals: Arrivals,
    /// A request that takes longer counts as timed out.
    pub timeout: Option<Duration>,
    /// Seeds the gaps.
    pub seed: u64,
}

impl OpenLoop {
    /// The times the requests are due at, from the start, in order.
    pub(crate) fn schedule(&self) -> impl Iterator<Item = Duration> + use<> {
        let mean = 1.0 / self.rate.max(f64::MIN_POSITIVE);
        let arrivals = self.arrivals;
        let mut rng = fastrand::Rng::with_seed(self.seed);
        let mut at = 0.0f64;
        std::iter::from_fn(move || {
            let gap = match arrivals {
                // 1 - u lies in (0, 1]: its logarithm is finite.
                Arrivals::Poisson => -(1.0 - rng.f64()).ln() * mean,
                Arrivals::Uniform => mean,
            };
            at += gap;
            Some(Duration::from_secs_f64(at.min(1e9)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(arrivals: Arrivals, seed: u64) -> OpenLoop {
        OpenLoop {
            rate: 1000.0,
            arrivals,
            timeout: None,
            seed,
        }
    }

    #[test]
    fn poisson_gaps_average_the_rate_and_vary_as_an_exponential_does() {
        let times: Vec<f64> = open(Arrivals::Poisson, 7)
            .schedule()
            .take(20_000)
            .map(|d| d.as_secs_f64())
            .collect();
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((mean / 1e-3 - 1.0).abs() < 0.03, "mean gap {mean}");
        // An exponential's standard deviation is its mean.
        assert!((var.sqrt() / mean - 1.0).abs() < 0.05, "sd {}", var.sqrt());
    }

    #[test]
    fn uniform_gaps_are_even_and_a_seed_repeats_its_schedule() {
        let even: Vec<Duration> = open(Arrivals::Uniform, 1).schedule().take(3).collect();
        assert_eq!(even, [1, 2, 3].map(Duration::from_millis).to_vec());
        let a: Vec<Duration> = open(Arrivals::Poisson, 3).schedule().take(50).collect();
        let b: Vec<Duration> = open(Arrivals::Poisson, 3).schedule().take(50).collect();
        let c: Vec<Duration> = open(Arrivals::Poisson, 4).schedule().take(50).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }
}
