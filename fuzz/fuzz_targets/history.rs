//! The history database's rows as the tool reads them: a history of three
//! real runs whose rows are edited to any value SQLite holds (a null, a
//! number, text, bytes), column by column, and whose layout version may
//! be set to any number, then opened and read as `nnbench history` and
//! `nnbench report` read it: its runs, cases, each case's series, each
//! run's figures and fits, the steps along the history, and the report.
//! Each read returns its value or an error.

#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use nnbench::RunRecord;
use nnbench_cli::history::{History, RunFilter, StepSearch};
use rusqlite::types::Value;

/// A value of one of SQLite's storage classes.
#[derive(Arbitrary, Debug)]
enum Cell {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// One edit of the database before it is read.
#[derive(Arbitrary, Debug)]
enum Edit {
    /// A column (by its place among every table's columns) set to a value,
    /// in every row or in the first.
    Set {
        column: u16,
        value: Cell,
        every_row: bool,
    },
    /// The layout version the database says it has.
    Version(i64),
    /// The first row of a table (by its place) deleted.
    Delete { table: u8 },
}

/// The history the edits start from, and its tables' columns.
struct Template {
    dir: tempfile::TempDir,
    file: PathBuf,
    columns: Vec<(String, String)>,
    tables: Vec<String>,
}

static TEMPLATE: LazyLock<Template> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("a folder for the history");
    let file = dir.path().join("template.sqlite");
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/record");
    let mut history = History::open(&file).expect("a new history");
    for name in ["sweep.json", "sweep-paired.json", "mnist.json"] {
        let record = RunRecord::read(format!("{corpus}/{name}")).expect("a seed record");
        history.add(&record, None).expect("the record added");
    }
    drop(history);
    let db = rusqlite::Connection::open(&file).expect("the history opened");
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect())
        .expect("the tables");
    let mut columns = Vec::new();
    for table in &tables {
        let names: Vec<String> = db
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .and_then(|mut s| s.query_map([], |row| row.get(0))?.collect())
            .expect("the columns");
        columns.extend(names.into_iter().map(|c| (table.clone(), c)));
    }
    Template {
        dir,
        file,
        columns,
        tables,
    }
});

fn edit(db: &rusqlite::Connection, template: &Template, edit: Edit) {
    // An edit SQLite refuses (a constraint, a type a column will not
    // take) is no input the tool can meet: it is left out.
    let _ = match edit {
        Edit::Set {
            column,
            value,
            every_row,
        } => {
            let (table, column) = &template.columns[usize::from(column) % template.columns.len()];
            let value = match value {
                Cell::Null => Value::Null,
                Cell::Integer(n) => Value::Integer(n),
                Cell::Real(x) => Value::Real(x),
                Cell::Text(t) => Value::Text(t),
                Cell::Blob(b) => Value::Blob(b),
            };
            let rows = if every_row {
                String::new()
            } else {
                format!(" WHERE \"{column}\" IN (SELECT \"{column}\" FROM \"{table}\" LIMIT 1)")
            };
            db.execute(
                &format!("UPDATE \"{table}\" SET \"{column}\" = ?1{rows}"),
                [value],
            )
        }
        Edit::Version(version) => db.pragma_update(None, "user_version", version).map(|()| 0),
        Edit::Delete { table } => {
            let table = &template.tables[usize::from(table) % template.tables.len()];
            db.execute(
                &format!(
                    "DELETE FROM \"{table}\" WHERE rowid IN (SELECT rowid FROM \"{table}\" LIMIT 1)"
                ),
                [],
            )
        }
    };
}

fuzz_target!(|edits: Vec<Edit>| {
    let template = &*TEMPLATE;
    let file = template.dir.path().join("history.sqlite");
    std::fs::copy(&template.file, &file).expect("the history copied");
    {
        let db = rusqlite::Connection::open(&file).expect("the copy opened");
        let _ = db.pragma_update(None, "foreign_keys", false);
        for one in edits {
            edit(&db, template, one);
        }
    }
    let Ok(history) = History::open(&file) else {
        return;
    };
    if let Ok(runs) = history.runs(&RunFilter::default()) {
        for run in runs {
            let _ = history.run_figures(run.id);
            let _ = history.run_scaling(run.id);
        }
    }
    if let Ok(cases) = history.cases() {
        for case in cases {
            let _ = history.case(&case.id);
        }
    }
    let _ = history.steps(&StepSearch::default());
    let _ = nnbench_cli::report::page(&history, &StepSearch::default(), "fuzz", None);
});
