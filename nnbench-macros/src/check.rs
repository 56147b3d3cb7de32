//! Checks an attribute against the function it annotates and works out how
//! each parameter is passed.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, Type};

use crate::parse::{Attr, Errors, Kind, Metric, Options, TimingMode, Values};

/// What the expansion needs to know, checked.
pub(crate) struct Plan {
    pub function: Ident,
    /// The declared return type.
    pub output: syn::ReturnType,
    pub family: String,
    pub params: Vec<ParamPlan>,
    pub grid: Grid,
    pub options: Options,
    /// The span of `async`, for an async function.
    pub asyncness: Option<Span>,
    /// Where in the signature the function takes a `Bencher`, if it does.
    pub bencher: Option<usize>,
}

pub(crate) struct ParamPlan {
    pub ident: Ident,
    /// The declared type.
    pub ty: Type,
    /// The name in ids and records (`r#type` is `type`).
    pub name: String,
    pub passing: Passing,
}

/// How the function takes a parameter, read off its type.
pub(crate) enum Passing {
    /// `&T`: a memo's value or the grid value, by reference.
    Ref(Box<Type>),
    /// `Arc<T>`: a memo's shared value, or a clone of the grid value.
    Arc,
    /// `T`: a clone of the grid value.
    Value,
}

/// Where the values of each parameter (in signature order) come from.
pub(crate) enum Grid {
    /// `#[benchmark]`: one case, no parameters.
    Single,
    /// Every combination of the axes.
    Product(Vec<Values>),
    /// One case per set; `columns[p][s]` is parameter `p`'s value in set `s`.
    Sets(Vec<Vec<Expr>>),
}

pub(crate) fn plan(attr: Attr, function: &ItemFn) -> syn::Result<Plan> {
    let Attr {
        kind,
        named,
        sets: parameter_sets,
    } = attr;
    let mut errors = Errors::default();
    let sig = &function.sig;
    let (options, axes) = Attr::split(named, kind, |name| is_param(sig, name), &mut errors);
    let what = kind.attribute();
    if let (Some((_, span)), None) = (&options.runtime, &sig.asyncness) {
        errors.push(syn::Error::new(
            *span,
            format!(
                "`runtime` is for async functions, and `{}` is not async",
                sig.ident
            ),
        ));
    }
    parallel(&options, sig, &mut errors);
    if let Some(span) = options.stream {
        stream_fits(&options, sig, span, &mut errors);
    }
    objectives_fit(&options, sig, &mut errors);
    if let Some(unsafety) = &sig.unsafety {
        errors.push(syn::Error::new(
            unsafety.span(),
            format!("{what} functions cannot be unsafe"),
        ));
    }
    if let Some(param) = sig.generics.lifetimes().next() {
        errors.push(syn::Error::new(
            param.span(),
            format!("{what} functions cannot be generic"),
        ));
    }
    if let Some(param) = sig.generics.type_params().next() {
        errors.push(syn::Error::new(
            param.span(),
            format!("{what} functions cannot be generic"),
        ));
    }
    if let Some(param) = sig.generics.const_params().next() {
        errors.push(syn::Error::new(
            param.span(),
            format!("{what} functions cannot be generic"),
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new(
            variadic.span(),
            format!("{what} functions cannot be variadic"),
        ));
    }

    if let Err(e) = field_limits(&options) {
        errors.push(e);
    }

    let mut params = Vec::new();
    let mut bencher = None;
    for (at, input) in sig.inputs.iter().enumerate() {
        if let Some(span) = bencher_param(input) {
            match bencher {
                None => bencher = Some(at),
                Some(_) => errors.push(syn::Error::new(
                    span,
                    format!(
                        "`{}` takes a second `Bencher`: one times the case",
                        sig.ident
                    ),
                )),
            }
            bencher_fits(&options, sig, span, &mut errors);
            continue;
        }
        match param(input) {
            Ok(p) => params.push(p),
            Err(e) => errors.push(e),
        }
    }

    let grid = match kind {
        Kind::Benchmark => {
            let mut inputs = sig.inputs.iter();
            if let Some(first) = inputs.find(|input| bencher_param(input).is_none()) {
                errors.push(syn::Error::new(
                    first.span(),
                    "#[benchmark] functions take no parameters but a `Bencher`: give them values with #[parametrize] or #[product]",
                ));
            }
            Grid::Single
        }
        Kind::Product => product(axes, &params, sig, &mut errors),
        Kind::Parametrize => sets(
            parameter_sets.unwrap_or_default(),
            &params,
            sig,
            &mut errors,
        ),
    };
    if let Some(name) = &options.scaling {
        scaling(name, &params, &grid, sig, &mut errors);
    }
    errors.finish()?;
    let family = match &options.name {
        Some(name) => name.value(),
        None => unraw(&sig.ident),
    };
    Ok(Plan {
        function: sig.ident.clone(),
        output: sig.output.clone(),
        family,
        params,
        grid,
        options,
        asyncness: sig.asyncness.map(|a| a.span()),
        bencher,
    })
}

/// The span of a parameter of type `Bencher` (by any path), which is the
/// case's timer, not a grid parameter.
fn bencher_param(input: &FnArg) -> Option<Span> {
    let FnArg::Typed(typed) = input else {
        return None;
    };
    let Type::Path(path) = &*typed.ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    (last.ident == "Bencher").then(|| typed.ty.span())
}

/// A `Bencher` times a sync routine on one thread: not with what times
/// the function's own calls in other ways.
fn bencher_fits(options: &Options, sig: &syn::Signature, span: Span, errors: &mut Errors) {
    let clash = if sig.asyncness.is_some() {
        Some("is async: a `Bencher` times sync routines")
    } else if options.threads.is_some() {
        Some("has `threads`: a `Bencher` times its routine on one thread")
    } else if options.concurrency.is_some() {
        Some("has `concurrency`: a `Bencher` times its routine on one thread")
    } else if options.rate.is_some() {
        Some("has `rate`: a `Bencher` times its routine on one thread")
    } else {
        None
    };
    if let Some(why) = clash {
        errors.push(syn::Error::new(span, format!("`{}` {why}", sig.ident)));
    }
}

/// `stream` takes a function that returns its items (tokens): a sync one
/// an iterator, an async one a `Stream`, or a `Result` of either; it times
/// them one by one, and nothing else shapes or times its calls.
fn stream_fits(options: &Options, sig: &syn::Signature, span: Span, errors: &mut Errors) {
    let clash = if matches!(sig.output, syn::ReturnType::Default) {
        Some((
            sig.ident.span(),
            "returns nothing: `stream` times the items of the iterator it returns, each a token",
        ))
    } else if options.threads.is_some() {
        Some((
            span,
            "has `threads`: a stream is one request, made on one thread",
        ))
    } else if sig
        .inputs
        .iter()
        .any(|input| bencher_param(input).is_some())
    {
        Some((
            span,
            "takes a `Bencher`: `stream` times each call's tokens itself",
        ))
    } else {
        None
    };
    if let Some((at, why)) = clash {
        errors.push(syn::Error::new(at, format!("`{}` {why}", sig.ident)));
    }
}

/// `slo` judges the requests of a function with `stream`; `goodput`
/// searches the highest rate of `rate = [...]` at which enough of them
/// meet it, which a `latency_target` would search by another measure.
fn objectives_fit(options: &Options, sig: &syn::Signature, errors: &mut Errors) {
    let name = &sig.ident;
    if let (Some((_, span)), None) = (&options.slo, options.stream) {
        errors.push(syn::Error::new(
            *span,
            format!(
                "`slo` judges the tokens of a function with `stream`, which `{name}` does not have"
            ),
        ));
    }
    let Some((_, span)) = options.goodput else {
        return;
    };
    let why = if options
        .slo
        .as_ref()
        .is_none_or(|(slo, _)| slo.iter().all(|o| o.quantile.is_some()))
    {
        Some("needs `slo` with an objective each request must meet: `slo = \"ttft <= 200ms\"`")
    } else if options.rate.is_none() {
        Some("searches the rates of `rate = [...]`, which it does not have")
    } else if options.latency_target.is_some() {
        Some("and `latency_target` each search the highest rate: give one")
    } else {
        None
    };
    if let Some(why) = why {
        errors.push(syn::Error::new(
            span,
            format!("`goodput` of `{name}` {why}"),
        ));
    }
}

/// `scaling = n` names a parameter whose values, where they are written
/// as literals, are at least three distinct numbers; values made by an
/// expression are checked when the run starts.
fn scaling(
    name: &Ident,
    params: &[ParamPlan],
    grid: &Grid,
    sig: &syn::Signature,
    errors: &mut Errors,
) {
    let Some(at) = params.iter().position(|p| p.ident == *name) else {
        let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
        errors.push(syn::Error::new(
            name.span(),
            if names.is_empty() {
                format!(
                    "scaling = {name}: `{}` has no parameters to fit against",
                    sig.ident
                )
            } else {
                format!(
                    "scaling = {name}: `{name}` is no parameter of `{}` (its parameters: {})",
                    sig.ident,
                    names.join(", ")
                )
            },
        ));
        return;
    };
    let written: Vec<&Expr> = match grid {
        Grid::Product(axes) => match &axes[at] {
            Values::List(list) => list.iter().collect(),
            Values::Iter(_) => return,
        },
        Grid::Sets(columns) => columns[at].iter().collect(),
        Grid::Single => return,
    };
    let mut distinct: Vec<f64> = Vec::new();
    for value in written {
        match number(value) {
            Number::Is(n) => {
                if !distinct.contains(&n) {
                    distinct.push(n);
                }
            }
            Number::Not => {
                errors.push(syn::Error::new(
                    value.span(),
                    format!(
                        "scaling = {name}: `{name}` takes `{}`, not a number",
                        quote::ToTokens::to_token_stream(value)
                    ),
                ));
                return;
            }
            Number::Unknown => return,
        }
    }
    if distinct.len() < 3 {
        errors.push(syn::Error::new(
            name.span(),
            format!(
                "scaling = {name}: `{name}` takes {} distinct value{}; fitting how a figure grows with it needs at least 3",
                distinct.len(),
                if distinct.len() == 1 { "" } else { "s" }
            ),
        ));
    }
}

/// What a value written in an attribute is, as a number.
enum Number {
    Is(f64),
    /// A literal of another kind.
    Not,
    /// An expression, whose value the run will know.
    Unknown,
}

fn number(value: &Expr) -> Number {
    match value {
        Expr::Lit(lit) => match &lit.lit {
            syn::Lit::Int(int) => int.base10_digits().parse().map_or(Number::Not, Number::Is),
            syn::Lit::Float(float) => float
                .base10_digits()
                .parse()
                .map_or(Number::Not, Number::Is),
            _ => Number::Not,
        },
        Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Neg(_)) => match number(&unary.expr) {
            Number::Is(n) => Number::Is(-n),
            other => other,
        },
        Expr::Paren(paren) => number(&paren.expr),
        Expr::Group(group) => number(&group.expr),
        _ => Number::Unknown,
    }
}

/// `concurrency`, `threads` and `rate` each make a case per level, of a
/// function that can be made so: one of them, `threads` on a sync
/// function, none with calls counted one at a time under Callgrind, and
/// the level's name free for its parameter. `arrivals` and
/// `request_timeout` shape a `rate`'s loop: not without one.
fn parallel(options: &Options, sig: &syn::Signature, errors: &mut Errors) {
    let levels = [
        ("concurrency", options.concurrency.as_ref().map(|o| o.1)),
        ("threads", options.threads.as_ref().map(|o| o.1)),
        ("rate", options.rate.as_ref().map(|o| o.1)),
    ];
    let given: Vec<(&str, Span)> = levels
        .iter()
        .filter_map(|(name, span)| Some((*name, (*span)?)))
        .collect();
    if let [(first, _), (second, span), ..] = given[..] {
        errors.push(syn::Error::new(
            span,
            format!("`{first}` and `{second}` cannot be combined: `threads` times each call made on several threads at once, `concurrency` keeps requests in flight for a period, `rate` issues requests at a set rate for a period"),
        ));
    }
    if options.rate.is_none() {
        let shaping = [
            ("arrivals", options.arrivals.as_ref().map(|o| o.1)),
            (
                "request_timeout",
                options.request_timeout.as_ref().map(|o| o.1),
            ),
            (
                "latency_target",
                options.latency_target.as_ref().map(|o| o.1),
            ),
        ];
        for (name, span) in shaping {
            if let Some(span) = span {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "`{name}` shapes the requests of `rate = [...]`, which `{}` does not have",
                        sig.ident
                    ),
                ));
            }
        }
    }
    if let (Some(_), Some((_, span))) = (&sig.asyncness, &options.threads) {
        errors.push(syn::Error::new(
            *span,
            format!(
                "`threads` makes a sync function's calls on several threads at once, and `{}` is async: keep requests in flight with `concurrency = [...]`",
                sig.ident
            ),
        ));
    }
    for (name, span) in given {
        if matches!(options.timing, Some(TimingMode::Instructions)) {
            errors.push(syn::Error::new(
                span,
                format!("`{name}` cannot be counted under `timing = instructions`, which makes one call on one thread"),
            ));
        }
        if is_param(sig, &Ident::new(name, span)) {
            errors.push(syn::Error::new(
                span,
                format!("`{name}` is the level of each case, and `{}` has a parameter of that name: rename the parameter", sig.ident),
            ));
        }
    }
}

/// A `fail_on` limit on a field (`value.accuracy=0.5%`) must be on a
/// field that `metric` names: no other field is judged.
fn field_limits(options: &Options) -> syn::Result<()> {
    let Some(spec) = &options.fail_on else {
        return Ok(());
    };
    let named: Vec<&str> = match &options.metric {
        Some(Metric::Fields(fields)) => fields.iter().map(|f| f.path.as_str()).collect(),
        _ => Vec::new(),
    };
    let limits = nnbench_vocab::parse_limits(&spec.value()).unwrap_or_default();
    for field in limits.iter().filter_map(|l| l.field.as_deref()) {
        if !named.contains(&field) {
            let why = if named.is_empty() {
                "metric names no field (write metric = \"field:higher, ...\")".to_owned()
            } else {
                format!("metric names {}", named.join(", "))
            };
            return Err(syn::Error::new(
                spec.span(),
                format!("fail_on: `value.{field}` is not judged: {why}"),
            ));
        }
    }
    Ok(())
}

fn is_param(sig: &syn::Signature, name: &Ident) -> bool {
    sig.inputs.iter().any(|input| match input {
        FnArg::Typed(typed) => matches!(&*typed.pat, Pat::Ident(p) if p.ident == *name),
        FnArg::Receiver(_) => false,
    })
}

/// The error for values given to `name`, which is not a grid parameter
/// of `function`: the case's `Bencher`, or no parameter at all. `None`
/// for a parameter refused already, which has its error.
fn not_a_grid_param(sig: &syn::Signature, name: &Ident) -> Option<syn::Error> {
    let function = &sig.ident;
    let is_bencher = sig.inputs.iter().any(|input| {
        bencher_param(input).is_some()
            && matches!(input, FnArg::Typed(t) if matches!(&*t.pat, Pat::Ident(p) if p.ident == *name))
    });
    let message = if is_bencher {
        format!("`{name}` is the `Bencher` that times `{function}`: it takes no values")
    } else if is_param(sig, name) {
        return None;
    } else {
        format!("`{name}` is not a parameter of `{function}`")
    };
    Some(syn::Error::new(name.span(), message))
}

fn param(input: &FnArg) -> syn::Result<ParamPlan> {
    let typed = match input {
        FnArg::Typed(typed) => typed,
        FnArg::Receiver(receiver) => {
            return Err(syn::Error::new(
                receiver.span(),
                "benchmarks are free functions: `self` is not allowed",
            ));
        }
    };
    let ident = match &*typed.pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        other => {
            return Err(syn::Error::new(
                other.span(),
                "benchmark parameters must be plain names, such as `batch: usize`",
            ));
        }
    };
    let passing = match &*typed.ty {
        Type::Reference(r) if r.mutability.is_some() => {
            return Err(syn::Error::new(
                r.span(),
                format!(
                    "`{ident}`: take parameters by value, by `&` or as `Arc<_>`, not by `&mut`"
                ),
            ));
        }
        Type::Reference(r) => Passing::Ref(r.elem.clone()),
        Type::ImplTrait(t) => {
            return Err(syn::Error::new(
                t.span(),
                format!("`{ident}`: `impl Trait` parameters are not supported; name the type"),
            ));
        }
        ty if is_arc(ty) => Passing::Arc,
        _ => Passing::Value,
    };
    Ok(ParamPlan {
        name: unraw(&ident),
        ident,
        ty: (*typed.ty).clone(),
        passing,
    })
}

/// `Arc<T>` or `std::sync::Arc<T>`.
fn is_arc(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    last.ident == "Arc"
        && matches!(&last.arguments, PathArguments::AngleBracketed(args)
            if args.args.len() == 1 && matches!(args.args[0], GenericArgument::Type(_)))
}

fn product(
    axes: Vec<crate::parse::Axis>,
    params: &[ParamPlan],
    sig: &syn::Signature,
    errors: &mut Errors,
) -> Grid {
    let mut by_param: Vec<Option<Values>> = params.iter().map(|_| None).collect();
    for axis in axes {
        match params.iter().position(|p| p.ident == axis.name) {
            Some(at) => by_param[at] = Some(axis.values),
            None => not_a_grid_param(sig, &axis.name)
                .into_iter()
                .for_each(|e| errors.push(e)),
        }
    }
    let mut columns = Vec::new();
    for (param, values) in params.iter().zip(by_param) {
        match values {
            Some(Values::List(list)) if list.is_empty() => errors.push(syn::Error::new(
                param.ident.span(),
                format!("axis `{}` has no values", param.ident),
            )),
            Some(values) => columns.push(values),
            None => errors.push(syn::Error::new(
                param.ident.span(),
                format!(
                    "parameter `{0}` has no axis: add `{0} = [...]` to #[product]",
                    param.ident
                ),
            )),
        }
    }
    Grid::Product(columns)
}

fn sets(
    sets: Vec<crate::parse::ParamSet>,
    params: &[ParamPlan],
    sig: &syn::Signature,
    errors: &mut Errors,
) -> Grid {
    if sets.is_empty() {
        errors.push(syn::Error::new(
            Span::call_site(),
            "#[parametrize] needs at least one parameter set",
        ));
    }
    let mut columns: Vec<Vec<Expr>> = params.iter().map(|_| Vec::new()).collect();
    for (number, set) in sets.into_iter().enumerate() {
        let mut row: Vec<Option<Expr>> = params.iter().map(|_| None).collect();
        for (name, value) in set.values {
            match params.iter().position(|p| p.ident == name) {
                Some(at) if row[at].is_some() => errors.push(syn::Error::new(
                    name.span(),
                    format!("`{name}` is given twice in this set"),
                )),
                Some(at) => row[at] = Some(value),
                None => not_a_grid_param(sig, &name)
                    .into_iter()
                    .for_each(|e| errors.push(e)),
            }
        }
        for (at, value) in row.into_iter().enumerate() {
            match value {
                Some(value) => columns[at].push(value),
                None => errors.push(syn::Error::new(
                    set.span,
                    format!(
                        "parameter set {} gives no value for `{}`",
                        number + 1,
                        params[at].ident
                    ),
                )),
            }
        }
    }
    Grid::Sets(columns)
}

fn unraw(ident: &Ident) -> String {
    let name = ident.to_string();
    name.strip_prefix("r#").map_or(name.clone(), str::to_owned)
}
