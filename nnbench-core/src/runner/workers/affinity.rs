//! Which CPU a worker may run on. On a shared machine the CPUs of one
//! process are not equally fast (a neighbour busy on a hyperthread's twin,
//! a host core shared with another guest), and a single-threaded process
//! mostly stays where it started: two workers that landed on different
//! CPUs differ by that CPU's speed, which for a paired run is a false
//! verdict. Pinning both workers of a round to one CPU compares like with
//! like.

use std::process::Command;

pub(crate) use crate::measure::placement::allowed_cpus;

/// Has the process `command` starts, and every thread it makes, run on
/// `cpu` alone. A CPU that cannot be set (gone offline since it was
/// listed) leaves the process where the system puts it, as it would be
/// without pinning.
#[cfg(target_os = "linux")]
pub(crate) fn pin(command: &mut Command, cpu: usize) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec the closure makes one system call on a
    // set built on its own stack; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            Ok(())
        });
    }
}

/// Elsewhere no CPU is listed, so none is asked for.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pin(_command: &mut Command, _cpu: usize) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_child_runs_on_its_cpu_alone() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty(), "this process runs somewhere");
        let cpu = *cpus.last().unwrap();
        let mut command = Command::new("sh");
        command.args(["-c", "grep Cpus_allowed_list /proc/self/status"]);
        pin(&mut command, cpu);
        let output = command.output().expect("sh runs");
        let said = String::from_utf8_lossy(&output.stdout);
        assert_eq!(
            said.split_whitespace().last(),
            Some(cpu.to_string().as_str())
        );
    }
}
