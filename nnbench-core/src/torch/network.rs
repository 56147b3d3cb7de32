//! A tch `nn` model as a memo's value.

use std::sync::{Mutex, PoisonError};

use tch::nn::{self, ModuleT};
use tch::{Device, Tensor};

use super::NamedTensors;
use crate::{Error, Result};

/// A model built from tch's `nn` layers on a `VarStore`, held by the memo
/// cache and evaluated by cases: the value of a model memo.
///
/// Layers hold tensors, which are not `Sync`, so the network is kept behind
/// a lock that [`forward`](Self::forward) takes (uncontended: a run's cases
/// go one at a time). `forward` runs it in eval mode (`train = false`:
/// dropout off, batch norm on its running statistics) without gradients.
///
/// # Example
///
/// ```
/// use nnbench::torch::tch::{nn, Device, Kind, Tensor};
/// use nnbench::torch::{NamedTensors, Network};
///
/// fn mlp(root: &nn::Path) -> nn::Sequential {
///     nn::seq().add(nn::linear(root / "fc", 4, 2, Default::default()))
/// }
///
/// // Weights from training, or a disk entry.
/// let weights = NamedTensors::new(vec![
///     ("fc.weight".into(), Tensor::ones([2, 4], (Kind::Float, Device::Cpu))),
///     ("fc.bias".into(), Tensor::zeros([2], (Kind::Float, Device::Cpu))),
/// ]);
/// let net = Network::from_weights(&weights, Device::Cpu, mlp).unwrap();
/// let out = net.forward(&Tensor::ones([1, 4], (Kind::Float, Device::Cpu)));
/// assert_eq!(out.double_value(&[0, 0]), 4.0);
/// ```
#[derive(Debug)]
pub struct Network<N> {
    vs: nn::VarStore,
    net: Mutex<N>,
}

impl<N: ModuleT> Network<N> {
    /// Holds `net`, whose variables live in `vs`.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::{nn, Device}, Network};
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let net = nn::linear(vs.root() / "fc", 8, 1, Default::default());
    /// let network = Network::new(vs, net);
    /// assert_eq!(network.weights().len(), 2);
    /// ```
    pub fn new(vs: nn::VarStore, net: N) -> Self {
        Self {
            vs,
            net: Mutex::new(net),
        }
    }

    /// Builds the network with `build` on a new `VarStore` on `device`, and
    /// sets its variables to `weights`, by name.
    ///
    /// # Errors
    ///
    /// When a variable the network has is not among `weights`, or its shape
    /// differs.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::torch::{tch::{nn, Device}, NamedTensors, Network};
    /// let missing = Network::from_weights(&NamedTensors::default(), Device::Cpu, |root| {
    ///     nn::linear(root / "fc", 8, 1, Default::default())
    /// });
    /// assert!(missing.unwrap_err().to_string().contains("the weights have no `fc."));
    /// ```
    pub fn from_weights(
        weights: &NamedTensors,
        device: Device,
        build: impl FnOnce(&nn::Path) -> N,
    ) -> Result<Self> {
        let vs = nn::VarStore::new(device);
        let net = build(&vs.root());
        let _no_grad = tch::no_grad_guard();
        let mut variables: Vec<(String, Tensor)> = vs.variables().into_iter().collect();
        variables.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, mut variable) in variables {
            let value = weights
                .get(&name)
                .ok_or_else(|| Error::msg(format!("the weights have no `{name}`")))?;
            if value.size() != variable.size() {
                return Err(Error::msg(format!(
                    "`{name}` is {:?} in the weights and {:?} in the network",
                    value.size(),
                    variable.size()
                )));
            }
            variable.f_copy_(value)?;
        }
        Ok(Self::new(vs, net))
    }

    /// The network's output for `xs`, in eval mode, without gradients.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::{nn, Device, Kind, Tensor}, Network};
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let fc = nn::linear(vs.root(), 3, 1, Default::default());
    /// let net = Network::new(vs, fc);
    /// assert_eq!(net.forward(&Tensor::zeros([5, 3], (Kind::Float, Device::Cpu))).size(), [5, 1]);
    /// ```
    pub fn forward(&self, xs: &Tensor) -> Tensor {
        let _no_grad = tch::no_grad_guard();
        let net = self.net.lock().unwrap_or_else(PoisonError::into_inner);
        net.forward_t(xs, false)
    }
}

impl<N> Network<N> {
    /// Where its variables live.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::{nn, Device}, Network};
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let fc = nn::linear(vs.root(), 3, 1, Default::default());
    /// let net = Network::new(vs, fc);
    /// assert_eq!(net.var_store().device(), Device::Cpu);
    /// ```
    pub fn var_store(&self) -> &nn::VarStore {
        &self.vs
    }

    /// Its variables by name (sharing their storage): what to save.
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::{nn, Device}, Network};
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let fc = nn::linear(vs.root() / "fc", 3, 1, Default::default());
    /// let net = Network::new(vs, fc);
    /// assert!(net.weights().get("fc.bias").is_some());
    /// ```
    pub fn weights(&self) -> NamedTensors {
        let mut variables: Vec<(String, Tensor)> = self
            .vs
            .variables()
            .into_iter()
            .map(|(name, t)| (name, t.detach()))
            .collect();
        variables.sort_by(|a, b| a.0.cmp(&b.0));
        NamedTensors::new(variables)
    }

    /// Bytes of its variables in host memory: a memo's
    /// [`size_of`](crate::Memo::size_of).
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::{nn, Device}, Network};
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let fc = nn::linear(vs.root(), 3, 1, Default::default());
    /// let net = Network::new(vs, fc);
    /// assert_eq!(net.host_bytes(), (3 + 1) * 4);
    /// ```
    pub fn host_bytes(&self) -> u64 {
        self.weights().host_bytes()
    }

    /// Bytes of its variables on a GPU: a memo's
    /// [`device_bytes`](crate::Memo::device_bytes).
    ///
    /// # Example
    ///
    /// ```
    /// # use nnbench::torch::{tch::{nn, Device}, Network};
    /// let vs = nn::VarStore::new(Device::Cpu);
    /// let fc = nn::linear(vs.root(), 3, 1, Default::default());
    /// let net = Network::new(vs, fc);
    /// assert_eq!(net.device_bytes(), 0);
    /// ```
    pub fn device_bytes(&self) -> u64 {
        self.weights().device_bytes()
    }
}
