//! Bounded dynamism (`Tensor::mark_dynamic`) on the XLA runtime: graphs that keep rows apart run
//! one program per bucket of row counts and keep their results padded; graphs that mix rows, row
//! slices and eager ops fall back to exact shapes; every result equals the cpu's.

mod xla_common;

use oxtorch_backend_tpu::xla::{metrics, with_mode, Mode};
use oxtorch_tensor::{DType, Device, Result, Tensor};
use xla_common::{assert_same, randn, serial, xla};

/// A seeded cpu tensor of `shape` and its copy on `dev` with `dim` marked dynamic up to `max`.
fn marked(shape: &[usize], seed: u64, dev: Device, dim: usize, max: usize) -> Result<(Tensor, Tensor)> {
    let cpu = randn(shape, seed);
    let marked = cpu.to(dev)?.mark_dynamic(dim, max)?;
    Ok((cpu, marked))
}

/// A small classifier head applied row by row: `softmax(gelu(x·W1ᵀ + b1)·W2)`.
fn head(x: &Tensor, w1: &Tensor, b1: &Tensor, w2: &Tensor) -> Result<Tensor> {
    x.matmul(&w1.t()?)?.add(b1)?.gelu("none")?.matmul(w2)?.softmax(-1, None)
}

#[test]
fn every_batch_size_runs_the_program_of_its_bucket() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let (w1_cpu, b1_cpu, w2_cpu) = (randn(&[32, 16], 1), randn(&[32], 2), randn(&[32, 8], 3));
    let (w1, b1, w2) = (w1_cpu.to(dev)?, b1_cpu.to(dev)?, w2_cpu.to(dev)?);
    // Warm the shapes that do not depend on the batch (uploads only, but be safe).
    let before = metrics();
    for n in 1..=40 {
        let (x_cpu, x) = marked(&[n, 16], 10 + n as u64, dev, 0, 64)?;
        assert_eq!(x.dims(), &[n, 16]);
        let y = with_mode(Mode::Fused, || head(&x, &w1, &b1, &w2))?;
        assert_same(&format!("batch {n}"), &head(&x_cpu, &w1_cpu, &b1_cpu, &w2_cpu)?, &y);
    }
    let after = metrics();
    let compiled = after.new_programs() - before.new_programs();
    // Buckets 1, 2, 4, 8, 16, 32, 64.
    assert!(compiled <= 7, "40 batch sizes compiled {compiled} programs");
    assert_eq!(after.dynamic_refusals, before.dynamic_refusals, "a row-wise graph was refused");
    assert!(after.dynamic_runs - before.dynamic_runs >= 40);
    Ok(())
}

#[test]
fn results_stay_dynamic_through_chained_steps() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let w_cpu = randn(&[6, 6], 4);
    let w = w_cpu.to(dev)?;
    let before = metrics();
    for n in [5, 6, 7] {
        let (x_cpu, x) = marked(&[n, 3, 6], 20 + n as u64, dev, 0, 8)?;
        // Step 1 (one program), step 2 reads its padded result (another), step 3 is eager.
        let h = with_mode(Mode::Fused, || -> Result<Tensor> {
            let h = x.matmul(&w)?.tanh()?;
            oxtorch_backend_tpu::xla::sync()?;
            Ok(h)
        })?;
        let y = with_mode(Mode::Fused, || h.mul(2.0)?.amax([2], true)?.sub(&h))?;
        let z = y.abs()?;
        let h_cpu = x_cpu.matmul(&w_cpu)?.tanh()?;
        let y_cpu = h_cpu.mul(2.0)?.amax([2], true)?.sub(&h_cpu)?;
        assert_same("h", &h_cpu, &h);
        assert_same("y", &y_cpu, &y);
        assert_same("z", &y_cpu.abs()?, &z);
    }
    let after = metrics();
    assert_eq!(after.dynamic_refusals, before.dynamic_refusals);
    assert!(after.dynamic_runs - before.dynamic_runs >= 6);
    Ok(())
}

#[test]
fn ops_across_the_rows_mask_the_padding() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let before = metrics();
    // Padded row counts (not powers of two) that divide the 6 columns: a reduced row is then a
    // whole number of rows, so only the masks stand between the results and the padding.
    for n in [3, 6, 5] {
        let (x_cpu, x) = marked(&[n, 6], 30 + n as u64, dev, 0, 8)?;
        // The padding holds zeros; `log` and `1/x` turn them into -inf and inf first.
        let f = |x: &Tensor| -> Result<Vec<Tensor>> {
            let (l, r) = (x.abs()?.log()?, x.reciprocal()?);
            Ok(vec![
                l.exp()?.sum([0], false)?,
                r.t()?.matmul(&l)?,
                l.softmax(0, None)?,
                l.amax([0], false)?,
                r.amin([0, 1], true)?,
                l.argmax(Some(0), false)?,
                x.sub(&x.mean([0], true)?)?,
                x.abs()?.prod(0, false)?,
                x.mul(10.0)?.to_dtype(DType::I64)?.amin([0], false)?,
                x.mul(-10.0)?.to_dtype(DType::I32)?.argmax(Some(0), false)?,
            ])
        };
        let got = with_mode(Mode::Fused, || f(&x))?;
        for (i, (c, g)) in f(&x_cpu)?.iter().zip(&got).enumerate() {
            assert_same(&format!("n {n}, output {i}"), c, g);
        }
    }
    assert_eq!(metrics().dynamic_refusals, before.dynamic_refusals, "an op across the rows was refused");
    Ok(())
}

#[test]
fn row_slices_run_with_exact_shapes() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let before = metrics();
    for n in [3, 6, 5] {
        let (x_cpu, x) = marked(&[n, 6], 30 + n as u64, dev, 0, 8)?;
        let (r, first, shifted) = with_mode(Mode::Fused, || -> Result<_> {
            Ok((
                x.narrow(0, 1, n - 1)?.mul(3.0)?,
                x.narrow(0, 0, n - 1)?.exp()?.sum([1], false)?,
                x.as_strided(&[n - 1, 6], &[6, 1], Some(1))?.exp()?,
            ))
        })?;
        assert_same("row slice", &x_cpu.narrow(0, 1, n - 1)?.mul(3.0)?, &r);
        assert_same("leading rows", &x_cpu.narrow(0, 0, n - 1)?.exp()?.sum([1], false)?, &first);
        assert_same("shifted rows", &x_cpu.as_strided(&[n - 1, 6], &[6, 1], Some(1))?.exp()?, &shifted);
        // Stacked rows (a `cat` before the row dim) would interleave padding; a `cat` of columns
        // keeps the rows apart.
        let (stacked, columns) = with_mode(Mode::Fused, || -> Result<_> {
            Ok((Tensor::stack(&[&x, &x.exp()?], 0)?, Tensor::cat(&[&x, &x.exp()?], 1)?))
        })?;
        assert_same("stacked", &Tensor::stack(&[&x_cpu, &x_cpu.exp()?], 0)?, &stacked);
        assert_same("columns", &Tensor::cat(&[&x_cpu, &x_cpu.exp()?], 1)?, &columns);
    }
    assert!(metrics().dynamic_refusals >= before.dynamic_refusals + 9);
    Ok(())
}

#[test]
fn views_in_place_writes_and_eager_ops_on_dynamic_tensors() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let refused = metrics().dynamic_refusals;
    for n in [1, 3, 4] {
        let (x_cpu, x) = marked(&[n, 5], 40 + n as u64, dev, 0, 16)?;
        // Gathers and scatters within the rows.
        let idx_cpu = x_cpu.abs()?.mul(3.0)?.to_dtype(DType::I64)?.clamp_max(4)?;
        let idx = idx_cpu.to(dev)?.mark_dynamic(0, 16)?;
        let (g, sc) = with_mode(Mode::Fused, || -> Result<_> {
            Ok((x.gather(1, &idx)?, x.scatter_add(1, &idx, &x.exp()?)?))
        })?;
        assert_same("gather", &x_cpu.gather(1, &idx_cpu)?, &g);
        assert_same("scatter_add", &x_cpu.scatter_add(1, &idx_cpu, &x_cpu.exp()?)?, &sc);
        // Columns of the rows and an in-place update, fused.
        let (cols, updated) = with_mode(Mode::Fused, || -> Result<_> {
            let cols = x.narrow(1, 1, 3)?.sigmoid()?;
            let y = x.mul(1.0)?;
            y.add_(&cols.sum([1], true)?)?;
            Ok((cols, y))
        })?;
        let cols_cpu = x_cpu.narrow(1, 1, 3)?.sigmoid()?;
        assert_same("columns", &cols_cpu, &cols);
        assert_same("updated", &x_cpu.add(&cols_cpu.sum([1], true)?)?, &updated);
        // Eager ops read the exact rows.
        assert_same("eager sum", &x_cpu.sum([0], false)?, &x.sum([0], false)?);
        assert_same("eager row", &x_cpu.select(0, -1)?, &x.select(0, -1)?.contiguous()?);
        assert_same("marked", &x_cpu, &x);
    }
    assert_eq!(metrics().dynamic_refusals, refused, "a graph within the rows was refused");
    Ok(())
}

#[test]
fn mark_dynamic_checks_its_arguments() -> Result<()> {
    let _serial = serial();
    let x_cpu = randn(&[4, 3], 50);
    assert!(x_cpu.mark_dynamic(0, 8)?.dims() == [4, 3], "a cpu tensor is returned as it is");
    let err = x_cpu.mark_dynamic(1, 8).unwrap_err().to_string();
    assert!(err.contains("only the outermost dimension"), "{err}");
    let err = x_cpu.mark_dynamic(0, 3).unwrap_err().to_string();
    assert!(err.contains("outside the bound 1..=3") && err.contains("[4, 3]"), "{err}");
    let Some(dev) = xla() else { return Ok(()) };
    let x = x_cpu.to(dev)?;
    assert!(x.mark_dynamic(0, 2).is_err());
    // The sequence of a batch of one.
    for n in [3, 5] {
        let (s_cpu, s) = marked(&[1, n, 4], 51 + n as u64, dev, 1, 8)?;
        let y = with_mode(Mode::Fused, || s.exp()?.softmax(-1, None)?.sum([1], false))?;
        assert_same("sequence", &s_cpu.exp()?.softmax(-1, None)?.sum([1], false)?, &y);
    }
    // A transposed view is copied first; marking twice keeps the same padding.
    let t = x.t()?.mark_dynamic(0, 4)?.mark_dynamic(0, 4)?;
    assert_same("transposed", &x_cpu.t()?.contiguous()?, &t);
    Ok(())
}

#[test]
fn a_training_step_on_every_batch_size_runs_the_program_of_its_bucket() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let (w1_cpu, w2_cpu) = (randn(&[12, 6], 60), randn(&[12, 4], 61));
    // Mean cross entropy of a two-layer net, and the weights' gradients.
    let step = |x: &Tensor, y: &Tensor, w1: &Tensor, w2: &Tensor| -> Result<Vec<Tensor>> {
        let (w1, w2) = (w1.detach().requires_grad_(true)?, w2.detach().requires_grad_(true)?);
        let loss = x.matmul(&w1.t()?)?.relu()?.matmul(&w2)?.cross_entropy(y, None, -100, "mean", 0.0)?;
        loss.backward()?;
        Ok(vec![loss, w1.grad().expect("w1 grad"), w2.grad().expect("w2 grad")])
    };
    let (w1, w2) = (w1_cpu.to(dev)?, w2_cpu.to(dev)?);
    let before = metrics();
    let mut built = Vec::new();
    // Buckets 4, 8, 8, 8, 16, 16.
    for n in [3, 5, 8, 7, 9, 12] {
        let x_cpu = randn(&[n, 6], 62 + n as u64);
        let y_cpu = Tensor::from_vec((0..n as i64).map(|i| (i * 7) % 4).collect::<Vec<_>>(), [n])?;
        let x = x_cpu.to(dev)?.mark_dynamic(0, 16)?;
        let y = y_cpu.to(dev)?.mark_dynamic(0, 16)?;
        let got = with_mode(Mode::Fused, || step(&x, &y, &w1, &w2))?;
        for (i, (c, g)) in step(&x_cpu, &y_cpu, &w1_cpu, &w2_cpu)?.iter().zip(&got).enumerate() {
            assert_same(&format!("n {n}, output {i}"), c, g);
        }
        built.push(metrics().new_programs());
    }
    let after = metrics();
    assert_eq!(after.dynamic_refusals, before.dynamic_refusals, "a step was refused");
    assert_eq!(built[1], built[3], "batch sizes 5, 8 and 7 share their programs");
    assert_eq!(built[4], built[5], "batch sizes 9 and 12 share their programs");
    Ok(())
}
