//! When the requests of an open loop are due: `rate = [...]` requests a
//! second, with exponential gaps (`arrivals = poisson`, as independent
//! users make them), even ones (`arrivals = uniform`), or gamma-distributed
//! ones of a set coefficient of variation (`arrivals = gamma(CV)`: bursts
//! and lulls), from a seeded generator so that a case's schedule is the
//! same in every run.

use std::time::Duration;

/// How the gaps between requests are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Arrivals {
    /// Exponential gaps of mean `1 / rate`: a Poisson process.
    #[default]
    Poisson,
    /// Gaps of exactly `1 / rate`.
    Uniform,
    /// Gamma-distributed gaps of mean `1 / rate` whose standard deviation
    /// is this many times their mean (the coefficient of variation): 1 is
    /// a Poisson process, above 1 burstier (requests come in clusters
    /// with lulls between), below 1 more even. Shape `1 / CV²`.
    Gamma(f64),
}

impl Arrivals {
    /// The name the attribute and the record give it: `poisson`,
    /// `uniform`, `gamma(4)`.
    pub(crate) fn label(self) -> String {
        match self {
            Arrivals::Poisson => "poisson".to_owned(),
            Arrivals::Uniform => "uniform".to_owned(),
            Arrivals::Gamma(cv) => format!("gamma({cv})"),
        }
    }
}

/// A request issued after this long past when it was due was issued late:
/// the client, not the service, delayed it (unless the loop judges its
/// requests against a looser limit: [`OpenLoop::late_after`]).
pub(crate) const LATE: Duration = Duration::from_micros(100);

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
    /// A request issued this long past when it was due was issued late:
    /// [`LATE`], or a hundredth of the tightest
    /// limit its requests are judged against where that is longer, since a
    /// delay that small changes no verdict.
    pub late_after: Duration,
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
                Arrivals::Poisson => exponential(&mut rng) * mean,
                Arrivals::Uniform => mean,
                Arrivals::Gamma(cv) => {
                    let shape = 1.0 / (cv * cv).max(1e-12);
                    gamma(&mut rng, shape) * mean / shape
                }
            };
            at += gap;
            Some(Duration::from_secs_f64(at.min(1e9)))
        })
    }
}

/// A draw of the exponential distribution of mean 1.
fn exponential(rng: &mut fastrand::Rng) -> f64 {
    // 1 - u lies in (0, 1]: its logarithm is finite.
    -(1.0 - rng.f64()).ln()
}

/// A draw of the standard normal distribution (Box and Muller, 1958).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let radius = (2.0 * exponential(rng)).sqrt();
    radius * (std::f64::consts::TAU * rng.f64()).cos()
}

/// A draw of the gamma distribution of shape `shape` and scale 1, by
/// Marsaglia and Tsang's method ("A simple method for generating gamma
/// variables", ACM TOMS 2000); below shape 1, a draw of shape + 1 scaled
/// by `u^(1/shape)`, as they show. The generator is fastrand, which the
/// runtime already links, rather than a distributions crate and the
/// generator it brings, for a dozen lines checked by their moments.
fn gamma(rng: &mut fastrand::Rng, shape: f64) -> f64 {
    if shape < 1.0 {
        let boost = (1.0 - rng.f64()).powf(1.0 / shape);
        return gamma(rng, shape + 1.0) * boost;
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = 1.0 - rng.f64();
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
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
            late_after: LATE,
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

    /// The mean and the coefficient of variation of the gaps of `open`.
    fn gaps(open: OpenLoop) -> (f64, f64) {
        let times: Vec<f64> = open
            .schedule()
            .take(100_000)
            .map(|d| d.as_secs_f64())
            .collect();
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        (mean, var.sqrt() / mean)
    }

    #[test]
    fn gamma_gaps_average_the_rate_and_vary_as_their_coefficient_says() {
        for cv in [0.5, 1.0, 2.0, 4.0] {
            let (mean, spread) = gaps(open(Arrivals::Gamma(cv), 11));
            assert!(
                (mean / 1e-3 - 1.0).abs() < 0.05,
                "gamma({cv}): mean gap {mean}"
            );
            assert!((spread / cv - 1.0).abs() < 0.1, "gamma({cv}): CV {spread}");
        }
        assert_eq!(Arrivals::Gamma(4.0).label(), "gamma(4)");
        assert_eq!(Arrivals::Gamma(0.5).label(), "gamma(0.5)");
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
