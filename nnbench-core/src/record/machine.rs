//! The machine a run measured on: its roofs (peak compute and memory
//! bandwidth, measured), and how busy it was around the run.

use serde::{Deserialize, Serialize};

/// The machine, in the run's context: the key the history gives it, its
/// measured roofs, and how busy it was.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// if let Some(machine) = &record.context.machine {
///     if let Some(roofs) = &machine.roofs {
///         println!("{}: {:.0} GFLOP/s f64 on one core", machine.key, roofs.flops_f64.one_core / 1e9);
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MachineContext {
    /// The machine's key, as `nnbench history` keys its runs: sixteen hex
    /// digits of a digest of its architecture, CPU, cores, memory,
    /// operating system, toolchain and GPUs.
    pub key: String,
    /// Its roofs, where they were measured or cached for this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofs: Option<MachineRoofs>,
    /// Why there are no roofs, where there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofs_reason: Option<String>,
    /// How busy the machine was as the run started and ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy: Option<Busy>,
}

/// A machine's roofs: the most floating point operations a second, in
/// single and double precision, and the most bytes a second to and from
/// memory, each on one core and on all of them.
///
/// # Example
///
/// ```
/// # fn f(roofs: &nnbench::record::MachineRoofs) {
/// // The ridge point: the intensity past which a kernel is bound by compute.
/// let ridge = roofs.flops_f64.one_core / roofs.bandwidth.one_core;
/// println!("compute-bound above {ridge:.1} FLOP a byte ({})", roofs.method.units);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MachineRoofs {
    /// Single precision operations a second.
    pub flops_f32: RoofRates,
    /// Double precision operations a second.
    pub flops_f64: RoofRates,
    /// Bytes a second, STREAM's triad.
    pub bandwidth: RoofRates,
    /// How they were measured.
    pub method: RoofsMethod,
}

/// A roof on one core and on all the cores the process may use.
///
/// # Example
///
/// ```
/// # fn f(r: &nnbench::record::RoofRates) {
/// println!("{:.1}x from one core to all", r.all_cores / r.one_core);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RoofRates {
    /// On one core, a second.
    pub one_core: f64,
    /// On every core the process may use, together, a second.
    pub all_cores: f64,
}

impl RoofRates {
    /// The roof for a case on `cores` cores: one core's times the cores,
    /// up to what all of them did together (compute grows with the cores
    /// until they are all busy; bandwidth saturates what the memory gives,
    /// which the all-core figure measured).
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(r: &nnbench::record::RoofRates) {
    /// assert_eq!(r.for_cores(1), r.one_core);
    /// assert!(r.for_cores(1024) <= r.all_cores);
    /// # }
    /// ```
    pub fn for_cores(&self, cores: usize) -> f64 {
        (self.one_core * cores.max(1) as f64).min(self.all_cores.max(self.one_core))
    }
}

/// How a machine's roofs were measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RoofsMethod {
    /// The vector units of the compute kernels: `avx512f fma`, `avx2 fma`,
    /// `neon fma` or `scalar`.
    pub units: String,
    /// The cores "all cores" used.
    pub cores: usize,
    /// The bytes of each of the triad's three arrays.
    pub triad_array_bytes: u64,
    /// When they were measured, RFC 3339.
    pub measured_at: String,
    /// How long measuring took, in seconds.
    pub seconds: f64,
    /// Whether the machine was busy as they were measured (a load average
    /// or CPU steal beyond what one measuring process makes): the roofs
    /// may read low.
    pub noisy: bool,
    /// Whether this run took them from the cache of its machine's key
    /// rather than measuring them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

/// How busy the machine was around a run, where the kernel says.
///
/// # Example
///
/// ```
/// # fn f(b: &nnbench::record::Busy) {
/// if b.noisy() {
///     println!("a busy machine: load {:?}, steal {:?}", b.load_after, b.steal_fraction);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Busy {
    /// The one-minute load average as the run started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_before: Option<f64>,
    /// The one-minute load average as it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_after: Option<f64>,
    /// The share of the machine's CPU time that its hypervisor gave to
    /// other guests during the run (steal, on a virtual machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_fraction: Option<f64>,
    /// The CPU frequency governor (`performance`, `powersave`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub governor: Option<String>,
    /// The cores the load is judged against.
    pub cores: usize,
}

/// Steal past this share of the CPU time is a busy host.
const STEAL_NOISY: f64 = 0.02;

impl Busy {
    /// Whether the machine was busy beyond the run itself: a load average
    /// past the cores less the one the run takes, or steal past its limit,
    /// a limit of 2% of the CPU time.
    ///
    /// # Example
    ///
    /// ```
    /// let busy = nnbench::record::Busy::default();
    /// assert!(!busy.noisy());
    /// ```
    pub fn noisy(&self) -> bool {
        let others = self.cores.saturating_sub(1).max(1) as f64;
        let loaded = [self.load_before, self.load_after]
            .into_iter()
            .flatten()
            .any(|load| load - 1.0 > others);
        loaded || self.steal_fraction.is_some_and(|s| s > STEAL_NOISY)
    }
}

/// Roofs as a machine with AVX-512 measures them, for tests.
#[cfg(test)]
pub(crate) fn example_roofs() -> MachineRoofs {
    serde_json::from_value(serde_json::json!({
        "flops_f32": {"one_core": 2e11, "all_cores": 4e11},
        "flops_f64": {"one_core": 1e11, "all_cores": 2e11},
        "bandwidth": {"one_core": 2e10, "all_cores": 3e10},
        "method": {"units": "avx512f fma", "cores": 2, "triad_array_bytes": 134217728,
                   "measured_at": "2026-12-07T10:00:00Z", "seconds": 1.5, "noisy": false},
    }))
    .expect("roofs")
}
