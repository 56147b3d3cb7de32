//! Adding runs to the history and reading them back.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{OptionalExtension as _, params};

use super::{History, HistoryError, Machine};
use crate::record::{CaseRecord, Direction, Figure, RunRecord};

/// What [`History::add`] did.
///
/// # Example
///
/// ```
/// # fn f(added: nnbench_cli::history::Added) {
/// if !added.new {
///     println!("run {} was already in the history", added.run);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Added {
    /// The run's number in the history.
    pub run: i64,
    /// Whether the run is new; false when the same record was added before.
    pub new: bool,
    /// The machine it was filed under.
    pub machine: Machine,
    /// How many cases it has.
    pub cases: usize,
    /// For a record merged from shards that ran on different machines, the
    /// runs filed for the other machines: one run per machine, each with
    /// the cases that ran there.
    pub also: Vec<Added>,
}

/// Which runs [`History::runs`] lists; `None` is any.
///
/// # Example
///
/// ```
/// let on_main = nnbench_cli::history::RunFilter { branch: Some("main".into()), ..Default::default() };
/// # let _ = on_main;
/// ```
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    /// The machine's key (or part of its description).
    pub machine: Option<String>,
    /// The git branch the runs were made on.
    pub branch: Option<String>,
    /// The bench target's name (the record's `run`).
    pub bench: Option<String>,
}

/// A run in the history.
///
/// # Example
///
/// ```
/// # fn f(run: &nnbench_cli::history::RunSummary) {
/// println!("{} {} at {:?}: {} cases", run.id, run.bench, run.commit, run.cases);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// The run's number in the history.
    pub id: i64,
    /// The bench target's name (the record's `run`).
    pub bench: String,
    /// The git commit the run measured.
    pub commit: Option<String>,
    /// The git branch.
    pub branch: Option<String>,
    /// The work tree had uncommitted changes.
    pub dirty: bool,
    /// When the run started, RFC 3339.
    pub started_at: String,
    /// The machine's key.
    pub machine: String,
    /// How many cases the run has.
    pub cases: usize,
    /// How many of them failed.
    pub failed: usize,
}

/// One run's figures of one case.
///
/// # Example
///
/// ```
/// # fn f(point: &nnbench_cli::history::CasePoint) {
/// if let Some(ns) = point.time_ns {
///     println!("{:?}: {ns} ns", point.commit);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CasePoint {
    /// The run's number in the history.
    pub run: i64,
    /// The machine's key.
    pub machine: String,
    /// The git commit the run measured.
    pub commit: Option<String>,
    /// The git branch.
    pub branch: Option<String>,
    /// When the run started, RFC 3339.
    pub started_at: String,
    /// The case failed in this run: it has no figures.
    pub failed: bool,
    /// Median time per call, ns.
    pub time_ns: Option<f64>,
    /// Time resolving memos, ns, when the case used any.
    pub load_ns: Option<f64>,
    /// Peak resident memory growth, bytes.
    pub rss_bytes: Option<f64>,
    /// Peak heap growth, bytes, with the tracking allocator.
    pub heap_bytes: Option<f64>,
    /// Peak GPU memory, bytes.
    pub gpu_bytes: Option<f64>,
    /// The returned value, when it is a number.
    pub value: Option<f64>,
    /// Instructions per call, counted under Callgrind.
    pub instructions: Option<f64>,
    /// Items or bytes per second, for a family with a `throughput`.
    pub throughput: Option<f64>,
    /// The 99th percentile of the time per call, ns, for calls timed one
    /// by one.
    pub p99_ns: Option<f64>,
    /// Requests per second under load, for a family with `concurrency`.
    pub requests_per_second: Option<f64>,
    /// The flamegraph of the case's calls, for a run with `--profile`.
    pub profile: Option<String>,
    /// The numeric fields of a struct metric, by their dotted names.
    pub fields: BTreeMap<String, f64>,
}

impl CasePoint {
    /// This point's `figure`, when the run had it.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(point: &nnbench_cli::history::CasePoint) {
    /// use nnbench::record::Figure;
    /// assert_eq!(point.figure(Figure::Time), point.time_ns);
    /// # }
    /// ```
    pub fn figure(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Time => self.time_ns,
            Figure::Load => self.load_ns,
            Figure::Rss => self.rss_bytes,
            Figure::Heap => self.heap_bytes,
            Figure::Gpu => self.gpu_bytes,
            // Judged between two runs, not kept along the commits.
            Figure::Peak | Figure::Memo | Figure::MaxRate | Figure::RoofFraction => None,
            Figure::Value => self.value,
            Figure::Instructions => self.instructions,
            Figure::Throughput => self.throughput,
            Figure::P99 => self.p99_ns,
            Figure::Requests => self.requests_per_second,
            // A family's, and figures this version does not keep.
            _ => None,
        }
    }
}

impl History {
    /// Adds `record`, filed under `machine` (by default the one its context
    /// describes, [`Machine::of`]). A record added before is not added
    /// again: the answer says so.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &mut nnbench_cli::history::History, record: &nnbench::RunRecord) -> Result<(), nnbench_cli::history::HistoryError> {
    /// let added = history.add(record, Some(&nnbench_cli::history::Machine::named("ci-gpu")))?;
    /// assert_eq!(added.machine.key, "ci-gpu");
    /// # Ok(())
    /// # }
    /// ```
    pub fn add(
        &mut self,
        record: &RunRecord,
        machine: Option<&Machine>,
    ) -> Result<Added, HistoryError> {
        let parts = match machine {
            Some(machine) => vec![(machine.clone(), None)],
            None if record.shards.is_empty() => vec![(Machine::of(&record.context), None)],
            None => {
                let parts: Vec<_> = by_machine(record)
                    .into_iter()
                    .map(|(machine, part)| (machine, Some(part)))
                    .collect();
                if parts.is_empty() {
                    vec![(Machine::of(&record.context), None)]
                } else {
                    parts
                }
            }
        };
        let mut added = Vec::with_capacity(parts.len());
        for (machine, part) in parts {
            let part = part.as_ref().unwrap_or(record);
            let outcome = self.insert(part, &machine, &digest(part));
            let (run, new) = outcome.map_err(|e| self.error(e))?;
            added.push(Added {
                run,
                new,
                machine,
                cases: part.cases.len(),
                also: Vec::new(),
            });
        }
        let mut first = added.remove(0);
        first.also = added;
        Ok(first)
    }

    fn insert(
        &mut self,
        record: &RunRecord,
        machine: &Machine,
        digest: &str,
    ) -> rusqlite::Result<(i64, bool)> {
        let transaction = self
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if let Some(run) = transaction
            .query_row("SELECT id FROM runs WHERE digest = ?1", [digest], |r| {
                r.get(0)
            })
            .optional()?
        {
            return Ok((run, false));
        }
        transaction.execute(
            "INSERT INTO machines (key, description) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
            params![machine.key, machine.description],
        )?;
        let machine_id: i64 = transaction.query_row(
            "SELECT id FROM machines WHERE key = ?1",
            [&machine.key],
            |r| r.get(0),
        )?;
        let git = record.context.git.as_ref();
        transaction.execute(
            "INSERT INTO runs (digest, machine_id, bench, commit_sha, branch, dirty, started_at, added_at, cases, failed, roofs)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                digest,
                machine_id,
                record.run,
                git.map(|g| &g.commit),
                git.and_then(|g| g.branch.as_ref()),
                git.is_some_and(|g| g.dirty),
                record.started_at,
                crate::record::now_rfc3339(),
                record.cases.len() as i64,
                record.failed() as i64,
                record
                    .context
                    .machine
                    .as_ref()
                    .and_then(|m| m.roofs.as_ref())
                    .and_then(|roofs| serde_json::to_string(roofs).ok()),
            ],
        )?;
        let run = transaction.last_insert_rowid();
        {
            let mut params_of = transaction.prepare(
                "INSERT INTO case_params (case_id, family, params, direction, directions)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (case_id) DO UPDATE
                 SET family = excluded.family, params = excluded.params,
                     direction = excluded.direction, directions = excluded.directions",
            )?;
            let mut figures_of = transaction.prepare(
                "INSERT OR REPLACE INTO figures (run_id, case_id, failed, time_ns, load_ns, rss_bytes, heap_bytes, gpu_bytes, value, instructions, throughput, p99_ns, requests_per_second, profile)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?;
            let mut fields_of = transaction.prepare(
                "INSERT OR REPLACE INTO field_values (run_id, case_id, field, value)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for case in &record.cases {
                let params = case.params.to_json().to_string();
                let direction = case.direction.map(Direction::name);
                let directions = (!case.directions.is_empty())
                    .then(|| serde_json::to_string(&case.directions).unwrap_or_default());
                params_of.execute(params![case.id, case.family, params, direction, directions])?;
                if case.error.is_none() {
                    for (field, value) in crate::record::numeric_fields(&case.value) {
                        fields_of.execute(params![run, case.id, field, value])?;
                    }
                }
                use rusqlite::types::Value;
                let mut row = vec![
                    Value::Integer(run),
                    Value::Text(case.id.clone()),
                    Value::Integer(i64::from(case.error.is_some())),
                ];
                row.extend(figures(case).map(|f| f.map_or(Value::Null, Value::Real)));
                row.push(case.profile.as_ref().map_or(Value::Null, |path| {
                    Value::Text(path.to_string_lossy().into_owned())
                }));
                figures_of.execute(rusqlite::params_from_iter(row))?;
            }
            let mut scaling_of = transaction.prepare(
                "INSERT OR REPLACE INTO scaling (run_id, family, label, parameter, figure, params, exponent, lo, hi, constant)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for s in crate::scaling::of_record(record) {
                scaling_of.execute(params![
                    run,
                    s.family,
                    s.label(),
                    s.parameter,
                    s.figure,
                    s.params.to_json().to_string(),
                    s.exponent,
                    s.interval[0],
                    s.interval[1],
                    s.constant
                ])?;
            }
            let mut search_of = transaction.prepare(
                "INSERT OR REPLACE INTO searches (run_id, case_id, search) VALUES (?1, ?2, ?3)",
            )?;
            for case in &record.cases {
                if let Some(search) = &case.search {
                    let text = serde_json::to_string(search).unwrap_or_default();
                    search_of.execute(params![run, case.id, text])?;
                }
            }
            let mut work_of = transaction.prepare(
                "INSERT OR REPLACE INTO work (run_id, case_id, work) VALUES (?1, ?2, ?3)",
            )?;
            for case in record.cases.iter().filter(|c| c.error.is_none()) {
                if let Some(work) = &case.work {
                    let text = serde_json::to_string(work).unwrap_or_default();
                    work_of.execute(params![run, case.id, text])?;
                }
            }
            // A search's stream is of the rate it found, which its steps
            // already place.
            let mut stream_of = transaction.prepare(
                "INSERT OR REPLACE INTO streams (run_id, case_id, rate, stream) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for case in record
                .cases
                .iter()
                .filter(|c| c.error.is_none() && c.search.is_none())
            {
                if let Some(stream) = &case.stream {
                    let text = serde_json::to_string(stream).unwrap_or_default();
                    let rate = case.load.as_ref().map(|l| l.offered_rate);
                    stream_of.execute(params![run, case.id, rate, text])?;
                }
            }
            let mut capacity_of = transaction.prepare(
                "INSERT OR REPLACE INTO capacity (run_id, family, label, parameter, figure, params, n, lo, hi,
                     limit_bytes, limit_from, others_bytes, fixed_bytes, per_bytes, exponent, points,
                     largest_measured)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            )?;
            for c in &record.capacity {
                // A size that fits without bound is stored as the largest
                // double: SQLite keeps no infinity.
                let finite = |x: f64| if x.is_finite() { x } else { f64::MAX };
                capacity_of.execute(params![
                    run,
                    c.family,
                    c.label(),
                    c.parameter,
                    c.figure,
                    c.params.to_json().to_string(),
                    finite(c.n),
                    finite(c.interval[0]),
                    finite(c.interval[1]),
                    i64::try_from(c.limit_bytes).unwrap_or(i64::MAX),
                    c.limit_from,
                    c.others_bytes.map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
                    c.fixed_bytes,
                    c.per_bytes,
                    c.exponent,
                    i64::try_from(c.points).unwrap_or(i64::MAX),
                    c.largest_measured
                ])?;
            }
        }
        transaction.commit()?;
        Ok((run, true))
    }

    /// The runs `filter` selects, oldest first.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
    /// for run in history.runs(&Default::default())? {
    ///     println!("{} {}", run.id, run.started_at);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn runs(&self, filter: &RunFilter) -> Result<Vec<RunSummary>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<RunSummary>> {
            let mut statement = self.connection.prepare(
                "SELECT runs.id, bench, commit_sha, branch, dirty, started_at, machines.key, cases, failed
                 FROM runs JOIN machines ON machines.id = runs.machine_id
                 WHERE (?1 IS NULL OR machines.key = ?1 OR instr(machines.description, ?1) > 0)
                   AND (?2 IS NULL OR branch = ?2)
                   AND (?3 IS NULL OR bench = ?3)
                 ORDER BY started_at, runs.id",
            )?;
            let rows =
                statement.query_map(params![filter.machine, filter.branch, filter.bench], |r| {
                    Ok(RunSummary {
                        id: r.get(0)?,
                        bench: r.get(1)?,
                        commit: r.get(2)?,
                        branch: r.get(3)?,
                        dirty: r.get(4)?,
                        started_at: r.get(5)?,
                        machine: r.get(6)?,
                        cases: r.get::<_, i64>(7)?.try_into().unwrap_or(0),
                        failed: r.get::<_, i64>(8)?.try_into().unwrap_or(0),
                    })
                })?;
            rows.collect()
        };
        query().map_err(|e| self.error(e))
    }

    /// The figures of case `id` in every run of the history, oldest first.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
    /// let points = history.case("accuracy/model=small")?;
    /// println!("{} runs of it", points.len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn case(&self, id: &str) -> Result<Vec<CasePoint>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<CasePoint>> {
            let mut statement = self.connection.prepare(
                "SELECT runs.id, machines.key, commit_sha, branch, started_at, figures.failed,
                        time_ns, load_ns, rss_bytes, heap_bytes, gpu_bytes, value, instructions,
                        throughput, p99_ns, requests_per_second, profile
                 FROM figures
                 JOIN runs ON runs.id = figures.run_id
                 JOIN machines ON machines.id = runs.machine_id
                 WHERE case_id = ?1
                 ORDER BY started_at, runs.id",
            )?;
            let mut points: Vec<CasePoint> = statement
                .query_map([id], |r| point(r, 0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut fields = self
                .connection
                .prepare("SELECT run_id, field, value FROM field_values WHERE case_id = ?1")?;
            let found = fields.query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            let at: HashMap<i64, usize> =
                points.iter().enumerate().map(|(i, p)| (p.run, i)).collect();
            for row in found {
                let (run, field, value): (i64, String, f64) = row?;
                if let Some(&i) = at.get(&run) {
                    points[i].fields.insert(field, value);
                }
            }
            Ok(points)
        };
        query().map_err(|e| self.error(e))
    }
}

/// A case as the history knows it: its family, parameters and direction.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench_cli::history::CaseInfo) {
/// println!("{} of {}: {}", case.id, case.family, case.params.to_json());
/// # }
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CaseInfo {
    /// The case's id.
    pub id: String,
    /// Its family.
    pub family: String,
    /// Its parameters, as its last record had them.
    pub params: nnbench_core::record::ParamMap,
    /// Which way its value is better, when its family says.
    pub direction: Option<Direction>,
    /// Which way each named field of its struct metric is better.
    pub directions: BTreeMap<String, Direction>,
}

impl History {
    /// Every case the history has figures of, by id.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(history: &nnbench_cli::history::History) -> Result<(), nnbench_cli::history::HistoryError> {
    /// let families: std::collections::BTreeSet<String> =
    ///     history.cases()?.into_iter().map(|c| c.family).collect();
    /// # Ok(())
    /// # }
    /// ```
    pub fn cases(&self) -> Result<Vec<CaseInfo>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<CaseInfo>> {
            let mut statement = self.connection.prepare(
                "SELECT case_id, family, params, direction, directions FROM case_params
                 ORDER BY case_id",
            )?;
            let rows = statement.query_map([], |r| {
                let params: String = r.get(2)?;
                let direction: Option<String> = r.get(3)?;
                Ok(CaseInfo {
                    id: r.get(0)?,
                    family: r.get(1)?,
                    params: serde_json::from_str(&params).unwrap_or_default(),
                    direction: direction_from(direction.as_deref()),
                    directions: directions_from(r.get(4)?),
                })
            })?;
            rows.collect()
        };
        query().map_err(|e| self.error(e))
    }

    /// The figures of every case of run `run`, by case id.
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
    ///     for (case, point) in history.run_figures(last.id)? {
    ///         println!("{case}: {:?}", point.time_ns);
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_figures(&self, run: i64) -> Result<Vec<(String, CasePoint)>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<(String, CasePoint)>> {
            let mut statement = self.connection.prepare(
                "SELECT figures.case_id, runs.id, machines.key, commit_sha, branch, started_at,
                        figures.failed, time_ns, load_ns, rss_bytes, heap_bytes, gpu_bytes, value,
                        instructions, throughput, p99_ns, requests_per_second, profile
                 FROM figures
                 JOIN runs ON runs.id = figures.run_id
                 JOIN machines ON machines.id = runs.machine_id
                 WHERE runs.id = ?1
                 ORDER BY figures.case_id",
            )?;
            let mut points: Vec<(String, CasePoint)> = statement
                .query_map([run], |r| Ok((r.get(0)?, point(r, 1)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let mut fields = self
                .connection
                .prepare("SELECT case_id, field, value FROM field_values WHERE run_id = ?1")?;
            let found = fields.query_map([run], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            let at: HashMap<String, usize> = points
                .iter()
                .enumerate()
                .map(|(i, (case, _))| (case.clone(), i))
                .collect();
            for row in found {
                let (case, field, value): (String, String, f64) = row?;
                if let Some(&i) = at.get(&case) {
                    points[i].1.fields.insert(field, value);
                }
            }
            Ok(points)
        };
        query().map_err(|e| self.error(e))
    }

    /// The `scaling` fits of run `run`, as the record had them (its `fit`,
    /// `points` and `rounds` are not kept: `power`, 0 and 0).
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
    ///     for fit in history.run_scaling(last.id)? {
    ///         println!("{}: {} ∝ {}^{:.2}", fit.label(), fit.figure, fit.parameter, fit.exponent);
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_scaling(&self, run: i64) -> Result<Vec<crate::record::ScalingRecord>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<crate::record::ScalingRecord>> {
            let mut statement = self.connection.prepare(
                "SELECT family, parameter, figure, params, exponent, lo, hi, constant
                 FROM scaling WHERE run_id = ?1 ORDER BY label, figure",
            )?;
            let rows = statement.query_map([run], |r| {
                let params: String = r.get(3)?;
                let mut fit = crate::record::ScalingRecord::default();
                fit.family = r.get(0)?;
                fit.parameter = r.get(1)?;
                fit.figure = r.get(2)?;
                fit.params = serde_json::from_str(&params).unwrap_or_default();
                fit.exponent = r.get(4)?;
                fit.interval = [r.get(5)?, r.get(6)?];
                fit.constant = r.get(7)?;
                fit.fit = "power".into();
                Ok(fit)
            })?;
            rows.collect()
        };
        query().map_err(|e| self.error(e))
    }

    /// The searches of run `run` of the highest rate under a latency
    /// target, by case id.
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
    ///     for (case, search) in history.run_searches(last.id)? {
    ///         println!("{case}: {} {}", search.target, search.outcome());
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_searches(
        &self,
        run: i64,
    ) -> Result<Vec<(String, crate::record::SearchRecord)>, HistoryError> {
        self.json_by_case(
            "SELECT case_id, search FROM searches WHERE run_id = ?1 ORDER BY case_id",
            run,
        )
    }

    /// What `sql` selects of run `run` (its `?1`): a case's id and the JSON
    /// of a record of it, read back; a record this version cannot read is
    /// left out.
    pub(super) fn json_by_case<T: serde::de::DeserializeOwned>(
        &self,
        sql: &str,
        run: i64,
    ) -> Result<Vec<(String, T)>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<(String, T)>> {
            let mut statement = self.connection.prepare(sql)?;
            let rows = statement.query_map([run], |r| {
                let (case, text): (String, String) = (r.get(0)?, r.get(1)?);
                Ok((case, serde_json::from_str(&text).ok()))
            })?;
            Ok(rows
                .filter_map(Result::ok)
                .filter_map(|(case, found)| Some((case, found?)))
                .collect())
        };
        query().map_err(|e| self.error(e))
    }

    /// The capacities of run `run`: the largest size of each family with
    /// `scaling` that fits, as the record had them.
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
    ///     for capacity in history.run_capacity(last.id)? {
    ///         println!("{capacity}");
    ///     }
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_capacity(
        &self,
        run: i64,
    ) -> Result<Vec<crate::record::CapacityRecord>, HistoryError> {
        let query = || -> rusqlite::Result<Vec<crate::record::CapacityRecord>> {
            let mut statement = self.connection.prepare(
                "SELECT family, parameter, figure, params, n, lo, hi, limit_bytes, limit_from,
                        others_bytes, fixed_bytes, per_bytes, exponent, points, largest_measured
                 FROM capacity WHERE run_id = ?1 ORDER BY label, figure",
            )?;
            let rows = statement.query_map([run], |r| {
                let params: String = r.get(3)?;
                let unbounded = |x: f64| if x == f64::MAX { f64::INFINITY } else { x };
                let mut c = crate::record::CapacityRecord::default();
                c.family = r.get(0)?;
                c.parameter = r.get(1)?;
                c.figure = r.get(2)?;
                c.params = serde_json::from_str(&params).unwrap_or_default();
                c.n = unbounded(r.get(4)?);
                c.interval = [unbounded(r.get(5)?), unbounded(r.get(6)?)];
                c.limit_bytes = u64::try_from(r.get::<_, i64>(7)?).unwrap_or(0);
                c.limit_from = r.get(8)?;
                c.others_bytes = r
                    .get::<_, Option<i64>>(9)?
                    .and_then(|b| u64::try_from(b).ok());
                c.fixed_bytes = r.get(10)?;
                c.per_bytes = r.get(11)?;
                c.exponent = r.get(12)?;
                c.points = usize::try_from(r.get::<_, i64>(13)?).unwrap_or(0);
                c.largest_measured = r.get(14)?;
                Ok(c)
            })?;
            rows.collect()
        };
        query().map_err(|e| self.error(e))
    }
}

/// A [`CasePoint`] from the row's columns from `at` on: run, machine,
/// commit, branch, start, failed, and the figures.
fn point(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<CasePoint> {
    Ok(CasePoint {
        run: r.get(at)?,
        machine: r.get(at + 1)?,
        commit: r.get(at + 2)?,
        branch: r.get(at + 3)?,
        started_at: r.get(at + 4)?,
        failed: r.get(at + 5)?,
        time_ns: r.get(at + 6)?,
        load_ns: r.get(at + 7)?,
        rss_bytes: r.get(at + 8)?,
        heap_bytes: r.get(at + 9)?,
        gpu_bytes: r.get(at + 10)?,
        value: r.get(at + 11)?,
        instructions: r.get(at + 12)?,
        throughput: r.get(at + 13)?,
        p99_ns: r.get(at + 14)?,
        requests_per_second: r.get(at + 15)?,
        profile: r.get(at + 16)?,
        fields: BTreeMap::new(),
    })
}

/// A direction the history kept; anything else is none.
pub(super) fn direction_from(name: Option<&str>) -> Option<Direction> {
    [Direction::Higher, Direction::Lower]
        .into_iter()
        .find(|d| name == Some(d.name()))
}

/// The directions of a struct metric's fields the history kept.
pub(super) fn directions_from(json: Option<String>) -> BTreeMap<String, Direction> {
    json.and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or_default()
}

/// A record merged from shards, split by the machine each shard ran on:
/// one record per machine, with that machine's context and cases.
fn by_machine(record: &RunRecord) -> Vec<(Machine, RunRecord)> {
    let mut parts: Vec<(Machine, RunRecord)> = Vec::new();
    for case in &record.cases {
        let context = record.context_of(case);
        let machine = Machine::of(context);
        let at = match parts.iter().position(|(m, _)| *m == machine) {
            Some(at) => at,
            None => {
                let shard = case
                    .shard
                    .and_then(|k| record.shards.iter().find(|s| s.index == k));
                let mut part = RunRecord::new(
                    record.run.clone(),
                    shard.map_or(&record.started_at, |s| &s.started_at).clone(),
                    context.clone(),
                );
                part.schema = record.schema;
                part.memo = shard.map_or_else(|| record.memo.clone(), |s| s.memo.clone());
                part.prefetch = record.prefetch;
                part.isolate = record.isolate;
                part.interrupted = record.interrupted.clone();
                parts.push((machine, part));
                parts.len() - 1
            }
        };
        let part = &mut parts[at].1;
        if let Some(shard) = case.shard
            && !part.shards.iter().any(|s| s.index == shard)
            && let Some(run) = record.shards.iter().find(|s| s.index == shard)
        {
            part.shards.push(run.clone());
        }
        part.cases.push(case.clone());
    }
    parts
}

/// What identifies a record: the digest of its JSON, so that the same
/// file added twice is one run, and two runs are never one.
fn digest(record: &RunRecord) -> String {
    let json = serde_json::to_vec(record).unwrap_or_default();
    blake3::hash(&json).to_hex()[..32].to_owned()
}

/// The figures the history keeps along the commits, in the order of its
/// `figures` table's columns. The whole case's peak and the memos' bytes
/// are judged between two runs and not kept.
///
/// # Example
///
/// ```
/// use nnbench::record::Figure;
/// assert!(nnbench_cli::history::STORED.contains(&Figure::Rss));
/// assert!(!nnbench_cli::history::STORED.contains(&Figure::Memo));
/// ```
pub const STORED: [Figure; 10] = [
    Figure::Time,
    Figure::Load,
    Figure::Rss,
    Figure::Heap,
    Figure::Gpu,
    Figure::Value,
    Figure::Instructions,
    Figure::Throughput,
    Figure::P99,
    Figure::Requests,
];

/// The case's figures, in [`STORED`] order; none for a failed case.
fn figures(case: &CaseRecord) -> [Option<f64>; STORED.len()] {
    if case.error.is_some() {
        return [None; STORED.len()];
    }
    STORED.map(|figure| case.figure(figure))
}
