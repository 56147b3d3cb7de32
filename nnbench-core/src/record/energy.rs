//! The energy a case's calls used on the GPUs, from NVML's counter.

use serde::{Deserialize, Serialize};

/// A case's energy: joules per call and per item handled, where the run
/// has GPUs, or why there is no figure.
///
/// NVML counts the energy each GPU used since its driver loaded; the
/// harness reads the counter, summed over the GPUs NVML sees, as the
/// case's calls start and when they end. Their mean power over that
/// window (warm-up and samples alike) times the median call's time is
/// `joules`. The counter is the device's, not the process's: other work
/// on the same GPUs counts too, and an idle GPU's power counts for every
/// call. A run without GPUs records no `energy`: its context's
/// `gpu.reason` says why.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// match case.energy.as_deref() {
///     Some(e) if e.joules.is_some() => {
///         println!("{}: {:.3} J a call at {:.0} W", case.id, e.joules.unwrap(), e.watts.unwrap())
///     }
///     Some(e) => println!("{}: no energy figure: {:?}", case.id, e.reason),
///     None => println!("{}: no GPU", case.id),
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct EnergyRecord {
    /// Joules per call: the mean power while the calls ran times the
    /// median call's wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules: Option<f64>,
    /// Joules per item handled, where the family declares a `throughput`
    /// (per element or byte, as it counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_item: Option<f64>,
    /// The GPUs' mean power while the calls ran, in watts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watts: Option<f64>,
    /// How the energy was counted; `None` with a `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<EnergyMethod>,
    /// Why there is no figure: a GPU that keeps no count, a counter that
    /// did not move in a window too short for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// How a case's energy was counted.
///
/// # Example
///
/// ```
/// use nnbench::record::EnergyMethod;
/// assert_eq!(serde_json::to_string(&EnergyMethod::Nvml).unwrap(), "\"nvml\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EnergyMethod {
    /// NVML's total energy counter of each GPU (Volta and later), in
    /// millijoules.
    Nvml,
}

impl EnergyRecord {
    /// No figure, for `reason`.
    pub(crate) fn absent(reason: impl Into<String>) -> Self {
        Self {
            reason: Some(reason.into()),
            ..Self::default()
        }
    }

    /// The energy of calls whose median took `median_ns`, handling
    /// `items` each where a throughput is declared, from `millijoules`
    /// counted over `seconds` while they ran.
    pub(crate) fn counted(
        millijoules: u64,
        seconds: f64,
        median_ns: f64,
        items: Option<u64>,
    ) -> Self {
        if millijoules == 0 {
            return Self::absent(format!(
                "NVML's energy counter did not move in the {:.1} ms the calls ran: too short a window for it",
                seconds * 1e3
            ));
        }
        if !(seconds > 0.0 && median_ns.is_finite() && median_ns > 0.0) {
            return Self::absent("the calls took no measurable time");
        }
        let watts = millijoules as f64 / 1e3 / seconds;
        let joules = watts * median_ns / 1e9;
        Self {
            joules: Some(joules),
            joules_per_item: items.filter(|&n| n > 0).map(|n| joules / n as f64),
            watts: Some(watts),
            method: Some(EnergyMethod::Nvml),
            reason: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_charged_the_mean_power_over_its_median_time() {
        // 700 J over 2 s is 350 W; a call of 10 ms then costs 3.5 J, and
        // 3.5 mJ an item of a thousand.
        let e = EnergyRecord::counted(700_000, 2.0, 10e6, Some(1000));
        assert_eq!(e.method, Some(EnergyMethod::Nvml));
        assert!((e.watts.unwrap() - 350.0).abs() < 1e-9);
        assert!((e.joules.unwrap() - 3.5).abs() < 1e-9);
        assert!((e.joules_per_item.unwrap() - 3.5e-3).abs() < 1e-12);
        assert_eq!(e.reason, None);
        let no_items = EnergyRecord::counted(700_000, 2.0, 10e6, None);
        assert_eq!(no_items.joules_per_item, None);
    }

    #[test]
    fn a_counter_that_did_not_move_gives_a_reason_not_zero() {
        let e = EnergyRecord::counted(0, 0.03, 1e3, None);
        assert_eq!(e.joules, None);
        assert_eq!(e.method, None);
        assert!(e.reason.unwrap().contains("30.0 ms"));
        let json = serde_json::to_string(&EnergyRecord::counted(5, 0.0, 1e3, None)).unwrap();
        assert!(json.starts_with(r#"{"reason":"#), "{json}");
    }
}
