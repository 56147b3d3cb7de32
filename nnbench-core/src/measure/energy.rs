//! The GPUs' energy counter read around a case's calls: see
//! [`EnergyRecord`] for what the figure is.

use std::time::Instant;

use super::gpu;
use crate::record::EnergyRecord;

/// The counter as the calls started, or why there is none.
pub(crate) enum EnergyMeter {
    Counting { millijoules: u64, started: Instant },
    Absent(String),
}

impl EnergyMeter {
    /// Reads the counter as the calls start; `None` where the run has no
    /// GPU, which costs a case nothing more than that answer.
    pub(crate) fn start() -> Option<Self> {
        Some(match gpu::energy_millijoules()? {
            Ok(millijoules) => Self::Counting {
                millijoules,
                started: Instant::now(),
            },
            Err(why) => Self::Absent(why),
        })
    }

    /// Reads the counter as the calls end: the window's energy, or why
    /// there is none.
    pub(crate) fn stop(self) -> EnergyWindow {
        let (start, started) = match self {
            Self::Counting {
                millijoules,
                started,
            } => (millijoules, started),
            Self::Absent(why) => return EnergyWindow(Err(why)),
        };
        let seconds = started.elapsed().as_secs_f64();
        EnergyWindow(match gpu::energy_millijoules() {
            Some(Ok(end)) if end >= start => Ok((end - start, seconds)),
            Some(Ok(_)) => Err("NVML's energy counter went back: the driver reloaded".into()),
            Some(Err(why)) => Err(why),
            None => Err("the GPUs went away while the calls ran".into()),
        })
    }
}

/// The millijoules and seconds of the calls' window, or why there are none.
pub(crate) struct EnergyWindow(Result<(u64, f64), String>);

impl EnergyWindow {
    /// The energy of calls whose median took `median_ns`, handling `items`
    /// each where a throughput is declared.
    pub(crate) fn record(self, median_ns: f64, items: Option<u64>) -> Box<EnergyRecord> {
        Box::new(match self.0 {
            Ok((millijoules, seconds)) => {
                EnergyRecord::counted(millijoules, seconds, median_ns, items)
            }
            Err(why) => EnergyRecord::absent(why),
        })
    }
}
