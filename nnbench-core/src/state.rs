/// Where a case stands in the run; setup and teardown hooks receive it.
///
/// `family_size` and `family_index` count the cases of this family that the
/// run selected, in the order it runs them, so a hook can tell the first and
/// the last case of its family even when filters left some out.
///
/// # Example
///
/// ```
/// fn teardown(state: &nnbench::State, _params: &nnbench::Params) {
///     if state.family_index + 1 == state.family_size {
///         println!("{} was the last case of {}", state.name, state.family);
///     }
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct State {
    /// The case's id, `family/name=value,...`.
    pub name: String,
    /// The family: the function's name, or the `name` option of its attribute.
    pub family: String,
    /// How many cases of this family the run holds.
    pub family_size: usize,
    /// This case's position among them, from 0.
    pub family_index: usize,
}
