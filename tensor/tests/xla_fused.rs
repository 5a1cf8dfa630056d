//! Fused (deferred) mode on the XLA runtime: what becomes a program output, sync points, the
//! graph bound, control flow that changes the graph (and the log line that explains the
//! recompile), host fallbacks inside a deferred graph, and threads. Op-by-op results in fused
//! mode are covered by `xla_parity.rs`, which runs every case in both modes.

mod xla_common;

use oxtorch_backend_tpu::xla::{self, metrics, with_mode, Mode};
use oxtorch_tensor::{DType, Result, Tensor};
use xla_common::{assert_same, randn, serial, xla};

fn fused_runs() -> u64 {
    metrics().fused_runs
}

#[test]
fn held_intermediates_come_out_of_the_same_program() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let a_cpu = randn(&[5, 7], 1);
    let a = a_cpu.to(dev)?;
    let (h, out) = with_mode(Mode::Fused, || -> Result<_> {
        let h = a.exp()?.add(1.0)?;
        let dropped = h.mul(&h)?.tanh()?;
        Ok((h.clone(), dropped.sum([1], false)?.relu()?))
    })?;
    // Nothing ran yet: recording is not running.
    let before = fused_runs();
    assert_same(
        "out",
        &a_cpu.exp()?.add(1.0)?.mul(&a_cpu.exp()?.add(1.0)?)?.tanh()?.sum([1], false)?.relu()?,
        &out,
    );
    assert_eq!(fused_runs(), before + 1, "reading the output ran one program");
    // `h` is still held, so it was an output of that program: reading it runs nothing.
    assert_same("h", &a_cpu.exp()?.add(1.0)?, &h);
    assert_eq!(fused_runs(), before + 1, "reading a held intermediate ran another program");
    Ok(())
}

#[test]
fn sync_computes_everything_pending_and_repeats_from_the_cache() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let x_cpu = randn(&[8, 8], 2);
    let x = x_cpu.to(dev)?;
    let step = |x: &Tensor| -> Result<Tensor> { x.matmul(x)?.softmax(-1, None)?.mul(0.5) };
    let mut built = Vec::new();
    let mut y = x.clone();
    let mut y_cpu = x_cpu.clone();
    for _ in 0..4 {
        let m = metrics();
        y = with_mode(Mode::Fused, || step(&y))?;
        xla::sync()?;
        built.push(metrics().new_programs() - m.new_programs());
        assert_eq!(metrics().fused_runs, m.fused_runs + 1, "sync ran one program");
        y_cpu = step(&y_cpu)?;
    }
    assert_same("after 4 steps", &y_cpu, &y);
    // The first graph reads `x`, which stays alive; from the second on, the previous `y` is
    // dropped before the sync, so its buffer is donated (another program, once).
    assert!(built[2..].iter().all(|&n| n == 0), "the repeated graph compiled again: {built:?}");
    assert!(metrics().donated_buffers > 0, "no buffer was donated");
    // Nothing pending: sync runs nothing.
    let before = fused_runs();
    xla::sync()?;
    assert_eq!(fused_runs(), before);
    Ok(())
}

#[test]
fn control_flow_records_another_graph_never_a_stale_program() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let x_cpu = randn(&[6], 3);
    let x = x_cpu.to(dev)?;
    let f = |x: &Tensor, branch: bool| -> Result<Tensor> {
        let y = x.mul(2.0)?;
        if branch {
            y.exp()
        } else {
            y.sin()
        }
    };
    for branch in [true, false, true, false] {
        let out = xla::compile(|| f(&x, branch))??;
        assert_same(&format!("branch {branch}"), &f(&x_cpu, branch)?, &out);
    }
    Ok(())
}

#[test]
fn host_fallbacks_and_data_dependent_shapes_inside_a_fused_graph() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let x_cpu = Tensor::from_vec(vec![3.0f32, -1.0, 0.0, 2.0, -5.0, 0.0], [6])?;
    let x = x_cpu.to(dev)?;
    let f = |x: &Tensor| -> Result<Vec<Tensor>> {
        let y = x.mul(3.0)?.sub(1.0)?;
        let (vals, idx) = y.topk(3, 0, true, true)?;
        let nz = y.add(1.0)?.nonzero()?;
        Ok(vec![vals.add(&idx.to_dtype(DType::F32)?)?, nz.mul(2)?])
    };
    let expected = f(&x_cpu)?;
    let got = with_mode(Mode::Fused, || f(&x))?;
    for (i, (e, g)) in expected.iter().zip(&got).enumerate() {
        assert_same(&format!("out {i}"), e, g);
    }
    Ok(())
}

#[test]
fn threads_defer_independently() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let handles: Vec<_> = (0..4u64)
        .map(|i| {
            std::thread::spawn(move || -> Result<()> {
                let x_cpu = randn(&[16, 16], 10 + i);
                let x = x_cpu.to(dev)?;
                let out = with_mode(Mode::Fused, || -> Result<Tensor> {
                    let mut y = x.clone();
                    for _ in 0..5 {
                        y = y.matmul(&x)?.tanh()?;
                    }
                    Ok(y)
                })?;
                let mut y = x_cpu.clone();
                for _ in 0..5 {
                    y = y.matmul(&x_cpu)?.tanh()?;
                }
                assert_same(&format!("thread {i}"), &y, &out);
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().expect("thread panicked")?;
    }
    Ok(())
}

const CHILD: &str = "OXTORCH_XLA_FUSED_CHILD";

/// Run as a child process: a chain of 50 ops in fused mode, and two graphs that differ in one op.
///
/// Never inlined: in an optimised build the test harness would otherwise absorb this frame, and the
/// compile log could not name it.
#[test]
#[inline(never)]
fn child_long_chain_and_branches() -> Result<()> {
    if std::env::var_os(CHILD).is_none() {
        return Ok(());
    }
    let Some(dev) = xla() else { return Ok(()) };
    let x_cpu = randn(&[4], 4);
    let x = x_cpu.to(dev)?;
    let before = fused_runs();
    let out = with_mode(Mode::Fused, || -> Result<Tensor> {
        let mut y = x.clone();
        for _ in 0..50 {
            y = y.mul(0.9)?.add(0.1)?;
        }
        Ok(y)
    })?;
    let mut y = x_cpu.clone();
    for _ in 0..50 {
        y = y.mul(0.9)?.add(0.1)?;
    }
    assert_same("chain", &y, &out);
    println!("FUSED_RUNS {}", fused_runs() - before);
    xla::compile(|| x.mul(2.0)?.exp())??.to_vec::<f32>()?;
    xla::compile(|| x.mul(2.0)?.sin())??.to_vec::<f32>()?;
    Ok(())
}

#[test]
fn graph_bound_and_recompile_reasons() {
    if xla().is_none() || std::env::var_os(CHILD).is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("oxtorch-fused-test-{}", std::process::id()));
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_long_chain_and_branches", "--test-threads", "1", "--nocapture"])
        .env(CHILD, "1")
        .env("OXTORCH_XLA_FUSE_LIMIT", "16")
        .env("OXTORCH_LOG_COMPILES", "1")
        .env("OXTORCH_XLA_CACHE_DIR", &dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // 100 recorded ops with a bound of 16: the chain ran in several programs, same result.
    let runs: u64 = stdout
        .lines()
        .find_map(|l| l.split("FUSED_RUNS ").nth(1))
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no FUSED_RUNS line:\n{stdout}"));
    assert!(runs >= 6, "the graph bound did not cut the chain: {runs} programs");
    // The branch that differs compiles again, and the log says which op differs and where.
    assert!(
        stderr.contains("differs from the previous fused graph's") && stderr.contains("Unary(Sin)"),
        "no recompile reason naming the differing op:\n{stderr}"
    );
    // The caller is this test: by file with line tables, by function name without debug info.
    assert!(
        stderr.contains("xla_fused.rs") || stderr.contains("at xla_fused::child_long_chain_and_branches"),
        "the log does not name the caller:\n{stderr}"
    );
}

#[test]
fn in_place_updates_across_steps_donate_and_stay_right() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let p_cpu = randn(&[64], 20);
    let m_cpu = Tensor::zeros([64], ())?;
    let (p, m) = (p_cpu.to(dev)?, m_cpu.to(dev)?);
    let step = |p: &Tensor, m: &Tensor| -> Result<()> {
        let g = p.mul(2.0)?.sin()?;
        m.mul_(0.9)?.add_(&g)?;
        p.sub_(&m.mul(0.1)?)?;
        Ok(())
    };
    for i in 0..6 {
        xla::compile(|| step(&p, &m))??;
        step(&p_cpu, &m_cpu)?;
        assert_same(&format!("p after step {i}"), &p_cpu, &p);
        assert_same(&format!("m after step {i}"), &m_cpu, &m);
    }
    Ok(())
}

const ADAM_CHILD: &str = "OXTORCH_XLA_ADAM_CHILD";

/// Run as a child process with `OXTORCH_DUMP_HLO`: one fused step of Adam's second moment and
/// parameter update, the gradient coming from a matmul, checked against the cpu.
#[test]
fn child_adam_update() -> Result<()> {
    if std::env::var_os(ADAM_CHILD).is_none() {
        return Ok(());
    }
    let Some(dev) = xla() else { return Ok(()) };
    let (a_cpu, b_cpu, p_cpu) = (randn(&[16, 4], 30), randn(&[4, 32], 31), randn(&[16, 32], 32));
    let v_cpu = randn(&[16, 32], 33).abs()?;
    let (a, b, p, v) = (a_cpu.to(dev)?, b_cpu.to(dev)?, p_cpu.to(dev)?, v_cpu.to(dev)?);
    let step = |a: &Tensor, b: &Tensor, p: &Tensor, v: &Tensor| -> Result<()> {
        let g = a.matmul(b)?;
        v.mul_(0.999)?.add_(&g.mul(&g)?.mul(0.001)?)?;
        p.sub_(&g.div(&v.sqrt()?.div(0.5)?.add(1e-8)?)?.mul(0.01)?)?;
        Ok(())
    };
    xla::compile(|| step(&a, &b, &p, &v))??;
    step(&a_cpu, &b_cpu, &p_cpu, &v_cpu)?;
    assert_same("p", &p_cpu, &p);
    assert_same("v", &v_cpu, &v);
    Ok(())
}

/// An optimizer's elementwise update, scalar operands included, runs on the flat buffers: the
/// fused program reshapes only around the matmul. A reshape between a donated state and its new
/// value made XLA recompute the update inside the parameter's and copy the state (3 extra copies
/// in the MLP training step).
#[test]
fn an_optimizer_update_runs_on_flat_buffers() {
    if xla().is_none() || std::env::var_os(ADAM_CHILD).is_some() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("oxtorch-adam-dump-{}", std::process::id()));
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_adam_update", "--test-threads", "1", "--nocapture"])
        .env(ADAM_CHILD, "1")
        .env("OXTORCH_DUMP_HLO", dir.join("dump"))
        .env("OXTORCH_XLA_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap();
    let programs: Vec<String> = std::fs::read_dir(dir.join("dump"))
        .map(|d| d.filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok()).collect())
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The product is XLA's `dot_general`, or a call to oxtorch's host kernel on the CPU plugin.
    let step: Vec<&String> = programs
        .iter()
        .filter(|p| p.contains("stablehlo.dot_general") || p.contains("oxtorch_matmul_"))
        .collect();
    assert_eq!(step.len(), 1, "one fused program holds the matmul: {programs:#?}");
    // The matmul's result, and its two operands for `dot_general` (the host kernel reads the
    // flat buffers as they are). A scalar operand's 1-element buffer is read as a 0-d value: not
    // a reshape of a block.
    let reshapes =
        step[0].lines().filter(|l| l.contains("stablehlo.reshape") && !l.contains("(tensor<1xf32>)")).count();
    let expected = if step[0].contains("oxtorch_matmul_") { 1 } else { 3 };
    assert_eq!(reshapes, expected, "reshapes outside the matmul:\n{}", step[0]);
}

#[test]
fn a_long_pending_chain_dropped_unread_is_freed_without_recursion() -> Result<()> {
    let Some(dev) = xla() else { return Ok(()) };
    let _serial = serial();
    let x = Tensor::ones([2], dev)?;
    // Below the graph bound (20,000 nodes by default; each add records its scalar too), so
    // nothing syncs: 8,000 nested pending adds, dropped unread on a small thread stack.
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || -> Result<()> {
            // Without the repetition detector, which would run the chain every few dozen ops.
            let was = xla::set_repeat_detection(false);
            let y = with_mode(Mode::Fused, || -> Result<Tensor> {
                let mut y = x.clone();
                for _ in 0..8_000 {
                    y = y.add(1.0)?;
                }
                Ok(y)
            })?;
            drop(y);
            xla::set_repeat_detection(was);
            Ok(())
        })
        .expect("spawn")
        .join()
        .expect("dropping a long pending chain overflowed the stack")?;
    Ok(())
}

#[test]
fn a_loop_that_never_syncs_runs_one_cached_program_per_repeating_block() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let (x_cpu, w_cpu) = (randn(&[6, 6], 30), randn(&[6, 6], 31).mul(0.3)?);
    let (x, w) = (x_cpu.to(dev)?, w_cpu.to(dev)?);
    // A few ops per iteration, never read: the detector finds the period (the shortest multiple
    // of the body of at least 32 ops) and syncs at the same place of every block.
    let body = |y: &Tensor, w: &Tensor, x: &Tensor| -> Result<Tensor> {
        y.matmul(w)?.tanh()?.mul(0.5)?.add(x)?.sigmoid()
    };
    xla::sync()?;
    let m = metrics();
    let out = with_mode(Mode::Fused, || -> Result<Tensor> {
        let mut y = x.clone();
        for _ in 0..60 {
            y = body(&y, &w, &x)?;
        }
        Ok(y)
    })?;
    let runs_while_recording = fused_runs() - m.fused_runs;
    let mut y = x_cpu.clone();
    for _ in 0..60 {
        y = body(&y, &w_cpu, &x_cpu)?;
    }
    assert_same("loop", &y, &out);
    // One program of two blocks, then one per block, all but the first of the same text; the
    // remainder runs when `out` is read.
    let period = xla::detected_period().expect("no repeating block was found");
    assert!((32..64).contains(&period), "period {period}");
    // b >= 5 ops per iteration and a period p < 32 + b: 60 b / p - 1 >= 7 programs.
    assert!(runs_while_recording >= 7, "{runs_while_recording} programs while recording");
    let built = metrics().new_programs() - m.new_programs();
    assert!(built <= 3, "the repeated block compiled {built} programs");
    Ok(())
}

#[test]
fn a_step_boundary_runs_what_this_thread_recorded_not_other_threads_work() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let (a_cpu, b_cpu) = (randn(&[5], 40), randn(&[5], 41));
    let (a, b) = (a_cpu.to(dev)?, b_cpu.to(dev)?);
    // Another thread (a data loader's, say) records work and hands it over unread.
    let other = std::thread::spawn(move || with_mode(Mode::Fused, || b.exp()?.mul(2.0)))
        .join()
        .expect("thread panicked")?;
    let y = with_mode(Mode::Fused, || -> Result<Tensor> {
        let y = a.sin()?.add(1.0)?;
        xla::step_boundary()?;
        Ok(y)
    })?;
    // The boundary ran this thread's ops; reading them runs nothing more.
    let runs = fused_runs();
    assert_same("this thread's step", &a_cpu.sin()?.add(1.0)?, &y);
    assert_eq!(fused_runs(), runs, "the step's own result was not computed at the boundary");
    // The other thread's work was left for its reader.
    assert_same("the other thread's work", &b_cpu.exp()?.mul(2.0)?, &other);
    assert_eq!(fused_runs(), runs + 1, "the boundary ran another thread's pending ops");
    Ok(())
}

#[test]
fn a_window_at_offset_zero_runs_the_program_of_the_same_window_further_on() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let rows_cpu = randn(&[10, 4], 50);
    let rows = rows_cpu.to(dev)?;
    // A batch stacked from rows, row 0 at a different place each time (a Dataset's default
    // `get_batch`), fused; and one window, eager, at the start and further on.
    let batch = |order: &[isize], x: &Tensor| -> Result<Tensor> {
        let parts: Vec<Tensor> = order.iter().map(|&i| x.select(0, i)).collect::<Result<_>>()?;
        Tensor::stack(&parts.iter().collect::<Vec<_>>(), 0)?.mul(2.0)
    };
    let mut built = Vec::new();
    for order in [[3, 0, 7], [0, 3, 7], [7, 3, 0], [5, 6, 7]] {
        let before = metrics().new_programs();
        let got = with_mode(Mode::Fused, || batch(&order, &rows))?;
        assert_same(&format!("batch {order:?}"), &batch(&order, &rows_cpu)?, &got);
        built.push(metrics().new_programs() - before);
    }
    assert!(built[1..].iter().all(|&n| n == 0), "row 0's place compiled again: {built:?}");
    let mut eager = Vec::new();
    for start in [0, 4, 0, 6] {
        let before = metrics().new_programs();
        let got = rows.narrow(0, start, 3)?.exp()?;
        assert_same(&format!("window at {start}"), &rows_cpu.narrow(0, start, 3)?.exp()?, &got);
        eager.push(metrics().new_programs() - before);
    }
    assert!(eager[1..].iter().all(|&n| n == 0), "a window's offset compiled again: {eager:?}");
    Ok(())
}

/// A graph seen before runs its program by signature, without its text: a storage offset and a
/// scalar are runtime arguments, so a window moving along a tensor reuses one program; views of
/// the same sizes with other strides, or another scalar dtype, are other programs.
#[test]
fn a_repeated_graph_runs_by_signature_and_other_views_are_other_programs() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let base_cpu = randn(&[6, 4], 3);
    let base = base_cpu.to(dev)?;
    let mut built = Vec::new();
    for k in 0..4 {
        let m = metrics();
        let scale = k as f64 + 0.5;
        let y = with_mode(Mode::Fused, || base.narrow(0, k, 2)?.mul(scale)?.exp())?;
        assert_same(&format!("window {k}"), &base_cpu.narrow(0, k, 2)?.mul(scale)?.exp()?, &y);
        built.push(metrics().new_programs() - m.new_programs());
    }
    assert!(built[1..].iter().all(|&n| n == 0), "a moved window built a program: {built:?}");
    // Same sizes [4, 4], other strides: a transposed view is another program and another answer.
    let sq_cpu = randn(&[4, 4], 4);
    let sq = sq_cpu.to(dev)?;
    let straight = with_mode(Mode::Fused, || sq.mul(2.0)?.exp())?;
    assert_same("straight", &sq_cpu.mul(2.0)?.exp()?, &straight);
    let m = metrics();
    let turned = with_mode(Mode::Fused, || sq.t()?.mul(2.0)?.exp())?;
    assert_same("transposed", &sq_cpu.t()?.mul(2.0)?.exp()?, &turned);
    assert_eq!(metrics().new_programs(), m.new_programs() + 1, "the transposed view reused a program");
    // Another input dtype with the same sizes and ops: another program.
    let ints_cpu = sq_cpu.mul(10.0)?.to_dtype(DType::I64)?;
    let ints = ints_cpu.to(dev)?;
    let m = metrics();
    let doubled = with_mode(Mode::Fused, || ints.mul(2)?.add(1))?;
    assert_same("i64", &ints_cpu.mul(2)?.add(1)?, &doubled);
    assert_eq!(metrics().new_programs(), m.new_programs() + 1, "the i64 graph reused a program");
    Ok(())
}

/// The scalars a fused program takes as arguments are uploaded once per value: the same step
/// again uploads nothing, and a step with another value computes with that value, never a stale
/// buffer of the earlier one.
#[test]
fn scalar_arguments_are_uploaded_once_per_value() -> Result<()> {
    let _serial = serial();
    let Some(dev) = xla() else { return Ok(()) };
    let x_cpu = randn(&[4, 6], 3);
    let x = x_cpu.to(dev)?;
    let step = |scale: f64, shift: f64| -> Result<Tensor> {
        let out = with_mode(Mode::Fused, || -> Result<_> { x.mul(scale)?.add(shift)?.tanh() })?;
        xla::sync()?;
        Ok(out)
    };
    let uploads = || metrics().transfers_to_device;
    // Values no other test uses, so that the first step uploads them.
    let first = uploads();
    let a = step(1.8125, -0.4375)?;
    assert!(uploads() > first, "the first step uploaded its scalars");
    let again = uploads();
    let b = step(1.8125, -0.4375)?;
    assert_eq!(uploads(), again, "the same scalars again were uploaded again");
    let c = step(-0.6875, 0.3125)?;
    let want = |s: f64, t: f64| x_cpu.mul(s)?.add(t)?.tanh();
    assert_same("first", &want(1.8125, -0.4375)?, &a);
    assert_same("again", &want(1.8125, -0.4375)?, &b);
    assert_same("other values", &want(-0.6875, 0.3125)?, &c);
    Ok(())
}
