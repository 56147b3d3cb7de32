//! The memory this process may have: its cgroup's limit where there is
//! one below the machine's memory, else the machine's.

/// Where the memory a process may have is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Its memory cgroup's limit.
    Cgroup,
    /// The machine's memory.
    Machine,
}

/// The bytes this process may have, and what bounds them; `None` where
/// the system says neither.
pub(crate) fn of_this_process() -> Option<(u64, Bound)> {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    let total = system.total_memory();
    let limit = match system.cgroup_limits() {
        Some(cgroup) if cgroup.total_memory > 0 && cgroup.total_memory < total => {
            (cgroup.total_memory, Bound::Cgroup)
        }
        _ => (total, Bound::Machine),
    };
    (limit.0 > 0).then_some(limit)
}
