//! torch's `nn.LinearCrossEntropyLoss`: a [`Linear`] head (`C * prod(out_features)` outputs,
//! stored 2-d as torch's) followed by the cross entropy, computed by
//! [`linear_cross_entropy`](crate::functional::linear_cross_entropy).

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::functional::{linear_cross_entropy, LinearCrossEntropyOptions};
use crate::module::{py_bool, py_float, py_tuple, Buffer};
use crate::Linear;

/// torch's `nn.LinearCrossEntropyLoss(in_features, num_classes, *, out_features=(), bias=False,
/// reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None)`. State
/// dict as torch's: `weight` (when given), `linear.weight`, `linear.bias`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct LinearCrossEntropyLoss {
    /// per-class weight (buffer, `[num_classes]`)
    pub weight: Option<Buffer>,
    /// the projection, `[num_classes * prod(out_features), in_features]`
    pub linear: Linear,
    /// the number of classes `C`
    #[module(skip)]
    pub num_classes: usize,
    /// the extra dims of the K-dimensional loss (empty: none)
    #[module(skip)]
    pub out_features: Vec<usize>,
    /// `"none"`, `"mean"` or `"sum"`
    #[module(skip)]
    pub reduction: &'static str,
    /// target value that is left out (`None`: torch's -100 for class indices)
    #[module(skip)]
    pub ignore_index: Option<i64>,
    /// label smoothing in `[0, 1]`
    #[module(skip)]
    pub label_smoothing: f64,
    /// the chunking options (accepted, without effect on the result)
    #[module(skip)]
    pub options: Option<LinearCrossEntropyOptions>,
}

impl LinearCrossEntropyLoss {
    /// torch's constructor with its checks and messages (`weight` `[num_classes]`,
    /// `label_smoothing` in `[0, 1]`, `options` valid); the linear layer is made as `Linear`'s
    /// (`dtype`, torch's initialization).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        in_features: usize,
        num_classes: usize,
        out_features: &[usize],
        bias: bool,
        dtype: DType,
        reduction: &'static str,
        weight: Option<Tensor>,
        ignore_index: Option<i64>,
        label_smoothing: f64,
        options: Option<LinearCrossEntropyOptions>,
    ) -> Result<Self> {
        if let Some(w) = &weight {
            if w.dims() != [num_classes].as_slice() {
                return Err(Error::msg(format!(
                    "expected weight shape to be {}, got {}",
                    py_tuple(&[num_classes]),
                    py_tuple(w.dims())
                )));
            }
        }
        if !(0.0..=1.0).contains(&label_smoothing) {
            return Err(Error::msg(format!(
                "expected label_smoothing to be in range [0, 1], got {}",
                py_float(label_smoothing)
            )));
        }
        if !["none", "mean", "sum"].contains(&reduction) {
            return Err(Error::msg(format!("{reduction} is not a valid value for reduction")));
        }
        if let Some(o) = &options {
            o.validate()?;
        }
        let outputs = out_features.iter().product::<usize>() * num_classes;
        Ok(LinearCrossEntropyLoss {
            weight: weight.map(Buffer),
            linear: Linear::with_dtype(in_features, outputs, bias, dtype)?,
            num_classes,
            out_features: out_features.to_vec(),
            reduction,
            ignore_index,
            label_smoothing,
            options,
        })
    }

    /// torch's defaults: `LinearCrossEntropyLoss(in_features, num_classes)` (float32, no bias).
    pub fn with_defaults(in_features: usize, num_classes: usize) -> Result<Self> {
        Self::new(in_features, num_classes, &[], false, DType::default_float(), "mean", None, None, 0.0, None)
    }

    /// The loss of `input` (`[in_features]` or `[N, in_features]`) against `target`: the
    /// linear weight reshaped to `[C, *out_features, in_features]`, then
    /// [`linear_cross_entropy`].
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<Tensor> {
        let in_features = self.linear.weight.dims()[1];
        let mut wdims = vec![self.num_classes];
        wdims.extend_from_slice(&self.out_features);
        let bias = self.linear.bias.as_ref().map(|b| b.reshape(wdims.clone())).transpose()?;
        wdims.push(in_features);
        let linear_weight = self.linear.weight.reshape(wdims)?;
        linear_cross_entropy(
            input,
            &linear_weight,
            target,
            bias.as_ref(),
            self.weight.as_deref(),
            self.reduction,
            self.ignore_index,
            self.label_smoothing,
            self.options.as_ref(),
        )
    }

    /// torch's `extra_repr`: `in_features=3, num_classes=4, out_features=(), bias=False,
    /// reduction=mean, ignore_index=None, label_smoothing=0.0, options=None`.
    fn extra_repr_text(&self) -> String {
        format!(
            "in_features={}, num_classes={}, out_features={}, bias={}, reduction={}, ignore_index={}, label_smoothing={}, options={}",
            self.linear.weight.dims()[1],
            self.num_classes,
            py_tuple(&self.out_features),
            py_bool(self.linear.bias.is_some()),
            self.reduction,
            self.ignore_index.map_or("None".to_string(), |i| i.to_string()),
            py_float(self.label_smoothing),
            self.options.as_ref().map_or("None".to_string(), LinearCrossEntropyOptions::repr)
        )
    }
}
