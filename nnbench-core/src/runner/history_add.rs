//! `--history`: a bench binary adds its run to the history as it ends.

use std::path::Path;

use crate::RunRecord;
use crate::history::History;
use crate::settings::Settings;

/// Adds `record` to the history at `file` (the default one when `None`),
/// and says so; a run that was interrupted, or only tested, is not added.
/// A history that cannot be written ends the bench binary with 1: the run
/// record is already written.
pub(crate) fn add(record: &RunRecord, file: Option<&Path>, settings: &Settings) {
    let say = |line: String| {
        if !settings.output.quiet {
            eprintln!("{line}");
        }
    };
    if settings.timing.test_mode {
        say("warning: --history: a test-mode run (no --bench) is not added to the history".into());
        return;
    }
    if record.interrupted.is_some() {
        say("warning: --history: an interrupted run is not added; `--resume --history` adds the completed one".into());
        return;
    }
    let path = file.map_or_else(History::default_path, Path::to_owned);
    match History::open(&path).and_then(|mut history| history.add(record, None)) {
        Ok(added) if added.new => say(format!(
            "history: added as run {} on machine {} to {}",
            added.run,
            added.machine.key,
            path.display()
        )),
        Ok(added) => say(format!(
            "history: already there as run {} ({})",
            added.run,
            path.display()
        )),
        Err(error) => {
            eprintln!("error: --history: {error}");
            std::process::exit(1);
        }
    }
}
