//! The memo values the runner resolved for a case, handed to its call.

use std::any::Any;
use std::sync::Arc;

use crate::{Error, Result};

/// The memo values the runner resolved for a case, by parameter position.
#[derive(Default)]
pub struct Args {
    values: Vec<Option<Arc<dyn Any + Send + Sync>>>,
}

impl Args {
    /// Sets the value of the memo parameter at `index`. Room is made as
    /// memos are set: a case without memos allocates nothing.
    pub(crate) fn set(&mut self, index: usize, value: Arc<dyn Any + Send + Sync>) {
        if self.values.len() <= index {
            self.values.resize(index + 1, None);
        }
        self.values[index] = Some(value);
    }

    /// The value of the memo parameter at `index`, called `name`.
    ///
    /// # Errors
    ///
    /// When it was not resolved or holds another type.
    pub fn memo<V: Send + Sync + 'static>(&self, index: usize, name: &str) -> Result<Arc<V>> {
        let value = self
            .values
            .get(index)
            .and_then(Option::as_ref)
            .ok_or_else(|| Error::msg(format!("memo parameter `{name}` was not resolved")))?;
        Arc::clone(value).downcast().map_err(|_| {
            Error::msg(format!(
                "memo parameter `{name}` does not hold a {}",
                std::any::type_name::<V>()
            ))
        })
    }
}
