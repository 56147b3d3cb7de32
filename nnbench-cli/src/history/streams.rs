//! The tokens of each streaming case of a run, and the rate it was
//! offered: what the report draws time to first token and per token
//! against the rate from.

use super::{History, HistoryError};
use crate::record::StreamRecord;

/// A streaming case of a run: its id, the rate it was offered (none in a
/// closed loop) and its tokens' record.
pub type RunStream = (String, Option<f64>, StreamRecord);

impl History {
    /// The streaming cases of run `run` (a search's left out), by case id.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
    /// if let Some(last) = history.runs(&Default::default())?.last() {
    ///     for (case, rate, stream) in history.run_streams(last.id)? {
    ///         println!("{case} at {rate:?}/s: TTFT p99 {:.1} ms", stream.ttft.p99_ns / 1e6);
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_streams(&self, run: i64) -> Result<Vec<RunStream>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<RunStream>> {
            let mut statement = self.connection.prepare(
                "SELECT case_id, rate, stream FROM streams WHERE run_id = ?1 ORDER BY case_id",
            )?;
            let rows = statement.query_map([run], |r| {
                let (case, rate, text): (String, Option<f64>, String) =
                    (r.get(0)?, r.get(1)?, r.get(2)?);
                Ok((case, rate, serde_json::from_str(&text).ok()))
            })?;
            Ok(rows
                .filter_map(Result::ok)
                .filter_map(|(case, rate, found)| Some((case, rate, found?)))
                .collect())
        };
        query().map_err(|e| self.error(e))
    }
}
