//! `RNNCell`, `LSTMCell` and `GRUCell`: one step of the recurrent layers, with torch's parameter
//! names (`weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`), gate orders (LSTM `i, f, g, o`; GRU
//! `r, z, n`), initialisation (every parameter from `U(±1/√hidden_size)`), unbatched inputs and
//! shape errors. The step itself is the one [`crate::RNN`], [`crate::LSTM`] and [`crate::GRU`] run.

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;
use crate::layers::rnn::{gru_step, lstm_step, rnn_step};

/// A cell's `(weight_ih, weight_hh, bias_ih, bias_hh)`.
type CellParams = (Tensor, Tensor, Option<Tensor>, Option<Tensor>);

/// The parameters every cell has: `weight_ih [gates * hidden, input]`, `weight_hh
/// [gates * hidden, hidden]` and, with `bias`, `bias_ih` and `bias_hh` (`[gates * hidden]`), drawn
/// in that order from `U(±1/√hidden_size)` (0 for a zero hidden size), as torch's
/// `RNNCellBase.reset_parameters`.
fn cell_params(input_size: usize, hidden_size: usize, bias: bool, gates: usize) -> Result<CellParams> {
    let stdv = if hidden_size > 0 { 1.0 / (hidden_size as f64).sqrt() } else { 0.0 };
    let param = |shape: Vec<usize>| -> Result<Tensor> {
        let t = Tensor::empty(shape, DType::default_float())?;
        init::uniform_(&t, -stdv, stdv)?;
        t.requires_grad_(true)
    };
    let g = gates * hidden_size;
    let weight_ih = param(vec![g, input_size])?;
    let weight_hh = param(vec![g, hidden_size])?;
    let bias_ih = if bias { Some(param(vec![g])?) } else { None };
    let bias_hh = if bias { Some(param(vec![g])?) } else { None };
    Ok((weight_ih, weight_hh, bias_ih, bias_hh))
}

/// torch's Python-side check of a cell's input: 1-D (unbatched) or 2-D.
fn check_input_rank(cell: &str, input: &Tensor) -> Result<()> {
    if !matches!(input.rank(), 1 | 2) {
        return Err(Error::shape(format!(
            "{cell}: Expected input to be 1D or 2D, got {}D instead",
            input.rank()
        )));
    }
    Ok(())
}

/// torch's Python-side check of a hidden state: 1-D or 2-D (`what` is `hidden` or `hx[i]`).
fn check_hidden_rank(cell: &str, what: &str, hx: &Tensor) -> Result<()> {
    if !matches!(hx.rank(), 1 | 2) {
        return Err(Error::shape(format!(
            "{cell}: Expected {what} to be 1D or 2D, got {}D instead",
            hx.rank()
        )));
    }
    Ok(())
}

/// torch's `check_rnn_cell_forward_input`: the (2-D) input's features.
fn check_input_size(input: &Tensor, weight_ih: &Tensor) -> Result<()> {
    let (got, want) = (input.dims()[1], weight_ih.dims()[1]);
    if got != want {
        return Err(Error::shape(format!("input has inconsistent input_size: got {got} expected {want}")));
    }
    Ok(())
}

/// torch's `check_rnn_cell_forward_hidden` for hidden state number `label`: 2-D, the input's
/// batch size, `hidden_size` features.
pub(crate) fn check_hidden(input: &Tensor, hx: &Tensor, hidden_size: usize, label: usize) -> Result<()> {
    if hx.rank() != 2 {
        return Err(Error::shape(format!(
            "Expected 2D hidden{label} (batch x hidden_size), but got {}D tensor",
            hx.rank()
        )));
    }
    if input.dims()[0] != hx.dims()[0] {
        return Err(Error::shape(format!(
            "Input batch size {} doesn't match hidden{label} batch size {}",
            input.dims()[0],
            hx.dims()[0]
        )));
    }
    if hx.dims()[1] != hidden_size {
        return Err(Error::shape(format!(
            "hidden{label} has inconsistent hidden_size: got {}, expected {hidden_size}",
            hx.dims()[1]
        )));
    }
    Ok(())
}

/// The input as a batch (`[N, input]`) and whether it was unbatched.
fn batched(input: &Tensor) -> Result<(Tensor, bool)> {
    if input.rank() == 1 {
        Ok((input.unsqueeze(0)?, true))
    } else {
        Ok((input.clone(), false))
    }
}

/// A hidden state in the batched layout: the given one (unsqueezed for an unbatched input), or
/// zeros `[N, hidden_size]` of the input's dtype and device.
fn hidden_or_zeros(hx: Option<&Tensor>, x: &Tensor, unbatched: bool, hidden_size: usize) -> Result<Tensor> {
    match hx {
        Some(h) if unbatched => h.unsqueeze(0),
        Some(h) => Ok(h.clone()),
        None => Tensor::zeros([x.dims()[0], hidden_size], (x.dtype(), x.device())),
    }
}

/// Removes the batch dim again for an unbatched call.
fn unbatch(t: Tensor, unbatched: bool) -> Result<Tensor> {
    if unbatched {
        t.squeeze_dims(0)
    } else {
        Ok(t)
    }
}

/// torch's `nn.RNNCell(input_size, hidden_size, bias=True, nonlinearity="tanh")`: one Elman step
/// `h' = act(W_ih x + b_ih + W_hh h + b_hh)` with `act` `tanh` or `relu`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct RNNCell {
    /// `[hidden, input]`
    pub weight_ih: Tensor,
    /// `[hidden, hidden]`
    pub weight_hh: Tensor,
    /// `[hidden]` (with `bias`)
    pub bias_ih: Option<Tensor>,
    /// `[hidden]` (with `bias`)
    pub bias_hh: Option<Tensor>,
    /// input features
    pub input_size: usize,
    /// hidden features
    pub hidden_size: usize,
    /// whether the cell has biases
    pub bias: bool,
    /// `"tanh"` or `"relu"`; as in torch, another name is accepted here and refused by `forward`
    pub nonlinearity: &'static str,
}

impl RNNCell {
    /// torch's `extra_repr`: `3, 4, bias=False, nonlinearity=relu` (settings other than the defaults).
    fn extra_repr_text(&self) -> String {
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if !self.bias {
            s += ", bias=False";
        }
        if self.nonlinearity != "tanh" {
            s += &format!(", nonlinearity={}", self.nonlinearity);
        }
        s
    }

    /// A cell with torch's initialisation; `nonlinearity` is `"tanh"` (torch's default) or `"relu"`.
    pub fn new(
        input_size: usize,
        hidden_size: usize,
        bias: bool,
        nonlinearity: &'static str,
    ) -> Result<Self> {
        let (weight_ih, weight_hh, bias_ih, bias_hh) = cell_params(input_size, hidden_size, bias, 1)?;
        Ok(RNNCell { weight_ih, weight_hh, bias_ih, bias_hh, input_size, hidden_size, bias, nonlinearity })
    }

    /// One step from `input` (`[N, input_size]`, or unbatched `[input_size]`) and `hx` (`[N,
    /// hidden_size]` or `[hidden_size]`; zeros when `None`): the next hidden state, in the input's
    /// layout.
    pub fn forward(&self, input: &Tensor, hx: Option<&Tensor>) -> Result<Tensor> {
        check_input_rank("RNNCell", input)?;
        if let Some(h) = hx {
            check_hidden_rank("RNNCell", "hidden", h)?;
        }
        let (x, unbatched) = batched(input)?;
        let h = hidden_or_zeros(hx, &x, unbatched, self.hidden_size)?;
        let relu = match self.nonlinearity {
            "tanh" => false,
            "relu" => true,
            other => return Err(Error::msg(format!("Unknown nonlinearity: {other}"))),
        };
        check_input_size(&x, &self.weight_ih)?;
        check_hidden(&x, &h, self.weight_hh.dims()[1], 0)?;
        let pre = x
            .linear(&self.weight_ih, self.bias_ih.as_ref())?
            .add(&h.linear(&self.weight_hh, self.bias_hh.as_ref())?)?;
        unbatch(rnn_step(&pre, relu)?, unbatched)
    }
}

/// torch's `nn.LSTMCell(input_size, hidden_size, bias=True)`: one LSTM step with gates `i, f, g, o`
/// (rows of the weights in that order), `c' = f c + i g`, `h' = o tanh(c')`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct LSTMCell {
    /// `[4 * hidden, input]`
    pub weight_ih: Tensor,
    /// `[4 * hidden, hidden]`
    pub weight_hh: Tensor,
    /// `[4 * hidden]` (with `bias`)
    pub bias_ih: Option<Tensor>,
    /// `[4 * hidden]` (with `bias`)
    pub bias_hh: Option<Tensor>,
    /// input features
    pub input_size: usize,
    /// hidden features
    pub hidden_size: usize,
    /// whether the cell has biases
    pub bias: bool,
}

impl LSTMCell {
    /// torch's `extra_repr`: `3, 4, bias=False` (settings other than the defaults).
    fn extra_repr_text(&self) -> String {
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if !self.bias {
            s += ", bias=False";
        }
        s
    }

    /// A cell with torch's initialisation.
    pub fn new(input_size: usize, hidden_size: usize, bias: bool) -> Result<Self> {
        let (weight_ih, weight_hh, bias_ih, bias_hh) = cell_params(input_size, hidden_size, bias, 4)?;
        Ok(LSTMCell { weight_ih, weight_hh, bias_ih, bias_hh, input_size, hidden_size, bias })
    }

    /// One step from `input` (`[N, input_size]` or `[input_size]`) and `hx = (h, c)` (each `[N,
    /// hidden_size]` or `[hidden_size]`; zeros when `None`): the next `(h, c)`, in the input's
    /// layout.
    pub fn forward(&self, input: &Tensor, hx: Option<(&Tensor, &Tensor)>) -> Result<(Tensor, Tensor)> {
        check_input_rank("LSTMCell", input)?;
        if let Some((h, c)) = hx {
            check_hidden_rank("LSTMCell", "hx[0]", h)?;
            check_hidden_rank("LSTMCell", "hx[1]", c)?;
        }
        let (x, unbatched) = batched(input)?;
        let h = hidden_or_zeros(hx.map(|s| s.0), &x, unbatched, self.hidden_size)?;
        let c = hidden_or_zeros(hx.map(|s| s.1), &x, unbatched, self.hidden_size)?;
        check_input_size(&x, &self.weight_ih)?;
        let hidden = self.weight_hh.dims()[1];
        check_hidden(&x, &h, hidden, 0)?;
        check_hidden(&x, &c, hidden, 1)?;
        let gates = x
            .linear(&self.weight_ih, self.bias_ih.as_ref())?
            .add(&h.linear(&self.weight_hh, self.bias_hh.as_ref())?)?;
        let (h, c) = lstm_step(&gates, &c, hidden)?;
        Ok((unbatch(h, unbatched)?, unbatch(c, unbatched)?))
    }
}

/// torch's `nn.GRUCell(input_size, hidden_size, bias=True)`: one GRU step with gates `r, z, n`
/// (rows of the weights in that order), `n = tanh(W_in x + b_in + r (W_hn h + b_hn))`,
/// `h' = (1 - z) n + z h`.
#[derive(oxtorch_nn_derive::Module)]
#[module(extra_repr)]
pub struct GRUCell {
    /// `[3 * hidden, input]`
    pub weight_ih: Tensor,
    /// `[3 * hidden, hidden]`
    pub weight_hh: Tensor,
    /// `[3 * hidden]` (with `bias`)
    pub bias_ih: Option<Tensor>,
    /// `[3 * hidden]` (with `bias`)
    pub bias_hh: Option<Tensor>,
    /// input features
    pub input_size: usize,
    /// hidden features
    pub hidden_size: usize,
    /// whether the cell has biases
    pub bias: bool,
}

impl GRUCell {
    /// torch's `extra_repr`: `3, 4, bias=False` (settings other than the defaults).
    fn extra_repr_text(&self) -> String {
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if !self.bias {
            s += ", bias=False";
        }
        s
    }

    /// A cell with torch's initialisation.
    pub fn new(input_size: usize, hidden_size: usize, bias: bool) -> Result<Self> {
        let (weight_ih, weight_hh, bias_ih, bias_hh) = cell_params(input_size, hidden_size, bias, 3)?;
        Ok(GRUCell { weight_ih, weight_hh, bias_ih, bias_hh, input_size, hidden_size, bias })
    }

    /// One step from `input` (`[N, input_size]` or `[input_size]`) and `hx` (`[N, hidden_size]` or
    /// `[hidden_size]`; zeros when `None`): the next hidden state, in the input's layout.
    pub fn forward(&self, input: &Tensor, hx: Option<&Tensor>) -> Result<Tensor> {
        check_input_rank("GRUCell", input)?;
        if let Some(h) = hx {
            check_hidden_rank("GRUCell", "hidden", h)?;
        }
        let (x, unbatched) = batched(input)?;
        let h = hidden_or_zeros(hx, &x, unbatched, self.hidden_size)?;
        check_input_size(&x, &self.weight_ih)?;
        let hidden = self.weight_hh.dims()[1];
        check_hidden(&x, &h, hidden, 0)?;
        let gi = x.linear(&self.weight_ih, self.bias_ih.as_ref())?;
        let gh = h.linear(&self.weight_hh, self.bias_hh.as_ref())?;
        unbatch(gru_step(&gi, &gh, &h, hidden)?, unbatched)
    }
}
