//! `nn::utils::rnn`'s packed sequences (`pack_padded_sequence`, `pad_packed_sequence`,
//! `pack_sequence`, `unpack_sequence`, `unpad_sequence`, `PackedSequence`) and `LSTM`/`GRU`/`RNN`
//! `forward_packed` against PyTorch in float64: for every case of `packed_sequences_golden.rs` (written
//! by `nn/tests/make_packed_sequences_golden.py`) the module's state-dict keys must be torch's, in
//! torch's order, torch's values are loaded by key (strict), and the outputs (a packed sequence as
//! its fields, the indices only where torch has them) and the gradients of
//! `sum_k (out_k * cot_k).sum()` for the inputs and every parameter are compared. Plus torch's
//! error messages, and the packed layers against the dense ones run on each sequence alone.

use oxtorch_nn::utils::rnn::{
    invert_permutation, pack_padded_sequence, pack_sequence, pad_packed_sequence, unpack_sequence,
    unpad_sequence, PackedSequence, SequenceLengths,
};
use oxtorch_nn::*;
use oxtorch_tensor::{DType, Result, Tensor};

use super::golden_case::{err, float64, module, stateless, zeros, Inputs, ModuleGolden as Golden, Run, T};

include!("packed_sequences_golden.rs");

/// A packed sequence's fields as the script writes them: the indices only when present.
fn fields(p: &PackedSequence) -> Vec<Tensor> {
    let mut v = vec![p.data.clone(), p.batch_sizes.clone()];
    v.extend(p.sorted_indices.clone());
    v.extend(p.unsorted_indices.clone());
    v
}

/// The script's `pp`: packs `input` and pads it back (with `pad_batch_first`): the packed fields,
/// the padded batch and the lengths.
fn pp(
    input: &Tensor,
    lengths: impl SequenceLengths,
    batch_first: bool,
    enforce_sorted: bool,
    value: f64,
    total_length: Option<usize>,
    pad_batch_first: bool,
) -> Result<Vec<Tensor>> {
    let p = pack_padded_sequence(input, lengths, batch_first, enforce_sorted)?;
    let (padded, lens) = pad_packed_sequence(&p, pad_batch_first, value, total_length)?;
    let mut v = fields(&p);
    v.extend([padded, lens]);
    Ok(v)
}

/// The script's `ps`: packs the three sequences, then the packed fields, the sequences unpacked,
/// and the batch padded batch-first with its lengths.
fn ps(seqs: &[Tensor], enforce_sorted: bool) -> Result<Vec<Tensor>> {
    let p = pack_sequence(seqs, enforce_sorted)?;
    let (padded, lens) = pad_packed_sequence(&p, true, 0.0, None)?;
    let mut v = fields(&p);
    v.extend(unpack_sequence(&p)?);
    v.extend([padded, lens]);
    Ok(v)
}

/// The script's `rnn_call`: packs `x`, runs `f` (the layer's `forward_packed`, returning the
/// packed output and its final states), then the packed fields, the states and, with
/// `pad = Some((batch_first, total_length))`, the output padded back with its lengths.
fn packed_run(
    x: &Tensor,
    lengths: &[i64],
    batch_first: bool,
    enforce_sorted: bool,
    pad: Option<(bool, Option<usize>)>,
    f: impl FnOnce(&PackedSequence) -> Result<(PackedSequence, Vec<Tensor>)>,
) -> Result<Vec<Tensor>> {
    let p = pack_padded_sequence(x, lengths, batch_first, enforce_sorted)?;
    let (out, states) = f(&p)?;
    let mut v = fields(&out);
    v.extend(states);
    if let Some((bf, total)) = pad {
        let (padded, lens) = pad_packed_sequence(&out, bf, 0.0, total)?;
        v.extend([padded, lens]);
    }
    Ok(v)
}

/// The script's `manual`: a packed sequence made from its fields (the unsorted indices inverted
/// from the sorted ones), padded back.
fn manual(data: &Tensor) -> Result<Vec<Tensor>> {
    let longs = |v: &[i64]| Tensor::from_vec(v.to_vec(), [v.len()]);
    let p = PackedSequence::new(data.clone(), longs(&[3, 2, 1])?, Some(longs(&[2, 0, 1])?), None)?;
    let (padded, lens) = pad_packed_sequence(&p, false, -1.0, None)?;
    Ok(vec![p.unsorted_indices.clone().expect("the inverted indices"), padded, lens])
}

/// Recurrent-layer options with torch's defaults otherwise.
fn options(num_layers: usize, bidirectional: bool, proj_size: usize) -> RnnOptions {
    RnnOptions { num_layers, bidirectional, proj_size, ..Default::default() }
}

/// The module and call of each case (the same arguments as the script's).
fn run(g: &Golden, c: &Inputs) -> Result<Run> {
    let t = |k: &str| c.t(k);
    let x = || t("input");
    let seqs = || vec![t("s0").clone(), t("s1").clone(), t("s2").clone()];
    let ints = |v: &[i64]| Tensor::from_vec(v.to_vec(), [v.len()]);
    match g.name {
        "pack_pad_sorted" => stateless(pp(x(), [4, 3, 1], false, true, 0.0, None, false)),
        "pack_pad_sorted_batch_first_total_length" => {
            stateless(pp(x(), [4, 2, 2], true, true, -1.0, Some(6), true))
        }
        "pack_pad_unsorted_ties" => stateless(pp(x(), [2, 4, 1, 4], false, false, 0.5, None, false)),
        "pack_pad_unsorted_batch_first_no_trailing" => {
            stateless(pp(x(), [1, 5, 3], true, false, 2.0, Some(7), true))
        }
        "pack_pad_unsorted_already_sorted_4d" => stateless(pp(x(), [3, 2], false, false, 0.0, None, false)),
        "pack_pad_tensor_lengths" => {
            let lengths = Tensor::from_vec(vec![3.0f64, 4.9, 2.0], [3])?;
            stateless(pp(x(), &lengths, false, false, 0.0, Some(5), false))
        }
        "pack_pad_input_longer_than_lengths" => stateless(pp(x(), [3, 2], false, true, -2.0, None, false)),
        "pack_batch_first_pad_time_first" => stateless(pp(x(), [2, 4, 1], true, false, 0.0, None, false)),
        "pack_time_first_pad_batch_first" => stateless(pp(x(), [2, 4, 1], false, false, 1.0, Some(4), true)),
        "pack_sequence_unsorted" | "pack_sequence_1d" => stateless(ps(&seqs(), false)),
        "pack_sequence_sorted" => stateless(ps(&seqs(), true)),
        "unpad_sequence" => stateless(unpad_sequence(t("padded"), ints(&[4, -1, 6])?, false)),
        "unpad_sequence_batch_first" => stateless(unpad_sequence(t("padded"), ints(&[2, 4, 1])?, true)),
        "pad_manual_packed_sequence" => stateless(manual(t("data"))),
        "lstm_packed_2layer_bidir_proj" => module(g, LSTM::new(3, 5, options(2, true, 2))?, |m| {
            packed_run(t("x"), &[2, 4, 3], false, false, Some((false, None)), |p| {
                let (out, (h, c)) = m.forward_packed(p, Some((t("h0"), t("c0"))))?;
                Ok((out, vec![h, c]))
            })
        }),
        "lstm_packed_sequence_sorted_no_hx" => module(g, LSTM::new(3, 4, options(1, false, 0))?, |m| {
            let (out, (h, c)) = m.forward_packed(&pack_sequence(&seqs(), true)?, None)?;
            let mut v = fields(&out);
            v.extend([h, c]);
            Ok(v)
        }),
        "lstm_packed_batch_first_bidir_no_hx" => {
            let o = RnnOptions { batch_first: true, ..options(1, true, 0) };
            module(g, LSTM::new(2, 3, o)?, |m| {
                packed_run(t("x"), &[1, 3, 3, 2], true, false, Some((true, Some(5))), |p| {
                    let (out, (h, c)) = m.forward_packed(p, None)?;
                    Ok((out, vec![h, c]))
                })
            })
        }
        "lstm_packed_3layer_proj_sorted" => module(g, LSTM::new(3, 4, options(3, false, 2))?, |m| {
            packed_run(t("x"), &[3, 2, 2], false, true, None, |p| {
                let (out, (h, c)) = m.forward_packed(p, Some((t("h0"), t("c0"))))?;
                Ok((out, vec![h, c]))
            })
        }),
        "gru_packed_2layer_bidir" => module(g, GRU::new(3, 4, options(2, true, 0))?, |m| {
            packed_run(t("x"), &[1, 3, 2], false, false, Some((false, Some(4))), |p| {
                let (out, h) = m.forward_packed(p, Some(t("h0")))?;
                Ok((out, vec![h]))
            })
        }),
        "gru_packed_no_bias_sorted_no_hx" => {
            module(g, GRU::new(2, 3, RnnOptions { bias: false, ..options(1, false, 0) })?, |m| {
                packed_run(t("x"), &[3, 3, 1], false, true, None, |p| {
                    let (out, h) = m.forward_packed(p, None)?;
                    Ok((out, vec![h]))
                })
            })
        }
        "rnn_tanh_packed_bidir" => module(g, RNN::new(3, 4, "tanh", options(1, true, 0))?, |m| {
            packed_run(t("x"), &[2, 3, 1, 3], false, false, None, |p| {
                let (out, h) = m.forward_packed(p, Some(t("h0")))?;
                Ok((out, vec![h]))
            })
        }),
        "rnn_relu_packed_2layer_sorted_no_hx" => {
            let o = RnnOptions { batch_first: true, ..options(2, false, 0) };
            module(g, RNN::new(2, 3, "relu", o)?, |m| {
                packed_run(t("x"), &[4, 2], true, true, Some((true, None)), |p| {
                    let (out, h) = m.forward_packed(p, None)?;
                    Ok((out, vec![h]))
                })
            })
        }
        other => panic!("no call for golden case {other}"),
    }
}

/// The recurrent layers compose many ops and may round differently from torch's kernels; packing
/// and padding only copy (gradients add a few cotangents).
fn tol(g: &Golden) -> f64 {
    if g.params.is_empty() {
        1e-12
    } else {
        1e-9
    }
}

#[test]
fn every_case_matches_pytorch_values_and_gradients() -> Result<()> {
    assert_eq!(GOLDEN.len(), 23, "the golden file's case count changed");
    for g in GOLDEN {
        let inputs = Inputs(
            g.inputs
                .iter()
                .map(|(k, v)| {
                    let t = float64(v).requires_grad_(g.input_grads.iter().any(|(n, _)| n == k)).unwrap();
                    (*k, t)
                })
                .collect(),
        );
        let rtol = tol(g);
        let outs_and_params = run(g, &inputs).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        g.check(&inputs, outs_and_params, rtol)?;
    }
    Ok(())
}

fn longs(v: &[i64]) -> Tensor {
    Tensor::from_vec(v.to_vec(), [v.len()]).unwrap()
}

/// The bad call of each `ERRORS` entry (the script's `ERROR_CALLS`), its error message.
fn error_of(name: &str) -> String {
    let z34 = zeros(&[3, 4]);
    let p32 = pack_padded_sequence(&zeros(&[3, 2, 3]), [3, 2], false, true).unwrap();
    let p32u = pack_padded_sequence(&zeros(&[3, 2, 3]), [2, 3], false, false).unwrap();
    let gru = || GRU::new(3, 4, RnnOptions::default()).unwrap();
    let ones = |n: usize| Tensor::ones([n], ()).unwrap();
    let arange6 = Tensor::from_vec((0..6).map(|i| i as f32).collect::<Vec<_>>(), [6]).unwrap();
    match name {
        "pack_lengths_not_sorted" => err(pack_padded_sequence(&z34, [3, 4, 2, 1], false, true)),
        "pack_length_zero" => err(pack_padded_sequence(&z34, [1, 3, 2, 0], false, true)),
        "pack_length_negative_unsorted" => err(pack_padded_sequence(&z34, [-1, 3, 1, 3], false, false)),
        "pack_empty" => err(pack_padded_sequence(&zeros(&[0, 4]), [3, 2, 1, 1], false, true)),
        "pack_lengths_count" => err(pack_padded_sequence(&z34, [3, 2, 1], false, true)),
        "pack_lengths_count_batch_first" => err(pack_padded_sequence(&z34, [2, 2, 1, 1], true, true)),
        "pack_lengths_count_unsorted" => err(pack_padded_sequence(&z34, [3, 2, 1, 1, 1], false, false)),
        "pack_lengths_2d" => {
            let lengths = Tensor::from_vec(vec![3i64, 2, 1, 1], [2, 2]).unwrap();
            err(pack_padded_sequence(&z34, &lengths, false, true))
        }
        "pack_1d_batch_first" => err(pack_padded_sequence(&zeros(&[3]), [3], true, true)),
        "pad_total_length_short" => {
            let p = pack_padded_sequence(&z34, [3, 3, 2, 1], false, true).unwrap();
            err(pad_packed_sequence(&p, false, 0.0, Some(2)))
        }
        "pad_batch_sizes_float" => {
            let sizes = Tensor::from_vec(vec![3.0f32, 2.0, 1.0], [3]).unwrap();
            let p = PackedSequence::new(arange6, sizes, None, None).unwrap();
            err(pad_packed_sequence(&p, false, 0.0, None))
        }
        "pad_int_nan" => {
            let p =
                pack_padded_sequence(&z34.to_dtype(DType::I64).unwrap(), [3, 3, 2, 1], false, true).unwrap();
            err(pad_packed_sequence(&p, false, f64::NAN, None))
        }
        "pad_unsorted_indices_out_of_range" => {
            let p = PackedSequence::new(
                arange6,
                longs(&[3, 2, 1]),
                Some(longs(&[2, 0, 1])),
                Some(longs(&[2, 2, 5])),
            )
            .unwrap();
            err(pad_packed_sequence(&p, false, 0.0, None))
        }
        "pack_sequence_scalar" => {
            err(pack_sequence(&[Tensor::scalar_tensor(1.0, ()).unwrap(), ones(2)], true))
        }
        "pack_sequence_empty_list" => err(pack_sequence(&[], true)),
        "pack_sequence_not_sorted" => err(pack_sequence(&[ones(2), ones(3)], true)),
        "pack_sequence_empty_sequence" => err(pack_sequence(&[ones(2), ones(0)], true)),
        "unpad_lengths_short" => err(unpad_sequence(&zeros(&[3, 2]), longs(&[1]), true)),
        "unpad_lengths_long" => err(unpad_sequence(&zeros(&[3, 2]), longs(&[1, 2, 1, 1]), true)),
        "invert_permutation_out_of_range" => err(invert_permutation(&longs(&[2, 0, 3]))),
        "gru_packed_3d_data" => {
            let p = pack_padded_sequence(&zeros(&[3, 2, 1, 3]), [3, 2], false, true).unwrap();
            err(gru().forward_packed(&p, None))
        }
        "gru_packed_input_size" => {
            let p = pack_padded_sequence(&zeros(&[3, 2, 5]), [3, 2], false, true).unwrap();
            err(gru().forward_packed(&p, None))
        }
        "gru_packed_hidden_size" => err(gru().forward_packed(&p32, Some(&zeros(&[1, 3, 4])))),
        "rnn_packed_hidden_size" => {
            let rnn = RNN::new(3, 4, "tanh", options(2, false, 0)).unwrap();
            err(rnn.forward_packed(&p32, Some(&zeros(&[1, 2, 4]))))
        }
        "gru_packed_hidden_permuted" => err(gru().forward_packed(&p32u, Some(&zeros(&[1, 1, 4])))),
        other => panic!("no call for error case {other}"),
    }
}

#[test]
fn errors_are_torch_s() {
    assert_eq!(ERRORS.len(), 25, "the golden file's error count changed");
    for (name, want) in ERRORS {
        assert_eq!(error_of(name), *want, "{name}");
    }
}

/// Where torch has no error (or fails in a kernel), oxtorch's own messages.
#[test]
fn oxtorch_only_errors() -> Result<()> {
    let z34 = zeros(&[3, 4]);
    // torch builds a PackedSequence whose data is shorter than its batch sizes say.
    assert_eq!(
        err(pack_padded_sequence(&z34, [5, 3, 2, 1], false, true)),
        "pack_padded_sequence: a sequence length (5) is larger than the input's 3 time steps"
    );
    // torch's LSTM skips its checks on packed input (its kernel fails); oxtorch checks as torch's
    // LSTM does for a padded input.
    let lstm = LSTM::new(3, 4, RnnOptions::default())?;
    let p = pack_padded_sequence(&zeros(&[3, 2, 3]), [3, 2], false, true)?;
    let (h, c) = (zeros(&[1, 2, 4]), zeros(&[1, 3, 4]));
    assert_eq!(
        err(lstm.forward_packed(&p, Some((&c, &h)))),
        "Expected hidden[0] size (1, 2, 4), got [1, 3, 4]"
    );
    assert_eq!(
        err(lstm.forward_packed(&p, Some((&h, &c)))),
        "Expected hidden[1] size (1, 2, 4), got [1, 3, 4]"
    );
    let p5 = pack_padded_sequence(&zeros(&[3, 2, 5]), [3, 2], false, true)?;
    assert_eq!(
        err(lstm.forward_packed(&p5, None)),
        "input.size(-1) must be equal to input_size. Expected 3, got 5"
    );
    // Hand-made batch sizes and data that do not fit.
    let bad = PackedSequence::new(zeros(&[6, 3]), longs(&[2, 3, 1]), None, None)?;
    assert_eq!(
        err(pad_packed_sequence(&bad, false, 0.0, None)),
        "batch_sizes must be positive and non-increasing, but got [2, 3, 1]"
    );
    assert_eq!(
        err(lstm.forward_packed(&bad, None)),
        "batch_sizes must be positive and non-increasing, but got [2, 3, 1]"
    );
    let short = PackedSequence::new(zeros(&[5, 3]), longs(&[3, 2, 1]), None, None)?;
    assert_eq!(
        err(pad_packed_sequence(&short, false, 0.0, None)),
        "pad_packed_sequence: data of shape [5, 3] does not hold the 6 steps that batch_sizes count"
    );
    Ok(())
}

#[test]
fn packed_sequence_fields_follow_torch() -> Result<()> {
    // torch: invert_permutation(tensor([2, 0, 1])) is tensor([1, 2, 0])
    assert_eq!(invert_permutation(&longs(&[2, 0, 1]))?.to_vec::<i64>()?, vec![1, 2, 0]);
    // torch's docstring example: pack_padded_sequence(tensor([[1, 2, 0], [3, 0, 0], [4, 5, 6]]),
    // [2, 1, 3], batch_first=True, enforce_sorted=False) is data [4, 1, 3, 5, 2, 6], batch_sizes
    // [3, 2, 1], sorted_indices [2, 0, 1], unsorted_indices [1, 2, 0].
    let seq = Tensor::from_vec(vec![1i64, 2, 0, 3, 0, 0, 4, 5, 6], [3, 3])?;
    let lengths: Vec<usize> = vec![2, 1, 3];
    let p = pack_padded_sequence(&seq, &lengths, true, false)?;
    assert_eq!(p.data.to_vec::<i64>()?, vec![4, 1, 3, 5, 2, 6]);
    assert_eq!((p.batch_sizes.dtype(), p.batch_sizes.to_vec::<i64>()?), (DType::I64, vec![3, 2, 1]));
    assert_eq!(p.sorted_indices.as_ref().unwrap().to_vec::<i64>()?, vec![2, 0, 1]);
    assert_eq!(p.unsorted_indices.as_ref().unwrap().to_vec::<i64>()?, vec![1, 2, 0]);
    assert_eq!(p.batch_sizes_vec()?, vec![3, 2, 1]);
    let (padded, lens) = pad_packed_sequence(&p, true, 0.0, None)?;
    assert_eq!(padded.to_vec::<i64>()?, seq.to_vec::<i64>()?);
    assert_eq!(lens.to_vec::<i64>()?, vec![2, 1, 3]);
    // unpack_sequence gives each sequence back, in the caller's order.
    let back: Vec<Vec<i64>> = unpack_sequence(&p)?.iter().map(|s| s.to_vec::<i64>().unwrap()).collect();
    assert_eq!(back, vec![vec![1, 2], vec![3], vec![4, 5, 6]]);
    // Lengths as a slice, a Vec<i64> or a tensor; enforce_sorted leaves the indices out.
    let x = zeros(&[3, 2, 1]);
    let sizes = |p: PackedSequence| p.batch_sizes.to_vec::<i64>().unwrap();
    assert_eq!(sizes(pack_padded_sequence(&x, &[3i64, 1][..], false, true)?), vec![2, 1, 1]);
    assert_eq!(sizes(pack_padded_sequence(&x, vec![2i64, 2], false, true)?), vec![2, 2]);
    assert_eq!(sizes(pack_padded_sequence(&x, longs(&[1, 3]), false, false)?), vec![2, 1, 1]);
    let sorted = pack_padded_sequence(&x, [3, 2], false, true)?;
    assert!(sorted.sorted_indices.is_none() && sorted.unsorted_indices.is_none());
    // PackedSequence::to_dtype converts the data only.
    let p32 = p.to_dtype(DType::F32)?;
    assert_eq!(p32.data.dtype(), DType::F32);
    assert_eq!(p32.batch_sizes.dtype(), DType::I64);
    Ok(())
}

/// Each sequence of a packed batch runs as if alone: its outputs and final states are the dense
/// layer's on that sequence by itself (the shrinking batch never mixes in padding, and the reverse
/// direction starts at the sequence's own end).
#[test]
fn packed_layers_run_each_sequence_as_if_alone() -> Result<()> {
    let lens = [2usize, 4, 1, 3];
    let seqs: Vec<Tensor> = lens
        .iter()
        .enumerate()
        .map(|(k, &l)| {
            let v: Vec<f64> = (0..l * 3).map(|i| (((i + 5 * k) * 7 % 13) as f64 - 6.0) / 5.0).collect();
            Tensor::from_vec(v, [l, 3]).unwrap()
        })
        .collect();
    let p = pack_sequence(&seqs, false)?;
    let close = |a: &Tensor, b: &Tensor, what: &str| {
        let d = a.sub(b).unwrap().abs().unwrap().max().unwrap().item::<f64>().unwrap();
        assert!(d < 1e-12, "{what}: differs by {d}");
    };

    let mut lstm = LSTM::new(3, 5, options(2, true, 2))?;
    lstm.double()?;
    let h0 = Tensor::from_vec((0..32).map(|i| (i as f64 - 16.0) / 20.0).collect::<Vec<_>>(), [4, 4, 2])?;
    let c0 = Tensor::from_vec((0..80).map(|i| (i as f64 - 40.0) / 50.0).collect::<Vec<_>>(), [4, 4, 5])?;
    let (out, (h_n, c_n)) = lstm.forward_packed(&p, Some((&h0, &c0)))?;
    let outs = unpack_sequence(&out)?;
    for (k, s) in seqs.iter().enumerate() {
        let b = k as isize;
        let (h0k, c0k) = (h0.narrow(1, b, 1)?, c0.narrow(1, b, 1)?);
        let (y, (h, c)) = lstm.forward(&s.unsqueeze(1)?, Some((&h0k, &c0k)))?;
        close(&outs[k], &y.squeeze_dims(1)?, "lstm output");
        close(&h_n.narrow(1, b, 1)?, &h, "lstm h_n");
        close(&c_n.narrow(1, b, 1)?, &c, "lstm c_n");
    }

    let mut gru = GRU::new(3, 4, options(1, true, 0))?;
    gru.double()?;
    let (out, h_n) = gru.forward_packed(&p, None)?;
    let outs = unpack_sequence(&out)?;
    for (k, s) in seqs.iter().enumerate() {
        let (y, h) = gru.forward(&s.unsqueeze(1)?, None)?;
        close(&outs[k], &y.squeeze_dims(1)?, "gru output");
        close(&h_n.narrow(1, k as isize, 1)?, &h, "gru h_n");
    }

    let mut rnn = RNN::new(3, 4, "tanh", options(2, false, 0))?;
    rnn.double()?;
    let (out, h_n) = rnn.forward_packed(&p, None)?;
    let outs = unpack_sequence(&out)?;
    for (k, s) in seqs.iter().enumerate() {
        let (y, h) = rnn.forward(&s.unsqueeze(1)?, None)?;
        close(&outs[k], &y.squeeze_dims(1)?, "rnn output");
        close(&h_n.narrow(1, k as isize, 1)?, &h, "rnn h_n");
    }
    Ok(())
}

/// `unpad_sequence` gives copies, as torch's mask indexing: writing into a piece leaves the padded
/// batch alone.
#[test]
fn unpadded_pieces_are_copies() -> Result<()> {
    let padded = Tensor::arange(6, DType::F64)?.reshape([3, 2])?;
    let pieces = oxtorch_nn::utils::rnn::unpad_sequence(&padded, [3i64, 2], false)?;
    pieces[0].fill_(-1.0)?;
    assert_eq!(padded.to_vec2::<f64>()?, vec![vec![0.0, 1.0], vec![2.0, 3.0], vec![4.0, 5.0]]);
    assert_eq!(pieces[1].to_vec::<f64>()?, vec![1.0, 3.0]);
    Ok(())
}
