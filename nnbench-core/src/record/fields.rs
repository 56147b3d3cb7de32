//! The numbers inside a struct metric: a value that serializes to an
//! object, whose fields (nested ones addressed by dots: `eval.top5`) a
//! family's `metric = "accuracy:higher, latency_ms:lower"` judges.

use serde_json::Value as Json;

/// The part of `value` at `path` (fields joined by dots), if it has one.
///
/// # Example
///
/// ```
/// let value = serde_json::json!({"eval": {"top5": 0.97}});
/// assert_eq!(nnbench::record::field(&value, "eval.top5"), Some(&serde_json::json!(0.97)));
/// assert_eq!(nnbench::record::field(&value, "eval.top1"), None);
/// ```
pub fn field<'a>(value: &'a Json, path: &str) -> Option<&'a Json> {
    path.split('.')
        .try_fold(value, |at, name| at.as_object()?.get(name))
}

/// Every number in `value`, by the path of the field that holds it, in
/// the object's order: a struct metric's fields, flattened. A number
/// alone has none.
///
/// # Example
///
/// ```
/// let value = serde_json::json!({"accuracy": 0.9, "name": "mlp", "eval": {"top5": 0.97}});
/// assert_eq!(
///     nnbench::record::numeric_fields(&value),
///     [("accuracy".to_owned(), 0.9), ("eval.top5".to_owned(), 0.97)]
/// );
/// ```
pub fn numeric_fields(value: &Json) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    collect(value, &mut String::new(), &mut out);
    out
}

fn collect(value: &Json, path: &mut String, out: &mut Vec<(String, f64)>) {
    match value {
        Json::Number(n) if !path.is_empty() => {
            if let Some(n) = n.as_f64() {
                out.push((path.clone(), n));
            }
        }
        Json::Object(fields) => {
            for (name, inner) in fields {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
                collect(inner, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_fields_are_found_by_their_path() {
        let value = json!({"a": {"b": {"c": 3}}, "d": [1, 2], "e": null});
        assert_eq!(field(&value, "a.b.c"), Some(&json!(3)));
        assert_eq!(field(&value, "a.b"), Some(&json!({"c": 3})));
        assert_eq!(field(&value, "a.x"), None);
        assert_eq!(field(&value, "d.0"), None, "arrays are not fields");
        assert_eq!(numeric_fields(&value), [("a.b.c".to_owned(), 3.0)]);
        assert!(numeric_fields(&json!(0.5)).is_empty());
    }
}
