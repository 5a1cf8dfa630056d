//! The pinned cases of the sweep: fixed overflowing lengths, sizes, layer and gate counts and epoch
//! counters (CTC, unpools, one-hot, embedding bags, RNNs, constructors, optimizer and scheduler state).

use oxtorch_nn::functional::LinearCrossEntropyOptions;
use oxtorch_nn::optim::lr_scheduler::{ExponentialLR, OneCycleLR, ReduceLROnPlateau, StepLR};
use oxtorch_nn::optim::{Optimizer, OptimizerState};
use oxtorch_nn::GRU;

use super::optim::sgd;
use super::*;

/// Fixed cases, once per sweep: overflowing counts and sizes that the random draws reach only
/// rarely (sums and products of lengths, layer and gate counts, epoch counters).
pub(super) fn pinned(s: &mut Sweep) {
    let lp = || Tensor::zeros([2usize, 2, 3], DType::F32);
    s.call("ctc_loss(target lengths overflow)", || "F32[2, 2, 3], targets I64[2] [1, 2], input_lengths [2, 2], target_lengths [i64::MAX, i64::MAX], 1-D".into(), || {
        let tg = Tensor::from_vec(vec![1i64, 2], [2])?;
        let il = Tensor::from_vec(vec![2i64, 2], [2])?;
        let tl = Tensor::from_vec(vec![i64::MAX, i64::MAX], [2])?;
        F::ctc_loss(&lp()?, &tg, &il, &tl, 0, "mean", false)
    });
    s.call(
        "ctc_loss(target length i64::MAX)",
        || "F32[2, 2, 3], targets I64[2, 2], target_lengths [i64::MAX, 0]".into(),
        || {
            let tg = Tensor::from_vec(vec![1i64, 2, 1, 2], [2, 2])?;
            let il = Tensor::from_vec(vec![2i64, 2], [2])?;
            let tl = Tensor::from_vec(vec![i64::MAX, 0], [2])?;
            F::ctc_loss(&lp()?, &tg, &il, &tl, 0, "sum", true)
        },
    );
    let img = ones(&[1, 1, 4, 4]);
    s.call(
        "max_unpool2d(stride overflow)",
        || "F32[1, 1, 4, 4] as pooled, kernel [2], stride [usize::MAX / 2]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4, 4], DType::I64)?;
            F::max_unpool2d(&img, &idx, &[2], Some(&[usize::MAX / 2][..]), &[0], None)
        },
    );
    s.call(
        "max_unpool2d(padding overflow)",
        || "F32[1, 1, 4, 4] as pooled, kernel [2], padding [usize::MAX / 2]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4, 4], DType::I64)?;
            F::max_unpool2d(&img, &idx, &[2], None, &[usize::MAX / 2], None)
        },
    );
    s.call(
        "max_unpool2d(size product overflow)",
        || "F32[1, 1, 4, 4] as pooled, kernel [1 << 33]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4, 4], DType::I64)?;
            F::max_unpool2d(&img, &idx, &[1 << 33], Some(&[1][..]), &[0], None)
        },
    );
    s.call(
        "max_unpool1d(output_size overflow)",
        || "F32[1, 1, 4], output_size [usize::MAX]".into(),
        || {
            let idx = Tensor::zeros([1usize, 1, 4], DType::I64)?;
            F::max_unpool1d(&ones(&[1, 1, 4]), &idx, &[2], None, &[0], Some(&[usize::MAX][..]))
        },
    );
    let v = Tensor::from_vec(vec![i64::MAX], [1]).expect("a value");
    s.call("one_hot(i64::MAX, -1)", || "I64[1] [i64::MAX], -1".into(), || F::one_hot(&v, -1));
    s.call("one_hot(i64::MAX classes)", || "I64[1] [i64::MAX], i64::MAX".into(), || F::one_hot(&v, i64::MAX));
    let e = ones(&[5, 3]);
    s.call(
        "embedding_bag(offset i64::MAX)",
        || "I64[4] [0, 1, 2, 3], F32[5, 3], offsets [0, i64::MAX], sum".into(),
        || {
            let input = Tensor::from_vec(vec![0i64, 1, 2, 3], [4])?;
            let offsets = Tensor::from_vec(vec![0i64, i64::MAX], [2])?;
            F::embedding_bag(&input, &e, Some(&offsets), None, 2.0, false, "sum", false, None, false, None)
        },
    );
    s.call(
        "embedding_bag(offset i64::MIN)",
        || "I64[4], F32[5, 3], offsets [i64::MIN, 2], mean, include_last_offset".into(),
        || {
            let input = Tensor::from_vec(vec![0i64, 1, 2, 3], [4])?;
            let offsets = Tensor::from_vec(vec![i64::MIN, 2], [2])?;
            F::embedding_bag(&input, &e, Some(&offsets), None, 2.0, false, "mean", false, None, true, None)
        },
    );
    s.call(
        "embedding(padding_idx i64::MIN)",
        || "I64[2] [0, 1], F32[5, 3], Some(i64::MIN)".into(),
        || F::embedding(&Tensor::from_vec(vec![0i64, 1], [2])?, &e, Some(i64::MIN)),
    );
    let seq = ones(&[2, 1, 3]);
    s.call(
        "lstm(num_layers usize::MAX)",
        || "F32[2, 1, 3], no params, num_layers usize::MAX".into(),
        || {
            F::lstm(
                &seq,
                &[ones(&[1, 1, 4]), ones(&[1, 1, 4])],
                &[],
                true,
                usize::MAX,
                0.0,
                false,
                true,
                false,
            )
        },
    );
    s.call(
        "gru(num_layers usize::MAX)",
        || "F32[2, 1, 3], no params, num_layers usize::MAX".into(),
        || F::gru(&seq, &ones(&[1, 1, 4]), &[], false, usize::MAX, 0.0, false, true, false),
    );
    s.call(
        "pixel_shuffle(empty, i64::MAX)",
        || "F32[1, 0, 2, 2], i64::MAX".into(),
        || F::pixel_shuffle(&ones(&[1, 0, 2, 2]), i64::MAX),
    );
    s.call(
        "pixel_unshuffle(empty, i64::MAX)",
        || "F32[1, 0, 0, 0], i64::MAX".into(),
        || F::pixel_unshuffle(&ones(&[1, 0, 0, 0]), i64::MAX),
    );
    s.call(
        "interpolate(size overflow)",
        || "F32[1, 1, 4, 4], size [usize::MAX, usize::MAX], bilinear".into(),
        || F::interpolate(&img, Some(&[usize::MAX, usize::MAX][..]), None, "bilinear", Some(false)),
    );
    s.call(
        "pad(isize::MAX both sides)",
        || "F32[2, 3], [isize::MAX, isize::MAX], constant".into(),
        || F::pad(&ones(&[2, 3]), &[isize::MAX, isize::MAX], "constant", None),
    );
    s.call(
        "pad(empty dim, isize::MAX twice)",
        || "F32[2, 1, 0, 3], [isize::MAX, 1, 1, isize::MAX], constant".into(),
        || F::pad(&ones(&[2, 1, 0, 3]), &[isize::MAX, 1, 1, isize::MAX], "constant", None),
    );
    s.call(
        "Conv2d::new(no channels, kernel overflows)",
        || "0, 0, [usize::MAX, 2]".into(),
        || Conv2d::new(0, 0, &[usize::MAX, 2], ConvOptions::default()),
    );
    s.call(
        "LSTM::new(4 * hidden overflows)",
        || "3, usize::MAX / 4 + 1".into(),
        || LSTM::new(3, usize::MAX / 4 + 1, RnnOptions::default()),
    );
    s.call(
        "GRU::new(3 * hidden overflows)",
        || "3, usize::MAX / 3 + 1".into(),
        || GRU::new(3, usize::MAX / 3 + 1, RnnOptions::default()),
    );
    s.call(
        "MultiheadAttention::new(3 * embed overflows)",
        || "usize::MAX / 3 + 1, 1".into(),
        || MultiheadAttention::new(usize::MAX / 3 + 1, 1, MultiheadAttentionOptions::default()),
    );
    s.call(
        "MultiheadAttention::new(0 heads)",
        || "4, 0".into(),
        || MultiheadAttention::new(4, 0, MultiheadAttentionOptions::default()),
    );
    s.call(
        "Embedding::new(usize::MAX, 0, -1)",
        || "usize::MAX, 0, Some(-1)".into(),
        || Embedding::new(usize::MAX, 0, Some(-1)),
    );
    s.call("GroupNorm::new(0 groups)", || "0, 4, 1e-5, true".into(), || GroupNorm::new(0, 4, 1e-5, true));
    let lce = LinearCrossEntropyOptions { batch_chunk_size: Some(0), ..Default::default() };
    s.call(
        "linear_cross_entropy(chunk 0)",
        || format!("F32[2, 4], F32[3, 4], I64[2] [0, 1], {lce:?}"),
        || {
            let t = Tensor::from_vec(vec![0i64, 1], [2])?;
            F::linear_cross_entropy(
                &ones(&[2, 4]),
                &ones(&[3, 4]),
                &t,
                None,
                None,
                "mean",
                None,
                0.0,
                Some(&lce),
            )
        },
    );

    // Optimizer and scheduler counters.
    s.call(
        "optimizer::load_state_dict(group usize::MAX)",
        || "SGD, state param_groups.18446744073709551615.lr = 0.1".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut st = OptimizerState::default();
            st.set_hyper(usize::MAX, "lr", 0.1);
            o.load_state_dict(&st)?;
            o.step()
        },
    );
    s.timed(
        "Scheduler::step after step_epoch(9.3e18)",
        "StepLR(2, 0.5), step_epoch(9.3e18), step".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut sched = StepLR::new(&mut o, 2, 0.5);
            sched.step_epoch(&mut o, 9.3e18)?;
            sched.step(&mut o)
        },
    );
    s.timed(
        "Scheduler::step after load_state_dict(last_epoch 1e300)",
        "ExponentialLR(0.5), load last_epoch 1e300, step".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut sched = ExponentialLR::new(&mut o, 0.5);
            let state = [
                ("last_epoch".to_string(), 1e300),
                ("base_lrs.0".to_string(), 0.1),
                ("_last_lr.0".to_string(), 0.1),
            ];
            sched.load_state_dict(&state)?;
            sched.step(&mut o)
        },
    );
    s.timed(
        "ReduceLROnPlateau::try_step after load(1e300)",
        "min, num_bad_epochs 1e300, last_epoch 1e300, try_step(NaN)".into(),
        || {
            let mut o = sgd(0.1)?;
            let mut sched = ReduceLROnPlateau::new(&o, "min", 0.5, usize::MAX, 1e-4, "rel", 0, 0.0, 1e-8)?;
            let state: [(String, f64); 4] = [
                ("best".into(), 1.0),
                ("num_bad_epochs".into(), 1e300),
                ("cooldown_counter".into(), 0.0),
                ("last_epoch".into(), 1e300),
            ];
            sched.load_state_dict(&state)?;
            sched.try_step(&mut o, f64::NAN)
        },
    );
    s.timed("OneCycleLR(total usize::MAX)", "max_lr 0.1, total usize::MAX, 3 steps".into(), || {
        let mut o = sgd(0.1)?;
        let mut sched = OneCycleLR::new(&mut o, 0.1, usize::MAX, 0.3, "cos", 25.0, 1e4, true)?;
        for _ in 0..3 {
            sched.step(&mut o)?;
        }
        Ok(())
    });
}
