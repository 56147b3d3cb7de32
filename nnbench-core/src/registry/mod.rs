//! The registered families and their cases, in declared order.

mod args;
mod family;

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

pub use args::Args;
pub(crate) use family::Parallel;
pub use family::{Call, CaseSpec, Count, Family, Hook, Work, WorkCount};

use crate::error::panic_message;
use crate::param::Params;
use crate::record::ParamMap;

/// One case of the registry.
pub(crate) struct Case {
    pub id: String,
    /// Its family's name in ids and records: the function's (or the `name`
    /// option), qualified by its module when two families share it.
    pub family_name: Arc<str>,
    pub family: &'static Family,
    /// Its family's place among the registered families, shared by the
    /// family's cases: a dense key for per-family counts.
    pub family_ordinal: usize,
    pub params: Params,
    pub body: Body,
    /// What one call handles, for a family with a `throughput`.
    pub throughput: Option<(crate::record::ThroughputUnit, Box<Count>)>,
    /// The work one call does, for a family with `flops` or `bytes`.
    pub work: Option<Box<WorkCount>>,
    /// The threads or requests in flight of a family with `threads` or
    /// `concurrency`.
    pub parallel: Option<Parallel>,
    /// Its record's `params`, made ahead of its run ([`Case::prepare_record`]).
    pub record_params: Mutex<Option<ParamMap>>,
}

impl Case {
    /// Makes its record's `params` now, while the run has time to spare
    /// (it waits for its context before the first case starts), not in
    /// the loop over the cases, where a grid of quick cases pays for it.
    pub(crate) fn prepare_record(&self) {
        let params = self.params.to_record();
        *self
            .record_params
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(params);
    }

    /// Its record's `params`: those made ahead, else made now.
    pub(crate) fn take_record_params(&self) -> ParamMap {
        self.record_params
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
            .unwrap_or_else(|| self.params.to_record())
    }
}

pub(crate) enum Body {
    Call(Box<Call>),
    /// The family's grid could not be built (an expression in it panicked):
    /// the family shows up as one failed case instead of vanishing.
    BrokenGrid(String),
}

/// Every registered case, families in source order (file, then line).
pub(crate) fn cases() -> Vec<Case> {
    let mut families: Vec<&'static Family> = inventory::iter::<Family>().collect();
    families.sort_by_key(|f| (f.file, f.line, f.name));
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for family in &families {
        *uses.entry(family.name).or_default() += 1;
    }
    let mut cases = Vec::new();
    for (family_ordinal, family) in families.into_iter().enumerate() {
        let name: Arc<str> = if uses[family.name] > 1 {
            qualified(family).into()
        } else {
            family.name.into()
        };
        match specs(family) {
            Ok((specs, levels)) => {
                let broken = family
                    .scaling
                    .and_then(|parameter| scaling_problem(parameter, &specs));
                // The i-th spec runs at the i-th level in turn.
                let parallel = levels.iter().copied().map(Some).cycle();
                let parallel = parallel.chain(std::iter::repeat(None));
                cases.extend(
                    specs
                        .into_iter()
                        .zip(parallel)
                        .map(|(spec, parallel)| Case {
                            id: spec.params.id(&name),
                            family_name: Arc::clone(&name),
                            family,
                            family_ordinal,
                            params: spec.params,
                            body: match &broken {
                                Some(why) => Body::BrokenGrid(why.clone()),
                                None => Body::Call(spec.call),
                            },
                            throughput: spec.throughput,
                            work: spec.work,
                            parallel,
                            record_params: Mutex::default(),
                        }),
                );
            }
            Err(payload) => cases.push(Case {
                id: name.to_string(),
                family_name: Arc::clone(&name),
                family,
                family_ordinal,
                params: Params::default(),
                throughput: None,
                work: None,
                parallel: None,
                record_params: Mutex::default(),
                body: Body::BrokenGrid(format!(
                    "building the parameter grid of `{}` panicked: {}",
                    name,
                    panic_message(&*payload)
                )),
            }),
        }
    }
    make_ids_unique(&mut cases);
    cases
}

/// What a panic carries.
type Panic = Box<dyn std::any::Any + Send>;

/// The family's case specs in declared order, and its levels; with
/// `concurrency` or `threads`, each spec at every level in turn, the level a
/// parameter of its own: the i-th spec runs at the level `i` modulo their
/// count.
fn specs(family: &Family) -> Result<(Vec<CaseSpec>, Vec<Parallel>), Panic> {
    let levels = family.levels();
    if levels.is_empty() {
        return Ok((catch_unwind(AssertUnwindSafe(family.cases))?, levels));
    }
    // Specs own their values and calls: each level builds the grid anew.
    let mut by_level = Vec::with_capacity(levels.len());
    for _ in &levels {
        by_level.push(catch_unwind(AssertUnwindSafe(family.cases))?.into_iter());
    }
    let mut specs = Vec::new();
    'cases: loop {
        for (&parallel, built) in levels.iter().zip(&mut by_level) {
            let Some(mut spec) = built.next() else {
                break 'cases;
            };
            spec.params.push(parallel.param());
            specs.push(spec);
        }
    }
    Ok((specs, levels))
}

/// Why a family's `scaling = parameter` cannot be fitted over `specs`:
/// the parameter is missing, not a number, or takes fewer than three
/// distinct values. The attribute checks values written as literals; this
/// checks those an expression made.
fn scaling_problem(parameter: &str, specs: &[CaseSpec]) -> Option<String> {
    let mut distinct: Vec<f64> = Vec::new();
    for spec in specs {
        let Some(param) = spec.params.param(parameter) else {
            return Some(format!(
                "scaling = {parameter}: the cases have no parameter `{parameter}`"
            ));
        };
        if param.is_memo() {
            return Some(format!(
                "scaling = {parameter}: `{parameter}` is a memo, not a number"
            ));
        }
        match param.description().as_f64() {
            Some(n) if n.is_finite() => {
                if !distinct.contains(&n) {
                    distinct.push(n);
                }
            }
            _ => {
                return Some(format!(
                    "scaling = {parameter}: `{parameter}` takes {}, not a number",
                    param.description()
                ));
            }
        }
    }
    (distinct.len() < 3).then(|| {
        format!(
            "scaling = {parameter}: `{parameter}` takes {} distinct value{}; fitting how a figure grows with it needs at least 3",
            distinct.len(),
            if distinct.len() == 1 { "" } else { "s" }
        )
    })
}

/// `module::name`, the module path without its crate.
fn qualified(family: &Family) -> String {
    match family.module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{}", family.name),
        None => family.name.to_owned(),
    }
}

/// Equal parameter descriptions (an axis listing one value twice) would give
/// equal ids; later ones get `#2`, `#3`, ... so every id stays unique and
/// stable from run to run.
fn make_ids_unique(cases: &mut [Case]) {
    // Repeats are rare: finding there are none costs no copy of the ids.
    let mut distinct = std::collections::HashSet::with_capacity(cases.len());
    if cases.iter().all(|case| distinct.insert(case.id.as_str())) {
        return;
    }
    drop(distinct);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for case in cases.iter_mut() {
        let count = seen.entry(case.id.clone()).or_default();
        *count += 1;
        if *count > 1 {
            case.id = format!("{}#{}", case.id, count);
        }
    }
}
