//! torch ops built entirely from other differentiable tensor ops, so that autograd, dtype handling
//! and every backend come with them: differences and integration (diff, trapezoid,
//! cumulative_trapezoid), NaN-aware reductions (nansum, nanmean, nanquantile), aminmax, distances
//! (dist, cdist), logaddexp/logaddexp2, cross products, cov/corrcoef, and constructors (vander,
//! tril/triu_indices, cartesian_prod, combinations, block_diag, diag_embed); and unique slices
//! along a dim (found on the host, gathered on the device).
//!
//! Each op follows torch's definition (its Python reference or ATen composite) step by step, with
//! torch's argument checks and messages.

mod construct;
mod finite_difference;
mod float_bits;
mod histogram;
mod integer;
mod pairwise;
mod pdist;
mod pointwise;
mod quantile;
mod reduce;
mod renorm_addbmm;
mod segment_reduce;
mod special_bessel;
mod special_kernels;
mod special_ops;
mod special_tables;
mod unique;
mod windows;
