//! Memory formats (torch's `torch.memory_format`): in which order a dense tensor's elements lie in
//! memory. A format only chooses strides; values never depend on it.
//!
//! Everything here is a pure function of sizes and strides, written after c10's
//! `MemoryFormat.h`, `Contiguity.h`, `TensorImpl::_refresh_contiguous`, `TensorBase::suggest_memory_format`
//! and ATen's `infer_dense_strides`, so each answer (including the ambiguous ones for size-1 dims)
//! is torch's.

use std::fmt;

use crate::error::{Error, Result};
use crate::shape::contiguous_strides;

/// torch's `torch.memory_format`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemoryFormat {
    /// Row-major (`torch.contiguous_format`), the default.
    #[default]
    Contiguous,
    /// `N, H, W, C` order for a 4-d `N, C, H, W` tensor (`torch.channels_last`).
    ChannelsLast,
    /// `N, D, H, W, C` order for a 5-d `N, C, D, H, W` tensor (`torch.channels_last_3d`).
    ChannelsLast3d,
    /// Keep the input's layout (`torch.preserve_format`), for `clone` and the `*_like` functions.
    Preserve,
}

impl MemoryFormat {
    /// torch's name: `torch.contiguous_format`, `torch.channels_last`, ...
    pub fn name(self) -> &'static str {
        match self {
            MemoryFormat::Contiguous => "torch.contiguous_format",
            MemoryFormat::ChannelsLast => "torch.channels_last",
            MemoryFormat::ChannelsLast3d => "torch.channels_last_3d",
            MemoryFormat::Preserve => "torch.preserve_format",
        }
    }

    /// The strides of a fresh tensor of `dims` in this format (torch's `empty(dims,
    /// memory_format=...)`): row-major for `Contiguous`; `ChannelsLast` needs 4 dims and
    /// `ChannelsLast3d` 5, with torch's errors. `Preserve` has no strides of its own (an error,
    /// as torch's `empty(..., memory_format=torch.preserve_format)`).
    pub fn strides_for(self, dims: &[usize]) -> Result<Vec<usize>> {
        match self {
            MemoryFormat::Contiguous => Ok(contiguous_strides(dims)),
            MemoryFormat::ChannelsLast => {
                if dims.len() != 4 {
                    return Err(Error::msg("required rank 4 tensor to use channels_last format"));
                }
                Ok(channels_last_strides_2d(dims))
            }
            MemoryFormat::ChannelsLast3d => {
                if dims.len() != 5 {
                    return Err(Error::msg("required rank 5 tensor to use channels_last_3d format"));
                }
                Ok(channels_last_strides_3d(dims))
            }
            MemoryFormat::Preserve => Err(Error::msg("unsupported memory format Preserve")),
        }
    }
}

impl fmt::Display for MemoryFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// torch's `get_channels_last_strides_2d` for 4 dims `N, C, H, W` (no `max(size, 1)`, as torch:
/// `[2, 0, 3, 3]` gives `[0, 1, 0, 0]`). Panics on another rank.
pub fn channels_last_strides_2d(dims: &[usize]) -> Vec<usize> {
    assert_eq!(dims.len(), 4, "ChannelsLast2d doesn't support size {}", dims.len());
    let mut s = vec![0; 4];
    s[1] = 1;
    s[3] = dims[1];
    s[2] = s[3] * dims[3];
    s[0] = s[2] * dims[2];
    s
}

/// torch's `get_channels_last_strides_3d` for 5 dims `N, C, D, H, W`. Panics on another rank.
pub fn channels_last_strides_3d(dims: &[usize]) -> Vec<usize> {
    assert_eq!(dims.len(), 5, "ChannelsLast3d doesn't support size {}", dims.len());
    let mut s = vec![0; 5];
    s[1] = 1;
    s[4] = dims[1];
    s[3] = s[4] * dims[4];
    s[2] = s[3] * dims[3];
    s[0] = s[2] * dims[2];
    s
}

/// Dense in the dim order `order` (innermost first), size-1 dims' strides ignored.
fn dense_in_order(dims: &[usize], strides: &[usize], order: &[usize]) -> bool {
    let mut expected = 1usize;
    for &d in order {
        if dims[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected = expected.saturating_mul(dims[d]);
        }
    }
    true
}

/// torch's `is_contiguous()` (`_compute_contiguous`): row-major with size-1 dims' strides
/// ignored; an empty tensor is always contiguous.
pub fn is_contiguous(dims: &[usize], strides: &[usize]) -> bool {
    if dims.contains(&0) {
        return true;
    }
    let order: Vec<usize> = (0..dims.len()).rev().collect();
    dense_in_order(dims, strides, &order)
}

/// torch's `is_contiguous(memory_format=torch.channels_last)`: 4 dims, dense in `C, W, H, N`
/// order with size-1 dims' strides ignored (so `N×1×H×W` and `N×C×1×1` row-major tensors are
/// both). False for any other rank.
pub fn is_channels_last_contiguous_2d(dims: &[usize], strides: &[usize]) -> bool {
    dims.len() == 4 && dense_in_order(dims, strides, &[1, 3, 2, 0])
}

/// torch's `is_contiguous(memory_format=torch.channels_last_3d)`: 5 dims, dense in
/// `C, W, H, D, N` order with size-1 dims' strides ignored. False for any other rank.
pub fn is_channels_last_contiguous_3d(dims: &[usize], strides: &[usize]) -> bool {
    dims.len() == 5 && dense_in_order(dims, strides, &[1, 4, 3, 2, 0])
}

/// torch's `is_channels_last_strides_2d_s4` / `_3d_s5`: whether the strides look like channels
/// last, with torch's tie-breaks towards row-major for the ambiguous size-1 cases.
fn strides_like(dims: &[usize], strides: &[usize], order: &[usize]) -> bool {
    // A trivial C stride: row-major by default.
    if strides[1] == 0 {
        return false;
    }
    let mut min = 0usize;
    for &d in order {
        if dims[d] == 0 || strides[d] < min {
            return false;
        }
        // `N111`-like tensors whose strides cannot tell: row-major.
        if d == 0 && min == strides[1] {
            return false;
        }
        // Distinguishes `N1H1` channels-last `[H, 1, 1, 1]` from row-major `[H, H, 1, 1]`.
        min = strides[d];
        if dims[d] > 1 {
            min = min.saturating_mul(dims[d]);
        }
    }
    true
}

/// torch's `is_channels_last_strides_2d`: a 4-d tensor whose strides look like channels last
/// (what `suggest_memory_format` reports). False for any other rank.
pub fn is_channels_last_strides_2d(dims: &[usize], strides: &[usize]) -> bool {
    dims.len() == 4 && strides_like(dims, strides, &[1, 3, 2, 0])
}

/// torch's `is_channels_last_strides_3d`: the 5-d version. False for any other rank.
pub fn is_channels_last_strides_3d(dims: &[usize], strides: &[usize]) -> bool {
    dims.len() == 5 && strides_like(dims, strides, &[1, 4, 3, 2, 0])
}

/// torch's `is_contiguous(memory_format=fmt)`. `Preserve` asks for plain contiguity, as torch's
/// `is_contiguous_default` does; a channels-last format on the wrong rank is `false`.
pub fn is_contiguous_for(dims: &[usize], strides: &[usize], fmt: MemoryFormat) -> bool {
    match fmt {
        MemoryFormat::Contiguous | MemoryFormat::Preserve => is_contiguous(dims, strides),
        MemoryFormat::ChannelsLast => is_channels_last_contiguous_2d(dims, strides),
        MemoryFormat::ChannelsLast3d => is_channels_last_contiguous_3d(dims, strides),
    }
}

/// torch's `Tensor::suggest_memory_format()` (without the exact-match flag): `ChannelsLast` for a
/// 4-d tensor whose strides look like channels last, `ChannelsLast3d` for such a 5-d tensor,
/// `Contiguous` otherwise (also for every ambiguous case).
pub fn suggest_memory_format(dims: &[usize], strides: &[usize]) -> MemoryFormat {
    match dims.len() {
        4 if is_channels_last_strides_2d(dims, strides) => MemoryFormat::ChannelsLast,
        // For 5 dims torch checks "not channels-last 3d contiguous" before the 2-d test, which is
        // false at this rank anyway.
        5 if is_channels_last_strides_3d(dims, strides) => MemoryFormat::ChannelsLast3d,
        _ => MemoryFormat::Contiguous,
    }
}

/// torch's `is_non_overlapping_and_dense()`: some permutation of the dims is row-major (size-1
/// dims ignored); an empty tensor always is.
pub fn is_non_overlapping_and_dense(dims: &[usize], strides: &[usize]) -> bool {
    // torch's cached flag: contiguous (every empty tensor is) or channels-last contiguous first.
    if is_contiguous(dims, strides)
        || is_channels_last_contiguous_2d(dims, strides)
        || is_channels_last_contiguous_3d(dims, strides)
    {
        return true;
    }
    let rank = dims.len();
    if rank == 1 {
        return dims[0] < 2 || strides[0] == 1;
    }
    // Sorted by stride, size-0 and size-1 dims last.
    let mut perm: Vec<usize> = (0..rank).collect();
    perm.sort_by(|&a, &b| match (dims[a] < 2, dims[b] < 2) {
        (true, true) => std::cmp::Ordering::Equal,
        (true, false) => std::cmp::Ordering::Greater,
        (false, true) => std::cmp::Ordering::Less,
        (false, false) => strides[a].cmp(&strides[b]),
    });
    let mut require = 1usize;
    for &d in &perm {
        if dims[d] < 2 {
            return true;
        }
        if strides[d] != require {
            return false;
        }
        require = require.saturating_mul(dims[d]);
    }
    true
}

/// ATen's `infer_dense_strides`: dense, non-overlapping strides that keep the order of
/// `strides` (TensorIterator's insertion sort: stride-0 dims compare as ambiguous and stay
/// put; of equal strides the smaller size goes inner). What `empty_like` and `clone` give a
/// tensor that is not dense.
pub fn infer_dense_strides(dims: &[usize], strides: &[usize]) -> Vec<usize> {
    let rank = dims.len();
    match rank {
        0 => return Vec::new(),
        1 => return vec![1],
        _ => {}
    }
    // -1: `d0` goes inner of `d1`; 1: outer; 0: ambiguous.
    let should_swap = |d0: usize, d1: usize| -> i32 {
        let (s0, s1) = (strides[d0], strides[d1]);
        if s0 == 0 || s1 == 0 {
            return 0;
        }
        if s0 < s1 {
            return -1;
        }
        if s0 > s1 {
            return 1;
        }
        i32::from(dims[d0] > dims[d1])
    };
    // perm: innermost first, starting from n-1, ..., 0.
    let mut perm: Vec<usize> = (0..rank).rev().collect();
    for i in 1..rank {
        let mut dim1 = i;
        for dim0 in (0..i).rev() {
            let c = should_swap(perm[dim0], perm[dim1]);
            if c > 0 {
                perm.swap(dim0, dim1);
                dim1 = dim0;
            } else if c < 0 {
                break;
            }
        }
    }
    let mut out = vec![0; rank];
    let mut curr = 1usize;
    for &d in &perm {
        out[d] = curr;
        if dims[d] > 1 {
            curr = curr.saturating_mul(dims[d]);
        }
    }
    out
}

/// The strides of a new tensor of `dims` made "like" a tensor with `strides` in format `fmt`
/// (torch's `empty_like(x, memory_format=fmt)`, also `clone`'s): for `Preserve`, the same
/// strides when they are non-overlapping and dense, else [`infer_dense_strides`]; otherwise the
/// format's strides ([`MemoryFormat::strides_for`], an error on the wrong rank).
pub fn like_strides(dims: &[usize], strides: &[usize], fmt: MemoryFormat) -> Result<Vec<usize>> {
    match fmt {
        MemoryFormat::Preserve if is_non_overlapping_and_dense(dims, strides) => Ok(strides.to_vec()),
        MemoryFormat::Preserve => Ok(infer_dense_strides(dims, strides)),
        other => other.strides_for(dims),
    }
}

/// The dims of a dense layout ordered from outermost to innermost (decreasing stride; ties,
/// which only size-0/1 dims can have in a dense layout, keep their order): permuting a tensor
/// by it, then making it row-major, lays the elements out as `strides` say.
pub fn memory_order(strides: &[usize]) -> Vec<usize> {
    let mut perm: Vec<usize> = (0..strides.len()).collect();
    perm.sort_by(|&a, &b| strides[b].cmp(&strides[a]));
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_last_rules_follow_torch() {
        assert_eq!(channels_last_strides_2d(&[2, 3, 4, 5]), [60, 1, 15, 3]);
        assert_eq!(channels_last_strides_2d(&[1, 3, 1, 1]), [3, 1, 3, 3]);
        assert_eq!(channels_last_strides_2d(&[2, 0, 3, 3]), [0, 1, 0, 0]);
        assert_eq!(channels_last_strides_3d(&[2, 3, 4, 5, 6]), [360, 1, 90, 18, 3]);
        // N1HW row-major is both; its suggestion stays row-major.
        assert!(is_channels_last_contiguous_2d(&[2, 1, 4, 5], &[20, 20, 5, 1]));
        assert_eq!(suggest_memory_format(&[2, 1, 4, 5], &[20, 20, 5, 1]), MemoryFormat::Contiguous);
        assert_eq!(suggest_memory_format(&[2, 1, 4, 5], &[20, 1, 5, 1]), MemoryFormat::ChannelsLast);
        // N1H1: [H, 1, 1, 1] is channels last, [H, H, 1, 1] row-major.
        assert_eq!(suggest_memory_format(&[3, 1, 4, 1], &[4, 1, 1, 1]), MemoryFormat::ChannelsLast);
        assert_eq!(suggest_memory_format(&[3, 1, 4, 1], &[4, 4, 1, 1]), MemoryFormat::Contiguous);
        assert_eq!(infer_dense_strides(&[3, 4], &[2, 6]), [1, 3]);
        assert_eq!(infer_dense_strides(&[2, 1, 1, 1], &[4, 4, 4, 1]), [1, 1, 1, 1]);
        assert_eq!(infer_dense_strides(&[6, 5, 4, 3, 2], &[6, 0, 120, 0, 1]), [6, 36, 180, 2, 1]);
        assert!(!is_non_overlapping_and_dense(&[2, 3, 4, 5], &[0, 1, 0, 0]));
        assert!(is_non_overlapping_and_dense(&[6, 4], &[1, 6]));
        assert!(is_non_overlapping_and_dense(&[2, 0, 3, 3], &[0, 1, 0, 0]));
        assert!(!is_non_overlapping_and_dense(&[3, 4], &[2, 6]));
        assert_eq!(memory_order(&[60, 1, 15, 3]), [0, 2, 3, 1]);
    }
}
