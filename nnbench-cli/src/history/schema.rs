//! The history's tables, and the steps that bring an older database to
//! the current layout. `PRAGMA user_version` holds the number of steps a
//! database has taken; `application_id` marks it as an nnbench history, so
//! that another program's database is refused instead of written into.

use rusqlite::{Connection, Transaction};

/// `nnbc`: what `application_id` holds in an nnbench history.
pub(super) const APPLICATION_ID: i32 = 0x6E6E_6263;

/// Each step takes a database from the version of its index to the next.
/// Steps are only ever appended: a released one never changes.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: runs by machine, the figures of each case, each case's parameters.
    "CREATE TABLE machines (
        id INTEGER PRIMARY KEY,
        key TEXT NOT NULL UNIQUE,
        description TEXT NOT NULL
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        digest TEXT NOT NULL UNIQUE,
        machine_id INTEGER NOT NULL REFERENCES machines(id),
        bench TEXT NOT NULL,
        commit_sha TEXT,
        branch TEXT,
        dirty INTEGER NOT NULL,
        started_at TEXT NOT NULL,
        added_at TEXT NOT NULL,
        cases INTEGER NOT NULL,
        failed INTEGER NOT NULL
    );
    CREATE INDEX runs_by_machine ON runs(machine_id, branch, started_at);
    CREATE TABLE case_params (
        case_id TEXT PRIMARY KEY,
        family TEXT NOT NULL,
        params TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE figures (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        failed INTEGER NOT NULL,
        time_ns REAL,
        load_ns REAL,
        rss_bytes REAL,
        heap_bytes REAL,
        gpu_bytes REAL,
        value REAL,
        PRIMARY KEY (case_id, run_id)
    ) WITHOUT ROWID;",
    // 2: which way a case's value is better, to tell a regression of it.
    "ALTER TABLE case_params ADD COLUMN direction TEXT;",
    // 3: the instructions of a call counted under Callgrind.
    "ALTER TABLE figures ADD COLUMN instructions REAL;",
    // 4: the numeric fields of struct metrics, and which way each named
    // field is better.
    "CREATE TABLE field_values (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        field TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (case_id, field, run_id)
    ) WITHOUT ROWID;
    ALTER TABLE case_params ADD COLUMN directions TEXT;",
    // 5: throughput, and the 99th percentile of calls timed one by one.
    "ALTER TABLE figures ADD COLUMN throughput REAL;
    ALTER TABLE figures ADD COLUMN p99_ns REAL;",
    // 6: requests per second under load.
    "ALTER TABLE figures ADD COLUMN requests_per_second REAL;",
    // 7: where the flamegraph of a profiled case's calls was drawn.
    "ALTER TABLE figures ADD COLUMN profile TEXT;",
    // 8: how each family with a `scaling` parameter grew with it.
    "CREATE TABLE scaling (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        family TEXT NOT NULL,
        label TEXT NOT NULL,
        parameter TEXT NOT NULL,
        figure TEXT NOT NULL,
        params TEXT NOT NULL,
        exponent REAL NOT NULL,
        lo REAL NOT NULL,
        hi REAL NOT NULL,
        constant REAL NOT NULL,
        PRIMARY KEY (label, figure, run_id)
    ) WITHOUT ROWID;",
    // 9: the largest size of each such family that fits in memory.
    "CREATE TABLE capacity (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        family TEXT NOT NULL,
        label TEXT NOT NULL,
        parameter TEXT NOT NULL,
        figure TEXT NOT NULL,
        params TEXT NOT NULL,
        n REAL NOT NULL,
        lo REAL NOT NULL,
        hi REAL NOT NULL,
        limit_bytes INTEGER NOT NULL,
        limit_from TEXT NOT NULL,
        others_bytes INTEGER,
        fixed_bytes REAL NOT NULL,
        per_bytes REAL NOT NULL,
        exponent REAL NOT NULL,
        points INTEGER NOT NULL,
        PRIMARY KEY (label, figure, run_id)
    ) WITHOUT ROWID;",
    // 10: the searches of the highest rate under a latency target.
    "CREATE TABLE searches (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        search TEXT NOT NULL,
        PRIMARY KEY (case_id, run_id)
    ) WITHOUT ROWID;",
    // 11: the largest size a capacity's fit measured (0: not kept).
    "ALTER TABLE capacity ADD COLUMN largest_measured REAL NOT NULL DEFAULT 0;",
    // 12: the work each case declared and where it lies under its
    // machine's roofs, and those roofs, for the report's rooflines.
    "CREATE TABLE work (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        work TEXT NOT NULL,
        PRIMARY KEY (case_id, run_id)
    ) WITHOUT ROWID;
    ALTER TABLE runs ADD COLUMN roofs TEXT;",
    // 13: each streaming case's tokens, and the rate it was offered, for
    // the report's time to first token and per token against the rate.
    "CREATE TABLE streams (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_id TEXT NOT NULL,
        rate REAL,
        stream TEXT NOT NULL,
        PRIMARY KEY (case_id, run_id)
    ) WITHOUT ROWID;",
];

/// What a database holds before it is brought up to date.
pub(super) enum Found {
    /// No tables: a new file, or an empty one.
    Empty,
    /// An nnbench history that has taken this many steps.
    History(usize),
    /// Tables of some other program.
    Foreign,
}

pub(super) fn inspect(connection: &Connection) -> rusqlite::Result<Found> {
    // One statement, so one snapshot: a writer making the file meanwhile
    // is seen whole or not at all.
    let (application, version, tables): (i32, i64, i64) = connection.query_row(
        "SELECT (SELECT application_id FROM pragma_application_id()),
                (SELECT user_version FROM pragma_user_version()),
                (SELECT count(*) FROM sqlite_schema WHERE type = 'table')",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(match (application, tables) {
        (APPLICATION_ID, _) => Found::History(usize::try_from(version).unwrap_or(usize::MAX)),
        (0, 0) => Found::Empty,
        _ => Found::Foreign,
    })
}

/// Takes the steps from `from` to the last, in one transaction.
pub(super) fn migrate(transaction: &Transaction<'_>, from: usize) -> rusqlite::Result<()> {
    for step in &MIGRATIONS[from..] {
        transaction.execute_batch(step)?;
    }
    transaction.pragma_update(None, "application_id", APPLICATION_ID)?;
    transaction.pragma_update(None, "user_version", MIGRATIONS.len() as i64)?;
    Ok(())
}
