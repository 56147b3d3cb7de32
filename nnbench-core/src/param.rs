//! The parameters of one case, as hooks and records see them.

use std::any::Any;
use std::fmt;

use serde_json::Value as Json;

use crate::memo::ErasedMemo;

/// One parameter of a case: its name and what the grid gave it.
pub struct Param {
    name: &'static str,
    kind: ParamKind,
}

enum ParamKind {
    /// Resolved through the memo cache when the case starts.
    Memo(Box<dyn ErasedMemo>),
    /// Passed as written.
    Plain {
        value: Box<dyn Any + Send + Sync>,
        description: Json,
    },
}

impl Param {
    #[doc(hidden)]
    pub fn memo<M: crate::Memo>(name: &'static str, memo: M) -> Self {
        Self {
            name,
            kind: ParamKind::Memo(Box::new(memo)),
        }
    }

    #[doc(hidden)]
    pub fn plain<T: Send + Sync + 'static>(
        name: &'static str,
        value: T,
        description: Json,
    ) -> Self {
        Self {
            name,
            kind: ParamKind::Plain {
                value: Box::new(value),
                description,
            },
        }
    }

    /// The parameter's name, as in the function's signature.
    ///
    /// # Example
    ///
    /// ```
    /// fn names(params: &nnbench::Params) -> Vec<&'static str> {
    ///     params.iter().map(|p| p.name()).collect()
    /// }
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether the value is a memo, resolved when the case starts.
    ///
    /// # Example
    ///
    /// ```
    /// fn memo_names(params: &nnbench::Params) -> Vec<&'static str> {
    ///     params.iter().filter(|p| p.is_memo()).map(|p| p.name()).collect()
    /// }
    /// ```
    pub fn is_memo(&self) -> bool {
        matches!(self.kind, ParamKind::Memo(_))
    }

    /// How the record shows the value: a memo by its `Debug` form, any other
    /// value serialized (or by its `Debug` form when it is not `Serialize`).
    ///
    /// # Example
    ///
    /// ```
    /// fn described(params: &nnbench::Params) -> Vec<String> {
    ///     params.iter().map(|p| p.description().to_string()).collect()
    /// }
    /// ```
    pub fn description(&self) -> Json {
        match &self.kind {
            ParamKind::Memo(memo) => Json::String(memo.describe()),
            ParamKind::Plain { description, .. } => description.clone(),
        }
    }

    /// The form used in case ids: strings bare, everything else as JSON.
    pub(crate) fn label(&self) -> String {
        let mut label = String::new();
        self.write_label(&mut label);
        label
    }

    fn write_label(&self, out: &mut String) {
        use fmt::Write as _;
        match &self.kind {
            ParamKind::Memo(memo) => out.push_str(&memo.describe()),
            ParamKind::Plain {
                description: Json::String(s),
                ..
            } => out.push_str(s),
            // Integers are most grids' values: written without the
            // formatter's machinery, which costs more than the rest of a
            // case's id.
            ParamKind::Plain {
                description: Json::Number(n),
                ..
            } if n.is_i64() || n.is_u64() => {
                let mut digits = itoa::Buffer::new();
                match n.as_u64() {
                    Some(u) => out.push_str(digits.format(u)),
                    None => out.push_str(digits.format(n.as_i64().unwrap_or_default())),
                }
            }
            ParamKind::Plain { description, .. } => {
                let _ = write!(out, "{description}");
            }
        }
    }
}

impl fmt::Debug for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.name, self.label())
    }
}

/// The parameters of one case, in the order of the function's signature.
///
/// Hooks receive it to find out what the case runs with.
///
/// # Example
///
/// ```
/// use nnbench::{Memo, Params, State};
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct ModelMemo(u32);
/// impl Memo for ModelMemo {
///     type Value = Vec<f32>;
///     fn compute(&self) -> nnbench::Result<Vec<f32>> { Ok(vec![0.0; 4]) }
/// }
///
/// fn evict_model(_state: &State, params: &Params) {
///     if let Some(model) = params.memo::<ModelMemo>("model") {
///         nnbench::memo::evict(model);
///     }
///     let batch: Option<&usize> = params.get("batch");
///     let _ = batch;
/// }
/// ```
#[derive(Debug, Default)]
pub struct Params {
    params: Vec<Param>,
}

impl Params {
    #[doc(hidden)]
    pub fn new(params: Vec<Param>) -> Self {
        Self { params }
    }

    /// The memo description given to parameter `name`, if that parameter is a
    /// memo of type `M`.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::Memo;
    /// # #[derive(Clone, Debug, Hash, PartialEq, Eq)] struct DataMemo;
    /// # impl Memo for DataMemo { type Value = (); fn compute(&self) -> nnbench::Result<()> { Ok(()) } }
    /// fn teardown(_: &nnbench::State, params: &nnbench::Params) {
    ///     if let Some(data) = params.memo::<DataMemo>("data") {
    ///         nnbench::memo::evict(data);
    ///     }
    /// }
    /// ```
    pub fn memo<M: crate::Memo>(&self, name: &str) -> Option<&M> {
        match &self.find(name)?.kind {
            ParamKind::Memo(memo) => memo.as_any().downcast_ref(),
            ParamKind::Plain { .. } => None,
        }
    }

    /// The value given to parameter `name`, if it is a plain value of type `T`.
    ///
    /// # Example
    ///
    /// ```
    /// fn setup(_: &nnbench::State, params: &nnbench::Params) {
    ///     if let Some(batch) = params.get::<usize>("batch") {
    ///         println!("batch size {batch}");
    ///     }
    /// }
    /// ```
    pub fn get<T: 'static>(&self, name: &str) -> Option<&T> {
        match &self.find(name)?.kind {
            ParamKind::Plain { value, .. } => value.downcast_ref(),
            ParamKind::Memo(_) => None,
        }
    }

    /// The parameter called `name`.
    ///
    /// # Example
    ///
    /// ```
    /// fn is_memo(params: &nnbench::Params, name: &str) -> bool {
    ///     params.param(name).is_some_and(|p| p.is_memo())
    /// }
    /// ```
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.find(name)
    }

    /// The parameters in signature order.
    ///
    /// # Example
    ///
    /// ```
    /// fn count(params: &nnbench::Params) -> usize {
    ///     params.iter().count()
    /// }
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = &Param> {
        self.params.iter()
    }

    /// How many parameters the case has.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::Params::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether the case has no parameter.
    ///
    /// # Example
    ///
    /// ```
    /// assert!(nnbench::Params::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Adds a parameter after the signature's: a case's level under
    /// `concurrency` or `threads`.
    pub(crate) fn push(&mut self, param: Param) {
        self.params.push(param);
    }

    /// The record's `params`: each name with its description.
    pub(crate) fn to_record(&self) -> crate::record::ParamMap {
        self.params
            .iter()
            .map(|p| (p.name, p.description()))
            .collect()
    }

    /// `family/name=label,name=label`: a case's id.
    pub(crate) fn id(&self, family: &str) -> String {
        let mut id = String::with_capacity(family.len() + 16 * self.params.len());
        id.push_str(family);
        for (i, param) in self.params.iter().enumerate() {
            id.push(if i == 0 { '/' } else { ',' });
            id.push_str(param.name);
            id.push('=');
            param.write_label(&mut id);
        }
        id
    }

    pub(crate) fn memos(&self) -> impl Iterator<Item = (usize, &dyn ErasedMemo)> {
        self.params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match &p.kind {
                ParamKind::Memo(memo) => Some((i, &**memo)),
                ParamKind::Plain { .. } => None,
            })
    }

    /// [`memos`](Self::memos), by parameter name.
    pub(crate) fn memos_named(&self) -> impl Iterator<Item = (&'static str, &dyn ErasedMemo)> {
        self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Memo(memo) => Some((p.name, &**memo)),
            ParamKind::Plain { .. } => None,
        })
    }

    fn find(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_writes_each_value_as_its_json_says() {
        let values = [
            Json::from(7u32),
            Json::from(-3i64),
            Json::from(u64::MAX),
            Json::from(i64::MIN),
            Json::from(0.5),
            Json::from(true),
            Json::from("gpt2"),
            serde_json::json!([1, 2]),
        ];
        for value in values {
            let params = Params::new(vec![Param::plain("x", (), value.clone())]);
            let expected = match &value {
                Json::String(s) => format!("f/x={s}"),
                other => format!("f/x={other}"),
            };
            assert_eq!(params.id("f"), expected, "{value}");
        }
    }
}
