//! A TorchScript module as a model memo.

use std::path::{Path, PathBuf};

use tch::{CModule, Device};

use crate::memo::{Memo, file_fingerprint};
use crate::{Error, Result};

/// A TorchScript module (`torch.jit.save` in Python, or
/// `CModule::create_by_tracing` then `save` in tch), loaded onto a device in
/// eval mode when its first case starts: a model memo.
///
/// Its description, which names its cases, is the file's name and the
/// device (`mlp.pt@cpu`), the same on every machine; its fingerprint is the
/// file's path, size and modification time, so that a replaced model file
/// is reported beside a comparison's verdicts.
///
/// # Example
///
/// ```no_run
/// use nnbench::torch::{tch::{Device, Kind, Tensor}, TorchScript};
///
/// #[nnbench::product(model = [TorchScript::new("models/mlp.pt", Device::Cpu)])]
/// fn logits(model: &nnbench::torch::tch::CModule) -> nnbench::Result<f64> {
///     let input = Tensor::zeros([32, 784], (Kind::Float, Device::Cpu));
///     Ok(model.forward_ts(&[input])?.double_value(&[0, 0]))
/// }
/// ```
#[derive(Clone, Hash, PartialEq, Eq)]
pub struct TorchScript {
    path: PathBuf,
    device: Device,
}

impl TorchScript {
    /// The module saved at `path`, to load onto `device`.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Device, TorchScript};
    /// let model = TorchScript::new("models/resnet18.pt", Device::Cpu);
    /// assert_eq!(format!("{model:?}"), "resnet18.pt@cpu");
    /// ```
    pub fn new(path: impl Into<PathBuf>, device: Device) -> Self {
        Self {
            path: path.into(),
            device,
        }
    }

    /// Where the module is saved.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Device, TorchScript};
    /// assert!(TorchScript::new("m.pt", Device::Cpu).path().ends_with("m.pt"));
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The device it loads onto.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::Device, TorchScript};
    /// assert_eq!(TorchScript::new("m.pt", Device::Cpu).device(), Device::Cpu);
    /// ```
    pub fn device(&self) -> Device {
        self.device
    }
}

impl std::fmt::Debug for TorchScript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.path.file_name().unwrap_or(self.path.as_os_str());
        write!(f, "{}@{}", name.to_string_lossy(), device_name(self.device))
    }
}

/// `cpu`, `cuda:0`, `mps`: as torch writes devices.
pub(super) fn device_name(device: Device) -> String {
    match device {
        Device::Cpu => "cpu".into(),
        Device::Cuda(index) => format!("cuda:{index}"),
        Device::Mps => "mps".into(),
        Device::Vulkan => "vulkan".into(),
    }
}

impl Memo for TorchScript {
    type Value = CModule;

    fn compute(&self) -> Result<CModule> {
        let context = |e: tch::TchError| {
            Error::from(e).context(format!(
                "loading the TorchScript module {} onto {}",
                self.path.display(),
                device_name(self.device)
            ))
        };
        let mut module = CModule::load_on_device(&self.path, self.device).map_err(context)?;
        module.f_set_eval().map_err(context)?;
        Ok(module)
    }

    /// Bytes of its parameters in host memory.
    fn size_of(&self, module: &CModule) -> Option<u64> {
        parameter_bytes(module, true)
    }

    /// Bytes of its parameters on the GPU.
    fn device_bytes(&self, module: &CModule) -> u64 {
        parameter_bytes(module, false).unwrap_or(0)
    }

    fn fingerprint(&self) -> Result<Option<String>> {
        file_fingerprint(&self.path).map(Some)
    }
}

/// Bytes of `module`'s parameters in host memory, or elsewhere.
fn parameter_bytes(module: &CModule, host: bool) -> Option<u64> {
    let parameters = module.named_parameters().ok()?;
    Some(
        parameters
            .iter()
            .filter(|(_, t)| (t.device() == Device::Cpu) == host)
            .map(|(_, t)| super::tensor::tensor_bytes(t))
            .sum(),
    )
}
