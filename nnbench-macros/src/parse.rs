//! Parsing of the attributes' arguments.

use std::time::Duration;

use nnbench_vocab::{Direction, MetricField};
use proc_macro2::Span;
use syn::ext::IdentExt as _;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitStr, Token, bracketed, parenthesized};

/// Which attribute is being expanded.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Benchmark,
    Parametrize,
    Product,
}

impl Kind {
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Kind::Benchmark => "#[benchmark]",
            Kind::Parametrize => "#[parametrize]",
            Kind::Product => "#[product]",
        }
    }
}

/// Options every attribute takes, parsed into what they mean.
#[derive(Default)]
pub(crate) struct Options {
    pub name: Option<LitStr>,
    pub tags: Option<Vec<LitStr>>,
    pub setup: Option<Expr>,
    pub teardown: Option<Expr>,
    pub timing: Option<TimingMode>,
    pub sample_size: Option<usize>,
    pub warm_up_time: Option<Duration>,
    pub measurement_time: Option<Duration>,
    /// Options written under the name they had before 0.1.0: the old name,
    /// where it was written, and the new one. Each compiles with a warning.
    pub renamed: Vec<(Ident, &'static str)>,
    /// `crate = path`: where the `nnbench` crate is, for a crate that
    /// renamed or re-exports it.
    pub krate: Option<syn::Path>,
    /// `metric = higher | lower`, or `metric = "accuracy:higher, ..."`:
    /// which way the returned value, or each field named, is better.
    pub metric: Option<Metric>,
    /// `fail_on = "time=10%,rss=off"`: the family's regression limits,
    /// checked here so that a typo is a compile error.
    pub fail_on: Option<LitStr>,
    /// `throughput = elements(EXPR)` or `bytes(EXPR)`: what one call
    /// handles, an expression over the function's parameters.
    pub throughput: Option<Throughput>,
    /// `flops = EXPR`, or `f32(EXPR)` / `f64(EXPR)`: floating point
    /// operations one call does, a number over the function's parameters,
    /// and their precision (double where not given).
    pub flops: Option<Flops>,
    /// `bytes = EXPR`: bytes one call moves to or from memory, a number
    /// over the function's parameters.
    pub bytes: Option<Expr>,
    /// `runtime = current_thread | multi_thread`: the tokio runtime an
    /// async function runs on, with the span of the option's name.
    pub runtime: Option<(RuntimeFlavor, Span)>,
    /// `concurrency = [1, 8, 64]`: requests in flight, a case per level,
    /// with the span of the option's name.
    pub concurrency: Option<(Vec<usize>, Span)>,
    /// `threads = [1, 2, 4]`: threads making each call, a case per count.
    pub threads: Option<(Vec<usize>, Span)>,
    /// `rate = [100, 200, 400]`: requests a second of an open loop, a case
    /// per rate, with the span of the option's name.
    pub rate: Option<(Vec<f64>, Span)>,
    /// `arrivals = poisson | uniform`: how an open loop's gaps are drawn,
    /// with the span of the option's name.
    pub arrivals: Option<(Arrivals, Span)>,
    /// `request_timeout = "50ms"`: an open loop's request that takes
    /// longer counts as timed out, with the span of the option's name.
    pub request_timeout: Option<(Duration, Span)>,
    /// `latency_target = "p99 <= 20ms"`: the highest rate that meets it is
    /// searched, with the span of the option's name.
    pub latency_target: Option<(nnbench_vocab::LatencyTarget, Span)>,
    /// `scaling = n`: the numeric parameter the family's figures are
    /// fitted against.
    pub scaling: Option<Ident>,
    /// `stream`: the call returns an iterator whose items (tokens) are
    /// timed one by one; with the span of the option's name.
    pub stream: Option<Span>,
    /// `slo = "ttft <= 200ms, tpot <= 25ms"`: the objectives a stream's
    /// requests are judged against, with the span of the option's name.
    pub slo: Option<(Vec<nnbench_vocab::Objective>, Span)>,
    /// `goodput = 0.9`: the highest rate at which this share of requests
    /// meets every objective is searched, with the span of the option's
    /// name.
    pub goodput: Option<(f64, Span)>,
}

/// The `flops` option: the expression, and whether its operations are in
/// single precision.
pub(crate) struct Flops {
    pub amount: Expr,
    pub single: bool,
}

/// The `arrivals` option.
#[derive(Clone, Copy)]
pub(crate) enum Arrivals {
    Poisson,
    Uniform,
    /// `gamma(CV)`: the gaps' coefficient of variation.
    Gamma(f64),
}

/// The `runtime` option.
#[derive(Clone, Copy)]
pub(crate) enum RuntimeFlavor {
    CurrentThread,
    MultiThread,
}

/// The `throughput` option.
pub(crate) struct Throughput {
    pub unit: ThroughputUnit,
    pub count: Expr,
}

/// What a `throughput` counts.
#[derive(Clone, Copy)]
pub(crate) enum ThroughputUnit {
    Elements,
    Bytes,
}

/// The `metric` option.
pub(crate) enum Metric {
    /// For a number.
    Number(Direction),
    /// For a struct value: the fields it names.
    Fields(Vec<MetricField>),
}

/// The `timing` option.
#[derive(Clone, Copy)]
pub(crate) enum TimingMode {
    Once,
    Sampled,
    Auto,
    Instructions,
}

/// The options' names, for messages.
const OPTIONS: &str = "name, tags, setup, teardown, timing, sample_size, warm_up_time, \
     measurement_time, metric, fail_on, throughput, flops, bytes, runtime, concurrency, threads, \
     rate, arrivals, request_timeout, latency_target, scaling, stream, slo, goodput and crate";

/// One axis of a product: a parameter and its values.
pub(crate) struct Axis {
    pub name: Ident,
    pub values: Values,
}

/// The values of an axis or of a parametrize column.
#[derive(Clone)]
pub(crate) enum Values {
    /// `[a, b, c]`, as written.
    List(Vec<Expr>),
    /// Any other expression: iterated when the grid is built.
    Iter(Expr),
}

/// One explicit parameter set of `#[parametrize]`: `(n = 64, k = 8)`.
pub(crate) struct ParamSet {
    pub span: Span,
    pub values: Vec<(Ident, Expr)>,
}

/// Everything an attribute says. `name = value` items stay unsorted until
/// the function's parameters are known: in `#[product]` a parameter may be
/// called like an option (`name`, `tags`), and then it is an axis.
pub(crate) struct Attr {
    pub kind: Kind,
    pub named: Vec<(Ident, Expr)>,
    pub sets: Option<Vec<ParamSet>>,
}

enum Item {
    Sets(Vec<ParamSet>),
    Named(Ident, Expr),
}

impl Parse for Item {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(syn::token::Bracket) {
            let content;
            bracketed!(content in input);
            let sets = Punctuated::<ParamSet, Token![,]>::parse_terminated(&content)?;
            return Ok(Item::Sets(sets.into_iter().collect()));
        }
        // `crate` is a keyword, and an option.
        let name = Ident::parse_any(input)?;
        // A flag written alone (`stream`) is the flag set.
        if name == "stream" && (input.is_empty() || input.peek(Token![,])) {
            let value = syn::parse_quote_spanned!(name.span()=> true);
            return Ok(Item::Named(name, value));
        }
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;
        Ok(Item::Named(name, value))
    }
}

impl Parse for ParamSet {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let content;
        let paren = parenthesized!(content in input);
        let pairs = Punctuated::<NamedValue, Token![,]>::parse_terminated(&content)?;
        Ok(ParamSet {
            span: paren.span.join(),
            values: pairs.into_iter().map(|p| (p.name, p.value)).collect(),
        })
    }
}

struct NamedValue {
    name: Ident,
    value: Expr,
}

impl Parse for NamedValue {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = input.parse()?;
        input.parse::<Token![=]>()?;
        let value = input.parse()?;
        Ok(NamedValue { name, value })
    }
}

/// Parses the arguments of `kind`, collecting every error with its span.
pub(crate) fn attr(kind: Kind, args: proc_macro2::TokenStream) -> syn::Result<Attr> {
    let items = syn::parse::Parser::parse2(Punctuated::<Item, Token![,]>::parse_terminated, args)?;
    let mut attr = Attr {
        kind,
        named: Vec::new(),
        sets: None,
    };
    let mut errors = Errors::default();
    for item in items {
        match item {
            Item::Sets(sets) if kind == Kind::Parametrize && attr.sets.is_none() => {
                attr.sets = Some(sets);
            }
            Item::Sets(sets) => errors.push(syn::Error::new(
                sets.first().map_or_else(Span::call_site, |s| s.span),
                match kind {
                    Kind::Parametrize => "#[parametrize] takes one list of parameter sets",
                    _ => "a list of parameter sets belongs to #[parametrize]",
                },
            )),
            Item::Named(name, value) => attr.named.push((name, value)),
        }
    }
    if kind == Kind::Parametrize && attr.sets.is_none() {
        errors.push(syn::Error::new(
            Span::call_site(),
            "#[parametrize] needs a list of parameter sets: #[parametrize([(n = 1), (n = 2)])]",
        ));
    }
    errors.finish()?;
    Ok(attr)
}

impl Attr {
    /// Sorts the `name = value` items into options and, for `#[product]`,
    /// axes (the names `is_param` accepts).
    pub(crate) fn split(
        named: Vec<(Ident, Expr)>,
        kind: Kind,
        is_param: impl Fn(&Ident) -> bool,
        errors: &mut Errors,
    ) -> (Options, Vec<Axis>) {
        let mut sorted = Sorted {
            kind,
            options: Options::default(),
            axes: Vec::new(),
        };
        for (name, value) in named {
            let as_axis = kind == Kind::Product && is_param(&name);
            if let Err(e) = sorted.add(name, value, as_axis) {
                errors.push(e);
            }
        }
        (sorted.options, sorted.axes)
    }
}

struct Sorted {
    kind: Kind,
    options: Options,
    axes: Vec<Axis>,
}

impl Sorted {
    fn add(&mut self, name: Ident, value: Expr, as_axis: bool) -> syn::Result<()> {
        let option = if as_axis {
            String::new()
        } else {
            name.to_string()
        };
        let o = &mut self.options;
        match option.as_str() {
            "name" => set_once(&mut o.name, &name, || string_literal(&value, "name")),
            "tags" => set_once(&mut o.tags, &name, || tags(&value)),
            "timing" => set_once(&mut o.timing, &name, || timing(&value)),
            "sample_size" => set_once(&mut o.sample_size, &name, || sample_size(&value)),
            "warm_up_time" => set_once(&mut o.warm_up_time, &name, || duration(&name, &value)),
            // Named as criterion's `--warm-up-time` and `warm_up_time`.
            "warm_up" => {
                o.renamed.push((name.clone(), "warm_up_time"));
                set_once(&mut o.warm_up_time, &name, || duration(&name, &value))
            }
            "measurement_time" => {
                set_once(&mut o.measurement_time, &name, || duration(&name, &value))
            }
            "setup" => set_once(&mut o.setup, &name, || Ok(value)),
            "teardown" => set_once(&mut o.teardown, &name, || Ok(value)),
            "crate" => set_once(&mut o.krate, &name, || crate_path(&value)),
            "metric" => set_once(&mut o.metric, &name, || metric(&value)),
            "fail_on" => set_once(&mut o.fail_on, &name, || fail_on(&value)),
            "throughput" => set_once(&mut o.throughput, &name, || throughput(&value)),
            "stream" => match flag(&value, "stream")? {
                true => set_once(&mut o.stream, &name, || Ok(name.span())),
                false => Ok(()),
            },
            // A product's axis of that name is a list of values; the work
            // one call does is a number.
            "flops" if !(self.kind == Kind::Product && matches!(value, Expr::Array(_))) => {
                set_once(&mut o.flops, &name, || Ok(flops(value)))
            }
            "bytes" if !(self.kind == Kind::Product && matches!(value, Expr::Array(_))) => {
                set_once(&mut o.bytes, &name, || Ok(value))
            }
            "runtime" => set_once(&mut o.runtime, &name, || {
                Ok((runtime(&value)?, name.span()))
            }),
            "concurrency" => set_once(&mut o.concurrency, &name, || {
                Ok((levels(&name, &value)?, name.span()))
            }),
            "threads" => set_once(&mut o.threads, &name, || {
                Ok((levels(&name, &value)?, name.span()))
            }),
            "rate" => set_once(&mut o.rate, &name, || Ok((rates(&value)?, name.span()))),
            "arrivals" => set_once(&mut o.arrivals, &name, || {
                Ok((arrivals(&value)?, name.span()))
            }),
            "request_timeout" => set_once(&mut o.request_timeout, &name, || {
                Ok((duration(&name, &value)?, name.span()))
            }),
            "latency_target" => set_once(&mut o.latency_target, &name, || {
                let text = string_literal(&value, "latency_target")?;
                let target = nnbench_vocab::parse_latency_target(&text.value())
                    .map_err(|e| syn::Error::new(text.span(), format!("latency_target: {e}")))?;
                Ok((target, name.span()))
            }),
            "slo" => set_once(&mut o.slo, &name, || {
                let text = string_literal(&value, "slo")?;
                let slo = nnbench_vocab::parse_slo(&text.value())
                    .map_err(|e| syn::Error::new(text.span(), format!("slo: {e}")))?;
                Ok((slo, name.span()))
            }),
            "goodput" => set_once(&mut o.goodput, &name, || Ok((share(&value)?, name.span()))),
            "scaling" => set_once(&mut o.scaling, &name, || scaling(&value)),
            _ if self.kind == Kind::Product => {
                if self.axes.iter().any(|a| a.name == name) {
                    return Err(syn::Error::new(
                        name.span(),
                        format!("axis `{name}` is given twice"),
                    ));
                }
                let values = match value {
                    Expr::Array(array) => Values::List(array.elems.into_iter().collect()),
                    other => Values::Iter(other),
                };
                self.axes.push(Axis { name, values });
                Ok(())
            }
            _ => Err(syn::Error::new(
                name.span(),
                format!(
                    "unknown option `{name}`: {} takes {OPTIONS}",
                    self.kind.attribute()
                ),
            )),
        }
    }
}

/// Sets an option given once; the second time is an error at its name.
fn set_once<T>(
    slot: &mut Option<T>,
    name: &Ident,
    parse: impl FnOnce() -> syn::Result<T>,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(syn::Error::new(
            name.span(),
            format!("`{name}` is given twice"),
        ));
    }
    *slot = Some(parse()?);
    Ok(())
}

fn tags(value: &Expr) -> syn::Result<Vec<LitStr>> {
    let Expr::Array(array) = value else {
        return Err(syn::Error::new(
            value.span(),
            "tags are a list of strings: tags = [\"cpu\"]",
        ));
    };
    array
        .elems
        .iter()
        .map(|e| string_literal(e, "a tag"))
        .collect()
}

/// A word, bare or as a string: users write both.
fn word(value: &Expr) -> Option<String> {
    match value {
        Expr::Path(p) => p.path.get_ident().map(Ident::to_string),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

/// `higher` or `lower` for a number; a string of `field:direction` for
/// the fields of a struct value, which `nnbench_vocab::parse_metric`
/// accepts.
fn metric(value: &Expr) -> syn::Result<Metric> {
    const WHAT: &str = "metric is `higher` or `lower` (which way the returned number is better), or \"field:higher, field:lower\" for the fields of a returned struct";
    if let Some(direction) = word(value).and_then(|w| w.parse::<Direction>().ok()) {
        return Ok(Metric::Number(direction));
    }
    match value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(spec),
            ..
        }) => nnbench_vocab::parse_metric(&spec.value())
            .map(Metric::Fields)
            .map_err(|e| syn::Error::new(spec.span(), format!("metric: {e}"))),
        _ => Err(syn::Error::new(value.span(), WHAT)),
    }
}

/// `f32(EXPR)` or `f64(EXPR)`: operations in that precision; any other
/// expression, in double precision.
fn flops(value: Expr) -> Flops {
    if let Expr::Call(call) = &value
        && let Some(width) = word(&call.func)
        && (width == "f32" || width == "f64")
        && call.args.len() == 1
        && let Some(amount) = call.args.first()
    {
        return Flops {
            amount: amount.clone(),
            single: width == "f32",
        };
    }
    Flops {
        amount: value,
        single: false,
    }
}

/// `elements(EXPR)` or `bytes(EXPR)`.
fn throughput(value: &Expr) -> syn::Result<Throughput> {
    const WHAT: &str = "throughput is `elements(EXPR)` or `bytes(EXPR)`: what one call handles, an integer expression over the function's parameters (`elements(batch)`, `bytes(4 * n)`) or a constant";
    let Expr::Call(call) = value else {
        return Err(syn::Error::new(value.span(), WHAT));
    };
    let unit = match word(&call.func).as_deref() {
        Some("elements") => ThroughputUnit::Elements,
        Some("bytes") => ThroughputUnit::Bytes,
        _ => return Err(syn::Error::new(call.func.span(), WHAT)),
    };
    match (call.args.len(), call.args.first()) {
        (1, Some(count)) => Ok(Throughput {
            unit,
            count: count.clone(),
        }),
        _ => Err(syn::Error::new(call.span(), WHAT)),
    }
}

/// `once`, `sampled`, `auto` or `instructions`.
/// `scaling = n`: a parameter's name.
fn scaling(value: &Expr) -> syn::Result<Ident> {
    match value {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().cloned(),
        _ => None,
    }
    .ok_or_else(|| {
        syn::Error::new(
            value.span(),
            "scaling names the numeric parameter to fit against: scaling = n",
        )
    })
}

fn timing(value: &Expr) -> syn::Result<TimingMode> {
    match word(value).as_deref() {
        Some("once") => Ok(TimingMode::Once),
        Some("sampled") => Ok(TimingMode::Sampled),
        Some("auto") => Ok(TimingMode::Auto),
        Some("instructions") => Ok(TimingMode::Instructions),
        _ => Err(syn::Error::new(
            value.span(),
            "timing is `once`, `sampled`, `auto` or `instructions`",
        )),
    }
}

/// `current_thread` or `multi_thread`, as tokio names its runtimes.
fn runtime(value: &Expr) -> syn::Result<RuntimeFlavor> {
    match word(value).as_deref() {
        Some("current_thread") => Ok(RuntimeFlavor::CurrentThread),
        Some("multi_thread") => Ok(RuntimeFlavor::MultiThread),
        _ => Err(syn::Error::new(
            value.span(),
            "runtime is `current_thread` or `multi_thread`",
        )),
    }
}

// The most threads, or requests in flight, one case may have: a sync case
// under load makes each request on a thread of its own.
use nnbench_vocab::MAX_LEVEL;

/// `[1, 8, 64]`: distinct whole numbers from 1 to [`MAX_LEVEL`], the
/// levels of `concurrency` or `threads`.
fn levels(name: &Ident, value: &Expr) -> syn::Result<Vec<usize>> {
    let what = match name.to_string().as_str() {
        "threads" => "threads is a list of thread counts: threads = [1, 2, 4]",
        _ => "concurrency is a list of how many requests are in flight: concurrency = [1, 8, 64]",
    };
    let Expr::Array(array) = value else {
        return Err(syn::Error::new(value.span(), what));
    };
    if array.elems.is_empty() {
        return Err(syn::Error::new(
            value.span(),
            format!("`{name}` has no levels: {what}"),
        ));
    }
    let mut levels = Vec::new();
    for element in &array.elems {
        let level = match element {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => n.base10_parse::<usize>().ok(),
            _ => None,
        };
        let level = level
            .filter(|n| (1..=MAX_LEVEL).contains(n))
            .ok_or_else(|| {
                syn::Error::new(
                    element.span(),
                    format!("a level of `{name}` is a whole number from 1 to {MAX_LEVEL}"),
                )
            })?;
        if levels.contains(&level) {
            return Err(syn::Error::new(
                element.span(),
                format!("{level} is given twice in `{name}`"),
            ));
        }
        levels.push(level);
    }
    Ok(levels)
}

// The most requests a second an open loop offers: its dispatcher issues
// them one by one.
use nnbench_vocab::MAX_RATE;

/// The number an integer or float literal writes; `None` for anything
/// else.
fn number(value: &Expr) -> Option<f64> {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<f64>().ok(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse::<f64>().ok(),
        _ => None,
    }
}

/// `goodput = 0.9`: a share of the requests, above 0 and at most 1.
fn share(value: &Expr) -> syn::Result<f64> {
    number(value).filter(|s| *s > 0.0 && *s <= 1.0).ok_or_else(|| {
        syn::Error::new(
            value.span(),
            "goodput is the share of requests that must meet every objective, above 0 and at most 1: goodput = 0.9",
        )
    })
}

/// `[100, 200, 400]`: distinct positive numbers of requests a second, at
/// most [`MAX_RATE`].
fn rates(value: &Expr) -> syn::Result<Vec<f64>> {
    const WHAT: &str = "rate is a list of requests a second: rate = [100, 200, 400]";
    let Expr::Array(array) = value else {
        return Err(syn::Error::new(value.span(), WHAT));
    };
    if array.elems.is_empty() {
        return Err(syn::Error::new(
            value.span(),
            format!("`rate` has no rates: {WHAT}"),
        ));
    }
    let mut rates = Vec::new();
    for element in &array.elems {
        let rate = number(element)
            .filter(|r| r.is_finite() && *r > 0.0 && *r <= MAX_RATE)
            .ok_or_else(|| {
                syn::Error::new(
                    element.span(),
                    format!(
                        "a rate is a number of requests a second above 0 and at most {MAX_RATE:.0}"
                    ),
                )
            })?;
        if rates.contains(&rate) {
            return Err(syn::Error::new(
                element.span(),
                format!("{rate} is given twice in `rate`"),
            ));
        }
        rates.push(rate);
    }
    Ok(rates)
}

/// A flag's value: `true` or `false` (a flag written alone is `true`).
fn flag(value: &Expr, name: &str) -> syn::Result<bool> {
    match value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(b),
            ..
        }) => Ok(b.value),
        _ => Err(syn::Error::new(
            value.span(),
            format!("`{name}` is a flag: write `{name}` alone, or `{name} = true`"),
        )),
    }
}

/// `poisson`, `uniform` or `gamma(CV)`.
fn arrivals(value: &Expr) -> syn::Result<Arrivals> {
    const WHAT: &str = "arrivals is `poisson` (exponential gaps, the default), `uniform` (even gaps) or `gamma(CV)` (gaps whose standard deviation is CV times their mean: 1 is poisson, above 1 bursty)";
    if let Expr::Call(call) = value
        && word(&call.func).as_deref() == Some("gamma")
    {
        let cv = match call.args.iter().collect::<Vec<_>>().as_slice() {
            [Expr::Lit(syn::ExprLit { lit, .. })] => match lit {
                syn::Lit::Int(n) => n.base10_parse::<f64>().ok(),
                syn::Lit::Float(x) => x.base10_parse::<f64>().ok(),
                _ => None,
            },
            _ => None,
        };
        return match cv {
            Some(cv) if cv > 0.0 && cv <= 100.0 => Ok(Arrivals::Gamma(cv)),
            _ => Err(syn::Error::new(
                call.args.span(),
                "gamma's coefficient of variation is a number above 0 and at most 100: gamma(4)",
            )),
        };
    }
    match word(value).as_deref() {
        Some("poisson") => Ok(Arrivals::Poisson),
        Some("uniform") => Ok(Arrivals::Uniform),
        _ => Err(syn::Error::new(value.span(), WHAT)),
    }
}

fn sample_size(value: &Expr) -> syn::Result<usize> {
    let size = match value {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<usize>().ok(),
        _ => None,
    };
    size.filter(|&n| n >= nnbench_vocab::MIN_SAMPLE_SIZE)
        .ok_or_else(|| {
            syn::Error::new(
                value.span(),
                format!(
                    "sample_size is a whole number of at least {} (criterion's minimum)",
                    nnbench_vocab::MIN_SAMPLE_SIZE
                ),
            )
        })
}

/// A duration as the command line takes it: `"500ms"`, `"2s"`, or seconds
/// (`"1.5"`, or the number `1.5`).
fn duration(name: &Ident, value: &Expr) -> syn::Result<Duration> {
    let text = match value {
        Expr::Lit(syn::ExprLit { lit, .. }) => match lit {
            syn::Lit::Str(s) => Some(s.value()),
            syn::Lit::Int(n) => Some(n.base10_digits().to_owned()),
            syn::Lit::Float(f) => Some(f.base10_digits().to_owned()),
            _ => None,
        },
        _ => None,
    };
    let Some(text) = text else {
        return Err(syn::Error::new(
            value.span(),
            format!("{name} must be a duration such as \"500ms\", or seconds"),
        ));
    };
    nnbench_vocab::parse_duration(&text)
        .map_err(|e| syn::Error::new(value.span(), format!("{name}: {e}")))
}

/// A string of limits that `nnbench_vocab::parse_limits` accepts.
fn fail_on(value: &Expr) -> syn::Result<LitStr> {
    let spec = string_literal(value, "fail_on")?;
    nnbench_vocab::parse_limits(&spec.value())
        .map_err(|e| syn::Error::new(spec.span(), format!("fail_on: {e}")))?;
    Ok(spec)
}

/// `crate = path` or `crate = "path"`, as divan and serde take it.
fn crate_path(value: &Expr) -> syn::Result<syn::Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.parse(),
        _ => Err(syn::Error::new(
            value.span(),
            "crate is a path: crate = ::my_reexport::nnbench",
        )),
    }
}

fn string_literal(expr: &Expr, what: &str) -> syn::Result<LitStr> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s.clone()),
        other => Err(syn::Error::new(
            other.span(),
            format!("{what} must be a string literal"),
        )),
    }
}

/// Errors gathered so that one expansion reports all of them.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}
