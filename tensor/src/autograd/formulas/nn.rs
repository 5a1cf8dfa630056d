//! Derivatives of the neural-network kernels: im2col/col2im are each other's adjoint, pooling and
//! resampling are separable linear maps (their adjoint is one small matrix product per spatial dim),
//! max pooling and embedding send gradients back to the selected positions.

use oxtorch_core::ops::{NnOp, Prim};
use oxtorch_core::{DType, Result};

use super::{Ctx, Saves};
use crate::dispatch::apply1;
use crate::Tensor;

pub(super) fn saves(op: &NnOp, n: usize) -> Saves {
    match op {
        NnOp::MaxPool { .. } => Saves::outputs(n),
        NnOp::Embedding => Saves { inputs: [false, true].into_iter().collect(), outputs: false },
        NnOp::CrossEntropy { .. } => Saves::outputs(n),
        NnOp::Conv2d { .. } => Saves::all_inputs(n),
        _ => Saves::none(n),
    }
}

pub(super) fn backward(op: &NnOp, ctx: &Ctx, g: &Tensor, needs: &[bool]) -> Result<Vec<Option<Tensor>>> {
    let in_dims = ctx.dims(0);
    match op {
        NnOp::Im2col { kernel, stride, padding, dilation } => {
            let n = kernel.len();
            let sp = &in_dims[in_dims.len() - n..];
            let grid = (0..n)
                .map(|d| NnOp::window_positions(sp[d], kernel[d], stride[d], padding[d], dilation[d]))
                .collect();
            let prim = NnOp::Col2im {
                output_size: sp.to_vec(),
                grid,
                kernel: kernel.clone(),
                stride: stride.clone(),
                padding: padding.clone(),
                dilation: dilation.clone(),
            };
            Ok(vec![Some(apply1(&Prim::Nn(prim), &[&g.contiguous()?], g.device())?)])
        }
        NnOp::Col2im { output_size, grid, kernel, stride, padding, dilation } => {
            let prim = NnOp::Im2col {
                kernel: kernel.clone(),
                stride: stride.clone(),
                padding: padding.clone(),
                dilation: dilation.clone(),
            };
            let cols = apply1(&Prim::Nn(prim), &[g], g.device())?;
            let full: Vec<usize> = (0..kernel.len())
                .map(|d| {
                    NnOp::window_positions(output_size[d], kernel[d], stride[d], padding[d], dilation[d])
                })
                .collect();
            if &full == grid {
                return Ok(vec![Some(cols)]);
            }
            // The forward used fewer window positions than fit: keep the leading block of the grid.
            let (b, rows) = (cols.dims()[0], cols.dims()[1]);
            let mut shape = vec![b as isize, rows as isize];
            shape.extend(full.iter().map(|&f| f as isize));
            let mut t = cols.reshape(shape)?;
            for (d, &k) in grid.iter().enumerate() {
                t = t.narrow((d + 2) as isize, 0, k)?;
            }
            Ok(vec![Some(t.reshape([b as isize, rows as isize, -1])?)])
        }
        NnOp::MaxPool { taps } => {
            let n = taps.len();
            let idx = ctx.output(1)?;
            let lead = &in_dims[..in_dims.len() - n];
            let mut flat_in: Vec<isize> = lead.iter().map(|&d| d as isize).collect();
            flat_in.push(in_dims[in_dims.len() - n..].iter().product::<usize>() as isize);
            let mut flat_out: Vec<isize> = lead.iter().map(|&d| d as isize).collect();
            flat_out.push(-1);
            let gx = g
                .zeros_like_shape(&flat_in.iter().map(|&d| d as usize).collect::<Vec<_>>())?
                .scatter_add(-1, &idx.reshape(flat_out.clone())?, &g.reshape(flat_out)?)?;
            Ok(vec![Some(gx.reshape(in_dims.iter().map(|&d| d as isize).collect::<Vec<_>>())?)])
        }
        NnOp::AvgPool { taps, divisor_override } => {
            let n = taps.len();
            let sp = &in_dims[in_dims.len() - n..];
            let mut gx = g.clone();
            for d in 0..n {
                let w = pool_matrix(&taps[d], sp[d], divisor_override.is_none());
                gx = apply_adjoint(&gx, &w, in_dims.len() - n + d)?;
            }
            if let Some(div) = divisor_override {
                gx = gx.div(*div as f64)?;
            }
            Ok(vec![Some(gx)])
        }
        NnOp::Resample { taps } => {
            let n = taps.len();
            let sp = &in_dims[in_dims.len() - n..];
            let mut gx = g.clone();
            for d in 0..n {
                let w = resample_matrix(&taps[d], sp[d]);
                gx = apply_adjoint(&gx, &w, in_dims.len() - n + d)?;
            }
            Ok(vec![Some(gx)])
        }
        NnOp::Embedding => {
            if !needs[0] {
                return Ok(vec![None, None]);
            }
            let idx = ctx.input(1)?;
            let dim = in_dims[1];
            let gw = g.zeros_like_shape(in_dims)?.index_add(
                0,
                &idx.reshape([-1])?,
                &g.reshape([-1, dim as isize])?,
                1,
            )?;
            Ok(vec![Some(gw), None])
        }
        NnOp::CrossEntropy { ignore_index } => {
            if !needs[0] {
                return Ok(vec![None, None]);
            }
            let (x, t) = (ctx.input(0)?, ctx.input(1)?);
            let gx = if crate::autograd::is_recording() {
                cross_entropy_composite(&x, &t, g, *ignore_index)?
            } else {
                let stats = ctx.output(1)?;
                let prim = Prim::Nn(NnOp::CrossEntropyBackward { ignore_index: *ignore_index });
                apply1(&prim, &[&x, &t, &stats, g], x.device())?
            };
            Ok(vec![Some(gx), None])
        }
        NnOp::Conv2d { stride, padding, dilation, groups } => {
            conv2d_backward(ctx, g, needs, [*stride, *padding, *dilation], *groups)
        }
        NnOp::Linear => {
            // y = x wᵀ + b: gx = g w, gw = gᵀ x, gb = the column sums of g.
            let gx = if needs[0] { Some(g.matmul(&ctx.input(1)?)?) } else { None };
            let gw = if needs[1] { Some(g.t()?.matmul(&ctx.input(0)?)?) } else { None };
            let gb = if needs[2] { Some(g.sum(0, false)?) } else { None };
            Ok(vec![gx, gw, gb])
        }
        // Taken only where nothing is recorded (the tensor layer composes attention and layer norm
        // under autograd).
        NnOp::CrossEntropyBackward { .. }
        | NnOp::GeluTanhBackward
        | NnOp::Attention { .. }
        | NnOp::LayerNorm { .. } => Err(super::not_differentiable(op.name())),
    }
}

/// The gradient of [`NnOp::CrossEntropy`] composed of differentiable ops (for `create_graph`): the
/// gradients of `nll_loss` (`-g` at the targets of the kept rows) and of `log_softmax`.
fn cross_entropy_composite(x: &Tensor, t: &Tensor, g: &Tensor, ignore_index: i64) -> Result<Tensor> {
    let c = x.dims()[1] as i64;
    let kept = t.ne(ignore_index)?.to_dtype(g.dtype())?;
    let picked = g.neg()?.mul(&kept)?.unsqueeze(-1)?;
    let hit = t.unsqueeze(-1)?.eq(&Tensor::arange(c, (DType::I64, x.device()))?)?;
    let g_logp = hit.where_self(&picked, 0.0)?;
    let logp = x.log_softmax_dim(-1)?;
    g_logp.sub(logp.exp()?.mul(g_logp.sum([-1], true)?)?)
}

/// The dense `[out, in]` matrix of one dim's pooling windows (entries `1/divisor`, or 1).
fn pool_matrix(taps: &[(isize, usize, usize, usize)], size: usize, divide: bool) -> (Vec<f64>, usize, usize) {
    let mut w = vec![0.0; taps.len() * size];
    for (o, &(start, step, len, div)) in taps.iter().enumerate() {
        let v = if divide { 1.0 / div.max(1) as f64 } else { 1.0 };
        for j in 0..len {
            let i = start + (j * step) as isize;
            if i >= 0 && (i as usize) < size {
                w[o * size + i as usize] += v;
            }
        }
    }
    (w, taps.len(), size)
}

/// The dense `[out, in]` matrix of one dim's resampling taps.
fn resample_matrix(taps: &[Vec<(usize, f64)>], size: usize) -> (Vec<f64>, usize, usize) {
    let mut w = vec![0.0; taps.len() * size];
    for (o, pairs) in taps.iter().enumerate() {
        for &(i, wt) in pairs {
            if i < size {
                w[o * size + i] += wt;
            }
        }
    }
    (w, taps.len(), size)
}

/// Applies the transpose of the `[out, in]` matrix `w` along `dim` of `g` (size `out` there).
fn apply_adjoint(g: &Tensor, w: &(Vec<f64>, usize, usize), dim: usize) -> Result<Tensor> {
    let (data, rows, cols) = w;
    let m = Tensor::from_slice_on(data, [*rows, *cols], g.device())?.to_dtype(compute_dtype(g.dtype()))?;
    let moved = g.to_dtype(compute_dtype(g.dtype()))?.movedim([dim as isize], [-1])?;
    moved.matmul(&m)?.movedim([-1], [dim as isize])?.to_dtype(g.dtype())
}

/// Half-precision gradients are accumulated in f32.
fn compute_dtype(d: DType) -> DType {
    match d {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// The gradients of [`NnOp::Conv2d`] (`y = W · im2col(x)` per group): the weight's is
/// `gy · im2col(x)ᵀ` summed over the batch (the columns are recomputed here, not saved, as torch
/// saves only `x` and `W`), the input's is `col2im(Wᵀ · gy)`. Written in differentiable ops, so a
/// recorded backward (`create_graph`) differentiates again.
fn conv2d_backward(
    ctx: &Ctx,
    g: &Tensor,
    needs: &[bool],
    [stride, padding, dilation]: [[usize; 2]; 3],
    groups: usize,
) -> Result<Vec<Option<Tensor>>> {
    let (x, w) = (ctx.input(0)?, ctx.input(1)?);
    let (xd, wd) = (x.dims().to_vec(), w.dims().to_vec());
    let (nb, cout_g, k) = (xd[0], wd[0] / groups, wd[1] * wd[2] * wd[3]);
    let (oh, ow) = (g.dims()[2], g.dims()[3]);
    let kernel = vec![wd[2], wd[3]];
    let gy = g.reshape([nb, groups, cout_g, oh * ow])?;
    let gw = if needs[1] {
        let prim = NnOp::Im2col {
            kernel: kernel.clone(),
            stride: stride.to_vec(),
            padding: padding.to_vec(),
            dilation: dilation.to_vec(),
        };
        let cols = apply1(&Prim::Nn(prim), &[&x], x.device())?.reshape([nb, groups, k, oh * ow])?;
        Some(gy.matmul(&cols.transpose(-1, -2)?)?.sum(0, false)?.reshape(wd.clone())?)
    } else {
        None
    };
    let gx = if needs[0] {
        let wt = w.reshape([1, groups, cout_g, k])?.transpose(-1, -2)?;
        let gcols = wt.matmul(&gy)?.reshape([nb, groups * k, oh * ow])?;
        let prim = NnOp::Col2im {
            output_size: xd[2..].to_vec(),
            grid: vec![oh, ow],
            kernel,
            stride: stride.to_vec(),
            padding: padding.to_vec(),
            dilation: dilation.to_vec(),
        };
        Some(apply1(&Prim::Nn(prim), &[&gcols.contiguous()?], g.device())?)
    } else {
        None
    };
    Ok(vec![gx, gw])
}
