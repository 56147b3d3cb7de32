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

    /// [`bytes`](Self::bytes) if the tensor is on a GPU (or another
    /// device), else 0: what a memo's
    /// [`device_bytes`](crate::Memo::device_bytes) reports.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Tensor, SharedTensor};
    /// assert_eq!(SharedTensor::new(Tensor::from_slice(&[1u8; 5])).device_bytes(), 0);
    /// ```
    pub fn device_bytes(&self) -> u64 {
        self.bytes() - self.host_bytes()
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

/// Named tensors, such as a model's weights, as one memo value: kept in
/// the disk tier as one safetensors file by [`Safetensors`](super::Safetensors).
///
/// # Example
///
/// ```
/// use nnbench::torch::{tch::{Device, Kind, Tensor}, NamedTensors};
///
/// let weights = NamedTensors::new(vec![
///     ("fc.weight".into(), Tensor::zeros([10, 784], (Kind::Float, Device::Cpu))),
///     ("fc.bias".into(), Tensor::zeros([10], (Kind::Float, Device::Cpu))),
/// ]);
/// assert_eq!(weights.get("fc.bias").map(|t| t.size()), Some(vec![10]));
/// assert_eq!(weights.host_bytes(), (10 * 784 + 10) * 4);
/// ```
#[derive(Debug, Default)]
pub struct NamedTensors(Vec<(String, SharedTensor)>);

impl NamedTensors {
    /// The tensors, in this order.
    ///
    /// # Example
    ///
    /// ```
    /// let empty = nnbench::torch::NamedTensors::new(vec![]);
    /// assert!(empty.is_empty());
    /// ```
    pub fn new(tensors: Vec<(String, Tensor)>) -> Self {
        Self(
            tensors
                .into_iter()
                .map(|(name, t)| (name, SharedTensor::new(t)))
                .collect(),
        )
    }

    /// The tensor called `name`.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::Tensor, NamedTensors};
    /// let w = NamedTensors::new(vec![("w".into(), Tensor::from_slice(&[1.0f32]))]);
    /// assert!(w.get("w").is_some() && w.get("v").is_none());
    /// ```
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, t)| &**t)
    }

    /// Every name and tensor, in order.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(w: &nnbench::torch::NamedTensors) {
    /// for (name, tensor) in w.iter() {
    ///     println!("{name}: {:?}", tensor.size());
    /// }
    /// # }
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.0.iter().map(|(n, t)| (n.as_str(), &**t))
    }

    /// How many tensors there are.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::torch::NamedTensors::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    ///
    /// # Example
    ///
    /// ```
    /// assert!(nnbench::torch::NamedTensors::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bytes of those in host memory: a memo's
    /// [`size_of`](crate::Memo::size_of).
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::torch::NamedTensors::default().host_bytes(), 0);
    /// ```
    pub fn host_bytes(&self) -> u64 {
        self.0.iter().map(|(_, t)| t.host_bytes()).sum()
    }

    /// The bytes of those on a GPU (or another device): a memo's
    /// [`device_bytes`](crate::Memo::device_bytes).
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::torch::NamedTensors::default().device_bytes(), 0);
    /// ```
    pub fn device_bytes(&self) -> u64 {
        self.0.iter().map(|(_, t)| t.device_bytes()).sum()
    }

    /// The same tensors on `device` (those already there are shared, not
    /// copied).
    ///
    /// # Errors
    ///
    /// When libtorch cannot move a tensor (no such device, out of memory).
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::{Device, Tensor}, NamedTensors};
    /// let w = NamedTensors::new(vec![("w".into(), Tensor::from_slice(&[1.0f32]))]);
    /// let same = w.to_device(Device::Cpu).unwrap();
    /// assert_eq!(same.len(), 1);
    /// ```
    pub fn to_device(&self, device: Device) -> crate::Result<Self> {
        self.0
            .iter()
            .map(|(name, t)| Ok((name.clone(), SharedTensor::new(t.f_to_device(device)?))))
            .collect::<crate::Result<Vec<_>>>()
            .map(Self)
    }
}
