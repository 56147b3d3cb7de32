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
    /// Renamed flags are taken under their old names too, and the run
    /// says what to write instead.
    pub(crate) fn parse_args(
        args: impl IntoIterator<Item = OsString>,
    ) -> Result<Self, clap::Error> {
        let (mut args, mut renamed) = super::renamed::rename_flags(args.into_iter().collect());
        renamed.extend(super::renamed::rename_variables(&mut args));
        let mut line = Self::try_parse_from(args)?;
        line.settings.renamed = renamed;
        Ok(line)
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
            settings(&["--criterion"]).timing.forced.0,
            Some(Timing::Criterion)
        );
        assert_eq!(
            settings(&["--instructions"]).timing.forced.0,
            Some(Timing::Instructions)
        );
        assert_eq!(settings(&[]).timing.forced.0, None);
        assert!(parse(&["--once", "--criterion"]).is_err());
        assert!(parse(&["--instructions", "--once"]).is_err());
        assert!(parse(&["--criterion", "--instructions"]).is_err());
        assert_eq!(settings(&[]).memory.disk_tier, DiskTier::Default);
        assert_eq!(
            settings(&["--no-disk-tier"]).memory.disk_tier,
            DiskTier::Off
        );
        assert_eq!(
            settings(&["--disk-tier-dir", "/m"]).memory.disk_tier,
            DiskTier::At("/m".into())
        );
        assert!(parse(&["--disk-tier-dir", "/m", "--no-disk-tier"]).is_err());
        assert_eq!(settings(&["--history"]).baselines.history, Some(None));
    }

    #[test]
    fn renamed_flags_are_taken_under_their_old_names_and_said() {
        let settings = |args: &[&str]| parse(args).unwrap().settings();
        let old = settings(&[
            "--sampled",
            "--memo-cache-dir",
            "/m",
            "--memo-cache-max=1GiB",
        ]);
        assert_eq!(old.timing.forced.0, Some(Timing::Criterion));
        assert_eq!(old.memory.disk_tier, DiskTier::At("/m".into()));
        assert_eq!(old.memory.disk_tier_max, Some(1 << 30));
        assert_eq!(old.renamed.len(), 3, "{:?}", old.renamed);
        assert!(settings(&["--no-memo-cache"]).memory.disk_tier == DiskTier::Off);
        assert!(settings(&["--criterion"]).renamed.is_empty());
        // Hidden: --help names the new flags alone.
        let help = <CommandLine as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(help.contains("--criterion") && help.contains("--disk-tier-dir"));
        assert!(!help.contains("--sampled") && !help.contains("--memo-cache-dir"));
    }
}
