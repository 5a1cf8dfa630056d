//! torch's whole-sequence functional RNNs with flat weight lists (the aten ops behind `nn.LSTM`,
//! `nn.GRU` and `nn.RNN`): `torch.lstm`, `torch.gru`, `torch.rnn_tanh` and `torch.rnn_relu`.
//!
//! `params` lists, for each layer and then each direction, `w_ih`, `w_hh` and (with
//! `has_biases`) `b_ih`, `b_hh`, then (a projected LSTM only) `w_hr`, as `nn.RNN`'s
//! `_flat_weights`. Each step is the matching cell of [`super::rnn_cells`] (the projected LSTM's
//! composed alike), so everything is differentiable through those ops. Between layers (not after
//! the last) dropout with probability `dropout` applies when `train`; as torch, `dropout` is only
//! checked to lie in `[0, 1]` there. An empty sequence is an error, as torch's.

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

/// One LSTM step with a projection (`nn.LSTM(proj_size > 0)`): the gates from `x W_ihᵀ + b_ih +
/// h W_hhᵀ + b_hh` (`h` is `[N, proj]`, `W_hh` `[4H, proj]`), `c' = f ⊙ c + i ⊙ g` and
/// `h' = (o ⊙ tanh(c')) W_hrᵀ` (`W_hr` `[proj, H]`); returns `(h', c')`.
fn lstm_proj_step(
    x: &Tensor,
    h: &Tensor,
    c: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b: Option<(&Tensor, &Tensor)>,
    w_hr: &Tensor,
) -> Result<(Tensor, Tensor)> {
    for (name, w) in [("weight_ih", w_ih), ("weight_hh", w_hh), ("weight_hr", w_hr)] {
        if w.rank() != 2 {
            return Err(Error::shape(format!("{name} must be 2-D, but got {}-D", w.rank())));
        }
    }
    let hidden = w_hr.dims()[1];
    if w_hh.dims()[0] != 4 * hidden {
        return Err(Error::shape(format!(
            "weight_hh first dim must be 4 * hidden_size = {}, but got {}",
            4 * hidden,
            w_hh.dims()[0]
        )));
    }
    let (b_ih, b_hh) = (b.map(|b| b.0), b.map(|b| b.1));
    let gates = x.linear(w_ih, b_ih)?.add(&h.linear(w_hh, b_hh)?)?;
    let gate = |k: usize| gates.narrow(1, (k * hidden) as isize, hidden);
    let i = gate(0)?.sigmoid()?;
    let f = gate(1)?.sigmoid()?;
    let g = gate(2)?.tanh()?;
    let o = gate(3)?.sigmoid()?;
    let cy = f.mul(c)?.add(&i.mul(&g)?)?;
    let hy = o.mul(&cy.tanh()?)?.linear(w_hr, None)?;
    Ok((hy, cy))
}

/// One step of `kind` from state `(h, c)` (`c` only for the LSTM) with one direction's weights
/// `w`: `w_ih, w_hh[, b_ih, b_hh][, w_hr]` (`w_hr` only for a projected LSTM).
fn step(
    kind: Kind,
    x: &Tensor,
    h: &Tensor,
    c: Option<&Tensor>,
    w: &[Tensor],
    has_biases: bool,
    proj: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let (b_ih, b_hh) = if has_biases { (Some(&w[2]), Some(&w[3])) } else { (None, None) };
    match kind {
        Kind::Lstm => {
            let c = c.ok_or_else(|| Error::msg("lstm expects two hidden states"))?;
            let (h, c) = if proj {
                let bias = b_ih.zip(b_hh);
                lstm_proj_step(x, h, c, &w[0], &w[1], bias, &w[w.len() - 1])?
            } else {
                lstm_cell(x, (h, c), &w[0], &w[1], b_ih, b_hh)?
            };
            Ok((h, Some(c)))
        }
        Kind::Gru => Ok((gru_cell(x, h, &w[0], &w[1], b_ih, b_hh)?, None)),
        Kind::Tanh => Ok((rnn_tanh_cell(x, h, &w[0], &w[1], b_ih, b_hh)?, None)),
        Kind::Relu => Ok((rnn_relu_cell(x, h, &w[0], &w[1], b_ih, b_hh)?, None)),
    }
}

/// Runs `kind` over the whole sequence: `(output, h_n, c_n)` (`c_n` only for the LSTM). `proj`
/// (LSTM only) means each direction's weights end with `w_hr` (torch's `has_projections`).
fn run(
    kind: Kind,
    input: &Tensor,
    h0: &Tensor,
    c0: Option<&Tensor>,
    params: &[Tensor],
    o: Opts,
    proj: bool,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    if input.rank() != 3 {
        return Err(Error::shape(format!("input must have 3 dimensions, got {}", input.rank())));
    }
    let dirs = if o.bidirectional { 2 } else { 1 };
    // torch's `gather_params`: 4 (2 without biases) tensors a direction, one more with projections.
    let per = (if o.has_biases { 4 } else { 2 }) + usize::from(proj);
    let stacked = o.num_layers.checked_mul(dirs);
    if stacked.and_then(|n| n.checked_mul(per)) != Some(params.len()) {
        return Err(Error::msg("got an incorrect number of RNN parameters"));
    }
    for h in std::iter::once(h0).chain(c0) {
        if h.rank() != 3 || Some(h.dims()[0]) != stacked {
            return Err(Error::msg("Expected more hidden states in stacked_rnn"));
        }
    }
    // Time-major [T, N, F].
    let mut layer_input = if o.batch_first { input.transpose(0, 1)? } else { input.clone() };
    let steps = layer_input.dims()[0];
    if steps == 0 {
        return Err(Error::msg("Expected sequence length to be larger than 0 in RNN"));
    }
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
                let (nh, nc) = step(kind, &xs[t], &h, c.as_ref(), w, o.has_biases, proj)?;
                ys.push(nh.clone());
                h = nh;
                c = nc;
            }
            if dir == 1 {
                ys.reverse();
            }
            let refs: Vec<&Tensor> = ys.iter().collect();
            outs.push(Tensor::stack(&refs, 0)?);
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
        // As torch, `p` is only checked (and used) where dropout applies: a nonzero `p` in
        // training between layers.
        if o.dropout != 0.0 && o.train && layer + 1 < o.num_layers {
            if !(0.0..=1.0).contains(&o.dropout) {
                return Err(Error::msg(format!(
                    "dropout probability has to be between 0 and 1, but got {}",
                    o.dropout
                )));
            }
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
/// `[T, N, D * H]` (batch-first likewise). `hx` must hold exactly two tensors. With projections
/// (torch's rule: `h0`'s last size `P` differs from `c0`'s `H`), each direction's weights end
/// with `w_hr` `[P, H]` (so 5 tensors with biases, 3 without), `w_hh` is `[4H, P]`, the hidden
/// state (and `output`, `[T, N, D * P]`) is `(o ⊙ tanh(c)) W_hrᵀ`, as `nn.LSTM(proj_size=P)`.
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
    // torch's `has_projections`: the hidden and cell states differ in their last size.
    let proj = hx[0].rank() == 3 && hx[1].rank() == 3 && hx[0].dims()[2] != hx[1].dims()[2];
    let (out, h, c) = run(Kind::Lstm, input, &hx[0], Some(&hx[1]), params, o, proj)?;
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
    let (out, h, _) = run(Kind::Gru, input, hx, None, params, o, false)?;
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
    let (out, h, _) = run(Kind::Tanh, input, hx, None, params, o, false)?;
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
    let (out, h, _) = run(Kind::Relu, input, hx, None, params, o, false)?;
    Ok((out, h))
}
