//! `torch.optim`: optimizers and learning-rate schedulers (they need autograd's gradients and arrive
//! with the nn issue; this module fixes where they live: `oxtorch::optim`).
