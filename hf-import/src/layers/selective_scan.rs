//! The selective scan of Mamba and Mamba-2: per channel, the recurrence
//! `h_t = exp(A Δ_t) h_{t-1} + Δ_t B_t x_t`, `y_t = C_t · h_t + D x_t`, optionally gated by
//! `silu(z_t)`, run over a sequence in float32 as transformers' sequential path runs it
//! (`mamba_selective_scan`, and `mamba_selective_state_update` one token at a time, which is the
//! same recurrence; Mamba-2's chunked scan computes it blockwise). Mamba-2's heads are channels
//! sharing their head's step size and `A`, and its groups share `B` and `C` between consecutive
//! channels.
//!
//! Each channel of each row is independent across time: the rows × channels are split over rayon's
//! threads, each walking its channel's sequence with its `N` states in registers' reach.

use oxtorch_tensor::{DType, Device, Tensor};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// The inputs of one scan, all on the same device; any float dtype (read as float32).
pub struct ScanInputs<'a> {
    /// the channels' inputs `[batch, channels, seq]`
    pub x: &'a Tensor,
    /// the step sizes `[batch, channels, seq]`, after their bias and softplus
    pub dt: &'a Tensor,
    /// the gate `[batch, channels, seq]` (the output is multiplied by `silu(z)`), if any
    pub z: Option<&'a Tensor>,
    /// the input projections `B` `[batch, seq, groups, states]` (`[batch, seq, states]`: one group);
    /// channel `i` reads group `i / (channels / groups)`
    pub b: &'a Tensor,
    /// the output projections `C`, as `B`
    pub c: &'a Tensor,
    /// the state matrix's diagonal `A` `[channels, states]` (negative: `-exp(A_log)`)
    pub a: &'a Tensor,
    /// the skip connection `D` `[channels]`
    pub d: &'a Tensor,
}

/// Runs the scan from `state` (`[batch, channels, states]` float32, zeros for a new sequence),
/// which it replaces with the state after the last step. Returns `y` `[batch, channels, seq]`
/// (float32, on the inputs' device).
pub fn selective_scan(inputs: &ScanInputs<'_>, state: &mut Tensor) -> Result<Tensor> {
    let (batch, channels, seq) = match inputs.x.dims() {
        &[b, c, s] => (b, c, s),
        d => {
            return Err(Error::Input(format!("selective scan: x must be [batch, channels, seq], got {d:?}")))
        }
    };
    let states = inputs.a.dims().get(1).copied().unwrap_or(0);
    let groups = match inputs.b.dims() {
        &[_, _, g, _] => g,
        _ => 1,
    };
    if groups == 0 || channels % groups != 0 {
        return Err(Error::Input(format!(
            "selective scan: {groups} groups do not divide {channels} channels"
        )));
    }
    // One group's `[batch, seq, states]` as `[batch, seq, 1, states]`.
    let grouped = |t: &Tensor| -> Result<Tensor> {
        match t.dims() == [batch, seq, states] {
            true => Ok(t.reshape([batch, seq, 1, states])?),
            false => Ok(t.clone()),
        }
    };
    let (b_in, c_in) = (grouped(inputs.b)?, grouped(inputs.c)?);
    let gate = inputs.z.cloned().unwrap_or_else(|| inputs.dt.clone());
    let expect = [
        ("dt", inputs.dt, vec![batch, channels, seq]),
        ("z", &gate, vec![batch, channels, seq]),
        ("B", &b_in, vec![batch, seq, groups, states]),
        ("C", &c_in, vec![batch, seq, groups, states]),
        ("A", inputs.a, vec![channels, states]),
        ("D", inputs.d, vec![channels]),
        ("state", &*state, vec![batch, channels, states]),
    ];
    for (name, t, shape) in &expect {
        if t.dims() != shape.as_slice() {
            return Err(Error::Input(format!(
                "selective scan: {name} must be {shape:?} for x of shape [{batch}, {channels}, {seq}], got {:?}",
                t.dims()
            )));
        }
    }
    let device = inputs.x.device();
    let host = |t: &Tensor| -> Result<Vec<f32>> {
        Ok(t.to(Device::Cpu)?.to_dtype(DType::F32)?.contiguous()?.to_vec::<f32>()?)
    };
    let (x, dt) = (host(inputs.x)?, host(inputs.dt)?);
    let z = inputs.z.map(host).transpose()?;
    let (b, c, a, d) = (host(&b_in)?, host(&c_in)?, host(inputs.a)?, host(inputs.d)?);
    let per_group = channels / groups;
    let mut h = host(state)?;
    let mut y = vec![0f32; batch * channels * seq];
    if seq > 0 && states > 0 {
        y.par_chunks_mut(seq).zip(h.par_chunks_mut(states)).enumerate().with_min_len(16).for_each(
            |(row, (y, h))| {
                let (r, ch) = (row / channels, row % channels);
                let at = row * seq;
                let (x, dt) = (&x[at..at + seq], &dt[at..at + seq]);
                let z = z.as_ref().map(|z| &z[at..at + seq]);
                let a = &a[ch * states..(ch + 1) * states];
                let group = ch / per_group;
                for t in 0..seq {
                    let step = ((r * seq + t) * groups + group) * states;
                    let (bt, ct) = (&b[step..step + states], &c[step..step + states]);
                    let (xt, dtt) = (x[t], dt[t]);
                    let mut out = 0f32;
                    for k in 0..states {
                        h[k] = (a[k] * dtt).exp() * h[k] + dtt * bt[k] * xt;
                        out += h[k] * ct[k];
                    }
                    y[t] = out + d[ch] * xt;
                    if let Some(z) = z {
                        y[t] *= z[t] / (1.0 + (-z[t]).exp());
                    }
                }
            },
        );
    }
    *state = Tensor::from_vec(h, [batch, channels, states])?.to(device)?;
    Ok(Tensor::from_vec(y, [batch, channels, seq])?.to(device)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One channel, one state, by hand: h1 = e^{-0.5}·0 + 0.5·2·1 = 1, y1 = 3·1 + 0.1·1 = 3.1;
    /// h2 = e^{-0.5}·1 + 0.5·2·(-1), y2 = 3·h2 + 0.1·(-1); each times silu(z).
    #[test]
    fn the_recurrence_by_hand() {
        let t = |v: Vec<f32>, shape: &[usize]| Tensor::from_vec(v, shape).unwrap();
        let (x, dt, z) =
            (t(vec![1.0, -1.0], &[1, 1, 2]), t(vec![0.5, 0.5], &[1, 1, 2]), t(vec![0.0, 2.0], &[1, 1, 2]));
        let (b, c) = (t(vec![2.0, 2.0], &[1, 2, 1]), t(vec![3.0, 3.0], &[1, 2, 1]));
        let (a, d) = (t(vec![-1.0], &[1, 1]), t(vec![0.1], &[1]));
        let mut state = Tensor::zeros([1, 1, 1], DType::F32).unwrap();
        let y = selective_scan(
            &ScanInputs { x: &x, dt: &dt, z: Some(&z), b: &b, c: &c, a: &a, d: &d },
            &mut state,
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        let silu = |v: f32| v / (1.0 + (-v).exp());
        let h2 = (-0.5f32).exp() - 1.0;
        assert!((y[0] - 3.1 * silu(0.0)).abs() < 1e-6, "{y:?}");
        assert!((y[1] - (3.0 * h2 - 0.1) * silu(2.0)).abs() < 1e-6, "{y:?}");
        assert!((state.to_vec::<f32>().unwrap()[0] - h2).abs() < 1e-6);
        // Two steps at once equal one step, then the other from its state.
        let mut state1 = Tensor::zeros([1, 1, 1], DType::F32).unwrap();
        let first = |v: &Tensor| v.narrow(2, 0, 1).unwrap().contiguous().unwrap();
        let second = |v: &Tensor| v.narrow(2, 1, 1).unwrap().contiguous().unwrap();
        let (b1, c1) = (b.narrow(1, 0, 1).unwrap(), c.narrow(1, 0, 1).unwrap());
        let (b2, c2) = (b.narrow(1, 1, 1).unwrap(), c.narrow(1, 1, 1).unwrap());
        let inputs1 =
            ScanInputs { x: &first(&x), dt: &first(&dt), z: Some(&first(&z)), b: &b1, c: &c1, a: &a, d: &d };
        selective_scan(&inputs1, &mut state1).unwrap();
        let inputs2 = ScanInputs {
            x: &second(&x),
            dt: &second(&dt),
            z: Some(&second(&z)),
            b: &b2,
            c: &c2,
            a: &a,
            d: &d,
        };
        let y2 = selective_scan(&inputs2, &mut state1).unwrap().to_vec::<f32>().unwrap();
        assert!((y2[0] - y[1]).abs() < 1e-6);
    }

    /// Shapes that do not fit x are an error naming the input.
    #[test]
    fn mismatched_shapes_are_an_error() {
        let z3 = |s: &[usize]| Tensor::zeros(s, DType::F32).unwrap();
        let (x, b, a, d) = (z3(&[1, 2, 3]), z3(&[1, 3, 4]), z3(&[2, 4]), z3(&[2]));
        let bad_c = z3(&[1, 3, 5]);
        let mut state = z3(&[1, 2, 4]);
        let inputs = ScanInputs { x: &x, dt: &x, z: None, b: &b, c: &bad_c, a: &a, d: &d };
        let e = selective_scan(&inputs, &mut state).unwrap_err().to_string();
        assert!(e.contains("C must be [1, 3, 1, 4]"), "{e}");
    }
}
