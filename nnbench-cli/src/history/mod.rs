//! The history of runs, in one SQLite file: every run added is kept by
//! machine, commit, branch and time, with the figures of each of its cases,
//! so that a case can be followed across commits.
//!
//! The file is `target/nnbench/history.sqlite` unless `NNBENCH_HISTORY`
//! names another. `nnbench history add RECORD...` adds records. Adding a record a
//! second time changes nothing. Writers may run side by side: the file is
//! in write-ahead-log mode, and a writer waits for another's transaction.
//!
//! # Example
//!
//! ```
//! # fn main() -> Result<(), nnbench_cli::history::HistoryError> {
//! # let record: nnbench::RunRecord = serde_json::from_str(r#"{"schema":1,"run":"sweep","started_at":"2026-11-22T10:00:00Z","context":{"host":{"arch":"x86_64","cores":2},"git":null,"nnbench":"0.1.0"},"cases":[]}"#).unwrap();
//! let dir = tempfile::tempdir().unwrap();
//! let mut history = nnbench_cli::history::History::open(dir.path().join("history.sqlite"))?;
//! assert!(history.add(&record, None)?.new);
//! assert!(!history.add(&record, None)?.new, "the same record twice is one run");
//! assert_eq!(history.runs(&Default::default())?.len(), 1);
//! # Ok(())
//! # }
//! ```

mod lone_runs;
mod machine;
mod outlying;
mod regressions;
mod robust;
mod runs;
mod schema;
pub mod steps;
mod streams;
mod work;

use std::path::{Path, PathBuf};

pub use machine::Machine;
pub use outlying::outlying_runs;
pub use regressions::{FigureStep, StepSearch};
pub use runs::{Added, CaseInfo, CasePoint, RunFilter, RunSummary, STORED};
pub use streams::RunStream;

/// Why the history could not be read or written. Each names the file.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("notes.txt");
/// std::fs::write(&path, "not a database, but it has more than a header's worth of text in it, so SQLite reads it as one and refuses it").unwrap();
/// let error = nnbench_cli::history::History::open(&path).unwrap_err();
/// assert!(error.to_string().starts_with(&path.display().to_string()));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// SQLite refused: not a database, damaged, locked too long, read-only.
    #[error("{}: {source}", path.display())]
    Sqlite {
        /// The history's file.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
    /// A database of another program: it is left as it is.
    #[error(
        "{}: not an nnbench history (a database with other tables); nothing was written to it",
        path.display()
    )]
    Foreign {
        /// The file refused.
        path: PathBuf,
    },
    /// A history written by a newer nnbench, whose layout this one does not know.
    #[error(
        "{}: written by a newer nnbench (history layout {found}, this one knows up to {known}); nothing was written to it",
        path.display()
    )]
    Newer {
        /// The file refused.
        path: PathBuf,
        /// The layout it has.
        found: usize,
        /// The newest layout this nnbench knows.
        known: usize,
    },
    /// The folder for a new history could not be made.
    #[error("{}: {source}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why it could not be made.
        #[source]
        source: std::io::Error,
    },
}

/// An open history.
pub struct History {
    connection: rusqlite::Connection,
    path: PathBuf,
}

impl std::fmt::Debug for History {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("History").field("path", &self.path).finish()
    }
}

impl History {
    /// The history's file: `NNBENCH_HISTORY`, else
    /// `target/nnbench/history.sqlite`.
    ///
    /// # Example
    ///
    /// ```
    /// let path = nnbench_cli::history::History::default_path();
    /// assert!(path.ends_with("history.sqlite") || std::env::var_os("NNBENCH_HISTORY").is_some());
    /// ```
    pub fn default_path() -> PathBuf {
        match std::env::var_os("NNBENCH_HISTORY") {
            Some(path) if !path.is_empty() => path.into(),
            _ => nnbench_core::target_dir()
                .join("nnbench")
                .join("history.sqlite"),
        }
    }

    /// Opens the history at `path`, making it (and its folder) if it does
    /// not exist, and bringing an older layout up to date.
    ///
    /// # Errors
    ///
    /// When the file is not an SQLite database, is another program's, was
    /// written by a newer nnbench, or cannot be read or written; a file
    /// refused is left as it was.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let history = nnbench_cli::history::History::open(dir.path().join("h.sqlite")).unwrap();
    /// assert!(history.runs(&Default::default()).unwrap().is_empty());
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, HistoryError> {
        let path = path.as_ref().to_owned();
        if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(folder).map_err(|source| HistoryError::Folder {
                path: folder.to_owned(),
                source,
            })?;
        }
        let sqlite = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let mut connection = rusqlite::Connection::open(&path).map_err(sqlite)?;
        connection.busy_timeout(BUSY).map_err(sqlite)?;
        // Nothing is written before the file is known to be ours.
        let from = match schema::inspect(&connection).map_err(sqlite)? {
            schema::Found::Foreign => return Err(HistoryError::Foreign { path }),
            schema::Found::History(found) if found > schema::MIGRATIONS.len() => {
                return Err(HistoryError::Newer {
                    path,
                    found,
                    known: schema::MIGRATIONS.len(),
                });
            }
            schema::Found::History(found) => found,
            schema::Found::Empty => 0,
        };
        connection
            .pragma_update(None, "foreign_keys", true)
            .map_err(sqlite)?;
        if from < schema::MIGRATIONS.len() {
            let transaction = connection
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
                .map_err(sqlite)?;
            // Another writer may have made it, or brought it up to date,
            // meanwhile.
            let now = match schema::inspect(&transaction).map_err(sqlite)? {
                schema::Found::History(found) => found,
                _ => 0,
            };
            if now < schema::MIGRATIONS.len() {
                schema::migrate(&transaction, now).map_err(sqlite)?;
            }
            transaction.commit().map_err(sqlite)?;
            if now == 0 {
                // The file remembers it: every later connection writes
                // ahead to the log, and readers do not wait for writers.
                write_ahead(&connection).map_err(sqlite)?;
            }
        }
        Ok(Self { connection, path })
    }

    /// A history in memory only, gone when dropped: to search or draw
    /// records that are not kept.
    ///
    /// # Errors
    ///
    /// When SQLite cannot make it (out of memory).
    ///
    /// # Example
    ///
    /// ```
    /// let history = nnbench_cli::history::History::in_memory().unwrap();
    /// assert!(history.cases().unwrap().is_empty());
    /// ```
    pub fn in_memory() -> Result<Self, HistoryError> {
        let path = PathBuf::from(":memory:");
        let sqlite = |source| HistoryError::Sqlite {
            path: path.clone(),
            source,
        };
        let mut connection = rusqlite::Connection::open_in_memory().map_err(sqlite)?;
        let transaction = connection.transaction().map_err(sqlite)?;
        schema::migrate(&transaction, 0).map_err(sqlite)?;
        transaction.commit().map_err(sqlite)?;
        Ok(Self { connection, path })
    }

    /// The file this history is kept in.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("h.sqlite");
    /// assert_eq!(nnbench_cli::history::History::open(&path).unwrap().path(), path);
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn error(&self, source: rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }
}

/// Switches the file to write-ahead logging. A reader that holds the file
/// at that moment makes SQLite refuse at once rather than wait: it is
/// asked again for as long as a busy writer would be waited for.
fn write_ahead(connection: &rusqlite::Connection) -> rusqlite::Result<()> {
    let until = std::time::Instant::now() + BUSY;
    loop {
        match connection.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < until =>
            {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            outcome => return outcome,
        }
    }
}

/// How long a writer waits for another.
const BUSY: std::time::Duration = std::time::Duration::from_secs(30);
