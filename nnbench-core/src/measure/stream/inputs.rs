//! The input of each request of a streaming case: [`request_input`] picks
//! one from a list (a memo of prompts, or of prompt lengths) in an order
//! seeded by the case, and keeps its token count for the record.

use std::cell::Cell;
use std::sync::Mutex;

thread_local! {
    /// The input tokens of the request being made on this thread, set by
    /// [`request_input`] and taken when its items are drained.
    static INPUT: Cell<Option<u64>> = const { Cell::new(None) };
}

/// The order in which a case's requests take the inputs: a shuffle of
/// the list, seeded by the case, drawn again for each pass through it.
struct Order {
    seed: u64,
    /// Requests that took an input so far.
    taken: u64,
    /// The pass through a list of this many that `order` is for.
    pass: Option<(u64, usize)>,
    order: Vec<usize>,
}

static ORDER: Mutex<Order> = Mutex::new(Order {
    seed: 0,
    taken: 0,
    pass: None,
    order: Vec::new(),
});

fn order() -> std::sync::MutexGuard<'static, Order> {
    ORDER
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How many tokens an input of a streamed request holds: the prompt's
/// length, for the record's `input_tokens`. A number is a length itself; a
/// slice or a `Vec` holds one token an element (a tokenized prompt).
/// Implement it for a prompt type of your own.
///
/// # Example
///
/// ```
/// use nnbench::InputTokens;
///
/// struct Prompt { ids: Vec<u32>, system: Vec<u32> }
///
/// impl InputTokens for Prompt {
///     fn input_tokens(&self) -> u64 {
///         (self.ids.len() + self.system.len()) as u64
///     }
/// }
/// assert_eq!(128usize.input_tokens(), 128);
/// assert_eq!(vec![1u32, 2, 3].input_tokens(), 3);
/// ```
pub trait InputTokens {
    /// The tokens of this input.
    fn input_tokens(&self) -> u64;
}

macro_rules! a_length {
    ($($t:ty),*) => {$(
        impl InputTokens for $t {
            fn input_tokens(&self) -> u64 {
                u64::try_from(*self).unwrap_or(u64::MAX)
            }
        }
    )*};
}
a_length!(usize, u16, u32, u64);

impl<T> InputTokens for [T] {
    fn input_tokens(&self) -> u64 {
        self.len() as u64
    }
}

impl<T> InputTokens for Vec<T> {
    fn input_tokens(&self) -> u64 {
        self.len() as u64
    }
}

impl<T: InputTokens + ?Sized> InputTokens for &T {
    fn input_tokens(&self) -> u64 {
        (**self).input_tokens()
    }
}

/// The input of the request being made: the next of `inputs` in an order
/// seeded by the case (the same in every run of it), each taken once
/// before any is taken again, so that a sweep serves the list's mix of
/// lengths. Its [`InputTokens`] are kept for the stream record's
/// `input_tokens`. Called in a case with `stream`, before its first token;
/// elsewhere it picks an input all the same, and nothing is kept. `None`
/// where `inputs` is empty.
///
/// # Example
///
/// ```
/// # struct Model;
/// # impl Model { fn generate(&self, _: usize) -> Vec<u32> { vec![1, 2] } }
/// # #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// # struct Tiny;
/// # impl nnbench::Memo for Tiny {
/// #     type Value = Model;
/// #     fn compute(&self) -> nnbench::Result<Model> { Ok(Model) }
/// # }
/// /// Prompt lengths of a realistic mix, one per request.
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Lengths;
///
/// impl nnbench::Memo for Lengths {
///     type Value = Vec<usize>;
///     fn compute(&self) -> nnbench::Result<Vec<usize>> {
///         Ok(vec![16, 16, 32, 64, 256])
///     }
/// }
///
/// #[nnbench::product(model = [Tiny], prompt_lengths = [Lengths], stream, rate = [20])]
/// fn serve(model: &Model, prompt_lengths: &Vec<usize>) -> Vec<u32> {
///     let Some(&prompt) = nnbench::request_input(prompt_lengths) else {
///         return Vec::new();
///     };
///     model.generate(prompt)
/// }
/// # fn main() {}
/// ```
pub fn request_input<T: InputTokens>(inputs: &[T]) -> Option<&T> {
    if inputs.is_empty() {
        return None;
    }
    let index = {
        let mut order = order();
        let len = inputs.len();
        let pass = order.taken / len as u64;
        let at = (order.taken % len as u64) as usize;
        order.taken += 1;
        if order.pass != Some((pass, len)) {
            let mut rng =
                fastrand::Rng::with_seed(order.seed ^ pass.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut shuffled: Vec<usize> = (0..len).collect();
            rng.shuffle(&mut shuffled);
            order.order = shuffled;
            order.pass = Some((pass, len));
        }
        order.order[at]
    };
    let input = &inputs[index];
    INPUT.set(Some(input.input_tokens()));
    Some(input)
}

/// A case starts: its requests take the inputs from the first in the
/// order `seed` draws.
pub(crate) fn begin_case(seed: u64) {
    let mut order = order();
    order.seed = seed;
    order.taken = 0;
    order.pass = None;
    INPUT.set(None);
}

/// The input tokens the request made on this thread took, forgotten.
pub(crate) fn take() -> Option<u64> {
    INPUT.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_input_is_taken_once_a_pass_in_an_order_the_seed_keeps() {
        let _alone = crate::measure::stream::tests::alone();
        let inputs: Vec<usize> = (0..50).collect();
        let pass = |seed| {
            begin_case(seed);
            (0..50)
                .map(|_| request_input(&inputs).copied())
                .collect::<Option<Vec<_>>>()
                .unwrap()
        };
        let first = pass(7);
        let mut sorted = first.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, inputs, "every input once");
        assert_ne!(first, inputs, "shuffled");
        assert_eq!(pass(7), first, "the same seed, the same order");
        let other = pass(8);
        assert_ne!(other, first);
        assert_eq!(
            take(),
            other.last().map(|&n| n as u64),
            "the last one's tokens"
        );
        assert_eq!(request_input::<usize>(&[]), None);
    }
}
