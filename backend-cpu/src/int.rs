//! Integer element types and the wrapping arithmetic torch uses for them.

use crate::storage::CpuElement;

/// Integer element types and the wrapping arithmetic torch uses for them.
pub(crate) trait Int: CpuElement + Ord {
    const SIGNED: bool;
    /// The lowest value, as f64.
    const MIN_F64: f64;
    /// The highest value, as f64.
    const MAX_F64: f64;
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn wneg(self) -> Self;
    fn wabs(self) -> Self;
    fn not(self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    /// Python's floor division (`o != 0`).
    fn floor_div(self, o: Self) -> Self;
    /// Python's `%` (`o != 0`).
    fn py_rem(self, o: Self) -> Self;
    /// `self ** e` with wrapping (`e >= 0`).
    fn wpow(self, e: Self) -> Self;
    /// C's `%` (truncating; `o != 0`), wrapping on `MIN % -1`.
    fn c_rem(self, o: Self) -> Self;
    /// torch's `a << b`: shifted as unsigned, 0 when `b` is negative or at least the bit width.
    fn shl_torch(self, b: Self) -> Self;
    /// torch's `a >> b`: arithmetic for signed types; when `b` is negative or at least the bit width,
    /// the sign fill (`-1` or `0`) for signed types and 0 for unsigned.
    fn shr_torch(self, b: Self) -> Self;
}

macro_rules! int_impl {
    ($t:ty, $signed:expr) => {
        impl Int for $t {
            const SIGNED: bool = $signed;
            const MIN_F64: f64 = <$t>::MIN as f64;
            const MAX_F64: f64 = <$t>::MAX as f64;
            #[inline(always)]
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn wmul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            #[inline(always)]
            fn wneg(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn wabs(self) -> Self {
                if self < 0 {
                    self.wrapping_neg()
                } else {
                    self
                }
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
            #[inline(always)]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn or(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn floor_div(self, o: Self) -> Self {
                let q = self.wrapping_div(o);
                let r = self.wrapping_rem(o);
                if r != 0 && ((r < 0) != (o < 0)) {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn py_rem(self, o: Self) -> Self {
                let r = self.wrapping_rem(o);
                if r != 0 && ((r < 0) != (o < 0)) {
                    r.wrapping_add(o)
                } else {
                    r
                }
            }
            #[inline(always)]
            fn c_rem(self, o: Self) -> Self {
                self.wrapping_rem(o)
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shl_torch(self, b: Self) -> Self {
                let bits = <$t>::BITS as i64;
                let b = b as i64;
                if b < 0 || b >= bits {
                    0
                } else {
                    self.wrapping_shl(b as u32)
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shr_torch(self, b: Self) -> Self {
                let bits = <$t>::BITS as i64;
                let b = b as i64;
                if b < 0 || b >= bits {
                    if self < 0 {
                        self.wrapping_shr(bits as u32 - 1)
                    } else {
                        0
                    }
                } else {
                    self.wrapping_shr(b as u32)
                }
            }
            #[inline(always)]
            fn wpow(self, e: Self) -> Self {
                let mut base = self;
                let mut e = e as i64;
                let mut acc: Self = 1;
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                acc
            }
        }
    };
}
int_impl!(u8, false);
int_impl!(i8, true);
int_impl!(i16, true);
int_impl!(i32, true);
int_impl!(i64, true);
