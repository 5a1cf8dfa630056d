//! torch's `F.affine_grid` and `F.grid_sample`, written in differentiable tensor ops so that
//! autograd gives the gradients of the input, the grid and `theta`.
//!
//! `grid_sample` follows torch's CPU kernels step by step: each grid coordinate is unnormalised
//! from `[-1, 1]` to pixels, mapped back into the image by the padding mode (`border` clips,
//! `reflection` reflects then clips: torch's `compute_coordinates`), floored (or rounded, for
//! `nearest`) into integer taps, and the taps' values are gathered from the flattened input, those
//! outside the image masked to zero, then weighted. The tap positions carry no gradient; the
//! weights (`x - floor(x)` and the cubic coefficients of it) do, and through `clamp`, `abs` and
//! `minimum` the padding's gradients come out as torch's `*_set_grad` helpers compute them: zero
//! at and beyond the clip bounds, the sign of each reflection. 4-D inputs use the arithmetic of
//! torch's vectorised 2-D kernel, 5-D inputs that of its scalar 3-D kernel (they round the same
//! coordinates differently in the last bits).

use oxtorch_tensor::{trusted_indices, DType, Error, Operand, Result, Tensor};

/// `mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Interp {
    Bilinear,
    Nearest,
    Bicubic,
}

/// `padding_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pad {
    Zeros,
    Border,
    Reflection,
}

/// How grid coordinates along one spatial dim of the input become pixel coordinates.
#[derive(Clone, Copy, Debug)]
struct Axis {
    /// the input's size along the dim
    size: usize,
    align_corners: bool,
    pad: Pad,
    /// 4-D input: torch's vectorised 2-D kernel's formulas (else the scalar 3-D kernel's)
    vectorized: bool,
}

/// `value` where `like` has its shape, with a zero gradient for `like` (keeps `like` in the graph,
/// as torch's kernels return a zero gradient, not none, for what does not move the output).
fn zero_grad_link(value: impl Into<Operand>, like: &Tensor) -> Result<Tensor> {
    let yes = Tensor::full((), true, like.device())?;
    Tensor::where_cond(&yes, value, like)
}

impl Axis {
    /// torch's `grid_sampler_unnormalize`: `-1` and `1` are the centres of the corner pixels
    /// (`align_corners`) or the image's edges.
    fn unnormalize(&self, g: &Tensor) -> Result<Tensor> {
        let s = self.size as f64;
        let g1 = g.add(1.0)?;
        match (self.vectorized, self.align_corners) {
            // ComputeLocationBase::unnormalize
            (true, true) => g1.mul((s - 1.0) / 2.0),
            (true, false) => g1.mul(s / 2.0)?.sub(0.5),
            // GridSampler.h
            (false, true) => g1.div(2.0)?.mul(s - 1.0),
            (false, false) => g1.mul(s)?.sub(1.0)?.div(2.0),
        }
    }

    /// torch's `clip_coordinates` into `[0, size - 1]`; `clamp` with number bounds gives no
    /// gradient at a bound, as torch's `clip_coordinates_set_grad` (borders count as outside).
    /// A NaN coordinate (a NaN in the grid, or the reflection of an infinite one) is clipped as
    /// the kernels' min/max order does: to 0 by the vectorised 2-D kernel (`clamp_min(0, in)`),
    /// to `size - 1` by the scalar 3-D one (`std::min(size - 1, std::max(in, 0))`); no gradient.
    fn clip(&self, x: &Tensor) -> Result<Tensor> {
        let high = self.size as f64 - 1.0;
        let clipped = x.clamp(Some(Operand::from(0.0f64)), Some(Operand::from(high)))?;
        let nan_to = if self.vectorized { 0.0 } else { high };
        Tensor::where_cond(&x.detach().isnan()?, nan_to, &clipped)
    }

    /// torch's `reflect_coordinates`: reflects by the corner pixels' centres (`align_corners`) or
    /// by the image's edges until the coordinate falls between them.
    fn reflect(&self, x: &Tensor) -> Result<Tensor> {
        let s = self.size as f64;
        if self.vectorized {
            // |x - low| folded by twice the span: min(extra, 2 span - extra) + low.
            let (low, twice_span) = if self.align_corners { (0.0, 2.0 * (s - 1.0)) } else { (-0.5, 2.0 * s) };
            if twice_span <= 0.0 {
                return zero_grad_link(0.0f64, x);
            }
            let a = if low == 0.0 { x.abs()? } else { x.sub(low)?.abs()? };
            let extra = a.sub(&a.div(twice_span)?.trunc()?.mul(twice_span)?)?;
            let folded = extra.minimum(&extra.rsub(twice_span)?)?;
            if low == 0.0 {
                Ok(folded)
            } else {
                folded.add(low)
            }
        } else {
            // GridSampler.h: the bounds passed as twice their values.
            let (twice_low, twice_high) =
                if self.align_corners { (0.0, 2.0 * (s - 1.0)) } else { (-1.0, 2.0 * s - 1.0) };
            if twice_low == twice_high {
                return zero_grad_link(0.0f64, x);
            }
            let (min, span) = (twice_low / 2.0, (twice_high - twice_low) / 2.0);
            let a = x.sub(min)?.abs()?;
            let extra = a.fmod(span)?;
            let even_flips = a.detach().div(span)?.floor()?.remainder(2.0)?.eq(0.0)?;
            Tensor::where_cond(&even_flips, &extra.add(min)?, &extra.rsub(span)?.add(min)?)
        }
    }

    /// torch's `compute_coordinates`: the padding mode's map back into the image.
    fn pad(&self, x: &Tensor) -> Result<Tensor> {
        match self.pad {
            Pad::Zeros => Ok(x.clone()),
            Pad::Border => self.clip(x),
            Pad::Reflection => self.clip(&self.reflect(x)?),
        }
    }

    /// The taps of this axis for grid coordinates `g` (`[N, Q]`): their integral positions (no
    /// gradient; out-of-range ones are masked later) and, except for `nearest`, their weights.
    fn taps(&self, g: &Tensor, mode: Interp) -> Result<(Vec<Tensor>, Vec<Tensor>)> {
        match mode {
            Interp::Nearest => {
                // (round half to even: torch's `nearbyint` / vectorised `round`)
                let x = self.pad(&self.unnormalize(&g.detach())?)?;
                Ok((vec![x.round()?], Vec::new()))
            }
            Interp::Bilinear => {
                let x = self.pad(&self.unnormalize(g)?)?;
                let x0 = x.detach().floor()?;
                let w1 = x.sub(&x0)?;
                // the 2-D kernel's `e = 1 - w`; the 3-D kernel's `(x0 + 1) - x`
                let w0 = if self.vectorized { w1.rsub(1.0)? } else { x0.add(1.0)?.sub(&x)? };
                let x1 = x0.add(1.0)?;
                Ok((vec![x0, x1], vec![w0, w1]))
            }
            Interp::Bicubic => {
                // The padding applies to each tap's integer position, not to the coordinate.
                let x = self.unnormalize(g)?;
                let x0 = x.detach().floor()?;
                let t = x.sub(&x0)?;
                let pos = (0..4).map(|k| self.pad(&x0.add(k as f64 - 1.0)?)).collect::<Result<Vec<_>>>()?;
                Ok((pos, cubic_coefficients(&t)?))
            }
        }
    }
}

/// The cubic convolution weights of the taps at `-1, 0, 1, 2` from the floor, for the fraction
/// `t` (torch's `get_cubic_upsample_coefficients`, `A = -0.75`).
fn cubic_coefficients(t: &Tensor) -> Result<Vec<Tensor>> {
    const A: f64 = -0.75;
    // |x| <= 1: ((A + 2) x - (A + 3)) x x + 1
    let near = |x: &Tensor| -> Result<Tensor> { x.mul(A + 2.0)?.sub(A + 3.0)?.mul(x)?.mul(x)?.add(1.0) };
    // 1 < |x| < 2: ((A x - 5 A) x + 8 A) x - 4 A
    let far =
        |x: &Tensor| -> Result<Tensor> { x.mul(A)?.sub(5.0 * A)?.mul(x)?.add(8.0 * A)?.mul(x)?.sub(4.0 * A) };
    Ok(vec![far(&t.add(1.0)?)?, near(t)?, near(&t.rsub(1.0)?)?, far(&t.rsub(2.0)?)?])
}

fn parse_mode(mode: &str) -> Result<Interp> {
    match mode {
        "bilinear" => Ok(Interp::Bilinear),
        "nearest" => Ok(Interp::Nearest),
        "bicubic" => Ok(Interp::Bicubic),
        other => Err(Error::msg(format!(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{other}'"
        ))),
    }
}

fn parse_padding(padding_mode: &str) -> Result<Pad> {
    match padding_mode {
        "zeros" => Ok(Pad::Zeros),
        "border" => Ok(Pad::Border),
        "reflection" => Ok(Pad::Reflection),
        other => Err(Error::msg(format!(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{other}'"
        ))),
    }
}

/// torch's `check_grid_sampler_common` and `check_grid_sampler_2d/3d`, in its order, then the
/// kernels' dtype dispatch.
fn check(input: &Tensor, grid: &Tensor) -> Result<()> {
    let (i, g) = (input.dims(), grid.dims());
    if input.device() != grid.device() {
        return Err(Error::msg(format!(
            "grid_sampler(): expected input and grid to be on same device, but input is on {} and grid is on {}",
            input.device(),
            grid.device()
        )));
    }
    let ranks = |want: usize| {
        Error::shape(format!(
            "grid_sampler(): expected {want}D input and grid with same number of dimensions, but got input with sizes {i:?} and grid with sizes {g:?}"
        ))
    };
    let want = if i.len() == 4 { 4 } else { 5 };
    if i.is_empty() || g.is_empty() {
        return Err(ranks(want));
    }
    if i[0] != g[0] {
        return Err(Error::shape(format!(
            "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {i:?} and grid with sizes {g:?}"
        )));
    }
    let coords = i.len() as i64 - 2;
    if g[g.len() - 1] as i64 != coords {
        return Err(Error::shape(format!(
            "grid_sampler(): expected grid to have size {coords} in last dimension, but got grid with sizes {g:?}"
        )));
    }
    if let Some(d) = (2..i.len()).find(|&d| i[d] == 0) {
        return Err(Error::shape(format!(
            "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes {i:?} with dimension {d} being empty"
        )));
    }
    if i.len() != want || g.len() != want {
        return Err(ranks(want));
    }
    let dtype = input.dtype();
    if !dtype.is_float() {
        let op = if want == 4 { "grid_sampler_2d_cpu_kernel_impl" } else { "grid_sampler3d_cpu" };
        return Err(Error::UnsupportedDType { op, dtype });
    }
    if grid.dtype() != dtype {
        return Err(Error::msg(format!(
            "expected scalar type {} but found {}",
            dtype.scalar_type_name(),
            grid.dtype().scalar_type_name()
        )));
    }
    Ok(())
}

/// torch's `F.grid_sample(input, grid, mode, padding_mode, align_corners)`: samples `input`
/// (`[N, C, H, W]`, or `[N, C, D, H, W]`) at the points of `grid` (`[N, H_out, W_out, 2]`, or
/// `[N, D_out, H_out, W_out, 3]`), whose last dim holds `(x, y[, z])` in `[-1, 1]` (x indexing the
/// width); the output is `[N, C, H_out, W_out]` (or `[N, C, D_out, H_out, W_out]`).
///
/// `mode` is `"bilinear"`, `"nearest"` or `"bicubic"` (on 5-D inputs too, as torch 2.15's CPU
/// kernel); `padding_mode` is `"zeros"`, `"border"` or `"reflection"`; `align_corners` (torch's
/// default: false) maps `-1` and `1` to the centres of the corner pixels instead of the image's
/// edges. Differentiable w.r.t. `input` and `grid` (the grid's gradient is zero for `"nearest"`).
pub fn grid_sample(
    input: &Tensor,
    grid: &Tensor,
    mode: &str,
    padding_mode: &str,
    align_corners: bool,
) -> Result<Tensor> {
    let mode = parse_mode(mode)?;
    let pad = parse_padding(padding_mode)?;
    check(input, grid)?;
    let nd = input.rank() - 2;
    let (n, c) = (input.dims()[0], input.dims()[1]);
    let spatial = input.dims()[2..].to_vec();
    let out_spatial = grid.dims()[1..=nd].to_vec();
    let q: usize = out_spatial.iter().product();
    let mut out_shape = vec![n, c];
    out_shape.extend_from_slice(&out_spatial);
    if n * c * q == 0 {
        return Tensor::zeros(out_shape, input.same_options());
    }
    let g = grid.reshape([n, q, nd])?;
    // Spatial dim `d` of the input is indexed by grid component `nd - 1 - d`.
    let axes: Vec<Axis> =
        spatial.iter().map(|&size| Axis { size, align_corners, pad, vectorized: nd == 2 }).collect();
    let taps = (0..nd)
        .map(|d| axes[d].taps(&g.select(-1, (nd - 1 - d) as isize)?, mode))
        .collect::<Result<Vec<_>>>()?;
    let k: Vec<usize> = taps.iter().map(|(pos, _)| pos.len()).collect();
    // The per-tap tensors `[N, Q]` of axis `d`, stacked to `[N, 1.., K_d, 1.., Q]` (K_d at 1 + d).
    let along = |d: usize, parts: &[Tensor]| -> Result<Tensor> {
        let refs: Vec<&Tensor> = parts.iter().collect();
        let mut shape = vec![n];
        shape.extend((0..nd).map(|e| if e == d { parts.len() } else { 1 }));
        shape.push(q);
        Tensor::stack(&refs, 1)?.reshape(shape)
    };
    // Flat spatial index and in-image mask of every tap: `[N, K_0, .., K_{nd-1}, Q]`.
    let (mut index, mut mask): (Option<Tensor>, Option<Tensor>) = (None, None);
    let mut stride = 1usize;
    for d in (0..nd).rev() {
        let pos = along(d, &taps[d].0)?;
        let inside = pos.gt(-1.0)?.logical_and(&pos.lt(spatial[d] as f64)?)?;
        let at = Tensor::where_cond(&inside, &pos, 0.0)?.to_dtype(DType::I64)?.mul(stride as i64)?;
        index = Some(match index {
            Some(i) => i.add(&at)?,
            None => at,
        });
        mask = Some(match mask {
            Some(m) => m.logical_and(&inside)?,
            None => inside,
        });
        stride *= spatial[d];
    }
    let (index, mask) = (index.expect("one axis at least"), mask.expect("one axis at least"));
    let mut tap_shape = vec![n];
    tap_shape.extend_from_slice(&k);
    tap_shape.push(q);
    let t: usize = tap_shape[1..].iter().product();
    let index = index.broadcast_to(&tap_shape)?.reshape([n, 1, t])?.broadcast_to(&[n, c, t])?;
    let flat = input.reshape([n, c, stride])?;
    // (positions masked to 0 where outside, so every index is in range)
    let values = trusted_indices(|| flat.gather(2, &index))?;
    let mut value_shape = vec![n, c];
    value_shape.extend_from_slice(&k);
    value_shape.push(q);
    let values = Tensor::where_cond(&mask.unsqueeze(1)?, &values.reshape(value_shape)?, 0.0)?;
    let out = match mode {
        Interp::Nearest => {
            let out = values.reshape(out_shape)?;
            if grid.requires_grad() {
                // torch's grid gradient is zero in nearest mode.
                let like = grid.select(-1, 0)?.unsqueeze(1)?;
                return zero_grad_link(&out, &like);
            }
            return Ok(out);
        }
        Interp::Bilinear => {
            // The corner weights are products of the axes' weights, x's first (torch's
            // `nw = s * e`, `tnw = wx * wy * wz`), summed in the corners' row-major order.
            let mut w: Option<Tensor> = None;
            for d in (0..nd).rev() {
                let wd = along(d, &taps[d].1)?;
                w = Some(match w {
                    Some(w) => w.mul(&wd)?,
                    None => wd,
                });
            }
            let mut w = w.expect("one axis at least");
            if !axes[0].vectorized {
                // The 3-D kernel adds only the corners inside the image: a non-finite coordinate
                // (its weights NaN) gives 0 with zeros padding, where the 2-D kernel's masked
                // product gives NaN.
                w = Tensor::where_cond(&mask, &w, 0.0)?;
            }
            let corners: usize = k.iter().product();
            values.mul(&w.unsqueeze(1)?)?.reshape([n, c, corners, q])?.sum(2, false)?
        }
        Interp::Bicubic => {
            // Interpolated along x first, then y (then z), as torch's kernel.
            let mut acc = values;
            for d in (0..nd).rev() {
                let refs: Vec<&Tensor> = taps[d].1.iter().collect();
                let mut shape = vec![n, 1];
                shape.extend(std::iter::repeat_n(1, d));
                shape.extend([4, q]);
                let wd = Tensor::stack(&refs, 1)?.reshape(shape)?;
                acc = acc.mul(&wd)?.sum(2 + d as isize, false)?;
            }
            acc
        }
    };
    out.reshape(out_shape)
}

/// torch's `linspace_from_neg_one`: `steps` points from -1 to 1, scaled by `(steps - 1) / steps`
/// without `align_corners` (the pixel centres); a single point is 0.
fn linspace_from_neg_one(steps: usize, align_corners: bool, like: &Tensor) -> Result<Tensor> {
    let opts = (like.dtype(), like.device());
    if steps <= 1 {
        return Tensor::zeros([steps], opts);
    }
    let range = Tensor::linspace(-1.0, 1.0, steps, opts)?;
    if align_corners {
        Ok(range)
    } else {
        range.mul((steps - 1) as f64)?.div(steps as f64)
    }
}

/// torch's `F.affine_grid(theta, size, align_corners)`: the sampling grid of the affine maps
/// `theta` for an output of `size`. With `size = [N, C, H, W]`, `theta` is `[N, 2, 3]` and the grid
/// `[N, H, W, 2]`; with `size = [N, C, D, H, W]`, `theta` is `[N, 3, 4]` and the grid
/// `[N, D, H, W, 3]`. Each point is `theta @ (x, y[, z], 1)` over the normalised pixel positions
/// (the corner pixels' centres at ±1 with `align_corners`, else the image's edges; torch's
/// default is false). Differentiable w.r.t. `theta`.
pub fn affine_grid(theta: &Tensor, size: &[usize], align_corners: bool) -> Result<Tensor> {
    if !theta.dtype().is_float() {
        return Err(Error::msg(format!(
            "Expected theta to have floating point type, but got torch.{}",
            theta.dtype().name()
        )));
    }
    let nd = match size.len() {
        4 => 2,
        5 => 3,
        _ => {
            return Err(Error::msg(format!(
                "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {size:?}."
            )))
        }
    };
    let t = theta.dims();
    if t.len() != 3 || t[1] != nd || t[2] != nd + 1 {
        return Err(Error::shape(format!(
            "Expected a batch of {nd}D affine matrices of shape Nx{nd}x{} for size {size:?}. Got torch.Size({t:?}).",
            nd + 1
        )));
    }
    let spatial = &size[2..];
    // (torch only warns about an empty span with align_corners, and then checks nothing else)
    let unit_span = align_corners && spatial.iter().min() == Some(&1);
    if !unit_span && size.contains(&0) {
        return Err(Error::msg(format!("Expected non-zero, positive output size. Got {size:?}")));
    }
    let n = size[0];
    let mut grid_shape = vec![n];
    grid_shape.extend_from_slice(spatial);
    // The coordinates are built before the grid: refuse a grid whose element count overflows.
    let mut out_shape = grid_shape.clone();
    out_shape.push(nd);
    if out_shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).is_none() {
        return Err(Error::shape(format!("Storage size calculation overflowed with sizes={out_shape:?}")));
    }
    // The base grid `[N, *spatial, nd + 1]`: x (along the last dim), y (, z), 1.
    let mut parts = Vec::with_capacity(nd + 1);
    for j in 0..nd {
        let d = nd - 1 - j;
        let mut view = vec![1usize; nd + 1];
        view[d + 1] = spatial[d];
        parts.push(
            linspace_from_neg_one(spatial[d], align_corners, theta)?
                .reshape(view)?
                .broadcast_to(&grid_shape)?,
        );
    }
    parts.push(Tensor::ones(grid_shape.clone(), (theta.dtype(), theta.device()))?);
    let refs: Vec<&Tensor> = parts.iter().collect();
    let base = Tensor::stack(&refs, -1)?;
    let points: usize = spatial.iter().product();
    let grid = base.reshape([n, points, nd + 1])?.bmm(&theta.transpose(1, 2)?)?;
    grid_shape.push(nd);
    grid.reshape(grid_shape)
}
