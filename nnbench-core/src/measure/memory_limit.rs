//! The memory this process may have: the tightest limit of the memory
//! cgroups it is in where one is below the machine's memory, else the
//! machine's.
//!
//! The cgroup is this process's own, found through `/proc/self/cgroup` and
//! the mounts of `/proc/self/mountinfo`, and every level above it counts: a
//! bench started inside a limited cgroup, or a child cgroup of one, is held
//! to that limit even where the root of the hierarchy has none (which is
//! all a reader of the root's files would see).

/// Where the memory a process may have is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Its memory cgroup's limit.
    Cgroup,
    /// The machine's memory.
    Machine,
}

/// The memory a process may have, and what else already holds some of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Room {
    /// The limit, in bytes.
    pub limit: u64,
    pub bound: Bound,
    /// Anonymous memory charged to the limiting cgroup now, this process's
    /// included; 0 where the machine bounds it (other processes on a
    /// machine come and go, and are no part of its limit).
    pub charged: u64,
}

/// The bytes this process may have, and what bounds them; `None` where
/// the system says neither.
pub(crate) fn of_this_process() -> Option<(u64, Bound)> {
    room().map(|r| (r.limit, r.bound))
}

/// The limit this process is held to, with what its cgroup holds now.
pub(crate) fn room() -> Option<Room> {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    let total = system.total_memory();
    let tightest = levels()
        .into_iter()
        .filter(|l| l.limit > 0 && l.limit < total)
        .min_by_key(|l| l.limit.saturating_sub(l.charged));
    let room = match tightest {
        Some(level) => Room {
            limit: level.limit,
            bound: Bound::Cgroup,
            charged: level.charged,
        },
        None => Room {
            limit: total,
            bound: Bound::Machine,
            charged: 0,
        },
    };
    (room.limit > 0).then_some(room)
}

/// The anonymous memory this process holds (its heap and stacks, which a
/// cgroup charges it and no reclaim gives back), in bytes.
pub(crate) fn own_anonymous() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("RssAnon:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// A memory cgroup this process is in: its limit and the anonymous
/// memory charged to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Level {
    limit: u64,
    charged: u64,
}

/// Every limited level of this process's memory cgroups, its own first.
fn levels() -> Vec<Level> {
    let (Ok(cgroups), Ok(mounts)) = (
        std::fs::read_to_string("/proc/self/cgroup"),
        std::fs::read_to_string("/proc/self/mountinfo"),
    ) else {
        return Vec::new();
    };
    folders(&cgroups, &mounts)
        .into_iter()
        .filter_map(|(folder, version)| {
            let limit =
                limit_of(&std::fs::read_to_string(folder.join(version.limit_file())).ok()?)?;
            let stat = std::fs::read_to_string(folder.join("memory.stat")).unwrap_or_default();
            Some(Level {
                limit,
                charged: stat_value(&stat, version.anonymous_key()).unwrap_or(0),
            })
        })
        .collect()
}

/// The two cgroup hierarchies, which name their files apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

impl Version {
    fn limit_file(self) -> &'static str {
        match self {
            Version::V1 => "memory.limit_in_bytes",
            Version::V2 => "memory.max",
        }
    }

    /// The `memory.stat` key of the anonymous memory charged to a level
    /// and the levels below it.
    fn anonymous_key(self) -> &'static str {
        match self {
            Version::V1 => "total_rss",
            Version::V2 => "anon",
        }
    }
}

/// The folders of the memory cgroups that `cgroups` (`/proc/self/cgroup`)
/// puts the process in, from its own up to the root of each hierarchy
/// `mounts` (`/proc/self/mountinfo`) shows mounted.
fn folders(cgroups: &str, mounts: &str) -> Vec<(std::path::PathBuf, Version)> {
    let mut out = Vec::new();
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let version = if controllers.is_empty() {
            Version::V2
        } else if controllers.split(',').any(|c| c == "memory") {
            Version::V1
        } else {
            continue;
        };
        let Some((root, mount_point)) = mount_of(mounts, version) else {
            continue;
        };
        // A mount of a subtree (a container's) shows the path from the
        // hierarchy's root; the folder is the rest of it under the mount.
        let inside = path.strip_prefix(root).unwrap_or(path);
        let base = std::path::Path::new(mount_point);
        let mut folder = base.to_path_buf();
        let inside = inside.trim_start_matches('/');
        if !inside.is_empty() {
            folder.push(inside);
        }
        loop {
            out.push((folder.clone(), version));
            if folder == base || !folder.pop() || !folder.starts_with(base) {
                break;
            }
        }
    }
    out
}

/// The root and mount point of the hierarchy of `version` that carries
/// the memory controller.
fn mount_of(mounts: &str, version: Version) -> Option<(&str, &str)> {
    mounts.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let dash = fields.iter().position(|f| *f == "-")?;
        let (root, mount_point) = (*fields.get(3)?, *fields.get(4)?);
        let fs_type = *fields.get(dash + 1)?;
        let options = fields.get(dash + 3).copied().unwrap_or("");
        let found = match version {
            Version::V2 => fs_type == "cgroup2",
            Version::V1 => fs_type == "cgroup" && options.split(',').any(|o| o == "memory"),
        };
        found.then_some((root, mount_point))
    })
}

/// A limit file's bytes; `None` for `max`, no limit.
fn limit_of(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// The value of `key` in a `memory.stat`.
fn stat_value(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const V1_MOUNTS: &str = "\
25 24 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs ro,mode=755
30 25 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 25 0:30 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
";

    fn paths(found: &[(PathBuf, Version)]) -> Vec<&str> {
        found.iter().map(|(p, _)| p.to_str().unwrap()).collect()
    }

    #[test]
    fn a_v1_process_is_held_by_its_own_memory_cgroup_and_each_above_it() {
        let cgroups = "4:cpu:/\n3:memory:/ci/job-7\n1:name=systemd:/\n";
        let found = folders(cgroups, V1_MOUNTS);
        assert_eq!(
            paths(&found),
            [
                "/sys/fs/cgroup/memory/ci/job-7",
                "/sys/fs/cgroup/memory/ci",
                "/sys/fs/cgroup/memory"
            ]
        );
        assert!(found.iter().all(|(_, v)| *v == Version::V1));
    }

    #[test]
    fn a_v2_process_reads_memory_max_under_the_unified_mount() {
        let mounts = "30 25 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let found = folders("0::/user.slice/bench.scope\n", mounts);
        assert_eq!(
            paths(&found),
            [
                "/sys/fs/cgroup/user.slice/bench.scope",
                "/sys/fs/cgroup/user.slice",
                "/sys/fs/cgroup"
            ]
        );
        assert_eq!(found[0].1.limit_file(), "memory.max");
    }

    #[test]
    fn a_mounted_subtree_is_read_from_its_mount_point() {
        let mounts = "33 25 0:30 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        let found = folders("9:memory:/docker/abc\n", mounts);
        assert_eq!(paths(&found), ["/sys/fs/cgroup/memory"]);
    }

    #[test]
    fn a_hierarchy_without_the_memory_controller_or_its_mount_holds_nothing() {
        assert!(folders("4:cpu,cpuacct:/x\n", V1_MOUNTS).is_empty());
        assert!(folders("0::/x\n", V1_MOUNTS).is_empty());
    }

    #[test]
    fn limits_and_stats_read_as_the_kernel_writes_them() {
        assert_eq!(limit_of("536870912\n"), Some(512 << 20));
        assert_eq!(limit_of("max\n"), None);
        let stat = "cache 4096\nrss 1000\ntotal_rss 8192\n";
        assert_eq!(stat_value(stat, "total_rss"), Some(8192));
        assert_eq!(stat_value(stat, "anon"), None);
    }

    #[test]
    fn this_process_has_room_and_its_own_anonymous_memory() {
        let room = room().expect("a limit: the machine's at least");
        assert!(room.limit > 0);
        if cfg!(target_os = "linux") {
            assert!(own_anonymous().is_some_and(|b| b > 0));
        }
    }
}
