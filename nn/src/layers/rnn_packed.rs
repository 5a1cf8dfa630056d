//! `RNN`, `LSTM` and `GRU` on a [`PackedSequence`] (torch's packed `_VF.rnn_*` / `lstm` / `gru`
//! kernels): step `t` runs only the first `batch_sizes[t]` rows, the sequences still running, so
//! each sequence's final state is its state at its own last step. The forward direction sets the
//! rows of the sequences that end aside as the batch shrinks (torch's `PackedLayer`); the reverse
//! direction starts from the last step with the shortest batch and takes in each sequence's initial
//! state where that sequence ends (torch's `ReversedPackedLayer`). The cells, weights and dropout
//! are the dense forward's.

use oxtorch_tensor::{Error, Result, Tensor};

use super::{gru_step, hidden_gates, lstm_step, rnn_step, RnnCore, RnnWeights, GRU, LSTM, RNN};
use crate::utils::rnn::PackedSequence;

/// The state of the rows of one direction; `c` is a copy of `h` the cell ignores for RNN and GRU.
struct State {
    h: Tensor,
    c: Tensor,
}

impl State {
    /// Rows `start .. start + len`.
    fn rows(&self, start: usize, len: usize) -> Result<State> {
        Ok(State { h: self.h.narrow(0, start as isize, len)?, c: self.c.narrow(0, start as isize, len)? })
    }

    /// The rows of every part, in order.
    fn cat(parts: &[State]) -> Result<State> {
        let h: Vec<&Tensor> = parts.iter().map(|s| &s.h).collect();
        let c: Vec<&Tensor> = parts.iter().map(|s| &s.c).collect();
        Ok(State { h: Tensor::cat(&h, 0)?, c: Tensor::cat(&c, 0)? })
    }
}

/// The cell of a layer: `(weights, input gates of the step, h, c) -> (h', c')`.
type Cell<'a> = dyn Fn(&RnnWeights, &Tensor, &Tensor, &Tensor) -> Result<(Tensor, Tensor)> + 'a;

/// The first row of each step in the packed data: the running sums of the batch sizes.
fn offsets(sizes: &[usize]) -> Vec<usize> {
    let mut acc = 0;
    sizes
        .iter()
        .map(|&s| {
            let o = acc;
            acc += s;
            o
        })
        .collect()
}

/// One direction forward in time (torch's `PackedLayer`) from the gates of the inputs `xi`
/// (`[sum(batch_sizes), gates * H]`) and the initial state of `batch_sizes[0]` rows: the outputs
/// `[sum(batch_sizes), H]` and each sequence's state after its last step.
fn forward_steps(
    cell: &Cell<'_>,
    w: &RnnWeights,
    xi: &Tensor,
    sizes: &[usize],
    s0: State,
) -> Result<(Tensor, State)> {
    let offs = offsets(sizes);
    let mut state = s0;
    // the states of the sequences that ended, last rows first
    let mut done = Vec::new();
    let mut ys = Vec::with_capacity(sizes.len());
    let mut last = sizes[0];
    for (t, &bs) in sizes.iter().enumerate() {
        if bs < last {
            done.push(state.rows(bs, last - bs)?);
            state = state.rows(0, bs)?;
        }
        last = bs;
        let (h, c) = cell(w, &xi.narrow(0, offs[t] as isize, bs)?, &state.h, &state.c)?;
        ys.push(h.clone());
        state = State { h, c };
    }
    done.push(state);
    done.reverse();
    let refs: Vec<&Tensor> = ys.iter().collect();
    Ok((Tensor::cat(&refs, 0)?, State::cat(&done)?))
}

/// One direction backward in time (torch's `ReversedPackedLayer`): starts at the last step with
/// the initial states of the sequences that reach it, and takes in the initial states of the
/// others at their own last steps. Returns the outputs in packed (time) order and the final state.
fn reverse_steps(
    cell: &Cell<'_>,
    w: &RnnWeights,
    xi: &Tensor,
    sizes: &[usize],
    s0: State,
) -> Result<(Tensor, State)> {
    let offs = offsets(sizes);
    let steps = sizes.len();
    let mut last = sizes[steps - 1];
    let mut state = s0.rows(0, last)?;
    let mut ys = vec![None; steps];
    for t in (0..steps).rev() {
        let bs = sizes[t];
        if bs > last {
            state = State::cat(&[state, s0.rows(last, bs - last)?])?;
        }
        last = bs;
        let (h, c) = cell(w, &xi.narrow(0, offs[t] as isize, bs)?, &state.h, &state.c)?;
        ys[t] = Some(h.clone());
        state = State { h, c };
    }
    let ys: Vec<Tensor> = ys.into_iter().flatten().collect();
    let refs: Vec<&Tensor> = ys.iter().collect();
    Ok((Tensor::cat(&refs, 0)?, state))
}

impl RnnCore {
    /// The batch sizes of a packed input, checked as torch's `check_input` checks the data: 2-D with
    /// `input_size` features.
    fn packed_sizes(&self, input: &PackedSequence) -> Result<Vec<usize>> {
        let sizes = input.batch_sizes_vec()?;
        let x = &input.data;
        if x.rank() != 2 {
            return Err(Error::shape(format!("input must have 2 dimensions, got {}", x.rank())));
        }
        let i = x.dims()[1];
        if i != self.input_size {
            return Err(Error::shape(format!(
                "input.size(-1) must be equal to input_size. Expected {}, got {i}",
                self.input_size
            )));
        }
        Ok(sizes)
    }

    /// The initial state of a packed input, one `[N, size]` tensor per layer and direction
    /// (`N = batch_sizes[0]`): zeros, or `hx` put in the sorted order (torch's `permute_hidden`
    /// with `sorted_indices`) and checked to be `[layers * dirs, N, size]` (torch's message, `what`
    /// naming it).
    fn packed_initial(
        &self,
        hx: Option<&Tensor>,
        input: &PackedSequence,
        n: usize,
        size: usize,
        what: &str,
    ) -> Result<Vec<Tensor>> {
        let ld = self.options.num_layers * self.dirs();
        let x = &input.data;
        let Some(hx) = hx else {
            return (0..ld).map(|_| Tensor::zeros([n, size], (x.dtype(), x.device()))).collect();
        };
        let hx = match &input.sorted_indices {
            Some(order) => hx.index_select(1, order)?,
            None => hx.clone(),
        };
        if hx.dims() != [ld, n, size] {
            return Err(Error::shape(format!(
                "Expected {what} size ({ld}, {n}, {size}), got {:?}",
                hx.dims()
            )));
        }
        hx.unbind(0)
    }

    /// Runs every layer and direction over the packed steps of `data` from the initial states
    /// `h`, `c` (one per layer and direction); returns the last layer's packed outputs and the
    /// final states (in sorted order).
    fn run_packed(
        &self,
        data: &Tensor,
        sizes: &[usize],
        mut h: Vec<Tensor>,
        mut c: Vec<Tensor>,
        cell: &Cell<'_>,
    ) -> Result<(Tensor, Vec<Tensor>, Vec<Tensor>)> {
        let dirs = self.dirs();
        let mut input = data.clone();
        for layer in 0..self.options.num_layers {
            let mut outs = Vec::with_capacity(dirs);
            for dir in 0..dirs {
                let k = layer * dirs + dir;
                let w = &self.weights[k];
                let xi = input.linear(&w.weight_ih, w.bias_ih.as_ref())?;
                let s0 = State { h: h[k].clone(), c: c[k].clone() };
                let (out, s) = if dir == 0 {
                    forward_steps(cell, w, &xi, sizes, s0)?
                } else {
                    reverse_steps(cell, w, &xi, sizes, s0)?
                };
                h[k] = s.h;
                c[k] = s.c;
                outs.push(out);
            }
            let refs: Vec<&Tensor> = outs.iter().collect();
            input = Tensor::cat(&refs, -1)?;
            if self.training && self.options.dropout > 0.0 && layer + 1 < self.options.num_layers {
                input = input.dropout(self.options.dropout, true)?;
            }
        }
        Ok((input, h, c))
    }

    /// Final states stacked to `[layers * dirs, N, H]` in the caller's order (torch's
    /// `permute_hidden` with `unsorted_indices`).
    fn packed_states(&self, states: Vec<Tensor>, input: &PackedSequence) -> Result<Tensor> {
        let refs: Vec<&Tensor> = states.iter().collect();
        let s = Tensor::stack(&refs, 0)?;
        match &input.unsorted_indices {
            Some(order) => s.index_select(1, order),
            None => Ok(s),
        }
    }
}

/// The packed outputs, with the input's batch sizes and indices.
fn repacked(data: Tensor, input: &PackedSequence) -> PackedSequence {
    PackedSequence {
        data,
        batch_sizes: input.batch_sizes.clone(),
        sorted_indices: input.sorted_indices.clone(),
        unsorted_indices: input.unsorted_indices.clone(),
    }
}

impl LSTM {
    /// torch's `LSTM.forward` on a [`PackedSequence`] (`data` `[sum(lengths), input_size]`) from
    /// `hx = (h0, c0)` in the caller's order (`[layers * dirs, N, proj_size or H]` and
    /// `[layers * dirs, N, H]`, `N = batch_sizes[0]`; zeros when `None`). Returns the last layer's
    /// outputs packed like the input, and `(h_n, c_n)` holding each sequence's state at its own
    /// last step (the reverse direction's at its first), in the caller's order. Unlike torch, which
    /// skips the checks for a packed LSTM input and fails in its kernel, the input and states are
    /// checked with the messages of its other layers (`"Expected hidden[0] size ..."`).
    pub fn forward_packed(
        &self,
        input: &PackedSequence,
        hx: Option<(&Tensor, &Tensor)>,
    ) -> Result<(PackedSequence, (Tensor, Tensor))> {
        let core = &self.core;
        let sizes = core.packed_sizes(input)?;
        let n = sizes[0];
        let h0 = core.packed_initial(hx.map(|h| h.0), input, n, core.real_hidden(), "hidden[0]")?;
        let c0 = core.packed_initial(hx.map(|h| h.1), input, n, core.hidden_size, "hidden[1]")?;
        let cell = |w: &RnnWeights, gi: &Tensor, h: &Tensor, c: &Tensor| -> Result<(Tensor, Tensor)> {
            let (h, c) = lstm_step(&gi.add(&hidden_gates(w, h)?)?, c, core.hidden_size)?;
            let h = match &w.weight_hr {
                Some(w_hr) => h.linear(w_hr, None)?,
                None => h,
            };
            Ok((h, c))
        };
        let (out, h, c) = core.run_packed(&input.data, &sizes, h0, c0, &cell)?;
        let states = (core.packed_states(h, input)?, core.packed_states(c, input)?);
        Ok((repacked(out, input), states))
    }
}

impl GRU {
    /// torch's `GRU.forward` on a [`PackedSequence`] from `h0` in the caller's order
    /// (`[layers * dirs, N, H]`, `N = batch_sizes[0]`; zeros when `None`): the last layer's outputs
    /// packed like the input, and `h_n` holding each sequence's state at its own last step, in the
    /// caller's order. torch's messages for the input's rank and size and `h0`'s shape.
    pub fn forward_packed(
        &self,
        input: &PackedSequence,
        h0: Option<&Tensor>,
    ) -> Result<(PackedSequence, Tensor)> {
        let core = &self.core;
        let sizes = core.packed_sizes(input)?;
        let h0 = core.packed_initial(h0, input, sizes[0], core.hidden_size, "hidden")?;
        let cell = |w: &RnnWeights, gi: &Tensor, h: &Tensor, c: &Tensor| -> Result<(Tensor, Tensor)> {
            Ok((gru_step(gi, &hidden_gates(w, h)?, h, core.hidden_size)?, c.clone()))
        };
        let (out, h, _) = core.run_packed(&input.data, &sizes, h0.clone(), h0, &cell)?;
        Ok((repacked(out, input), core.packed_states(h, input)?))
    }
}

impl RNN {
    /// torch's `RNN.forward` on a [`PackedSequence`], as [`GRU::forward_packed`].
    pub fn forward_packed(
        &self,
        input: &PackedSequence,
        h0: Option<&Tensor>,
    ) -> Result<(PackedSequence, Tensor)> {
        let core = &self.core;
        let sizes = core.packed_sizes(input)?;
        let h0 = core.packed_initial(h0, input, sizes[0], core.hidden_size, "hidden")?;
        let relu = self.nonlinearity == "relu";
        let cell = |w: &RnnWeights, gi: &Tensor, h: &Tensor, c: &Tensor| -> Result<(Tensor, Tensor)> {
            Ok((rnn_step(&gi.add(&hidden_gates(w, h)?)?, relu)?, c.clone()))
        };
        let (out, h, _) = core.run_packed(&input.data, &sizes, h0.clone(), h0, &cell)?;
        Ok((repacked(out, input), core.packed_states(h, input)?))
    }
}
