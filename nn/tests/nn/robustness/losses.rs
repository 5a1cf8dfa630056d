//! The losses sweep: class indices, probabilities, bad weights, margins, betas, reductions, and CTC.

use oxtorch_nn::functional::LinearCrossEntropyOptions;

use super::*;

// ---------------------------------------------------------------------------------------------
// Losses
// ---------------------------------------------------------------------------------------------

/// The losses with class indices, probabilities, bad weights, margins, betas and reductions.
pub(super) fn losses(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (n, c) = (rng.arg(&[2usize, 3, 1, 0], 3), rng.arg(&[3usize, 3, 1, 0], 3));
    let lshape = match rng.below(5) {
        0 => vec![c],
        1 => vec![n, c, 2],
        _ => vec![n, c],
    };
    let logits = shaped(rng, &lshape);
    let d = logits.t.dtype();
    let tshape: Vec<usize> = match lshape.len() {
        1 => vec![],
        2 => vec![n],
        _ => vec![n, 2],
    };
    let target = if rng.one_in(4) { shaped_as(rng, &lshape, d) } else { index(rng, &tshape, c as i64) };
    let weight = maybe(rng, &[c], d);
    let ii = rng.arg(&[-100i64, -100, -1, 0, i64::MIN, i64::MAX], 4);
    let red = rng.arg(&REDUCTIONS, 3);
    let ls = rng.arg(&[0.0, 0.0, 0.1, 1.0, -0.1, 1.5, f64::NAN], 4);
    s.call(
        "cross_entropy",
        || format!("{}, {}, {}, ignore {ii}, {red:?}, smoothing {ls}", logits.desc, target.desc, od(&weight)),
        || F::cross_entropy(&logits.t, &target.t, ot(&weight), ii, red, ls),
    );
    s.call(
        "nll_loss",
        || format!("{}, {}, {}, ignore {ii}, {red:?}", logits.desc, target.desc, od(&weight)),
        || F::nll_loss(&logits.t, &target.t, ot(&weight), ii, red),
    );
    let lw = shaped_as(rng, &[c, 4], d);
    let feats = shaped_as(rng, &[n, 4], d);
    let lb = maybe(rng, &[c], d);
    let lce_opts = LinearCrossEntropyOptions {
        allow_retain_graph: rng.coin(),
        batch_chunk_size: rng.arg(&[None, Some(1), Some(0), Some(usize::MAX)], 2),
        chunking_method: rng
            .arg(&[Some("auto"), None, Some("aspect_ratio:0"), Some("aspect_ratio:x"), Some("bogus")], 2)
            .map(str::to_string),
        acc_policy: rng.arg(&["auto", "accurate", "compact", "bogus"], 3).to_string(),
        acc_dtype: rng.arg(&[None, Some(DType::F32), Some(DType::I64), Some(DType::Bool)], 2),
    };
    let lii = rng.pick(&[None, Some(ii)]);
    let tn = index(rng, &[n], c as i64);
    s.call(
        "linear_cross_entropy",
        || {
            format!(
                "{}, {}, {}, bias {}, weight {}, {red:?}, ignore {lii:?}, smoothing {ls}, {lce_opts:?}",
                feats.desc,
                lw.desc,
                tn.desc,
                od(&lb),
                od(&weight)
            )
        },
        || {
            F::linear_cross_entropy(
                &feats.t,
                &lw.t,
                &tn.t,
                ot(&lb),
                ot(&weight),
                red,
                lii,
                ls,
                Some(&lce_opts),
            )
        },
    );

    // Regression losses: mismatched shapes broadcast or fail; beta/delta out of range.
    let x = if rng.tame {
        let shape = rng.pick(&[vec![4], vec![2, 3]]);
        shaped(rng, &shape)
    } else {
        any(rng)
    };
    let y = if rng.tame || rng.coin() { shaped(rng, x.t.dims()) } else { any(rng) };
    let (a, b) = (&x.t, &y.t);
    let args2 = || format!("{}, {}, {red:?}", x.desc, y.desc);
    let beta = rng.arg(&[1.0, 0.5, 0.0, -1.0, f64::NAN, f64::INFINITY], 2);
    s.call("mse_loss", args2, || F::mse_loss(a, b, red));
    s.call("l1_loss", args2, || F::l1_loss(a, b, red));
    s.call("smooth_l1_loss", || format!("{}, beta {beta}", args2()), || F::smooth_l1_loss(a, b, red, beta));
    s.call("huber_loss", || format!("{}, delta {beta}", args2()), || F::huber_loss(a, b, red, beta));
    s.call("soft_margin_loss", args2, || F::soft_margin_loss(a, b, red));
    let log_target = rng.coin();
    s.call("kl_div", || format!("{}, log_target {log_target}", args2()), || F::kl_div(a, b, red, log_target));
    let bw = maybe(rng, x.t.dims(), x.t.dtype());
    // (tame: probabilities, as torch requires: the sigmoids of both)
    let sigm = rng.tame;
    let sig = |t: &Tensor| if sigm { t.sigmoid().ok() } else { None };
    let (pa, pb) = (sig(a), sig(b));
    let (pa, pb) = (pa.as_ref().unwrap_or(a), pb.as_ref().unwrap_or(b));
    s.call(
        "binary_cross_entropy",
        || format!("{}, weight {}, sigmoids of both first {sigm}", args2(), od(&bw)),
        || F::binary_cross_entropy(pa, pb, ot(&bw), red),
    );
    let pw = maybe(rng, &[x.t.dims().last().copied().unwrap_or(1)], x.t.dtype());
    s.call(
        "binary_cross_entropy_with_logits",
        || format!("{}, weight {}, pos_weight {}", args2(), od(&bw), od(&pw)),
        || F::binary_cross_entropy_with_logits(a, b, ot(&bw), red, ot(&pw)),
    );
    let (log_input, full) = (rng.coin(), rng.coin());
    let eps = rng.arg(&EPSS, 2);
    s.call(
        "poisson_nll_loss",
        || format!("{}, log_input {log_input}, full {full}, eps {eps}", args2()),
        || F::poisson_nll_loss(a, b, log_input, full, eps, red),
    );
    let var = if rng.tame {
        let (shape, d) = (x.t.dims().to_vec(), x.t.dtype());
        Input { t: Tensor::ones(shape.clone(), d).expect("a variance"), desc: format!("ones {d:?}{shape:?}") }
    } else if rng.coin() {
        shaped(rng, x.t.dims())
    } else {
        any(rng)
    };
    s.call(
        "gaussian_nll_loss",
        || format!("{}, var {}, full {full}, eps {eps}", args2(), var.desc),
        || F::gaussian_nll_loss(a, b, &var.t, full, eps, red),
    );
    let sv = rng.arg(&[1.0, -1.0, 0.0, f64::NAN], 1);
    s.call(
        "gaussian_nll_loss(scalar var)",
        || format!("{}, var {sv}, eps {eps}", args2()),
        || F::gaussian_nll_loss(a, b, sv, full, eps, red),
    );

    // Margin and embedding losses: targets of ±1 (or not), margins non-finite.
    let margin = rng.arg(&F64S, 3);
    let z = if rng.tame || rng.coin() { shaped(rng, x.t.dims()) } else { any(rng) };
    // (targets: of the inputs' shape for the ranking loss, one per row for the cosine one)
    let pm = shaped(rng, x.t.dims());
    let pc = shaped(rng, &[x.t.dims().first().copied().unwrap_or(1)]);
    s.call(
        "hinge_embedding_loss",
        || format!("{}, margin {margin}", args2()),
        || F::hinge_embedding_loss(a, b, margin, red),
    );
    s.call(
        "margin_ranking_loss",
        || format!("{}, {}, {}, margin {margin}, {red:?}", x.desc, y.desc, pm.desc),
        || F::margin_ranking_loss(a, b, &pm.t, margin, red),
    );
    s.call(
        "cosine_embedding_loss",
        || format!("{}, {}, {}, margin {margin}, {red:?}", x.desc, z.desc, pc.desc),
        || F::cosine_embedding_loss(a, &z.t, &pc.t, margin, red),
    );
    let (pn, swap) = (rng.arg(&[2.0, 1.0, 0.0, -1.0, f64::NAN], 2), rng.coin());
    s.call(
        "triplet_margin_loss",
        || {
            format!(
                "{}, {}, {}, margin {margin}, p {pn}, eps {eps}, swap {swap}, {red:?}",
                x.desc, y.desc, z.desc
            )
        },
        || F::triplet_margin_loss(a, b, &z.t, margin, pn, eps, swap, red),
    );
    s.call(
        "triplet_margin_with_distance_loss",
        || format!("{}, {}, {}, None, margin {margin}, swap {swap}, {red:?}", x.desc, y.desc, z.desc),
        || F::triplet_margin_with_distance_loss(a, b, &z.t, None, margin, swap, red),
    );

    // Multi-label and multi-class margins.
    let mi = shaped(rng, &[n, c]);
    let mt = index(rng, &[n, c], c as i64);
    let mw = maybe(rng, &[c], mi.t.dtype());
    let ms = shaped(rng, &[n, c]);
    let mp = rng.arg(&[1i64, 2, 0, 3, -1, i64::MAX], 2);
    s.call(
        "multilabel_margin_loss",
        || format!("{}, {}, {red:?}", mi.desc, mt.desc),
        || F::multilabel_margin_loss(&mi.t, &mt.t, red),
    );
    s.call(
        "multilabel_soft_margin_loss",
        || format!("{}, {}, {}, {red:?}", mi.desc, ms.desc, od(&mw)),
        || F::multilabel_soft_margin_loss(&mi.t, &ms.t, ot(&mw), red),
    );
    let mc = index(rng, &[n], c as i64);
    s.call(
        "multi_margin_loss",
        || format!("{}, {}, p {mp}, margin {margin}, {}, {red:?}", mi.desc, mc.desc, od(&mw)),
        || F::multi_margin_loss(&mi.t, &mc.t, mp, margin, ot(&mw), red),
    );
}

/// CTC: targets longer than the input, blanks out of range, lengths that do not match (on a
/// thread of its own: its recursion runs over the frames).
pub(super) fn ctc(s: &mut Sweep, rng: &mut Rng) {
    rng.mood();
    let (t, n, c) =
        (rng.arg(&[3usize, 5, 1, 0], 3), rng.arg(&[1usize, 2, 0], 2), rng.arg(&[3usize, 3, 1, 0], 2));
    let lp_shape = if rng.odd(5) { vec![t, c] } else { perturb(rng, &[t, n, c]) };
    let lp_dtype = rng.arg(&[DType::F32, DType::F32, DType::F64, DType::F16, DType::I64], 3);
    let lp_vals = fill(rng, lp_shape.iter().product(), true);
    let s_len = rng.arg(&[1usize, 2, 0, 4], 3);
    let two_d = rng.coin();
    let t_shape = if two_d { vec![n, s_len] } else { vec![n * s_len] };
    let t_vals: Vec<i64> = (0..t_shape.iter().product::<usize>())
        .map(|_| rng.arg(&[1, 2, 1, 2, 0, c as i64, -1, i64::MAX], 2))
        .collect();
    let lens = |rng: &mut Rng, top: i64| -> Vec<i64> {
        let len = rng.arg(&[n, n, n + 1, 0], 2);
        (0..len).map(|_| rng.arg(&[top, top, 0, 1, top + 1, -1, i64::MAX, i64::MIN], 2)).collect()
    };
    let il = lens(rng, t as i64);
    let tl = lens(rng, s_len as i64);
    let len_dtype = rng.arg(&[DType::I64, DType::I64, DType::I32, DType::F32], 3);
    let blank = rng.arg(&[0usize, 0, 1, c, c.saturating_sub(1), usize::MAX], 2);
    let red = rng.arg(&REDUCTIONS, 3);
    let zi = rng.coin();
    let args = format!(
        "log_probs {lp_dtype:?}{lp_shape:?} {}, targets {t_shape:?} {t_vals:?}, input_lengths {len_dtype:?} {il:?}, \
         target_lengths {tl:?}, blank {blank}, {red:?}, zero_infinity {zi}",
        show(&lp_vals)
    );
    s.timed("ctc_loss", args, move || {
        let lp = Tensor::from_vec(lp_vals, lp_shape)?.to_dtype(lp_dtype)?;
        let targets = Tensor::from_vec(t_vals, t_shape)?;
        let il = Tensor::from_vec(il.clone(), [il.len()])?.to_dtype(len_dtype)?;
        let tl = Tensor::from_vec(tl.clone(), [tl.len()])?.to_dtype(len_dtype)?;
        F::ctc_loss(&lp, &targets, &il, &tl, blank, red, zi).map(|_| ())
    });
}
