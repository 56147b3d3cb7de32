//! The largest size of a family that fits in memory, in the record.

use serde::{Deserialize, Serialize};

/// The largest value of a family's `scaling` parameter whose peak memory
/// fits under a limit, predicted from the peaks at the sizes it ran:
/// `peak ≈ fixed_bytes + per_bytes × n^exponent`, solved for the `n`
/// whose peak is `limit_bytes`.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for c in &record.capacity {
///     println!("{}: fits up to {} ≈ {:.0} [{:.0}, {:.0}] in {} bytes ({})",
///              c.label(), c.parameter, c.n, c.interval[0], c.interval[1],
///              c.limit_bytes, c.limit_from);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CapacityRecord {
    /// The family.
    pub family: String,
    /// The parameter it grows with (`scaling = n`).
    pub parameter: String,
    /// The family's other parameters in this fit (a fit per combination of
    /// them); empty when it has none.
    #[serde(default, skip_serializing_if = "super::ParamMap::is_empty")]
    pub params: super::ParamMap,
    /// The memory fitted: `rss` (the case's resident peak less the
    /// file-backed pages resident as it started, which the kernel reclaims
    /// before a cgroup's limit kills anything) or `gpu` (the device
    /// allocator's peak).
    pub figure: String,
    /// The largest `n` predicted to fit; 0 where the fixed part alone
    /// reaches the limit.
    pub n: f64,
    /// Its 95% interval, from the spread of the peaks about the fit.
    pub interval: [f64; 2],
    /// The memory the cases may have, in bytes: the limit, less
    /// [`others_bytes`](Self::others_bytes) where a cgroup sets it.
    pub limit_bytes: u64,
    /// Where the limit came from: `cgroup` (the run's memory cgroup),
    /// `machine` (its memory), `flag` (`--capacity-limit`) or `device`
    /// (the GPU's memory).
    pub limit_from: String,
    /// What the rest of the limiting cgroup held when the run ended (the
    /// supervisor of isolated workers, the shell or agent that started
    /// the run), taken from the cgroup's limit to give `limit_bytes`;
    /// absent where nothing else held any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_bytes: Option<u64>,
    /// The fit's fixed part: what the peak holds at any size.
    pub fixed_bytes: f64,
    /// The fit's growth: bytes per `n^exponent`.
    pub per_bytes: f64,
    /// How the growing part grows: 1 for `n`, 2 for `n²`.
    pub exponent: f64,
    /// How many values of the parameter it was fitted over.
    pub points: usize,
    /// The largest value of the parameter measured; 0 in records that
    /// predate it.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub largest_measured: f64,
}

/// How far past the largest size measured a capacity is predicted: past
/// it, the fit's form (a fixed part and one power) is an assumption no
/// peak measured it by, and an interval from the peaks' spread about the
/// fit would claim a precision nothing holds. There the console says the
/// size fits beyond this many times the largest measured, and compare does
/// not judge it.
pub(crate) const MOST_EXTRAPOLATION: f64 = 10.0;

impl CapacityRecord {
    /// The family, with its other parameters where it has any:
    /// `train (model=small)`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench::record::CapacityRecord) {
    /// println!("{}: {} ≈ {:.0}", c.label(), c.parameter, c.n);
    /// # }
    /// ```
    pub fn label(&self) -> String {
        super::scaling::label(&self.family, &self.params)
    }

    /// How many times the largest size measured the prediction lies:
    /// `n / largest_measured`; `None` where the record does not say.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench::record::CapacityRecord) {
    /// if let Some(factor) = c.extrapolation() {
    ///     println!("{}: {:.1}x past the largest size measured", c.label(), factor);
    /// }
    /// # }
    /// ```
    pub fn extrapolation(&self) -> Option<f64> {
        (self.largest_measured > 0.0).then(|| self.n / self.largest_measured)
    }

    /// Whether the prediction lies past ten times the largest size
    /// measured: not predicted so far out, nor compared.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench::record::CapacityRecord) {
    /// if !c.beyond_reach() {
    ///     println!("{}: {:.0}", c.label(), c.n);
    /// }
    /// # }
    /// ```
    pub fn beyond_reach(&self) -> bool {
        self.extrapolation()
            .is_some_and(|factor| factor > MOST_EXTRAPOLATION)
    }

    /// Whether `other` is the same prediction of another run: family,
    /// parameter, figure and other parameters.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(base: &nnbench::RunRecord, head: &nnbench::RunRecord) {
    /// for h in &head.capacity {
    ///     if let Some(b) = base.capacity.iter().find(|b| b.same_fit(h)) {
    ///         println!("{}: {:.0} -> {:.0}", h.label(), b.n, h.n);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn same_fit(&self, other: &CapacityRecord) -> bool {
        self.family == other.family
            && self.parameter == other.parameter
            && self.figure == other.figure
            && self.params == other.params
    }
}

/// `train: fits up to batch ≈ 3.90k [3.70k, 4.10k] in 4.00 GiB (cgroup)`,
/// or `(cgroup of 4.00 GiB, 12.0 MiB of it held beside the cases)`, as the
/// console prints it.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for c in &record.capacity {
///     println!("{c}");
/// }
/// # }
/// ```
impl std::fmt::Display for CapacityRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = nnbench_vocab::format_bytes;
        let from = match self.others_bytes {
            Some(others) => format!(
                "{} of {}, {} of it held beside the cases",
                self.limit_from,
                bytes(self.limit_bytes + others),
                bytes(others)
            ),
            None => self.limit_from.clone(),
        };
        if self.n <= 0.0 {
            return write!(
                f,
                "{}: fits no {} in {} ({from}): its fixed part alone, {}, reaches it",
                self.label(),
                self.parameter,
                bytes(self.limit_bytes),
                bytes(self.fixed_bytes as u64),
            );
        }
        if self.beyond_reach() {
            return write!(
                f,
                "{}: fits {} beyond {}x the largest measured ({}) in {} ({from}): not predicted so far out",
                self.label(),
                self.parameter,
                MOST_EXTRAPOLATION,
                format_n(self.largest_measured),
                bytes(self.limit_bytes),
            );
        }
        let reach = self
            .extrapolation()
            .map(|factor| format!(", {factor:.1}x the largest measured"))
            .unwrap_or_default();
        write!(
            f,
            "{}: fits up to {} ≈ {} [{}, {}] in {} ({from}{reach})",
            self.label(),
            self.parameter,
            format_n(self.n),
            format_n(self.interval[0]),
            format_n(self.interval[1]),
            bytes(self.limit_bytes),
        )
    }
}

/// A size that fits, as the console and comparisons write it: whole, to
/// three digits (`3.90k`), or `∞` for an unbounded interval.
pub(crate) fn format_n(n: f64) -> String {
    if n.is_finite() {
        nnbench_vocab::format_count(n.floor())
    } else {
        "∞".to_owned()
    }
}
