//! A case's parameters as its record keeps them: each name with how its
//! value is described, in the order of the function's signature.

use std::borrow::Cow;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;

/// The parameters of a case in its record: each name with its description,
/// in the order of the function's signature, written as a JSON object.
///
/// A case has a handful of parameters, and a run keeps a record of each of
/// ten thousand cases: the names the grid declared are shared, not copied,
/// and a lookup reads the few entries in order.
///
/// # Example
///
/// ```
/// use nnbench::record::ParamMap;
/// use serde_json::json;
///
/// let params: ParamMap = [("model", json!("small")), ("batch", json!(32))]
///     .into_iter()
///     .collect();
/// assert_eq!(params["batch"], 32);
/// assert_eq!(params.get("model"), Some(&json!("small")));
/// assert!(params["missing"].is_null());
/// assert_eq!(serde_json::to_string(&params).unwrap(), r#"{"model":"small","batch":32}"#);
/// ```
#[derive(Clone, Default)]
pub struct ParamMap(Vec<(Cow<'static, str>, Json)>);

/// What indexing by a name that is not there gives, as indexing a JSON
/// object does.
static ABSENT: Json = Json::Null;

impl ParamMap {
    /// No parameters.
    ///
    /// # Example
    ///
    /// ```
    /// assert!(nnbench::record::ParamMap::new().is_empty());
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Room for `capacity` parameters.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self(Vec::with_capacity(capacity))
    }

    /// The description of parameter `name`, if the case has it.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// if let Some(batch) = case.params.get("batch").and_then(|b| b.as_u64()) {
    ///     println!("{}: batch {batch}", case.id);
    /// }
    /// # }
    /// ```
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Whether the case has parameter `name`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) -> bool {
    /// case.params.contains_key("model")
    /// # }
    /// ```
    pub fn contains_key(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Sets parameter `name` to `value`, in its place if the case had it
    /// (whose value is returned), else after the others.
    ///
    /// # Example
    ///
    /// ```
    /// let mut params = nnbench::record::ParamMap::new();
    /// assert_eq!(params.insert("n", 1.into()), None);
    /// assert_eq!(params.insert("n", 2.into()), Some(1.into()));
    /// assert_eq!(params["n"], 2);
    /// ```
    pub fn insert(&mut self, name: impl Into<Cow<'static, str>>, value: Json) -> Option<Json> {
        let name = name.into();
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, old)) => Some(std::mem::replace(old, value)),
            None => {
                self.0.push((name, value));
                None
            }
        }
    }

    /// Removes parameter `name`, keeping the others' order, and returns its
    /// value.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// let mut others = case.params.clone();
    /// others.remove("batch");
    /// # }
    /// ```
    pub fn remove(&mut self, name: &str) -> Option<Json> {
        let at = self.0.iter().position(|(n, _)| n == name)?;
        Some(self.0.remove(at).1)
    }

    /// The names and descriptions, in the signature's order.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// for (name, value) in case.params.iter() {
    ///     println!("{name} = {value}");
    /// }
    /// # }
    /// ```
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json)> {
        self.0.iter().map(|(n, v)| (&**n, v))
    }

    /// The names, in the signature's order.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) -> Vec<&str> {
    /// case.params.keys().collect()
    /// # }
    /// ```
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.iter().map(|(n, _)| &**n)
    }

    /// How many parameters the case has.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) -> usize {
    /// case.params.len()
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the case has no parameters.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) -> bool {
    /// case.params.is_empty()
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The parameters as a JSON object.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// println!("{}", case.params.to_json());
    /// # }
    /// ```
    pub fn to_json(&self) -> Json {
        Json::Object(
            self.0
                .iter()
                .map(|(n, v)| (n.clone().into_owned(), v.clone()))
                .collect(),
        )
    }
}

impl std::ops::Index<&str> for ParamMap {
    type Output = Json;

    /// The description of parameter `name`, or `null` where the case has
    /// none: as indexing a JSON value does, it does not panic.
    fn index(&self, name: &str) -> &Json {
        self.get(name).unwrap_or(&ABSENT)
    }
}

/// Equal when they hold the same names with equal values, in any order,
/// as JSON objects are.
impl PartialEq for ParamMap {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(n, v)| other.get(n) == Some(v))
    }
}

impl fmt::Debug for ParamMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<K: Into<Cow<'static, str>>> FromIterator<(K, Json)> for ParamMap {
    fn from_iter<I: IntoIterator<Item = (K, Json)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut params = Self::with_capacity(iter.size_hint().0);
        for (name, value) in iter {
            params.insert(name, value);
        }
        params
    }
}

impl<'a> IntoIterator for &'a ParamMap {
    type Item = (&'a str, &'a Json);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Cow<'static, str>, Json)>,
        fn(&'a (Cow<'static, str>, Json)) -> (&'a str, &'a Json),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(n, v)| (&**n, v))
    }
}

impl From<serde_json::Map<String, Json>> for ParamMap {
    fn from(map: serde_json::Map<String, Json>) -> Self {
        map.into_iter().collect()
    }
}

impl From<ParamMap> for Json {
    fn from(params: ParamMap) -> Self {
        Json::Object(
            params
                .0
                .into_iter()
                .map(|(n, v)| (n.into_owned(), v))
                .collect(),
        )
    }
}

impl Serialize for ParamMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (name, value) in self.iter() {
            map.serialize_entry(name, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ParamMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;

        impl<'de> Visitor<'de> for Entries {
            type Value = ParamMap;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object of parameter names and values")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<ParamMap, A::Error> {
                let mut params = ParamMap::with_capacity(access.size_hint().unwrap_or(0));
                while let Some((name, value)) = access.next_entry::<String, Json>()? {
                    params.insert(name, value);
                }
                Ok(params)
            }
        }

        deserializer.deserialize_map(Entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn it_reads_and_writes_a_json_object_in_the_signatures_order() {
        let text = r#"{"model":"small","batch":32,"lr":0.5}"#;
        let params: ParamMap = serde_json::from_str(text).unwrap();
        assert_eq!(params.keys().collect::<Vec<_>>(), ["model", "batch", "lr"]);
        assert_eq!(serde_json::to_string(&params).unwrap(), text);
        assert_eq!(
            Json::from(params.clone()),
            serde_json::from_str::<Json>(text).unwrap()
        );
        assert_eq!(params.to_json(), Json::from(params));
    }

    #[test]
    fn a_name_given_twice_keeps_its_last_value_in_its_first_place() {
        let params: ParamMap = serde_json::from_str(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(
            params.iter().collect::<Vec<_>>(),
            [("a", &json!(3)), ("b", &json!(2))]
        );
    }

    #[test]
    fn equal_as_objects_are_whatever_their_order() {
        let one: ParamMap = [("a", json!(1)), ("b", json!(2))].into_iter().collect();
        let other: ParamMap = [("b", json!(2)), ("a", json!(1))].into_iter().collect();
        assert_eq!(one, other);
        let fewer: ParamMap = [("a", json!(1))].into_iter().collect();
        assert_ne!(one, fewer);
        assert_ne!(fewer, one);
        let differs: ParamMap = [("a", json!(1)), ("b", json!(3))].into_iter().collect();
        assert_ne!(one, differs);
    }

    #[test]
    fn removing_keeps_the_others_order() {
        let mut params: ParamMap = [("a", json!(1)), ("b", json!(2)), ("c", json!(3))]
            .into_iter()
            .collect();
        assert_eq!(params.remove("b"), Some(json!(2)));
        assert_eq!(params.remove("b"), None);
        assert_eq!(params.keys().collect::<Vec<_>>(), ["a", "c"]);
    }

    #[test]
    fn a_record_that_is_not_an_object_is_refused() {
        let error = serde_json::from_str::<ParamMap>("[1, 2]").unwrap_err();
        assert!(
            error.to_string().contains("an object of parameter names"),
            "{error}"
        );
    }
}
