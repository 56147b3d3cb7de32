//! The samples of one round of a paired run: the same number of calls on
//! the base build and on the head build, so that the two are timed alike.
//! The head's first round calibrates that number; the rounds after it are
//! given it, and how many samples to take.

use serde::{Deserialize, Serialize};

use super::cpu::Elapsed;

/// What a worker is asked to take of a case in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Round {
    /// Calls per sample; 0: calibrate.
    pub calls: u64,
    /// Samples kept, after one dropped.
    pub samples: u32,
    /// Calls of the dropped sample, where fewer than a kept one's do: a
    /// worker kept from an earlier round of the case has its pages
    /// faulted in and needs only its caches filled again. A build that
    /// does not know it drops a whole sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_up: Option<u64>,
}

impl Round {
    /// The head's first round: calibrate, then the usual samples.
    pub(crate) const CALIBRATE: Round = Round {
        calls: 0,
        samples: SAMPLES,
        warm_up: None,
    };

    /// The round after the first on a worker kept since: the same, with a
    /// quarter of a sample's calls dropped first (one at least).
    pub(crate) fn on_a_warm_worker(self) -> Round {
        Round {
            warm_up: Some((self.calls / 4).max(1)),
            ..self
        }
    }
}

/// How long one sample of a round should take: the sampler's sample, so
/// that a paired round and a plain run time a call alike. Short enough
/// that a round of many cases stays quick, and that another process's
/// turn or an interrupt hits few of a round's samples, which the least or
/// the median of them leaves out.
pub(crate) use super::adaptive::SAMPLE_TIME as TARGET;

/// Samples per round and side, unless the round asks for more: their
/// median is the round's time, which one slow sample (a neighbour's
/// burst) does not move.
pub(crate) const SAMPLES: u32 = 3;

/// Samples `routine` (which makes the calls it is given and returns their
/// time) for one round: `round.calls` per sample, or, when that is 0, as
/// many as take [`TARGET`], found by growing the count. One sample is
/// taken first and dropped (the calibration's last, when calibrating; of
/// `round.warm_up` calls where given): a fresh process's first calls fault
/// in pages and fill caches.
pub(crate) fn sample<E>(
    round: Round,
    mut routine: impl FnMut(u64) -> Result<Elapsed, E>,
) -> Result<Vec<(u64, Elapsed)>, E> {
    let calls = if round.calls == 0 {
        calibrate(&mut routine)?
    } else {
        routine(
            round
                .warm_up
                .unwrap_or(round.calls)
                .clamp(1, round.calls.max(1)),
        )?;
        round.calls
    };
    (0..round.samples.max(1))
        .map(|_| routine(calls).map(|elapsed| (calls, elapsed)))
        .collect()
}

/// The number of calls that take [`TARGET`] or more.
fn calibrate<E>(routine: &mut impl FnMut(u64) -> Result<Elapsed, E>) -> Result<u64, E> {
    let mut calls = 1u64;
    loop {
        let took = routine(calls)?.wall;
        if took >= TARGET || calls >= 1 << 40 {
            return Ok(calls);
        }
        // Grow towards the target, by 2 to 100 times at once: a first
        // sample of a few nanoseconds says little about the next.
        let scale = TARGET.as_secs_f64() / took.as_secs_f64().max(1e-9);
        calls = (calls as f64 * scale.clamp(2.0, 100.0)).ceil() as u64;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn taking(per_call: Duration) -> impl FnMut(u64) -> Result<Elapsed, ()> {
        move |calls| {
            Ok(Elapsed {
                wall: per_call * calls as u32,
                ..Elapsed::default()
            })
        }
    }

    #[test]
    fn a_calibrated_round_takes_the_target_per_sample() {
        let samples = sample(Round::CALIBRATE, taking(Duration::from_micros(3))).unwrap();
        assert_eq!(samples.len(), SAMPLES as usize);
        let calls = samples[0].0;
        assert!(samples.iter().all(|s| s.0 == calls));
        let took = samples[0].1.wall;
        assert!(
            took >= TARGET && took < TARGET * 3,
            "{calls} calls, {took:?}"
        );
    }

    #[test]
    fn a_given_count_is_kept_and_a_slow_call_is_sampled_alone() {
        let mut made = Vec::new();
        let round = Round {
            calls: 7,
            samples: 3,
            warm_up: None,
        };
        let samples = sample(round, |calls| {
            made.push(calls);
            taking(Duration::from_nanos(10))(calls)
        })
        .unwrap();
        assert_eq!(made, [7, 7, 7, 7], "one dropped, then the samples");
        assert!(samples.iter().all(|s| s.0 == 7));
        let slow = sample(Round::CALIBRATE, taking(Duration::from_millis(20))).unwrap();
        assert!(slow.iter().all(|s| s.0 == 1));
    }

    #[test]
    fn a_warm_worker_drops_a_quarter_of_a_sample_first() {
        let mut made = Vec::new();
        let round = Round {
            calls: 40,
            samples: 3,
            warm_up: None,
        }
        .on_a_warm_worker();
        sample(round, |calls| {
            made.push(calls);
            taking(Duration::from_nanos(10))(calls)
        })
        .unwrap();
        assert_eq!(made, [10, 40, 40, 40]);
        let slow = Round {
            calls: 1,
            samples: 3,
            warm_up: None,
        };
        assert_eq!(
            slow.on_a_warm_worker().warm_up,
            Some(1),
            "one call at least"
        );
    }

    #[test]
    fn a_failure_ends_the_round() {
        let mut made = 0;
        let outcome = sample(Round::CALIBRATE, |_| {
            made += 1;
            if made == 2 {
                Err("broken")
            } else {
                Ok(Elapsed::default())
            }
        });
        assert_eq!(outcome, Err("broken"));
    }
}
