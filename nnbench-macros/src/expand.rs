//! Generates the registration of a checked family.
//!
//! For each parameter, a column of values is built when the registry is
//! read; each case captures its own values and classifies them at the
//! expansion site, where their types are concrete: a value whose type
//! implements `Memo` is resolved by the runner and passed as its value,
//! anything else is passed as written (see `__private::Probe`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ItemFn, Type};

use crate::check::{Grid, ParamPlan, Passing, Plan};
use crate::parse::Values;

pub(crate) fn family(plan: &Plan, function: &ItemFn) -> TokenStream {
    let options = &plan.options;
    let krate = quote!(::nnbench::__private);
    let family = &plan.family;
    let tags = options.tags.iter();
    let setup = hook(options.setup.as_ref());
    let teardown = hook(options.teardown.as_ref());
    let build = cases(plan);
    quote! {
        #function

        const _: () = {
            #[allow(unused_imports)]
            use #krate::{
                DebugValue as _, MemoValue as _, ResultReturn as _, SerializeValue as _,
                UnitReturn as _, ValueReturn as _,
            };

            fn __nnbench_cases() -> ::std::vec::Vec<#krate::CaseSpec> {
                #build
            }

            #krate::inventory::submit! {
                #krate::Family {
                    name: #family,
                    module_path: ::core::module_path!(),
                    file: ::core::file!(),
                    line: ::core::line!(),
                    tags: &[#(#tags),*],
                    setup: #setup,
                    teardown: #teardown,
                    cases: __nnbench_cases,
                }
            }
        };
    }
}

fn hook(hook: Option<&Expr>) -> TokenStream {
    let Some(hook) = hook else {
        return quote!(::core::option::Option::None);
    };
    let call = quote_spanned! {hook.span()=>
        (&&::nnbench::__private::Ret::new((#hook)(__state, __params))).hook()
    };
    quote! {
        ::core::option::Option::Some(
            |__state: &::nnbench::State, __params: &::nnbench::Params| -> ::nnbench::Result<()> { #call }
        )
    }
}

/// The body of `__nnbench_cases`.
fn cases(plan: &Plan) -> TokenStream {
    let columns: Vec<_> = (0..plan.params.len())
        .map(|i| format_ident!("__column_{i}"))
        .collect();
    let values: Vec<_> = (0..plan.params.len())
        .map(|i| format_ident!("__value_{i}"))
        .collect();
    let case = case(plan, &values);
    // Each case owns clones of its values: the loops only borrow them.
    let push = quote! {
        #(let #values = ::core::clone::Clone::clone(#values);)*
        __cases.push(#case);
    };
    match &plan.grid {
        Grid::Single => quote!(::std::vec![#case]),
        Grid::Product(axes) => {
            let lets = plan
                .params
                .iter()
                .zip(axes)
                .zip(&columns)
                .map(|((param, axis), column)| column_let(column, param, axis));
            let mut body = push;
            for (value, column) in values.iter().zip(&columns).rev() {
                body = quote! {
                    for #value in &#column {
                        #body
                    }
                };
            }
            quote! {
                #(#lets)*
                let mut __cases = ::std::vec::Vec::new();
                #body
                __cases
            }
        }
        Grid::Sets(sets) => {
            let count = sets.first().map_or(0, Vec::len);
            let lets = plan
                .params
                .iter()
                .zip(sets)
                .zip(&columns)
                .map(|((param, set), column)| {
                    column_let(column, param, &Values::List(set.clone()))
                });
            quote! {
                #(#lets)*
                let mut __cases = ::std::vec::Vec::with_capacity(#count);
                for __set in 0..#count {
                    #(let #values = &#columns[__set];)*
                    #push
                }
                __cases
            }
        }
    }
}

/// `let __column_i = [...]`, typed where the values' type would otherwise
/// be left to integer or float fallback.
fn column_let(column: &syn::Ident, param: &ParamPlan, values: &Values) -> TokenStream {
    let literal = match values {
        Values::List(list) => list.iter().all(is_literal),
        Values::Iter(expr) => is_literal(expr),
    };
    let element: Option<Type> = match &param.passing {
        // A memo cannot be passed by value, so the values are the parameter's type.
        Passing::Value(ty) => Some(ty.clone()),
        Passing::Ref(Type::Path(p)) if literal && p.path.is_ident("str") => {
            Some(syn::parse_quote!(&'static str))
        }
        Passing::Ref(ty) if literal => Some(ty.clone()),
        Passing::Ref(_) | Passing::Arc => None,
    };
    match (values, element) {
        (Values::List(list), Some(ty)) => {
            let n = list.len();
            quote_spanned!(param.ident.span()=> let #column: [#ty; #n] = [#(#list),*];)
        }
        (Values::List(list), None) => quote!(let #column = [#(#list),*];),
        (Values::Iter(expr), ty) => {
            let ty = ty.map_or_else(|| quote!(_), |ty| quote!(#ty));
            quote_spanned! {expr.span()=>
                let #column: ::std::vec::Vec<#ty> =
                    ::core::iter::IntoIterator::into_iter(#expr).collect();
            }
        }
    }
}

/// Literals (and negated, parenthesized, combined or ranged literals) have
/// no type of their own until something pins it.
fn is_literal(expr: &Expr) -> bool {
    match expr {
        Expr::Lit(_) => true,
        Expr::Unary(u) => is_literal(&u.expr),
        Expr::Paren(p) => is_literal(&p.expr),
        Expr::Group(g) => is_literal(&g.expr),
        Expr::Binary(b) => is_literal(&b.left) && is_literal(&b.right),
        Expr::Range(r) => {
            r.start.as_deref().is_none_or(is_literal) && r.end.as_deref().is_none_or(is_literal)
        }
        _ => false,
    }
}

/// One `CaseSpec`, built from the values `__value_i` of the current case.
fn case(plan: &Plan, values: &[syn::Ident]) -> TokenStream {
    let krate = quote!(::nnbench::__private);
    let function = &plan.function;
    let names: Vec<&String> = plan.params.iter().map(|p| &p.name).collect();
    let args: Vec<_> = (0..plan.params.len())
        .map(|i| format_ident!("__arg_{i}"))
        .collect();
    let indices = 0..plan.params.len();
    let passed = plan.params.iter().zip(&args).map(|(param, arg)| {
        let span = param.ident.span();
        match param.passing {
            Passing::Ref(_) => quote_spanned!(span=> #arg.by_ref()),
            Passing::Arc => quote_spanned!(span=> #arg.by_arc()),
            Passing::Value(_) => quote_spanned!(span=> #arg.by_value()),
        }
    });
    quote! {
        #krate::CaseSpec::new(
            ::std::vec![#((&&&#krate::Probe(&#values)).param(#names)),*],
            move |__args: &#krate::Args, __timer: &mut #krate::Timer| {
                #(let #args = (&&&#krate::Probe(&#values)).fetch(__args, #indices, #names)?;)*
                let __returned = __timer.time(|| #function(#(#passed),*));
                (&&#krate::Ret::new(__returned)).metric()
            },
        )
    }
}
