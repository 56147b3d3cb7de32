//! The command line of bench binaries made by `nnbench::main!()`: the
//! run's [`Settings`], and the flags that are actions (`--list`) or that
//! cargo and libtest pass (`--bench`, `--nocapture`, ...).

use std::ffi::OsString;

use clap::Parser;

use super::Settings;

/// Flags of a bench binary: `cargo bench [--bench NAME] -- [FLAGS]`.
#[derive(Debug, Parser)]
#[command(
    name = "nnbench",
    about = "Runs the benchmarks registered with #[benchmark], #[parametrize] and #[product]",
    disable_version_flag = true
)]
pub(crate) struct CommandLine {
    #[command(flatten)]
    settings: Settings,
    /// List the selected cases and exit.
    #[arg(long, help_heading = "Selection")]
    pub list: bool,
    /// Given by `cargo bench`: measure. Without it (`cargo test --benches`)
    /// each case runs once, quickly.
    #[arg(long, help_heading = "Test harness compatibility")]
    pub bench: bool,
    /// Accepted for libtest compatibility (every case is included).
    #[arg(long, hide = true)]
    include_ignored: bool,
    /// Accepted for libtest compatibility (output is never captured).
    #[arg(long, hide = true)]
    nocapture: bool,
    /// Accepted for libtest compatibility (cases run one at a time).
    #[arg(long, hide = true, value_name = "N")]
    test_threads: Option<usize>,
    /// The format of --list: `pretty` or `terse` (the same: `ID: benchmark`).
    #[arg(long, value_name = "FORMAT", value_parser = ["pretty", "terse"], help_heading = "Test harness compatibility")]
    format: Option<String>,
}

impl CommandLine {
    /// Parses `args`, the program's name first.
    pub(crate) fn parse_args(
        args: impl IntoIterator<Item = OsString>,
    ) -> Result<Self, clap::Error> {
        Self::try_parse_from(args)
    }

    /// Whether `--list` is asked for as `--format terse`: the list alone.
    pub(crate) fn terse(&self) -> bool {
        self.format.as_deref() == Some("terse")
    }

    /// The run these flags ask for: without `--bench`, in test mode.
    pub(crate) fn settings(&self) -> Settings {
        let mut settings = self.settings.clone();
        settings.timing.test_mode = !self.bench;
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Timing;
    use crate::memo::DiskTier;

    fn parse(args: &[&str]) -> Result<CommandLine, clap::Error> {
        CommandLine::parse_args(
            std::iter::once("bench")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    #[test]
    fn without_bench_the_binary_is_in_test_mode() {
        assert!(parse(&[]).unwrap().settings().timing.test_mode);
        assert!(!parse(&["--bench"]).unwrap().settings().timing.test_mode);
        assert!(
            parse(&["accuracy", "--bench", "--quiet"])
                .unwrap()
                .settings()
                .output
                .quiet
        );
    }

    #[test]
    fn flags_that_share_a_setting_fill_it() {
        let settings = |args: &[&str]| parse(args).unwrap().settings();
        assert_eq!(settings(&["--once"]).timing.forced.0, Some(Timing::Once));
        assert_eq!(
            settings(&["--sampled"]).timing.forced.0,
            Some(Timing::Sampled)
        );
        assert_eq!(
            settings(&["--instructions"]).timing.forced.0,
            Some(Timing::Instructions)
        );
        assert_eq!(settings(&[]).timing.forced.0, None);
        assert!(parse(&["--once", "--sampled"]).is_err());
        assert!(parse(&["--instructions", "--once"]).is_err());
        assert!(parse(&["--sampled", "--instructions"]).is_err());
        assert_eq!(settings(&[]).memory.disk_tier, DiskTier::Default);
        assert_eq!(
            settings(&["--no-memo-cache"]).memory.disk_tier,
            DiskTier::Off
        );
        assert_eq!(
            settings(&["--memo-cache-dir", "/m"]).memory.disk_tier,
            DiskTier::At("/m".into())
        );
        assert!(parse(&["--memo-cache-dir", "/m", "--no-memo-cache"]).is_err());
        assert_eq!(settings(&["--history"]).baselines.history, Some(None));
    }
}
