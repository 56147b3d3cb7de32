//! Flags and variables renamed for 0.1.0, so that each idea has one name:
//! the old spelling is still taken for one release, hidden from `--help`,
//! and the run says what to write instead.

use std::ffi::OsString;

/// Old flag, new flag. A flag that takes a value takes it either way
/// (`--old VALUE` or `--old=VALUE`).
const FLAGS: [(&str, &str); 5] = [
    ("--sampled", "--criterion"),
    ("--memo-cache-dir", "--disk-tier-dir"),
    ("--no-memo-cache", "--no-disk-tier"),
    ("--memo-cache-max", "--disk-tier-max"),
    ("--memo-cache", "--disk-tier"),
];

/// Old variable, its new name, and the flag both stand for: the old one
/// is read where neither the new one nor the flag is given.
const VARIABLES: [(&str, &str, &str); 1] = [(
    "NNBENCH_MEMO_CACHE_MAX",
    "NNBENCH_DISK_TIER_MAX",
    "--disk-tier-max",
)];

/// `args` with each renamed flag written under its new name, and what to
/// tell the user of each old name met.
///
/// The first argument is the program's name and is never renamed; after
/// a lone `--` nothing is.
pub(crate) fn rename_flags(args: Vec<OsString>) -> (Vec<OsString>, Vec<String>) {
    let mut said = Vec::new();
    let mut after_separator = false;
    let renamed = args
        .into_iter()
        .enumerate()
        .map(|(at, arg)| {
            if at == 0 || after_separator {
                return arg;
            }
            if arg == "--" {
                after_separator = true;
                return arg;
            }
            let Some(text) = arg.to_str() else {
                return arg;
            };
            let (flag, value) = match text.split_once('=') {
                Some((flag, value)) => (flag, Some(value)),
                None => (text, None),
            };
            match FLAGS.iter().find(|(old, _)| *old == flag) {
                Some((old, new)) => {
                    said.push(renamed_note(old, new));
                    match value {
                        Some(value) => OsString::from(format!("{new}={value}")),
                        None => OsString::from(*new),
                    }
                }
                None => arg,
            }
        })
        .collect();
    (renamed, said)
}

/// Where an old variable is set and neither its new name nor its flag is
/// given, adds the flag with its value to `args`, and says so.
pub(crate) fn rename_variables(args: &mut Vec<OsString>) -> Vec<String> {
    let mut said = Vec::new();
    for (old, new, flag) in VARIABLES {
        let Some(value) = std::env::var_os(old) else {
            continue;
        };
        said.push(renamed_note(old, new));
        let given = args.iter().any(|arg| {
            arg.to_str()
                .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
        });
        if !given && std::env::var_os(new).is_none() {
            let mut arg = OsString::from(format!("{flag}="));
            arg.push(value);
            // Before a lone `--`, after which nothing is a flag.
            let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
            args.insert(at, arg);
        }
    }
    said
}

fn renamed_note(old: &str, new: &str) -> String {
    format!("{old} is renamed {new}: the old name is taken until the next release")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn old_flags_are_written_under_their_new_names_and_said() {
        let (renamed, said) = rename_flags(args(&[
            "bench",
            "--sampled",
            "--memo-cache-dir=/tmp/tier",
            "--memo-cache-max",
            "2GiB",
            "--memo-cache",
            "clear",
            "accuracy",
        ]));
        assert_eq!(
            renamed,
            args(&[
                "bench",
                "--criterion",
                "--disk-tier-dir=/tmp/tier",
                "--disk-tier-max",
                "2GiB",
                "--disk-tier",
                "clear",
                "accuracy",
            ])
        );
        assert_eq!(said.len(), 4);
        assert!(said[0].starts_with("--sampled is renamed --criterion"));
    }

    #[test]
    fn new_names_values_and_what_follows_a_separator_are_left_alone() {
        let list = args(&["--sampled", "--criterion", "--", "--sampled"]);
        let (renamed, said) = rename_flags(list);
        assert_eq!(
            renamed,
            args(&["--sampled", "--criterion", "--", "--sampled"])
        );
        assert!(said.is_empty());
    }
}
