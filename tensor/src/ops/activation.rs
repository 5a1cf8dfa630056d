//! Activation functions and the rest of the elementwise math surface (gelu, silu, softplus, clamp, erf, ...).
