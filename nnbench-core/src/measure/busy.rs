//! How busy the machine is: the load average, the CPU time the hypervisor
//! gives to other guests (steal), and the frequency governor, where Linux
//! exposes them.

use crate::record::Busy;

/// What is read as a run starts, to be judged against as it ends.
#[derive(Clone, Debug)]
pub(crate) struct Before {
    load: Option<f64>,
    /// Total and stolen CPU ticks of `/proc/stat`'s `cpu` line.
    ticks: Option<(u64, u64)>,
}

/// Reads the machine as a run starts.
pub(crate) fn before() -> Before {
    Before {
        load: load_average(),
        ticks: ticks(),
    }
}

impl Before {
    /// The machine around the run, read again now that it ends.
    pub(crate) fn after(&self) -> Busy {
        let steal_fraction =
            self.ticks
                .zip(ticks())
                .and_then(|((total, steal), (total_now, steal_now))| {
                    let elapsed = total_now.checked_sub(total)?;
                    (elapsed > 0).then(|| steal_now.saturating_sub(steal) as f64 / elapsed as f64)
                });
        Busy {
            load_before: self.load,
            load_after: load_average(),
            steal_fraction,
            governor: governor(),
            cores: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// All CPU ticks and the stolen ones, from `/proc/stat`.
fn ticks() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_line(text.lines().next()?)
}

/// `cpu  user nice system idle iowait irq softirq steal ...`: the sum of
/// the first eight fields, and steal.
fn parse_cpu_line(line: &str) -> Option<(u64, u64)> {
    let mut fields = line.split_whitespace();
    (fields.next()? == "cpu").then_some(())?;
    let values: Vec<u64> = fields
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    (values.len() == 8).then(|| (values.iter().sum(), values[7]))
}

fn governor() -> Option<String> {
    let text =
        std::fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").ok()?;
    Some(text.trim().to_owned()).filter(|g| !g.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_gives_all_ticks_and_the_stolen() {
        assert_eq!(
            parse_cpu_line("cpu  100 0 50 800 10 0 5 35 0 0"),
            Some((1000, 35))
        );
        assert_eq!(parse_cpu_line("cpu0 1 2 3 4 5 6 7 8"), None);
        assert_eq!(parse_cpu_line("cpu 1 2"), None);
    }

    #[test]
    fn a_run_reads_the_machine_around_it() {
        let busy = before().after();
        assert!(busy.cores >= 1);
        if std::path::Path::new("/proc/stat").exists() {
            assert!(busy.steal_fraction.is_none_or(|s| (0.0..=1.0).contains(&s)));
            assert!(busy.load_before.is_some());
        }
    }
}
