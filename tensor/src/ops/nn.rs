//! Neural-network kernels: convolution, pooling, interpolation, normalisation, attention, losses.
