//! Which machine a run's figures come from: figures of two machines are
//! never one series.

use crate::record::RunContext;

/// A machine, as the history keys its runs.
///
/// The key is made of what decides the figures: architecture, CPU model and
/// cores, memory, operating system, Rust toolchain, GPUs. The host's name is
/// left out on purpose: CI runners get a new name each run, and one kind of
/// runner should make one series. A name given with `--machine` replaces the
/// key, for a fleet whose machines should count as one, or apart.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// let machine = nnbench_cli::history::Machine::of(&record.context);
/// println!("{}: {}", machine.key, machine.description);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Sixteen hex digits of the description's BLAKE3 digest, or the name
    /// given.
    pub key: String,
    /// What the key was made of, for people.
    pub description: String,
}

impl Machine {
    /// The machine that produced a run with `context`.
    pub fn of(context: &RunContext) -> Self {
        Self {
            key: context.machine_key(),
            description: context.machine_description(),
        }
    }

    /// The machine called `name` by the user: its key is the name.
    ///
    /// # Example
    ///
    /// ```
    /// let ci = nnbench_cli::history::Machine::named("gpu-runner");
    /// assert_eq!(ci.key, "gpu-runner");
    /// ```
    pub fn named(name: &str) -> Self {
        Self {
            key: name.to_owned(),
            description: format!("named {name}"),
        }
    }
}
