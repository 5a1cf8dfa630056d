//! # oxtorch
//!
//! A pure-Rust deep learning framework with PyTorch's API. Write `use oxtorch as torch;` and the
//! names read as they do in Python:
//!
//! ```
//! use oxtorch as torch;
//! use torch::{tensor, Tensor};
//!
//! # fn main() -> torch::Result<()> {
//! torch::manual_seed(0);
//! let x = torch::randn([2, 3], ())?;                    // float32, cpu
//! let w = tensor!([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]);
//! let y = torch::nn::functional::relu(&x.matmul(&w)?)?;
//! println!("{y}");                                      // tensor([[...]]) as torch prints it
//! let half = y.to(torch::float16)?;                     // `.to(dtype)`, `.to("cpu")`
//! assert_eq!(half.dtype(), torch::float16);
//! # Ok(()) }
//! ```
//!
//! Crates behind the facade: `oxtorch-core` (dtypes, devices, layouts, the primitive op vocabulary),
//! `oxtorch-tensor` ([`Tensor`]), `oxtorch-backend-cpu`, `oxtorch-backend-tpu`, `oxtorch-autograd`,
//! `oxtorch-nn` and `oxtorch-hf-import`.

#![allow(non_upper_case_globals)]

/// The README's example, compiled and run as a doctest so that it stays true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use oxtorch_autograd as autograd;
pub use oxtorch_autograd::{enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled};
pub use oxtorch_nn as nn;
pub use oxtorch_nn::optim;
pub use oxtorch_tensor::autocast::{
    autocast, autocast_dtype, get_autocast_dtype, is_autocast_enabled, set_autocast_enabled, AutocastGuard,
};

/// `torch.amp`: autocast and gradient scaling for mixed-precision training.
pub mod amp {
    pub use oxtorch_nn::amp::{GradScaler, GradScalerOptions};
    pub use oxtorch_tensor::autocast::{
        autocast, get_autocast_dtype, is_autocast_enabled, set_autocast_enabled, AutocastGuard,
    };
}

/// `torch.linalg`: inverses, solvers, determinants, decompositions (Cholesky, QR, eigh, SVD), norms
/// and products, differentiable (see [`oxtorch_tensor::linalg`]).
pub mod linalg {
    pub use oxtorch_tensor::linalg::*;
}

/// torch's `torch.utils`: `utils::data` (datasets and loaders), `utils::checkpoint`.
pub mod utils {
    pub use oxtorch_autograd::checkpoint;
    pub use oxtorch_nn::data;
}
/// The eager XLA runtime behind `xla:N`/`tpu:N` tensors (torch_xla's `metrics`): `xla::metrics()`,
/// `xla::set_client_options`, `xla::device_count`.
pub use oxtorch_backend_tpu::xla;
pub use oxtorch_core::{finfo, iinfo, FInfo, IInfo};
pub use oxtorch_nn::distributions;
pub use oxtorch_nn::functional::{
    gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh, rnn_tanh_cell,
};
pub use oxtorch_tensor::determinism::{
    are_deterministic_algorithms_enabled, get_deterministic_debug_mode, get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled, set_deterministic_debug_mode,
    set_float32_matmul_precision, use_deterministic_algorithms,
};
pub use oxtorch_tensor::random::seed;
pub use oxtorch_tensor::testing;
pub use oxtorch_tensor::{bf16, f16};
pub use oxtorch_tensor::{
    default_generator, manual_seed, random, tensor, DType, Device, Error, Generator, Layout, Operand,
    Padding, Result, Scalar, Shape, Tensor, TensorOptions,
};
pub use oxtorch_tensor::{get_default_device, set_default_device};
pub use oxtorch_tensor::{get_printoptions, set_printoptions, with_printoptions, PrintOptions};
pub use oxtorch_tensor::{tune_process_allocator, AlignedAllocator, AllocatorTuning};
pub use oxtorch_tensor::{vmap, vmap1, vmap_with};

/// `torch.bool`
pub const bool: DType = DType::Bool;
/// `torch.uint8`
pub const uint8: DType = DType::U8;
/// `torch.int8`
pub const int8: DType = DType::I8;
/// `torch.int16`
pub const int16: DType = DType::I16;
/// `torch.int32`
pub const int32: DType = DType::I32;
/// `torch.int64` (`torch.long`)
pub const int64: DType = DType::I64;
/// `torch.long`
pub const long: DType = DType::I64;
/// `torch.float16` (`torch.half`)
pub const float16: DType = DType::F16;
/// `torch.half`
pub const half: DType = DType::F16;
/// `torch.bfloat16`
pub const bfloat16: DType = DType::BF16;
/// `torch.float32` (`torch.float`)
pub const float32: DType = DType::F32;
/// `torch.float`
pub const float: DType = DType::F32;
/// `torch.float64` (`torch.double`)
pub const float64: DType = DType::F64;
/// `torch.double`
pub const double: DType = DType::F64;

/// A device from its string (`"cpu"`, `"tpu:1"`, `"xla:0"`), like `torch.device(...)`.
pub fn device(s: &str) -> Result<Device> {
    s.parse()
}

/// `torch.zeros`
pub fn zeros(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::zeros(shape, opts)
}

/// `torch.ones`
pub fn ones(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::ones(shape, opts)
}

/// `torch.full`
pub fn full(
    shape: impl Into<Shape>,
    value: impl Into<Scalar>,
    opts: impl Into<TensorOptions>,
) -> Result<Tensor> {
    Tensor::full(shape, value, opts)
}

/// `torch.empty` (zero-filled: oxtorch never exposes uninitialised memory)
pub fn empty(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::empty(shape, opts)
}

/// `torch.arange(end)`
pub fn arange(end: impl Into<Scalar>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::arange(end, opts)
}

/// `torch.arange(start, end, step)`
pub fn arange_step(
    start: impl Into<Scalar>,
    end: impl Into<Scalar>,
    step: impl Into<Scalar>,
    opts: impl Into<TensorOptions>,
) -> Result<Tensor> {
    Tensor::arange_step(start, end, step, opts)
}

/// `torch.linspace`
pub fn linspace(start: f64, end: f64, steps: usize, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::linspace(start, end, steps, opts)
}

/// `torch.eye`
pub fn eye(n: usize, m: Option<usize>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::eye(n, m, opts)
}

/// `torch.rand`
pub fn rand(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::rand(shape, opts)
}

/// `torch.randn`
pub fn randn(shape: impl Into<Shape>, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::randn(shape, opts)
}

/// `torch.randint(low, high, shape)`
pub fn randint(
    low: i64,
    high: i64,
    shape: impl Into<Shape>,
    opts: impl Into<TensorOptions>,
) -> Result<Tensor> {
    Tensor::randint(low, high, shape, opts)
}

/// `torch.where(condition, input, other)`
pub fn where_(condition: &Tensor, input: impl Into<Operand>, other: impl Into<Operand>) -> Result<Tensor> {
    Tensor::where_cond(condition, input, other)
}

/// `torch.matmul`
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    a.matmul(b)
}

/// `torch.result_type` for two tensors.
pub fn result_type(a: &Tensor, b: &Tensor) -> DType {
    oxtorch_core::ResultTypeState::default().tensor(a.dtype(), a.rank()).tensor(b.dtype(), b.rank()).result()
}

/// `torch.promote_types`
pub fn promote_types(a: DType, b: DType) -> DType {
    oxtorch_core::promote_types(a, b)
}

/// `torch.get_default_dtype()`: float32 unless [`set_default_dtype`] changed it.
pub fn get_default_dtype() -> DType {
    DType::default_float()
}

/// `torch.set_default_dtype(dtype)`: the dtype of float tensors created without one, of float
/// numbers in type promotion, and of new layers' parameters. Float dtypes only; process-wide, so
/// set it at start-up.
pub fn set_default_dtype(dtype: DType) -> Result<()> {
    DType::set_default_float(dtype)
}

/// `torch.initial_seed()`: the default generator's seed.
pub fn initial_seed() -> u64 {
    default_generator().initial_seed()
}

/// `torch.get_rng_state()`: the default generator's state as a uint8 tensor (its seed and
/// stream offset, little-endian), for [`set_rng_state`].
pub fn get_rng_state() -> Result<Tensor> {
    let (seed, offset) = default_generator().get_state();
    let bytes: Vec<u8> = seed.to_le_bytes().into_iter().chain(offset.to_le_bytes()).collect();
    Tensor::from_vec(bytes, [16])
}

/// `torch.set_rng_state(state)`: restores a state from [`get_rng_state`].
pub fn set_rng_state(state: &Tensor) -> Result<()> {
    if state.dtype() != DType::U8 || state.dims() != [16] {
        return Err(Error::msg(format!(
            "set_rng_state expects the uint8 tensor of 16 bytes get_rng_state returns, got {} {:?}",
            state.dtype().scalar_type_name(),
            state.dims()
        )));
    }
    let bytes = state.to_vec::<u8>()?;
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    default_generator().set_state((word(0), word(8)));
    Ok(())
}

/// `torch.broadcast_shapes(*shapes)`: the shape all of `shapes` broadcast to.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    shapes.iter().try_fold(Vec::new(), |acc, s| oxtorch_core::broadcast_shapes(&acc, s))
}

/// `torch.broadcast_tensors(*tensors)`: views of `tensors` expanded to one shape.
pub fn broadcast_tensors(tensors: &[&Tensor]) -> Result<Vec<Tensor>> {
    Tensor::broadcast_tensors(tensors)
}

/// `torch.get_num_threads()`: the CPU kernels' thread count.
pub fn get_num_threads() -> usize {
    rayon::current_num_threads()
}

/// `torch.set_num_threads(n)`: the CPU kernels' thread count. The pool starts with the first
/// parallel kernel, so call this before any tensor work; later calls are an error.
pub fn set_num_threads(n: usize) -> Result<()> {
    rayon::ThreadPoolBuilder::new().num_threads(n).build_global().map_err(|e| {
        Error::msg(format!("set_num_threads({n}) must come before the first parallel kernel: {e}"))
    })
}

/// `torch.cat`: tensors joined along an existing dim.
pub fn cat(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
    Tensor::cat(tensors, dim)
}

/// `torch.stack`: tensors of one shape joined along a new dim.
pub fn stack(tensors: &[&Tensor], dim: isize) -> Result<Tensor> {
    Tensor::stack(tensors, dim)
}

/// `torch.einsum`
pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
    Tensor::einsum(equation, operands)
}

/// `torch.randperm`: a random permutation of `0..n` (int64 unless `opts` says otherwise).
pub fn randperm(n: usize, opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::randperm(n, opts)
}

/// `torch.zeros_like`
pub fn zeros_like(t: &Tensor) -> Result<Tensor> {
    t.zeros_like()
}

/// `torch.ones_like`
pub fn ones_like(t: &Tensor) -> Result<Tensor> {
    t.ones_like()
}

/// `torch.full_like`
pub fn full_like(t: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
    t.full_like(value)
}

/// `torch.isclose(a, b, rtol, atol, equal_nan)`
pub fn isclose(a: &Tensor, b: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
    a.isclose(b, rtol, atol, equal_nan)
}

/// `torch.allclose(a, b, rtol, atol, equal_nan)` (torch's defaults are `1e-5, 1e-8, false`).
pub fn allclose(a: &Tensor, b: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
    a.allclose(b, rtol, atol, equal_nan)
}

/// `torch.pdist(x, p)`: the distances between the rows of an `[N, M]` input, upper triangle only.
pub fn pdist(x: &Tensor, p: f64) -> Result<Tensor> {
    x.pdist(p)
}

/// `torch.poisson(rates)`: a Poisson draw per element from the default generator.
pub fn poisson(rates: &Tensor) -> Result<Tensor> {
    rates.poisson()
}

/// `torch.chain_matmul(*matrices)`: the product of 2-d matrices in the cheapest order.
pub fn chain_matmul(matrices: &[&Tensor]) -> Result<Tensor> {
    Tensor::chain_matmul(matrices)
}

/// `torch.matrix_exp(a)`: the matrix exponential of each square matrix of `a`.
pub fn matrix_exp(a: &Tensor) -> Result<Tensor> {
    a.matrix_exp()
}

/// `torch.empty_strided(size, stride)`: an uninitialized tensor with the given strides.
pub fn empty_strided(size: &[usize], stride: &[usize], opts: impl Into<TensorOptions>) -> Result<Tensor> {
    Tensor::empty_strided(size, stride, opts)
}

/// `torch.frombuffer(buffer, dtype=, count=, offset=)`: a 1-d tensor of the buffer's bytes read as
/// `dtype` (copied; torch shares the buffer).
pub fn frombuffer(buffer: &[u8], dtype: DType, count: Option<usize>, offset: usize) -> Result<Tensor> {
    Tensor::frombuffer(buffer, dtype, count, offset)
}

/// `torch.geqrf(input)`: see [`Tensor::geqrf`].
pub fn geqrf(input: &Tensor) -> Result<(Tensor, Tensor)> {
    input.geqrf()
}

/// `torch.orgqr(input, tau)`: see [`Tensor::orgqr`].
pub fn orgqr(input: &Tensor, tau: &Tensor) -> Result<Tensor> {
    input.orgqr(tau)
}

/// `torch.ormqr(input, tau, other, left, transpose)`: see [`Tensor::ormqr`].
pub fn ormqr(input: &Tensor, tau: &Tensor, other: &Tensor, left: bool, transpose: bool) -> Result<Tensor> {
    input.ormqr(tau, other, left, transpose)
}

/// `torch.segment_reduce(data, reduce, lengths=, indices=, offsets=, axis=, unsafe=, initial=)`:
/// see [`Tensor::segment_reduce`].
#[allow(clippy::too_many_arguments)]
pub fn segment_reduce(
    data: &Tensor,
    reduce: &str,
    lengths: Option<&Tensor>,
    indices: Option<&Tensor>,
    offsets: Option<&Tensor>,
    axis: isize,
    unsafe_: bool,
    initial: Option<f64>,
) -> Result<Tensor> {
    data.segment_reduce(reduce, lengths, indices, offsets, axis, unsafe_, initial)
}

/// `torch.trapz(y, dim=dim)`: the trapezoidal rule with unit spacing along `dim`.
pub fn trapz(y: &Tensor, dim: isize) -> Result<Tensor> {
    y.trapz(dim)
}

/// `torch.hsplit(input, indices)`: splits along the columns at `indices`.
pub fn hsplit(input: &Tensor, indices: &[isize]) -> Result<Vec<Tensor>> {
    input.hsplit_indices(indices)
}

/// `torch.vsplit(input, indices)`: splits along the rows at `indices`.
pub fn vsplit(input: &Tensor, indices: &[isize]) -> Result<Vec<Tensor>> {
    input.vsplit_indices(indices)
}

/// `torch.dsplit(input, indices)`: splits along the depth (dim 2) at `indices`.
pub fn dsplit(input: &Tensor, indices: &[isize]) -> Result<Vec<Tensor>> {
    input.dsplit_indices(indices)
}

/// `torch.func`: [`func::functional_call`] runs a module with some of its parameters and buffers
/// replaced by given tensors (restored afterwards), gradients flowing to those tensors.
pub mod func {
    pub use oxtorch_autograd::func::{
        grad, grad1, grad_and_value, hessian, hessian1, jacfwd, jacrev, jacrev1, jvp, linearize, vjp,
    };
    pub use oxtorch_nn::utils::{
        functional_call, functional_call_forward, functional_call_with, FunctionalCallOptions,
    };
    pub use oxtorch_tensor::{vmap, vmap1, vmap_with, Randomness, VmapOptions};
}

/// torch's `torch.special`: the special functions under their torch names.
pub mod special {
    use super::{DType, Operand, Result, Tensor};

    /// `special.gammaln`: `ln |Γ(x)|`.
    pub fn gammaln(x: &Tensor) -> Result<Tensor> {
        x.lgamma()
    }

    /// `special.digamma`: `ψ(x) = Γ'(x) / Γ(x)`.
    pub fn digamma(x: &Tensor) -> Result<Tensor> {
        x.digamma()
    }

    /// `special.psi`: the digamma function.
    pub fn psi(x: &Tensor) -> Result<Tensor> {
        x.digamma()
    }

    /// `special.polygamma(n, x)`: the n-th derivative of digamma.
    pub fn polygamma(n: i64, x: &Tensor) -> Result<Tensor> {
        x.polygamma(n)
    }

    /// `special.multigammaln(x, p)`: the log of the multivariate gamma function of dimension `p`.
    pub fn multigammaln(x: &Tensor, p: i64) -> Result<Tensor> {
        x.mvlgamma(p)
    }

    /// `special.xlogy(x, y)`: `x · ln y`, 0 where `x = 0`.
    pub fn xlogy(x: &Tensor, y: impl Into<Operand>) -> Result<Tensor> {
        x.xlogy(y)
    }

    /// `special.xlog1py(x, y)`: `x · ln(1 + y)`, 0 where `x = 0`.
    pub fn xlog1py(x: &Tensor, y: impl Into<Operand>) -> Result<Tensor> {
        x.xlog1py(y)
    }

    /// `special.entr(x)`: `-x ln x` for `x > 0`, 0 at 0, -∞ below.
    pub fn entr(x: &Tensor) -> Result<Tensor> {
        x.entr()
    }

    /// `special.sinc(x)`: `sin(πx) / (πx)`.
    pub fn sinc(x: &Tensor) -> Result<Tensor> {
        x.sinc()
    }

    /// `special.expit(x)`: the logistic sigmoid.
    pub fn expit(x: &Tensor) -> Result<Tensor> {
        x.sigmoid()
    }

    /// `special.logit(x, eps)`
    pub fn logit(x: &Tensor, eps: Option<f64>) -> Result<Tensor> {
        x.logit(eps)
    }

    /// `special.erf(x)`
    pub fn erf(x: &Tensor) -> Result<Tensor> {
        x.erf()
    }

    /// `special.erfc(x)`
    pub fn erfc(x: &Tensor) -> Result<Tensor> {
        x.erfc()
    }

    /// `special.erfinv(x)`
    pub fn erfinv(x: &Tensor) -> Result<Tensor> {
        x.erfinv()
    }

    /// `special.ndtr(x)`: the standard normal CDF `(1 + erf(x / √2)) / 2`.
    pub fn ndtr(x: &Tensor) -> Result<Tensor> {
        x.ndtr()
    }

    /// `special.exp2(x)`
    pub fn exp2(x: &Tensor) -> Result<Tensor> {
        x.exp2()
    }

    /// `special.expm1(x)`
    pub fn expm1(x: &Tensor) -> Result<Tensor> {
        x.expm1()
    }

    /// `special.log1p(x)`
    pub fn log1p(x: &Tensor) -> Result<Tensor> {
        x.log1p()
    }

    /// `special.round(x)`
    pub fn round(x: &Tensor) -> Result<Tensor> {
        x.round()
    }

    /// `special.softmax(x, dim, dtype)`
    pub fn softmax(x: &Tensor, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        x.softmax(dim, dtype)
    }

    /// `special.log_softmax(x, dim, dtype)`
    pub fn log_softmax(x: &Tensor, dim: isize, dtype: Option<DType>) -> Result<Tensor> {
        x.log_softmax(dim, dtype)
    }
    /// `special.erfcx(x)`: the scaled complementary error function `exp(x²) erfc(x)`.
    pub fn erfcx(x: &Tensor) -> Result<Tensor> {
        x.special_erfcx()
    }
    /// `special.log_ndtr(x)`: the log of the standard normal CDF.
    pub fn log_ndtr(x: &Tensor) -> Result<Tensor> {
        x.special_log_ndtr()
    }
    /// `special.ndtri(p)`: the inverse of the standard normal CDF.
    pub fn ndtri(p: &Tensor) -> Result<Tensor> {
        p.special_ndtri()
    }
    /// `special.zeta(x, q)`: the Hurwitz zeta function (differentiable in `q` only).
    pub fn zeta(x: &Tensor, q: impl Into<Operand>) -> Result<Tensor> {
        x.special_zeta(q)
    }
    /// `special.zeta(x, q)` for a number `x`.
    pub fn zeta_scalar(x: f64, q: &Tensor) -> Result<Tensor> {
        Tensor::special_zeta_scalar(x, q)
    }
    /// `special.gammainc(a, x)`: the regularized lower incomplete gamma function.
    pub fn gammainc(a: &Tensor, x: &Tensor) -> Result<Tensor> {
        a.special_gammainc(x)
    }
    /// `special.gammaincc(a, x)`: the regularized upper incomplete gamma function.
    pub fn gammaincc(a: &Tensor, x: &Tensor) -> Result<Tensor> {
        a.special_gammaincc(x)
    }
    /// `special.bessel_j0(x)`: Bessel function of the first kind, order 0.
    pub fn bessel_j0(x: &Tensor) -> Result<Tensor> {
        x.special_bessel_j0()
    }
    /// `special.bessel_j1(x)`: Bessel function of the first kind, order 1.
    pub fn bessel_j1(x: &Tensor) -> Result<Tensor> {
        x.special_bessel_j1()
    }
    /// `special.bessel_y0(x)`: Bessel function of the second kind, order 0.
    pub fn bessel_y0(x: &Tensor) -> Result<Tensor> {
        x.special_bessel_y0()
    }
    /// `special.bessel_y1(x)`: Bessel function of the second kind, order 1.
    pub fn bessel_y1(x: &Tensor) -> Result<Tensor> {
        x.special_bessel_y1()
    }
    /// `special.i0(x)`: the modified Bessel function of the first kind, order 0.
    pub fn i0(x: &Tensor) -> Result<Tensor> {
        x.i0()
    }
    /// `special.i0e(x)`: `i0(x)` scaled by `exp(-|x|)`.
    pub fn i0e(x: &Tensor) -> Result<Tensor> {
        x.i0e()
    }
    /// `special.i1(x)`: the modified Bessel function of the first kind, order 1.
    pub fn i1(x: &Tensor) -> Result<Tensor> {
        x.i1()
    }
    /// `special.i1e(x)`: `i1(x)` scaled by `exp(-|x|)`.
    pub fn i1e(x: &Tensor) -> Result<Tensor> {
        x.i1e()
    }
    /// `special.logsumexp(x, dims, keepdim)`: `log Σ exp(x)` over `dims`, computed stably.
    pub fn logsumexp(x: &Tensor, dims: impl oxtorch_tensor::IntoDims, keepdim: bool) -> Result<Tensor> {
        x.logsumexp(dims, keepdim)
    }
    /// `special.modified_bessel_i0(x)`: modified Bessel function of the first kind, order 0.
    pub fn modified_bessel_i0(x: &Tensor) -> Result<Tensor> {
        x.special_modified_bessel_i0()
    }
    /// `special.modified_bessel_i1(x)`: modified Bessel function of the first kind, order 1.
    pub fn modified_bessel_i1(x: &Tensor) -> Result<Tensor> {
        x.special_modified_bessel_i1()
    }
    /// `special.modified_bessel_k0(x)`: modified Bessel function of the second kind, order 0.
    pub fn modified_bessel_k0(x: &Tensor) -> Result<Tensor> {
        x.special_modified_bessel_k0()
    }
    /// `special.modified_bessel_k1(x)`: modified Bessel function of the second kind, order 1.
    pub fn modified_bessel_k1(x: &Tensor) -> Result<Tensor> {
        x.special_modified_bessel_k1()
    }
    /// `special.scaled_modified_bessel_k0(x)`: `exp(x) K0(x)`.
    pub fn scaled_modified_bessel_k0(x: &Tensor) -> Result<Tensor> {
        x.special_scaled_modified_bessel_k0()
    }
    /// `special.scaled_modified_bessel_k1(x)`: `exp(x) K1(x)`.
    pub fn scaled_modified_bessel_k1(x: &Tensor) -> Result<Tensor> {
        x.special_scaled_modified_bessel_k1()
    }
    /// `special.spherical_bessel_j0(x)`: `sin(x) / x`.
    pub fn spherical_bessel_j0(x: &Tensor) -> Result<Tensor> {
        x.special_spherical_bessel_j0()
    }
    /// `special.airy_ai(x)`: the Airy function Ai.
    pub fn airy_ai(x: &Tensor) -> Result<Tensor> {
        x.special_airy_ai()
    }
    /// `special.chebyshev_polynomial_t(x, n)`: Chebyshev polynomial of the first kind.
    pub fn chebyshev_polynomial_t(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_chebyshev_polynomial_t(n)
    }
    /// `special.chebyshev_polynomial_u(x, n)`: Chebyshev polynomial of the second kind.
    pub fn chebyshev_polynomial_u(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_chebyshev_polynomial_u(n)
    }
    /// `special.chebyshev_polynomial_v(x, n)`: Chebyshev polynomial of the third kind.
    pub fn chebyshev_polynomial_v(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_chebyshev_polynomial_v(n)
    }
    /// `special.chebyshev_polynomial_w(x, n)`: Chebyshev polynomial of the fourth kind.
    pub fn chebyshev_polynomial_w(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_chebyshev_polynomial_w(n)
    }
    /// `special.shifted_chebyshev_polynomial_t(x, n)`: `T_n(2x - 1)`.
    pub fn shifted_chebyshev_polynomial_t(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_shifted_chebyshev_polynomial_t(n)
    }
    /// `special.shifted_chebyshev_polynomial_u(x, n)`: `U_n(2x - 1)`.
    pub fn shifted_chebyshev_polynomial_u(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_shifted_chebyshev_polynomial_u(n)
    }
    /// `special.shifted_chebyshev_polynomial_v(x, n)`: `V_n(2x - 1)`.
    pub fn shifted_chebyshev_polynomial_v(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_shifted_chebyshev_polynomial_v(n)
    }
    /// `special.shifted_chebyshev_polynomial_w(x, n)`: `W_n(2x - 1)`.
    pub fn shifted_chebyshev_polynomial_w(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_shifted_chebyshev_polynomial_w(n)
    }
    /// `special.hermite_polynomial_h(x, n)`: physicists' Hermite polynomial.
    pub fn hermite_polynomial_h(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_hermite_polynomial_h(n)
    }
    /// `special.hermite_polynomial_he(x, n)`: probabilists' Hermite polynomial.
    pub fn hermite_polynomial_he(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_hermite_polynomial_he(n)
    }
    /// `special.laguerre_polynomial_l(x, n)`: Laguerre polynomial.
    pub fn laguerre_polynomial_l(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_laguerre_polynomial_l(n)
    }
    /// `special.legendre_polynomial_p(x, n)`: Legendre polynomial.
    pub fn legendre_polynomial_p(x: &Tensor, n: impl Into<Operand>) -> Result<Tensor> {
        x.special_legendre_polynomial_p(n)
    }
}
