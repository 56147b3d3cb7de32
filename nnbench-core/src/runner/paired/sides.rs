//! The base build of a paired run, checked before any case runs: an
//! executable, a bench binary of this bench that speaks this build's
//! worker messages, and the cases it has.

use std::collections::HashSet;

use super::super::isolate::Socket;
use super::super::isolate::watch::{self, Limits, Start};
use crate::runner::isolate::protocol::PROTOCOL;
use crate::settings::Settings;

/// Checks `--paired BASE` before the run: `Err` names what is wrong with
/// BASE, for an exit with status 2.
pub(crate) fn check_base(settings: &Settings, bench: &str) -> Result<(), String> {
    let Some(base) = &settings.pairing.base else {
        return Ok(());
    };
    let fail = |message: String| format!("--paired {}: {message}", base.display());
    let metadata = std::fs::metadata(base).map_err(|e| fail(e.to_string()))?;
    if !metadata.is_file() {
        return Err(fail(
            "not a file: BASE is the executable of another build of this bench".into(),
        ));
    }
    let socket = Socket::open("--paired").map_err(|e| e.to_string())?;
    let start = Start {
        exe: base.clone(),
        args: super::worker_args(settings),
        round_calls: None,
        cpu: None,
        env: Vec::new(),
    };
    hello(&socket, &start, bench).map(|_| ()).map_err(fail)
}

/// Starts a worker of `start` that runs nothing: the cases it selects, or
/// why it cannot be a base build of `bench`.
pub(super) fn hello(
    socket: &Socket,
    start: &Start,
    bench: &str,
) -> Result<HashSet<String>, String> {
    let report = watch::run(
        socket,
        start,
        &[],
        &Settings::default(),
        &Limits::of_machine(),
        &|| None,
        &mut |_| {},
    );
    match (report.hello, report.lost) {
        (_, Some(lost)) => Err(format!(
            "not a bench binary that nnbench can pair with: it {lost}"
        )),
        (None, None) => Err(
            "its workers do not say which bench they are: it was built with an nnbench that has no --paired; build the base revision with this one".into(),
        ),
        (Some(hello), None) if hello.protocol != PROTOCOL => Err(format!(
            "its workers speak version {} of the worker messages, this build {PROTOCOL}: build both with one nnbench",
            hello.protocol
        )),
        (Some(hello), None) if hello.bench != bench => Err(format!(
            "a build of bench `{}`, not of `{bench}`",
            hello.bench
        )),
        (Some(hello), None) => Ok(hello.cases.into_iter().collect()),
    }
}
