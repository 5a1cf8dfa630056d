//! Ordering prims: sort, topk, kthvalue, unique, searchsorted, histograms, cumulative scans.

/// Ordering prims: sort, topk, kthvalue, unique, searchsorted, histograms, cumulative scans.
///
/// Each variant carries its parameters; inputs are listed in the variant's doc. Unless a variant says
/// otherwise it takes one input of rank >= 1 (the tensor layer turns 0-d inputs into `[1]`), and `dim`
/// is already wrapped. Row ops (everything with a `dim`) return contiguous outputs of the input's rank.
#[derive(Clone, Debug, PartialEq)]
pub enum SortOp {
    /// Stable sort along `dim` (NaN sorts as the largest value); outputs `(values, int64 indices)`.
    Sort {
        /// the dim sorted
        dim: usize,
        /// largest first (equal elements keep their order either way)
        descending: bool,
    },
    /// The `k` largest (or smallest) elements along `dim` and their int64 indices, in torch's CPU
    /// order (the order of the C++ standard library's partial sort / nth_element that torch uses).
    TopK {
        /// how many elements (`<=` the dim's size)
        k: usize,
        /// the dim searched
        dim: usize,
        /// largest rather than smallest
        largest: bool,
        /// sorted output (otherwise torch's selection order)
        sorted: bool,
    },
    /// The `k`-th smallest element (1-based) along `dim` with its index, by torch's quickselect;
    /// the dim is kept with size 1.
    KthValue {
        /// 1-based rank, `1..=size`
        k: usize,
        /// the dim searched
        dim: usize,
    },
    /// The lower median along `dim` (NaN if the row holds one, with the first NaN's index); among
    /// equal values the one at that sorted position in a stable sort. With `ignore_nan`
    /// (`nanmedian`), the lower median of the non-NaN values (NaN for an all-NaN row), picked by
    /// torch's `std::nth_element`. The dim is kept with size 1.
    Median {
        /// the dim reduced
        dim: usize,
        /// skip NaN values (`nanmedian`)
        ignore_nan: bool,
    },
    /// The most frequent value along `dim` (the smallest among equally frequent ones) and torch's
    /// index for it; the dim is kept with size 1.
    Mode {
        /// the dim reduced
        dim: usize,
    },
    /// Quantiles along `dim` of input 0 at the probabilities of input 1 (1-D, same float dtype).
    /// The output has shape `[q.len()] + input shape with dim = 1`.
    Quantile {
        /// the dim reduced
        dim: usize,
        /// torch's interpolation name: linear, lower, higher, midpoint or nearest
        interpolation: &'static str,
    },
    /// Cumulative sum along `dim` (f16/bf16 accumulate in f32).
    CumSum {
        /// the dim scanned
        dim: usize,
    },
    /// Cumulative product along `dim`.
    CumProd {
        /// the dim scanned
        dim: usize,
    },
    /// Running maximum along `dim` with the index of the last maximal element (NaN propagates);
    /// outputs `(values, int64 indices)`.
    CumMax {
        /// the dim scanned
        dim: usize,
    },
    /// Running minimum along `dim`, as [`SortOp::CumMax`].
    CumMin {
        /// the dim scanned
        dim: usize,
    },
    /// `log(cumsum(exp(x)))` along `dim`, computed stably (floats only).
    LogCumSumExp {
        /// the dim scanned
        dim: usize,
    },
    /// Distinct elements of the flattened input; outputs `(values, int64 inverse indices shaped like
    /// the input, int64 counts)`. Sorted ascending (NaNs last, each NaN distinct) unless
    /// `consecutive`, which only merges runs of equal neighbours.
    Unique {
        /// merge runs of equal neighbours only (`unique_consecutive`)
        consecutive: bool,
    },
    /// Inputs `(sorted_sequence, values)` of one dtype: the int64 position of each value in its row of
    /// the sequence (1-D, or with leading dims equal to the values' leading dims).
    SearchSorted {
        /// first position after equal elements rather than before
        right: bool,
    },
    /// Histogram of the (float) input with `bins` equal bins over `[min, max]` (elements outside and
    /// NaN are ignored); output `[bins]` in the input dtype.
    Histc {
        /// number of bins (> 0)
        bins: usize,
        /// lower edge (finite, < max)
        min: f64,
        /// upper edge (finite)
        max: f64,
    },
    /// Counts of each value of a 1-D non-negative integer input, `length` bins (every value must be
    /// below it). With `weighted`, input 1 holds f32 or f64 weights (same length) that are summed
    /// instead, and the output has their dtype; otherwise the output is int64.
    Bincount {
        /// number of bins
        length: usize,
        /// whether a weights input follows
        weighted: bool,
    },
}

impl SortOp {
    /// torch's name for the op.
    pub fn name(&self) -> &'static str {
        match self {
            SortOp::Sort { .. } => "sort",
            SortOp::TopK { .. } => "topk",
            SortOp::KthValue { .. } => "kthvalue",
            SortOp::Median { ignore_nan: false, .. } => "median",
            SortOp::Median { ignore_nan: true, .. } => "nanmedian",
            SortOp::Mode { .. } => "mode",
            SortOp::Quantile { .. } => "quantile",
            SortOp::CumSum { .. } => "cumsum",
            SortOp::CumProd { .. } => "cumprod",
            SortOp::CumMax { .. } => "cummax",
            SortOp::CumMin { .. } => "cummin",
            SortOp::LogCumSumExp { .. } => "logcumsumexp",
            SortOp::Unique { consecutive: false } => "unique",
            SortOp::Unique { consecutive: true } => "unique_consecutive",
            SortOp::SearchSorted { .. } => "searchsorted",
            SortOp::Histc { .. } => "histc",
            SortOp::Bincount { .. } => "bincount",
        }
    }

    /// Number of tensor inputs.
    pub fn arity(&self) -> usize {
        match self {
            SortOp::Quantile { .. } | SortOp::SearchSorted { .. } => 2,
            SortOp::Bincount { weighted, .. } => 1 + usize::from(*weighted),
            _ => 1,
        }
    }

    /// Number of outputs.
    pub fn n_outputs(&self) -> usize {
        match self {
            SortOp::Sort { .. }
            | SortOp::TopK { .. }
            | SortOp::KthValue { .. }
            | SortOp::Median { .. }
            | SortOp::Mode { .. }
            | SortOp::CumMax { .. }
            | SortOp::CumMin { .. } => 2,
            SortOp::Unique { .. } => 3,
            _ => 1,
        }
    }

    /// Shapes of the outputs given the input shapes; `output_lens` (element counts of the outputs the
    /// backend produced) serves the ops whose output size depends on the data, such as `unique`.
    pub fn output_shapes(&self, inputs: &[&[usize]], output_lens: &[usize]) -> Vec<Vec<usize>> {
        let with_dim = |dim: usize, size: usize| {
            let mut s = inputs[0].to_vec();
            if dim < s.len() {
                s[dim] = size;
            }
            s
        };
        let one = match self {
            SortOp::TopK { k, dim, .. } => with_dim(*dim, *k),
            SortOp::KthValue { dim, .. } | SortOp::Median { dim, .. } | SortOp::Mode { dim } => {
                with_dim(*dim, 1)
            }
            SortOp::Quantile { dim, .. } => {
                let mut s = vec![inputs[1].iter().product()];
                s.extend(with_dim(*dim, 1));
                s
            }
            SortOp::Unique { .. } => {
                let n = output_lens.first().copied().unwrap_or(0);
                return vec![vec![n], inputs[0].to_vec(), vec![n]];
            }
            SortOp::SearchSorted { .. } => inputs[1].to_vec(),
            SortOp::Histc { bins, .. } => vec![*bins],
            SortOp::Bincount { length, .. } => vec![*length],
            SortOp::Sort { .. }
            | SortOp::CumSum { .. }
            | SortOp::CumProd { .. }
            | SortOp::CumMax { .. }
            | SortOp::CumMin { .. }
            | SortOp::LogCumSumExp { .. } => inputs[0].to_vec(),
        };
        vec![one; self.n_outputs()]
    }
}
