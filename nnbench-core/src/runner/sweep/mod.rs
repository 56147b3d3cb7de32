//! The loop over a run's cases in the process that runs them
//! ([`case_loop`]), keeping the disk tier within its size
//! ([`tier_limit`]) and, without workers, watching for a case past its
//! time ([`watchdog`]).

pub(super) mod case_loop;
pub(super) mod tier_limit;
pub(super) mod watchdog;
