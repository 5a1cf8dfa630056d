//! Detecting a repeating op sequence in the pending graph, so that a loop that never reads a value
//! (no `item`, no optimizer step, no `sync()`) still runs as one cached program per iteration
//! instead of growing until the graph bound cuts it at an arbitrary place.
//!
//! Every recorded node gets a signature: a hash of what it computes (its step, the dtypes, lengths
//! and views of its inputs and outputs), never of the values. The signatures since the last sync
//! form the current segment, anchored at the sync: a loop that starts after some other ops is
//! found once the graph bound (or any sync) has cut the sequence inside the loop.
//!
//! When the segment is two equal blocks of at least [`MIN_PERIOD`] ops (`b b`), the sequence
//! repeats with period `|b|`: the next recorded op syncs first, and the block is remembered, so
//! that each later segment that equals it syncs after exactly one period. Each cut therefore falls
//! at the same place of the loop, and every program after the first is the same text, found in
//! the cache.
//!
//! Deciding where to sync never changes a result: a wrong guess only costs fusion.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

use super::node::{Arg, Node, Step};

/// The shortest block taken for a period. Short loop bodies repeat several times per block, so a
/// tiny op in a loop still gets a program of dozens of ops, not one launch per op.
pub(crate) const MIN_PERIOD: usize = 32;

/// Multiplier of the polynomial rolling hash over signatures (odd, so it is invertible mod 2^64).
const BASE: u64 = 0x9E37_79B9_7F4A_7C15;

/// The segment seen since the last sync, and the period learned so far.
struct Detector {
    /// Signatures of the nodes recorded since the last sync.
    sigs: Vec<u64>,
    /// `prefix[k]`: rolling hash of `sigs[..k]` (`prefix[0] == 0`).
    prefix: Vec<u64>,
    /// `powers[k] == BASE^k`.
    powers: Vec<u64>,
    /// The block found to repeat (signatures), once one was.
    learned: Vec<u64>,
    /// Whether the segment just completed a period: the next recorded op syncs first.
    cut: bool,
}

static DETECTOR: Mutex<Detector> = Mutex::new(Detector {
    sigs: Vec::new(),
    prefix: Vec::new(),
    powers: Vec::new(),
    learned: Vec::new(),
    cut: false,
});

fn detector() -> std::sync::MutexGuard<'static, Detector> {
    DETECTOR.lock().unwrap_or_else(|e| e.into_inner())
}

impl Detector {
    /// Appends `sig`; returns whether the segment now ends a period.
    fn push(&mut self, sig: u64) -> bool {
        if self.prefix.is_empty() {
            self.prefix.push(0);
        }
        while self.powers.len() <= self.sigs.len() + 1 {
            let next = self.powers.last().map_or(1, |p: &u64| p.wrapping_mul(BASE));
            self.powers.push(next);
        }
        let last = *self.prefix.last().expect("prefix starts with 0");
        self.prefix.push(last.wrapping_mul(BASE).wrapping_add(sig));
        self.sigs.push(sig);
        let n = self.sigs.len();
        // One period of the block learned before.
        if n == self.learned.len() && self.sigs == self.learned {
            return true;
        }
        // Two equal halves: `prefix[2p] == prefix[p] * BASE^p + prefix[p]`, then checked exactly.
        if n.is_multiple_of(2) && n / 2 >= MIN_PERIOD {
            let p = n / 2;
            let (h1, h2) = (self.prefix[p], self.prefix[n]);
            if h2 == h1.wrapping_mul(self.powers[p]).wrapping_add(h1) && self.sigs[..p] == self.sigs[p..] {
                self.learned = self.sigs[..p].to_vec();
                return true;
            }
        }
        false
    }

    /// Starts a new segment (a sync ran).
    fn reset(&mut self) {
        self.sigs.clear();
        self.prefix.clear();
        self.cut = false;
    }
}

/// Detection on or off: unset (read `OXTORCH_XLA_DETECT_REPEATS` on first use), off, on.
static ENABLED: AtomicU8 = AtomicU8::new(0);

/// Whether detection is on: [`set_enabled`], else `OXTORCH_XLA_DETECT_REPEATS` (`0` turns it
/// off), else on.
fn enabled() -> bool {
    match ENABLED.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on = std::env::var("OXTORCH_XLA_DETECT_REPEATS").map_or(true, |v| v.trim() != "0");
            let _ = ENABLED.compare_exchange(0, if on { 2 } else { 1 }, Ordering::Relaxed, Ordering::Relaxed);
            enabled()
        }
    }
}

/// Turns detection on or off for the process; returns whether it was on.
pub(crate) fn set_enabled(on: bool) -> bool {
    let was = enabled();
    ENABLED.store(if on { 2 } else { 1 }, Ordering::Relaxed);
    if !on {
        detector().reset();
    }
    was
}

/// Notes a newly recorded node.
pub(crate) fn observe(node: &Node) {
    if !enabled() {
        return;
    }
    let sig = signature(node);
    let mut d = detector();
    if d.push(sig) {
        d.cut = true;
    }
}

/// Whether the pending graph just completed a repeating block and should run before the next op.
pub(crate) fn cut_due() -> bool {
    detector().cut
}

/// A sync ran: the next recorded op starts a new segment.
pub(crate) fn segment_ended() {
    detector().reset();
}

/// The learned period, if any (for tests and logs).
pub(crate) fn period() -> Option<usize> {
    let d = detector();
    (!d.learned.is_empty()).then_some(d.learned.len())
}

/// What `node` computes, as a hash: its step (with the prim's name and family), device, and each
/// input's dtype, length and view; never the values, nor whether an input is computed yet (the
/// first iteration of a loop reads a computed buffer where the next ones read a pending one).
fn signature(node: &Node) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    match &node.step {
        Step::Prim(prim) => {
            std::mem::discriminant(prim).hash(&mut h);
            prim.name().hash(&mut h);
        }
        Step::Full { numel } => numel.hash(&mut h),
        other => std::mem::discriminant(other).hash(&mut h),
    }
    node.device.hash(&mut h);
    for arg in node.args().iter() {
        match arg {
            Arg::View { dtype, len, layout, .. } => {
                dtype.hash(&mut h);
                len.hash(&mut h);
                layout.dims().hash(&mut h);
                layout.strides().hash(&mut h);
                crate::xla::cache::runtime_offset(layout, *len).hash(&mut h);
            }
            Arg::Scalar(_, dtype) => dtype.hash(&mut h),
        }
    }
    node.outputs.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fresh() -> Detector {
        Detector { sigs: Vec::new(), prefix: Vec::new(), powers: Vec::new(), learned: Vec::new(), cut: false }
    }

    /// Feeds `sigs`, returning the positions (1-based counts since the last cut) where a period ended.
    fn cuts(d: &mut Detector, sigs: impl IntoIterator<Item = u64>) -> Vec<usize> {
        let mut at = Vec::new();
        for s in sigs {
            if d.push(s) {
                at.push(d.sigs.len());
                d.reset();
            }
        }
        at
    }

    #[test]
    fn a_loop_body_is_cut_after_two_blocks_then_every_block() {
        let body: Vec<u64> = (0..40).collect();
        let mut d = fresh();
        let got = cuts(&mut d, body.iter().copied().cycle().take(40 * 6));
        assert_eq!(got, vec![80, 40, 40, 40, 40]);
    }

    #[test]
    fn a_short_body_repeats_inside_a_block_of_at_least_min_period() {
        let body = [7u64, 8, 9];
        let mut d = fresh();
        let got = cuts(&mut d, body.iter().copied().cycle().take(300));
        // 33 ops (11 bodies) is the shortest block of at least 32 that repeats.
        assert_eq!(got[0], 66);
        assert!(got[1..].iter().all(|&n| n == 33), "{got:?}");
    }

    #[test]
    fn a_sequence_that_never_repeats_is_never_cut() {
        let mut d = fresh();
        assert!(cuts(&mut d, 0..10_000).is_empty());
    }

    #[test]
    fn a_prefix_that_differs_is_not_a_period() {
        // A model: an embedding, identical layers, a head. Anchored at the segment's start, the
        // layers alone are never taken for the period.
        let mut seq = vec![1000u64, 1001];
        for _ in 0..12 {
            seq.extend(0..40u64);
        }
        seq.push(2000);
        let mut d = fresh();
        assert!(cuts(&mut d, seq).is_empty());
    }
}
