//! Convolutions (`conv1d/2d/3d`) as im2col + one batched matmul per group, and transposed
//! convolutions (`conv_transpose1d/2d/3d`) as one batched matmul + col2im.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Error, Result};

use super::spread;
use crate::dispatch::apply1;
use crate::ops::linalg::opmath;
use crate::Tensor;

/// A convolution's padding: explicit sizes per spatial dim (one value spreads to all), or torch's
/// `"valid"` (none) and `"same"` (output size equals input size; stride 1 only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Padding {
    /// `padding="valid"`: no padding.
    Valid,
    /// `padding="same"`: pad so the output has the input's size (extra padding goes on the right).
    Same,
    /// Zero padding on both sides of each spatial dim.
    Explicit(Vec<usize>),
}

impl std::str::FromStr for Padding {
    type Err = Error;

    /// torch's padding strings: `"same"` or `"valid"`.
    fn from_str(s: &str) -> Result<Padding> {
        match s {
            "same" => Ok(Padding::Same),
            "valid" => Ok(Padding::Valid),
            other => Err(Error::msg(format!(
                "Invalid padding string '{other}', should be one of {{'valid', 'same'}}"
            ))),
        }
    }
}

impl From<usize> for Padding {
    fn from(p: usize) -> Self {
        Padding::Explicit(vec![p])
    }
}

impl<const N: usize> From<[usize; N]> for Padding {
    fn from(p: [usize; N]) -> Self {
        Padding::Explicit(p.to_vec())
    }
}

impl From<&[usize]> for Padding {
    fn from(p: &[usize]) -> Self {
        Padding::Explicit(p.to_vec())
    }
}

fn shape_str(d: &[usize]) -> String {
    format!("{d:?}")
}

/// Checks ranks, dtypes and channel counts; returns the input with a batch dim and whether one was
/// added.
fn check_input(
    op: &str,
    n: usize,
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
) -> Result<(Tensor, bool)> {
    let r = input.rank();
    if r != n + 1 && r != n + 2 {
        return Err(Error::shape(format!(
            "Expected {}D (unbatched) or {}D (batched) input to {op}, but got input of size: {}",
            n + 1,
            n + 2,
            shape_str(input.dims())
        )));
    }
    if weight.rank() != n + 2 {
        return Err(Error::shape(format!(
            "weight should have {} dimensions for {op}, but got weight of size {}",
            n + 2,
            shape_str(weight.dims())
        )));
    }
    if input.dtype() != weight.dtype() {
        return Err(Error::msg(format!(
            "expected scalar type {} but found {}",
            input.dtype().scalar_type_name(),
            weight.dtype().scalar_type_name()
        )));
    }
    if let Some(b) = bias {
        if b.dtype() != input.dtype() {
            return Err(Error::msg(format!(
                "Input type ({}) and bias type ({}) should be the same",
                input.dtype().name(),
                b.dtype().name()
            )));
        }
    }
    if input.dtype() == DType::Bool {
        let op = match (op.starts_with("conv_transpose"), n) {
            (true, 3) => "slow_conv_transpose3d_out_cpu",
            (true, _) => "slow_conv_transpose2d_out_cpu",
            (false, 3) => "compute_columns3d",
            (false, _) => "slow_conv2d_cpu",
        };
        return Err(Error::UnsupportedDType { op, dtype: DType::Bool });
    }
    Ok(if r == n + 1 { (input.unsqueeze(0)?, true) } else { (input.clone(), false) })
}

/// Bound on stride, padding, dilation and kernel sizes, so that the size arithmetic cannot overflow
/// (nothing real comes near).
const LIMIT: usize = i32::MAX as usize;

fn check_limit(op: &str, what: &str, v: &[usize]) -> Result<()> {
    if v.iter().any(|&x| x > LIMIT) {
        return Err(Error::msg(format!("{op}: {what} must be at most {LIMIT}, but got {v:?}")));
    }
    Ok(())
}

/// Refuses an output of `shape` whose size overflows or passes `isize::MAX` bytes of `dtype`.
fn check_numel(op: &str, shape: &[usize], dtype: DType) -> Result<()> {
    let numel = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    if numel.and_then(|m| m.checked_mul(dtype.size_in_bytes())).is_none_or(|b| b > isize::MAX as usize) {
        return Err(Error::msg(format!("{op}: output of size {shape:?} is too large")));
    }
    Ok(())
}

fn check_positive(stride: &[usize], dilation: &[usize]) -> Result<()> {
    if stride.contains(&0) {
        return Err(Error::msg("non-positive stride is not supported"));
    }
    if dilation.contains(&0) {
        return Err(Error::msg("dilation should be greater than zero"));
    }
    Ok(())
}

/// Adds `bias` (shape `[C]`) along dim 1 of an `[N, C, *]` output.
fn add_bias(out: Tensor, bias: Option<&Tensor>, op: &str) -> Result<Tensor> {
    let Some(b) = bias else { return Ok(out) };
    let c = out.dims()[1];
    if b.rank() != 1 || b.numel() != c {
        return Err(Error::shape(format!(
            "{op}: expected bias to be 1-dimensional with {c} elements, but got bias of size {} instead",
            shape_str(b.dims())
        )));
    }
    let mut shape = vec![1usize; out.rank()];
    shape[1] = c;
    out.add(&b.to_dtype(out.dtype())?.reshape(shape)?)
}

/// A copy of `x` (`[N, C, *spatial]`) with `extra[d]` zeros appended at the end of spatial dim `d`.
fn pad_end(x: &Tensor, extra: &[usize]) -> Result<Tensor> {
    if extra.iter().all(|&e| e == 0) {
        return Ok(x.clone());
    }
    let mut shape = x.dims().to_vec();
    for (d, e) in extra.iter().enumerate() {
        shape[2 + d] += e;
    }
    let out = Tensor::zeros(shape, x.same_options())?;
    let mut view = out.clone();
    for (d, &s) in x.dims()[2..].iter().enumerate() {
        view = view.narrow(2 + d as isize, 0, s)?;
    }
    view.copy_(x)?;
    Ok(out)
}

impl Tensor {
    /// N-d convolution of `self` (`[N, C_in, *spatial]` or unbatched) with `weight`
    /// (`[C_out, C_in / groups, *kernel]`); see [`Tensor::conv2d`].
    #[allow(clippy::too_many_arguments)]
    pub fn conv_nd(
        &self,
        n: usize,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: impl Into<Padding>,
        dilation: &[usize],
        groups: usize,
    ) -> Result<Tensor> {
        if crate::autocast::lowers(&[Some(self), Some(weight), bias]) {
            let low = crate::autocast::lower;
            let bias = bias.map(low).transpose()?;
            return low(self)?.conv_nd(n, &low(weight)?, bias.as_ref(), stride, padding, dilation, groups);
        }
        let op = ["conv1d", "conv2d", "conv3d"].get(n.wrapping_sub(1)).copied().unwrap_or("conv");
        let (x, unbatched) = check_input(op, n, self, weight, bias)?;
        let stride = spread(op, "stride", stride, n)?;
        let dilation = spread(op, "dilation", dilation, n)?;
        check_positive(&stride, &dilation)?;
        if groups == 0 {
            return Err(Error::msg("non-positive groups is not supported"));
        }
        let kernel = weight.dims()[2..].to_vec();
        check_limit(op, "stride", &stride)?;
        check_limit(op, "dilation", &dilation)?;
        check_limit(op, "kernel_size", &kernel)?;
        let (cout, cin_g) = (weight.dims()[0], weight.dims()[1]);
        let cin = x.dims()[1];
        if cout % groups != 0 {
            return Err(Error::shape(format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{}] instead",
                shape_str(weight.dims())
            )));
        }
        if cin_g * groups != cin {
            return Err(Error::shape(format!(
                "Given groups={groups}, weight of size {}, expected input{} to have {} channels, but got {cin} channels instead",
                shape_str(weight.dims()),
                shape_str(x.dims()),
                cin_g * groups
            )));
        }
        let (padding, x) = match padding.into() {
            Padding::Valid => (vec![0; n], x),
            Padding::Explicit(p) => {
                let p = spread(op, "padding", &p, n)?;
                check_limit(op, "padding", &p)?;
                (p, x)
            }
            Padding::Same => {
                if stride.iter().any(|&s| s != 1) {
                    return Err(Error::msg("padding='same' is not supported for strided convolutions"));
                }
                let total: Vec<usize> = (0..n).map(|d| dilation[d] * (kernel[d].max(1) - 1)).collect();
                let left: Vec<usize> = total.iter().map(|t| t / 2).collect();
                let extra: Vec<usize> = (0..n).map(|d| total[d] - 2 * left[d]).collect();
                (left, pad_end(&x, &extra)?)
            }
        };
        let spatial = x.dims()[2..].to_vec();
        for d in 0..n {
            let padded = spatial[d] + 2 * padding[d];
            let span = dilation[d] * (kernel[d].max(1) - 1) + 1;
            if padded < span {
                let list = |v: Vec<usize>| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" x ");
                return Err(Error::shape(format!(
                    "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                    list((0..n).map(|d| spatial[d] + 2 * padding[d]).collect()),
                    list((0..n).map(|d| dilation[d] * (kernel[d].max(1) - 1) + 1).collect())
                )));
            }
        }
        let dt = self.dtype();
        let cdt = opmath(dt);
        let (xb, w) = (x.to_dtype(cdt)?, weight.to_dtype(cdt)?);
        let out_sp: Vec<usize> = (0..n)
            .map(|d| NnOp::window_positions(spatial[d], kernel[d], stride[d], padding[d], dilation[d]))
            .collect();
        let mut out_shape = vec![x.dims()[0], cout];
        out_shape.extend(&out_sp);
        check_numel(op, &out_shape, cdt)?;
        let y = if n <= 2 && x.device().is_cpu() && matches!(cdt, DType::F32 | DType::F64) {
            // On the CPU: one kernel that never writes the whole im2col matrix, whose backward
            // recomputes the columns (1-D convolutions run as 2-D ones of height 1).
            let pair = |v: &[usize], one: usize| if n == 2 { [v[0], v[1]] } else { [one, v[0]] };
            let (stride, padding, dilation) = (pair(&stride, 1), pair(&padding, 0), pair(&dilation, 1));
            let prim = NnOp::Conv2d { stride, padding, dilation, groups };
            if n == 2 {
                apply1(&Prim::Nn(prim), &[&xb, &w], x.device())?
            } else {
                let (xb, w) = (xb.unsqueeze(2)?, w.unsqueeze(2)?);
                apply1(&Prim::Nn(prim), &[&xb, &w], x.device())?.squeeze_dims(2)?
            }
        } else {
            let mut cols_shape = vec![x.dims()[0], cin];
            cols_shape.extend(&kernel);
            cols_shape.extend(&out_sp);
            check_numel(op, &cols_shape, cdt)?;
            let prim = NnOp::Im2col { kernel: kernel.clone(), stride, padding, dilation };
            let cols = apply1(&Prim::Nn(prim), &[&xb], x.device())?;
            let nb = x.dims()[0];
            let l: usize = out_sp.iter().product();
            let k: usize = kernel.iter().product::<usize>() * cin_g;
            let w = w.reshape([1, groups, cout / groups, k])?;
            let cols = cols.reshape([nb, groups, k, l])?;
            let mut shape = vec![nb, cout];
            shape.extend(&out_sp);
            w.matmul(&cols)?.reshape(shape)?
        };
        let y = add_bias(y, bias, op)?.to_dtype(dt)?;
        if unbatched {
            y.squeeze_dims(0)
        } else {
            Ok(y)
        }
    }

    /// 1-D convolution (torch's `conv1d`): `self` `[N, C_in, L]` (or `[C_in, L]`), `weight`
    /// `[C_out, C_in / groups, k]`.
    pub fn conv1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: impl Into<Padding>,
        dilation: &[usize],
        groups: usize,
    ) -> Result<Tensor> {
        self.conv_nd(1, weight, bias, stride, padding, dilation, groups)
    }

    /// 2-D convolution (torch's `conv2d`): `self` `[N, C_in, H, W]` (or unbatched), `weight`
    /// `[C_out, C_in / groups, kH, kW]`, `bias` `[C_out]`; `stride`, `dilation` and explicit
    /// `padding` take one value for all dims or one per dim.
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: impl Into<Padding>,
        dilation: &[usize],
        groups: usize,
    ) -> Result<Tensor> {
        self.conv_nd(2, weight, bias, stride, padding, dilation, groups)
    }

    /// 3-D convolution (torch's `conv3d`).
    pub fn conv3d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: impl Into<Padding>,
        dilation: &[usize],
        groups: usize,
    ) -> Result<Tensor> {
        self.conv_nd(3, weight, bias, stride, padding, dilation, groups)
    }

    /// N-d transposed convolution of `self` (`[N, C_in, *spatial]` or unbatched) with `weight`
    /// (`[C_in, C_out / groups, *kernel]`); see [`Tensor::conv_transpose2d`].
    #[allow(clippy::too_many_arguments)]
    pub fn conv_transpose_nd(
        &self,
        n: usize,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: &[usize],
        output_padding: &[usize],
        groups: usize,
        dilation: &[usize],
    ) -> Result<Tensor> {
        if crate::autocast::lowers(&[Some(self), Some(weight), bias]) {
            let low = crate::autocast::lower;
            let bias = bias.map(low).transpose()?;
            return low(self)?.conv_transpose_nd(
                n,
                &low(weight)?,
                bias.as_ref(),
                stride,
                padding,
                output_padding,
                groups,
                dilation,
            );
        }
        let op = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
            .get(n.wrapping_sub(1))
            .copied()
            .unwrap_or("conv_transpose");
        let (x, unbatched) = check_input(op, n, self, weight, bias)?;
        let dt = self.dtype();
        if !dt.is_float() && dt != DType::I64 {
            let op = if n == 3 { "slow_conv_transpose3d_out_cpu" } else { "slow_conv_transpose2d_out_cpu" };
            return Err(Error::UnsupportedDType { op, dtype: dt });
        }
        let stride = spread(op, "stride", stride, n)?;
        let dilation = spread(op, "dilation", dilation, n)?;
        let padding = spread(op, "padding", padding, n)?;
        let output_padding = spread(op, "output_padding", output_padding, n)?;
        check_positive(&stride, &dilation)?;
        if groups == 0 {
            return Err(Error::msg("non-positive groups is not supported"));
        }
        for (what, v) in [("stride", &stride), ("padding", &padding), ("output_padding", &output_padding)] {
            check_limit(op, what, v)?;
        }
        check_limit(op, "dilation", &dilation)?;
        check_limit(op, "kernel_size", &weight.dims()[2..])?;
        for d in 0..n {
            if output_padding[d] >= stride[d] && output_padding[d] >= dilation[d] {
                let names: &[&str] = match n {
                    1 => &["width"],
                    2 => &["height", "width"],
                    _ => &["depth", "height", "width"],
                };
                let part = |what: &str, v: &[usize]| {
                    names.iter().zip(v).map(|(d, x)| format!("{what}_{d}: {x}")).collect::<Vec<_>>().join(" ")
                };
                return Err(Error::msg(format!(
                    "output padding must be smaller than either stride or dilation, but got {} {} {}",
                    part("output_padding", &output_padding),
                    part("stride", &stride),
                    part("dilation", &dilation)
                )));
            }
        }
        let (cin, cout_g) = (weight.dims()[0], weight.dims()[1]);
        if cin % groups != 0 {
            return Err(Error::shape(format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{}] instead",
                shape_str(weight.dims())
            )));
        }
        if x.dims()[1] != cin {
            return Err(Error::shape(format!(
                "Given transposed=1, weight of size {}, expected input{} to have {cin} channels, but got {} channels instead",
                shape_str(weight.dims()),
                shape_str(x.dims()),
                x.dims()[1]
            )));
        }
        let kernel = weight.dims()[2..].to_vec();
        let spatial = x.dims()[2..].to_vec();
        let sizes: Vec<i128> = (0..n)
            .map(|d| {
                (spatial[d] as i128 - 1) * stride[d] as i128 - 2 * padding[d] as i128
                    + (dilation[d] * (kernel[d].max(1) - 1)) as i128
                    + output_padding[d] as i128
                    + 1
            })
            .collect();
        // A size of 0 is refused as a negative one (torch's 3-d f32 kernel alone returns an empty
        // tensor there; its f64 and 1-d/2-d kernels refuse it; a 1-d input reads as 1 x L).
        if sizes.iter().any(|&s| s <= 0) {
            let per_channel = |v: Vec<String>| {
                if n == 1 {
                    format!("1 x {}", v[0])
                } else {
                    v.join(" x ")
                }
            };
            return Err(Error::shape(format!(
                "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size is too small",
                per_channel(spatial.iter().map(usize::to_string).collect()),
                per_channel(sizes.iter().map(i128::to_string).collect()),
            )));
        }
        let cdt = opmath(dt);
        let nb = x.dims()[0];
        let mut out_shape = vec![nb, groups.saturating_mul(cout_g)];
        out_shape.extend(sizes.iter().map(|&s| usize::try_from(s).unwrap_or(usize::MAX)));
        check_numel(op, &out_shape, cdt)?;
        let out_sp = out_shape[2..].to_vec();
        let l: usize = spatial.iter().product();
        let kk: usize = kernel.iter().product();
        let cin_g = cin / groups;
        let xg = x.to_dtype(cdt)?.reshape([nb, groups, cin_g, l])?;
        let wg = weight.to_dtype(cdt)?.reshape([1, groups, cin_g, cout_g * kk])?.transpose(-1, -2)?;
        let cols = wg.matmul(&xg)?.reshape([nb, groups * cout_g * kk, l])?;
        let prim =
            NnOp::Col2im { output_size: out_sp.clone(), grid: spatial, kernel, stride, padding, dilation };
        // torch's f16 kernel keeps its column buffer in f16 (bf16 goes through f32 like f32 does).
        let cols = if dt == DType::F16 { cols.to_dtype(dt)? } else { cols };
        let y = apply1(&Prim::Nn(prim), &[&cols], x.device())?.to_dtype(cdt)?;
        let y = add_bias(y, bias, op)?.to_dtype(dt)?;
        if unbatched {
            y.squeeze_dims(0)
        } else {
            Ok(y)
        }
    }

    /// 1-D transposed convolution (torch's `conv_transpose1d`, argument order as torch).
    #[allow(clippy::too_many_arguments)]
    pub fn conv_transpose1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: &[usize],
        output_padding: &[usize],
        groups: usize,
        dilation: &[usize],
    ) -> Result<Tensor> {
        self.conv_transpose_nd(1, weight, bias, stride, padding, output_padding, groups, dilation)
    }

    /// 2-D transposed convolution (torch's `conv_transpose2d`): `self` `[N, C_in, H, W]`, `weight`
    /// `[C_in, C_out / groups, kH, kW]`; output size `(in - 1) * stride - 2 * padding +
    /// dilation * (k - 1) + output_padding + 1`.
    #[allow(clippy::too_many_arguments)]
    pub fn conv_transpose2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: &[usize],
        output_padding: &[usize],
        groups: usize,
        dilation: &[usize],
    ) -> Result<Tensor> {
        self.conv_transpose_nd(2, weight, bias, stride, padding, output_padding, groups, dilation)
    }

    /// 3-D transposed convolution (torch's `conv_transpose3d`).
    #[allow(clippy::too_many_arguments)]
    pub fn conv_transpose3d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[usize],
        padding: &[usize],
        output_padding: &[usize],
        groups: usize,
        dilation: &[usize],
    ) -> Result<Tensor> {
        self.conv_transpose_nd(3, weight, bias, stride, padding, output_padding, groups, dilation)
    }
}
