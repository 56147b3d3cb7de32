//! The record of a run as it goes: each finished case is appended to
//! `progress.ndjson` beside `latest.json` and flushed, so a run that is
//! killed (`SIGKILL`, the OOM killer, a power cut) leaves its finished cases
//! on disk, and `--resume` runs only the cases it did not finish. A run
//! that ends removes the file: its record is `latest.json`.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use crate::record::CaseRecord;

/// The open progress file.
pub(crate) struct Progress {
    path: PathBuf,
    file: File,
    /// A write failed once: the run goes on without the file, said once.
    broken: bool,
}

/// What a previous run left: its finished cases, and what could not be read.
#[derive(Default)]
pub(crate) struct Previous {
    pub cases: Vec<CaseRecord>,
    pub warnings: Vec<String>,
}

impl Previous {
    pub(crate) fn ids(&self) -> HashSet<&str> {
        self.cases.iter().map(|c| c.id.as_str()).collect()
    }
}

/// Reads the finished cases of the run that left `path`. A last line cut
/// short (the process died while writing it) is dropped with a warning.
pub(crate) fn read(path: &Path) -> Previous {
    let mut previous = Previous::default();
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            previous.warnings.push(format!(
                "--resume: {} does not exist (the last run finished, or none ran): every case runs",
                path.display()
            ));
            return previous;
        }
        Err(e) => {
            previous.warnings.push(format!(
                "--resume: {} cannot be read ({e}): every case runs",
                path.display()
            ));
            return previous;
        }
    };
    for (number, line) in BufReader::new(file).lines().enumerate() {
        let parsed = line
            .map_err(|e| e.to_string())
            .and_then(|line| serde_json::from_str::<CaseRecord>(&line).map_err(|e| e.to_string()));
        match parsed {
            Ok(case) => previous.cases.push(case),
            Err(e) => previous.warnings.push(format!(
                "--resume: {} line {}: {e}; that case runs again",
                path.display(),
                number + 1
            )),
        }
    }
    previous
}

impl Progress {
    /// Opens `path` for the cases of this run: appending after `previous`
    /// cases when resuming, else from empty.
    pub(crate) fn open(path: &Path, resuming: bool) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(resuming)
            .write(true)
            .truncate(!resuming)
            .open(path)?;
        Ok(Self {
            path: path.to_owned(),
            file,
            broken: false,
        })
    }

    /// Appends `case` as one line; returns a warning the first time a
    /// write fails.
    pub(crate) fn append(&mut self, case: &CaseRecord) -> Option<String> {
        if self.broken {
            return None;
        }
        let written = serde_json::to_vec(case)
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push(b'\n');
                self.file.write_all(&line)?;
                self.file.flush()
            });
        written.err().map(|e| {
            self.broken = true;
            format!(
                "{}: finished cases are no longer written as the run goes ({e})",
                self.path.display()
            )
        })
    }

    /// The run ended: its record holds every case.
    pub(crate) fn remove(self) {
        drop(self.file);
        let _ = std::fs::remove_file(&self.path);
    }
}
