//! The tensor crate's CPU tests, one binary (each test binary links the whole stack, so fewer
//! binaries build faster and take a fraction of the disk): goldens against PyTorch for every op
//! family, views and torch semantics, autograd basics, and the fused CPU kernels against their
//! compositions. The XLA tests are separate binaries (`xla_*.rs`): they read process-wide counters.

mod common;

mod api32;
mod api32_golden;
mod api_extras;
mod autograd_basics;
mod autograd_edges;
mod autograd_edges31;
mod autograd_functions;
mod composite_ops;
mod fold;
mod fused_attention;
mod fused_conv2d;
mod fused_cross_entropy;
mod fused_gelu_backward;
mod fused_linear;
mod golden;
mod golden_indexshape;
mod golden_math;
mod golden_nn;
mod golden_sortstats;
mod histogram31;
mod histogram31_golden;
mod index_edges;
mod linalg;
mod linalg2;
mod linalg3;
mod linalg32;
mod linalg32_golden;
mod memory_format;
mod misc31;
mod misc31_golden;
mod misc33;
mod misc33_golden;
mod native33;
mod native33_golden;
mod ndarray_conversion;
mod numeric32;
mod numeric32_golden;
mod opfuzz33;
mod opfuzz33_golden;
mod print32;
mod print32_golden;
mod printfuzz34;
mod printfuzz34_golden;
mod scalar_operands;
mod scatter30;
mod scatter30_golden;
mod semantics;
mod semfuzz34;
mod semfuzz34_golden;
mod special31;
mod special31_golden;
mod special_and_inplace;
mod stats_precision;
mod tier3_golden;
mod tier3_ops;
mod views;
mod views32;
mod views32_golden;
mod vmap32;
mod vmap32_golden;
