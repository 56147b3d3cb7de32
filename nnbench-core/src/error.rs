//! The error type that memos, hooks and benchmark functions return.
//!
//! [`Error`] works like `anyhow::Error`: `?` converts any
//! `std::error::Error + Send + Sync + 'static` into it, and the original error
//! is kept, so the record can list its whole chain of causes.

use std::error::Error as StdError;
use std::fmt;

/// A boxed error that keeps its chain of causes.
///
/// # Example
///
/// ```
/// fn parse(text: &str) -> nnbench::Result<u32> {
///     let n: u32 = text.trim().parse()?; // ParseIntError converts through `?`
///     Ok(n)
/// }
/// let err = parse("x").unwrap_err();
/// assert_eq!(err.chain().count(), 1);
/// assert!(err.to_string().contains("invalid digit"));
/// ```
pub struct Error {
    inner: Box<dyn StdError + Send + Sync + 'static>,
}

/// `Result<T, nnbench::Error>`, what [`Memo::compute`](crate::Memo::compute) returns.
///
/// # Example
///
/// ```
/// fn load() -> nnbench::Result<Vec<f64>> {
///     Ok(vec![1.0, 2.0])
/// }
/// assert_eq!(load().unwrap().len(), 2);
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error made of a message alone.
    ///
    /// # Example
    ///
    /// ```
    /// let err = nnbench::Error::msg("model file is empty");
    /// assert_eq!(err.to_string(), "model file is empty");
    /// ```
    pub fn msg(message: impl fmt::Display) -> Self {
        Self::from_boxed(Box::new(Message(message.to_string())))
    }

    /// Wraps an already boxed error without losing its causes.
    ///
    /// # Example
    ///
    /// ```
    /// let boxed: Box<dyn std::error::Error + Send + Sync> = "bad batch size".into();
    /// assert_eq!(nnbench::Error::from_boxed(boxed).to_string(), "bad batch size");
    /// ```
    pub fn from_boxed(inner: Box<dyn StdError + Send + Sync + 'static>) -> Self {
        Self { inner }
    }

    /// Puts a message in front of this error; the error becomes its cause.
    ///
    /// # Example
    ///
    /// ```
    /// let err = nnbench::Error::msg("file not found").context("loading model1.npy");
    /// let chain: Vec<String> = err.chain().map(|e| e.to_string()).collect();
    /// assert_eq!(chain, ["loading model1.npy", "file not found"]);
    /// ```
    pub fn context(self, message: impl fmt::Display) -> Self {
        Self::from_boxed(Box::new(WithContext {
            message: message.to_string(),
            source: self.inner,
        }))
    }

    /// This error, then its source, then the source's source, and so on.
    ///
    /// # Example
    ///
    /// ```
    /// let err = nnbench::Error::msg("inner").context("outer");
    /// assert_eq!(err.chain().count(), 2);
    /// ```
    pub fn chain(&self) -> impl Iterator<Item = &(dyn StdError + 'static)> {
        let first: &(dyn StdError + 'static) = &*self.inner;
        std::iter::successors(Some(first), |&e| e.source())
    }

    /// The messages of [`chain`](Self::chain), outermost first.
    ///
    /// # Example
    ///
    /// ```
    /// let err = nnbench::Error::msg("inner").context("outer");
    /// assert_eq!(err.messages(), ["outer", "inner"]);
    /// ```
    pub fn messages(&self) -> Vec<String> {
        self.chain().map(|e| e.to_string()).collect()
    }

    /// Gives back the boxed error.
    ///
    /// # Example
    ///
    /// ```
    /// let boxed = nnbench::Error::msg("x").into_boxed();
    /// assert_eq!(boxed.to_string(), "x");
    /// ```
    pub fn into_boxed(self) -> Box<dyn StdError + Send + Sync + 'static> {
        self.inner
    }
}

impl<E> From<E> for Error
where
    E: StdError + Send + Sync + 'static,
{
    fn from(error: E) -> Self {
        Self::from_boxed(Box::new(error))
    }
}

impl From<Error> for Box<dyn StdError + Send + Sync + 'static> {
    fn from(error: Error) -> Self {
        error.inner
    }
}

/// `{}` prints the outermost message; `{:#}` prints the chain joined by `: `.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            // A message that already ends with its cause (`{path}: {source}`)
            // does not say it twice.
            let mut text = String::new();
            for message in self.messages() {
                if text.is_empty() {
                    text = message;
                } else if !text.ends_with(&message) {
                    text.push_str(": ");
                    text.push_str(&message);
                }
            }
            f.write_str(&text)
        } else {
            fmt::Display::fmt(&self.inner, f)
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut messages = self.messages().into_iter();
        if let Some(first) = messages.next() {
            f.write_str(&first)?;
        }
        for (i, cause) in messages.enumerate() {
            if i == 0 {
                f.write_str("\n\nCaused by:")?;
            }
            write!(f, "\n    {i}: {cause}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Message(String);

#[derive(Debug, thiserror::Error)]
#[error("{message}")]
struct WithContext {
    message: String,
    #[source]
    source: Box<dyn StdError + Send + Sync + 'static>,
}

/// Adds [`Error::context`] to any `Result` whose error converts into [`Error`].
///
/// # Example
///
/// ```
/// use nnbench::Context as _;
///
/// let err = std::fs::read("/no/such/model.npy").context("loading the model").unwrap_err();
/// assert_eq!(err.to_string(), "loading the model");
/// assert_eq!(err.chain().count(), 2);
/// ```
pub trait Context<T> {
    /// Wraps the error with `message`.
    ///
    /// # Errors
    ///
    /// The original error, wrapped, when `self` is an error.
    fn context(self, message: impl fmt::Display) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, message: impl fmt::Display) -> Result<T> {
        self.map_err(|e| e.into().context(message))
    }
}

/// The message of a panic payload (`&str` or `String`; anything else is
/// named as such).
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic payload that is not a string".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn question_mark_keeps_the_chain_of_causes() {
        fn failing() -> Result<()> {
            Err(Outer(std::io::Error::other("disk on fire")))?;
            Ok(())
        }
        let err = failing().unwrap_err();
        assert_eq!(err.messages(), ["outer", "disk on fire"]);
        assert_eq!(format!("{err:#}"), "outer: disk on fire");
        assert!(format!("{err:?}").contains("Caused by:\n    0: disk on fire"));
    }
}
