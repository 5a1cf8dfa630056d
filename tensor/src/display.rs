//! `Display` prints like torch's `repr`; `Debug` shows shape, dtype and device.

use std::fmt;

use oxtorch_core::{Device, Scalar};

use crate::print::{format_tensor, PrintValue};
use crate::Tensor;

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.device().is_cpu() {
            // Print the host copy, with the device suffix torch adds.
            let host = match self.download() {
                Ok(h) => h,
                Err(e) => return write!(f, "tensor(<{} values on {}: {e}>)", self.numel(), self.device()),
            };
            let get = |i: usize| match host.get_flat(i) {
                Scalar::Bool(b) => PrintValue::Bool(b),
                Scalar::Int(v) => PrintValue::Int(v),
                Scalar::Float(v) => PrintValue::Float(v),
            };
            let mut suffixes = vec![format!("device='{}'", self.device())];
            suffixes.extend(self.autograd_suffix());
            return f.write_str(&format_tensor(self.dims(), self.dtype(), &get, &suffixes));
        }
        let get = |i: usize| match self.get_flat(i) {
            Scalar::Bool(b) => PrintValue::Bool(b),
            Scalar::Int(v) => PrintValue::Int(v),
            Scalar::Float(v) => PrintValue::Float(v),
        };
        let mut suffixes = Vec::new();
        if self.device() != Device::Cpu {
            suffixes.push(format!("device='{}'", self.device()));
        }
        suffixes.extend(self.autograd_suffix());
        f.write_str(&format_tensor(self.dims(), self.dtype(), &get, &suffixes))
    }
}

impl Tensor {
    /// torch's last suffix: `grad_fn=<MulBackward0>` for a recorded result, `requires_grad=True`
    /// for a leaf that requires grad.
    fn autograd_suffix(&self) -> Option<String> {
        match self.grad_fn() {
            Some(node) => Some(format!("grad_fn=<{}>", node.name())),
            None => self.requires_grad().then(|| "requires_grad=True".to_string()),
        }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor(shape={}, dtype={}, device={})", self.shape(), self.dtype(), self.device())
    }
}
