//! Reductions: sum, mean, prod, max/min (with indices), argmax/argmin, all/any.

use oxtorch_core::ops::{ArgReduceOp, Prim, ReduceOp};
use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::dims::IntoDims;
use crate::dispatch::apply_reshaped;
use crate::Tensor;

impl Tensor {
    /// Wraps, sorts and de-duplicates reduction dims; an empty list means every dim.
    pub(crate) fn reduction_dims(&self, dims: Vec<isize>) -> Result<Vec<usize>> {
        if self.rank() == 0 {
            // A 0-d tensor takes dim 0 and -1, each once.
            let mut seen = false;
            for &d in &dims {
                let w = wrap_dim(d, 0)?;
                if std::mem::replace(&mut seen, true) {
                    return Err(Error::msg(format!("dim {w} appears multiple times in the list of dims")));
                }
            }
            return Ok(vec![]);
        }
        if dims.is_empty() {
            return Ok((0..self.rank()).collect());
        }
        let mut out = Vec::with_capacity(dims.len());
        for d in dims {
            let w = wrap_dim(d, self.rank())?;
            if out.contains(&w) {
                return Err(Error::msg(format!("dim {w} appears multiple times in the list of dims")));
            }
            out.push(w);
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Drops the (size-1) reduced dims unless `keepdim`.
    pub(crate) fn finish_reduction(t: Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
        if keepdim || dims.is_empty() {
            return Ok(t);
        }
        let shape: Vec<usize> =
            t.dims().iter().enumerate().filter(|(i, _)| !dims.contains(i)).map(|(_, &d)| d).collect();
        t.view(shape)
    }

    fn reduce(&self, op: ReduceOp, dims: Vec<isize>, keepdim: bool) -> Result<Tensor> {
        let dims = self.reduction_dims(dims)?;
        let x = match op {
            ReduceOp::Sum | ReduceOp::Prod if !self.dtype().is_float() => self.to_dtype(DType::I64)?,
            ReduceOp::All | ReduceOp::Any => self.to_dtype(DType::Bool)?,
            ReduceOp::Max | ReduceOp::Min if self.numel() == 0 && dims.iter().any(|&d| self.dims()[d] == 0) => {
                return Err(Error::msg(format!(
                    "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
                    op.name()
                )))
            }
            _ => self.clone(),
        };
        let out = x.reduce_prim(op, &dims, keepdim)?;
        // torch keeps uint8 for all/any on uint8 input.
        if matches!(op, ReduceOp::All | ReduceOp::Any) && self.dtype() == DType::U8 {
            return out.to_dtype(DType::U8);
        }
        Ok(out)
    }

    /// Sum of all elements (int64 for integer and bool inputs).
    pub fn sum_all(&self) -> Result<Tensor> {
        self.reduce(ReduceOp::Sum, vec![], false)
    }

    /// Sum over `dims` (an empty list means all).
    pub fn sum(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        let dims = dims.into_dims();
        let named = if dims.is_empty() { "SumBackward0" } else { "SumBackward1" };
        self.reduce(ReduceOp::Sum, dims, keepdim).map(|t| self.named(t, named))
    }

    /// Product of all elements.
    pub fn prod_all(&self) -> Result<Tensor> {
        self.reduce(ReduceOp::Prod, vec![], false)
    }

    /// Product over `dims`.
    pub fn prod(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        let dims = dims.into_dims();
        let named = if dims.is_empty() { "ProdBackward0" } else { "ProdBackward1" };
        self.reduce(ReduceOp::Prod, dims, keepdim).map(|t| self.named(t, named))
    }

    /// Mean of all elements (float dtypes only, as in torch).
    pub fn mean_all(&self) -> Result<Tensor> {
        self.mean(Vec::<isize>::new(), false)
    }

    /// Mean over `dims` (float dtypes only; f16 and bf16 accumulate in f32).
    pub fn mean(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        if !self.dtype().is_float() {
            return Err(Error::msg(format!(
                "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: {}",
                self.dtype().scalar_type_name()
            )));
        }
        let dims = dims.into_dims();
        let reduced = self.reduction_dims(dims.clone())?;
        let n: usize = reduced.iter().map(|&d| self.dims()[d]).product();
        // f16/bf16 as torch does on the CPU: widened to f32, summed, divided, rounded once (a
        // half-precision sum of 70 000 ones is already infinite).
        let (x, dt) = self.upcast()?;
        let named = if dims.is_empty() { "MeanBackward0" } else { "MeanBackward1" };
        let out = x.reduce(ReduceOp::Sum, dims, keepdim)?.div(n as f64)?.to_dtype(dt)?;
        Ok(self.named(out, named))
    }

    /// `out`, made from `self` by a composite op, with its `grad_fn` named as torch's node for
    /// the op.
    pub(crate) fn named(&self, out: Tensor, name: &'static str) -> Tensor {
        out.alias_grad_fn(self, name);
        out
    }

    /// Largest element (NaN if any is NaN).
    pub fn max(&self) -> Result<Tensor> {
        let v = crate::autograd::no_grad(|| self.reduce(ReduceOp::Max, vec![], false))?;
        super::stats::evenly_distributed_as(self, v, "MaxBackward1")
    }

    /// Smallest element (NaN if any is NaN).
    pub fn min(&self) -> Result<Tensor> {
        let v = crate::autograd::no_grad(|| self.reduce(ReduceOp::Min, vec![], false))?;
        super::stats::evenly_distributed_as(self, v, "MinBackward1")
    }

    /// Maximum over `dims` without indices (torch's `amax`).
    pub fn amax(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Max, dims.into_dims(), keepdim).map(|t| self.named(t, "AmaxBackward0"))
    }

    /// Minimum over `dims` without indices (torch's `amin`).
    pub fn amin(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        self.reduce(ReduceOp::Min, dims.into_dims(), keepdim).map(|t| self.named(t, "AminBackward0"))
    }

    fn arg_reduce(&self, op: ArgReduceOp, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let d = wrap_dim(dim, self.rank())?;
        if self.rank() > 0 && self.dims()[d] == 0 {
            let name = if op == ArgReduceOp::Max { "max" } else { "min" };
            return Err(Error::msg(format!("{name}(): Expected reduction dim {d} to have non-zero size.")));
        }
        let dims = if self.rank() == 0 { vec![] } else { vec![d] };
        let shape = self.reduced_shape(&dims, keepdim);
        let prim = Prim::ArgReduce { op, dim: d };
        let mut outs = apply_reshaped(&prim, &[self], self.device(), Some(&[shape.clone(), shape]))?;
        let idx = outs.pop().expect("two outputs");
        let val = outs.pop().expect("two outputs");
        Ok((val, idx))
    }

    /// Maximum along `dim` and the (int64) index of its first occurrence.
    pub fn max_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.arg_reduce(ArgReduceOp::Max, dim, keepdim)
    }

    /// Minimum along `dim` and the (int64) index of its first occurrence.
    pub fn min_dim(&self, dim: isize, keepdim: bool) -> Result<(Tensor, Tensor)> {
        self.arg_reduce(ArgReduceOp::Min, dim, keepdim)
    }

    /// Index of the maximum along `dim`, or into the flattened tensor when `dim` is `None`.
    pub fn argmax(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        self.arg_index(ArgReduceOp::Max, dim, keepdim)
    }

    /// Index of the minimum along `dim`, or into the flattened tensor when `dim` is `None`.
    pub fn argmin(&self, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        self.arg_index(ArgReduceOp::Min, dim, keepdim)
    }

    fn arg_index(&self, op: ArgReduceOp, dim: Option<isize>, keepdim: bool) -> Result<Tensor> {
        if self.dtype() == DType::Bool {
            let name = if op == ArgReduceOp::Max { "argmax" } else { "argmin" };
            return Err(Error::msg(format!("{name}(): does not support bool input")));
        }
        match dim {
            Some(d) => Ok(self.arg_reduce(op, d, keepdim)?.1),
            None => {
                if self.numel() == 0 {
                    let name = if op == ArgReduceOp::Max { "argmax" } else { "argmin" };
                    return Err(Error::msg(format!(
                        "{name}(): Expected reduction dim to be specified for input.numel() == 0."
                    )));
                }
                let idx = self.reshape([-1])?.arg_reduce(op, 0, false)?.1;
                if keepdim {
                    idx.reshape(vec![1isize; self.rank()])
                } else {
                    Ok(idx)
                }
            }
        }
    }

    /// True when every element is non-zero (0-dim bool).
    pub fn all(&self) -> Result<Tensor> {
        self.reduce(ReduceOp::All, vec![], false)
    }

    /// True when some element is non-zero (0-dim bool).
    pub fn any(&self) -> Result<Tensor> {
        self.reduce(ReduceOp::Any, vec![], false)
    }

    /// `all` over `dims`; an empty list reduces nothing (torch's `all(dim=())`: each element's
    /// truth), unlike the sums' empty list.
    pub fn all_dim(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        let dims = dims.into_dims();
        if dims.is_empty() {
            return self.truth();
        }
        self.reduce(ReduceOp::All, dims, keepdim)
    }

    /// `any` over `dims`; an empty list reduces nothing (as [`Tensor::all_dim`]).
    pub fn any_dim(&self, dims: impl IntoDims, keepdim: bool) -> Result<Tensor> {
        let dims = dims.into_dims();
        if dims.is_empty() {
            return self.truth();
        }
        self.reduce(ReduceOp::Any, dims, keepdim)
    }

    /// Each element's truth, as `all`/`any` over no dim give it: `self != 0`, uint8 for a uint8
    /// input (as their reductions keep it).
    fn truth(&self) -> Result<Tensor> {
        let t = self.ne(0)?;
        if self.dtype() == DType::U8 {
            t.to_dtype(DType::U8)
        } else {
            Ok(t)
        }
    }
}

/// Reductions with an explicit accumulation and output `dtype` (torch's `dtype=` argument).
impl Tensor {
    /// Casts to `dtype` and reduces in it (integers wrap, a bool sum is `any` and a bool product `all`).
    fn reduce_in(&self, op: ReduceOp, dims: Vec<isize>, keepdim: bool, dtype: DType) -> Result<Tensor> {
        let x = self.to_dtype(dtype)?;
        let dims = x.reduction_dims(dims)?;
        let op = match (op, dtype) {
            (ReduceOp::Sum, DType::Bool) => ReduceOp::Any,
            (ReduceOp::Prod, DType::Bool) => ReduceOp::All,
            (op, _) => op,
        };
        x.reduce_prim(op, &dims, keepdim)
    }

    /// The shape of a reduction over `dims` (size 1 there with `keepdim`, removed otherwise).
    pub(crate) fn reduced_shape(&self, dims: &[usize], keepdim: bool) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.rank());
        for (i, &d) in self.dims().iter().enumerate() {
            if !dims.contains(&i) {
                out.push(d);
            } else if keepdim {
                out.push(1);
            }
        }
        out
    }

    /// One `Reduce` prim over `dims`, its output shaped as `keepdim` says.
    fn reduce_prim(&self, op: ReduceOp, dims: &[usize], keepdim: bool) -> Result<Tensor> {
        let shape = self.reduced_shape(dims, keepdim);
        let prim = Prim::Reduce { op, dims: dims.to_vec() };
        Ok(apply_reshaped(&prim, &[self], self.device(), Some(&[shape]))?.swap_remove(0))
    }

    /// `sum(dims, keepdim, dtype=dtype)`: the input is cast to `dtype` and summed in it.
    pub fn sum_dtype(&self, dims: impl IntoDims, keepdim: bool, dtype: DType) -> Result<Tensor> {
        self.reduce_in(ReduceOp::Sum, dims.into_dims(), keepdim, dtype)
    }

    /// `prod(dims, keepdim, dtype=dtype)`: the input is cast to `dtype` and multiplied in it.
    pub fn prod_dtype(&self, dims: impl IntoDims, keepdim: bool, dtype: DType) -> Result<Tensor> {
        self.reduce_in(ReduceOp::Prod, dims.into_dims(), keepdim, dtype)
    }

    /// `mean(dims, keepdim, dtype=dtype)` with a float `dtype`: the input is cast to it first.
    pub fn mean_dtype(&self, dims: impl IntoDims, keepdim: bool, dtype: DType) -> Result<Tensor> {
        if !dtype.is_float() {
            return Err(Error::msg(format!(
                "mean(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. Got: {}",
                dtype.scalar_type_name()
            )));
        }
        self.to_dtype(dtype)?.mean(dims, keepdim)
    }
}
