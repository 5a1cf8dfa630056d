//! Numerical gradient checks (f64, central differences) of every differentiable op, one test per
//! family; `gradgradcheck` on a representative subset; torch's conventions for the
//! non-differentiable ops.

#[path = "gradcheck_ops/activations.rs"]
mod activations;
#[path = "gradcheck_ops/common.rs"]
mod common;
#[path = "gradcheck_ops/decompositions.rs"]
mod decompositions;
#[path = "gradcheck_ops/decompositions2.rs"]
mod decompositions2;
#[path = "gradcheck_ops/indexing.rs"]
mod indexing;
#[path = "gradcheck_ops/inplace.rs"]
mod inplace;
#[path = "gradcheck_ops/linalg.rs"]
mod linalg;
#[path = "gradcheck_ops/linalg3.rs"]
mod linalg3;
#[path = "gradcheck_ops/math.rs"]
mod math;
#[path = "gradcheck_ops/nn.rs"]
mod nn;
#[path = "gradcheck_ops/non_differentiable.rs"]
mod non_differentiable;
#[path = "gradcheck_ops/pdist_and_inplace_views.rs"]
mod pdist_and_inplace_views;
#[path = "gradcheck_ops/precision.rs"]
mod precision;
#[path = "gradcheck_ops/reductions.rs"]
mod reductions;
#[path = "gradcheck_ops/second_order.rs"]
mod second_order;
#[path = "gradcheck_ops/shape.rs"]
mod shape;
#[path = "gradcheck_ops/special.rs"]
mod special;
#[path = "gradcheck_ops/special_bessel_and_ndtr.rs"]
mod special_bessel_and_ndtr;
#[path = "gradcheck_ops/tier3.rs"]
mod tier3;

use common::Case;

/// A family of cases: its name, its case builder and the number of cases it must run.
pub type Family = (&'static str, fn() -> Vec<Case>, usize);

/// Every family, checked to first order by its own test and to second order by
/// `second_order::all_families`.
pub const FAMILIES: &[Family] = &[
    ("activations", activations::activations_cases, 19),
    ("softmax_family", activations::softmax_family_cases, 12),
    ("gather_scatter", indexing::gather_scatter_cases, 21),
    ("index_ops", indexing::index_ops_cases, 26),
    ("where_family", indexing::where_family_cases, 3),
    ("linalg", linalg::linalg_cases, 35),
    ("unary_math", math::unary_math_cases, 41),
    ("binary_math", math::binary_math_cases, 36),
    ("convolutions", nn::convolutions_cases, 16),
    ("pooling", nn::pooling_cases, 19),
    ("interpolation", nn::interpolation_cases, 22),
    ("embedding", nn::embedding_cases, 3),
    ("normalization", nn::normalization_cases, 11),
    ("attention", nn::attention_cases, 6),
    ("losses", nn::losses_cases, 19),
    ("dropout", nn::dropout_cases, 3),
    ("reductions", reductions::reductions_cases, 40),
    ("scans_and_orderings", reductions::scans_and_orderings_cases, 31),
    ("joins_and_splits", shape::joins_and_splits_cases, 18),
    ("repeats_and_reorders", shape::repeats_and_reorders_cases, 17),
    ("padding", shape::padding_cases, 8),
    ("views", shape::views_cases, 25),
    ("inplace", inplace::inplace_cases, 10),
    ("special_and_composite", special::special_cases, 30),
    ("tier3", tier3::tier3_cases, 8),
    ("pdist_and_inplace_views", pdist_and_inplace_views::pdist_and_inplace_views_cases, 13),
    ("special_bessel_and_ndtr", special_bessel_and_ndtr::special_bessel_and_ndtr_cases, 14),
];
