//! The machinery of the `nnbench` command, which no bench links: the
//! history of runs in SQLite, the HTML report drawn from it, and the
//! exports for other tools, MLflow's tracking server among them. The
//! command (`cargo install nnbench-cli`) is built on it; a tool of one's
//! own can be too.
//!
//! ```
//! # fn main() -> Result<(), nnbench_cli::history::HistoryError> {
//! let history = nnbench_cli::history::History::in_memory()?;
//! assert!(history.runs(&Default::default())?.is_empty());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod export;
pub mod history;
pub mod mlflow;
pub mod report;

// What the moved modules name as `crate::...`: the runtime's vocabulary.
use nnbench_core::{compare, record, scaling};
