//! Per-element uniform draws for the rejection samplers (Poisson, binomial): each element reads
//! its own Philox stream, so results do not depend on how elements are split across threads.

use super::{philox4x32_10, unit_f64};

/// Uniforms in `[0, 1)` for one element: sub-blocks of its reserved block, two per sub-block.
pub(super) struct Uniforms {
    key: [u32; 2],
    index: u64,
    sub: u64,
    words: [u32; 4],
    used: usize,
}

impl Uniforms {
    /// The stream of element `index` under the generator's `seed`.
    pub(super) fn new(seed: u64, index: u64) -> Self {
        Uniforms { key: [seed as u32, (seed >> 32) as u32], index, sub: 0, words: [0; 4], used: 4 }
    }

    /// The next uniform.
    pub(super) fn next(&mut self) -> f64 {
        if self.used == 4 {
            let (i, j) = (self.index, self.sub);
            self.words = philox4x32_10([i as u32, (i >> 32) as u32, j as u32, (j >> 32) as u32], self.key);
            self.sub += 1;
            self.used = 0;
        }
        let u = unit_f64(self.words[self.used], self.words[self.used + 1]);
        self.used += 2;
        u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniforms_start_with_the_reserved_block() {
        let mut u = Uniforms::new(7, 3);
        let b = super::super::philox::block(7, 3);
        assert_eq!(u.next(), unit_f64(b[0], b[1]));
        assert_eq!(u.next(), unit_f64(b[2], b[3]));
        assert!(u.next() != unit_f64(b[0], b[1]));
    }
}
