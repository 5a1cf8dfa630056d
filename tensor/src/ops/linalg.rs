//! Linear algebra built on `matmul`: `bmm`, `addmm`/`baddbmm`/`addmv`/`addr`, `dot`/`vdot`, `outer`,
//! `kron`, `tensordot`, `linear` and `einsum` (parsed and lowered to permutes, sums and one batched
//! matmul per pair of operands).

pub mod api;
mod batch;
mod cholinv;
mod cond;
mod decompose;
mod eigen;
mod einsum;
mod factor;
mod geqrf;
mod householder;
mod inverse;
mod jacobi;
mod ldl;
mod lowrank;
mod lstsq;
mod lu;
mod matexp;
mod matfn;
mod norms;
mod polar_lobpcg;
mod solve;
mod svd;
mod tensorops;
mod triangular;

use oxtorch_core::{wrap_dim, DType, Error, Result, Scalar};

use crate::Tensor;

/// f16/bf16 compute in f32 and round once (torch's CPU "opmath"); other dtypes compute as they are.
pub(crate) fn opmath(dtype: DType) -> DType {
    match dtype {
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

/// The C++ type name torch prints for a dtype in some messages (`float`, `double`, `c10::Half`).
pub(crate) fn cpp_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::U8 => "unsigned char",
        DType::I8 => "signed char",
        DType::I16 => "short int",
        DType::I32 => "int",
        DType::I64 => "long int",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        DType::F32 => "float",
        DType::F64 => "double",
    }
}

/// torch's check that `beta`/`alpha` are not floats for an integer result (and not non-bool for bool).
fn check_scale(name: &str, dtype: DType, s: Scalar) -> Result<()> {
    if !dtype.is_float() && s.is_float() {
        return Err(Error::msg(format!(
            "For integral input tensors, argument {name} must not be a floating point number."
        )));
    }
    Ok(())
}

/// torch's refusal of bool operands, naming its kernel.
fn no_bool(op: &'static str, t: &Tensor) -> Result<()> {
    if t.dtype() == DType::Bool {
        return Err(Error::UnsupportedDType { op, dtype: DType::Bool });
    }
    Ok(())
}

fn same_dtype(a: &Tensor, b: &Tensor) -> Result<()> {
    if a.dtype() != b.dtype() {
        return Err(Error::msg(format!(
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            cpp_name(a.dtype()),
            cpp_name(b.dtype())
        )));
    }
    Ok(())
}

impl Tensor {
    /// Batched matrix product of two 3-D tensors `[b, n, m] @ [b, m, p]` (no broadcasting).
    pub fn bmm(&self, mat2: &Tensor) -> Result<Tensor> {
        if self.rank() != 3 {
            return Err(Error::shape("batch1 must be a 3D tensor"));
        }
        if mat2.rank() != 3 {
            return Err(Error::shape("batch2 must be a 3D tensor"));
        }
        let (a, b) = (self.dims(), mat2.dims());
        if b[0] != a[0] || b[1] != a[2] {
            return Err(Error::shape(format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                a[0], a[2], b[0], b[1]
            )));
        }
        no_bool("bmm", self)?;
        self.matmul(mat2)
    }

    /// `beta * self + alpha * (prod)` where `prod` is already computed in the opmath dtype; `self`
    /// broadcasts to `prod`'s shape and is ignored (NaN included) when `beta == 0`.
    /// With `strict`, float scales are refused for integer results (`addr`); otherwise they are
    /// truncated to integers, as torch's BLAS-style kernels do (`addmm`, `baddbmm`, `addmv`).
    fn add_scaled_product(
        &self,
        prod: Tensor,
        beta: Scalar,
        alpha: Scalar,
        dtype: DType,
        strict: bool,
    ) -> Result<Tensor> {
        let (beta, alpha) = if strict {
            check_scale("beta", dtype, beta)?;
            check_scale("alpha", dtype, alpha)?;
            (beta, alpha)
        } else if !dtype.is_float() {
            (Scalar::Int(beta.to_i64()), Scalar::Int(alpha.to_i64()))
        } else {
            (beta, alpha)
        };
        let input = self.broadcast_to(prod.dims()).map_err(|_| {
            Error::shape(format!(
                "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: {:?}.  Tensor sizes: {:?}",
                prod.dims().last().copied().unwrap_or(0),
                self.dims().last().copied().unwrap_or(0),
                prod.rank().saturating_sub(1),
                prod.dims(),
                self.dims()
            ))
        })?;
        let scaled = if alpha.to_f64() == 1.0 { prod } else { prod.mul(alpha)? };
        let out = if beta.to_f64() == 0.0 {
            crate::autograd::record::with_zero_grad_to(scaled, &input)?
        } else {
            let inp = input.to_dtype(scaled.dtype())?;
            let inp = if beta.to_f64() == 1.0 { inp } else { inp.mul(beta)? };
            scaled.add(&inp)?
        };
        out.to_dtype(dtype)
    }

    /// `beta * self + alpha * (mat1 @ mat2)` for 2-D `mat1`, `mat2` (torch's `addmm`).
    pub fn addmm(
        &self,
        mat1: &Tensor,
        mat2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        if crate::autocast::lowers(&[Some(self), Some(mat1), Some(mat2)]) {
            let low = crate::autocast::lower;
            return low(self)?.addmm(&low(mat1)?, &low(mat2)?, beta, alpha);
        }
        if mat1.rank() != 2 || mat2.rank() != 2 {
            return Err(Error::shape(format!(
                "{} must be a matrix, got {}-D tensor",
                if mat1.rank() != 2 { "mat1" } else { "mat2" },
                if mat1.rank() != 2 { mat1.rank() } else { mat2.rank() }
            )));
        }
        same_dtype(mat1, mat2)?;
        same_dtype(self, mat1)?;
        no_bool("addmm_impl_cpu_", mat1)?;
        let dt = mat1.dtype();
        let op = opmath(dt);
        let prod = mat1.to_dtype(op)?.mm(&mat2.to_dtype(op)?)?;
        self.add_scaled_product(prod, beta.into(), alpha.into(), dt, false)
    }

    /// `beta * self + alpha * bmm(batch1, batch2)` (torch's `baddbmm`).
    pub fn baddbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        if crate::autocast::lowers(&[Some(self), Some(batch1), Some(batch2)]) {
            let low = crate::autocast::lower;
            return low(self)?.baddbmm(&low(batch1)?, &low(batch2)?, beta, alpha);
        }
        same_dtype(batch1, batch2)?;
        same_dtype(self, batch1)?;
        no_bool("baddbmm", batch1)?;
        let dt = batch1.dtype();
        let op = opmath(dt);
        let prod = batch1.to_dtype(op)?.bmm(&batch2.to_dtype(op)?)?;
        self.add_scaled_product(prod, beta.into(), alpha.into(), dt, false)
    }

    /// `beta * self + alpha * (mat @ vec)` (torch's `addmv`).
    pub fn addmv(
        &self,
        mat: &Tensor,
        vec: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        if mat.rank() != 2 || vec.rank() != 1 {
            return Err(Error::shape(format!(
                "vector + matrix @ vector expected, got {}, {}, {}",
                self.rank(),
                mat.rank(),
                vec.rank()
            )));
        }
        same_dtype(mat, vec)?;
        same_dtype(self, mat)?;
        no_bool("addmv_impl_cpu", mat)?;
        let dt = mat.dtype();
        let op = opmath(dt);
        let prod = mat.to_dtype(op)?.matmul(&vec.to_dtype(op)?)?;
        self.add_scaled_product(prod, beta.into(), alpha.into(), dt, false)
    }

    /// `beta * self + alpha * outer(vec1, vec2)` (torch's `addr`).
    pub fn addr(
        &self,
        vec1: &Tensor,
        vec2: &Tensor,
        beta: impl Into<Scalar>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        // torch's dtype: the three operands' result type (a float `self` keeps its fraction
        // with integer vectors).
        let dt = crate::promote_types(crate::promote_types(self.dtype(), vec1.dtype()), vec2.dtype());
        let prod = vec1.to_dtype(dt)?.outer(&vec2.to_dtype(dt)?)?;
        self.to_dtype(dt)?.add_scaled_product(prod, beta.into(), alpha.into(), dt, true)
    }

    fn check_dot(&self, other: &Tensor, name: &'static str) -> Result<()> {
        if self.rank() != 1 || other.rank() != 1 {
            return Err(Error::shape(format!(
                "1D tensors expected, but got {}D and {}D tensors",
                self.rank(),
                other.rank()
            )));
        }
        if self.dtype() != other.dtype() {
            return Err(Error::msg(format!(
                "{name} : expected both vectors to have same dtype, but found {} and {}",
                self.dtype().scalar_type_name(),
                other.dtype().scalar_type_name()
            )));
        }
        if self.numel() != other.numel() {
            return Err(Error::shape(format!(
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                self.numel(),
                other.numel(),
                self.numel(),
                other.numel()
            )));
        }
        no_bool("dot", self)?;
        Ok(())
    }

    /// Inner product of two 1-D tensors of the same dtype (a 0-d result).
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        self.check_dot(other, "dot")?;
        let op = opmath(self.dtype());
        self.to_dtype(op)?.matmul(&other.to_dtype(op)?)?.to_dtype(self.dtype())
    }

    /// `dot` with the first argument conjugated (the same as `dot` for real dtypes).
    pub fn vdot(&self, other: &Tensor) -> Result<Tensor> {
        self.check_dot(other, "vdot")?;
        let op = opmath(self.dtype());
        self.to_dtype(op)?.matmul(&other.to_dtype(op)?)?.to_dtype(self.dtype())
    }

    /// Outer product of two 1-D tensors, `self[i] * vec2[j]`, with type promotion.
    pub fn outer(&self, vec2: &Tensor) -> Result<Tensor> {
        for (name, t) in [("self", self), ("vec2", vec2)] {
            if t.rank() != 1 {
                return Err(Error::shape(format!(
                    "outer: Expected 1-D argument {name}, but got {}-D",
                    t.rank()
                )));
            }
        }
        self.unsqueeze(1)?.mul(vec2)
    }

    /// Kronecker product: for each dim, blocks of `other` scaled by the elements of `self`.
    pub fn kron(&self, other: &Tensor) -> Result<Tensor> {
        let r = self.rank().max(other.rank());
        let pad = |t: &Tensor| -> Vec<usize> {
            let mut s = vec![1; r - t.rank()];
            s.extend(t.dims());
            s
        };
        let (sa, sb) = (pad(self), pad(other));
        let mut va = Vec::with_capacity(2 * r);
        let mut vb = Vec::with_capacity(2 * r);
        for d in 0..r {
            va.extend([sa[d], 1]);
            vb.extend([1, sb[d]]);
        }
        let out: Vec<usize> = (0..r).map(|d| sa[d] * sb[d]).collect();
        self.reshape(va)?.mul(&other.reshape(vb)?)?.reshape(out)
    }

    /// Contracts the last `dims` dims of `self` with the first `dims` of `other`.
    pub fn tensordot(&self, other: &Tensor, dims: isize) -> Result<Tensor> {
        if dims < 0 {
            return Err(Error::msg(format!("tensordot expects dims >= 0, but got dims={dims}")));
        }
        let n = dims as usize;
        if n > self.rank() || n > other.rank() {
            return Err(Error::msg(format!(
                "tensordot expects dims < ndim_a or ndim_b, but got dims={dims}"
            )));
        }
        let da: Vec<isize> = (self.rank() - n..self.rank()).map(|d| d as isize).collect();
        let db: Vec<isize> = (0..n).map(|d| d as isize).collect();
        self.tensordot_dims(other, &da, &db)
    }

    /// Contracts dims `dims_a[i]` of `self` with `dims_b[i]` of `other` (torch's `tensordot` with a pair
    /// of dim lists); the result has `self`'s free dims then `other`'s.
    pub fn tensordot_dims(&self, other: &Tensor, dims_a: &[isize], dims_b: &[isize]) -> Result<Tensor> {
        if dims_a.len() != dims_b.len() {
            return Err(Error::msg("both dimension lists should have same length"));
        }
        if self.dtype() != other.dtype() {
            return Err(Error::msg(format!(
                "both inputs should have same dtype, but got {} and {}",
                self.dtype().scalar_type_name(),
                other.dtype().scalar_type_name()
            )));
        }
        let ca: Vec<usize> = dims_a.iter().map(|&d| wrap_dim(d, self.rank())).collect::<Result<_>>()?;
        let cb: Vec<usize> = dims_b.iter().map(|&d| wrap_dim(d, other.rank())).collect::<Result<_>>()?;
        for (&x, &y) in ca.iter().zip(&cb) {
            let (sx, sy) = (self.dims()[x], other.dims()[y]);
            if sx != sy {
                return Err(Error::shape(format!(
                    "contracted dimensions need to match, but first has size {sx} in dim {x} and second has size {sy} in dim {y}"
                )));
            }
        }
        no_bool("addmm_impl_cpu_", self)?;
        let fa: Vec<usize> = (0..self.rank()).filter(|d| !ca.contains(d)).collect();
        let fb: Vec<usize> = (0..other.rank()).filter(|d| !cb.contains(d)).collect();
        let size = |t: &Tensor, ds: &[usize]| ds.iter().map(|&d| t.dims()[d]).product::<usize>();
        let (m, k, n) = (size(self, &fa), size(self, &ca), size(other, &fb));
        let pa: Vec<usize> = fa.iter().chain(&ca).copied().collect();
        let pb: Vec<usize> = cb.iter().chain(&fb).copied().collect();
        let op = opmath(self.dtype());
        let a = self.permute(pa)?.reshape([m, k])?.to_dtype(op)?;
        let b = other.permute(pb)?.reshape([k, n])?.to_dtype(op)?;
        let mut out: Vec<usize> = fa.iter().map(|&d| self.dims()[d]).collect();
        out.extend(fb.iter().map(|&d| other.dims()[d]));
        a.mm(&b)?.reshape(out)?.to_dtype(self.dtype())
    }

    /// `self @ weight.T + bias` (torch's `linear`): `self` is `[*, in]`, `weight` `[out, in]` (or
    /// `[in]`), `bias` `[out]`.
    pub fn linear(&self, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        no_bool("addmm_impl_cpu_", self)?;
        if crate::autocast::autocast_dtype().is_some() {
            // Autocast: product and bias in the lower dtype, as torch's autocast linear.
            let (x, w) = (crate::autocast::lower(self)?, crate::autocast::lower(weight)?);
            let wt = if w.rank() == 2 { w.t()? } else { w };
            let y = x.matmul(&wt)?;
            return match bias {
                Some(b) => y.add(&crate::autocast::lower(b)?),
                None => Ok(y),
            };
        }
        if bias.is_some() && weight.rank() != 2 && self.rank() == 2 {
            // torch's linear of a matrix with a bias is addmm, whose second matrix must be one
            return Err(Error::shape(format!(
                "addmm: mat2 must be a matrix, got {}-D tensor",
                weight.rank()
            )));
        }
        if let Some(b) = bias {
            if let Some(y) = linear_on_cpu(self, weight, b)? {
                return Ok(y);
            }
        }
        let wt = if weight.rank() == 2 { weight.t()? } else { weight.clone() };
        match bias {
            Some(b) if self.rank() == 2 && weight.rank() == 2 => b.addmm(self, &wt, 1, 1),
            Some(b) => {
                same_dtype(self, weight)?;
                let op = opmath(self.dtype());
                let y = self.to_dtype(op)?.matmul(&wt.to_dtype(op)?)?;
                y.add(&b.to_dtype(op)?)?.to_dtype(self.dtype())
            }
            None => self.matmul(&wt),
        }
    }

    /// Einstein summation (torch's `einsum`): `"ij,jk->ik"`, implicit outputs (`"ij,jk"`: the letters
    /// seen once, sorted), repeated letters in one operand (diagonals), `...` (broadcast dims).
    pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
        einsum::einsum(equation, operands)
    }
}

/// `x wᵀ + b` as one [`NnOp::Linear`] on the CPU for f32 `x` `[..., M, K]` (rank ≥ 2), `w` `[N, K]`, `b` `[N]`: the
/// bias joins the product's output tiles instead of taking a pass of its own. `None` where
/// [`Tensor::linear`]'s composition runs instead (other devices or dtypes, shapes that do not fit:
/// the composition reports the error).
///
/// [`NnOp::Linear`]: oxtorch_core::ops::NnOp::Linear
fn linear_on_cpu(x: &Tensor, w: &Tensor, b: &Tensor) -> Result<Option<Tensor>> {
    let operands = [x, w, b];
    let fits = x.rank() >= 2
        && w.rank() == 2
        && b.rank() == 1
        && x.dims().last() == Some(&w.dims()[1])
        && b.dims()[0] == w.dims()[0];
    if !fits || !operands.iter().all(|t| t.device().is_cpu() && t.dtype() == DType::F32) {
        return Ok(None);
    }
    let (k, n) = (w.dims()[1], w.dims()[0]);
    let mut out = x.dims()[..x.rank() - 1].to_vec();
    let m = out.iter().product::<usize>();
    out.push(n);
    let prim = oxtorch_core::ops::Prim::Nn(oxtorch_core::ops::NnOp::Linear);
    let y = crate::dispatch::apply1(&prim, &[&x.reshape([m, k])?, w, b], x.device())?;
    Ok(Some(y.reshape(out)?))
}
