//! Fused optimizer updates: one pass over a parameter and its state instead of one pass per op.
//!
//! torch's single-tensor Adam runs about ten elementwise ops per parameter and step, each reading
//! and writing whole tensors (and, here, each in-place op writing through a copy). The fused update
//! reads the parameter, its gradient and moments once and writes them once. It computes exactly
//! what the op-by-op composition computes: every intermediate is rounded to the element type, and
//! every Python-number operand is first converted to it, as the composition's ops do.

use std::marker::PhantomData;

use oxtorch_core::{Error, Layout, Result};
use rayon::prelude::*;

use crate::float::Float;
use crate::storage::CpuStorage;
use crate::walk::chunk_len;

use kernel::{adam_chunk, Consts, Flag, Off, On};

/// The hyper-parameters of one Adam/AdamW step of one parameter.
#[derive(Clone, Copy, Debug)]
pub struct AdamScalars {
    /// learning rate
    pub lr: f64,
    /// `(beta1, beta2)`
    pub betas: (f64, f64),
    /// added to the denominator
    pub eps: f64,
    /// L2 penalty (Adam) or decoupled decay (AdamW); 0 for none
    pub weight_decay: f64,
    /// AdamW's decoupled weight decay
    pub decoupled: bool,
    /// maximise the objective
    pub maximize: bool,
    /// the step count, this step included (1 on the first step)
    pub step: f64,
}

/// The kernel, private to this file (the multiversioned loop must be `pub`).
mod kernel {
    use std::marker::PhantomData;

    use oxtorch_core::{Element, Scalar};

    use super::AdamScalars;
    use crate::float::{AccFloat, Float};
    use crate::simd::{level, multiversion, Level};

    /// The per-step constants, each converted to the computation type as the composition converts its
    /// Python-number operands: a factor of a product or quotient in the computation type itself
    /// (torch's CPU `mul`/`div` read a scalar operand of a half tensor in f32), a term of a sum
    /// (`eps`) rounded to the element type first.
    #[derive(Clone, Copy)]
    pub struct Consts<A> {
        sign: A,
        decay: A,
        wd: A,
        one_minus_b1: A,
        b2: A,
        one_minus_b2: A,
        bc2_sqrt: A,
        eps: A,
        step_size: A,
    }

    impl<A: AccFloat> Consts<A> {
        pub fn new<T: Float<Acc = A>>(h: &AdamScalars) -> Self {
            let c = |v: f64| <T as Element>::from_scalar(Scalar::Float(v)).to_acc();
            let f = |v: f64| A::from_f64(v);
            let (b1, b2) = h.betas;
            let bc1 = 1.0 - b1.powf(h.step);
            let decay = if h.decoupled && h.weight_decay != 0.0 { 1.0 - h.lr * h.weight_decay } else { 1.0 };
            Consts {
                sign: if h.maximize { -A::ONE } else { A::ONE },
                decay: f(decay),
                wd: f(h.weight_decay),
                one_minus_b1: f(1.0 - b1),
                b2: f(b2),
                one_minus_b2: f(1.0 - b2),
                bc2_sqrt: f((1.0 - b2.powf(h.step)).sqrt()),
                eps: c(h.eps),
                step_size: f(h.lr / bc1),
            }
        }
    }

    /// A compile-time switch of the kernel.
    pub trait Flag: Send + Sync {
        /// whether the switch is on
        const ON: bool;
    }
    /// on
    pub struct On;
    /// off
    pub struct Off;
    impl Flag for On {
        const ON: bool = true;
    }
    impl Flag for Off {
        const ON: bool = false;
    }

    /// One element's update. `L2`: Adam's (coupled) weight decay; `AMS`: amsgrad, with `vmax` its state.
    #[inline(always)]
    fn update<T: Float, L2: Flag, AMS: Flag>(
        p: &mut T,
        g: T,
        m: &mut T,
        v: &mut T,
        vmax: Option<&mut T>,
        k: &Consts<T::Acc>,
    ) {
        let r = |x: T::Acc| T::from_acc(x).to_acc();
        // `-g` and `p * 1` are exact, so maximize and "no decoupled decay" need no branch.
        let mut g = g.to_acc() * k.sign;
        let mut pa = r(p.to_acc() * k.decay);
        if L2::ON {
            g = r(g + r(pa * k.wd));
        }
        let ma = m.to_acc();
        let ma = r(ma + r(r(g - ma) * k.one_minus_b1));
        let va = r(r(v.to_acc() * k.b2) + r(r(g * g) * k.one_minus_b2));
        let second = match vmax {
            Some(vm) if AMS::ON => {
                // `maximum`, NaN-propagating, with the old maximum first.
                let x = vm.to_acc();
                let mx = if x.is_nan() || x > va { x } else { va };
                *vm = T::from_acc(mx);
                mx
            }
            _ => va,
        };
        let denom = r(r(r(second.sqrt()) / k.bc2_sqrt) + k.eps);
        pa = r(pa - r(r(ma / denom) * k.step_size));
        *p = T::from_acc(pa);
        *m = T::from_acc(ma);
        *v = T::from_acc(va);
    }

    multiversion! {
        /// The update over one chunk of a parameter (all slices equally long; `vmax` empty without amsgrad).
        pub fn adam_chunk<T, L2, AMS>(p: &mut [T], g: &[T], m: &mut [T], v: &mut [T], vmax: &mut [T], k: &Consts<T::Acc>, _flags: PhantomData<(L2, AMS)>) where [T: Float, L2: Flag, AMS: Flag] {
            if AMS::ON {
                for ((((p, &g), m), v), vm) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()).zip(vmax.iter_mut()) {
                    update::<T, L2, AMS>(p, g, m, v, Some(vm), k);
                }
            } else {
                for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
                    update::<T, L2, AMS>(p, g, m, v, None, k);
                }
            }
        }
    }
}

fn adam_typed<T: Float, L2: Flag, AMS: Flag>(
    p: &mut [T],
    g: &[T],
    m: &mut [T],
    v: &mut [T],
    vmax: &mut [T],
    h: &AdamScalars,
) {
    let k = Consts::new::<T>(h);
    let chunk = chunk_len(p.len());
    if chunk >= p.len() {
        adam_chunk(p, g, m, v, vmax, &k, PhantomData::<(L2, AMS)>);
        return;
    }
    let vchunk = if AMS::ON { chunk } else { 1 };
    let vmax_chunks: Vec<&mut [T]> = if AMS::ON {
        vmax.chunks_mut(vchunk).collect()
    } else {
        (0..p.len().div_ceil(chunk)).map(|_| &mut [][..]).collect()
    };
    p.par_chunks_mut(chunk)
        .zip(g.par_chunks(chunk))
        .zip(m.par_chunks_mut(chunk))
        .zip(v.par_chunks_mut(chunk))
        .zip(vmax_chunks.into_par_iter())
        .for_each(|((((p, g), m), v), vm)| adam_chunk(p, g, m, v, vm, &k, PhantomData::<(L2, AMS)>));
}

/// A mutable operand: a storage and the (contiguous) view of it that is updated.
pub type MutOperand<'a> = (&'a mut CpuStorage, &'a Layout);

/// The contiguous elements a view covers, if it is contiguous.
fn range(l: &Layout, op: &str) -> Result<std::ops::Range<usize>> {
    l.contiguous_range().ok_or_else(|| Error::msg(format!("{op}: expected a contiguous tensor")))
}

/// One Adam/AdamW step (torch's single-tensor algorithm) of a parameter, in place: `param`,
/// `exp_avg`, `exp_avg_sq` and, with amsgrad, `max_exp_avg_sq` are updated from `grad`. Every
/// operand must be contiguous, of one float dtype and of one length.
pub fn adam_step(
    param: MutOperand,
    grad: (&CpuStorage, &Layout),
    exp_avg: MutOperand,
    exp_avg_sq: MutOperand,
    max_exp_avg_sq: Option<MutOperand>,
    h: &AdamScalars,
) -> Result<()> {
    use CpuStorage as S;
    const OP: &str = "adam_step";
    let n = param.1.numel();
    let lens = [grad.1.numel(), exp_avg.1.numel(), exp_avg_sq.1.numel()];
    if lens.iter().any(|&l| l != n) || max_exp_avg_sq.as_ref().is_some_and(|o| o.1.numel() != n) {
        return Err(Error::msg(format!("{OP}: the parameter and its state differ in size")));
    }
    let (rp, rg, rm, rv) =
        (range(param.1, OP)?, range(grad.1, OP)?, range(exp_avg.1, OP)?, range(exp_avg_sq.1, OP)?);
    let rvm = max_exp_avg_sq.as_ref().map(|o| range(o.1, OP)).transpose()?;
    let l2 = !h.decoupled && h.weight_decay != 0.0;
    macro_rules! go {
        ($p:ident, $g:ident, $m:ident, $v:ident, $vm:expr) => {{
            let (p, g, m, v) = (&mut $p[rp], &$g[rg], &mut $m[rm], &mut $v[rv]);
            let vm = $vm;
            match (l2, vm) {
                (false, None) => adam_typed::<_, Off, Off>(p, g, m, v, &mut [], h),
                (true, None) => adam_typed::<_, On, Off>(p, g, m, v, &mut [], h),
                (false, Some(vm)) => adam_typed::<_, Off, On>(p, g, m, v, vm, h),
                (true, Some(vm)) => adam_typed::<_, On, On>(p, g, m, v, vm, h),
            }
        }};
    }
    macro_rules! typed {
        ($($var:ident),*) => {
            match (param.0, grad.0, exp_avg.0, exp_avg_sq.0, max_exp_avg_sq) {
                $(
                    (S::$var(p), S::$var(g), S::$var(m), S::$var(v), None) => go!(p, g, m, v, None),
                    (S::$var(p), S::$var(g), S::$var(m), S::$var(v), Some((S::$var(vm), _))) => {
                        go!(p, g, m, v, Some(&mut vm[rvm.expect("amsgrad state")]))
                    }
                )*
                (p, ..) => {
                    return Err(Error::msg(format!(
                        "{OP}: expected the parameter and its state to share a float dtype, got {:?}",
                        oxtorch_core::BackendStorage::dtype(&*p)
                    )))
                }
            }
        };
    }
    typed!(F32, F64, F16, BF16);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The op-by-op composition in plain `f32` arithmetic (each op rounded), as the tensor ops compute it.
    fn reference(
        p: &mut [f32],
        g: &[f32],
        m: &mut [f32],
        v: &mut [f32],
        vm: Option<&mut [f32]>,
        h: &AdamScalars,
    ) {
        let (b1, b2) = h.betas;
        let mut vm = vm;
        for i in 0..p.len() {
            let mut gi = if h.maximize { -g[i] } else { g[i] };
            if h.weight_decay != 0.0 {
                if h.decoupled {
                    p[i] *= (1.0 - h.lr * h.weight_decay) as f32;
                } else {
                    gi += p[i] * h.weight_decay as f32;
                }
            }
            m[i] += (gi - m[i]) * (1.0 - b1) as f32;
            v[i] = v[i] * b2 as f32 + gi * gi * (1.0 - b2) as f32;
            let second = match vm.as_deref_mut() {
                Some(vm) => {
                    vm[i] = if vm[i].is_nan() || vm[i] > v[i] { vm[i] } else { v[i] };
                    vm[i]
                }
                None => v[i],
            };
            let bc1 = 1.0 - b1.powf(h.step);
            let bc2 = (1.0 - b2.powf(h.step)).sqrt();
            let denom = second.sqrt() / bc2 as f32 + h.eps as f32;
            p[i] -= m[i] / denom * (h.lr / bc1) as f32;
        }
    }

    #[test]
    fn matches_the_composition_bit_for_bit() {
        for (n, ams, decoupled, maximize, wd) in [
            (1, false, true, false, 0.01),
            (37, true, false, false, 0.1),
            (100_003, false, false, true, 0.0),
            (70_001, true, true, true, 0.05),
        ] {
            let h = AdamScalars {
                lr: 1e-3,
                betas: (0.9, 0.999),
                eps: 1e-8,
                weight_decay: wd,
                decoupled,
                maximize,
                step: 3.0,
            };
            let f = |i: usize, s: f32| (i as f32 * 0.37 + s).sin() * 2.0;
            let p0: Vec<f32> = (0..n).map(|i| f(i, 0.0)).collect();
            let g: Vec<f32> = (0..n).map(|i| f(i, 1.0) * 0.1).collect();
            let m0: Vec<f32> = (0..n).map(|i| f(i, 2.0) * 0.01).collect();
            let v0: Vec<f32> = (0..n).map(|i| f(i, 3.0).abs() * 0.001).collect();
            let vm0: Vec<f32> = (0..n).map(|i| f(i, 4.0).abs() * 0.001).collect();
            let (mut p1, mut m1, mut v1, mut vm1) = (p0.clone(), m0.clone(), v0.clone(), vm0.clone());
            reference(&mut p1, &g, &mut m1, &mut v1, ams.then_some(&mut vm1[..]), &h);
            let st = |v: &Vec<f32>| CpuStorage::F32(v.clone().into());
            let (mut p, gs, mut m, mut v, mut vm) = (st(&p0), st(&g), st(&m0), st(&v0), st(&vm0));
            let l = Layout::contiguous([n]);
            adam_step((&mut p, &l), (&gs, &l), (&mut m, &l), (&mut v, &l), ams.then_some((&mut vm, &l)), &h)
                .unwrap();
            assert_eq!(p, CpuStorage::F32(p1.into()), "n={n}");
            assert_eq!(m, CpuStorage::F32(m1.into()));
            assert_eq!(v, CpuStorage::F32(v1.into()));
            if ams {
                assert_eq!(vm, CpuStorage::F32(vm1.into()));
            }
        }
    }

    #[test]
    fn refuses_mixed_dtypes_and_sizes() {
        let h = AdamScalars {
            lr: 1e-3,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            decoupled: false,
            maximize: false,
            step: 1.0,
        };
        let l = Layout::contiguous([2]);
        let (mut p, g, mut m, mut v) = (
            CpuStorage::F32(vec![1.0; 2].into()),
            CpuStorage::F64(vec![1.0; 2].into()),
            CpuStorage::F32(vec![0.0; 2].into()),
            CpuStorage::F32(vec![0.0; 2].into()),
        );
        assert!(adam_step((&mut p, &l), (&g, &l), (&mut m, &l), (&mut v, &l), None, &h).is_err());
        let g = CpuStorage::F32(vec![1.0; 3].into());
        let l3 = Layout::contiguous([3]);
        assert!(adam_step((&mut p, &l), (&g, &l3), (&mut m, &l), (&mut v, &l), None, &h).is_err());
    }
}
