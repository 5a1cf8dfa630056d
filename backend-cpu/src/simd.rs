//! Slice loops compiled for several instruction sets, chosen at runtime.
//!
//! Each loop is written once as a plain `#[inline(always)]` function; thin wrappers with
//! `#[target_feature]` let the compiler vectorise the same body for AVX2 and AVX-512, and
//! [`level`] picks the best one this processor supports (detected once).

use std::mem::MaybeUninit;
use std::sync::OnceLock;

/// The instruction-set level the slice loops run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Baseline x86-64 (SSE2) or a non-x86 target.
    Baseline,
    /// AVX2 with FMA.
    Avx2,
    /// AVX-512 (F, BW, VL, DQ).
    Avx512,
}

/// The best level this processor supports.
pub fn level() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(|| {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
                && is_x86_feature_detected!("f16c");
            if avx2
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512dq")
            {
                return Level::Avx512;
            }
            if avx2 {
                return Level::Avx2;
            }
        }
        Level::Baseline
    })
}

macro_rules! multiversion {
    ($(#[$m:meta])* pub fn $name:ident<$($g:ident),*>($($arg:ident: $ty:ty),*) $(-> $ret:ty)? where [$($bounds:tt)*] $body:block) => {
        $(#[$m])*
        #[inline]
        pub fn $name<$($g),*>($($arg: $ty),*) $(-> $ret)? where $($bounds)* {
            #[inline(always)]
            fn plain<$($g),*>($($arg: $ty),*) $(-> $ret)? where $($bounds)* $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")]
            unsafe fn avx512<$($g),*>($($arg: $ty),*) $(-> $ret)? where $($bounds)* { plain($($arg),*) }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma,f16c")]
            unsafe fn avx2<$($g),*>($($arg: $ty),*) $(-> $ret)? where $($bounds)* { plain($($arg),*) }
            match level() {
                // SAFETY: `level()` checked at runtime that the processor has these features.
                #[cfg(target_arch = "x86_64")]
                Level::Avx512 => unsafe { avx512($($arg),*) },
                #[cfg(target_arch = "x86_64")]
                Level::Avx2 => unsafe { avx2($($arg),*) },
                _ => plain($($arg),*),
            }
        }
    };
}
pub(crate) use multiversion;

multiversion! {
    /// `out[i] = f(a[i])`; `out` must be as long as `a`.
    pub fn map1<A, U, F>(a: &[A], out: &mut [MaybeUninit<U>], f: F) where [A: Copy, F: Fn(A) -> U] {
        for (o, &x) in out.iter_mut().zip(a) {
            o.write(f(x));
        }
    }
}

multiversion! {
    /// `out[i] = f(a[i], b[i])`; all three slices have the same length.
    pub fn map2<A, B, U, F>(a: &[A], b: &[B], out: &mut [MaybeUninit<U>], f: F) where [A: Copy, B: Copy, F: Fn(A, B) -> U] {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            o.write(f(x, y));
        }
    }
}

multiversion! {
    /// `out[i] = f(a[i], b[i], c[i])`; all four slices have the same length.
    pub fn map3<A, B, C, U, F>(a: &[A], b: &[B], c: &[C], out: &mut [MaybeUninit<U>], f: F) where [A: Copy, B: Copy, C: Copy, F: Fn(A, B, C) -> U] {
        for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
            o.write(f(x, y, z));
        }
    }
}

multiversion! {
    /// `acc[i] = f(acc[i], a[i])`, the row update of a reduction over an outer dim.
    pub fn accumulate<A, C, F>(acc: &mut [C], a: &[A], f: F) where [A: Copy, C: Copy, F: Fn(C, A) -> C] {
        for (c, &x) in acc.iter_mut().zip(a) {
            *c = f(*c, x);
        }
    }
}

multiversion! {
    /// Folds a slice with `LANES` independent accumulators (so the loop vectorises), then merges them.
    pub fn fold_lanes<A, C, F, G>(a: &[A], init: C, f: F, merge: G) -> C where [A: Copy, C: Copy, F: Fn(C, A) -> C, G: Fn(C, C) -> C] {
        const LANES: usize = 16;
        let mut acc = [init; LANES];
        let mut chunks = a.chunks_exact(LANES);
        for ch in &mut chunks {
            for l in 0..LANES {
                acc[l] = f(acc[l], ch[l]);
            }
        }
        let mut r = init;
        for &x in chunks.remainder() {
            r = f(r, x);
        }
        for l in 0..LANES {
            r = merge(r, acc[l]);
        }
        r
    }
}
