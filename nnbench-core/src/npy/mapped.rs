//! A read-only array, owned or a view of a memory-mapped `.npy` file.

use memmap2::Mmap;
use ndarray::{Array, ArrayView, Dimension, ShapeBuilder};
use ndarray_npy::{ViewElement, ViewNpyExt};

use crate::{Error, Result};

/// A read-only array that is either owned (just computed) or a view of a
/// memory-mapped `.npy` (loaded from the memo cache's disk tier).
///
/// # Example
///
/// ```
/// use ndarray::array;
/// use nnbench::npy::MappedArray;
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
        /// The mapped disk entry, open, so that its reader's lock lasts
        /// as long as the map: a prune passes over it.
        _entry: Option<std::fs::File>,
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
    /// let a = nnbench::npy::MappedArray::from_array(ndarray::Array1::<f32>::zeros(3));
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
    /// let a = nnbench::npy::MappedArray::from_array(ndarray::Array1::<f32>::zeros(3));
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
    /// let a = nnbench::npy::MappedArray::from_array(ndarray::Array1::<f32>::zeros(3));
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
    /// let a = nnbench::npy::MappedArray::from_array(ndarray::arr1(&[1.0, 2.0]));
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
                ..
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
    pub(crate) fn from_map(map: Mmap) -> Result<Self> {
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
                _entry: None,
                offset,
                dim,
                strides,
            },
        })
    }

    /// The array mapped from a disk entry, keeping `entry` (its file,
    /// under a reader's lock) open while it lives.
    pub(crate) fn holding(mut self, entry: Option<std::fs::File>) -> Self {
        if let Storage::Mapped { _entry, .. } = &mut self.storage {
            *_entry = entry;
        }
        self
    }
}
