//! torch.histogram and torch.histogramdd against torch (histogram_golden.rs, from
//! make_histogram_golden.py: float32 and float64, elements on the bin edges, weights, density,
//! custom and unsorted edges, empty input, zero-width ranges, NaN and infinities; float16 and
//! bfloat16 with ranges and edge tensors), bit for bit (sums of weights and float32/half densities
//! within rounding), and torch's messages for bad input.

use oxtorch_tensor::{DType, Result, Tensor};

use crate::histogram_golden::{HistCase, CASES};

fn dtype_of(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f64" => DType::F64,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        other => panic!("unknown dtype {other}"),
    }
}

fn tensor(v: &[f64], shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::from_vec(v.to_vec(), shape.to_vec())?.to_dtype(dtype)
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

/// Bit-exact comparison in f64 (NaN matches NaN).
fn exact(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() { g.is_nan() } else { g.to_bits() == w.to_bits() };
        assert!(ok, "{what}[{i}]: got {g:e}, torch {w:e}");
    }
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

/// Runs one golden case: the histogram and the edges.
fn run(c: &HistCase) -> Result<(Tensor, Vec<Tensor>)> {
    let dt = dtype_of(c.dtype);
    let x = tensor(c.input, c.shape, dt)?;
    // histogramdd's weight has the input's shape without the innermost dim; histogram's the
    // input's.
    let weight_shape = if c.dd { &c.shape[..c.shape.len() - 1] } else { c.shape };
    let w = c.weight.map(|w| tensor(w, weight_shape, dt)).transpose()?;
    let edges_in = c.edges_in.iter().map(|e| tensor(e, &[e.len()], dt)).collect::<Result<Vec<_>>>()?;
    let range = if c.range.is_empty() { None } else { Some(c.range) };
    if c.dd {
        if edges_in.is_empty() {
            x.histogramdd(c.counts, range, w.as_ref(), c.density)
        } else {
            x.histogramdd_with_edges(&edges_in, w.as_ref(), c.density)
        }
    } else {
        let (h, e) = if edges_in.is_empty() {
            x.histogram(c.counts[0], range.map(|r| (r[0], r[1])), w.as_ref(), c.density)?
        } else {
            x.histogram_with_edges(&edges_in[0], w.as_ref(), c.density)?
        };
        Ok((h, vec![e]))
    }
}

#[test]
fn histogram_and_histogramdd_match_torch() -> Result<()> {
    for c in CASES {
        let what = format!("{} ({})", c.name, c.dtype);
        let (h, edges) = run(c)?;
        assert_eq!(h.dtype(), dtype_of(c.dtype), "{what}: hist dtype");
        assert_eq!(h.dims(), c.hist_shape, "{what}: hist shape");
        if (c.density && c.dtype != "f64") || c.weight.is_some() {
            // Sums of weights and float32/half totals: torch adds weights per thread (its result
            // depends on its thread count) and its `sum` in a cascade, ours in another order
            // (last-bit parity of sums is not done): within 2 ulp of float32, 1 ulp of a half type.
            let tol = match c.dtype {
                "f16" => 2f64.powi(-10),
                "bf16" => 2f64.powi(-7),
                _ => 2.5e-7,
            };
            let got = values(&h)?;
            assert_eq!(got.len(), c.hist.len(), "{what}: length");
            for (i, (&g, &w)) in got.iter().zip(c.hist).enumerate() {
                let ok = if w.is_nan() { g.is_nan() } else { (g - w).abs() <= tol * w.abs() };
                assert!(ok, "{what}: hist[{i}]: got {g:e}, torch {w:e}");
            }
        } else {
            exact(&format!("{what}: hist"), &values(&h)?, c.hist);
        }
        assert_eq!(edges.len(), c.edges.len(), "{what}: number of edge tensors");
        for (k, (got, want)) in edges.iter().zip(c.edges).enumerate() {
            assert_eq!(got.dtype(), dtype_of(c.dtype), "{what}: edges[{k}] dtype");
            exact(&format!("{what}: edges[{k}]"), &values(got)?, want);
        }
    }
    Ok(())
}

/// The edges torch.histogram returns for tensor bins are a copy; histogramdd returns the given
/// tensors themselves.
#[test]
fn returned_edges_alias_as_in_torch() -> Result<()> {
    let x = Tensor::from_vec(vec![0.5f32, 1.5, 2.0], [3])?;
    let bins = Tensor::from_vec(vec![0.0f32, 1.0, 2.0], [3])?;
    let (_, e) = x.histogram_with_edges(&bins, None, false)?;
    assert!(!e.shares_storage(&bins));
    let points = x.reshape([3, 1])?;
    let (h, es) = points.histogramdd_with_edges(std::slice::from_ref(&bins), None, false)?;
    assert!(es[0].is_same(&bins));
    assert_eq!(values(&h)?, vec![1.0, 2.0]);
    Ok(())
}

#[test]
fn histogram_errors_are_torchs() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], [2])?;
    let long = Tensor::from_vec(vec![1i64, 2], [2])?;
    assert_eq!(err(long.histogram(2, None, None, false)), "\"histogramdd\" not implemented for 'Long'");
    assert_eq!(
        err(long.histogram(2, Some((0.0, 3.0)), None, false)),
        "\"histogram_cpu\" not implemented for 'Long'"
    );
    assert_eq!(
        err(x.to_dtype(DType::F16)?.histogram(2, None, None, false)),
        "\"histogramdd\" not implemented for 'Half'"
    );
    // (with a range, or edge tensors, the half types are computed: the golden cases)
    assert_eq!(
        err(x.to_dtype(DType::BF16)?.reshape([1, 2])?.histogramdd(&[2, 2], None, None, false)),
        "\"histogramdd\" not implemented for 'BFloat16'"
    );
    assert_eq!(
        err(x.histogram(0, None, None, false)),
        "torch.histogram(): bins must be > 0, but got 0 for dimension 0"
    );
    assert_eq!(
        err(x.histogram(2, Some((3.0, 1.0)), None, false)),
        "torch.histogramdd: min should not exceed max, but got min 3 max 1 for dimension 0"
    );
    assert_eq!(
        err(x.histogram(2, Some((2e-7, 1e-7)), None, false)),
        "torch.histogramdd: min should not exceed max, but got min 2e-07 max 1e-07 for dimension 0"
    );
    assert_eq!(
        err(x.histogram(2, Some((0.0, f64::INFINITY)), None, false)),
        "torch.histogramdd: dimension 0's range [0, inf] is not finite"
    );
    let with_nan = Tensor::from_vec(vec![1.0f32, f32::NAN, 3.0], [3])?;
    assert_eq!(
        err(with_nan.histogram(2, None, None, false)),
        "torch.histogramdd: dimension 0's range [nan, nan] is not finite"
    );
    assert_eq!(
        err(x.histogram(2, Some((f64::NAN, 1.0)), None, false)),
        "torch.histogramdd: dimension 0's range [nan, 1] is not finite"
    );
    let f64_edges = Tensor::from_vec(vec![0.0f64, 1.0, 2.0], [3])?;
    assert_eq!(
        err(x.histogram_with_edges(&f64_edges, None, false)),
        "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype float and bins for dimension 0 with dtype double"
    );
    assert_eq!(
        err(x.histogram_with_edges(&f64_edges.to_dtype(DType::F32)?.reshape([1, 3])?, None, false)),
        "torch.histogramdd: bins tensor should have one dimension, but got 2 dimensions in the bins tensor for dimension 0"
    );
    assert_eq!(
        err(x.histogram_with_edges(&Tensor::from_vec(Vec::<f32>::new(), [0])?, None, false)),
        "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor for dimension 0"
    );
    assert_eq!(
        err(x.histogram_with_edges(&Tensor::from_vec(vec![1.0f32], [1])?, None, false)),
        "torch.histogram(): bins must be > 0, but got 0 for dimension 0"
    );
    let w64 = Tensor::from_vec(vec![1.0f64, 2.0], [2])?;
    assert_eq!(
        err(x.histogram(2, None, Some(&w64), false)),
        "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same dtype, but got input(float), and weight(double)"
    );
    let w3 = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3])?;
    assert_eq!(
        err(x.histogram(2, None, Some(&w3), false)),
        "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape [2, 1] and weight with shape [3]"
    );
    Ok(())
}

#[test]
fn histogramdd_errors_are_torchs() -> Result<()> {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [2, 2])?;
    assert_eq!(
        err(x.reshape([4])?.histogramdd(&[2], None, None, false)),
        "torch.histogramdd: input tensor should have at least 2 dimensions"
    );
    assert_eq!(
        err(x.histogramdd(&[2, 3, 4], None, None, false)),
        "histogramdd: The size of bins must be equal to the innermost dimension of the input."
    );
    assert_eq!(
        err(x.histogramdd(&[2, 3], Some(&[0.0, 1.0]), None, false)),
        "torch.histogramdd: for a 2-dimensional histogram range should have 4 elements, but got 2"
    );
    assert_eq!(
        err(x.histogramdd(&[0, 3], None, None, false)),
        "torch.histogram(): bins must be > 0, but got 0 for dimension 0"
    );
    assert_eq!(err(x.histogramdd(&[-2, 3], None, None, false)), "number of steps must be non-negative");
    let e = Tensor::from_vec(vec![0.0f32, 2.0, 4.0], [3])?;
    assert_eq!(
        err(x.histogramdd_with_edges(std::slice::from_ref(&e), None, false)),
        "torch.histogramdd: expected 2 sequences of bin edges for a 2-dimensional histogram but got 1"
    );
    let w = Tensor::from_vec(vec![1.0f32, 2.0], [1, 2])?;
    assert_eq!(
        err(x.histogramdd(&[2, 3], None, Some(&w), false)),
        "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor excluding its innermost dimension, but got input with shape [2, 2] and weight with shape [1, 2]"
    );
    let w64 = Tensor::from_vec(vec![1.0f64], [1])?;
    assert_eq!(
        err(x.histogramdd(&[2, 3], None, Some(&w64), false)),
        "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same dtype, but got input(float), and weight(double)"
    );
    Ok(())
}

/// Bad sizes are errors, never a panic or a wrapped index (torch 2.15's messages); a value whose
/// bin guess overflows the dtype does not wrap around.
#[test]
fn histogram_sizes_that_cannot_be_are_errors() -> Result<()> {
    let x = Tensor::from_vec(vec![0.1f64, 0.5, 0.9, 0.3, 0.7, 0.2], [3, 2])?;
    assert_eq!(
        err(x.histogramdd(&[3, -1], None, None, false)),
        "torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the bins tensor for dimension 1"
    );
    let x3 = Tensor::from_vec(vec![0.1f64; 9], [3, 3])?;
    assert_eq!(
        err(x3.histogramdd(&[1 << 21, 1 << 21, 1 << 22], None, None, false)),
        "numel: integer multiplication overflow"
    );
    let big = Tensor::from_vec(vec![0.0f32, 1e38, 3e38], [3])?;
    let (hist, _) = big.histogram(10, None, None, false)?;
    assert_eq!(hist.to_vec::<f32>()?.iter().sum::<f32>(), 3.0);
    Ok(())
}
