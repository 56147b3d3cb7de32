//! Formats for ndarray arrays.

use std::io::Write;

use memmap2::Mmap;
use ndarray::{Array, ArrayView, Dimension, ShapeBuilder};
use ndarray_npy::{ReadableElement, ViewElement, ViewNpyExt, WritableElement, WriteNpyExt};

use super::{Format, Payload};
use crate::{Error, Result};

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
        MappedArray::from_map(map).map_err(|e| {
            e.context(format!(
                "{}: not a readable .npy array",
                payload.path().display()
            ))
        })
    }
}

/// A read-only array that is either owned (just computed) or a view of a
/// memory-mapped `.npy` (loaded from the memo cache's disk tier).
///
/// # Example
///
/// ```
/// use ndarray::array;
/// use nnbench::store::MappedArray;
///
/// let owned = MappedArray::from_array(array![[1.0, 2.0], [3.0, 4.0]]);
/// assert_eq!(owned.view().sum(), 10.0);
/// assert!(!owned.is_mapped());
/// ```
pub struct MappedArray<A, D: Dimension> {
    storage: Storage<A, D>,
}

enum Storage<A, D: Dimension> {
    Owned(Array<A, D>),
    Mapped {
        map: Mmap,
        /// Where the elements start in the map, in bytes.
        offset: usize,
        dim: D,
        strides: D,
    },
}

impl<A, D: Dimension> std::fmt::Debug for MappedArray<A, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedArray")
            .field("shape", &self.view().shape())
            .field("mapped", &self.is_mapped())
            .finish()
    }
}

impl<A, D: Dimension> MappedArray<A, D> {
    /// An array held in memory.
    ///
    /// # Example
    ///
    /// ```
    /// let a = nnbench::store::MappedArray::from_array(ndarray::Array1::<f32>::zeros(3));
    /// assert_eq!(a.view().len(), 3);
    /// ```
    pub fn from_array(array: Array<A, D>) -> Self {
        Self {
            storage: Storage::Owned(array),
        }
    }

    /// Whether the elements are read from a memory map.
    ///
    /// # Example
    ///
    /// ```
    /// let a = nnbench::store::MappedArray::from_array(ndarray::Array1::<f32>::zeros(3));
    /// assert!(!a.is_mapped());
    /// ```
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }

    /// Bytes of the elements.
    ///
    /// # Example
    ///
    /// ```
    /// let a = nnbench::store::MappedArray::from_array(ndarray::Array1::<f32>::zeros(3));
    /// assert_eq!(a.bytes(), 12);
    /// ```
    pub fn bytes(&self) -> u64 {
        (self.view().len() * std::mem::size_of::<A>()) as u64
    }

    /// The array.
    ///
    /// # Example
    ///
    /// ```
    /// let a = nnbench::store::MappedArray::from_array(ndarray::arr1(&[1.0, 2.0]));
    /// assert_eq!(a.view()[1], 2.0);
    /// ```
    pub fn view(&self) -> ArrayView<'_, A, D> {
        match &self.storage {
            Storage::Owned(array) => array.view(),
            Storage::Mapped {
                map,
                offset,
                dim,
                strides,
            } => {
                let shape = dim.clone().strides(strides.clone());
                // SAFETY: `from_map` checked with ndarray-npy's validated view
                // that these elements, shape and strides lie inside the map,
                // aligned; the map lives as long as `self` and never changes.
                unsafe { ArrayView::from_shape_ptr(shape, map.as_ptr().add(*offset).cast::<A>()) }
            }
        }
    }
}

impl<A: ViewElement, D: Dimension> MappedArray<A, D> {
    fn from_map(map: Mmap) -> Result<Self> {
        let (offset, dim, strides) = {
            let view = ArrayView::<A, D>::view_npy(&map)?;
            let offset = (view.as_ptr() as usize)
                .checked_sub(map.as_ptr() as usize)
                .ok_or_else(|| Error::msg("the array does not lie in its file"))?;
            let strides = D::from_dimension(&ndarray::IxDyn(
                &view
                    .strides()
                    .iter()
                    .map(|&s| s as usize)
                    .collect::<Vec<_>>(),
            ))
            .ok_or_else(|| Error::msg("the array's strides do not fit its dimensions"))?;
            if view.strides().iter().any(|&s| s < 0) {
                return Err(Error::msg("negative strides"));
            }
            (offset, view.raw_dim(), strides)
        };
        Ok(Self {
            storage: Storage::Mapped {
                map,
                offset,
                dim,
                strides,
            },
        })
    }
}
