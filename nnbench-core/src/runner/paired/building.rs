//! Whether the two builds of a paired run build a kept group's fixtures
//! at once or in turn. At once halves what a sweep of slow fixtures costs
//! where each build's fixture uses a core or less, or waits (a checkpoint
//! read from a network disk); where a fixture computes on every core (a
//! libtorch model trained on the CPU), two thread pools spinning against
//! each other take far more than twice as long as one. Which of the two a
//! fixture is shows in its worker's CPU time over its round's wall time,
//! measured while the worker has the machine to itself: the run's first
//! group is built in turn, and each group built in turn decides for the
//! groups after it.

use std::time::Duration;

/// How much of a core the two builds may want together beyond the
/// machine's cores and still be built at once: what a worker spends
/// reading its socket and the clock's own reading leave on a fixture
/// that keeps one core busy.
const SLACK: f64 = 1.1;

/// The cores a side's worker used in its fixture round: its CPU time over
/// the round's wall time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct CoresUsed(pub f64);

impl CoresUsed {
    /// From the worker's CPU time before and after a round that took
    /// `wall`; `None` where either reading is missing or the round took
    /// no time.
    pub(super) fn between(
        before: Option<Duration>,
        after: Option<Duration>,
        wall: Duration,
    ) -> Option<Self> {
        let used = after?.checked_sub(before?)?;
        (!wall.is_zero()).then(|| Self(used.as_secs_f64() / wall.as_secs_f64()))
    }
}

/// The decision, taken in from each fixture round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Building {
    at_once: bool,
}

impl Building {
    /// Whether the next group's fixtures are built on both builds at once.
    pub(super) fn at_once(self) -> bool {
        self.at_once
    }

    /// Takes in the cores each side's worker used (head, base) in a
    /// fixture round on a machine of `cores`, built as [`Building::at_once`]
    /// said. In turn, each side had the machine: the next groups are built
    /// at once where both sides' together fit its cores. At once, each had
    /// about half: a side that used more than its half means the two did
    /// not fit, and the next group is built in turn, measured alone again.
    pub(super) fn take_in(&mut self, used: [Option<CoresUsed>; 2], cores: usize) {
        let cores = cores.max(1) as f64;
        let [Some(CoresUsed(head)), Some(CoresUsed(base))] = used else {
            self.at_once = false;
            return;
        };
        self.at_once = if self.at_once {
            head.max(base) <= cores / 2.0 * SLACK
        } else {
            head + base <= cores * SLACK
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(head: f64, base: f64) -> [Option<CoresUsed>; 2] {
        [Some(CoresUsed(head)), Some(CoresUsed(base))]
    }

    #[test]
    fn the_first_group_is_built_in_turn() {
        assert!(!Building::default().at_once());
    }

    #[test]
    fn single_threaded_fixtures_are_built_at_once_on_two_cores() {
        let mut building = Building::default();
        building.take_in(used(1.02, 0.99), 2);
        assert!(building.at_once());
        // At once, each still used its core: they go on at once.
        building.take_in(used(0.97, 1.0), 2);
        assert!(building.at_once());
    }

    #[test]
    fn fixtures_that_wait_are_built_at_once_even_on_one_core() {
        let mut building = Building::default();
        building.take_in(used(0.02, 0.01), 1);
        assert!(building.at_once());
    }

    #[test]
    fn fixtures_on_every_core_are_built_in_turn() {
        let mut building = Building::default();
        building.take_in(used(15.2, 14.8), 16);
        assert!(!building.at_once());
        building.take_in(used(1.9, 1.8), 2);
        assert!(!building.at_once());
    }

    #[test]
    fn a_group_that_wanted_more_than_its_half_at_once_sends_the_next_in_turn() {
        let mut building = Building::default();
        building.take_in(used(3.0, 4.0), 16);
        assert!(building.at_once());
        building.take_in(used(12.0, 4.0), 16);
        assert!(!building.at_once());
    }

    #[test]
    fn a_side_not_measured_builds_in_turn() {
        let mut building = Building::default();
        building.take_in([Some(CoresUsed(0.5)), None], 4);
        assert!(!building.at_once());
    }

    #[test]
    fn cores_used_is_cpu_time_over_wall_time() {
        let second = Duration::from_secs(1);
        let used = CoresUsed::between(Some(second), Some(second * 4), second * 2);
        assert_eq!(used, Some(CoresUsed(1.5)));
        assert_eq!(CoresUsed::between(None, Some(second), second), None);
        assert_eq!(
            CoresUsed::between(Some(second), Some(second), Duration::ZERO),
            None
        );
    }
}
