//! `matmul` with torch's rank rules and batch broadcasting.

use oxtorch_core::ops::Prim;
use oxtorch_core::{broadcast_shapes, Error, Result};

use crate::dispatch::apply1;
use crate::Tensor;

/// `a @ b` for `a` of rank ≥ 3 and a matrix `b`, computed with `a`'s leading dims folded into its
/// rows, when that needs no copy of `a` or when `b` requires grad (torch's `should_fold`); `None`
/// when the batched product should run instead.
fn fold_rows(a: &Tensor, b: &Tensor) -> Result<Option<Tensor>> {
    let k = a.dims()[a.rank() - 1] as isize;
    if k == 0 {
        return Ok(None);
    }
    let rows = match a.view([-1, k]) {
        Ok(v) => v,
        Err(_) if b.requires_grad() && crate::autograd::is_recording() => a.reshape([-1, k])?,
        Err(_) => return Ok(None),
    };
    let out = apply1(&Prim::MatMul, &[&rows, b], a.device())?;
    Ok(Some(out))
}

impl Tensor {
    /// Matrix product with torch's rules: 1-D·1-D is a dot product, 2-D·2-D a matrix product, a 1-D
    /// operand is treated as a row (left) or column (right) vector and its dim removed afterwards, and
    /// leading batch dims broadcast.
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        let (a, b) = (&crate::autocast::lower(self)?, &crate::autocast::lower(other)?);
        if a.rank() == 0 || b.rank() == 0 {
            return Err(Error::shape(format!(
                "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
                a.rank(),
                b.rank()
            )));
        }
        if a.dtype() != b.dtype() {
            return Err(Error::msg(format!(
                "expected m1 and m2 to have the same dtype, but got: {} != {}",
                a.dtype().name(),
                b.dtype().name()
            )));
        }
        let a2 = if a.rank() == 1 { a.unsqueeze(0)? } else { a.clone() };
        let b2 = if b.rank() == 1 { b.unsqueeze(1)? } else { b.clone() };
        let (ra, rb) = (a2.rank(), b2.rank());
        let (m, k) = (a2.dims()[ra - 2], a2.dims()[ra - 1]);
        let (k2, n) = (b2.dims()[rb - 2], b2.dims()[rb - 1]);
        if k != k2 {
            return Err(Error::shape(if a.rank() == 1 && b.rank() == 1 {
                format!(
                    "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                    a.numel(),
                    b.numel(),
                    a.numel(),
                    b.numel()
                )
            } else {
                format!(
                    "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                    a2.numel() / k.max(1),
                    k,
                    k2,
                    n
                )
            }));
        }
        if ra >= 3 && rb == 2 {
            if let Some(folded) = fold_rows(&a2, &b2)? {
                // `[*batch, m, k] @ [k, n]` as one `[batch * m, k] @ [k, n]` product (torch's
                // `should_fold`): one larger gemm, and `b`'s gradient is one product instead of
                // a batch of them summed afterwards.
                let mut shape = a2.dims()[..ra - 2].to_vec();
                shape.push(m);
                if b.rank() > 1 {
                    shape.push(n);
                }
                return folded.view(shape);
            }
        }
        let batch = broadcast_shapes(&a2.dims()[..ra - 2], &b2.dims()[..rb - 2])?;
        let mut sa = batch.clone();
        sa.extend([m, k]);
        let mut sb = batch.clone();
        sb.extend([k, n]);
        let out = apply1(&Prim::MatMul, &[&a2.broadcast_to(&sa)?, &b2.broadcast_to(&sb)?], a.device())?;
        // Remove the dims that 1-D operands gained.
        let mut shape = batch;
        if a.rank() > 1 {
            shape.push(m);
        }
        if b.rank() > 1 {
            shape.push(n);
        }
        if out.dims() == shape.as_slice() {
            return Ok(out);
        }
        out.view(shape)
    }

    /// Matrix product of two 2-D tensors (torch's `mm`).
    pub fn mm(&self, other: &Tensor) -> Result<Tensor> {
        if self.rank() != 2 || other.rank() != 2 {
            return Err(Error::shape(format!(
                "mm: expected 2-D tensors, got {}D and {}D",
                self.rank(),
                other.rank()
            )));
        }
        self.matmul(other)
    }
}
