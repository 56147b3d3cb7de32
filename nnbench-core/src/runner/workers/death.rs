//! Why a worker died during a case, in words for the case's record: the
//! signal or exit status, whether it looks like running out of memory, and
//! the memory seen.

use std::os::unix::process::ExitStatusExt as _;
use std::process::ExitStatus;
use std::time::Duration;

use nnbench_vocab::format_bytes;

/// What the supervisor saw of a worker that died in a case.
pub(crate) struct Evidence<'a> {
    pub status: ExitStatus,
    /// The case ran past `--case-timeout`, and the supervisor killed it.
    pub timed_out: Option<Duration>,
    /// The kernel's OOM killer ran while the case did (`oom_kill` in
    /// `/proc/vmstat` rose).
    pub oom_killer_ran: bool,
    /// The last lines the worker wrote to stderr.
    pub stderr_tail: &'a str,
    /// Its last sampled memory and address space, and the peak memory.
    pub last_rss: Option<u64>,
    pub last_vm: Option<u64>,
    pub peak_rss: Option<u64>,
    /// The memory the worker may use: the machine's or its cgroup's.
    pub memory_limit: Option<u64>,
    /// `--worker-memory-limit`: its address space limit.
    pub address_space_limit: Option<u64>,
}

/// "Near the limit": what a last sample before an out-of-memory kill, taken
/// every few milliseconds, shows of a process that was growing.
const NEAR: f64 = 0.9;

impl Evidence<'_> {
    /// The case's error: a message, and what else was seen as causes.
    pub(crate) fn describe(&self) -> (String, Vec<String>) {
        let how = match (self.timed_out, self.status.signal(), self.status.code()) {
            (Some(limit), _, _) => format!(
                "timed out: still running after {} (--case-timeout); its worker process was killed",
                humantime::format_duration(limit)
            ),
            (None, Some(signal), _) => format!(
                "the worker process was killed by signal {signal} ({}){}",
                signal_hook::low_level::signal_name(signal).unwrap_or("unknown"),
                if self.status.core_dumped() {
                    ", core dumped"
                } else {
                    ""
                }
            ),
            (None, None, Some(code)) => {
                format!("the worker process exited with status {code} during the case")
            }
            (None, None, None) => "the worker process ended during the case".into(),
        };
        let message = match (self.timed_out, self.out_of_memory()) {
            (None, Some(why)) => format!("{how}: out of memory? {why}"),
            _ => how,
        };
        let mut causes = Vec::new();
        if let Some(peak) = self.peak_rss {
            causes.push(format!(
                "peak resident memory seen in the case: {}",
                format_bytes(peak)
            ));
        }
        if let Some(line) = last_words(self.stderr_tail) {
            causes.push(format!("its last line on stderr: {line}"));
        }
        (message, causes)
    }

    /// Why the death looks like running out of memory, if it does.
    fn out_of_memory(&self) -> Option<String> {
        if let Some(line) = self
            .stderr_tail
            .lines()
            .rev()
            .find(|l| l.contains("memory allocation of") && l.contains("failed"))
        {
            return Some(format!("an allocation failed ({})", line.trim()));
        }
        let killed = self.status.signal() == Some(libc::SIGKILL);
        if killed && self.oom_killer_ran {
            return Some("the kernel's OOM killer ran while the case did".into());
        }
        let near = |seen: Option<u64>, limit: Option<u64>| match (seen, limit) {
            (Some(seen), Some(limit)) if limit > 0 => seen as f64 >= NEAR * limit as f64,
            _ => false,
        };
        if near(self.last_rss, self.memory_limit) {
            return Some(format!(
                "its resident memory was {} of the {} it may use",
                format_bytes(self.last_rss.unwrap_or(0)),
                format_bytes(self.memory_limit.unwrap_or(0))
            ));
        }
        if near(self.last_vm, self.address_space_limit) {
            return Some(format!(
                "its address space was {} of the {} --worker-memory-limit allows",
                format_bytes(self.last_vm.unwrap_or(0)),
                format_bytes(self.address_space_limit.unwrap_or(0))
            ));
        }
        None
    }
}

/// The last line with something on it, before a backtrace if the panic
/// or abort printed one (its last line is a note on how to see more).
pub(crate) fn last_words(text: &str) -> Option<&str> {
    let before_backtrace = match text.rfind("stack backtrace:") {
        Some(at) => &text[..at],
        None => text,
    };
    before_backtrace
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
}

/// How many times the kernel's OOM killer has killed a process since boot,
/// where the system says, read from one `/proc/vmstat` opened before the
/// cases grow.
///
/// A supervisor shares its worker's cgroup. Opening the file anew for each
/// look, and the kernel's buffer for its first read, are charged to that
/// cgroup: in the moments between the worker's kill and the release of its
/// memory, such a charge made the OOM killer take the supervisor, the only
/// process left to take, and the record with it. A file kept open keeps
/// its buffer, and the reads land in this thread's stack.
pub(crate) struct OomKills(Option<std::fs::File>);

impl OomKills {
    /// The count's file, read once so that the kernel's buffer for it is
    /// made now.
    pub(crate) fn open() -> Self {
        let kills = Self(std::fs::File::open("/proc/vmstat").ok());
        let _ = kills.read();
        kills
    }

    /// The count now.
    pub(crate) fn read(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt as _;
        // Sized for the whole file: /proc files tell no size, and reading
        // one in small steps makes the kernel write it out at each.
        let mut buffer = [0u8; 16 << 10];
        let len = self.0.as_ref()?.read_at(&mut buffer, 0).ok()?;
        std::str::from_utf8(&buffer[..len])
            .ok()?
            .lines()
            .find_map(|line| line.strip_prefix("oom_kill "))?
            .trim()
            .parse()
            .ok()
    }
}

/// The memory a worker may use: its cgroup's limit where there is one,
/// else the machine's.
pub(crate) fn memory_limit() -> Option<u64> {
    crate::measure::memory_limit::of_this_process().map(|(bytes, _)| bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(raw_status: i32) -> Evidence<'static> {
        Evidence {
            status: ExitStatus::from_raw(raw_status),
            timed_out: None,
            oom_killer_ran: false,
            stderr_tail: "",
            last_rss: Some(100 << 20),
            last_vm: Some(200 << 20),
            peak_rss: Some(120 << 20),
            memory_limit: Some(8 << 30),
            address_space_limit: None,
        }
    }

    #[test]
    fn a_signal_is_named_with_its_number_and_the_peak_seen() {
        let (message, causes) = evidence(libc::SIGSEGV).describe();
        assert_eq!(
            message,
            "the worker process was killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(causes, ["peak resident memory seen in the case: 120 MiB"]);
    }

    #[test]
    fn out_of_memory_is_said_when_the_kernel_or_the_samples_say_so() {
        let mut killed = evidence(libc::SIGKILL);
        killed.oom_killer_ran = true;
        assert!(
            killed.describe().0.ends_with(
                "SIGKILL): out of memory? the kernel's OOM killer ran while the case did"
            )
        );
        let mut near = evidence(libc::SIGKILL);
        near.last_rss = Some(7800 << 20);
        assert!(
            near.describe()
                .0
                .contains("out of memory? its resident memory was")
        );
        let mut aborted = evidence(libc::SIGABRT);
        aborted.stderr_tail = "memory allocation of 1073741824 bytes failed\n";
        let (message, causes) = aborted.describe();
        assert!(message.contains("(SIGABRT): out of memory? an allocation failed (memory allocation of 1073741824 bytes failed)"));
        assert!(causes[1].ends_with("memory allocation of 1073741824 bytes failed"));
        aborted.stderr_tail = "computing\nmemory allocation of 8 bytes failed\nstack backtrace:\n   0: main\nnote: Some details are omitted\n";
        assert_eq!(
            aborted.describe().1[1],
            "its last line on stderr: memory allocation of 8 bytes failed"
        );
        assert!(
            !evidence(libc::SIGKILL).describe().0.contains("memory"),
            "a kill with room left is not called out of memory"
        );
    }

    #[test]
    fn an_exit_and_a_timeout_say_what_they_are() {
        assert_eq!(
            evidence(3 << 8).describe().0,
            "the worker process exited with status 3 during the case"
        );
        let mut timed_out = evidence(libc::SIGKILL);
        timed_out.timed_out = Some(Duration::from_secs(2));
        assert_eq!(
            timed_out.describe().0,
            "timed out: still running after 2s (--case-timeout); its worker process was killed"
        );
    }
}
