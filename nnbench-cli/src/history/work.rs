//! The work each case of a run declared, and the roofs of the machine it
//! ran on: what the report draws a family's roofline from.

use super::{History, HistoryError};
use crate::record::{MachineRoofs, WorkRecord};

impl History {
    /// The work each case of run `run` declared (`flops`, `bytes`), the
    /// rates it was done at and where it lies under the machine's roofs,
    /// by case id.
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
    ///     for (case, work) in history.run_work(last.id)? {
    ///         println!("{case}: {work}");
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_work(&self, run: i64) -> Result<Vec<(String, WorkRecord)>, HistoryError> {
        self.json_by_case(
            "SELECT case_id, work FROM work WHERE run_id = ?1 ORDER BY case_id",
            run,
        )
    }

    /// The roofs of the machine run `run` was measured on, as its record
    /// had them: none where no case of it declared its work, or the roofs
    /// could not be had.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
    /// if let Some(last) = history.runs(&Default::default())?.last()
    ///     && let Some(roofs) = history.run_roofs(last.id)?
    /// {
    ///     println!("{:.0} GB/s on one core", roofs.bandwidth.one_core / 1e9);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_roofs(&self, run: i64) -> Result<Option<MachineRoofs>, HistoryError> {
        let text: Option<String> = self
            .connection
            .query_row("SELECT roofs FROM runs WHERE id = ?1", [run], |r| r.get(0))
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })
            .map_err(|e| self.error(e))?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }
}
