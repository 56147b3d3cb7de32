//! The context of a run in its record: the machine, the source and the
//! toolchain that produced the figures.

use serde::{Deserialize, Serialize};

use super::GpuMethod;

/// The machine, source and toolchain behind a run.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let ctx = &record.context;
/// println!("{} cores, nnbench {}", ctx.host.cores, ctx.nnbench);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunContext {
    /// The machine.
    pub host: Host,
    /// The repository the bench was run from, when it is one and git
    /// could say whether its tracked files were changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Git>,
    /// nnbench's version.
    pub nnbench: String,
    /// `rustc --version` of the compiler that built the harness.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rustc: Option<String>,
    /// The command line of the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The GPUs figures were taken on, or why there were none.
    #[serde(default)]
    pub gpu: GpuContext,
    /// The machine's key, its roofs, and how busy it was around the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<super::MachineContext>,
}

impl RunContext {
    /// What decides a machine's figures, for people: architecture, CPU
    /// model and cores, memory, operating system, Rust toolchain, GPUs.
    /// The host's name is left out on purpose: CI runners get a new name
    /// each run, and one kind of runner is one machine.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(record: &nnbench::RunRecord) {
    /// println!("{}: {}", record.context.machine_key(), record.context.machine_description());
    /// # }
    /// ```
    pub fn machine_description(&self) -> String {
        let host = &self.host;
        let gpus: Vec<&str> = self
            .gpu
            .devices
            .iter()
            .map(|d| d.name.as_deref().unwrap_or("unnamed GPU"))
            .collect();
        format!(
            "{} {} ×{}, {} GiB, {}, {}, {}",
            host.arch,
            host.cpu.as_deref().unwrap_or("unknown CPU"),
            host.cores,
            // Rounded: the kernel reports a few MiB more or less after an
            // update, and it is the same machine.
            host.memory_bytes.map_or(0, |b| (b + (1 << 29)) >> 30),
            host.os.as_deref().unwrap_or("unknown OS"),
            self.rustc.as_deref().unwrap_or("unknown rustc"),
            if gpus.is_empty() {
                "no GPU".to_owned()
            } else {
                gpus.join(" + ")
            }
        )
    }

    /// The machine's key: sixteen hex digits of the BLAKE3 digest of
    /// [`machine_description`](Self::machine_description), as `nnbench
    /// history` keys its runs and the roofs' cache its machines.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(record: &nnbench::RunRecord) {
    /// assert_eq!(record.context.machine_key().len(), 16);
    /// # }
    /// ```
    pub fn machine_key(&self) -> String {
        blake3::hash(self.machine_description().as_bytes()).to_hex()[..16].to_owned()
    }
}

/// The GPUs of the machine, as NVML sees them.
///
/// # Example
///
/// ```
/// # fn f(gpu: &nnbench::record::GpuContext) {
/// match &gpu.reason {
///     Some(why) => println!("no GPU figures: {why}"),
///     None => println!("{} GPUs, driver {:?}", gpu.devices.len(), gpu.driver),
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuContext {
    /// Whether GPU memory was measured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub available: bool,
    /// Why it was not (no driver, no device, disabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The driver's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// How per-case figures are taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<GpuMethod>,
    /// The devices.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<GpuDevice>,
}

/// One GPU.
///
/// # Example
///
/// ```
/// # fn f(d: &nnbench::record::GpuDevice) {
/// println!("GPU {}: {:?}, {:?} bytes", d.index, d.name, d.memory_bytes);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GpuDevice {
    /// NVML's index of the device.
    pub index: u32,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its total memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

/// The machine a run ran on.
///
/// # Example
///
/// ```
/// # fn f(host: &nnbench::record::Host) {
/// println!("{:?} on {:?}", host.cpu, host.os);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Host {
    /// The host's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The operating system and its version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The kernel's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// The CPU architecture, as Rust names it (`x86_64`, `aarch64`).
    pub arch: String,
    /// The CPU's model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Logical cores available to the process.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub cores: usize,
    /// Physical cores of the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_cores: Option<usize>,
    /// Total memory of the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
}

/// The state of the repository a run was made from.
///
/// # Example
///
/// ```
/// # fn f(git: &nnbench::record::Git) {
/// println!("{}{}", git.commit, if git.dirty { "+dirty" } else { "" });
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Git {
    /// The commit checked out.
    pub commit: String,
    /// The branch checked out, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Whether tracked files had changes not committed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dirty: bool,
}

impl Git {
    /// The state of a checkout at `commit`, on `branch` (`None` when the
    /// head is detached), `dirty` where tracked files had changes.
    ///
    /// # Example
    ///
    /// ```
    /// let git = nnbench::record::Git::new("4b825dc6", Some("main".into()), false);
    /// assert_eq!(git.branch.as_deref(), Some("main"));
    /// ```
    pub fn new(commit: impl Into<String>, branch: Option<String>, dirty: bool) -> Self {
        Git {
            commit: commit.into(),
            branch,
            dirty,
        }
    }
}
