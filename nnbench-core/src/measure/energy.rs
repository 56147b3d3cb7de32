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

    /// The energy since [`start`](Self::start) of calls whose median took
    /// `median_ns`, handling `items` each where a throughput is declared.
    pub(crate) fn finish(self, median_ns: f64, items: Option<u64>) -> Box<EnergyRecord> {
        let (start, started) = match self {
            Self::Counting {
                millijoules,
                started,
            } => (millijoules, started),
            Self::Absent(why) => return Box::new(EnergyRecord::absent(why)),
        };
        let seconds = started.elapsed().as_secs_f64();
        Box::new(match gpu::energy_millijoules() {
            Some(Ok(end)) if end >= start => {
                EnergyRecord::counted(end - start, seconds, median_ns, items)
            }
            Some(Ok(_)) => {
                EnergyRecord::absent("NVML's energy counter went back: the driver reloaded")
            }
            Some(Err(why)) => EnergyRecord::absent(why),
            None => EnergyRecord::absent("the GPUs went away while the calls ran"),
        })
    }
}
