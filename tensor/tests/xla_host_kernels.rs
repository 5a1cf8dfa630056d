//! Matrix products of XLA programs on the CPU plugin run as calls to oxtorch's own kernels
//! (`backend-tpu/src/xla/host_kernels.rs`): every operand form (`linear`'s transposed weight, a
//! transposed left operand, batches, a single row, empty products), every float dtype, eager and
//! fused, and the gradients, against the cpu backend; the cross-entropy forward likewise; and the
//! calls are counted, so a lowering that silently fell back to XLA's own ops fails here.

mod xla_common;

use oxtorch_backend_tpu::xla::{metrics, with_mode, Mode};
use oxtorch_tensor::{DType, Result, Tensor};
use xla_common::{assert_same, randn, serial, xla};

/// Whether this process runs with the host kernels (`OXTORCH_XLA_HOST_KERNELS=0` turns them off;
/// the child process of `dot_general_matches_the_cpu_without_host_kernels` sets it).
fn host_kernels_on() -> bool {
    std::env::var("OXTORCH_XLA_HOST_KERNELS").map_or(true, |v| v != "0")
}

/// `a @ b` on the cpu and on `xla:0`, eager and fused, compared; returns the host-kernel calls of
/// the eager run and of the fused one.
fn check(what: &str, a: &Tensor, b: &Tensor) -> Result<(u64, u64)> {
    let dev = xla().expect("checked by the caller");
    let want = a.matmul(b)?;
    let (xa, xb) = (a.to(dev)?, b.to(dev)?);
    let before = metrics().host_kernel_calls;
    assert_same(&format!("{what} eager"), &want, &xa.matmul(&xb)?);
    let eager = metrics().host_kernel_calls - before;
    let before = metrics().host_kernel_calls;
    let fused = with_mode(Mode::Fused, || xa.matmul(&xb)?.neg()?.neg())?;
    assert_same(&format!("{what} fused"), &want, &fused);
    Ok((eager, metrics().host_kernel_calls - before))
}

#[test]
fn products_of_every_operand_form_call_the_host_kernels() -> Result<()> {
    if xla().is_none() {
        return Ok(());
    }
    let _serial = serial();
    every_operand_form(host_kernels_on())
}

/// Every operand form and float dtype against the cpu; `host` says whether each product must call
/// the host kernel (eager and fused) or must not.
fn every_operand_form(host: bool) -> Result<()> {
    for dtype in [DType::F32, DType::F64, DType::BF16, DType::F16] {
        let r = |shape: &[usize], seed| randn(shape, seed).to_dtype(dtype);
        let cases: Vec<(&str, Tensor, Tensor)> = vec![
            ("row-major", r(&[5, 7], 1)?, r(&[7, 3], 2)?),
            ("linear weight (b transposed)", r(&[4, 9], 3)?, r(&[6, 9], 4)?.t()?),
            ("one row, transposed weight (gemv)", r(&[1, 64], 5)?, r(&[40, 64], 6)?.t()?),
            ("a transposed", r(&[7, 5], 7)?.t()?, r(&[7, 3], 8)?),
            ("both transposed", r(&[7, 5], 9)?.t()?, r(&[3, 7], 10)?.t()?),
            ("batched", r(&[2, 3, 4, 6], 11)?, r(&[2, 3, 6, 5], 12)?),
            ("batched, b transposed", r(&[3, 4, 6], 13)?, r(&[3, 5, 6], 14)?.transpose(1, 2)?),
            (
                "batched single rows (decode's q·kᵀ)",
                r(&[2, 3, 1, 64], 26)?,
                r(&[2, 3, 40, 64], 27)?.transpose(2, 3)?,
            ),
            (
                "attention heads (permuted slices of one packed projection)",
                r(&[2, 5, 3, 2, 8], 28)?.permute([2, 0, 3, 1, 4])?.select(0, 0)?,
                r(&[2, 5, 3, 2, 8], 29)?.permute([2, 0, 3, 1, 4])?.select(0, 1)?.transpose(2, 3)?,
            ),
            ("rows of a narrowed view", r(&[4, 9, 6], 30)?.narrow(1, 2, 5)?, r(&[6, 3], 31)?),
            ("stepped columns", r(&[5, 14], 32)?.slice(1, 1.., 2)?, r(&[7, 4], 33)?),
            ("a broadcast batch", r(&[3, 4], 34)?.expand([2, 3, 4])?, r(&[2, 4, 5], 35)?),
            ("empty k", r(&[3, 0], 15)?, r(&[0, 4], 16)?),
            ("empty m", r(&[0, 5], 17)?, r(&[5, 4], 18)?),
        ];
        for (what, a, b) in &cases {
            let (eager, fused) = check(&format!("{dtype:?} {what}"), a, b)?;
            // XLA folds a product with no elements (or an empty sum) into a constant.
            if !host {
                assert_eq!((eager, fused), (0, 0), "{dtype:?} {what}: a host kernel ran while turned off");
            } else if a.numel() * b.numel() > 0 {
                assert!(eager >= 1, "{dtype:?} {what}: the eager product did not call the host kernel");
                assert!(fused >= 1, "{dtype:?} {what}: the fused product did not call the host kernel");
            }
        }
    }
    // Integer products keep XLA's own `dot_general`.
    let a = randn(&[3, 4], 19).mul(4.0)?.to_dtype(DType::I64)?;
    let b = randn(&[4, 2], 20).mul(4.0)?.to_dtype(DType::I64)?;
    assert_eq!(check("i64", &a, &b)?, (0, 0), "an integer product called the f32/f64 kernel");
    Ok(())
}

/// The environment variable that makes a test binary run `child_without_host_kernels`.
const CHILD: &str = "OXTORCH_TEST_HOST_KERNELS_CHILD";

/// Programs for a TPU or a GPU keep `dot_general`; on this machine its lowering runs only in a
/// process with the host kernels turned off, so every operand form runs again in one.
#[test]
fn dot_general_matches_the_cpu_without_host_kernels() {
    if xla().is_none() || std::env::var_os(CHILD).is_some() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_without_host_kernels", "--test-threads", "1", "--nocapture"])
        .env(CHILD, "1")
        .env("OXTORCH_XLA_HOST_KERNELS", "0")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 passed"), "the child ran no test:\n{stdout}");
}

/// Run only as the child of `dot_general_matches_the_cpu_without_host_kernels`.
#[test]
fn child_without_host_kernels() -> Result<()> {
    if std::env::var_os(CHILD).is_none() || xla().is_none() {
        return Ok(());
    }
    assert!(!host_kernels_on());
    every_operand_form(false)?;
    cross_entropy_cases(false)
}

#[test]
fn cross_entropy_forward_calls_the_host_kernel() -> Result<()> {
    if xla().is_none() {
        return Ok(());
    }
    let _serial = serial();
    cross_entropy_cases(host_kernels_on())
}

/// Cross-entropy losses (every reduction, ignored rows, a non-default `ignore_index`) and their
/// logits' gradients, eager and fused, against the cpu; `host` says whether each forward must
/// call the host kernel or must not.
fn cross_entropy_cases(host: bool) -> Result<()> {
    let dev = xla().expect("checked by the caller");
    for dtype in [DType::F32, DType::F64] {
        let logits = randn(&[7, 11], 31).mul(4.0)?.to_dtype(dtype)?;
        for (ignore, reduction) in [(-100, "mean"), (-100, "sum"), (3, "none"), (3, "mean")] {
            let what = format!("{dtype:?} cross_entropy ignore {ignore} {reduction}");
            // Two rows ignored (and, with ignore_index 3, two more).
            let t: Vec<i64> =
                [3i64, 0, -1, 10, 3, 5, -1].iter().map(|&v| if v < 0 { ignore } else { v }).collect();
            let target = Tensor::from_vec(t, [7])?;
            let run = |x: &Tensor, t: &Tensor| -> Result<(Tensor, Tensor)> {
                let x = x.detach().requires_grad_(true)?;
                let loss = x.cross_entropy(t, None, ignore, reduction, 0.0)?;
                loss.sum_all()?.backward()?;
                Ok((loss.detach(), x.grad().expect("logits.grad")))
            };
            let (want, want_grad) = run(&logits, &target)?;
            let (xl, xt) = (logits.to(dev)?, target.to(dev)?);
            for mode in [Mode::Eager, Mode::Fused] {
                let before = metrics().host_kernel_calls;
                let (got, got_grad) = with_mode(mode, || run(&xl, &xt))?;
                assert_same(&format!("{what} {mode:?}"), &want, &got);
                assert_same(&format!("{what} {mode:?} grad"), &want_grad, &got_grad);
                let calls = metrics().host_kernel_calls - before;
                assert_eq!(calls > 0, host, "{what} {mode:?}: {calls} host kernel calls");
            }
        }
        // A language model's loss: logits `[B, T, C]` narrowed to the predicting positions and
        // flattened (a copy the fused kernel reads through), and rows with a stride of their own.
        let lm = randn(&[2, 5, 11], 32).mul(3.0)?.to_dtype(dtype)?;
        let wide = randn(&[6, 13], 33).mul(3.0)?.to_dtype(dtype)?;
        let t8 = Tensor::from_vec(vec![1i64, 10, 0, 4, -100, 7, 2, 9], [8])?;
        let t6 = Tensor::from_vec(vec![3i64, 0, 10, -100, 5, 8], [6])?;
        type Rows = fn(&Tensor) -> Result<Tensor>;
        let views: [(&str, &Tensor, &Tensor, Rows); 2] = [
            ("narrowed and flattened [2, 5, 11]", &lm, &t8, |x| x.narrow(1, 0, 4)?.reshape([8, 11])),
            ("rows of a [6, 13] narrowed to 11 classes", &wide, &t6, |x| x.narrow(1, 1, 11)),
        ];
        for (what, logits, target, rows) in views {
            let run = |x: &Tensor, t: &Tensor| -> Result<(Tensor, Tensor)> {
                let x = x.detach().requires_grad_(true)?;
                let loss = rows(&x)?.cross_entropy(t, None, -100, "mean", 0.0)?;
                loss.backward()?;
                Ok((loss.detach(), x.grad().expect("logits.grad")))
            };
            let (want, want_grad) = run(logits, target)?;
            let (xl, xt) = (logits.to(dev)?, target.to(dev)?);
            for mode in [Mode::Eager, Mode::Fused] {
                let before = metrics().host_kernel_calls;
                let (got, got_grad) = with_mode(mode, || run(&xl, &xt))?;
                assert_same(&format!("{dtype:?} {what} {mode:?}"), &want, &got);
                assert_same(&format!("{dtype:?} {what} {mode:?} grad"), &want_grad, &got_grad);
                let calls = metrics().host_kernel_calls - before;
                assert_eq!(calls > 0, host, "{dtype:?} {what} {mode:?}: {calls} host kernel calls");
            }
        }
    }
    Ok(())
}

#[test]
fn gradients_through_host_products_match_the_cpu() -> Result<()> {
    let Some(dev) = xla() else { return Ok(()) };
    let _serial = serial();
    for dtype in [DType::F32, DType::F64] {
        let x = randn(&[6, 10], 21).to_dtype(dtype)?;
        let w = randn(&[8, 10], 22).to_dtype(dtype)?;
        let grads = |x: Tensor, w: Tensor| -> Result<(Tensor, Tensor, Tensor)> {
            let (x, w) = (x.detach().requires_grad_(true)?, w.detach().requires_grad_(true)?);
            // `linear` without bias, then a product with a transposed left operand.
            let h = x.matmul(&w.t()?)?.tanh()?;
            let y = h.t()?.matmul(&h)?.sum_all()?;
            y.backward()?;
            Ok((y.detach(), x.grad().expect("x.grad"), w.grad().expect("w.grad")))
        };
        let (yc, gxc, gwc) = grads(x.clone(), w.clone())?;
        let before = metrics().host_kernel_calls;
        let (yx, gxx, gwx) = grads(x.to(dev)?, w.to(dev)?)?;
        assert_same(&format!("{dtype:?} loss"), &yc, &yx);
        assert_same(&format!("{dtype:?} x.grad"), &gxc, &gxx);
        assert_same(&format!("{dtype:?} w.grad"), &gwc, &gwx);
        assert!(
            metrics().host_kernel_calls >= before + 6,
            "the backward products did not call the host kernel"
        );
    }
    Ok(())
}

/// Uploads of at least 1 MiB live in host blocks the CPU plugin views (`xla/host_block.rs`): a
/// parameter updated in place by fused steps (its block donated to each step's program and
/// written over), read back, with another large upload on the way, keeps the cpu's values; and
/// every block is freed once its tensors are gone.
#[test]
fn large_uploads_survive_donation_and_release() -> Result<()> {
    let Some(dev) = xla() else { return Ok(()) };
    let _serial = serial();
    let blocks = || metrics().host_block_bytes;
    let start = blocks();
    let w_cpu = randn(&[512, 1024], 23); // 2 MiB of f32
    let x_cpu = randn(&[4, 1024], 24);
    let mut w = w_cpu.to(dev)?;
    assert!(blocks() >= start + (2 << 20), "a 2 MiB upload did not go into a host block");
    let x = x_cpu.to(dev)?;
    let mut want = w_cpu.clone();
    let donated = metrics().donated_buffers;
    let step = |w: &Tensor, x: &Tensor| -> Result<Tensor> {
        let g = x.matmul(&w.t()?)?.t()?.matmul(x)?;
        w.sub(&g.mul(1e-3)?)
    };
    for i in 0..4 {
        want = step(&want, &x_cpu)?;
        w = with_mode(Mode::Fused, || step(&w, &x))?;
        oxtorch_backend_tpu::xla::sync()?;
        if i == 1 {
            let other = randn(&[600, 600], 25);
            assert_same("second upload", &other, &other.to(dev)?.neg()?.neg()?);
        }
    }
    assert_same("after 4 in-place steps", &want, &w);
    assert!(metrics().donated_buffers > donated, "no step wrote over its parameter");
    drop(w);
    drop(x);
    // Buffers are released after their last program has run (on the releasing thread).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while blocks() > start && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(blocks(), start, "host blocks outlived their tensors");
    Ok(())
}
