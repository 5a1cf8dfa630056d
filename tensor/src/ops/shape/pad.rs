//! `torch.nn.functional.pad`: constant padding by views and `cat`, the other modes by gathering
//! computed source positions along each padded dim.

use oxtorch_core::{DType, Error, Result, Scalar};

use crate::Tensor;

impl Tensor {
    /// `torch.nn.functional.pad(self, pad, mode, value)`: `pad` lists `(before, after)` pairs from
    /// the last dim backwards. `mode` is "constant" (negative pads crop; `value` defaults to 0),
    /// "reflect", "replicate" or "circular" (which pad the last 1, 2 or 3 dims of a tensor with one
    /// or two more dims, as torch).
    pub fn pad(&self, pad: &[isize], mode: &str, value: Option<f64>) -> Result<Tensor> {
        pad_impl(self, pad, mode, value.map(Scalar::Float))
    }
}

/// Pads `x` as `F.pad(x, pad, mode, value)`.
fn pad_impl(x: &Tensor, pad: &[isize], mode: &str, value: Option<Scalar>) -> Result<Tensor> {
    if !pad.len().is_multiple_of(2) {
        return Err(Error::msg("Padding length must be divisible by 2"));
    }
    let n = pad.len() / 2;
    if n > x.rank() {
        return Err(Error::msg(format!(
            "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
            pad.len(),
            x.rank()
        )));
    }
    match mode {
        "constant" => constant(x, pad, value.unwrap_or(Scalar::Int(0))),
        "reflect" | "replicate" | "circular" => {
            if value.is_some_and(|v| v.to_f64() != 0.0) {
                return Err(Error::msg(format!("Padding mode \"{mode}\" doesn't take in value argument")));
            }
            indexed(x, pad, mode)
        }
        other => Err(Error::msg(format!(
            "Unrecognised padding mode {other}; expected one of constant, reflect, replicate, circular"
        ))),
    }
}

/// Crops negative pads (views), then joins blocks of `value` for positive ones.
fn constant(x: &Tensor, pad: &[isize], value: Scalar) -> Result<Tensor> {
    let mut out = x.clone();
    for (i, p) in pad.chunks(2).enumerate() {
        let d = x.rank() - 1 - i;
        let (before, after) = (p[0], p[1]);
        let size = out.dims()[d];
        // (unsigned crops: `isize::MIN` has no negation)
        let (start, end_crop) = (before.min(0).unsigned_abs(), after.min(0).unsigned_abs());
        let Some(keep) = size.checked_sub(start).and_then(|k| k.checked_sub(end_crop)) else {
            // torch crops each negative pad first: cropping more than the dim holds fails there.
            return Err(Error::msg("narrow(): length must be non-negative."));
        };
        out = out.narrow(d as isize, start as isize, keep)?;
        let block = |len: isize| -> Result<Tensor> {
            let mut shape = out.dims().to_vec();
            shape[d] = len as usize;
            Tensor::full(shape, value, out.same_options())
        };
        let mut parts = Vec::new();
        if before > 0 {
            parts.push(block(before)?);
        }
        parts.push(out.clone());
        if after > 0 {
            parts.push(block(after)?);
        }
        if parts.len() > 1 {
            let refs: Vec<&Tensor> = parts.iter().collect();
            out = Tensor::cat(&refs, d as isize)?;
        }
    }
    if out.shares_storage(x) {
        out = out.copy()?;
    }
    Ok(out)
}

/// Reflect, replicate and circular padding of the last `pad.len() / 2` dims.
fn indexed(x: &Tensor, pad: &[isize], mode: &str) -> Result<Tensor> {
    let n = pad.len() / 2;
    if !(1..=3).contains(&n) || !(x.rank() == n + 1 || x.rank() == n + 2) {
        return Err(Error::msg(format!(
            "Padding size {} is not supported for {}D input tensor.",
            pad.len(),
            x.rank()
        )));
    }
    if mode != "circular" {
        if x.dtype() == DType::Bool {
            let kind = if mode == "reflect" { "reflection" } else { "replication" };
            return Err(Error::msg(format!("\"{kind}_pad{n}d\" not implemented for 'Bool'")));
        }
        let batch = x.rank() == n + 2;
        let empty = x.dims().iter().enumerate().any(|(k, &s)| s == 0 && !(batch && k == 0));
        if empty {
            return Err(Error::msg(format!(
                "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                n + 1,
                n + 2,
                x.dims()
            )));
        }
    }
    let mut out = x.clone();
    for (i, p) in pad.chunks(2).enumerate() {
        let d = x.rank() - 1 - i;
        let (before, after) = (p[0], p[1]);
        let size = out.dims()[d] as isize;
        if mode == "reflect" && (before >= size || after >= size) {
            return Err(Error::msg(format!(
                "Argument #{}: Padding size should be less than the corresponding input dimension, but got: padding ({before}, {after}) at dimension {d} of input {:?}",
                4 + 2 * i,
                x.dims()
            )));
        }
        if mode == "circular" && (before > size || after > size) {
            return Err(Error::msg("Padding value causes wrapping around more than once."));
        }
        if size.checked_add(before).and_then(|t| t.checked_add(after)).is_none() {
            return Err(Error::msg(format!(
                "padding ({before}, {after}) overflows the size {size} of dimension {d}"
            )));
        }
        // Negative pads crop first; circular padding then wraps around the cropped tensor.
        let (out_c, before, after, size) = if mode == "circular" && (before < 0 || after < 0) {
            if size + before + after <= 0 {
                // torch's output size; an empty result when the crops eat everything.
                if size + before + after < 0 {
                    return Err(Error::msg(format!(
                        "Negative padding value is resulting in an empty dimension: {size} + ({before}) + ({after})"
                    )));
                }
                out = out.narrow(d as isize, 0, 0)?;
                continue;
            }
            let start = (-before).max(0);
            let keep = (size - start - (-after).max(0)).max(0);
            (out.narrow(d as isize, start, keep as usize)?, before.max(0), after.max(0), keep)
        } else {
            (out.clone(), before, after, size)
        };
        out = out_c;
        let total = size + before + after;
        if total <= 0 && mode != "circular" {
            // torch's check that reflect and replicate padding leave something
            let name = ["W", "H", "D"][i];
            return Err(Error::msg(format!(
                "input ({name}: {size}) is too small. Calculated output {name}: {total}"
            )));
        }
        if total < 0 {
            return Err(Error::msg(format!(
                "input tensor size {size} plus padding {before} and {after} at dimension {d} is negative"
            )));
        }
        let src: Vec<i64> = (0..total)
            .map(|j| {
                let k = j - before;
                let s = match mode {
                    "reflect" if k < 0 => -k,
                    "reflect" if k >= size => 2 * (size - 1) - k,
                    "replicate" => k.clamp(0, size - 1),
                    "circular" => k.rem_euclid(size.max(1)),
                    _ => k,
                };
                s as i64
            })
            .collect();
        if src.iter().any(|&s| s < 0 || s >= size as i64) {
            return Err(Error::msg(format!(
                "padding ({before}, {after}) is invalid for dimension {d} of size {size}"
            )));
        }
        let len = src.len();
        out = out.index_select(d as isize, &Tensor::from_vec_on(src, [len], out.device())?)?;
    }
    if out.shares_storage(x) {
        out = out.copy()?;
    }
    Ok(out)
}
