//! Tensors in the disk tier, as safetensors: a JSON header and the raw
//! bytes, read without running any code (unlike pickles).

use std::collections::HashMap;
use std::io::Write;

use safetensors::tensor::{Dtype, SafeTensors, TensorView};
use tch::{Device, Kind, Tensor};

use super::{NamedTensors, SharedTensor};
use crate::store::{Format, Payload};
use crate::{Error, Result};

/// The [`Format`] of a [`SharedTensor`] memo in the disk tier: the
/// safetensors layout, loaded back onto `device`.
///
/// # Example
///
/// ```
/// use nnbench::store::Format;
/// use nnbench::torch::{tch::{Device, Kind, Tensor}, Safetensors, SharedTensor};
///
/// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
/// struct Embeddings { rows: i64 }
///
/// impl nnbench::Memo for Embeddings {
///     type Value = SharedTensor;
///     fn compute(&self) -> nnbench::Result<SharedTensor> {
///         Ok(Tensor::randn([self.rows, 64], (Kind::Float, Device::Cpu)).into())
///     }
///     fn store(&self) -> Option<Box<dyn Format<SharedTensor>>> {
///         Some(Box::new(Safetensors::on(Device::Cpu)))
///     }
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Safetensors {
    device: Device,
}

impl Safetensors {
    /// The format, loading tensors onto `device`.
    ///
    /// # Example
    ///
    /// ```
    /// let format = nnbench::torch::Safetensors::on(nnbench::torch::tch::Device::cuda_if_available());
    /// ```
    pub fn on(device: Device) -> Self {
        Self { device }
    }
}

/// The one tensor's name in an entry.
const NAME: &str = "tensor";

impl Format<SharedTensor> for Safetensors {
    fn name(&self) -> &'static str {
        "safetensors-1"
    }

    fn save(&self, value: &SharedTensor, out: &mut dyn Write) -> Result<()> {
        write(&[(NAME, &**value)], out)
    }

    fn load(&self, payload: Payload<'_>) -> Result<SharedTensor> {
        let mut tensors = read(payload, self.device)?;
        match tensors.iter().position(|(name, _)| name == NAME) {
            Some(at) => Ok(SharedTensor::new(tensors.swap_remove(at).1)),
            None => Err(Error::msg(format!(
                "{}: no tensor `{NAME}`",
                payload.path().display()
            ))),
        }
    }
}

impl Format<NamedTensors> for Safetensors {
    fn name(&self) -> &'static str {
        "safetensors-named-1"
    }

    fn save(&self, value: &NamedTensors, out: &mut dyn Write) -> Result<()> {
        write(&value.iter().collect::<Vec<_>>(), out)
    }

    fn load(&self, payload: Payload<'_>) -> Result<NamedTensors> {
        read(payload, self.device).map(NamedTensors::new)
    }
}

/// Writes `tensors` as one safetensors file.
fn write(tensors: &[(&str, &Tensor)], out: &mut dyn Write) -> Result<()> {
    let hosted = tensors
        .iter()
        .map(|(name, t)| Ok((*name, host_copy(t)?)))
        .collect::<Result<Vec<_>>>()?;
    let views = hosted
        .iter()
        .map(|(name, (dtype, shape, bytes))| {
            TensorView::new(*dtype, shape.clone(), bytes)
                .map(|view| (*name, view))
                .map_err(|e| Error::msg(e.to_string()))
        })
        .collect::<Result<Vec<_>>>()?;
    let encoded = safetensors::serialize(views, &None::<HashMap<String, String>>)
        .map_err(|e| Error::msg(e.to_string()))?;
    out.write_all(&encoded)?;
    Ok(())
}

/// Every tensor of a safetensors payload, in the file's order, on `device`.
fn read(payload: Payload<'_>, device: Device) -> Result<Vec<(String, Tensor)>> {
    let bytes = payload.read_all()?;
    let entry = SafeTensors::deserialize(&bytes).map_err(|e| {
        Error::msg(format!(
            "{}: not safetensors: {e}",
            payload.path().display()
        ))
    })?;
    let mut named = entry.tensors();
    // The header is a JSON object: keep the order of the data, as written.
    named.sort_by_key(|(_, view)| view.data().as_ptr() as usize);
    named
        .into_iter()
        .map(|(name, view)| {
            let kind = kind_of(view.dtype())?;
            let shape: Vec<i64> = view
                .shape()
                .iter()
                .map(|&d| i64::try_from(d).map_err(|_| Error::msg("a dimension past i64")))
                .collect::<Result<_>>()?;
            let tensor = Tensor::f_from_data_size(view.data(), &shape, kind)?;
            Ok((name, tensor.f_to_device(device)?))
        })
        .collect()
}

/// The tensor's dtype, shape and bytes, copied to host memory.
fn host_copy(tensor: &Tensor) -> Result<(Dtype, Vec<usize>, Vec<u8>)> {
    let dtype = dtype_of(tensor.f_kind()?)?;
    let host = tensor.f_to_device(Device::Cpu)?.f_contiguous()?;
    let numel = host.numel();
    let len = usize::try_from(super::tensor::tensor_bytes(&host))
        .map_err(|_| Error::msg("a tensor larger than memory"))?;
    let mut bytes = vec![0u8; len];
    host.f_copy_data_u8(&mut bytes, numel)?;
    let shape = host
        .size()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| Error::msg("a negative dimension")))
        .collect::<Result<_>>()?;
    Ok((dtype, shape, bytes))
}

/// The element kinds both libtorch and safetensors know.
const KINDS: [(Kind, Dtype); 10] = [
    (Kind::Bool, Dtype::BOOL),
    (Kind::Uint8, Dtype::U8),
    (Kind::Int8, Dtype::I8),
    (Kind::Int16, Dtype::I16),
    (Kind::Int, Dtype::I32),
    (Kind::Int64, Dtype::I64),
    (Kind::Half, Dtype::F16),
    (Kind::BFloat16, Dtype::BF16),
    (Kind::Float, Dtype::F32),
    (Kind::Double, Dtype::F64),
];

fn dtype_of(kind: Kind) -> Result<Dtype> {
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, d)| *d)
        .ok_or_else(|| Error::msg(format!("safetensors cannot hold {kind:?} tensors")))
}

fn kind_of(dtype: Dtype) -> Result<Kind> {
    KINDS
        .iter()
        .find(|(_, d)| *d == dtype)
        .map(|(k, _)| *k)
        .ok_or_else(|| Error::msg(format!("libtorch has no {dtype:?} tensors")))
}
