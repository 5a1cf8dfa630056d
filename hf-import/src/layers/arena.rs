//! Decoder weights packed into one buffer on the CPU.
//!
//! Decoding at batch 1 streams every weight matrix from memory once per token, so its speed is the
//! memory bandwidth the weights are read at. Packing them into one large buffer, in the order a forward
//! pass reads them, lets the CPU backend back it with 2 MiB pages (which stream about twice as fast as
//! 4 KiB ones, see `oxtorch_backend_cpu`'s huge-page note) and makes q/k/v and gate/up neighbours, so
//! each pair or triple runs as one fused product. Parts that view a memory-mapped checkpoint give
//! their pages back to the OS as soon as they are copied ([`Tensor::release_pages`]), so the
//! process holds about one copy of the weights, never two; set `OXTORCH_PACK_WEIGHTS=0` to keep the
//! checkpoint's tensors as loaded.

use oxtorch_tensor::{Device, Tensor};

use crate::error::Result;

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
    /// Copies `parts` one after another into a new buffer; `None` (nothing to pack) when `parts` is
    /// empty or mixes dtypes or devices, or when one of them requires grad (views of a shared copy
    /// would not be leaves).
    pub fn pack(parts: &[&Tensor]) -> Result<Option<Arena>> {
        let Some(first) = parts.first() else { return Ok(None) };
        if parts
            .iter()
            .any(|t| t.dtype() != first.dtype() || t.device() != first.device() || t.requires_grad())
        {
            return Ok(None);
        }
        let total = parts.iter().map(|t| t.numel()).sum::<usize>();
        let buf = Tensor::empty([total], (first.dtype(), first.device()))?;
        let mut at = 0;
        for t in parts {
            let n = t.numel();
            buf.narrow(0, at as isize, n)?.copy_(&t.reshape([n])?)?;
            // A part read from a memory-mapped checkpoint leaves resident memory once copied, so
            // the peak is the packed weights plus one part, not both copies of every weight.
            t.release_pages();
            at += n;
        }
        Ok(Some(Arena { buf, at: 0 }))
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
    fn views_follow_the_packed_order() {
        let a = Tensor::arange(6i64, ())
            .unwrap()
            .reshape([2, 3])
            .unwrap()
            .to_dtype(oxtorch_tensor::DType::F32)
            .unwrap();
        let b = Tensor::full([3, 2], 7.0, ()).unwrap().t().unwrap();
        let mut arena = Arena::pack(&[&a, &b]).unwrap().unwrap();
        let a2 = arena.next(&[2, 3]).unwrap();
        assert!(!arena.is_done());
        let b2 = arena.next(&[2, 3]).unwrap();
        assert!(arena.is_done());
        assert_eq!(a2.to_vec::<f32>().unwrap(), a.to_vec::<f32>().unwrap());
        assert_eq!(b2.to_vec::<f32>().unwrap(), vec![7.0; 6]);
        let half = Tensor::ones([2], oxtorch_tensor::DType::F16).unwrap();
        assert!(Arena::pack(&[&a, &half]).unwrap().is_none());
        assert!(Arena::pack(&[]).unwrap().is_none());
    }
}
