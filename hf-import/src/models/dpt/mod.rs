//! Dense prediction on ViT-like backbones: DPT's neck (reassembled token maps fused coarse to
//! fine) and the models built on it (DPT, Depth Anything).

mod depth_anything;
mod hybrid;
mod neck;
mod vit_dpt;

pub(crate) use depth_anything::index_from_end;
pub use depth_anything::DepthAnything;
pub use vit_dpt::Dpt;
