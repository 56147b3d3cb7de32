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

/// Implemented in `nnbench-macros`; use it as `nnbench::benchmark`, where
/// it is documented with each of its options.
#[proc_macro_attribute]
pub fn benchmark(args: TokenStream, item: TokenStream) -> TokenStream {
    generate(Kind::Benchmark, args, item)
}

/// Implemented in `nnbench-macros`; use it as `nnbench::parametrize`.
#[proc_macro_attribute]
pub fn parametrize(args: TokenStream, item: TokenStream) -> TokenStream {
    generate(Kind::Parametrize, args, item)
}

/// Implemented in `nnbench-macros`; use it as `nnbench::product`.
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
