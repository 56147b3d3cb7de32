//! Formats for serde types.

use std::io::Write;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Format, Payload};
use crate::{Error, Result};

/// JSON: readable, for small values (metadata, vocabularies, configurations).
///
/// # Example
///
/// ```
/// use nnbench::store::{Format, Json};
/// let json: Box<dyn Format<Vec<String>>> = Box::new(Json);
/// assert_eq!(json.name(), "json-1");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl<V: Serialize + DeserializeOwned> Format<V> for Json {
    fn name(&self) -> &'static str {
        "json-1"
    }

    fn save(&self, value: &V, out: &mut dyn Write) -> Result<()> {
        serde_json::to_writer(out, value)?;
        Ok(())
    }

    fn load(&self, payload: Payload<'_>) -> Result<V> {
        let reader = std::io::BufReader::new(payload.reader()?);
        serde_json::from_reader(reader).map_err(|e| {
            Error::from(e).context(format!(
                "{}: not the JSON this memo saves",
                payload.path().display()
            ))
        })
    }
}

/// A compact binary form (postcard): smaller and faster than JSON, for
/// larger serde values.
///
/// # Example
///
/// ```
/// use nnbench::store::{Binary, Format};
/// let binary: Box<dyn Format<Vec<u32>>> = Box::new(Binary);
/// assert_eq!(binary.name(), "postcard-1");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Binary;

impl<V: Serialize + DeserializeOwned> Format<V> for Binary {
    fn name(&self) -> &'static str {
        "postcard-1"
    }

    fn save(&self, value: &V, out: &mut dyn Write) -> Result<()> {
        let bytes = postcard::to_stdvec(value)?;
        out.write_all(&bytes)?;
        Ok(())
    }

    fn load(&self, payload: Payload<'_>) -> Result<V> {
        let bytes = payload.read_all()?;
        postcard::from_bytes(&bytes).map_err(|e| {
            Error::from(e).context(format!(
                "{}: not the binary form this memo saves",
                payload.path().display()
            ))
        })
    }
}
