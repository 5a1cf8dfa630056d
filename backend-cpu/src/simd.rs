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

/// The instruction sets the kernels may use, in increasing order: what the processor has, capped by
/// the `OXTORCH_CPU_CAPABILITY` environment variable (as PyTorch's `ATEN_CPU_CAPABILITY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Capability {
    /// `default`: baseline code only.
    Default,
    /// `avx2`: AVX2 with FMA and F16C.
    Avx2,
    /// `avx512`: AVX-512 F, BW, VL and DQ.
    Avx512,
    /// `avx512_bf16`: AVX-512 with the bf16 dot-product instructions.
    Avx512Bf16,
    /// `amx_bf16`: the above and the AMX tile unit's bf16 products, granted to this process by the
    /// kernel (the best).
    AmxBf16,
}

impl Capability {
    /// The capability an `OXTORCH_CPU_CAPABILITY` value names, if any.
    pub fn parse(name: &str) -> Option<Capability> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "default" | "baseline" => Capability::Default,
            "avx2" => Capability::Avx2,
            "avx512" => Capability::Avx512,
            "avx512_bf16" | "avx512bf16" => Capability::Avx512Bf16,
            "amx_bf16" | "amxbf16" | "amx" => Capability::AmxBf16,
            _ => return None,
        })
    }

    /// What this processor supports, uncapped.
    fn detected() -> Capability {
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = is_x86_feature_detected!("avx2")
                && is_x86_feature_detected!("fma")
                && is_x86_feature_detected!("f16c");
            let avx512 = avx2
                && is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vl")
                && is_x86_feature_detected!("avx512dq");
            if avx512 && is_x86_feature_detected!("avx512bf16") {
                if amx_granted() {
                    return Capability::AmxBf16;
                }
                return Capability::Avx512Bf16;
            }
            if avx512 {
                return Capability::Avx512;
            }
            if avx2 {
                return Capability::Avx2;
            }
        }
        Capability::Default
    }
}

/// True when the processor has AMX tiles with bf16 products (CPUID leaf 7: AMX-BF16 and AMX-TILE)
/// and Linux lets this process use them: the tile data state is off until a process asks for it
/// (`arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)`; a tile instruction before that raises
/// SIGILL). The request is made here, once, for the whole process.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn amx_granted() -> bool {
    const AMX_BF16: u32 = 1 << 22;
    const AMX_TILE: u32 = 1 << 24;
    // CPUID leaf 7 exists on every processor with AVX2 (checked by the caller).
    let edx = std::arch::x86_64::__cpuid_count(7, 0).edx;
    if edx & (AMX_BF16 | AMX_TILE) != AMX_BF16 | AMX_TILE {
        return false;
    }
    const SYS_ARCH_PRCTL: i64 = 158;
    const ARCH_REQ_XCOMP_PERM: i64 = 0x1023;
    const XFEATURE_XTILEDATA: i64 = 18;
    let ret: i64;
    // SAFETY: a plain system call that only changes which register state this process may use;
    // it clobbers rcx and r11 as every `syscall` does.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") SYS_ARCH_PRCTL => ret,
            in("rdi") ARCH_REQ_XCOMP_PERM,
            in("rsi") XFEATURE_XTILEDATA,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret == 0
}

#[cfg(all(target_arch = "x86_64", not(target_os = "linux")))]
fn amx_granted() -> bool {
    false
}

/// The instruction sets the kernels use (detected once): the processor's, capped by
/// `OXTORCH_CPU_CAPABILITY=default|avx2|avx512|avx512_bf16|amx_bf16` where that is set. A cap exercises the
/// fallback kernels on a processor that has more; an unknown value is reported once and ignored.
pub fn capability() -> Capability {
    static CAPABILITY: OnceLock<Capability> = OnceLock::new();
    *CAPABILITY.get_or_init(|| {
        let detected = Capability::detected();
        match std::env::var("OXTORCH_CPU_CAPABILITY") {
            Ok(v) => match Capability::parse(&v) {
                Some(cap) => detected.min(cap),
                None => {
                    eprintln!(
                        "oxtorch: ignoring OXTORCH_CPU_CAPABILITY={v:?} \
                         (expected default, avx2, avx512, avx512_bf16 or amx_bf16)"
                    );
                    detected
                }
            },
            Err(_) => detected,
        }
    })
}

/// The best level the slice loops may run at (see [`capability`]).
pub fn level() -> Level {
    match capability() {
        Capability::Default => Level::Baseline,
        Capability::Avx2 => Level::Avx2,
        Capability::Avx512 | Capability::Avx512Bf16 | Capability::AmxBf16 => Level::Avx512,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The names `OXTORCH_CPU_CAPABILITY` takes, in order; anything else is refused.
    #[test]
    fn capability_names() {
        let names = ["default", "avx2", "AVX512", " avx512_bf16 ", "amx_bf16"];
        let caps: Vec<Capability> = names.iter().map(|n| Capability::parse(n).unwrap()).collect();
        assert!(caps.windows(2).all(|w| w[0] < w[1]), "{caps:?}");
        assert_eq!(Capability::parse("baseline"), Some(Capability::Default));
        assert_eq!(Capability::parse("avx512bf16"), Some(Capability::Avx512Bf16));
        assert_eq!(Capability::parse("AMX"), Some(Capability::AmxBf16));
        assert_eq!(Capability::parse("sse4"), None);
        assert_eq!(Capability::parse(""), None);
        // The cap never raises what the processor has.
        assert!(capability() <= Capability::detected());
    }
}
