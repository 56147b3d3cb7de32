//! What the supervisor and its worker say to each other over their
//! socket: one JSON object a line.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::measure::round::Round;

use crate::memo::journal::Said;
use crate::record::{CaseRecord, RunMemoRecord, Stage};

/// The environment variable that makes a bench binary a worker: the path
/// of its supervisor's socket.
pub(crate) const WORKER_ENV: &str = "NNBENCH_WORKER";

/// From the supervisor.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ToWorker {
    /// The cases to run, by id, and how.
    Run(Assignment),
    /// Stop after the running case: the supervisor was asked to stop by
    /// this signal.
    Stop { signal: i32 },
    /// End, between runs: the supervisor needs this worker no more.
    Quit,
}

/// One run of a worker: its cases and how to run them. A worker of
/// version 2 reads the first two fields alone, runs once and ends.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Assignment {
    pub ids: Vec<String>,
    /// In a round of a paired run, what to take of each case (a case not
    /// named calibrates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<BTreeMap<String, Round>>,
    /// Whether the worker waits for another run after this one, keeping
    /// its memos.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
    /// The cases that later runs of this worker will be given: the memos
    /// they use stay resident after this run's last use of them, and
    /// those that neither this run nor they use go before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later: Vec<String>,
    /// The one CPU the run's thread (and each thread it starts) runs on;
    /// `None`: any the worker may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<usize>,
    /// How many bytes of stack and heap to leave unused before the run, so
    /// that where its data lands is drawn anew for each run of a worker.
    #[serde(default)]
    pub pad: u16,
    /// Whether the run's memos keep disk entries of this build's own (a
    /// paired run's: each build measures the fixtures it computes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub per_build: bool,
    /// Where both sides of a paired run are copies of one build, this
    /// side's name: its fixtures are kept apart from the other side's, so
    /// that each side computes its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub twin: Option<String>,
}

/// The version of these messages this build speaks.
pub(crate) const PROTOCOL: u32 = 3;

/// The oldest version a paired run accepts from a base build: version 2
/// workers run once each (no [`Assignment::more`]).
pub(crate) const OLDEST_PROTOCOL: u32 = 2;

/// From the worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum FromWorker {
    /// The first message: which bench this is, the version of the messages
    /// it speaks and the cases its command line selects.
    Hello {
        bench: String,
        protocol: u32,
        cases: Vec<String>,
        /// The digest of the worker's executable (absent from older
        /// builds): two sides that say one digest are copies of one build.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        build: Option<String>,
    },
    /// A case starts: its memos resolve next.
    Started { id: String },
    /// The running case enters a step.
    Stage { stage: Stage },
    /// A case finished.
    Finished { record: Box<CaseRecord> },
    /// The worker ran what it was given (or was stopped): what its memo
    /// cache did, what was said between cases.
    Ended {
        memo: RunMemoRecord,
        warnings: Vec<String>,
        /// What its cases said once a run (none from an older worker).
        #[serde(default)]
        said: Vec<Said>,
        interrupted: Option<i32>,
    },
}

/// Writes `message` as one line, flushed.
pub(crate) fn send(to: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    to.write_all(&line)?;
    to.flush()
}

/// Reads messages from a stream whose reads time out: a read cut short by
/// the timeout is kept and completed by the next.
pub(crate) struct Lines<R> {
    reader: R,
    partial: Vec<u8>,
}

/// What one read gave.
pub(crate) enum Read<T> {
    Message(T),
    /// Nothing complete before the read timed out.
    Nothing,
    /// The other side closed the stream.
    Closed,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(reader: R) -> Self {
        Self {
            reader,
            partial: Vec::new(),
        }
    }

    pub(crate) fn read<T: DeserializeOwned>(&mut self) -> io::Result<Read<T>> {
        match self.reader.read_until(b'\n', &mut self.partial) {
            Ok(0) => Ok(Read::Closed),
            Ok(_) if self.partial.last() != Some(&b'\n') => Ok(Read::Closed),
            Ok(_) => {
                let line = std::mem::take(&mut self.partial);
                serde_json::from_slice(&line)
                    .map(Read::Message)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Ok(Read::Nothing)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Read::Nothing),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_a_line_and_a_line_cut_short_is_the_end() {
        let mut wire = Vec::new();
        send(&mut wire, &FromWorker::Started { id: "a/n=1".into() }).unwrap();
        send(&mut wire, &FromWorker::Stage { stage: Stage::Call }).unwrap();
        wire.extend_from_slice(br#"{"kind":"sta"#);
        let mut lines = Lines::new(&wire[..]);
        assert!(matches!(
            lines.read::<FromWorker>().unwrap(),
            Read::Message(FromWorker::Started { id }) if id == "a/n=1"
        ));
        assert!(matches!(
            lines.read::<FromWorker>().unwrap(),
            Read::Message(FromWorker::Stage { stage: Stage::Call })
        ));
        assert!(matches!(lines.read::<FromWorker>().unwrap(), Read::Closed));
    }
}
