//! Fused optimizer steps (torch's `fused=True` optimizers): one kernel per parameter and step.

use std::sync::Arc;

use oxtorch_core::{Device, Result};
use smallvec::SmallVec;

use crate::autograd::record::needs_recording;
use crate::storage::{Storage, StorageCell};
use crate::Tensor;

pub use oxtorch_backend_cpu::optim::AdamScalars;

/// A lock on one operand's storage: the gradient is read, the rest written.
enum Guard<'a> {
    Read(std::sync::RwLockReadGuard<'a, Storage>),
    Write(std::sync::RwLockWriteGuard<'a, Storage>),
}

impl Tensor {
    /// One Adam/AdamW step of this parameter in place, fused into a single pass: `self`, `exp_avg`,
    /// `exp_avg_sq` and (amsgrad) `max_exp_avg_sq` are updated from `grad` exactly as torch's
    /// single-tensor algorithm updates them op by op (same roundings).
    ///
    /// Returns `Ok(false)`, touching nothing, where no fused kernel applies (a device without one,
    /// non-contiguous or differently typed operands, operands sharing storage, or grad mode recording
    /// any of them): the caller then runs the op-by-op update.
    pub fn fused_adam_(
        &self,
        grad: &Tensor,
        exp_avg: &Tensor,
        exp_avg_sq: &Tensor,
        max_exp_avg_sq: Option<&Tensor>,
        scalars: &AdamScalars,
    ) -> Result<bool> {
        let mut ops: SmallVec<[&Tensor; 5]> = SmallVec::from_slice(&[self, grad, exp_avg, exp_avg_sq]);
        ops.extend(max_exp_avg_sq);
        let fusable = ops.iter().all(|t| {
            t.device() == Device::Cpu
                && t.layout().is_contiguous()
                && t.dtype() == self.dtype()
                && t.dims() == self.dims()
        }) && self.dtype().is_float()
            && !needs_recording(&ops);
        let distinct = ops
            .iter()
            .enumerate()
            .all(|(i, a)| ops[..i].iter().all(|b| !Arc::ptr_eq(a.storage(), b.storage())));
        if !fusable || !distinct {
            return Ok(false);
        }
        let cells: SmallVec<[&Arc<StorageCell>; 5]> = ops.iter().map(|t| t.storage()).collect();
        // Lock in address order, as `dispatch` does, so that concurrent ops cannot deadlock.
        let mut order: SmallVec<[usize; 5]> = (0..cells.len()).collect();
        order.sort_unstable_by_key(|&i| Arc::as_ptr(cells[i]));
        let mut guards: SmallVec<[Option<Guard>; 5]> = (0..cells.len()).map(|_| None).collect();
        for i in order {
            guards[i] =
                Some(if i == 1 { Guard::Read(cells[i].read()) } else { Guard::Write(cells[i].write()) });
        }
        let mut it = guards.iter_mut().map(|g| g.as_mut().expect("every operand is locked"));
        let (Some(gp), Some(gg), Some(gm), Some(gv)) = (it.next(), it.next(), it.next(), it.next()) else {
            unreachable!("four operands at least")
        };
        let gvm = it.next();
        let (Guard::Write(p), Guard::Read(g), Guard::Write(m), Guard::Write(v)) = (gp, gg, gm, gv) else {
            unreachable!("the gradient is the only operand read")
        };
        #[allow(unreachable_patterns)]
        match (&mut **p, &**g, &mut **m, &mut **v) {
            (Storage::Cpu(p), Storage::Cpu(g), Storage::Cpu(m), Storage::Cpu(v)) => {
                let vm = match gvm {
                    Some(Guard::Write(w)) => match &mut **w {
                        Storage::Cpu(s) => Some((s, ops[4].layout())),
                        _ => return Ok(false),
                    },
                    _ => None,
                };
                oxtorch_backend_cpu::optim::adam_step(
                    (p, self.layout()),
                    (g, grad.layout()),
                    (m, exp_avg.layout()),
                    (v, exp_avg_sq.layout()),
                    vm,
                    scalars,
                )?;
            }
            _ => return Ok(false),
        }
        drop(guards);
        for (i, c) in cells.iter().enumerate() {
            if i != 1 {
                c.bump_version();
            }
        }
        Ok(true)
    }
}
