//! Decoder weights packed into one buffer on the CPU.
//!
//! Decoding at batch 1 streams every weight matrix from memory once per token, so its speed is the
//! memory bandwidth the weights are read at. Packing them into one large buffer, in the order a forward
//! pass reads them, lets the CPU backend back it with 2 MiB pages (which stream about twice as fast as
//! 4 KiB ones, see `oxtorch_backend_cpu`'s huge-page note) and makes q/k/v and gate/up neighbours, so
//! each pair or triple runs as one fused product. Parts that view a memory-mapped checkpoint give
//! their pages back to the OS as soon as they are copied ([`Tensor::release_pages`]), and parts
//! stored in another dtype are cast on the way in (the model reads them uncast, see
//! [`crate::weights::Vars::deferring_matrix_casts`]), so the process holds about one copy of the
//! weights, never two; set `OXTORCH_PACK_WEIGHTS=0` to keep the checkpoint's tensors as loaded.

use oxtorch_tensor::{DType, Device, Tensor};

use crate::error::{Error, Result};
use crate::weights::copy_releasing;

/// Whether decoders on `device` pack their weights (the CPU, unless `OXTORCH_PACK_WEIGHTS=0`).
pub fn packing_enabled(device: Device) -> bool {
    device == Device::Cpu && std::env::var("OXTORCH_PACK_WEIGHTS").map_or(true, |v| v != "0")
}

/// One buffer holding several tensors back to back, handed out again as views in the same order.
#[derive(Debug)]
pub struct Arena {
    buf: Tensor,
    at: usize,
}

impl Arena {
    /// Copies `parts`, cast to `dtype`, one after another into a new buffer on the CPU.
    ///
    /// Parts must be on the CPU and must not require grad (views of a shared copy would not be
    /// leaves).
    pub fn pack(parts: &[&Tensor], dtype: DType) -> Result<Arena> {
        if let Some(t) = parts.iter().find(|t| t.device() != Device::Cpu || t.requires_grad()) {
            return Err(Error::Weight(format!(
                "cannot pack a weight of shape {:?} on {:?}{}: packed weights are CPU tensors without grad",
                t.dims(),
                t.device(),
                if t.requires_grad() { " that requires grad" } else { "" }
            )));
        }
        let total = parts.iter().map(|t| t.numel()).sum::<usize>();
        let buf = Tensor::empty([total], (dtype, Device::Cpu))?;
        let mut at = 0;
        for t in parts {
            let n = t.numel();
            // A part read from a memory-mapped checkpoint leaves resident memory as it is copied,
            // so the peak is the packed weights plus a few megabytes, not both copies.
            copy_releasing(&buf.narrow(0, at as isize, n)?, t)?;
            at += n;
        }
        Ok(Arena { buf, at: 0 })
    }

    /// The next `dims`-shaped stretch of the buffer, as a view.
    pub fn next(&mut self, dims: &[usize]) -> Result<Tensor> {
        let n: usize = dims.iter().product();
        let t = self.buf.narrow(0, self.at as isize, n)?.view(dims)?;
        self.at += n;
        Ok(t)
    }

    /// Whether every packed element was handed out.
    pub fn is_done(&self) -> bool {
        self.at == self.buf.numel()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_follow_the_packed_order_cast_to_the_arena_dtype() {
        let a = Tensor::arange(6i64, ()).unwrap().reshape([2, 3]).unwrap().to_dtype(DType::F32).unwrap();
        let b = Tensor::full([3, 2], 7.0, ()).unwrap().t().unwrap();
        let half = Tensor::full([2], 1.5, DType::F16).unwrap();
        let mut arena = Arena::pack(&[&a, &b, &half], DType::BF16).unwrap();
        let a2 = arena.next(&[2, 3]).unwrap();
        assert!(!arena.is_done());
        let b2 = arena.next(&[2, 3]).unwrap();
        let h2 = arena.next(&[2]).unwrap();
        assert!(arena.is_done());
        assert_eq!(a2.dtype(), DType::BF16);
        assert_eq!(a2.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap(), a.to_vec::<f32>().unwrap());
        assert_eq!(b2.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap(), vec![7.0; 6]);
        assert_eq!(h2.to_dtype(DType::F32).unwrap().to_vec::<f32>().unwrap(), vec![1.5; 2]);
        assert!(Arena::pack(&[], DType::F32).unwrap().is_done());
        let leaf = Tensor::ones([2], ()).unwrap().requires_grad_(true).unwrap();
        let err = Arena::pack(&[&a, &leaf], DType::F32).unwrap_err().to_string();
        assert!(err.contains("requires grad"), "{err}");
    }
}
