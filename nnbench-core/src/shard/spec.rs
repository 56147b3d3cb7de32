//! `--shard K/N` and `--shard auto`: which shard this process runs, as
//! given or as the scheduler that started it says.

use std::fmt;
use std::str::FromStr;

use super::ShardError;

/// One shard of a sweep: the `index`-th of `count`, counted from 1 as
/// `--shard K/N` counts (cargo-nextest's `--partition count:K/N` does the
/// same). Schedulers that count from 0 (Slurm array ids from 0,
/// Kubernetes' `JOB_COMPLETION_INDEX`) are read by [`Shard::from_env`].
///
/// # Example
///
/// ```
/// use nnbench::shard::Shard;
///
/// let second: Shard = "2/3".parse().unwrap();
/// assert_eq!((second.index(), second.count()), (2, 3));
/// assert!("0/3".parse::<Shard>().unwrap_err().to_string().contains("count from 1"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// Shard `index` of `count`, with `1 <= index <= count`.
    ///
    /// # Errors
    ///
    /// [`ShardError::OutOfRange`] otherwise.
    ///
    /// # Example
    ///
    /// ```
    /// let last = nnbench::shard::Shard::new(7, 7).unwrap();
    /// assert_eq!(last.to_string(), "7/7");
    /// assert!(nnbench::shard::Shard::new(8, 7).is_err());
    /// ```
    pub fn new(index: usize, count: usize) -> Result<Self, ShardError> {
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Self { index, count })
    }

    /// Which shard, from 1.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::shard::Shard::new(1, 2).unwrap().index(), 1);
    /// ```
    pub fn index(self) -> usize {
        self.index
    }

    /// How many shards.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::shard::Shard::new(1, 2).unwrap().count(), 2);
    /// ```
    pub fn count(self) -> usize {
        self.count
    }

    /// The shard the scheduler that started this process assigned, from
    /// its variables: a Slurm job array, or a Kubernetes indexed Job
    /// (`JOB_COMPLETION_INDEX`, from 0; it does not say how many
    /// completions there are, so `count` must). This is `--shard auto` and
    /// `--shard auto/N`.
    ///
    /// In a Slurm array, without `count` the task's place in the array is
    /// its shard and the array's size the count (`SLURM_ARRAY_TASK_ID`,
    /// `_MIN`, `_COUNT` or `_MAX`, and `_STEP`). With `count`, the task id
    /// is the shard number, 1 to `count`, however many tasks the array has:
    /// the array is submitted as `--array=1-N`, and a rerun of some of its
    /// tasks (`--array=2,5`) runs those shards again, not a smaller sweep.
    ///
    /// # Errors
    ///
    /// [`ShardError`] naming the variable when none is set, one is not a
    /// number, the array is not a range, or the counts disagree.
    ///
    /// # Example
    ///
    /// ```no_run
    /// // In a Kubernetes indexed Job of 4 completions:
    /// let shard = nnbench::shard::Shard::from_env(Some(4))?;
    /// println!("running shard {shard}");
    /// # Ok::<(), nnbench::shard::ShardError>(())
    /// ```
    pub fn from_env(count: Option<usize>) -> Result<Self, ShardError> {
        Self::from_vars(|name| std::env::var(name).ok(), count)
    }

    /// [`from_env`](Self::from_env) with the variables `get` gives.
    pub(crate) fn from_vars(
        get: impl Fn(&str) -> Option<String>,
        count: Option<usize>,
    ) -> Result<Self, ShardError> {
        let number = |name: &'static str| -> Result<Option<usize>, ShardError> {
            match get(name) {
                None => Ok(None),
                Some(value) => value
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| ShardError::Variable {
                        name,
                        value,
                        why: "not a whole number",
                    }),
            }
        };
        let (index, found) = match (number("SLURM_ARRAY_TASK_ID")?, count) {
            (Some(id), Some(count)) if (1..=count).contains(&id) => (id - 1, None),
            (Some(id), Some(count)) => return Err(ShardError::TaskNotShard { id, count }),
            (Some(id), None) => slurm(id, &number)?,
            (None, _) => match number("JOB_COMPLETION_INDEX")? {
                Some(index) => (index, None),
                None => return Err(ShardError::NoScheduler),
            },
        };
        let count = count.or(found).ok_or(ShardError::NoCount)?;
        Self::new(index + 1, count)
    }
}

/// The 0-based index in a Slurm job array and the array's size.
fn slurm(
    id: usize,
    number: &impl Fn(&'static str) -> Result<Option<usize>, ShardError>,
) -> Result<(usize, Option<usize>), ShardError> {
    let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1).max(1);
    let irregular = || ShardError::IrregularArray { id, min, step };
    if id < min || !(id - min).is_multiple_of(step) {
        return Err(irregular());
    }
    let from_range =
        number("SLURM_ARRAY_TASK_MAX")?.map(|max| (max.saturating_sub(min)) / step + 1);
    let count = match (number("SLURM_ARRAY_TASK_COUNT")?, from_range) {
        // `--array=1,3,7`: three tasks, but ids that are no range.
        (Some(count), Some(range)) if count != range => return Err(irregular()),
        (count, range) => count.or(range),
    };
    Ok(((id - min) / step, count))
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// `K/N`, or `auto` and `auto/N` for the scheduler's index
    /// ([`Shard::from_env`]).
    fn from_str(spec: &str) -> Result<Self, ShardError> {
        let malformed = || ShardError::Malformed {
            spec: spec.to_owned(),
        };
        let (index, count) = spec.trim().split_once('/').unwrap_or((spec.trim(), ""));
        let count = match count {
            "" if index == "auto" => None,
            "" => return Err(malformed()),
            n => Some(n.trim().parse::<usize>().map_err(|_| malformed())?),
        };
        match (index.trim(), count) {
            ("auto", count) => Self::from_env(count),
            (k, Some(n)) => Self::new(k.parse().map_err(|_| malformed())?, n),
            (_, None) => Err(malformed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn from(vars: &[(&str, &str)], count: Option<usize>) -> Result<Shard, ShardError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Shard::from_vars(|name| vars.get(name).cloned(), count)
    }

    #[test]
    fn k_of_n_counts_from_one() {
        assert_eq!("1/1".parse::<Shard>().unwrap(), Shard::new(1, 1).unwrap());
        assert_eq!(" 3 / 7 ".parse::<Shard>().unwrap().to_string(), "3/7");
        for bad in ["0/3", "4/3", "1/0"] {
            let err = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(err.contains("count from 1"), "{bad}: {err}");
        }
        for bad in ["", "3", "a/3", "1/b", "1/2/3", "-1/3", "auto/x"] {
            let err = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(err.contains("K/N"), "{bad}: {err}");
        }
    }

    #[test]
    fn slurm_arrays_give_index_and_count() {
        // sbatch --array=0-3
        let vars = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        assert_eq!(from(&vars, None).unwrap().to_string(), "3/4");
        // sbatch --array=1-7:3 runs ids 1, 4, 7.
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "7"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_STEP", "3"),
        ];
        assert_eq!(from(&stepped, None).unwrap().to_string(), "3/3");
        // An older Slurm without _COUNT: the range gives it.
        let old = [
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "5"),
            ("SLURM_ARRAY_TASK_MAX", "6"),
        ];
        assert_eq!(from(&old, None).unwrap().to_string(), "1/2");
    }

    #[test]
    fn with_a_count_slurm_task_ids_are_shard_numbers() {
        // sbatch --array=1-4, and a rerun of task 3 alone: --array=3.
        let whole = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
        ];
        let rerun = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "3"),
            ("SLURM_ARRAY_TASK_MAX", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
        ];
        assert_eq!(from(&whole, Some(4)).unwrap().to_string(), "3/4");
        assert_eq!(from(&rerun, Some(4)).unwrap().to_string(), "3/4");
        assert_eq!(from(&rerun, None).unwrap().to_string(), "1/1");
        for id in ["0", "5"] {
            let err = from(&[("SLURM_ARRAY_TASK_ID", id)], Some(4))
                .unwrap_err()
                .to_string();
            assert!(err.contains("--array=1-4"), "{err}");
        }
    }

    #[test]
    fn a_slurm_list_that_is_no_range_is_refused() {
        // sbatch --array=1,3,7
        let vars = [
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "7"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ];
        let err = from(&vars, None).unwrap_err().to_string();
        assert!(err.contains("--array=0-"), "{err}");
    }

    #[test]
    fn a_kubernetes_index_needs_the_count_given() {
        let vars = [("JOB_COMPLETION_INDEX", "0")];
        assert_eq!(from(&vars, Some(4)).unwrap().to_string(), "1/4");
        let err = from(&vars, None).unwrap_err().to_string();
        assert!(err.contains("auto/N"), "{err}");
        let err = from(&[("JOB_COMPLETION_INDEX", "4")], Some(4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("5/4"), "{err}");
    }

    #[test]
    fn no_scheduler_or_a_bad_variable_is_named() {
        let err = from(&[], Some(3)).unwrap_err().to_string();
        assert!(
            err.contains("SLURM_ARRAY_TASK_ID") && err.contains("JOB_COMPLETION_INDEX"),
            "{err}"
        );
        let err = from(&[("JOB_COMPLETION_INDEX", "one")], Some(3))
            .unwrap_err()
            .to_string();
        assert!(err.contains("JOB_COMPLETION_INDEX=one"), "{err}");
    }
}
