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
use syn::{Expr, Ident, ItemFn, Type};

use crate::check::{Grid, ParamPlan, Passing, Plan};
use crate::parse::{Metric, RuntimeFlavor, ThroughputUnit, TimingMode, Values};

/// The path to nnbench's generated-code module: `::nnbench::__private`, or
/// under the `crate = path` option's path. Generated code names nothing of
/// nnbench but through it.
fn private(plan: &Plan) -> TokenStream {
    match &plan.options.krate {
        Some(path) => quote!(#path::__private),
        None => quote!(::nnbench::__private),
    }
}

pub(crate) fn family(plan: &Plan, function: &ItemFn) -> TokenStream {
    let options = &plan.options;
    let krate = private(plan);
    let family = &plan.family;
    let tags = options.tags.iter().flatten();
    let setup = hook(&krate, options.setup.as_ref());
    let teardown = hook(&krate, options.teardown.as_ref());
    let timing = optional(options.timing.map(|mode| {
        let variant = match mode {
            TimingMode::Once => quote!(Once),
            TimingMode::Sampled => quote!(Sampled),
            TimingMode::Auto => quote!(Auto),
            TimingMode::Instructions => quote!(Instructions),
        };
        quote!(#krate::Timing::#variant)
    }));
    let direction_of = |direction: nnbench_vocab::Direction| match direction {
        nnbench_vocab::Direction::Higher => quote!(#krate::Direction::Higher),
        nnbench_vocab::Direction::Lower => quote!(#krate::Direction::Lower),
        // The parser knows no other direction than these two.
        other => {
            let message = format!("nnbench cannot expand the direction {other:?}");
            quote!(compile_error!(#message))
        }
    };
    let (direction, directions) = match &options.metric {
        Some(Metric::Number(direction)) => (Some(direction_of(*direction)), Vec::new()),
        Some(Metric::Fields(fields)) => (
            None,
            fields
                .iter()
                .map(|f| {
                    let (path, direction) = (&f.path, direction_of(f.direction));
                    quote!((#path, #direction))
                })
                .collect(),
        ),
        None => (None, Vec::new()),
    };
    let direction = optional(direction);
    let sample_size = optional(options.sample_size.map(|n| quote!(#n)));
    let fail_on = optional(options.fail_on.as_ref().map(|spec| quote!(#spec)));
    let scaling = optional(options.scaling.as_ref().map(|name| {
        let name = syn::ext::IdentExt::unraw(name).to_string();
        quote!(#name)
    }));
    let duration = |d: Option<std::time::Duration>| {
        optional(d.map(|d| {
            let nanos = d.as_nanos() as u64;
            quote!(::core::time::Duration::from_nanos(#nanos))
        }))
    };
    let levels = |option: &Option<(Vec<usize>, proc_macro2::Span)>| {
        let levels = option.iter().flat_map(|(levels, _)| levels);
        quote!(&[#(#levels),*])
    };
    let concurrency = levels(&options.concurrency);
    let threads = levels(&options.threads);
    let rates = options.rate.iter().flat_map(|(rates, _)| rates);
    let rate = quote!(&[#(#rates),*]);
    let arrivals = match options.arrivals.map(|(a, _)| a) {
        Some(crate::parse::Arrivals::Uniform) => quote!(#krate::Arrivals::Uniform),
        Some(crate::parse::Arrivals::Gamma(cv)) => quote!(#krate::Arrivals::Gamma(#cv)),
        _ => quote!(#krate::Arrivals::Poisson),
    };
    let request_timeout = duration(options.request_timeout.map(|(d, _)| d));
    let latency_target = optional(options.latency_target.map(|(target, _)| {
        let quantile = target.quantile;
        let nanos = target.limit.as_nanos() as u64;
        quote!(#krate::LatencyTarget {
            quantile: #quantile,
            limit: ::core::time::Duration::from_nanos(#nanos),
        })
    }));
    let objectives = options.slo.iter().flat_map(|(slo, _)| slo).map(|o| {
        let latency = match o.latency {
            nnbench_vocab::StreamLatency::Ttft => quote!(Ttft),
            nnbench_vocab::StreamLatency::Tpot => quote!(Tpot),
            nnbench_vocab::StreamLatency::Itl => quote!(Itl),
            nnbench_vocab::StreamLatency::E2e => quote!(E2e),
        };
        let quantile = optional(o.quantile.map(|q| quote!(#q)));
        let nanos = o.limit.as_nanos() as u64;
        quote!(#krate::Objective {
            latency: #krate::StreamLatency::#latency,
            quantile: #quantile,
            limit: ::core::time::Duration::from_nanos(#nanos),
        })
    });
    let slo = quote!(&[#(#objectives),*]);
    let goodput = optional(options.goodput.map(|(share, _)| quote!(#share)));
    let warm_up = duration(options.warm_up_time);
    let measurement_time = duration(options.measurement_time);
    let build = cases(plan);
    let renamed = options.renamed.iter().map(|(old, new)| renamed(old, new));
    quote! {
        #function

        #(#renamed)*

        const _: () = {
            #[allow(unused_imports)]
            use #krate::{
                CheckResult as _, MemoValue as _, ResultReturn as _, SerializeValue as _,
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
                    timing: #timing,
                    sampling: #krate::sampling(#sample_size, #warm_up, #measurement_time),
                    direction: #direction,
                    directions: &[#(#directions),*],
                    fail_on: #fail_on,
                    concurrency: #concurrency,
                    threads: #threads,
                    rate: #rate,
                    arrivals: #arrivals,
                    request_timeout: #request_timeout,
                    latency_target: #latency_target,
                    slo: #slo,
                    goodput: #goodput,
                    scaling: #scaling,
                    cases: __nnbench_cases,
                }
            }
        };
    }
}

/// Whether the declared return type is a `Result` (by its last path
/// segment: `Result`, `io::Result`, `nnbench::Result`, ...).
fn returns_result(output: &syn::ReturnType) -> bool {
    match output {
        syn::ReturnType::Type(_, ty) => match &**ty {
            Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Result"),
            _ => false,
        },
        syn::ReturnType::Default => false,
    }
}

impl Values {
    /// Literals (and negated, parenthesized, combined or ranged literals)
    /// have no type of their own until something pins it.
    fn is_literal(&self) -> bool {
        match self {
            Values::List(list) => list.iter().all(is_literal),
            Values::Iter(expr) => is_literal(expr),
        }
    }
}

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

/// `tokens`, every one of them at `span`: a macro's error points where
/// its invocation's tokens are.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            token.set_span(span);
            token
        })
        .collect()
}

/// `tokens` at the function's return type (or its name, when it returns
/// nothing): a value that cannot cross threads is pointed at there.
fn at_output(tokens: TokenStream, output: &syn::ReturnType, function: &syn::Ident) -> TokenStream {
    match output {
        syn::ReturnType::Type(_, ty) => respan(tokens, ty.span()),
        syn::ReturnType::Default => respan(tokens, function.span()),
    }
}

fn optional(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

fn hook(krate: &TokenStream, hook: Option<&Expr>) -> TokenStream {
    let Some(hook) = hook else {
        return quote!(::core::option::Option::None);
    };
    let call = quote_spanned! {hook.span()=>
        (&&#krate::Ret::new((#hook)(__state, __params))).hook()
    };
    quote! {
        ::core::option::Option::Some(
            |__state: &#krate::State, __params: &#krate::Params| -> #krate::Result<()> { #call }
        )
    }
}

/// The body of `__nnbench_cases`.
fn cases(plan: &Plan) -> TokenStream {
    let n = plan.params.len();
    let columns: Vec<_> = (0..n).map(|i| format_ident!("__column_{i}")).collect();
    let values: Vec<_> = (0..n).map(|i| format_ident!("__value_{i}")).collect();
    let grid: Vec<Values> = match &plan.grid {
        Grid::Single => Vec::new(),
        Grid::Product(axes) => axes.clone(),
        Grid::Sets(sets) => sets.iter().cloned().map(Values::List).collect(),
    };
    let literal: Vec<bool> = grid.iter().map(Values::is_literal).collect();
    let case = case(plan, &values, &literal);
    if let Grid::Single = plan.grid {
        return quote!(::std::vec![#case]);
    }
    let lets = plan
        .params
        .iter()
        .zip(&grid)
        .zip(&columns)
        .map(|((param, values), column)| column_let(column, param, values));
    // Each case owns clones of its values: the loops only borrow them.
    let push = quote! {
        #(let #values = ::core::clone::Clone::clone(#values);)*
        __cases.push(#case);
    };
    let body = match &plan.grid {
        Grid::Sets(sets) => {
            let count = sets.first().map_or(0, Vec::len);
            quote! {
                for __set in 0..#count {
                    #(let #values = &#columns[__set];)*
                    #push
                }
            }
        }
        _ => values.iter().zip(&columns).rev().fold(
            push,
            |body, (value, column)| quote!(for #value in &#column { #body }),
        ),
    };
    // Room for the whole grid at once (a sane bound on it, should the
    // product be absurd: the vector grows past it as usual).
    let count = match &plan.grid {
        Grid::Sets(sets) => {
            let count = sets.first().map_or(0, Vec::len);
            quote!(#count)
        }
        _ => quote! {
            [#(#columns.len()),*]
                .iter()
                .fold(1usize, |__all, __axis| __all.saturating_mul(*__axis))
                .min(1 << 20)
        },
    };
    quote! {
        #(#lets)*
        let mut __cases = ::std::vec::Vec::with_capacity(#count);
        #body
        __cases
    }
}

/// `let __column_i = [...]`, typed when the values are literals, whose type
/// would otherwise be left to integer or float fallback. A literal is never
/// a memo, so it has the parameter's type.
fn column_let(column: &syn::Ident, param: &ParamPlan, values: &Values) -> TokenStream {
    let element: Option<Type> = match &param.passing {
        _ if !values.is_literal() => None,
        Passing::Ref(inner) if matches!(&**inner, Type::Path(p) if p.path.is_ident("str")) => {
            Some(syn::parse_quote!(&'static str))
        }
        Passing::Value | Passing::Ref(_) => Some(element_type(param)),
        Passing::Arc => None,
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

/// The type a value must have to be passed as `param`, if not a memo.
fn element_type(param: &ParamPlan) -> Type {
    match &param.passing {
        Passing::Ref(inner) => (**inner).clone(),
        Passing::Value | Passing::Arc => param.ty.clone(),
    }
}

/// One `CaseSpec`, built from the values `__value_i` of the current case.
fn case(plan: &Plan, values: &[syn::Ident], literal: &[bool]) -> TokenStream {
    let krate = private(plan);
    let mut params = Vec::new();
    let mut fetches = Vec::new();
    let mut passed = Vec::new();
    for (i, (param, value)) in plan.params.iter().zip(values).enumerate() {
        let name = &param.name;
        // Literals are plain values: naming the trait skips the memo probe,
        // which would add a second, misleading error to a mistyped literal.
        let probe = if literal[i] {
            quote!(<&#krate::Probe<'_, _> as #krate::SerializeValue<'_>>)
        } else {
            quote!((&&&#krate::Probe(&#value)))
        };
        let receiver = if literal[i] {
            quote!(&#krate::Probe(&#value))
        } else {
            quote!()
        };
        let (param_call, fetch_call) = if literal[i] {
            (
                quote!(#probe::param(&#receiver, #name)),
                quote!(#probe::fetch(&#receiver, __args, #i, #name)),
            )
        } else {
            (
                quote!(#probe.param(#name)),
                quote!(#probe.fetch(__args, #i, #name)),
            )
        };
        params.push(param_call);
        // Spanned at the parameter's name, so that a type mismatch points there.
        let span = param.ident.span();
        let arg = syn::Ident::new(&format!("__arg_{i}"), span);
        let typed = syn::Ident::new(&format!("__typed_{i}"), span);
        let ty = &param.ty;
        let convert = match param.passing {
            Passing::Ref(_) => quote_spanned!(span=> #arg.by_ref()),
            Passing::Arc => quote_spanned!(span=> #arg.by_arc()),
            Passing::Value => quote_spanned!(span=> #arg.by_value()),
        };
        fetches.push(quote_spanned! {span=>
            let #arg = #fetch_call?;
            let #typed: #ty = #convert;
        });
        // The function may be called many times in a row when sampled: a
        // value it owns is cloned for each call.
        passed.push(match param.passing {
            Passing::Ref(_) => quote!(#typed),
            Passing::Arc | Passing::Value => quote!(::core::clone::Clone::clone(&#typed)),
        });
    }
    let timed = match plan.bencher {
        Some(at) => bencher_call(plan, passed.clone(), at),
        None => timed_call(plan, &passed),
    };
    let spec = spec(plan, params, fetches.clone(), timed);
    let evaluated = Evaluated {
        plan,
        values,
        fetches: &fetches,
        passed: &passed,
    };
    evaluated.with_work(evaluated.with_throughput(spec))
}

/// How the function's calls are timed, given the arguments `passed`.
fn timed_call(plan: &Plan, passed: &[TokenStream]) -> TokenStream {
    let krate = private(plan);
    let function = &plan.function;
    if plan.options.stream.is_some() {
        return streamed_call(plan, passed);
    }
    // The return type, read off the signature, picks the timing loop: one
    // that checks each call for an `Err` costs about a nanosecond a call,
    // which the others need not pay.
    let fallible = returns_result(&plan.output);
    // Calls made on several threads at once need a function that can be.
    let shared = plan.options.concurrency.is_some()
        || plan.options.threads.is_some()
        || plan.options.rate.is_some();
    // Owned values are cloned for each call off the clock, as inputs made
    // before the calls (where dropping them does something: a plain
    // number's copy costs a call nothing).
    let owned: Vec<usize> = (0..plan.params.len())
        .filter(|&i| !matches!(plan.params[i].passing, Passing::Ref(_)))
        .collect();
    if !owned.is_empty() && !shared && plan.asyncness.is_none() {
        let makes = owned.iter().map(|&i| &passed[i]);
        let names: Vec<syn::Ident> = owned.iter().map(|i| format_ident!("__owned_{i}")).collect();
        let mut call_args = passed.to_vec();
        for (&i, name) in owned.iter().zip(&names) {
            call_args[i] = quote!(#name);
        }
        let failed = if fallible {
            quote!(|__returned| (&&#krate::Check(__returned)).failed())
        } else {
            quote!(|_| false)
        };
        return quote! {
            __timer.time_owned(
                || (#(#makes,)*),
                |(#(#names,)*)| #function(#(#call_args),*),
                #failed,
            )
        };
    }
    match (plan.asyncness, fallible) {
        (None, true) if shared => {
            let method = at_output(quote!(time_shared_fallible), &plan.output, function);
            quote! {
                __timer.#method(
                    || #function(#(#passed),*),
                    |__returned| (&&#krate::Check(__returned)).failed(),
                )
            }
        }
        (None, false) if shared => {
            let method = at_output(quote!(time_shared), &plan.output, function);
            quote!(__timer.#method(|| #function(#(#passed),*)))
        }
        (None, true) => quote! {
            __timer.time_fallible(
                || #function(#(#passed),*),
                |__returned| (&&#krate::Check(__returned)).failed(),
            )
        },
        (None, false) => quote!(__timer.time(|| #function(#(#passed),*))),
        (Some(span), _) => {
            let call = if fallible {
                quote! {
                    __timer.time_async_fallible(
                        __runtime,
                        || #function(#(#passed),*),
                        |__returned| (&&#krate::Check(__returned)).failed(),
                    )
                }
            } else {
                quote!(__timer.time_async(__runtime, || #function(#(#passed),*)))
            };
            on_runtime(plan, span, call)
        }
    }
}

/// `call`, which times an async function's calls on `__runtime`, given
/// the family's runtime. Without the `tokio` feature, `async_case!` is a
/// compile error that names it, pointing at `async` (`span`).
fn on_runtime(plan: &Plan, span: proc_macro2::Span, call: TokenStream) -> TokenStream {
    let krate = private(plan);
    let flavor = match plan.options.runtime.map(|(flavor, _)| flavor) {
        Some(RuntimeFlavor::MultiThread) => quote!(MultiThread),
        Some(RuntimeFlavor::CurrentThread) | None => quote!(CurrentThread),
    };
    let body = quote! {{
        let __runtime = #krate::runtime(#krate::Flavor::#flavor)?;
        #call
    }};
    let mut group = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, body);
    group.set_span(span);
    let gate = respan(quote!(#krate::async_case!), span);
    quote!(#gate #group)
}

/// The call of a function with `stream`: each call a request whose
/// returned items are taken and timed one by one, the request's number of
/// items its value.
fn streamed_call(plan: &Plan, passed: &[TokenStream]) -> TokenStream {
    let krate = private(plan);
    let function = &plan.function;
    if let Some(span) = plan.asyncness {
        return streamed_async_call(plan, passed, span);
    }
    let shared = plan.options.concurrency.is_some() || plan.options.rate.is_some();
    // A return type that is no iterator is an error at the type.
    let drain = at_output(quote!(drain), &plan.output, function);
    if returns_result(&plan.output) {
        let request = quote! {{
            let __start = #krate::StreamStart::now();
            #function(#(#passed),*).map(|__items| __start.#drain(__items))
        }};
        let method = if shared {
            quote!(time_shared_fallible)
        } else {
            quote!(time_fallible)
        };
        let method = at_output(method, &plan.output, function);
        return quote! {
            __timer.#method(
                || #request,
                |__returned| (&&#krate::Check(__returned)).failed(),
            )
        };
    }
    let request = quote! {{
        let __start = #krate::StreamStart::now();
        __start.#drain(#function(#(#passed),*))
    }};
    if shared {
        let method = at_output(quote!(time_shared), &plan.output, function);
        quote!(__timer.#method(|| #request))
    } else {
        quote!(__timer.time(|| #request))
    }
}

/// The call of an async function with `stream`: each call a request whose
/// future gives a `Stream` of items, taken and timed one by one on the
/// family's runtime.
fn streamed_async_call(
    plan: &Plan,
    passed: &[TokenStream],
    span: proc_macro2::Span,
) -> TokenStream {
    let krate = private(plan);
    let function = &plan.function;
    // A return type that is no stream is an error at the type.
    let drain = at_output(quote!(drain_stream), &plan.output, function);
    let (method, finish) = if returns_result(&plan.output) {
        (
            quote!(time_async_fallible),
            quote! {
                match __returned {
                    ::core::result::Result::Ok(__items) => {
                        ::core::result::Result::Ok(__start.#drain(__items).await)
                    }
                    ::core::result::Result::Err(__error) => ::core::result::Result::Err(__error),
                }
            },
        )
    } else {
        (quote!(time_async), quote!(__start.#drain(__returned).await))
    };
    let failed = returns_result(&plan.output)
        .then(|| quote!(, |__returned| (&&#krate::Check(__returned)).failed()));
    let request = quote! {
        || {
            let __start = #krate::StreamStart::now();
            let __call = #function(#(#passed),*);
            async move {
                let (__start, __returned) = __start.made(__call).await;
                #finish
            }
        }
    };
    on_runtime(
        plan,
        span,
        quote!(__timer.#method(__runtime, #request #failed)),
    )
}

/// The call of a function that takes a `Bencher` (at `at` in its
/// signature): made once a sample with the timer, which its routine is
/// timed by; a call that never benched is an error.
fn bencher_call(plan: &Plan, mut passed: Vec<TokenStream>, at: usize) -> TokenStream {
    let krate = private(plan);
    let function = &plan.function;
    passed.insert(at, quote!(#krate::Bencher::new(&mut *__timer)));
    quote! {{
        let __returned = #function(#(#passed),*);
        #krate::benched(__timer, &__returned, |__returned| (&&#krate::Check(__returned)).failed())?;
        __returned
    }}
}

/// The `CaseSpec` whose call fetches the arguments and times `timed`.
fn spec(
    plan: &Plan,
    params: Vec<TokenStream>,
    fetches: Vec<TokenStream>,
    timed: TokenStream,
) -> TokenStream {
    let krate = private(plan);
    quote! {
        #krate::CaseSpec::new(
            ::std::vec![#(#params),*],
            move |__args: &#krate::Args, __timer: &mut #krate::Timer| {
                #(#fetches)*
                let __returned = #timed;
                (&&#krate::Ret::new(__returned)).metric()
            },
        )
    }
}

/// The case's arguments as its declared expressions see them: the
/// parameters, fetched from `Args`, for each expression of a family's
/// options (`throughput`, `flops`, `bytes`).
struct Evaluated<'p> {
    plan: &'p Plan,
    values: &'p [syn::Ident],
    fetches: &'p [TokenStream],
    passed: &'p [TokenStream],
}

impl Evaluated<'_> {
    /// A closure of the case's `Args` that returns `body`, of type `ty`.
    /// It owns clones of the case's values, which the call takes (so it is
    /// made before the call is), and sees the parameters by the names and
    /// types the function has.
    fn closure(&self, ty: TokenStream, body: TokenStream) -> TokenStream {
        let krate = private(self.plan);
        let (values, fetches, passed) = (self.values, self.fetches, self.passed);
        let names = self.plan.params.iter().map(|p| &p.ident);
        quote! {{
            #(let #values = ::core::clone::Clone::clone(&#values);)*
            move |__args: &#krate::Args| -> #krate::Result<#ty> {
                #(#fetches)*
                #(#[allow(unused_variables)] let #names = #passed;)*
                #body
            }
        }}
    }

    /// `spec` with the family's throughput, if it counts one.
    fn with_throughput(&self, spec: TokenStream) -> TokenStream {
        let krate = private(self.plan);
        let Some(throughput) = &self.plan.options.throughput else {
            return spec;
        };
        let unit = match throughput.unit {
            ThroughputUnit::Elements => quote!(Elements),
            ThroughputUnit::Bytes => quote!(Bytes),
        };
        let count = &throughput.count;
        let text = quote!(#count).to_string();
        let counted = quote_spanned! {count.span()=>
            #krate::count_throughput(#count, #text)
        };
        let closure = self.closure(quote!(u64), counted);
        // Made before `spec`, whose call takes the case's values.
        quote! {{
            let __count = #closure;
            #spec.throughput(#krate::ThroughputUnit::#unit, __count)
        }}
    }

    /// `spec` with the work one call does, if the family declares it: its
    /// `flops` and `bytes` expressions.
    fn with_work(&self, spec: TokenStream) -> TokenStream {
        let krate = private(self.plan);
        let (flops, bytes) = (&self.plan.options.flops, &self.plan.options.bytes);
        if flops.is_none() && bytes.is_none() {
            return spec;
        }
        let single = flops.as_ref().is_some_and(|f| f.single);
        let flops = flops.as_ref().map(|f| f.amount.clone());
        let amount = |what: &str, expr: &Option<syn::Expr>| match expr {
            Some(expr) => {
                let text = quote!(#expr).to_string();
                quote_spanned! {expr.span()=>
                    ::core::option::Option::Some(#krate::work_amount(#expr, #what, #text)?)
                }
            }
            None => quote!(::core::option::Option::None),
        };
        let (flops, bytes) = (amount("flops", &flops), amount("bytes", bytes));
        let closure = self.closure(
            quote!(#krate::Work),
            quote!(::core::result::Result::Ok(#krate::Work {
                flops: #flops,
                bytes: #bytes,
                single: #single,
            })),
        );
        quote! {{
            let __work = #closure;
            #spec.work(__work)
        }}
    }
}

/// A use of a deprecated item named and placed as the option `old` was
/// written: the compiler warns there that it is renamed `new` (a proc
/// macro cannot warn itself on stable Rust).
fn renamed(old: &Ident, new: &str) -> TokenStream {
    let note = format!(
        "the option `{old}` is renamed `{new}`; the old name is taken until the next release"
    );
    let span = old.span();
    quote_spanned! {span=>
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const #old: () = ();
            #old
        };
    }
}
