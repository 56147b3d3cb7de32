//! The attributes of [nnbench](https://docs.rs/nnbench): `#[benchmark]`,
//! `#[parametrize]` and `#[product]`. Use them through the `nnbench` crate,
//! whose documentation of each attribute lists its options.

#![warn(missing_docs)]

mod check;
mod expand;
mod parse;

use proc_macro::TokenStream;
use syn::ItemFn;

use parse::Kind;

/// Registers a function as a single benchmark case.
///
/// The function takes no parameters; what it returns is the case's metric
/// (anything `serde::Serialize`, `()` for none, or a `Result` whose `Err`
/// fails the case).
///
/// Options, all optional:
/// - `name = "..."`: the family name in ids (default: the function's name);
/// - `tags = ["a", "b"]`: tags for `--tag` selection;
/// - `setup = path` / `teardown = path`: hooks `fn(&State, &Params)`
///   returning `()` or `Result<(), E>`, run before and after the call
///   (teardown runs even when the case failed).
///
/// # Example
///
/// ```
/// #[nnbench::benchmark(name = "sum_1k", tags = ["smoke"])]
/// fn startup() -> u64 {
///     (0..1000).sum()
/// }
///
/// let record = nnbench::Runner::new().filter("sum_1k").test_mode(true).quiet(true).run().unwrap();
/// assert_eq!(record.cases[0].value, 499500);
/// ```
#[proc_macro_attribute]
pub fn benchmark(args: TokenStream, item: TokenStream) -> TokenStream {
    generate(Kind::Benchmark, args, item)
}

/// Registers one case per explicit parameter set.
///
/// The first argument lists the sets, each naming every parameter of the
/// function: `[(n = 64, k = 8), (n = 256, k = 16)]`. Values are passed as
/// with [`macro@product`]: memos are resolved, anything else is passed as
/// written. Takes the same options as [`macro@benchmark`].
///
/// # Example
///
/// ```
/// #[nnbench::parametrize([(n = 64, k = 8), (n = 256, k = 16)])]
/// fn matmul_flops(n: usize, k: usize) -> usize {
///     2 * n * n * k
/// }
///
/// let ids = nnbench::Runner::new().filter("matmul_flops").list();
/// assert_eq!(ids, ["matmul_flops/n=64,k=8", "matmul_flops/n=256,k=16"]);
/// ```
#[proc_macro_attribute]
pub fn parametrize(args: TokenStream, item: TokenStream) -> TokenStream {
    generate(Kind::Parametrize, args, item)
}

/// Registers one case per combination of the axes.
///
/// Every parameter of the function gets an axis, `name = [values]` or
/// `name = expression` (anything iterable, such as `1..=4`). Cases run in
/// declared order (the last axis varies fastest), except that cases sharing
/// a memo are run one after the other.
///
/// How a value reaches the function depends on its type:
/// - a value whose type implements [`Memo`](https://docs.rs/nnbench/latest/nnbench/trait.Memo.html)
///   is resolved through the global memo cache when its case starts, and the
///   function receives `&Value` or `Arc<Value>`; it is evicted after the
///   last case that uses it;
/// - any other value is passed as written: cloned for a by-value parameter,
///   by reference for a `&T` parameter. It must be `Clone + Debug + Send +
///   Sync`, and is recorded by its `Serialize` form (or its `Debug` form).
///
/// Options (`name`, `tags`, `setup`, `teardown`) are those of
/// [`macro@benchmark`]; a parameter called like an option is an axis.
///
/// A wrong axis name, a parameter without an axis, or a value of the wrong
/// type is a compile error pointing at that name.
///
/// # Example
///
/// ```
/// use nnbench::{Memo, Params, State};
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Model(&'static str);
///
/// impl Memo for Model {
///     type Value = Vec<f64>;
///     fn compute(&self) -> nnbench::Result<Vec<f64>> {
///         Ok(vec![0.5; 1024]) // load from disk in real life
///     }
/// }
///
/// fn log(state: &State, params: &Params) {
///     let batch: Option<&usize> = params.get("batch");
///     println!("{} ({}/{}), batch {batch:?}", state.name, state.family_index + 1, state.family_size);
/// }
///
/// #[nnbench::product(model = [Model("small"), Model("large")], batch = [32, 64], setup = log)]
/// fn score(model: &[f64], batch: usize) -> f64 {
///     model.iter().take(batch).sum()
/// }
///
/// let record = nnbench::Runner::new().filter("score/").test_mode(true).quiet(true).run().unwrap();
/// assert_eq!(record.cases.len(), 4);
/// assert_eq!(record.cases[0].id, r#"score/model=Model("small"),batch=32"#);
/// assert!(!nnbench::memo::contains(&Model("small")), "evicted after its last use");
/// ```
#[proc_macro_attribute]
pub fn product(args: TokenStream, item: TokenStream) -> TokenStream {
    generate(Kind::Product, args, item)
}

fn generate(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let mut out = syn::Error::new(
                proc_macro2::Span::call_site(),
                format!("{} applies to a free function", kind.attribute()),
            )
            .to_compile_error();
            out.extend(proc_macro2::TokenStream::from(item));
            return out.into();
        }
    };
    let expanded = parse::attr(kind, args.into())
        .and_then(|attr| check::plan(attr, &function))
        .map(|plan| expand::family(&plan, &function));
    match expanded {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            // Keep the function, so its own uses do not add errors of their own.
            let mut out = error.to_compile_error();
            out.extend(quote::quote!(#function));
            out.into()
        }
    }
}
