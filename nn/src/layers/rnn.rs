//! `RNN`, `LSTM` and `GRU`: multi-layer, optionally bidirectional recurrent layers with torch's parameter
//! names (`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`, `..._reverse`), gate orders
//! (LSTM `i, f, g, o`; GRU `r, z, n`) and initialisation, written in tensor ops. LSTM also takes
//! torch's `proj_size` (an `h = W_hr (o ⊙ tanh c)` projection, parameters `weight_hr_l0`, ...).
//! Each layer also runs a [`PackedSequence`](crate::utils::rnn::PackedSequence) with
//! `forward_packed` (in `rnn_packed.rs`).

use oxtorch_tensor::{DType, Error, Result, Tensor};

use crate::init;
use crate::module::{Member, MemberMut, Module};

// A child module, so it shares this module's private core, weights and step functions.
#[path = "rnn_packed.rs"]
mod packed;

/// Constructor options of [`LSTM`] and [`GRU`], with torch's defaults.
#[derive(Clone, Debug)]
pub struct RnnOptions {
    /// stacked layers (default 1)
    pub num_layers: usize,
    /// whether the cells have biases (default true)
    pub bias: bool,
    /// `[batch, seq, feature]` inputs and outputs (default false)
    pub batch_first: bool,
    /// dropout on the outputs of every layer but the last, in training (default 0)
    pub dropout: f64,
    /// run a second direction over the reversed sequence (default false)
    pub bidirectional: bool,
    /// LSTM only: project the hidden state to this size with `weight_hr_l{k}` (`[proj_size,
    /// hidden_size]`), so `h` and the outputs have `proj_size` features; 0 (the default) for none.
    /// Must be smaller than `hidden_size`.
    pub proj_size: usize,
}

impl Default for RnnOptions {
    fn default() -> Self {
        RnnOptions {
            num_layers: 1,
            bias: true,
            batch_first: false,
            dropout: 0.0,
            bidirectional: false,
            proj_size: 0,
        }
    }
}

/// The weights of one layer and direction.
pub struct RnnWeights {
    /// `[gates * hidden, input]`
    pub weight_ih: Tensor,
    /// `[gates * hidden, hidden]` (`[4 * hidden, proj_size]` for an LSTM with projections)
    pub weight_hh: Tensor,
    /// `[gates * hidden]`
    pub bias_ih: Option<Tensor>,
    /// `[gates * hidden]`
    pub bias_hh: Option<Tensor>,
    /// `[proj_size, hidden]`: an LSTM's projection of the hidden state (`proj_size > 0` only)
    pub weight_hr: Option<Tensor>,
    /// the name suffix: `l0`, `l0_reverse`, `l1`, ...
    pub suffix: String,
}

/// An error unless all the layers' parameters fit in memory: a layer count or size that could
/// never be allocated is refused before the loop that would allocate layer after layer.
fn check_parameter_count(
    input_size: usize,
    hidden_size: usize,
    real_hidden: usize,
    options: &RnnOptions,
    gates: usize,
    dirs: usize,
) -> Result<()> {
    // One direction of a layer reading `width` features: w_ih, w_hh, both biases, w_hr.
    let per_direction = |width: usize| -> Option<usize> {
        let g = gates.checked_mul(hidden_size)?;
        let weights = g.checked_mul(width.checked_add(real_hidden)?.checked_add(2)?)?;
        weights.checked_add(options.proj_size.checked_mul(hidden_size)?)
    };
    let elements = (|| {
        let upper = per_direction(real_hidden.checked_mul(dirs)?)?.checked_mul(options.num_layers - 1)?;
        per_direction(input_size)?.checked_add(upper)?.checked_mul(dirs)
    })();
    let fits = elements
        .and_then(|n| n.checked_mul(DType::default_float().size_in_bytes()))
        .is_some_and(|b| b <= isize::MAX as usize && Vec::<u8>::new().try_reserve_exact(b).is_ok());
    if fits {
        return Ok(());
    }
    Err(Error::msg(format!(
        "DefaultCPUAllocator: not enough memory for {} layers of hidden_size {hidden_size} (input_size {input_size})",
        options.num_layers
    )))
}

/// What LSTM and GRU share: shapes, options, weights, the layer/direction loop.
struct RnnCore {
    input_size: usize,
    hidden_size: usize,
    options: RnnOptions,
    weights: Vec<RnnWeights>,
    training: bool,
    /// torch's class name, for error messages.
    name: &'static str,
}

impl RnnCore {
    fn new(input_size: usize, hidden_size: usize, options: RnnOptions, gates: usize) -> Result<Self> {
        if options.proj_size > 0 && gates != 4 {
            return Err(Error::msg("proj_size argument is only supported for LSTM, not RNN or GRU"));
        }
        if input_size == 0 {
            return Err(Error::msg("input_size must be greater than zero"));
        }
        if options.num_layers == 0 {
            return Err(Error::msg("num_layers must be greater than zero"));
        }
        if !(0.0..=1.0).contains(&options.dropout) {
            return Err(Error::msg(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed",
            ));
        }
        if hidden_size == 0 {
            return Err(Error::msg("hidden_size must be greater than zero"));
        }
        if options.proj_size >= hidden_size {
            return Err(Error::msg("proj_size has to be smaller than hidden_size"));
        }
        let proj = options.proj_size;
        // The size of `h` (and of each direction's outputs): the projection's when there is one.
        let real_hidden = if proj > 0 { proj } else { hidden_size };
        let dirs = if options.bidirectional { 2 } else { 1 };
        check_parameter_count(input_size, hidden_size, real_hidden, &options, gates, dirs)?;
        let bound = 1.0 / (hidden_size as f64).sqrt();
        let param = |shape: Vec<usize>| -> Result<Tensor> {
            let t = Tensor::empty(shape, DType::default_float())?;
            init::uniform_(&t, -bound, bound)?;
            t.requires_grad_(true)
        };
        let mut weights = Vec::new();
        for layer in 0..options.num_layers {
            let in_size = if layer == 0 { input_size } else { real_hidden * dirs };
            for dir in 0..dirs {
                let g = gates.checked_mul(hidden_size).ok_or_else(|| {
                    Error::msg(format!("hidden_size {hidden_size} times {gates} gates overflows"))
                })?;
                // Drawn in torch's parameter order: w_ih, w_hh, b_ih, b_hh, w_hr.
                let weight_ih = param(vec![g, in_size])?;
                let weight_hh = param(vec![g, real_hidden])?;
                let bias_ih = if options.bias { Some(param(vec![g])?) } else { None };
                let bias_hh = if options.bias { Some(param(vec![g])?) } else { None };
                let weight_hr = if proj > 0 { Some(param(vec![proj, hidden_size])?) } else { None };
                weights.push(RnnWeights {
                    weight_ih,
                    weight_hh,
                    bias_ih,
                    bias_hh,
                    weight_hr,
                    suffix: format!("l{layer}{}", if dir == 1 { "_reverse" } else { "" }),
                });
            }
        }
        let name = match gates {
            4 => "LSTM",
            3 => "GRU",
            _ => "RNN",
        };
        Ok(RnnCore { input_size, hidden_size, options, weights, training: true, name })
    }

    /// The size of `h` and of each direction's outputs: `proj_size` when projecting, else
    /// `hidden_size`.
    fn real_hidden(&self) -> usize {
        if self.options.proj_size > 0 {
            self.options.proj_size
        } else {
            self.hidden_size
        }
    }

    fn dirs(&self) -> usize {
        if self.options.bidirectional {
            2
        } else {
            1
        }
    }

    /// Brings the input to `[T, N, I]`; returns it and whether it was unbatched.
    fn seq_first(&self, input: &Tensor) -> Result<(Tensor, bool)> {
        let x = match input.rank() {
            2 => (input.unsqueeze(1)?, true),
            3 if self.options.batch_first => (input.transpose(0, 1)?, false),
            3 => (input.clone(), false),
            r => {
                return Err(Error::shape(format!(
                    "{}: Expected input to be 2D or 3D, got {r}D instead",
                    self.name
                )));
            }
        };
        if x.0.dims()[0] == 0 {
            return Err(Error::shape("Expected sequence length to be larger than 0 in RNN"));
        }
        let i = x.0.dims()[2];
        if i != self.input_size {
            return Err(Error::shape(format!(
                "input.size(-1) must be equal to input_size. Expected {}, got {i}",
                self.input_size
            )));
        }
        Ok(x)
    }

    /// The initial state `[layers * dirs, N, size]` as one tensor per layer and direction (zeros
    /// when not given); `size` is the hidden size (the projection's for an LSTM's `h`).
    fn initial(&self, h0: Option<&Tensor>, x: &Tensor, unbatched: bool, size: usize) -> Result<Vec<Tensor>> {
        let n = x.dims()[1];
        let ld = self.options.num_layers * self.dirs();
        let h = size;
        match h0 {
            None => (0..ld).map(|_| Tensor::zeros([n, h], (x.dtype(), x.device()))).collect(),
            Some(h0) => {
                let want: Vec<usize> = if unbatched { vec![ld, h] } else { vec![ld, n, h] };
                if h0.dims() != want.as_slice() {
                    let want: Vec<String> = want.iter().map(usize::to_string).collect();
                    return Err(Error::shape(format!(
                        "Expected hidden size ({}), got {:?}",
                        want.join(", "),
                        h0.dims()
                    )));
                }
                let h0 = if unbatched { h0.unsqueeze(1)? } else { h0.clone() };
                h0.unbind(0)
            }
        }
    }

    /// Runs every layer and direction; `cell(weights, gates_from_input_t, h, c) -> (h, c)`.
    fn run(
        &self,
        x: &Tensor,
        mut h: Vec<Tensor>,
        mut c: Vec<Tensor>,
        cell: impl Fn(&RnnWeights, &Tensor, &Tensor, &Tensor) -> Result<(Tensor, Tensor)>,
    ) -> Result<(Tensor, Vec<Tensor>, Vec<Tensor>)> {
        let t_len = x.dims()[0];
        let dirs = self.dirs();
        let mut input = x.clone();
        for layer in 0..self.options.num_layers {
            let mut outs = Vec::with_capacity(dirs);
            for dir in 0..dirs {
                let k = layer * dirs + dir;
                let w = &self.weights[k];
                let xi = input.linear(&w.weight_ih, w.bias_ih.as_ref())?;
                let mut ys = vec![None; t_len];
                for step in 0..t_len {
                    let t = if dir == 0 { step } else { t_len - 1 - step };
                    let (nh, nc) = cell(w, &xi.select(0, t as isize)?, &h[k], &c[k])?;
                    h[k] = nh;
                    c[k] = nc;
                    ys[t] = Some(h[k].clone());
                }
                let ys: Vec<Tensor> = ys.into_iter().flatten().collect();
                let refs: Vec<&Tensor> = ys.iter().collect();
                outs.push(if refs.is_empty() {
                    Tensor::zeros([0, x.dims()[1], self.real_hidden()], (x.dtype(), x.device()))?
                } else {
                    Tensor::stack(&refs, 0)?
                });
            }
            let refs: Vec<&Tensor> = outs.iter().collect();
            input = Tensor::cat(&refs, -1)?;
            if self.training && self.options.dropout > 0.0 && layer + 1 < self.options.num_layers {
                input = input.dropout(self.options.dropout, true)?;
            }
        }
        Ok((input, h, c))
    }

    /// The last layer's outputs in the caller's layout: `[T, N, D*H]`, `[N, T, D*H]` with
    /// `batch_first`, `[T, D*H]` unbatched (`H` the projection's size when there is one).
    fn output(&self, out: Tensor, unbatched: bool) -> Result<Tensor> {
        if unbatched {
            out.squeeze_dims(1)
        } else if self.options.batch_first {
            out.transpose(0, 1)
        } else {
            Ok(out)
        }
    }

    /// Final states stacked to `[layers * dirs, N, H]` (`[layers * dirs, H]` unbatched).
    fn states(&self, states: Vec<Tensor>, unbatched: bool) -> Result<Tensor> {
        let refs: Vec<&Tensor> = states.iter().collect();
        let s = Tensor::stack(&refs, 0)?;
        if unbatched {
            s.squeeze_dims(1)
        } else {
            Ok(s)
        }
    }

    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        for w in &self.weights {
            f(&format!("weight_ih_{}", w.suffix), Member::Param(&w.weight_ih));
            f(&format!("weight_hh_{}", w.suffix), Member::Param(&w.weight_hh));
            if let Some(b) = &w.bias_ih {
                f(&format!("bias_ih_{}", w.suffix), Member::Param(b));
            }
            if let Some(b) = &w.bias_hh {
                f(&format!("bias_hh_{}", w.suffix), Member::Param(b));
            }
            if let Some(p) = &w.weight_hr {
                f(&format!("weight_hr_{}", w.suffix), Member::Param(p));
            }
        }
    }

    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        for w in &mut self.weights {
            f(&format!("weight_ih_{}", w.suffix), MemberMut::Param(&mut w.weight_ih));
            f(&format!("weight_hh_{}", w.suffix), MemberMut::Param(&mut w.weight_hh));
            if let Some(b) = &mut w.bias_ih {
                f(&format!("bias_ih_{}", w.suffix), MemberMut::Param(b));
            }
            if let Some(b) = &mut w.bias_hh {
                f(&format!("bias_hh_{}", w.suffix), MemberMut::Param(b));
            }
            if let Some(p) = &mut w.weight_hr {
                f(&format!("weight_hr_{}", w.suffix), MemberMut::Param(p));
            }
        }
    }
}

/// `gates_from_hidden = h W_hhᵀ + b_hh`.
fn hidden_gates(w: &RnnWeights, h: &Tensor) -> Result<Tensor> {
    h.linear(&w.weight_hh, w.bias_hh.as_ref())
}

/// Gate `i` (of `hidden` features) of the gate pre-activations `t` (`[..., gates * hidden]`).
fn gate(t: &Tensor, i: usize, hidden: usize) -> Result<Tensor> {
    t.narrow(-1, (i * hidden) as isize, hidden)
}

/// One Elman step (torch's `rnn_tanh_cell` / `rnn_relu_cell`) from the summed pre-activation
/// `W_ih x + b_ih + W_hh h + b_hh`: its `tanh`, or its `relu` when `relu`.
pub(crate) fn rnn_step(pre: &Tensor, relu: bool) -> Result<Tensor> {
    if relu {
        pre.relu()
    } else {
        pre.tanh()
    }
}

/// One LSTM step (torch's `lstm_cell`) from the summed gate pre-activations
/// `gates = W_ih x + b_ih + W_hh h + b_hh` (`[N, 4 * hidden]`, gates `i, f, g, o`) and the cell
/// state `c`: returns `(o ⊙ tanh c', c')` with `c' = f ⊙ c + i ⊙ g` (before any projection).
pub(crate) fn lstm_step(gates: &Tensor, c: &Tensor, hidden: usize) -> Result<(Tensor, Tensor)> {
    let i = gate(gates, 0, hidden)?.sigmoid()?;
    let f = gate(gates, 1, hidden)?.sigmoid()?;
    let cand = gate(gates, 2, hidden)?.tanh()?;
    let o = gate(gates, 3, hidden)?.sigmoid()?;
    let c = f.mul(c)?.add(&i.mul(&cand)?)?;
    let h = o.mul(&c.tanh()?)?;
    Ok((h, c))
}

/// One GRU step (torch's `gru_cell`) from the input's gates `gi = W_ih x + b_ih` and the hidden
/// state's `gh = W_hh h + b_hh` (`[N, 3 * hidden]` each, gates `r, z, n`):
/// `n = tanh(gi_n + r ⊙ gh_n)`, `h' = n + z ⊙ (h - n)`.
pub(crate) fn gru_step(gi: &Tensor, gh: &Tensor, h: &Tensor, hidden: usize) -> Result<Tensor> {
    let r = gate(gi, 0, hidden)?.add(&gate(gh, 0, hidden)?)?.sigmoid()?;
    let z = gate(gi, 1, hidden)?.add(&gate(gh, 1, hidden)?)?.sigmoid()?;
    let cand = gate(gi, 2, hidden)?.add(&r.mul(&gate(gh, 2, hidden)?)?)?.tanh()?;
    cand.add(&z.mul(&h.sub(&cand)?)?)
}

/// torch's `nn.LSTM(input_size, hidden_size, ...)`: `i, f, g, o` gates, `c' = f c + i g`,
/// `h' = o tanh(c')` (`h' = W_hr (o tanh(c'))` with `proj_size`), every weight drawn from
/// `U(±1/√hidden_size)`.
pub struct LSTM {
    core: RnnCore,
}

/// torch's `nn.GRU(input_size, hidden_size, ...)`: `r, z, n` gates,
/// `n = tanh(W_in x + b_in + r (W_hn h + b_hn))`, `h' = (1 - z) n + z h`.
pub struct GRU {
    core: RnnCore,
}

impl LSTM {
    /// A layer with torch's initialisation.
    pub fn new(input_size: usize, hidden_size: usize, options: RnnOptions) -> Result<Self> {
        Ok(LSTM { core: RnnCore::new(input_size, hidden_size, options, 4)? })
    }

    /// The weights of each layer and direction, in torch's order.
    pub fn weights(&self) -> &[RnnWeights] {
        &self.core.weights
    }

    /// Runs the sequence `input` (`[T, N, I]`, `[N, T, I]` with `batch_first`, or `[T, I]`) from
    /// `hx = (h0, c0)` (`h0` `[layers * dirs, N, proj_size or H]`, `c0` `[layers * dirs, N, H]`;
    /// zeros when `None`). Returns the last layer's outputs at every step (`D * (proj_size or H)`
    /// features) and the final `(h_n, c_n)`.
    pub fn forward(
        &self,
        input: &Tensor,
        hx: Option<(&Tensor, &Tensor)>,
    ) -> Result<(Tensor, (Tensor, Tensor))> {
        let core = &self.core;
        let (x, unbatched) = core.seq_first(input)?;
        let h0 = core.initial(hx.map(|h| h.0), &x, unbatched, core.real_hidden())?;
        let c0 = core.initial(hx.map(|h| h.1), &x, unbatched, core.hidden_size)?;
        let (out, h, c) = core.run(&x, h0, c0, |w, gi, h, c| {
            let (h, c) = lstm_step(&gi.add(&hidden_gates(w, h)?)?, c, core.hidden_size)?;
            let h = match &w.weight_hr {
                Some(w_hr) => h.linear(w_hr, None)?,
                None => h,
            };
            Ok((h, c))
        })?;
        Ok((core.output(out, unbatched)?, (core.states(h, unbatched)?, core.states(c, unbatched)?)))
    }
}

impl GRU {
    /// A layer with torch's initialisation.
    pub fn new(input_size: usize, hidden_size: usize, options: RnnOptions) -> Result<Self> {
        Ok(GRU { core: RnnCore::new(input_size, hidden_size, options, 3)? })
    }

    /// The weights of each layer and direction, in torch's order.
    pub fn weights(&self) -> &[RnnWeights] {
        &self.core.weights
    }

    /// Runs the sequence `input` from `h0` (`[layers * dirs, N, H]`; zeros when `None`). Returns
    /// the last layer's outputs at every step and the final `h_n`.
    pub fn forward(&self, input: &Tensor, h0: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let core = &self.core;
        let (x, unbatched) = core.seq_first(input)?;
        let h0 = core.initial(h0, &x, unbatched, core.hidden_size)?;
        let unused = h0.clone();
        let (out, h, _) = core.run(&x, h0, unused, |w, gi, h, c| {
            let h = gru_step(gi, &hidden_gates(w, h)?, h, core.hidden_size)?;
            Ok((h, c.clone()))
        })?;
        Ok((core.output(out, unbatched)?, core.states(h, unbatched)?))
    }
}

impl RnnCore {
    /// torch's `RNNBase.extra_repr`: `10, 20, num_layers=2, batch_first=True`.
    fn extra_repr_text(&self) -> String {
        let o = &self.options;
        let mut s = format!("{}, {}", self.input_size, self.hidden_size);
        if o.proj_size != 0 {
            s += &format!(", proj_size={}", o.proj_size);
        }
        if o.num_layers != 1 {
            s += &format!(", num_layers={}", o.num_layers);
        }
        if !o.bias {
            s += ", bias=False";
        }
        if o.batch_first {
            s += ", batch_first=True";
        }
        if o.dropout != 0.0 {
            s += &format!(", dropout={}", crate::module::py_float(o.dropout));
        }
        if o.bidirectional {
            s += ", bidirectional=True";
        }
        s
    }
}

macro_rules! rnn_module {
    ($ty:ident, $name:literal) => {
        impl Module for $ty {
            fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
                self.core.visit(f)
            }
            fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
                self.core.visit_mut(f)
            }
            fn type_name(&self) -> &'static str {
                $name
            }
            fn extra_repr(&self) -> String {
                self.core.extra_repr_text()
            }
            fn set_training(&mut self, training: bool) {
                self.core.training = training;
            }
            fn training_flag(&self) -> Option<bool> {
                Some(self.core.training)
            }
        }
    };
}

/// torch's `nn.RNN(input_size, hidden_size, ..., nonlinearity="tanh")`: the Elman cell
/// `h' = act(W_ih x + b_ih + W_hh h + b_hh)` with `act` `tanh` or `relu`.
#[allow(clippy::upper_case_acronyms)]
pub struct RNN {
    core: RnnCore,
    /// `"tanh"` or `"relu"`
    pub nonlinearity: &'static str,
}

impl RNN {
    /// A layer with torch's initialisation; `nonlinearity` is `"tanh"` (torch's default) or `"relu"`.
    pub fn new(
        input_size: usize,
        hidden_size: usize,
        nonlinearity: &'static str,
        options: RnnOptions,
    ) -> Result<Self> {
        if !matches!(nonlinearity, "tanh" | "relu") {
            return Err(Error::msg(format!(
                "Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )));
        }
        Ok(RNN { core: RnnCore::new(input_size, hidden_size, options, 1)?, nonlinearity })
    }

    /// The weights of each layer and direction, in torch's order.
    pub fn weights(&self) -> &[RnnWeights] {
        &self.core.weights
    }

    /// Runs the sequence `input` from `h0` (`[layers * dirs, N, H]`; zeros when `None`). Returns
    /// the last layer's outputs at every step and the final `h_n`.
    pub fn forward(&self, input: &Tensor, h0: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let core = &self.core;
        let (x, unbatched) = core.seq_first(input)?;
        let h0 = core.initial(h0, &x, unbatched, core.hidden_size)?;
        let unused = h0.clone();
        let relu = self.nonlinearity == "relu";
        let (out, h, _) = core.run(&x, h0, unused, |w, gi, h, c| {
            let pre = gi.add(&hidden_gates(w, h)?)?;
            Ok((rnn_step(&pre, relu)?, c.clone()))
        })?;
        Ok((core.output(out, unbatched)?, core.states(h, unbatched)?))
    }
}

rnn_module!(RNN, "RNN");
rnn_module!(LSTM, "LSTM");
rnn_module!(GRU, "GRU");
