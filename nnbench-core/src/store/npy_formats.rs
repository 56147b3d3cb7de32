//! Formats for ndarray arrays.

use std::io::Write;

use ndarray::{Array, Dimension};
use ndarray_npy::{ReadableElement, ViewElement, WritableElement, WriteNpyExt};

use super::{Format, Payload};
use crate::Result;
use crate::npy::MappedArray;

/// `.npy`, read into memory: the array is owned, as `npy::read` gives it.
///
/// # Example
///
/// ```
/// use ndarray::Array2;
/// use nnbench::store::{Format, Npy};
/// let npy: Box<dyn Format<Array2<f64>>> = Box::new(Npy);
/// assert_eq!(npy.name(), "npy-1");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Npy;

impl<A, D> Format<Array<A, D>> for Npy
where
    A: ReadableElement + WritableElement + 'static,
    D: Dimension,
{
    fn name(&self) -> &'static str {
        "npy-1"
    }

    fn save(&self, value: &Array<A, D>, out: &mut dyn Write) -> Result<()> {
        value.write_npy(out)?;
        Ok(())
    }

    fn load(&self, payload: Payload<'_>) -> Result<Array<A, D>> {
        Ok(crate::npy::read_validated(
            payload.path(),
            payload.file(),
            payload.offset(),
            payload.len(),
        )?)
    }
}

/// `.npy`, memory-mapped read-only on load: no copy, and only the pages a
/// case touches become resident.
///
/// # Example
///
/// ```
/// use ndarray::Ix2;
/// use nnbench::store::{Format, MappedArray, MappedNpy};
/// let mapped: Box<dyn Format<MappedArray<f64, Ix2>>> = Box::new(MappedNpy);
/// assert_eq!(mapped.name(), "npy-1");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct MappedNpy;

impl<A, D> Format<MappedArray<A, D>> for MappedNpy
where
    A: ViewElement + WritableElement,
    D: Dimension,
{
    fn name(&self) -> &'static str {
        "npy-1"
    }

    fn save(&self, value: &MappedArray<A, D>, out: &mut dyn Write) -> Result<()> {
        value.view().write_npy(out)?;
        Ok(())
    }

    fn load(&self, payload: Payload<'_>) -> Result<MappedArray<A, D>> {
        let map = payload.map()?;
        let array = MappedArray::from_map(map).map_err(|e| {
            e.context(format!(
                "{}: not a readable .npy array",
                payload.path().display()
            ))
        })?;
        // The entry's reader's lock goes with the copy of its file.
        Ok(array.holding(payload.file().try_clone().ok()))
    }
}
