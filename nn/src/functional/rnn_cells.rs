//! The functional recurrent steps `torch.lstm_cell`, `torch.gru_cell`, `torch.rnn_tanh_cell` and
//! `torch.rnn_relu_cell` (`torch._VF.*`): one step from explicit weights, with torch's gate orders
//! (LSTM `i, f, g, o`; GRU `r, z, n` with `b_hn` inside `r ⊙ (W_hn h + b_hn)`) and torch's checks.
//! As torch's, they take batched inputs only: `input [N, input_size]`, hidden states
//! `[N, hidden_size]` (the `nn` cells add the unbatched form on top).

use oxtorch_tensor::{Error, Result, Tensor};

use crate::layers::rnn_cell::check_hidden;

/// torch's `check_rnn_cell_forward_input`: a 2-D input with `input_size` features.
fn check_input(input: &Tensor, input_size: usize) -> Result<()> {
    if input.rank() != 2 {
        return Err(Error::shape(format!(
            "Expected 2D input (batch x feature), but got {}D input",
            input.rank()
        )));
    }
    let got = input.dims()[1];
    if got != input_size {
        return Err(Error::shape(format!(
            "input has inconsistent input_size: got {got} expected {input_size}"
        )));
    }
    Ok(())
}

/// torch's check of the (2-D) weights: `gates * hidden_size` rows each.
fn check_weights(w_ih: &Tensor, w_hh: &Tensor, gates: usize) -> Result<()> {
    let hidden = w_hh.dims()[1];
    for (name, w) in [("weight_ih", w_ih), ("weight_hh", w_hh)] {
        if w.dims()[0] != gates * hidden {
            return Err(Error::shape(format!(
                "{name} first dim must be {gates} * hidden_size = {}, but got {}",
                gates * hidden,
                w.dims()[0]
            )));
        }
    }
    Ok(())
}

/// Runs every check of one step (the weights' ranks first, as indexing them needs them) and
/// returns the hidden size.
fn check_step(
    input: &Tensor,
    hidden: &[&Tensor],
    w_ih: &Tensor,
    w_hh: &Tensor,
    gates: usize,
) -> Result<usize> {
    for (name, w) in [("weight_ih", w_ih), ("weight_hh", w_hh)] {
        if w.rank() != 2 {
            return Err(Error::shape(format!("{name} must be 2-D, but got {}-D", w.rank())));
        }
    }
    let hidden_size = w_hh.dims()[1];
    // torch's order: the input, then the weights' first dims and the hidden states (the GRU
    // cell checks its hidden state before its weights, the others after).
    check_input(input, w_ih.dims()[1])?;
    let hidden_first = gates == 3;
    if !hidden_first {
        check_weights(w_ih, w_hh, gates)?;
    }
    for (label, hx) in hidden.iter().enumerate() {
        check_hidden(input, hx, hidden_size, label)?;
    }
    if hidden_first {
        check_weights(w_ih, w_hh, gates)?;
    }
    Ok(hidden_size)
}

/// Gate `k` (columns `k * hidden .. (k + 1) * hidden`) of `[N, gates * hidden]` pre-activations.
fn gate(t: &Tensor, k: usize, hidden: usize) -> Result<Tensor> {
    t.narrow(1, (k * hidden) as isize, hidden)
}

/// `torch.lstm_cell(input, (hx, cx), w_ih, w_hh, b_ih=None, b_hh=None)`: one LSTM step with
/// `gates = input W_ihᵀ + b_ih + hx W_hhᵀ + b_hh` split `i, f, g, o`; returns `(hy, cy)` with
/// `cy = σ(f) ⊙ cx + σ(i) ⊙ tanh(g)` and `hy = σ(o) ⊙ tanh(cy)`.
pub fn lstm_cell(
    input: &Tensor,
    hx: (&Tensor, &Tensor),
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let (h, c) = hx;
    let hidden = check_step(input, &[h, c], w_ih, w_hh, 4)?;
    let gates = input.linear(w_ih, b_ih)?.add(&h.linear(w_hh, b_hh)?)?;
    let i = gate(&gates, 0, hidden)?.sigmoid()?;
    let f = gate(&gates, 1, hidden)?.sigmoid()?;
    let g = gate(&gates, 2, hidden)?.tanh()?;
    let o = gate(&gates, 3, hidden)?.sigmoid()?;
    let cy = f.mul(c)?.add(&i.mul(&g)?)?;
    let hy = o.mul(&cy.tanh()?)?;
    Ok((hy, cy))
}

/// `torch.gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)`: one GRU step with
/// `gi = input W_ihᵀ + b_ih`, `gh = hx W_hhᵀ + b_hh` split `r, z, n`:
/// `r = σ(gi_r + gh_r)`, `z = σ(gi_z + gh_z)`, `n = tanh(gi_n + r ⊙ gh_n)`, `hy = n + z ⊙ (hx - n)`.
pub fn gru_cell(
    input: &Tensor,
    hx: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<Tensor> {
    let hidden = check_step(input, &[hx], w_ih, w_hh, 3)?;
    let gi = input.linear(w_ih, b_ih)?;
    let gh = hx.linear(w_hh, b_hh)?;
    let r = gate(&gi, 0, hidden)?.add(&gate(&gh, 0, hidden)?)?.sigmoid()?;
    let z = gate(&gi, 1, hidden)?.add(&gate(&gh, 1, hidden)?)?.sigmoid()?;
    let n = gate(&gi, 2, hidden)?.add(&r.mul(&gate(&gh, 2, hidden)?)?)?.tanh()?;
    n.add(&z.mul(&hx.sub(&n)?)?)
}

/// The Elman step's pre-activation `input W_ihᵀ + b_ih + hx W_hhᵀ + b_hh`, checked.
fn elman(
    input: &Tensor,
    hx: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<Tensor> {
    check_step(input, &[hx], w_ih, w_hh, 1)?;
    input.linear(w_ih, b_ih)?.add(&hx.linear(w_hh, b_hh)?)
}

/// `torch.rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)`:
/// `tanh(input W_ihᵀ + b_ih + hx W_hhᵀ + b_hh)`.
pub fn rnn_tanh_cell(
    input: &Tensor,
    hx: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<Tensor> {
    elman(input, hx, w_ih, w_hh, b_ih, b_hh)?.tanh()
}

/// `torch.rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None)`:
/// `relu(input W_ihᵀ + b_ih + hx W_hhᵀ + b_hh)`.
pub fn rnn_relu_cell(
    input: &Tensor,
    hx: &Tensor,
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<Tensor> {
    elman(input, hx, w_ih, w_hh, b_ih, b_hh)?.relu()
}
