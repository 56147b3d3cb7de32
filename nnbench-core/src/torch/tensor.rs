//! A tensor as a memo's value.

use std::ops::Deref;

use tch::{Device, Tensor};

/// A tensor held by the memo cache and lent to cases: `&SharedTensor`
/// dereferences to `&Tensor`.
///
/// tch's `Tensor` is `Send` but not `Sync`, while a memo's value is shared
/// between the cache and the case. libtorch's tensors are safe to read
/// from several threads, and the harness lends a memo's value for reading
/// only: this wrapper says so.
///
/// # Example
///
/// ```
/// use nnbench::torch::SharedTensor;
/// use nnbench::torch::tch::{Device, Kind, Tensor};
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Batch { rows: i64 }
///
/// impl nnbench::Memo for Batch {
///     type Value = SharedTensor;
///     fn compute(&self) -> nnbench::Result<SharedTensor> {
///         Ok(Tensor::zeros([self.rows, 784], (Kind::Float, Device::Cpu)).into())
///     }
///     fn size_of(&self, value: &SharedTensor) -> Option<u64> {
///         Some(value.host_bytes())
///     }
/// }
///
/// let batch = nnbench::memo::resolve(&Batch { rows: 32 }).unwrap();
/// assert_eq!(batch.size(), [32, 784]);
/// assert_eq!(batch.bytes(), 32 * 784 * 4);
/// ```
#[derive(Debug)]
pub struct SharedTensor(Tensor);

// SAFETY: libtorch tensors support concurrent reads; the cache and the
// harness only lend `&SharedTensor`, whose methods read or make new tensors.
unsafe impl Sync for SharedTensor {}

impl SharedTensor {
    /// Wraps `tensor`.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Tensor, SharedTensor};
    /// let shared = SharedTensor::new(Tensor::from_slice(&[1.0f32, 2.0]));
    /// assert_eq!(shared.numel(), 2);
    /// ```
    pub fn new(tensor: Tensor) -> Self {
        Self(tensor)
    }

    /// The tensor's data in bytes, wherever it lives.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Tensor, SharedTensor};
    /// assert_eq!(SharedTensor::new(Tensor::from_slice(&[1.0f64; 3])).bytes(), 24);
    /// ```
    pub fn bytes(&self) -> u64 {
        tensor_bytes(&self.0)
    }

    /// [`bytes`](Self::bytes) if the tensor is in host memory, else 0: what
    /// a memo's [`size_of`](crate::Memo::size_of) reports, since the memo
    /// budget counts host memory.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Tensor, SharedTensor};
    /// assert_eq!(SharedTensor::new(Tensor::from_slice(&[1u8; 5])).host_bytes(), 5);
    /// ```
    pub fn host_bytes(&self) -> u64 {
        if self.0.device() == Device::Cpu {
            self.bytes()
        } else {
            0
        }
    }

    /// The tensor itself.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Tensor, SharedTensor};
    /// let tensor: Tensor = SharedTensor::new(Tensor::from_slice(&[1i64])).into_inner();
    /// ```
    pub fn into_inner(self) -> Tensor {
        self.0
    }
}

impl Deref for SharedTensor {
    type Target = Tensor;
    fn deref(&self) -> &Tensor {
        &self.0
    }
}

impl From<Tensor> for SharedTensor {
    fn from(tensor: Tensor) -> Self {
        Self(tensor)
    }
}

/// Bytes of a tensor's elements: a view counts its own elements, not the
/// storage it shares.
pub(super) fn tensor_bytes(tensor: &Tensor) -> u64 {
    (tensor.numel() as u64).saturating_mul(tensor.kind().elt_size_in_bytes() as u64)
}
