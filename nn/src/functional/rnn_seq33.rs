//! torch's whole-sequence functional RNNs with flat weight lists (the aten ops behind `nn.LSTM`,
//! `nn.GRU` and `nn.RNN`): `torch.lstm`, `torch.gru`, `torch.rnn_tanh` and `torch.rnn_relu`.
//!
//! `params` lists, for each layer and then each direction, `w_ih`, `w_hh` and (with
//! `has_biases`) `b_ih`, `b_hh`, as `nn.RNN`'s `_flat_weights`. Each step is the matching cell of
//! [`super::rnn_cells`], so everything is differentiable through those ops. Between layers (not
//! after the last) dropout with probability `dropout` applies when `train`.

use oxtorch_tensor::{Error, Result, Tensor};

use super::rnn_cells::{gru_cell, lstm_cell, rnn_relu_cell, rnn_tanh_cell};

/// The recurrence a sequence runs.
#[derive(Clone, Copy)]
enum Kind {
    Lstm,
    Gru,
    Tanh,
    Relu,
}

/// The shared options of the sequence ops (torch's trailing arguments).
#[derive(Clone, Copy)]
struct Opts {
    has_biases: bool,
    num_layers: usize,
    dropout: f64,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
}

/// One step of `kind` from state `(h, c)` (`c` only for the LSTM).
fn step(
    kind: Kind,
    x: &Tensor,
    h: &Tensor,
    c: Option<&Tensor>,
    w: &[Tensor],
) -> Result<(Tensor, Option<Tensor>)> {
    let (b_ih, b_hh) = if w.len() == 4 { (Some(&w[2]), Some(&w[3])) } else { (None, None) };
    match kind {
        Kind::Lstm => {
            let c = c.ok_or_else(|| Error::msg("lstm expects two hidden states"))?;
            let (h, c) = lstm_cell(x, (h, c), &w[0], &w[1], b_ih, b_hh)?;
            Ok((h, Some(c)))
        }
        Kind::Gru => Ok((gru_cell(x, h, &w[0], &w[1], b_ih, b_hh)?, None)),
        Kind::Tanh => Ok((rnn_tanh_cell(x, h, &w[0], &w[1], b_ih, b_hh)?, None)),
        Kind::Relu => Ok((rnn_relu_cell(x, h, &w[0], &w[1], b_ih, b_hh)?, None)),
    }
}

/// Runs `kind` over the whole sequence: `(output, h_n, c_n)` (`c_n` only for the LSTM).
fn run(
    kind: Kind,
    input: &Tensor,
    h0: &Tensor,
    c0: Option<&Tensor>,
    params: &[Tensor],
    o: Opts,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    if input.rank() != 3 {
        return Err(Error::shape(format!("input must have 3 dimensions, got {}", input.rank())));
    }
    let dirs = if o.bidirectional { 2 } else { 1 };
    let per = if o.has_biases { 4 } else { 2 };
    if params.len() != o.num_layers * dirs * per {
        return Err(Error::msg("got an incorrect number of RNN parameters"));
    }
    if !(0.0..=1.0).contains(&o.dropout) {
        return Err(Error::msg(format!(
            "dropout should be a number in range [0, 1] representing the probability of an element being zeroed, but got {}",
            o.dropout
        )));
    }
    for h in std::iter::once(h0).chain(c0) {
        if h.rank() != 3 || h.dims()[0] != o.num_layers * dirs {
            return Err(Error::msg("Expected more hidden states in stacked_rnn"));
        }
    }
    // Time-major [T, N, F].
    let mut layer_input = if o.batch_first { input.transpose(0, 1)? } else { input.clone() };
    let steps = layer_input.dims()[0];
    let (mut h_n, mut c_n) = (Vec::new(), Vec::new());
    for layer in 0..o.num_layers {
        let xs = layer_input.unbind(0)?;
        let mut outs = Vec::with_capacity(dirs);
        for dir in 0..dirs {
            let idx = layer * dirs + dir;
            let w = &params[idx * per..(idx + 1) * per];
            let mut h = h0.select(0, idx as isize)?;
            let mut c = c0.map(|c| c.select(0, idx as isize)).transpose()?;
            let mut ys: Vec<Tensor> = Vec::with_capacity(steps);
            for t in 0..steps {
                let t = if dir == 1 { steps - 1 - t } else { t };
                let (nh, nc) = step(kind, &xs[t], &h, c.as_ref(), w)?;
                ys.push(nh.clone());
                h = nh;
                c = nc;
            }
            if dir == 1 {
                ys.reverse();
            }
            let out = if ys.is_empty() {
                let mut shape = layer_input.dims().to_vec();
                shape[2] = h.dims()[1];
                Tensor::zeros(shape, h.same_options())?
            } else {
                let refs: Vec<&Tensor> = ys.iter().collect();
                Tensor::stack(&refs, 0)?
            };
            outs.push(out);
            h_n.push(h);
            if let Some(c) = c {
                c_n.push(c);
            }
        }
        layer_input = if dirs == 1 {
            outs.remove(0)
        } else {
            let refs: Vec<&Tensor> = outs.iter().collect();
            Tensor::cat(&refs, 2)?
        };
        if o.dropout > 0.0 && o.train && layer + 1 < o.num_layers {
            layer_input = layer_input.dropout(o.dropout, true)?;
        }
    }
    let output = if o.batch_first { layer_input.transpose(0, 1)? } else { layer_input };
    let stack = |v: &[Tensor]| -> Result<Tensor> {
        let refs: Vec<&Tensor> = v.iter().collect();
        Tensor::stack(&refs, 0)
    };
    let c_n = if c0.is_some() { Some(stack(&c_n)?) } else { None };
    Ok((output, stack(&h_n)?, c_n))
}

/// `torch.lstm(input, (h0, c0), params, has_biases, num_layers, dropout, train, bidirectional,
/// batch_first)`: `(output, h_n, c_n)`. `input` is `[T, N, I]` (`[N, T, I]` with
/// `batch_first`), `h0`/`c0` `[num_layers * D, N, H]` (`D = 2` when bidirectional); `output` is
/// `[T, N, D * H]` (batch-first likewise). `hx` must hold exactly two tensors.
#[allow(clippy::too_many_arguments)]
pub fn lstm(
    input: &Tensor,
    hx: &[Tensor],
    params: &[Tensor],
    has_biases: bool,
    num_layers: usize,
    dropout: f64,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    if hx.len() != 2 {
        return Err(Error::msg("lstm expects two hidden states"));
    }
    let o = Opts { has_biases, num_layers, dropout, train, bidirectional, batch_first };
    let (out, h, c) = run(Kind::Lstm, input, &hx[0], Some(&hx[1]), params, o)?;
    let c = c.ok_or_else(|| Error::msg("lstm expects two hidden states"))?;
    Ok((out, h, c))
}

/// `torch.gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
/// batch_first)`: `(output, h_n)`, shapes as [`lstm`]'s.
#[allow(clippy::too_many_arguments)]
pub fn gru(
    input: &Tensor,
    hx: &Tensor,
    params: &[Tensor],
    has_biases: bool,
    num_layers: usize,
    dropout: f64,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> Result<(Tensor, Tensor)> {
    let o = Opts { has_biases, num_layers, dropout, train, bidirectional, batch_first };
    let (out, h, _) = run(Kind::Gru, input, hx, None, params, o)?;
    Ok((out, h))
}

/// `torch.rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
/// batch_first)`: the Elman RNN with `tanh`; `(output, h_n)`, shapes as [`lstm`]'s.
#[allow(clippy::too_many_arguments)]
pub fn rnn_tanh(
    input: &Tensor,
    hx: &Tensor,
    params: &[Tensor],
    has_biases: bool,
    num_layers: usize,
    dropout: f64,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> Result<(Tensor, Tensor)> {
    let o = Opts { has_biases, num_layers, dropout, train, bidirectional, batch_first };
    let (out, h, _) = run(Kind::Tanh, input, hx, None, params, o)?;
    Ok((out, h))
}

/// `torch.rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
/// batch_first)`: the Elman RNN with `relu`; `(output, h_n)`, shapes as [`lstm`]'s.
#[allow(clippy::too_many_arguments)]
pub fn rnn_relu(
    input: &Tensor,
    hx: &Tensor,
    params: &[Tensor],
    has_biases: bool,
    num_layers: usize,
    dropout: f64,
    train: bool,
    bidirectional: bool,
    batch_first: bool,
) -> Result<(Tensor, Tensor)> {
    let o = Opts { has_biases, num_layers, dropout, train, bidirectional, batch_first };
    let (out, h, _) = run(Kind::Relu, input, hx, None, params, o)?;
    Ok((out, h))
}
