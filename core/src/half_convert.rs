//! Conversions between the half types (f16, bf16) and f32 written as plain integer and float arithmetic with selects, no
//! branches, so that loops over slices vectorise at whatever instruction set they are compiled for.
//!
//! `half` (2.7) converts one f16 per call and, unless the whole program is built with F16C, checks
//! for F16C at runtime on every call, which keeps every f16 loop scalar; its bf16 rounding returns
//! early for NaN, which kept bf16 loops scalar too. These give the same bits as `half` (and as F16C's
//! `vcvtph2ps` / `vcvtps2ph` with round-to-nearest-even) for every input, NaN payloads included; the
//! tests check every half and a dense sample of floats.

use half::{bf16, f16};

/// `h` widened to f32: exact; a NaN becomes quiet.
#[inline(always)]
pub fn bf16_to_f32(h: bf16) -> f32 {
    let bits = u32::from(h.to_bits());
    let quiet = if bits & 0x7fff > 0x7f80 { 0x0040 } else { 0 };
    f32::from_bits((bits | quiet) << 16)
}

/// `x` rounded to the nearest bf16, ties to even (up to infinity); a NaN keeps the top bits of its
/// payload and becomes quiet.
#[inline(always)]
pub fn f32_to_bf16(x: f32) -> bf16 {
    let bits = x.to_bits();
    let nan = (bits >> 16) | 0x0040;
    let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16;
    bf16::from_bits(if bits & 0x7fff_ffff > 0x7f80_0000 { nan } else { rounded } as u16)
}

/// `h` widened to f32: exact; a NaN keeps its payload and becomes quiet.
#[inline(always)]
pub fn f16_to_f32(h: f16) -> f32 {
    let bits = u32::from(h.to_bits());
    let sign = (bits & 0x8000) << 16;
    let magnitude = bits & 0x7fff;
    // Normal: rebias the exponent from 15 to 127.
    let normal = (magnitude << 13) + ((127 - 15) << 23);
    // Zero or subnormal: the mantissa times 2^-24, exact in f32.
    let subnormal = (magnitude as f32 * f32::from_bits((127 - 24) << 23)).to_bits();
    // Infinity or NaN (quietened, as F16C does).
    let quiet = if magnitude > 0x7c00 { 0x0040_0000 } else { 0 };
    let special = (magnitude << 13) | 0x7f80_0000 | quiet;
    let out = if magnitude < 0x0400 {
        subnormal
    } else if magnitude >= 0x7c00 {
        special
    } else {
        normal
    };
    f32::from_bits(sign | out)
}

/// `x` rounded to the nearest f16, ties to even; beyond the f16 range, infinity; a NaN keeps the top
/// bits of its payload and becomes quiet.
#[inline(always)]
pub fn f32_to_f16(x: f32) -> f16 {
    let bits = x.to_bits();
    let sign = (bits >> 16) & 0x8000;
    let magnitude = bits & 0x7fff_ffff;
    // Infinity or NaN.
    let nan_bits = if magnitude > 0x7f80_0000 { 0x0200 | ((magnitude >> 13) & 0x03ff) } else { 0 };
    let special = 0x7c00 | nan_bits;
    // Below the smallest normal f16 (2^-14): adding 0.5 leaves the rounded subnormal mantissa in the
    // low bits of the sum (f32 addition rounds to nearest even).
    let half_bits: u32 = 126 << 23;
    let subnormal = (f32::from_bits(magnitude) + f32::from_bits(half_bits)).to_bits().wrapping_sub(half_bits);
    // Normal: rebias the exponent and round the 13 dropped bits to nearest even (a carry may reach
    // the exponent, up to infinity).
    let odd = (magnitude >> 13) & 1;
    let normal = magnitude.wrapping_sub((127 - 15) << 23).wrapping_add(0x0fff + odd) >> 13;
    let out = if magnitude >= 0x4780_0000 {
        // 65536 and up (65520 and up round to infinity in the normal branch).
        special
    } else if magnitude < 0x3880_0000 {
        subnormal
    } else {
        normal
    };
    f16::from_bits((sign | out) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_half_widens_as_half_does() {
        for b in 0..=u16::MAX {
            let h = f16::from_bits(b);
            assert_eq!(f16_to_f32(h).to_bits(), h.to_f32().to_bits(), "f16 {b:#06x}");
            let h = bf16::from_bits(b);
            assert_eq!(bf16_to_f32(h).to_bits(), h.to_f32().to_bits(), "bf16 {b:#06x}");
        }
    }

    /// Every f32 whose bits are a multiple of 251 (17 million values, every exponent and sign), and
    /// every f32 within 64 ulps of each finite half and of each midpoint between neighbouring halves
    /// (the rounding ties), narrows as `half` does.
    #[test]
    fn floats_narrow_as_half_does() {
        let check = |b: u32| {
            let x = f32::from_bits(b);
            assert_eq!(f32_to_f16(x).to_bits(), f16::from_f32(x).to_bits(), "f16 {b:#010x} ({x:e})");
            assert_eq!(f32_to_bf16(x).to_bits(), bf16::from_f32(x).to_bits(), "bf16 {b:#010x} ({x:e})");
        };
        (0..=u32::MAX / 251).for_each(|i| check(i * 251));
        for h in 0..0x7c00u16 {
            // The half itself, and the midpoint between it and the next (exact in f32), both signs.
            let (lo, hi) = (f16::from_bits(h).to_f32(), f16::from_bits(h + 1).to_f32());
            let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32;
            for centre in [lo.to_bits(), mid.to_bits()] {
                for d in 0..64u32 {
                    for b in [centre.wrapping_add(d), centre.wrapping_sub(d)] {
                        check(b);
                        check(b | 0x8000_0000);
                    }
                }
            }
        }
        for b in 0..=u16::MAX {
            // Each bf16's f32, its tie with the next, and their neighbours, both signs.
            let at = u32::from(b) << 16;
            for centre in [at, at | 0x8000] {
                for d in 0..64u32 {
                    check(centre.wrapping_add(d));
                    check(centre.wrapping_sub(d));
                }
            }
        }
        for b in [0x7f80_0000, 0x7f80_0001, 0x7fc0_0000, 0x7fff_ffff, 0x477f_f000, 0x477f_efff, 0x3380_0000] {
            check(b);
            check(b | 0x8000_0000);
        }
    }
}
