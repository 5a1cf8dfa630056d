//! `torch.histogram` and `torch.histogramdd`: counts (or summed weights) of the input's rows in the
//! bins of one or more dims, computed on the host as torch's CPU kernel does
//! (`aten/src/ATen/native/cpu/HistogramKernel.cpp`), with torch's argument checks and messages.
//!
//! * Bins given as counts get evenly spaced edges, `linspace(min, max, bins + 1)` in the input's
//!   dtype over `range` or the data's range (`[0, 1]` for empty input, `[v - 0.5, v + 0.5]` when
//!   every element is `v`); an element's bin is `(x - edge[0]) * bins / (edge[last] - edge[0])` in
//!   the input's dtype, corrected by a search of the neighbouring edges, so that it always agrees
//!   with the returned edges.
//! * Bins given as edge tensors are searched (`std::upper_bound`, step for step, so unsorted edges
//!   give torch's result too).
//! * The last bin includes its right edge; elements outside `[edge[0], edge[last]]` and NaN are
//!   left out (in `histogramdd`, a row with any such coordinate).
//! * `density` divides by the total (torch's `sum`) and by each bin's width in every dim.
//!
//! float32, float64, float16 and bfloat16 (the half types only with a `range` or edge tensors, as
//! in torch, which refuses to find their range in the data). The half types compute as torch's
//! `at::Half`/`at::BFloat16` do: each operation in float32, rounded back to the half type; their
//! evenly spaced edges are torch's `linspace` in them (see `even_edges`). Weighted sums (and
//! counts) are accumulated row by row in the input's dtype, which is torch's order for up to
//! `200 / N` rows of `N` coordinates (torch splits longer inputs between threads, so its last bits
//! then depend on the thread count; counts in a half type stop growing where adding one rounds
//! away, at 2048 in float16 and 256 in bfloat16, as in torch's single thread).

use std::ops::{Add, AddAssign, Div, DivAssign, Mul, Sub};

use half::{bf16, f16};

use oxtorch_core::{DType, Error, Result};

use crate::{CpuElement, Tensor};

/// A float element the histogram kernel computes in (f32, f64, and f16 and bf16, whose operators
/// compute in f32 and round back, as torch's `at::Half` and `at::BFloat16` do).
trait HistFloat:
    CpuElement
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + AddAssign
    + DivAssign
{
}
impl HistFloat for f32 {}
impl HistFloat for f64 {}
impl HistFloat for f16 {}
impl HistFloat for bf16 {}

/// How a bin is found: by division over evenly spaced edges, or by searching arbitrary ones.
#[derive(Clone, Copy)]
enum Search {
    Linear,
    Binary,
}

/// libstdc++'s `std::upper_bound` over `edges[first..last]` (the first index whose edge is greater
/// than `x`), step for step: on unsorted edges its answer is the one torch gets.
fn upper_bound<T: PartialOrd>(edges: &[T], mut first: usize, last: usize, x: T) -> usize {
    let mut len = last - first;
    while len > 0 {
        let half = len / 2;
        let middle = first + half;
        if x < edges[middle] {
            len = half;
        } else {
            first = middle + 1;
            len = len - half - 1;
        }
    }
    first
}

/// torch's `histogramdd_cpu_contiguous`: the histogram of `rows` (row-major, `edges.len()`
/// coordinates each) over `edges`, row-major over the dims' bins.
fn fill<T: HistFloat>(rows: &[T], edges: &[Vec<T>], weight: Option<&[T]>, search: Search) -> Vec<T> {
    let d = edges.len();
    let bins: Vec<usize> = edges.iter().map(|e| e.len() - 1).collect();
    let mut strides = vec![1usize; d];
    for k in (0..d.saturating_sub(1)).rev() {
        strides[k] = strides[k + 1] * bins[k + 1];
    }
    let mut hist = vec![T::ZERO; bins.iter().product()];
    if d == 0 || rows.is_empty() {
        return hist;
    }
    'rows: for (r, row) in rows.chunks_exact(d).enumerate() {
        let mut index = 0usize;
        for (k, &x) in row.iter().enumerate() {
            let e = &edges[k];
            let n = e.len();
            let (left, right) = (e[0], e[n - 1]);
            // Outside the edges, or NaN.
            if !(x >= left && x <= right) {
                continue 'rows;
            }
            let mut pos = match search {
                Search::Binary => upper_bound(e, 0, n, x) as i64 - 1,
                Search::Linear => {
                    // In the input's dtype, truncated as `static_cast<int64_t>`; then the
                    // neighbouring edges decide, so that the bin agrees with them.
                    let guess = ((x - left) * T::from_i64(n as i64 - 1) / (right - left)).to_i64();
                    // (a value whose guess overflowed the dtype saturates: no wrap-around)
                    let lo = guess.saturating_sub(1).clamp(0, n as i64) as usize;
                    let hi = guess.saturating_add(2).clamp(lo as i64, n as i64) as usize;
                    upper_bound(e, lo, hi, x) as i64 - 1
                }
            };
            // The last bin includes its right edge.
            if pos == n as i64 - 1 {
                pos -= 1;
            }
            if pos < 0 || pos >= bins[k] as i64 {
                continue 'rows;
            }
            index += strides[k] * pos as usize;
        }
        let w = weight.map_or(T::ONE, |w| w[r]);
        hist[index] += w;
    }
    hist
}

/// A double as C++'s `ostream` prints it (`%g`: six significant digits), for torch's messages.
fn cpp_double(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let sci = format!("{v:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp) as usize;
        trim(format!("{v:.decimals$}"))
    } else {
        format!("{}e{}{:02}", trim(mantissa.to_string()), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// torch's "not implemented" error of a kernel dispatched on float32/float64 (and, with `half`,
/// float16/bfloat16) only.
fn float_only(t: &Tensor, kernel: &str, half: bool) -> Result<()> {
    match t.dtype() {
        DType::F32 | DType::F64 => Ok(()),
        DType::F16 | DType::BF16 if half => Ok(()),
        dt => Err(Error::msg(format!("\"{kernel}\" not implemented for '{}'", dt.scalar_type_name()))),
    }
}

/// `steps` evenly spaced edges from `lo` to `hi` in `like`'s dtype and on its device: torch's
/// `linspace` ([`Tensor::linspace`], with torch's rule for the half types too).
fn even_edges(lo: f64, hi: f64, steps: usize, like: &Tensor) -> Result<Tensor> {
    Tensor::linspace(lo, hi, steps, (like.dtype(), like.device()))
}

/// The bin counts must be positive (torch's `histogramdd_prepare_out`).
fn check_counts(bins: &[i64]) -> Result<()> {
    for (dim, &b) in bins.iter().enumerate() {
        if b <= 0 {
            return Err(Error::msg(format!(
                "torch.histogram(): bins must be > 0, but got {b} for dimension {dim}"
            )));
        }
    }
    Ok(())
}

impl Tensor {
    /// `torch.histogram(input, bins, range=range, weight=weight, density=density)` with a bin
    /// count: the histogram of all elements over `bins` equal bins spanning `range` (`(min,
    /// max)`; the data's range when `None`), and the `bins + 1` edges, both of the input's dtype.
    /// `weight` (as many elements as the input) sums weights instead of counting; `density`
    /// normalizes to a probability density. float32/float64, and float16/bfloat16 with a `range`
    /// (or empty input).
    pub fn histogram(
        &self,
        bins: i64,
        range: Option<(f64, f64)>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Tensor)> {
        let rows = self.reshape([self.numel() as isize, 1])?;
        let weight = weight.map(|w| w.reshape([w.numel() as isize])).transpose()?;
        check_counts(&[bins])?;
        let range = range.map(|(lo, hi)| [lo, hi]);
        let outer = rows.outer_bin_edges(range.as_ref().map(|r| r.as_slice()))?;
        let edges = even_edges(outer[0].0, outer[0].1, bins as usize + 1, self)?;
        let hist =
            rows.histogram_of(std::slice::from_ref(&edges), weight.as_ref(), density, Search::Linear)?;
        Ok((hist, edges))
    }

    /// `torch.histogram(input, bins, weight=weight, density=density)` with a tensor of edges
    /// (1-D, at least two, the input's dtype): the histogram of all elements over those bins, and
    /// a copy of the edges.
    pub fn histogram_with_edges(
        &self,
        bins: &Tensor,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Tensor)> {
        let rows = self.reshape([self.numel() as isize, 1])?;
        let weight = weight.map(|w| w.reshape([w.numel() as isize])).transpose()?;
        let hist = rows.histogram_of(std::slice::from_ref(bins), weight.as_ref(), density, Search::Binary)?;
        Ok((hist, bins.detach().copy()?))
    }

    /// `torch.histogramdd(input, bins, range=range, weight=weight, density=density)` with bin
    /// counts: the input's innermost dim holds the coordinates of `N` dims (`bins.len() == N`; for
    /// torch's single count, repeat it), its other dims index points. Returns the `N`-dim
    /// histogram and each dim's `bins[d] + 1` evenly spaced edges over `range` (`[min0, max0,
    /// min1, max1, ...]`, or the data's range per dim). `weight` has the input's shape without its
    /// innermost dim. float32/float64, and float16/bfloat16 with a `range` (or empty input).
    pub fn histogramdd(
        &self,
        bins: &[i64],
        range: Option<&[f64]>,
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let rows = self.histogramdd_rows()?;
        let outer = rows.outer_bin_edges(range)?;
        if bins.len() != outer.len() {
            return Err(Error::msg(
                "histogramdd: The size of bins must be equal to the innermost dimension of the input.",
            ));
        }
        if bins.iter().any(|&b| b < -1) {
            // torch's linspace of `b + 1 < 0` steps comes before the count check
            return Err(Error::msg("number of steps must be non-negative"));
        }
        if let Some(dim) = bins.iter().position(|&b| b == -1) {
            // `-1` bins make zero edges, which torch's check of the edges refuses first
            return Err(Error::msg(format!(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor for dimension {dim}"
            )));
        }
        let edges = bins
            .iter()
            .zip(&outer)
            .map(|(&b, &(lo, hi))| even_edges(lo, hi, b as usize + 1, self))
            .collect::<Result<Vec<_>>>()?;
        check_counts(bins)?;
        self.histogramdd_of(&rows, &edges, weight, density, Search::Linear).map(|h| (h, edges))
    }

    /// `torch.histogramdd(input, bins, weight=weight, density=density)` with a tensor of edges per
    /// dim (each 1-D, at least two, the input's dtype): the histogram over those bins, and the
    /// edge tensors themselves.
    pub fn histogramdd_with_edges(
        &self,
        bins: &[Tensor],
        weight: Option<&Tensor>,
        density: bool,
    ) -> Result<(Tensor, Vec<Tensor>)> {
        let rows = self.histogramdd_rows()?;
        self.histogramdd_of(&rows, bins, weight, density, Search::Binary).map(|h| (h, bins.to_vec()))
    }

    /// The input of `histogramdd` as `[M, N]` rows of coordinates.
    fn histogramdd_rows(&self) -> Result<Tensor> {
        if self.rank() < 2 {
            return Err(Error::msg("torch.histogramdd: input tensor should have at least 2 dimensions"));
        }
        let n = self.dims()[self.rank() - 1];
        let m: usize = self.dims()[..self.rank() - 1].iter().product();
        self.reshape([m as isize, n as isize])
    }

    /// `histogramdd` over `edges` of `rows` (this tensor as rows), `weight` shaped as this tensor
    /// without its innermost dim.
    fn histogramdd_of(
        &self,
        rows: &Tensor,
        edges: &[Tensor],
        weight: Option<&Tensor>,
        density: bool,
        search: Search,
    ) -> Result<Tensor> {
        if let Some(w) = weight {
            let points = &self.dims()[..self.rank() - 1];
            if w.dims() != points {
                // checked after the dtypes, as torch does
                check_bins_and_weight(rows, edges, Some(w))?;
                return Err(Error::msg(format!(
                    "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape {:?} and weight with shape {:?}",
                    self.dims(),
                    w.dims()
                )));
            }
        }
        let weight = weight.map(|w| w.reshape([rows.dims()[0] as isize])).transpose()?;
        rows.histogram_of(edges, weight.as_ref(), density, search)
    }

    /// torch's `select_outer_bin_edges` for `[M, N]` rows: each dim's `(min, max)` from `range`
    /// (`2N` numbers) or the data (`[0, 1]` when empty), checked finite and ordered, an empty
    /// range widened by 0.5 each way.
    fn outer_bin_edges(&self, range: Option<&[f64]>) -> Result<Vec<(f64, f64)>> {
        let n = self.dims()[1];
        let mut outer = vec![(0.0f64, 1.0f64); n];
        match range {
            Some(r) => {
                if r.len() != 2 * n {
                    return Err(Error::msg(format!(
                        "torch.histogramdd: for a {n}-dimensional histogram range should have {} elements, but got {}",
                        2 * n,
                        r.len()
                    )));
                }
                for (k, o) in outer.iter_mut().enumerate() {
                    *o = (r[2 * k], r[2 * k + 1]);
                }
            }
            None if self.numel() > 0 => {
                // (torch finds the range in float32/float64 only)
                float_only(self, "histogramdd", false)?;
                // torch's `aminmax(input, 0)`: NaN propagates (and is refused below).
                let (lo, hi) = self.detach().aminmax(Some(0), false)?;
                let lo = lo.to_dtype(DType::F64)?.to_vec::<f64>()?;
                let hi = hi.to_dtype(DType::F64)?.to_vec::<f64>()?;
                for (k, o) in outer.iter_mut().enumerate() {
                    *o = (lo[k], hi[k]);
                }
            }
            None => {}
        }
        for (k, (lo, hi)) in outer.iter_mut().enumerate() {
            if !lo.is_finite() || !hi.is_finite() {
                return Err(Error::msg(format!(
                    "torch.histogramdd: dimension {k}'s range [{}, {}] is not finite",
                    cpp_double(*lo),
                    cpp_double(*hi)
                )));
            }
            if *lo > *hi {
                return Err(Error::msg(format!(
                    "torch.histogramdd: min should not exceed max, but got min {} max {} for dimension {k}",
                    cpp_double(*lo),
                    cpp_double(*hi)
                )));
            }
            if lo == hi {
                *lo -= 0.5;
                *hi += 0.5;
            }
        }
        Ok(outer)
    }

    /// The histogram of `[M, N]` rows over `edges` (one tensor per dim), `weight` of `M` elements:
    /// torch's `histogramdd_check_inputs`, the kernel, and the density.
    fn histogram_of(
        &self,
        edges: &[Tensor],
        weight: Option<&Tensor>,
        density: bool,
        search: Search,
    ) -> Result<Tensor> {
        check_bins_and_weight(self, edges, weight)?;
        if let Some(w) = weight {
            if w.numel() != self.dims()[0] {
                return Err(Error::msg(format!(
                    "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape {:?} and weight with shape {:?}",
                    self.dims(),
                    w.dims()
                )));
            }
        }
        let counts: Vec<i64> = edges.iter().map(|e| e.numel() as i64 - 1).collect();
        check_counts(&counts)?;
        float_only(self, "histogram_cpu", true)?;
        match self.dtype() {
            DType::F32 => self.histogram_host::<f32>(edges, weight, density, search),
            DType::F16 => self.histogram_host::<f16>(edges, weight, density, search),
            DType::BF16 => self.histogram_host::<bf16>(edges, weight, density, search),
            _ => self.histogram_host::<f64>(edges, weight, density, search),
        }
    }

    /// The kernel and the density on the host, in `T`.
    fn histogram_host<T: HistFloat>(
        &self,
        edges: &[Tensor],
        weight: Option<&Tensor>,
        density: bool,
        search: Search,
    ) -> Result<Tensor> {
        let rows = self.to_vec::<T>()?;
        let edge_values = edges.iter().map(|e| e.to_vec::<T>()).collect::<Result<Vec<_>>>()?;
        let weight = weight.map(|w| w.to_vec::<T>()).transpose()?;
        let shape: Vec<usize> = edge_values.iter().map(|e| e.len() - 1).collect();
        if shape.iter().try_fold(1usize, |acc, &b| acc.checked_mul(b)).is_none() {
            return Err(Error::msg("numel: integer multiplication overflow"));
        }
        let mut hist = fill(&rows, &edge_values, weight.as_deref(), search);
        if density {
            // The total as torch's `hist.sum()` adds it up, then `hist / total / width` per dim.
            let total = Tensor::from_vec(hist.clone(), shape.clone())?.sum_all()?.item::<T>()?;
            for h in hist.iter_mut() {
                *h /= total;
            }
            let mut stride = hist.len();
            for (k, e) in edge_values.iter().enumerate() {
                let bins = shape[k];
                stride /= bins.max(1);
                for (i, h) in hist.iter_mut().enumerate() {
                    let b = (i / stride) % bins;
                    *h /= e[b + 1] - e[b];
                }
            }
        }
        Tensor::from_vec_on(hist, shape, self.device())
    }
}

/// torch's `histogramdd_check_inputs` (the dtypes, the edge tensors' ranks and sizes), before the
/// weight's shape.
fn check_bins_and_weight(rows: &Tensor, edges: &[Tensor], weight: Option<&Tensor>) -> Result<()> {
    let n = rows.dims()[1];
    if edges.len() != n {
        return Err(Error::msg(format!(
            "torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional histogram but got {}",
            edges.len()
        )));
    }
    for (dim, e) in edges.iter().enumerate() {
        if e.dtype() != rows.dtype() {
            return Err(Error::msg(format!(
                "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype {} and bins for dimension {dim} with dtype {}",
                crate::ops::cpp_name(rows.dtype()),
                crate::ops::cpp_name(e.dtype())
            )));
        }
        if e.rank() != 1 {
            return Err(Error::msg(format!(
                "torch.histogramdd: bins tensor should have one dimension, but got {} dimensions in the bins tensor for dimension {dim}",
                e.rank()
            )));
        }
        if e.numel() == 0 {
            return Err(Error::msg(format!(
                "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor for dimension {dim}"
            )));
        }
    }
    if let Some(w) = weight {
        if w.dtype() != rows.dtype() {
            return Err(Error::msg(format!(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same dtype, but got input({}), and weight({})",
                crate::ops::cpp_name(rows.dtype()),
                crate::ops::cpp_name(w.dtype())
            )));
        }
    }
    Ok(())
}
