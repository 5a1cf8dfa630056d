//! The `nn::functional` sweep, first half: convolutions and transposed convolutions, pools and
//! unpools, and resampling (interpolation, padding, grid sampling, unfold/fold, the shuffles).

use oxtorch_nn::functional::InterpolateOptions;

use super::*;

// ---------------------------------------------------------------------------------------------
// nn::functional
// ---------------------------------------------------------------------------------------------

/// A padding argument: "same", "valid", or explicit sizes.
pub(super) fn padding(rng: &mut Rng, n: usize) -> Padding {
    match rng.arg(&[2, 2, 2, 2, 0, 1], 4) {
        0 => Padding::Same,
        1 => Padding::Valid,
        _ => Padding::Explicit(list(rng, n, &PADS, 4)),
    }
}

/// Convolutions and transposed convolutions: bad strides, paddings, dilations, groups, weights.
pub(super) fn convolutions(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let n = 1 + rng.below(3);
    let x = batch(rng, n);
    let c_in = x.t.rank().checked_sub(n + 1).map_or(1, |i| x.t.dims()[i]);
    let groups = rng.arg(&[1usize, 1, 1, c_in.max(1), 2, 3, 0, usize::MAX], 4);
    // (a multiple of the groups when they are few, so the channels can divide)
    let c_out = if groups <= 4 { groups.max(1) } else { 1 } * rng.arg(&[1usize, 2, 3, 0], 3);
    let k = rng.arg(&[1usize, 2, 3, 1, 0], 4);
    let mut wshape = vec![c_out, rng.arg(&[c_in / groups.max(1), c_in / groups.max(1), c_in, 0], 2)];
    wshape.extend(std::iter::repeat_n(k, n));
    let w = shaped_as(rng, &wshape, x.t.dtype());
    let b = maybe(rng, &[c_out], x.t.dtype());
    let (st, pd, dl) = (list(rng, n, &STRIDES, 4), padding(rng, n), list(rng, n, &DILATIONS, 3));
    let args = || {
        format!(
            "{}, {}, bias {}, stride {st:?}, {pd:?}, dilation {dl:?}, groups {groups}",
            x.desc,
            w.desc,
            od(&b)
        )
    };
    let name = ["conv1d", "conv2d", "conv3d"][n - 1];
    s.call(name, args, || match n {
        1 => F::conv1d(&x.t, &w.t, ot(&b), &st, pd.clone(), &dl, groups),
        2 => F::conv2d(&x.t, &w.t, ot(&b), &st, pd.clone(), &dl, groups),
        _ => F::conv3d(&x.t, &w.t, ot(&b), &st, pd.clone(), &dl, groups),
    });

    // Transposed: the output grows with stride and dilation, so the input stays float (two bytes
    // or more per element: a `usize::MAX / 2` stride then always overflows the byte count).
    let xt = {
        let shape = x.t.dims().to_vec();
        let d = rng.pick(&[DType::F32, DType::F32, DType::F64, DType::F16, DType::BF16]);
        build(rng, d, &shape)
    };
    let mut wt_shape = vec![c_in, rng.arg(&[c_out / groups.max(1), c_out, 0], 1)];
    wt_shape.extend(std::iter::repeat_n(k, n));
    let wt = shaped_as(rng, &wt_shape, xt.t.dtype());
    let bt = maybe(rng, &[c_out], xt.t.dtype());
    let t_strides = [1usize, 1, 2, 3, 0, usize::MAX / 2, usize::MAX];
    let (st, pd, op, dl) = (
        list(rng, n, &t_strides, 4),
        list(rng, n, &[0, 0, 1, 2, usize::MAX / 2, usize::MAX], 4),
        list(rng, n, &[0, 0, 1, 2, usize::MAX], 2),
        list(rng, n, &[1, 1, 2, 0, usize::MAX / 2, usize::MAX], 3),
    );
    let args = || {
        format!(
            "{}, {}, bias {}, stride {st:?}, padding {pd:?}, output_padding {op:?}, groups {groups}, dilation {dl:?}",
            xt.desc,
            wt.desc,
            od(&bt)
        )
    };
    let name = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"][n - 1];
    s.call(name, args, || match n {
        1 => F::conv_transpose1d(&xt.t, &wt.t, ot(&bt), &st, &pd, &op, groups, &dl),
        2 => F::conv_transpose2d(&xt.t, &wt.t, ot(&bt), &st, &pd, &op, groups, &dl),
        _ => F::conv_transpose3d(&xt.t, &wt.t, ot(&bt), &st, &pd, &op, groups, &dl),
    });

    // Linear and bilinear with mismatched operands.
    let a = if rng.tame { shaped(rng, &[2, 3]) } else { any(rng) };
    let lw = shaped(rng, &[2, a.t.dims().last().copied().unwrap_or(1)]);
    let lb = maybe(rng, &[2], lw.t.dtype());
    s.call("linear", || format!("{}, {}, {}", a.desc, lw.desc, od(&lb)), || F::linear(&a.t, &lw.t, ot(&lb)));
    let (x1, x2) = (shaped(rng, &[2, 3]), shaped(rng, &[2, 4]));
    let bw = shaped(rng, &[5, 3, 4]);
    let bb = maybe(rng, &[5], bw.t.dtype());
    s.call(
        "bilinear",
        || format!("{}, {}, {}, {}", x1.desc, x2.desc, bw.desc, od(&bb)),
        || F::bilinear(&x1.t, &x2.t, &bw.t, ot(&bb)),
    );
}

/// Max, average, power-average, adaptive and fractional pools, and max-unpooling.
pub(super) fn pools(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let n = 1 + rng.below(3);
    let x = batch(rng, n);
    let (k, st) = (list(rng, n, &KERNELS, 4), list(rng, n, &STRIDES, 4));
    let stride: Option<Vec<usize>> = if rng.one_in(3) { None } else { Some(st) };
    // (torch: the padding at most half the kernel)
    let (pd, dl) = (list(rng, n, &PADS, 2), list(rng, n, &DILATIONS, 3));
    let ceil = rng.coin();
    let so = stride.as_deref();
    let args = || {
        format!("{}, kernel {k:?}, stride {stride:?}, padding {pd:?}, dilation {dl:?}, ceil {ceil}", x.desc)
    };
    match n {
        1 => {
            s.call("max_pool1d", args, || F::max_pool1d(&x.t, &k, so, &pd, &dl, ceil));
            s.call("max_pool1d_with_indices", args, || {
                F::max_pool1d_with_indices(&x.t, &k, so, &pd, &dl, ceil)
            });
        }
        2 => {
            s.call("max_pool2d", args, || F::max_pool2d(&x.t, &k, so, &pd, &dl, ceil));
            s.call("max_pool2d_with_indices", args, || {
                F::max_pool2d_with_indices(&x.t, &k, so, &pd, &dl, ceil)
            });
        }
        _ => {
            s.call("max_pool3d", args, || F::max_pool3d(&x.t, &k, so, &pd, &dl, ceil));
            s.call("max_pool3d_with_indices", args, || {
                F::max_pool3d_with_indices(&x.t, &k, so, &pd, &dl, ceil)
            });
        }
    }
    let cip = rng.coin();
    let div = rng.arg(&[None, None, Some(3i64), Some(0), Some(-1), Some(i64::MIN)], 3);
    let args = || {
        format!("{}, kernel {k:?}, stride {stride:?}, padding {pd:?}, ceil {ceil}, {cip}, {div:?}", x.desc)
    };
    match n {
        1 => s.call("avg_pool1d", args, || F::avg_pool1d(&x.t, &k, so, &pd, ceil, cip)),
        2 => s.call("avg_pool2d", args, || F::avg_pool2d(&x.t, &k, so, &pd, ceil, cip, div)),
        _ => s.call("avg_pool3d", args, || F::avg_pool3d(&x.t, &k, so, &pd, ceil, cip, div)),
    }
    let p = rng.arg(&PNORMS, 4);
    let args = || format!("{}, norm_type {p}, kernel {k:?}, stride {stride:?}, ceil {ceil}", x.desc);
    match n {
        1 => s.call("lp_pool1d", args, || F::lp_pool1d(&x.t, p, &k, so, ceil)),
        2 => s.call("lp_pool2d", args, || F::lp_pool2d(&x.t, p, &k, so, ceil)),
        _ => s.call("lp_pool3d", args, || F::lp_pool3d(&x.t, p, &k, so, ceil)),
    }

    // Adaptive pools: output sizes 0, small, or overflowing.
    let os = out_sizes(rng, n);
    let args = || format!("{}, output_size {os:?}", x.desc);
    match n {
        1 => {
            let o = os.first().copied().unwrap_or(0);
            s.call("adaptive_avg_pool1d", args, || F::adaptive_avg_pool1d(&x.t, o));
            s.call("adaptive_max_pool1d", args, || F::adaptive_max_pool1d(&x.t, o));
            s.call("adaptive_max_pool1d_with_indices", args, || F::adaptive_max_pool1d_with_indices(&x.t, o));
        }
        2 => {
            s.call("adaptive_avg_pool2d", args, || F::adaptive_avg_pool2d(&x.t, &os));
            s.call("adaptive_max_pool2d", args, || F::adaptive_max_pool2d(&x.t, &os));
            s.call("adaptive_max_pool2d_with_indices", args, || {
                F::adaptive_max_pool2d_with_indices(&x.t, &os)
            });
        }
        _ => {
            s.call("adaptive_avg_pool3d", args, || F::adaptive_avg_pool3d(&x.t, &os));
            s.call("adaptive_max_pool3d", args, || F::adaptive_max_pool3d(&x.t, &os));
            s.call("adaptive_max_pool3d_with_indices", args, || {
                F::adaptive_max_pool3d_with_indices(&x.t, &os)
            });
        }
    }

    // Fractional max pooling (2-D or 3-D): kernel, output size or ratio, samples.
    let m = 2 + rng.below(2);
    let y = batch(rng, m);
    let fk = list(rng, m, &[1, 2, 2, 3, 0, usize::MAX, 1 << 40], 3);
    let (fo, fr): (Option<Vec<usize>>, Option<Vec<f64>>) = match rng.arg(&[2, 3, 0, 1], 2) {
        0 => (None, None),
        1 => (Some(out_sizes(rng, m)), Some(vec![0.5])),
        2 => (
            None,
            Some(
                (0..rng.arg(&[1, m, m + 1], 2))
                    .map(|_| rng.arg(&[0.5, 0.7, 0.2, 0.0, 1.0, -0.1, f64::NAN, f64::INFINITY], 3))
                    .collect(),
            ),
        ),
        _ => (Some(list(rng, m, &[1, 2, 3, 0, 5], 3)), None),
    };
    let lead: Vec<usize> = y.t.dims().iter().take(y.t.rank().saturating_sub(m)).copied().collect();
    let mut sshape = lead;
    sshape.push(m);
    let samples = if rng.coin() {
        None
    } else if rng.tame {
        // (torch's samples: values in [0, 1), the input's dtype)
        let v: Vec<f64> = (0..sshape.iter().product()).map(|_| rng.pick(&[0.0, 0.25, 0.5, 0.9])).collect();
        let d = y.t.dtype();
        let t = Tensor::from_vec(v.clone(), sshape.clone()).and_then(|t| t.to_dtype(d)).expect("samples");
        Some(Input { t, desc: format!("{d:?}{sshape:?} {v:?}") })
    } else {
        Some(shaped_as(rng, &sshape, y.t.dtype()))
    };
    let args =
        || format!("{}, kernel {fk:?}, output_size {fo:?}, ratio {fr:?}, samples {}", y.desc, od(&samples));
    let (fo_, fr_) = (fo.as_deref(), fr.as_deref());
    if m == 2 {
        s.call("fractional_max_pool2d", args, || F::fractional_max_pool2d(&y.t, &fk, fo_, fr_, ot(&samples)));
        s.call("fractional_max_pool2d_with_indices", args, || {
            F::fractional_max_pool2d_with_indices(&y.t, &fk, fo_, fr_, ot(&samples))
        });
    } else {
        s.call("fractional_max_pool3d", args, || F::fractional_max_pool3d(&y.t, &fk, fo_, fr_, ot(&samples)));
        s.call("fractional_max_pool3d_with_indices", args, || {
            F::fractional_max_pool3d_with_indices(&y.t, &fk, fo_, fr_, ot(&samples))
        });
    }

    // Max-unpooling: indices of the input's shape (or not), bad kernel/stride/padding/output size.
    let u = batch(rng, n);
    // (no `1 << 40`: one such dim next to small ones is a representable terabyte)
    let uk = list(rng, n, &[1, 2, 3, 0, usize::MAX, usize::MAX / 2], 3);
    let ust = if rng.coin() { None } else { Some(list(rng, n, &[1, 2, 0, usize::MAX, usize::MAX / 2], 2)) };
    let upd = list(rng, n, &[0, 0, 1, usize::MAX / 2, usize::MAX], 1);
    // Tame: what the pool with the same sizes gave; wild: indices of any value.
    let pooled = if rng.tame { pooled(n, &u, &uk, ust.as_deref(), &upd) } else { None };
    let (u, idx) = match pooled {
        Some(p) => p,
        None => {
            let idx = index(rng, u.t.dims(), 16);
            (u, idx)
        }
    };
    let uos = match rng.arg(&[0, 2, 1], 2) {
        0 => None,
        1 => Some(out_sizes(rng, n)),
        _ => Some(u.t.dims().to_vec()),
    };
    let args = || {
        format!(
            "{}, {}, kernel {uk:?}, stride {ust:?}, padding {upd:?}, output_size {uos:?}",
            u.desc, idx.desc
        )
    };
    let (ust_, uos_) = (ust.as_deref(), uos.as_deref());
    match n {
        1 => s.call("max_unpool1d", args, || F::max_unpool1d(&u.t, &idx.t, &uk, ust_, &upd, uos_)),
        2 => s.call("max_unpool2d", args, || F::max_unpool2d(&u.t, &idx.t, &uk, ust_, &upd, uos_)),
        _ => s.call("max_unpool3d", args, || F::max_unpool3d(&u.t, &idx.t, &uk, ust_, &upd, uos_)),
    }
    // Unpooling what a pool gave, with a stride too large to be representable.
    let img = ones(&[1, 1, 4, 4]);
    let bad = rng.pick(&[usize::MAX / 2, usize::MAX, 1 << 40, 0]);
    s.call(
        "max_unpool2d(pooled)",
        || format!("F32[1, 1, 4, 4] pooled k2, kernel [2], stride [{bad}], padding [{bad}]"),
        || {
            let (v, i) = F::max_pool2d_with_indices(&img, &[2], None, &[0], &[1], false)?;
            F::max_unpool2d(&v, &i, &[2], Some(&[bad][..]), &[0], None)?;
            F::max_unpool2d(&v, &i, &[2], None, &[bad], None)?;
            F::max_unpool2d(&v, &i, &[bad], None, &[0], None)
        },
    );
}

/// The `(kernel taps, blocks)` of an unfold of a 2-D `output_size` with these sizes (one value or
/// two each), `None` if they do not fit or overflow.
fn fold_columns(o: &[usize], k: &[usize], d: &[usize], p: &[usize], s: &[usize]) -> Option<(usize, usize)> {
    let at = |v: &[usize], i: usize| if v.len() == 1 { v.first().copied() } else { v.get(i).copied() };
    let (mut taps, mut blocks) = (1usize, 1usize);
    for i in 0..2 {
        let (o, k, d, p, s) = (at(o, i)?, at(k, i)?, at(d, i)?, at(p, i)?, at(s, i)?);
        let span = d.checked_mul(k.checked_sub(1)?)?.checked_add(1)?;
        let room = o.checked_add(p.checked_mul(2)?)?.checked_sub(span)?;
        taps = taps.checked_mul(k)?;
        blocks = blocks.checked_mul(room.checked_div(s)?.checked_add(1)?)?;
    }
    (taps <= 64 && blocks <= 64).then_some((taps, blocks))
}

/// `max_pool{n}d_with_indices` of `x` (values and indices as inputs), `None` where it fails.
fn pooled(n: usize, x: &Input, k: &[usize], st: Option<&[usize]>, pd: &[usize]) -> Option<(Input, Input)> {
    let run = || match n {
        1 => F::max_pool1d_with_indices(&x.t, k, st, pd, &[1], false),
        2 => F::max_pool2d_with_indices(&x.t, k, st, pd, &[1], false),
        _ => F::max_pool3d_with_indices(&x.t, k, st, pd, &[1], false),
    };
    let (v, i) = quietly(|| catch_unwind(AssertUnwindSafe(run))).ok()?.ok()?;
    let desc = format!("max_pool{n}d_with_indices({}, kernel {k:?}, stride {st:?}, padding {pd:?})", x.desc);
    Some((Input { t: v, desc: format!("{desc}.0") }, Input { t: i, desc: format!("{desc}.1") }))
}

/// Interpolation, padding, grid sampling, unfold/fold and the shuffles.
pub(super) fn resampling(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let n = 1 + rng.below(3);
    let x = batch(rng, n);
    let modes = [
        "nearest",
        "nearest-exact",
        "linear",
        "bilinear",
        "bicubic",
        "trilinear",
        "area",
        "lanczos",
        "bogus",
    ];
    // (tame: a mode for the input's rank, align_corners only where it means something)
    let for_rank = [
        ["nearest", "area", "linear"],
        ["nearest-exact", "bilinear", "bicubic"],
        ["nearest", "area", "trilinear"],
    ];
    let mode = if rng.tame { rng.pick(&for_rank[n - 1]) } else { rng.pick(&modes) };
    let scales = [2.0, 0.5, 1.5, f64::NAN, 0.0, -1.0, f64::NEG_INFINITY, 1e-300, -0.0];
    let (size, scale): (Option<Vec<usize>>, Option<Vec<f64>>) = match rng.arg(&[2, 3, 4, 0, 1], 3) {
        0 => (None, None),
        1 => (Some(out_sizes(rng, n)), Some(vec![2.0])),
        2 => (Some(out_sizes(rng, n)), None),
        _ => (None, Some((0..rng.arg(&[1, n, n + 1, 0], 2)).map(|_| rng.arg(&scales, 3)).collect())),
    };
    let ac = if rng.tame && matches!(mode, "nearest" | "nearest-exact" | "area") {
        None
    } else {
        rng.pick(&[None, Some(true), Some(false)])
    };
    let args = || format!("{}, size {size:?}, scale {scale:?}, {mode:?}, align_corners {ac:?}", x.desc);
    let (sz, sc) = (size.as_deref(), scale.as_deref());
    s.call("interpolate", args, || F::interpolate(&x.t, sz, sc, mode, ac));
    let opts = InterpolateOptions {
        align_corners: ac,
        recompute_scale_factor: rng.pick(&[None, Some(true), Some(false)]),
        antialias: rng.coin() && (!rng.tame || matches!(mode, "bilinear" | "bicubic")),
    };
    s.call(
        "interpolate_with",
        || format!("{}, {opts:?}", args()),
        || F::interpolate_with(&x.t, sz, sc, mode, opts),
    );

    // Pad: every mode, negative, overflowing, reflect wider than the dim.
    let a = if rng.tame { batch(rng, 2) } else { any(rng) };
    let pads: [&[isize]; 14] = [
        &[1, 1],
        &[0, 2],
        &[-1, 0],
        &[2, -1, 1, 1],
        &[3, 3],
        &[1],
        &[],
        &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
        &[isize::MAX, isize::MAX],
        &[isize::MIN, 0],
        &[-5, -5],
        &[isize::MAX, 1, 1, isize::MAX],
        &[isize::MIN, isize::MIN],
        &[5, 0],
    ];
    let pad = rng.arg(&pads, 4);
    let pmode = rng.arg(&["constant", "reflect", "replicate", "circular", "bogus", ""], 4);
    let value = rng.arg(&[None, Some(2.0), Some(f64::NAN), Some(1e300), Some(f64::NEG_INFINITY)], 2);
    s.call(
        "pad",
        || format!("{}, {pad:?}, {pmode:?}, {value:?}", a.desc),
        || F::pad(&a.t, pad, pmode, value),
    );
    let img = batch(rng, 2);
    s.call("pad(image)", || format!("{}, {pad:?}, {pmode:?}", img.desc), || F::pad(&img.t, pad, pmode, None));

    // grid_sample / affine_grid.
    let g = batch(rng, 2);
    let gn = g.t.dims().first().copied().unwrap_or(1);
    let grid = shaped(rng, &[gn, 2, 3, 2]);
    let gmode = rng.arg(&["bilinear", "nearest", "bicubic", "bogus"], 3);
    let gpad = rng.arg(&["zeros", "border", "reflection", "bogus"], 3);
    let gac = rng.coin();
    s.call(
        "grid_sample",
        || format!("{}, {}, {gmode:?}, {gpad:?}, {gac}", g.desc, grid.desc),
        || F::grid_sample(&g.t, &grid.t, gmode, gpad, gac),
    );
    let g5 = batch(rng, 3);
    let grid5 = shaped(rng, &[g5.t.dims().first().copied().unwrap_or(1), 2, 2, 2, 3]);
    s.call(
        "grid_sample(3d)",
        || format!("{}, {}, {gmode:?}, {gpad:?}, {gac}", g5.desc, grid5.desc),
        || F::grid_sample(&g5.t, &grid5.t, gmode, gpad, gac),
    );
    let nd = rng.pick(&[2usize, 3]);
    let tshape = [2, rng.arg(&[nd, 5 - nd], 1), rng.arg(&[nd + 1, 7 - nd], 1)];
    let theta = shaped(rng, &tshape);
    let asize = match rng.arg(&[0, 0, 1, 2], 2) {
        0 if nd == 2 => vec![2, 1, 3, 3],
        0 => vec![2, 1, 2, 3, 3],
        1 => out_sizes(rng, 2),
        _ => rng.pick(&[
            vec![2, 1, usize::MAX, usize::MAX],
            vec![2, 1, 1 << 62, 1 << 62],
            vec![2, 1, 1 << 21, 1 << 21, 1 << 21],
            vec![],
            vec![2, 1, 0, 3],
        ]),
    };
    s.call(
        "affine_grid",
        || format!("{}, {asize:?}, {gac}", theta.desc),
        || F::affine_grid(&theta.t, &asize, gac),
    );

    // unfold / fold.
    let u = batch(rng, 2);
    let (k, dl, pd, st) = (
        list(rng, 2, &KERNELS, 4),
        list(rng, 2, &DILATIONS, 3),
        list(rng, 2, &PADS, 4),
        list(rng, 2, &STRIDES, 4),
    );
    let args = || format!("{}, kernel {k:?}, dilation {dl:?}, padding {pd:?}, stride {st:?}", u.desc);
    s.call("unfold", args, || F::unfold(&u.t, &k, &dl, &pd, &st));
    let fos = if rng.tame || rng.coin() { list(rng, 2, &[2, 3, 4, 0], 3) } else { out_sizes(rng, 2) };
    // (tame: as many columns as `unfold` of that output size makes)
    let cshape = match fold_columns(&fos, &k, &dl, &pd, &st) {
        Some(c) if rng.tame => vec![1, 2 * c.0, c.1],
        _ => vec![1, 4 * rng.pick(&[1, 2, 3]), rng.pick(&[1, 4, 9, 0])],
    };
    let cols = shaped(rng, &cshape);
    s.call(
        "fold",
        || {
            format!(
                "{}, output_size {fos:?}, kernel {k:?}, dilation {dl:?}, padding {pd:?}, stride {st:?}",
                cols.desc
            )
        },
        || F::fold(&cols.t, &fos, &k, &dl, &pd, &st),
    );

    // Shuffles: factor 0, negative, not dividing, huge.
    let sh = if rng.tame { shaped(rng, &[1, 4, 2, 2]) } else { any(rng) };
    let f = rng.arg(&[1i64, 2, 3, 0, -1, i64::MAX, i64::MIN, 1 << 32], 3);
    s.call("pixel_shuffle", || format!("{}, {f}", sh.desc), || F::pixel_shuffle(&sh.t, f));
    s.call("pixel_unshuffle", || format!("{}, {f}", sh.desc), || F::pixel_unshuffle(&sh.t, f));
    s.call("channel_shuffle", || format!("{}, {f}", sh.desc), || F::channel_shuffle(&sh.t, f));
    let img = batch(rng, 2);
    s.call("pixel_shuffle(image)", || format!("{}, {f}", img.desc), || F::pixel_shuffle(&img.t, f));
    s.call("pixel_unshuffle(image)", || format!("{}, {f}", img.desc), || F::pixel_unshuffle(&img.t, f));
}
