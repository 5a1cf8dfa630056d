//! `AdaptiveLogSoftmaxWithLoss` (Grave et al., "Efficient softmax approximation for GPUs").

use oxtorch_tensor::{DType, Error, Result, Tensor};

use super::{Linear, ModuleList, Sequential};
use crate::module::{torch_size, Forward};

/// torch's `nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0,
/// head_bias=False)`: the classes are split at `cutoffs` into a shortlist, scored by the `head`
/// together with one logit per cluster, and clusters scored by their own two-layer projection
/// (`tail.i`: `in_features → in_features // div_value^(i+1) → cluster size`). State dict as
/// torch's: `head.weight` (`head.bias` with `head_bias`), `tail.0.0.weight`, `tail.0.1.weight`, ...
#[derive(oxtorch_nn_derive::Module)]
pub struct AdaptiveLogSoftmaxWithLoss {
    /// input features
    pub in_features: usize,
    /// number of classes
    pub n_classes: usize,
    /// the cutoffs with `n_classes` appended (torch's `self.cutoffs`)
    #[module(skip)]
    pub cutoffs: Vec<usize>,
    /// the divisor of each further cluster's hidden size
    pub div_value: f64,
    /// whether the head has a bias
    pub head_bias: bool,
    /// classes scored directly by the head (`cutoffs[0]`)
    pub shortlist_size: usize,
    /// number of tail clusters
    pub n_clusters: usize,
    /// the head's outputs: shortlist plus one per cluster
    pub head_size: usize,
    /// `in_features → head_size`
    pub head: Linear,
    /// one `Sequential(Linear(in, hsz), Linear(hsz, osz))` per cluster, without biases
    pub tail: ModuleList<Sequential>,
}

/// CPython's float floor division `a // b` (`float_floor_div`), which differs from
/// `(a / b).floor()` when the division rounds up to an integer (`11 // 1.1` is `9.0`).
fn py_floor_div(a: f64, b: f64) -> Result<f64> {
    if b == 0.0 {
        return Err(Error::msg("float floor division by zero"));
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        div -= 1.0;
    }
    if div != 0.0 {
        let mut floordiv = div.floor();
        if div - floordiv > 0.5 {
            floordiv += 1.0;
        }
        Ok(floordiv)
    } else {
        Ok((0.0f64).copysign(a / b))
    }
}

/// torch's hidden size of cluster `k` (1-based): Python's `int(in_features // (div_value ** k))`,
/// with Python's errors, and torch's for a negative size.
fn hidden_size(in_features: usize, div_value: f64, k: usize) -> Result<usize> {
    let p = div_value.powf(k as f64);
    if p.is_infinite() && div_value.is_finite() {
        return Err(Error::msg("(34, 'Numerical result out of range')"));
    }
    let h = py_floor_div(in_features as f64, p)?;
    if h.is_nan() {
        return Err(Error::msg("cannot convert float NaN to integer"));
    }
    if h.is_infinite() {
        return Err(Error::msg("cannot convert float infinity to integer"));
    }
    if h < 0.0 {
        return Err(Error::shape(format!(
            "Trying to create tensor with negative dimension {n}: [{n}, {in_features}]",
            n = h as i64
        )));
    }
    if h >= 9.223_372_036_854_776e18 {
        return Err(Error::msg("Overflow when unpacking long long"));
    }
    Ok(h as usize)
}

impl AdaptiveLogSoftmaxWithLoss {
    /// torch's constructor: `cutoffs` must be unique, increasing, between 1 and `n_classes - 1`;
    /// the layers get `Linear`'s initialisation in torch's order (head, then each cluster's two).
    pub fn new(
        in_features: usize,
        n_classes: usize,
        cutoffs: &[usize],
        div_value: f64,
        head_bias: bool,
    ) -> Result<Self> {
        if cutoffs.is_empty() {
            return Err(Error::msg("cutoffs should be a sequence of length larger than 0"));
        }
        let increasing = cutoffs.windows(2).all(|w| w[0] < w[1]);
        let max = *cutoffs.iter().max().expect("non-empty");
        let min = *cutoffs.iter().min().expect("non-empty");
        if !increasing || min == 0 || max as i64 > n_classes as i64 - 1 {
            return Err(Error::msg(
                "cutoffs should be a sequence of unique, positive integers sorted in an increasing order, where each value is between 1 and n_classes-1",
            ));
        }
        let mut all = cutoffs.to_vec();
        all.push(n_classes);
        let shortlist_size = all[0];
        let n_clusters = all.len() - 1;
        let head_size = shortlist_size + n_clusters;
        let head = Linear::new(in_features, head_size, head_bias)?;
        let mut tail = Vec::with_capacity(n_clusters);
        for i in 0..n_clusters {
            let hsz = hidden_size(in_features, div_value, i + 1)?;
            let osz = all[i + 1] - all[i];
            tail.push(
                Sequential::new()
                    .add(Linear::new(in_features, hsz, false)?)
                    .add(Linear::new(hsz, osz, false)?),
            );
        }
        Ok(AdaptiveLogSoftmaxWithLoss {
            in_features,
            n_classes,
            cutoffs: all,
            div_value,
            head_bias,
            shortlist_size,
            n_clusters,
            head_size,
            head,
            tail: ModuleList::new(tail),
        })
    }

    /// torch's `forward(input, target)`: `(output, loss)`, the target classes' log-probabilities
    /// (`[N]`, or 0-d for a 1-D input and 0-d target) and their negated mean.
    pub fn forward(&self, input: &Tensor, target: &Tensor) -> Result<(Tensor, Tensor)> {
        match target.rank() {
            1 => {
                if input.rank() == 0 || input.dims()[0] != target.dims()[0] {
                    return Err(Error::shape(
                        "Input and target should have the same size in the batch dimension.",
                    ));
                }
                if input.rank() != 2 {
                    return Err(Error::shape(format!(
                        "1D target tensor expects 2D input tensors, but found inputs with size {}",
                        torch_size(input.dims())
                    )));
                }
            }
            0 => {
                if input.rank() != 1 {
                    return Err(Error::shape(format!(
                        "0D target tensor expects 1D input tensors, but found inputs with size {}",
                        torch_size(input.dims())
                    )));
                }
            }
            _ => return Err(Error::shape("0D or 1D target tensor expected, multi-target not supported")),
        }
        if !target.dtype().is_int() {
            return Err(Error::msg("gather(): Expected dtype int64 for index"));
        }
        let batched = target.rank() > 0;
        let (input, target) = if batched {
            (input.clone(), target.clone())
        } else {
            (input.unsqueeze(0)?, target.unsqueeze(0)?)
        };
        let device = input.device();
        let batch = target.dims()[0];
        let t: Vec<i64> = target.to_dtype(DType::I64)?.to_vec::<i64>()?;
        let index = |v: Vec<i64>, shape: Vec<usize>| Tensor::from_vec_on(v, shape, device);

        let mut bounds = vec![0usize];
        bounds.extend(&self.cutoffs);
        let mut gather_inds = vec![0i64; batch];
        let mut used = 0usize;
        let mut short_rows: Vec<usize> = Vec::new();
        let mut tail_rows: Vec<usize> = Vec::new();
        let mut tail_parts: Vec<Tensor> = Vec::new();
        for i in 0..bounds.len() - 1 {
            let (low, high) = (bounds[i] as i64, bounds[i + 1] as i64);
            let rows: Vec<usize> = (0..batch).filter(|&r| t[r] >= low && t[r] < high).collect();
            if rows.is_empty() {
                continue;
            }
            if i == 0 {
                for &r in &rows {
                    gather_inds[r] = t[r];
                }
                short_rows.extend(&rows);
            } else {
                let n = rows.len();
                let relative: Vec<i64> = rows.iter().map(|&r| t[r] - low).collect();
                let row_index = index(rows.iter().map(|&r| r as i64).collect(), vec![n])?;
                let subset = input.index_select(0, &row_index)?;
                let cluster_output = self.tail[i - 1].forward(&subset)?;
                let cluster_index = (self.shortlist_size + i - 1) as i64;
                for &r in &rows {
                    gather_inds[r] = cluster_index;
                }
                let cluster_logprob = cluster_output.log_softmax(1, None)?;
                let local = cluster_logprob.gather(1, &index(relative, vec![n, 1])?)?.squeeze_dims([1])?;
                tail_parts.push(local);
                tail_rows.extend(&rows);
            }
            used += rows.len();
        }
        if used != batch {
            let (lo, hi) = (t.iter().min().copied().unwrap_or(0), t.iter().max().copied().unwrap_or(0));
            return Err(Error::msg(format!(
                "Target values should be in [0, {}], but values in range [{lo}, {hi}] were found. ",
                self.n_classes as i64 - 1
            )));
        }
        // The clusters' log-probabilities in row order, 0 for the shortlist's rows (torch's
        // `index_copy_` into zeros), as one permutation of their concatenation.
        let zeros = Tensor::zeros([short_rows.len()], (input.dtype(), device))?;
        let mut order = short_rows;
        order.extend(tail_rows);
        let mut inverse = vec![0i64; batch];
        for (k, &r) in order.iter().enumerate() {
            inverse[r] = k as i64;
        }
        let mut parts: Vec<&Tensor> = vec![&zeros];
        parts.extend(tail_parts.iter());
        let tail_out = Tensor::cat(&parts, 0)?.index_select(0, &index(inverse, vec![batch])?)?;

        let head_logprob = self.head.forward(&input)?.log_softmax(1, None)?;
        let head_part = head_logprob.gather(1, &index(gather_inds, vec![batch, 1])?)?.squeeze_dims([1])?;
        let output = tail_out.add(&head_part)?;
        let loss = output.neg()?.mean_all()?;
        let output = if batched { output } else { output.squeeze_dims([0])? };
        Ok((output, loss))
    }

    /// The log-probabilities of all `n_classes` classes, `[N, n_classes]` (torch's `log_prob`).
    pub fn log_prob(&self, input: &Tensor) -> Result<Tensor> {
        let head_output = self.head.forward(input)?;
        self.full_log_prob(input, &head_output)
    }

    /// torch's `_get_full_log_prob`.
    fn full_log_prob(&self, input: &Tensor, head_output: &Tensor) -> Result<Tensor> {
        let head_logprob = head_output.log_softmax(1, None)?;
        let mut parts = vec![head_logprob.narrow(1, 0, self.shortlist_size)?];
        for (i, cluster) in self.tail.iter().enumerate() {
            let cluster_logprob = cluster.forward(input)?.log_softmax(1, None)?;
            let cluster_col = head_logprob.narrow(1, (self.shortlist_size + i) as isize, 1)?;
            parts.push(cluster_logprob.add(&cluster_col)?);
        }
        Tensor::cat(&parts.iter().collect::<Vec<_>>(), 1)
    }

    /// The most probable class of each row, int64 `[N]` (torch's `predict`: the head's argmax,
    /// the full distribution's only for rows whose head argmax is a cluster).
    pub fn predict(&self, input: &Tensor) -> Result<Tensor> {
        let head_output = self.head.forward(input)?;
        let output = head_output.argmax(Some(1), false)?;
        let mut classes: Vec<i64> = output.to_vec::<i64>()?;
        let outside: Vec<usize> =
            (0..classes.len()).filter(|&r| classes[r] >= self.shortlist_size as i64).collect();
        if outside.is_empty() {
            return Ok(output);
        }
        if outside.len() == classes.len() {
            return self.full_log_prob(input, &head_output)?.argmax(Some(1), false);
        }
        let rows = Tensor::from_vec_on(
            outside.iter().map(|&r| r as i64).collect::<Vec<_>>(),
            vec![outside.len()],
            input.device(),
        )?;
        let log_prob =
            self.full_log_prob(&input.index_select(0, &rows)?, &head_output.index_select(0, &rows)?)?;
        let picked: Vec<i64> = log_prob.argmax(Some(1), false)?.to_vec::<i64>()?;
        for (&r, &c) in outside.iter().zip(&picked) {
            classes[r] = c;
        }
        let n = classes.len();
        Tensor::from_vec_on(classes, vec![n], input.device())
    }
}
