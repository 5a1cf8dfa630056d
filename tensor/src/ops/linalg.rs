//! Linear algebra beyond matmul: bmm, addmm, baddbmm, linear, einsum, outer, dot, vdot, tensordot, kron.
