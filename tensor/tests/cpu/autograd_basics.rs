//! Autograd semantics: leaves, accumulation, grad_fn names, retain_grad, hooks, no_grad, in-place
//! checks, views, higher order.

use oxtorch_tensor::autograd::{self, no_grad};
use oxtorch_tensor::{tensor, DType, Result, Tensor};

fn leaf(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape.to_vec()).unwrap().requires_grad_(true).unwrap()
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_f64_vec().unwrap()
}

/// The nodes of reductions and composites carry torch's names (from torch 2.15's `grad_fn.name()`
/// for the same calls on a `[3, 4]` float leaf).
#[test]
fn reduction_nodes_have_torch_names() -> Result<()> {
    let x = Tensor::randn([3, 4], ())?.requires_grad_(true)?;
    let name = |t: Tensor| t.grad_fn().unwrap().name().to_string();
    let cases: Vec<(&str, Tensor)> = vec![
        ("SumBackward0", x.sum_all()?),
        ("SumBackward1", x.sum(0, false)?),
        ("SumBackward1", x.sum([0, 1], false)?),
        ("MeanBackward0", x.mean_all()?),
        ("MeanBackward1", x.mean(1, false)?),
        ("MeanBackward0", x.to_dtype(DType::F16)?.mean_all()?),
        ("ProdBackward0", x.prod_all()?),
        ("ProdBackward1", x.prod(0, false)?),
        ("MaxBackward1", x.max()?),
        ("MaxBackward0", x.max_dim(0, false)?.0),
        ("MinBackward1", x.min()?),
        ("AmaxBackward0", x.amax(0, false)?),
        ("AminBackward0", x.amin(0, false)?),
        ("StdBackward0", x.std(Vec::<isize>::new(), 1.0, false)?),
        ("VarBackward0", x.var(0, 1.0, false)?),
        ("LogsumexpBackward0", x.logsumexp(0, false)?),
        ("LinalgVectorNormBackward0", x.norm(2.0, Vec::<isize>::new(), false)?),
        ("CumsumBackward0", x.cumsum(0, None)?),
        ("SoftmaxBackward0", x.softmax(0, None)?),
        ("LogSoftmaxBackward0", x.log_softmax(0, None)?),
        ("MedianBackward0", x.median_all()?),
    ];
    let got: Vec<(&str, String)> = cases.into_iter().map(|(w, t)| (w, name(t))).collect();
    let wrong: Vec<_> = got.iter().filter(|(w, g)| w != g).collect();
    assert!(wrong.is_empty(), "(torch, ours): {wrong:?}");
    // A reduction that returns its input unchanged keeps the input's node name.
    let e = x.exp()?;
    assert_eq!(e.sum(Vec::<isize>::new(), false)?.grad_fn().unwrap().name(), "SumBackward0");
    assert_eq!(e.grad_fn().unwrap().name(), "ExpBackward0");
    Ok(())
}

#[test]
fn mul_add_backward_and_accumulation() -> Result<()> {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let w = leaf(&[0.5, -1.0, 2.0], &[3]);
    let y = x.mul(&w)?.add(1.0)?.sum_all()?;
    assert_eq!(y.grad_fn().unwrap().name(), "SumBackward0");
    assert!(!y.is_leaf() && x.is_leaf());
    y.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![0.5, -1.0, 2.0]);
    assert_eq!(vals(&w.grad().unwrap()), vec![1.0, 2.0, 3.0]);
    // A second graph accumulates.
    x.mul(2.0)?.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.5, 1.0, 4.0]);
    Ok(())
}

#[test]
fn broadcasting_views_and_matmul() -> Result<()> {
    let a = leaf(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let b = leaf(&[1.0, 0.0, -1.0], &[3]);
    let y = a.add(&b)?.t()?.matmul(&a)?.sum_all()?;
    y.backward()?;
    // d/da sum((a+b)^T a) = a_sum_cols... checked against torch by hand:
    // y = sum_ij (a+b)^T_ki a_kj = sum_k (sum_i (a+b)_ki)(sum_j a_kj)
    let ga = vals(&a.grad().unwrap());
    // row k: grad = rowsum(a_k) + rowsum((a+b)_k)
    assert_eq!(ga, vec![12.0, 12.0, 12.0, 30.0, 30.0, 30.0]);
    assert_eq!(vals(&b.grad().unwrap()), vec![21.0, 21.0, 21.0]);
    Ok(())
}

#[test]
fn no_grad_and_detach_stop_recording() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = no_grad(|| x.mul(2.0))?;
    assert!(!y.requires_grad());
    let z = x.detach().mul(2.0)?;
    assert!(!z.requires_grad());
    assert!(x.mul(2.0)?.requires_grad());
    Ok(())
}

#[test]
fn second_backward_fails_without_retain_graph() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.exp()?.sum_all()?;
    y.backward_with(None, true, false)?;
    y.backward()?;
    let e = y.backward().unwrap_err().to_string();
    assert!(e.contains("backward through the graph a second time"), "{e}");
    // Nodes that saved nothing (add, sum) can run again, as in torch.
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.add(1.0)?.sum_all()?;
    y.backward()?;
    y.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0]);
    Ok(())
}

#[test]
fn retain_grad_and_hooks() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let h = x.mul(3.0)?;
    h.retain_grad()?;
    let _handle = h.register_hook(|g| Some(g.mul(10.0).unwrap()))?;
    h.square()?.sum_all()?.backward()?;
    // dL/dh = 2h = [6, 12]; the hook scales the flowing gradient by 10.
    assert_eq!(vals(&h.grad().unwrap()), vec![60.0, 120.0]);
    assert_eq!(vals(&x.grad().unwrap()), vec![180.0, 360.0]);
    Ok(())
}

#[test]
fn inplace_checks() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let e = x.add_(1.0).unwrap_err().to_string();
    assert!(e.contains("a leaf Variable that requires grad"), "{e}");
    no_grad(|| x.add_(1.0).map(|_| ()))?;
    assert_eq!(vals(&x), vec![2.0, 3.0]);
    let y = x.exp()?;
    let z = y.sum_all()?;
    y.mul_(2.0)?;
    let e = z.backward().unwrap_err().to_string();
    assert!(e.contains("modified by an inplace operation"), "{e}");
    Ok(())
}

#[test]
fn inplace_on_non_leaf_and_views() -> Result<()> {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let a = x.mul(2.0)?;
    a.narrow(0, 0, 2)?.mul_(3.0)?;
    a.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![6.0, 6.0, 2.0]);
    // Writing slices of a buffer that does not require grad.
    let x = leaf(&[1.0, 2.0], &[2]);
    let buf = Tensor::zeros([2, 2], DType::F64)?;
    buf.select(0, 1)?.copy_(&x.mul(5.0)?)?;
    assert!(buf.requires_grad());
    buf.mul(&buf)?.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![50.0, 100.0]);
    Ok(())
}

#[test]
fn higher_order() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let y = x.pow(3.0)?.sum_all()?;
    let g = autograd::grad(&[y], std::slice::from_ref(&x), None, true, true, false)?;
    let g = g[0].clone().unwrap();
    assert_eq!(vals(&g), vec![3.0, 12.0]);
    let gg = autograd::grad(&[g.sum_all()?], std::slice::from_ref(&x), None, false, false, false)?;
    assert_eq!(vals(gg[0].as_ref().unwrap()), vec![6.0, 12.0]);
    // Through an op that saves its output (exp): d2/dx2 exp(x) = exp(x).
    let x = leaf(&[0.0, 1.0], &[2]);
    let g = autograd::grad(&[x.exp()?.sum_all()?], std::slice::from_ref(&x), None, true, true, false)?[0]
        .clone()
        .unwrap();
    let gg = autograd::grad(&[g.sum_all()?], std::slice::from_ref(&x), None, false, false, false)?[0]
        .clone()
        .unwrap();
    let expect: Vec<f64> = vec![1.0, std::f64::consts::E];
    for (a, b) in vals(&gg).iter().zip(expect) {
        assert!((a - b).abs() < 1e-12);
    }
    Ok(())
}

#[test]
fn literal_requires_grad() -> Result<()> {
    let x = tensor!([1.0f32, 2.0]).requires_grad_(true)?;
    x.square()?.sum_all()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f32>()?, vec![2.0, 4.0]);
    assert!(tensor!([1i64]).requires_grad_(true).is_err());
    Ok(())
}

#[test]
fn deep_graphs_backward_and_drop_without_stack_overflow() -> Result<()> {
    let x = leaf(&[1.0], &[1]);
    let mut y = x.clone();
    for _ in 0..100_000 {
        y = y.mul(1.0)?;
    }
    let z = y.sum_all()?;
    drop(y);
    z.backward_with(None, true, false)?;
    assert_eq!(vals(&x.grad().unwrap()), vec![1.0]);
    drop(z);
    Ok(())
}

#[test]
fn leaf_hooks_post_accumulate_hooks_and_removal() -> Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let x = leaf(&[1.0, 2.0], &[2]);
    let h = x.register_hook(|g| Some(g.mul(2.0).unwrap()))?;
    let calls = Arc::new(AtomicUsize::new(0));
    let c = calls.clone();
    x.register_post_accumulate_grad_hook(move |t| {
        assert!(t.grad().is_some());
        c.fetch_add(1, Ordering::SeqCst);
    })?;
    x.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0]);
    h.remove();
    x.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![3.0, 3.0]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    Ok(())
}

#[test]
fn grad_modes_and_detach_in_place() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    {
        let _g = autograd::InferenceMode::new();
        assert!(autograd::is_inference_mode_enabled());
        assert!(!x.mul(2.0)?.requires_grad());
        // As torch: inside inference mode, even enable_grad records nothing.
        let _e = autograd::EnableGradGuard::new();
        assert!(!x.mul(2.0)?.requires_grad());
    }
    {
        let _e = autograd::EnableGradGuard::new();
        assert!(x.mul(2.0)?.requires_grad());
    }
    assert!(!autograd::is_inference_mode_enabled());
    let prev = autograd::set_grad_enabled(false);
    assert!(!x.exp()?.requires_grad());
    autograd::set_grad_enabled(prev);
    let y = x.exp()?;
    assert_eq!(y.grad_fn().unwrap().name(), "ExpBackward0");
    let next = y.grad_fn().unwrap().next_functions();
    assert_eq!(next[0].as_ref().unwrap().0.name(), "AccumulateGrad");
    y.detach_()?;
    assert!(y.is_leaf() && !y.requires_grad());
    // A gradient that is not used gives None with allow_unused, an error without.
    let z = leaf(&[1.0], &[1]);
    let out = x.sum_all()?;
    let g = autograd::grad(std::slice::from_ref(&out), std::slice::from_ref(&z), None, true, false, true)?;
    assert!(g[0].is_none());
    let e = autograd::grad(&[out], &[z], None, false, false, false).unwrap_err().to_string();
    assert!(e.contains("appears to not have been used in the graph"), "{e}");
    Ok(())
}

#[test]
fn errors_read_like_torch() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f64, 2.0], [2])?;
    let e = x.sum_all()?.backward().unwrap_err().to_string();
    assert!(e.contains("does not require grad and does not have a grad_fn"), "{e}");
    let x = leaf(&[1.0, 2.0], &[2]);
    let e = x.mul(2.0)?.backward().unwrap_err().to_string();
    assert!(e.contains("grad can be implicitly created only for scalar outputs"), "{e}");
    let y = x.mul(2.0)?;
    let e = y.requires_grad_(false).unwrap_err().to_string();
    assert!(e.contains("you can only change requires_grad flags of leaf variables"), "{e}");
    y.backward_with(Some(&Tensor::ones([2], DType::F64)?), false, false)?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0]);
    Ok(())
}

#[test]
fn unbind_and_split_record_one_node_that_joins_the_gradients() -> Result<()> {
    let x = leaf(&(0..12).map(f64::from).collect::<Vec<_>>(), &[3, 4]);
    let rows = x.mul(2.0)?.unbind(0)?;
    assert!(rows.iter().all(|r| r.grad_fn().unwrap().name() == "UnbindBackward0"));
    // Row 1 is never used: its part of the gradient is zero.
    rows[0].add(&rows[2].mul(3.0)?)?.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), [[2.0; 4], [0.0; 4], [6.0; 4]].concat());

    let x = leaf(&(0..12).map(f64::from).collect::<Vec<_>>(), &[3, 4]);
    let cols = x.split(3, 1)?;
    assert_eq!(cols[1].grad_fn().unwrap().name(), "SplitBackward0");
    let parts = x.split_with_sizes(&[1, 3], 1)?;
    assert_eq!(parts[0].grad_fn().unwrap().name(), "SplitWithSizesBackward0");
    cols[1].mul(5.0)?.sum_all()?.add(&parts[0].sum_all()?)?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), [1.0, 0.0, 0.0, 5.0].repeat(3));

    // Each piece can be backpropagated on its own: the join node holds no saved tensors.
    let x = leaf(&[1.0; 4], &[2, 2]);
    let halves = x.split(1, 0)?;
    halves[0].sum_all()?.backward()?;
    halves[1].mul(3.0)?.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), [1.0, 1.0, 3.0, 3.0]);

    // An in-place write into one of the views reaches the base through its view history (when
    // nothing recorded them; with history, torch refuses such writes, see below).
    let x = leaf(&[1.0; 6], &[3, 2]);
    let y = x.mul(2.0)?;
    let rows = no_grad(|| y.detach().unbind(0))?;
    rows[1].mul_(3.0)?;
    assert_eq!(vals(&y.detach()), [2.0, 2.0, 6.0, 6.0, 2.0, 2.0]);
    Ok(())
}

/// A narrow's and a step-1 slice's gradient is the incoming one padded with zeros along the dim,
/// at torch's start for negative and clamped bounds; a stepped slice still scatters.
#[test]
fn narrow_and_slice_gradients_pad_at_the_start() -> Result<()> {
    let x = leaf(&(0..12).map(f64::from).collect::<Vec<_>>(), &[2, 6]);
    let w = tensor!([1.0, 2.0]);
    let parts = [
        x.narrow(1, -3, 2)?,                     // columns 3, 4
        x.slice(1, -2.., 1)?,                    // columns 4, 5
        x.slice(1, 1..100, 1)?.narrow(1, 0, 2)?, // columns 1, 2 (end clamped)
        x.slice(1, 0..6, 3)?,                    // columns 0, 3 (stepped)
    ];
    for p in &parts {
        p.mul(&w)?.sum_all()?.backward()?;
    }
    assert_eq!(parts[0].grad_fn().unwrap().name(), "NarrowBackward0");
    assert_eq!(parts[1].grad_fn().unwrap().name(), "SliceBackward0");
    // Column grads per row: narrow 3:+1 4:+2; slice 4:+1 5:+2; 1:+1 2:+2; stepped 0:+1 3:+2.
    let row = [1.0, 1.0, 2.0, 3.0, 3.0, 2.0];
    let want: Vec<f64> = row.iter().chain(row.iter()).copied().collect();
    assert_eq!(vals(&x.grad().unwrap()), want);
    Ok(())
}

/// `unbind` and `split` of a permuted dense tensor (attention's `qkv.permute(..).unbind(0)`) join
/// their gradients in the input's memory order: the gradient reaching the input has the input's
/// strides, so the permute's backward (and a reshape before it) are views, not a copy. Values
/// as the plain join; a piece without a gradient contributes zeros.
#[test]
fn join_gradients_of_a_permuted_input_keep_its_strides() -> Result<()> {
    use std::sync::{Arc, Mutex};
    for split in [false, true] {
        let x = leaf(&(0..24).map(f64::from).collect::<Vec<_>>(), &[2, 3, 4]);
        let y = x.permute([2, 0, 1])?; // [4, 2, 3], strides [1, 12, 4]
        let seen: Arc<Mutex<Vec<Vec<usize>>>> = Arc::default();
        let log = seen.clone();
        let _h = y.register_hook(move |g| {
            log.lock().unwrap().push(g.strides().to_vec());
            None
        })?;
        let parts = if split { y.split(1, 0)? } else { y.unbind(0)? };
        // Piece i weighs i + 1; piece 2 gets no gradient.
        let mut loss: Option<Tensor> = None;
        for (i, p) in parts.iter().enumerate().filter(|(i, _)| *i != 2) {
            let term = p.mul((i + 1) as f64)?.sum_all()?;
            loss = Some(match loss {
                Some(l) => l.add(&term)?,
                None => term,
            });
        }
        loss.unwrap().backward()?;
        assert_eq!(seen.lock().unwrap().as_slice(), &[vec![1, 12, 4]], "split={split}");
        // x[a, b, c] is y[c, a, b]: its gradient is c + 1, and 0 for c = 2.
        let want: Vec<f64> = (0..24).map(|i| [1.0, 2.0, 0.0, 4.0][i % 4]).collect();
        assert_eq!(vals(&x.grad().unwrap()), want, "split={split}");
    }
    Ok(())
}

/// Joins in memory order give the plain join's values for attention-shaped inputs (a batch of
/// 1, so a size-1 dim), uneven pieces along a middle dim, pieces without gradients, and inputs
/// that are not a permutation of a dense block (which keep the plain join).
#[test]
fn join_gradients_in_memory_order_match_the_plain_join() -> Result<()> {
    type View = fn(&Tensor) -> Result<Tensor>;
    type Pieces = fn(&Tensor) -> Result<Vec<Tensor>>;
    let cases: [(&str, &[usize], View, Pieces); 4] = [
        ("attention qkv, batch 1", &[1, 3, 3, 2, 4], |x| x.permute([2, 0, 3, 1, 4]), |y| y.unbind(0)),
        (
            "uneven split of a middle dim",
            &[4, 5, 3],
            |x| x.permute([2, 1, 0]),
            |y| y.split_with_sizes(&[2, 3], 1),
        ),
        ("a narrowed input", &[4, 6], |x| x.narrow(1, 1, 4)?.t(), |y| y.unbind(1)),
        ("few pieces with gradients", &[6, 2, 3], |x| x.permute([0, 2, 1]), |y| y.unbind(0)),
    ];
    for (what, dims, view, pieces) in cases {
        let n: usize = dims.iter().product();
        let data: Vec<f64> = (0..n).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
        let grads = [false, true].map(|copy| -> Result<Vec<f64>> {
            let x = leaf(&data, dims);
            let y = view(&x)?;
            let y = if copy { y.contiguous()? } else { y };
            let parts = pieces(&y)?;
            let few = what.starts_with("few");
            let mut loss: Option<Tensor> = None;
            for (i, p) in parts.iter().enumerate() {
                if few && i % 3 != 0 {
                    continue;
                }
                let w = Tensor::arange(p.numel() as i64, DType::F64)?
                    .reshape(p.dims().to_vec())?
                    .add(i as f64)?;
                let term = p.mul(&w)?.sum_all()?;
                loss = Some(match loss {
                    Some(l) => l.add(&term)?,
                    None => term,
                });
            }
            loss.unwrap().backward()?;
            Ok(vals(&x.grad().unwrap()))
        });
        let [joined, plain] = grads;
        assert_eq!(joined?, plain?, "{what}");
    }
    Ok(())
}

/// Checked against torch 2.15: `.grad` of a non-leaf that retains it and is then written in place
/// is filled once (by its new history), not once per history.
#[test]
fn retained_grad_follows_an_in_place_write() -> Result<()> {
    let x = leaf(&[1.0, 2.0, 3.0], &[3]);
    let y = x.mul(1.0)?;
    y.retain_grad()?;
    y.mul_(2.0)?;
    y.sum_all()?.backward()?;
    assert_eq!(vals(&y.grad().unwrap()), vec![1.0, 1.0, 1.0]);
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0, 2.0]);
    Ok(())
}

/// torch refuses, in grad mode, an in-place write through a view made under `no_grad` of a tensor
/// that requires grad, and through one output of a multi-view op (split, chunk, unbind); both are
/// fine without grad mode or for tensors that do not require grad.
#[test]
fn in_place_writes_torch_refuses_through_views() -> Result<()> {
    let x = leaf(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let y = x.mul(1.0)?;
    let v = no_grad(|| y.narrow(0, 0, 2))?;
    let err = v.mul_(2.0).unwrap_err().to_string();
    assert!(err.contains("A view was created in no_grad mode"), "{err}");
    no_grad(|| v.mul_(2.0))?;
    let parts = y.split(2, 0)?;
    let err = parts[1].add_(1.0).unwrap_err().to_string();
    assert!(err.contains("Output 1 of Split is a view and is being modified inplace"), "{err}");
    let err = y.unbind(0)?[0].zero_().unwrap_err().to_string();
    assert!(err.contains("Output 0 of Unbind is a view"), "{err}");
    // Without history to protect, all of these are plain writes.
    let plain = Tensor::zeros([4], DType::F64)?;
    plain.split(2, 0)?[1].add_(1.0)?;
    no_grad(|| plain.narrow(0, 0, 1))?.add_(5.0)?;
    assert_eq!(vals(&plain), vec![5.0, 0.0, 1.0, 1.0]);
    Ok(())
}

/// With `create_graph`, a leaf's first `.grad` is a copy of the incoming gradient (torch's
/// `x.grad is g` is false): a later backward adds to `.grad`, never to the caller's tensor.
#[test]
fn create_graph_does_not_alias_the_seed_gradient() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let g = Tensor::from_slice(&[1.0f64, 1.0], [2])?;
    x.add(0.0)?.backward_with(Some(&g), false, true)?;
    x.add(0.0)?.backward_with(Some(&g), false, false)?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0]);
    assert_eq!(vals(&g), vec![1.0, 1.0], "the seed gradient was changed");
    Ok(())
}

/// A view made before its base (or another view of it) was written in place sees the write, as in
/// torch, whose values these are: the view's node is rebuilt over the base's new history
/// (`AsStridedBackward0`).
#[test]
fn views_see_in_place_writes_made_after_them() -> Result<()> {
    let x = leaf(&[1.0, 1.0, 1.0], &[3]);
    let y = x.mul(1.0)?;
    let v = y.narrow(0, 0, 2)?;
    y.mul_(2.0)?;
    assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
    v.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0, 0.0]);

    let x = leaf(&[1.0, 1.0, 1.0], &[3]);
    let y = x.mul(1.0)?;
    let b = y.narrow(0, 0, 3)?;
    y.select(0, 0)?.mul_(2.0)?;
    b.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 1.0, 1.0]);

    // A view written through itself keeps its own history; untouched views keep theirs.
    let x = leaf(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let y = x.mul(1.0)?;
    let t = y.t()?;
    let row = y.select(0, 1)?;
    row.mul_(3.0)?;
    t.mul(&tensor!([[1.0, 10.0], [100.0, 1000.0]]).to_dtype(DType::F64)?)?.sum_all()?.backward()?;
    // t[i][j] = y[j][i]; y's row 1 was tripled: d/dx[1][k] = 3 * weight of t[k][1].
    assert_eq!(vals(&x.grad().unwrap()), vec![1.0, 100.0, 30.0, 3000.0]);
    Ok(())
}

/// A product of two matrices is one `MmBackward0` node, as in torch (no view node after it).
#[test]
fn a_matrix_product_is_one_mm_node() -> Result<()> {
    let a = Tensor::randn([3, 4], DType::F64)?.requires_grad_(true)?;
    let b = Tensor::arange(20, DType::F64)?.reshape([4, 5])?;
    let y = a.matmul(&b)?;
    assert_eq!(y.grad_fn().unwrap().name(), "MmBackward0");
    assert_eq!(a.mm(&b)?.grad_fn().unwrap().name(), "MmBackward0");
    // `t()` of a vector is a view (not the tensor itself), recorded as torch records it.
    let v = Tensor::ones([3], DType::F64)?.requires_grad_(true)?;
    let vt = v.t()?;
    assert!(!vt.is_same(&v) && !vt.is_leaf());
    assert_eq!(vt.grad_fn().unwrap().name(), "TBackward0");
    y.sum_all()?.backward()?;
    let want = b.sum(1, false)?.unsqueeze(0)?.expand([3, 4])?;
    assert_eq!(vals(&a.grad().unwrap()), vals(&want.contiguous()?));
    Ok(())
}

/// A saved output written in place is torch's version error under `create_graph` too (the
/// recomputed output used to hide it).
#[test]
fn a_modified_saved_output_is_an_error_with_create_graph() -> Result<()> {
    let x = leaf(&[0.5, 1.0], &[2]);
    let y = x.exp()?;
    y.add_(1.0)?;
    let err = autograd::grad(&[y.sum_all()?], std::slice::from_ref(&x), None, true, true, false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("modified by an inplace operation"), "{err}");
    Ok(())
}

/// Behaviours from a second review against torch 2.15: a non-leaf captured by `grad` whose own
/// history was not needed stays usable; seeds take their output's dtype; hooks and retained
/// gradients go on a view's refreshed node; a retained `.grad` is differentiable under
/// create_graph; `.grad` cannot be the tensor itself; a hook cannot change the dtype.
#[test]
fn second_review_of_autograd_semantics() -> Result<()> {
    let x = leaf(&[1.0, 2.0], &[2]);
    let h = x.exp()?;
    let gh = autograd::grad(&[h.mul(2.0)?.sum_all()?], std::slice::from_ref(&h), None, false, false, false)?;
    assert_eq!(vals(gh[0].as_ref().unwrap()), vec![2.0, 2.0]);
    h.sum_all()?.backward()?;
    let g = vals(&x.grad().unwrap());
    assert!((g[0] - 1f64.exp()).abs() < 1e-5 && (g[1] - 2f64.exp()).abs() < 1e-4, "{g:?}");
    // An f64 seed for an f32 output.
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0], [2, 2])?.requires_grad_(true)?;
    let y = a.matmul(&a)?;
    y.backward_with(Some(&Tensor::ones([2, 2], DType::F64)?), false, false)?;
    assert_eq!(a.grad().unwrap().dtype(), DType::F32);
    // A hook registered on a view after its base was written in place fires.
    let x = leaf(&[1.0, 1.0, 1.0], &[3]);
    let b = x.mul(1.0)?;
    let v = b.narrow(0, 0, 2)?;
    b.mul_(2.0)?;
    let _h = v.register_hook(|g| g.mul(100.0).ok())?;
    v.sum_all()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![200.0, 200.0, 0.0]);
    // A retained .grad under create_graph carries history.
    let x = leaf(&[1.0, 2.0], &[2]);
    let h = x.mul(3.0)?;
    h.retain_grad()?;
    h.square()?.sum_all()?.backward_with(None, true, true)?;
    assert!(h.grad().unwrap().requires_grad());
    // .grad = itself, and a hook that changes the dtype.
    let x = Tensor::from_slice(&[1.0f32, 2.0], [2])?.requires_grad_(true)?;
    assert!(x
        .set_grad(Some(x.clone()))
        .unwrap_err()
        .to_string()
        .contains("can't assign Variable as its own grad"));
    let _h = x.register_hook(|g| g.to_dtype(DType::F64).ok())?;
    let e = x.sum_all()?.backward().unwrap_err().to_string();
    assert!(
        e.contains("has changed the type of value (was torch.FloatTensor got torch.DoubleTensor)"),
        "{e}"
    );
    Ok(())
}

/// torch's canonical custom `Exp`, saving its own output: no reference cycle (the node goes when
/// the output does, backward or not), and differentiable twice through the saved output.
#[test]
fn a_custom_function_may_save_its_output() -> Result<()> {
    use oxtorch_tensor::autograd::{Function, FunctionCtx};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    /// `Exp`, telling when it is dropped (with its node).
    struct Exp(Arc<AtomicBool>);
    impl Drop for Exp {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    impl Function for Exp {
        fn forward(&self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
            let y = inputs[0].exp()?;
            ctx.save_for_backward(&[&y]);
            Ok(vec![y])
        }
        fn backward(&self, ctx: &FunctionCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
            Ok(vec![Some(grads[0].mul(&ctx.saved_tensors()?[0])?)])
        }
    }
    let x = leaf(&[0.5, 1.0], &[2]);
    let dropped = Arc::new(AtomicBool::new(false));
    let y = Exp(dropped.clone()).apply(std::slice::from_ref(&x))?.remove(0);
    assert!(!dropped.load(Ordering::SeqCst));
    drop(y);
    assert!(dropped.load(Ordering::SeqCst), "the node must not outlive its output");
    let y = Exp(dropped).apply(std::slice::from_ref(&x))?.remove(0);
    let g = autograd::grad(&[y.sum_all()?], std::slice::from_ref(&x), None, true, true, false)?
        .remove(0)
        .unwrap();
    let gg = autograd::grad(&[g.sum_all()?], std::slice::from_ref(&x), None, false, false, false)?
        .remove(0)
        .unwrap();
    let want: Vec<f64> = [0.5f64, 1.0].iter().map(|v| v.exp()).collect();
    for (a, b) in vals(&gg).iter().zip(&want) {
        assert!((a - b).abs() < 1e-12, "{:?} vs {want:?}", vals(&gg));
    }
    Ok(())
}
