//! `segment_reduce`: reductions over consecutive segments of one dim (given by their lengths or
//! offsets), with torch's results for empty segments and `initial`, and its gradients.

use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::autograd::{Function, FunctionCtx};
use crate::Tensor;

/// The reductions of [`Tensor::segment_reduce`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduce {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

impl Reduce {
    fn parse(name: &str) -> Result<Reduce> {
        Ok(match name {
            "sum" => Reduce::Sum,
            "mean" => Reduce::Mean,
            "max" | "amax" => Reduce::Max,
            "min" | "amin" => Reduce::Min,
            "prod" => Reduce::Prod,
            other => {
                return Err(Error::msg(format!(
                    "reduce argument must be either sum, prod, mean, amax or amin, got {other}"
                )))
            }
        })
    }
}

/// The layout of a segmented reduction: `data` as `[outer, len, inner]` (`len` the size of the
/// reduced dim), `seg` segments per outer index.
struct Layout {
    outer: usize,
    len: usize,
    inner: usize,
    seg: usize,
    /// `outer × seg` (start, length) pairs along the reduced dim.
    spans: Vec<(usize, usize)>,
}

/// The forward on the host; the backward in tensor ops (differentiable in the incoming gradient).
struct SegmentReduceFn {
    reduce: Reduce,
    initial: Option<f64>,
    layout: Layout,
    /// The reduced dim.
    axis: usize,
    /// The output's shape.
    out_dims: Vec<usize>,
}

impl SegmentReduceFn {
    /// `[outer, len, inner]` int64: the segment of each position (`seg` for none).
    fn segment_index(&self, device: oxtorch_core::Device) -> Result<Tensor> {
        let l = &self.layout;
        let mut idx = vec![l.seg as i64; l.outer * l.len * l.inner];
        for o in 0..l.outer {
            for s in 0..l.seg {
                let (start, n) = l.spans[o * l.seg + s];
                for p in start..start + n {
                    for j in 0..l.inner {
                        idx[(o * l.len + p) * l.inner + j] = s as i64;
                    }
                }
            }
        }
        Tensor::from_vec_on(idx, [l.outer, l.len, l.inner], device)
    }
}

impl Function for SegmentReduceFn {
    fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let data = &inputs[0];
        let l = &self.layout;
        let x = data.detach().to_dtype(DType::F64)?.contiguous()?.to_vec::<f64>()?;
        let at = |o: usize, p: usize, j: usize| x[(o * l.len + p) * l.inner + j];
        let mut out = vec![0.0; l.outer * l.seg * l.inner];
        // Per input position: the factor its gradient gets (prod) or whether it is the extremum
        // (max/min); per segment: the number of positions equal to the extremum.
        let mut factor = vec![0.0; if ctx.needs_input_grad()[0] { x.len() } else { 0 }];
        let mut count = vec![1.0; if factor.is_empty() { 0 } else { out.len() }];
        for o in 0..l.outer {
            for s in 0..l.seg {
                let (start, n) = l.spans[o * l.seg + s];
                for j in 0..l.inner {
                    let vals = (start..start + n).map(|p| at(o, p, j));
                    let init = self.initial;
                    let v = match self.reduce {
                        Reduce::Sum => init.unwrap_or(0.0) + vals.sum::<f64>(),
                        Reduce::Mean => match (n, init) {
                            (0, Some(i)) => i,
                            (0, None) => f64::NAN,
                            (n, i) => (i.unwrap_or(0.0) + vals.sum::<f64>()) / n as f64,
                        },
                        Reduce::Max => vals.fold(init.unwrap_or(f64::NEG_INFINITY), |a, b| {
                            if a.is_nan() || b.is_nan() {
                                f64::NAN
                            } else {
                                a.max(b)
                            }
                        }),
                        Reduce::Min => vals.fold(init.unwrap_or(f64::INFINITY), |a, b| {
                            if a.is_nan() || b.is_nan() {
                                f64::NAN
                            } else {
                                a.min(b)
                            }
                        }),
                        Reduce::Prod => vals.fold(init.unwrap_or(1.0), |a, b| a * b),
                    };
                    let oi = (o * l.seg + s) * l.inner + j;
                    out[oi] = v;
                    if factor.is_empty() {
                        continue;
                    }
                    let pos = |p: usize| (o * l.len + p) * l.inner + j;
                    match self.reduce {
                        Reduce::Max | Reduce::Min => {
                            let mut c = 0usize;
                            for p in start..start + n {
                                let xv = at(o, p, j);
                                if xv == v || (xv.is_nan() && v.is_nan()) {
                                    factor[pos(p)] = 1.0;
                                    c += 1;
                                }
                            }
                            count[oi] = c.max(1) as f64;
                        }
                        Reduce::Prod => {
                            // The product of the others (and `initial`), by prefix and suffix.
                            let mut prefix = init.unwrap_or(1.0);
                            for p in start..start + n {
                                factor[pos(p)] = prefix;
                                prefix *= at(o, p, j);
                            }
                            let mut suffix = 1.0;
                            for p in (start..start + n).rev() {
                                factor[pos(p)] *= suffix;
                                suffix *= at(o, p, j);
                            }
                        }
                        Reduce::Mean => count[oi] = n.max(1) as f64,
                        Reduce::Sum => {}
                    }
                }
            }
        }
        let device = data.device();
        let result = Tensor::from_vec_on(out, self.out_dims.clone(), device)?.to_dtype(data.dtype())?;
        if !factor.is_empty() {
            let dtype = data.dtype();
            let factor = Tensor::from_vec_on(factor, [l.outer, l.len, l.inner], device)?.to_dtype(dtype)?;
            let count = Tensor::from_vec_on(count, [l.outer, l.seg, l.inner], device)?.to_dtype(dtype)?;
            ctx.save_for_backward(&[&factor, &count]);
        }
        Ok(vec![result])
    }

    fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let saved = ctx.saved_tensors()?;
        let (factor, count) = (&saved[0], &saved[1]);
        let l = &self.layout;
        let mut g = grads[0].reshape([l.outer, l.seg, l.inner])?;
        match self.reduce {
            Reduce::Mean => g = g.div(count)?,
            // torch's kernel shares a gradient among tied extrema only where it is positive.
            Reduce::Max | Reduce::Min => g = g.gt(0.0)?.where_self(&g.div(count)?, &g)?,
            Reduce::Sum | Reduce::Prod => {}
        }
        // One zero segment appended for the positions in no segment.
        let zero = Tensor::zeros([l.outer, 1, l.inner], g.same_options())?;
        let g = Tensor::cat(&[&g, &zero], 1)?;
        let mut gx = g.gather(1, &self.segment_index(g.device())?)?;
        match self.reduce {
            // (selected, not multiplied: an infinite gradient leaves the other positions at 0)
            Reduce::Max | Reduce::Min => gx = factor.ne(0.0)?.where_self(&gx, 0.0)?,
            Reduce::Prod => gx = gx.mul(factor)?,
            Reduce::Sum | Reduce::Mean => {}
        }
        let mut data_dims = self.out_dims.clone();
        data_dims[self.axis] = l.len;
        Ok(vec![Some(gx.reshape(data_dims)?)])
    }

    fn name(&self) -> &'static str {
        "SegmentReduceBackward0"
    }
}

impl Tensor {
    /// `torch.segment_reduce(self, reduce, lengths=lengths, indices=indices, offsets=offsets,
    /// axis=axis, unsafe=unsafe_, initial=initial)`: reduces consecutive segments of dim `axis`
    /// of `self` (float dtypes). The segments are given by `lengths` (`[*, S]`, int32/int64,
    /// `*` = `self.shape[:axis]`) or `offsets` (`[*, S + 1]`, their start positions and the end);
    /// the result is `self.shape[:axis] + [S] + self.shape[axis+1:]`. `reduce`: `"sum"`,
    /// `"mean"`, `"max"`/`"amax"`, `"min"`/`"amin"`, `"prod"`. An empty segment gives `initial`
    /// if given, else 0 (sum), NaN (mean), -inf (max), inf (min), 1 (prod); with `initial` every
    /// segment starts from it (the mean divides `initial + Σ` by the length). Max and min
    /// propagate NaN. Unless `unsafe_`, lengths must be non-negative and sum to `self.size(axis)`.
    /// `indices` is refused as in torch. Computed on the host in float64; the gradient is torch's
    /// (ties of max/min share a positive gradient equally and each get a negative one whole, as
    /// torch's kernel does; prod gets the product of the others), built from the
    /// incoming gradient in tensor ops.
    #[allow(clippy::too_many_arguments)]
    pub fn segment_reduce(
        &self,
        reduce: &str,
        lengths: Option<&Tensor>,
        indices: Option<&Tensor>,
        offsets: Option<&Tensor>,
        axis: isize,
        unsafe_: bool,
        initial: Option<f64>,
    ) -> Result<Tensor> {
        let axis = wrap_dim(axis, self.rank())?;
        if indices.is_some() {
            return Err(Error::msg("segment_reduce(): indices based reduction is not supported yet."));
        }
        if lengths.is_none() && offsets.is_none() {
            return Err(Error::msg("segment_reduce(): Either lengths or offsets must be defined."));
        }
        let reduce = Reduce::parse(reduce)?;
        let (segs, what, kernel) = match offsets {
            Some(o) => (o, "offsets", "_segment_reduce_offsets_cpu_kernel1"),
            None => (lengths.expect("checked above"), "lengths", "_segment_reduce_lengths_cpu_kernel1"),
        };
        if self.rank() < segs.rank() {
            return Err(Error::shape(format!(
                "segment_reduce(): Expected data.dim() >= {what}.dim(), but got {} and {}",
                self.rank(),
                segs.rank()
            )));
        }
        if axis as isize != segs.rank() as isize - 1 {
            return Err(Error::shape(format!(
                "segment_reduce(): Expected axis to be the last dimension of {what} but got {axis}."
            )));
        }
        let outer_dims = &self.dims()[..axis];
        if segs.dims()[..axis] != *outer_dims {
            return Err(Error::shape(format!(
                "segment_reduce(): Expected {what}.shape[:-1] to be data.shape[:axis] {outer_dims:?}, but got {:?}",
                &segs.dims()[..axis]
            )));
        }
        if !matches!(segs.dtype(), DType::I32 | DType::I64) {
            return Err(Error::UnsupportedDType { op: kernel, dtype: segs.dtype() });
        }
        if !matches!(self.dtype(), DType::F16 | DType::BF16 | DType::F32 | DType::F64) {
            return Err(Error::UnsupportedDType { op: "_segment_reduce_cpu", dtype: self.dtype() });
        }
        let outer: usize = outer_dims.iter().product();
        let len = self.dims()[axis];
        let inner: usize = self.dims()[axis + 1..].iter().product();
        let raw = segs.to_dtype(DType::I64)?.contiguous()?.to_vec::<i64>()?;
        let last = segs.dims()[axis];
        // Per outer index: the (start, length) of each segment.
        let mut spans = Vec::new();
        let seg = if offsets.is_some() {
            if last == 0 {
                return Err(Error::shape("segment_reduce(): offsets must have at least one entry"));
            }
            for row in raw.chunks(last) {
                for w in row.windows(2) {
                    if w[0] < 0 || w[1] < w[0] || w[1] as usize > len {
                        return Err(Error::msg(format!(
                            "segment_reduce(): offsets must be non-decreasing and within [0, {len}]"
                        )));
                    }
                    spans.push((w[0] as usize, (w[1] - w[0]) as usize));
                }
            }
            last - 1
        } else {
            if raw.iter().any(|&v| v < 0) {
                return Err(Error::msg("lengths contains negative value!"));
            }
            for row in raw.chunks(last.max(1)).take(if last == 0 { 0 } else { outer }) {
                // (summed with overflow checks: huge lengths are an error, never a wrapped span)
                let total = row.iter().try_fold(0usize, |acc, &n| acc.checked_add(usize::try_from(n).ok()?));
                if total.is_none_or(|t| (!unsafe_ && t != len) || t > len) {
                    return Err(Error::msg(
                        "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.",
                    ));
                }
                let mut start = 0usize;
                for &n in row {
                    spans.push((start, n as usize));
                    start += n as usize;
                }
            }
            if last == 0 && !unsafe_ && len != 0 && outer != 0 {
                return Err(Error::msg(
                    "segment_reduce(): Expected all rows of lengths along axis to sum to data.size(lengths.dim()-1) when !unsafe.",
                ));
            }
            last
        };
        let mut out_dims = self.dims().to_vec();
        out_dims[axis] = seg;
        let layout = Layout { outer, len, inner, seg, spans };
        // torch converts `initial` to the data's dtype first (an overflow is its error).
        let initial = match initial {
            Some(v) => {
                oxtorch_core::Scalar::Float(v).check_fits(self.dtype())?;
                Some(Tensor::full((), v, (self.dtype(), oxtorch_core::Device::Cpu))?.item::<f64>()?)
            }
            None => None,
        };
        let f = SegmentReduceFn { reduce, initial, layout, axis, out_dims };
        Ok(f.apply(std::slice::from_ref(self))?.remove(0))
    }
}
