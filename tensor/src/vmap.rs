//! `torch.vmap` / `torch.func.vmap` as a loop: the inputs are sliced along their `in_dims` (an
//! unmapped input, `None`, goes whole to every call), the function runs once per index and its
//! outputs are stacked along `out_dims`.
//!
//! The results are torch's (the slices are `select` views and the outputs are joined by `stack`,
//! so gradients flow back to the inputs), but the function runs `batch` times instead of once on
//! batched tensors: this is a correct, not a vectorized, map. Nesting works (a vmapped function is
//! itself a `Fn(&[Tensor]) -> Result<Vec<Tensor>>`).
//!
//! Randomness ([`Randomness`]): a loop draws fresh random numbers in every call, which is torch's
//! `randomness="different"`. `Same` restores the default generator's state before every call, so
//! each call draws the same numbers from it (explicit [`crate::Generator`]s are left alone).
//! torch's default, `"error"`, refuses random ops inside the function; a loop cannot tell a random
//! op from another without racing other threads on the process-wide generator, so here `Error` is
//! accepted and behaves as `Different`.

use crate::{default_generator, Error, Result, Tensor};

/// How random operations inside a vmapped function behave (torch's `randomness=` argument).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Randomness {
    /// torch's default `"error"`: not enforced here (see the module docs); behaves as `Different`.
    #[default]
    Error,
    /// `"different"`: every call draws its own random numbers (the loop's natural behaviour).
    Different,
    /// `"same"`: every call draws the same numbers from the default generator (its state is
    /// restored before each call and left after the last one).
    Same,
}

impl Randomness {
    /// Parses torch's names `"error"`, `"different"` and `"same"`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "error" => Ok(Randomness::Error),
            "different" => Ok(Randomness::Different),
            "same" => Ok(Randomness::Same),
            other => Err(Error::msg(format!(
                "Only allowed values for randomness are 'error', 'different', or 'same'. Got {other}"
            ))),
        }
    }
}

/// The keyword arguments of `torch.vmap` besides `in_dims` and `out_dims`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VmapOptions {
    /// torch's `randomness` (default `Error`, see [`Randomness`])
    pub randomness: Randomness,
    /// torch's `chunk_size`: validated (`None` or positive) and otherwise without effect, since
    /// the loop already runs one index at a time
    pub chunk_size: Option<usize>,
}

/// A Python tuple's repr of `in_dims`: `(0, None)`, `(1,)`.
fn tuple_repr<T: std::fmt::Display>(dims: &[Option<T>]) -> String {
    let items: Vec<String> =
        dims.iter().map(|d| d.as_ref().map_or_else(|| "None".to_string(), |d| d.to_string())).collect();
    if items.len() == 1 {
        format!("({},)", items[0])
    } else {
        format!("({})", items.join(", "))
    }
}

/// `torch.vmap(func, in_dims, out_dims)` with torch's defaults for the other arguments: see
/// [`vmap_with`].
pub fn vmap<F>(
    f: F,
    in_dims: &[Option<isize>],
    out_dims: &[isize],
) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    vmap_with(f, in_dims, out_dims, VmapOptions::default())
}

/// `torch.vmap(func, in_dims, out_dims, randomness, chunk_size)`: the function mapped over
/// dimension `in_dims[i]` of input `i` (`None`: the input is passed whole to every call), its
/// outputs stacked along `out_dims[k]`.
///
/// A one-element `in_dims` applies to every input and a one-element `out_dims` to every output
/// (torch's plain-int forms); otherwise their lengths must be the inputs' and the outputs'. Every
/// mapped input must have the same size along its mapped dimension. A batch of size 0 calls `f`
/// once on zeros shaped like one slice, to learn the outputs' shapes, and returns empty outputs
/// (a function that refuses zeros, such as a Cholesky factorization, then fails where torch,
/// which traces shapes without data, returns empty outputs).
pub fn vmap_with<F>(
    f: F,
    in_dims: &[Option<isize>],
    out_dims: &[isize],
    options: VmapOptions,
) -> impl Fn(&[Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    let in_dims = in_dims.to_vec();
    let out_dims = out_dims.to_vec();
    let in_repr = tuple_repr(&in_dims);
    let out_repr = tuple_repr(&out_dims.iter().map(|&d| Some(d)).collect::<Vec<_>>());
    move |inputs: &[Tensor]| run(&f, inputs, &in_dims, &out_dims, &in_repr, &out_repr, options)
}

/// `torch.vmap` of a function of one tensor returning one tensor: `in_dim` of the input is mapped,
/// the results are stacked along `out_dim`.
pub fn vmap1<F>(f: F, in_dim: isize, out_dim: isize) -> impl Fn(&Tensor) -> Result<Tensor>
where
    F: Fn(&Tensor) -> Result<Tensor>,
{
    let in_repr = in_dim.to_string();
    let out_repr = out_dim.to_string();
    let g = move |xs: &[Tensor]| -> Result<Vec<Tensor>> { Ok(vec![f(&xs[0])?]) };
    move |x: &Tensor| -> Result<Tensor> {
        let inputs = [x.clone()];
        let mut outs =
            run(&g, &inputs, &[Some(in_dim)], &[out_dim], &in_repr, &out_repr, VmapOptions::default())?;
        Ok(outs.remove(0))
    }
}

/// One call of a vmapped function.
fn run<F>(
    f: &F,
    inputs: &[Tensor],
    in_dims: &[Option<isize>],
    out_dims: &[isize],
    in_repr: &str,
    out_repr: &str,
    options: VmapOptions,
) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>>,
{
    if options.chunk_size == Some(0) {
        return Err(Error::msg("vmap: chunk_size should be None or greater than 0. (got 0)"));
    }
    let prefix = format!("vmap(<fn>, in_dims={in_repr}, ...)(<inputs>)");
    if in_dims.len() != 1 && in_dims.len() != inputs.len() {
        return Err(Error::msg(format!(
            "{prefix}: in_dims is not compatible with the structure of `inputs`. in_dims has {} entries but \
             inputs has {}.",
            in_dims.len(),
            inputs.len()
        )));
    }
    let dim_of = |i: usize| if in_dims.len() == 1 { in_dims[0] } else { in_dims[i] };
    // Each input's mapped dimension, normalised.
    let mut mapped: Vec<Option<usize>> = Vec::with_capacity(inputs.len());
    for (i, x) in inputs.iter().enumerate() {
        let Some(d) = dim_of(i) else {
            mapped.push(None);
            continue;
        };
        let rank = x.rank() as isize;
        if d < -rank || d >= rank {
            return Err(Error::msg(format!(
                "{prefix}: Got in_dim={d} for some input, but that input is a Tensor of dimensionality \
                 {rank} so expected in_dim to satisfy -{rank} <= in_dim < {rank}."
            )));
        }
        mapped.push(Some(if d < 0 { (d + rank) as usize } else { d as usize }));
    }
    let sizes: Vec<usize> = inputs.iter().zip(&mapped).filter_map(|(x, d)| d.map(|d| x.dims()[d])).collect();
    let Some(&batch) = sizes.first() else {
        return Err(Error::msg("vmap: Expected at least one Tensor to vmap over"));
    };
    if sizes.iter().any(|&s| s != batch) {
        let list: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
        return Err(Error::msg(format!(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got sizes [{}] for \
             the mapped dimension",
            list.join(", ")
        )));
    }
    let empty = batch == 0;
    let calls = if empty { 1 } else { batch };
    let saved = (options.randomness == Randomness::Same).then(|| default_generator().get_state());
    let mut per_output: Vec<Vec<Tensor>> = Vec::new();
    for b in 0..calls {
        let args: Vec<Tensor> = inputs
            .iter()
            .zip(&mapped)
            .map(|(x, d)| match d {
                None => Ok(x.clone()),
                Some(d) if empty => {
                    let mut shape = x.dims().to_vec();
                    shape.remove(*d);
                    Tensor::zeros(shape, (x.dtype(), x.device()))
                }
                Some(d) => x.select(*d as isize, b as isize),
            })
            .collect::<Result<_>>()?;
        if let Some(state) = saved {
            default_generator().set_state(state);
        }
        let outs = f(args.as_slice())?;
        if b == 0 {
            per_output = outs.into_iter().map(|o| vec![o]).collect();
        } else {
            if outs.len() != per_output.len() {
                return Err(Error::msg(format!(
                    "vmap: the function returned {} outputs for index 0 but {} for index {b}",
                    per_output.len(),
                    outs.len()
                )));
            }
            for (slot, o) in per_output.iter_mut().zip(outs) {
                slot.push(o);
            }
        }
    }
    if out_dims.len() != 1 && out_dims.len() != per_output.len() {
        return Err(Error::msg(format!(
            "vmap(<fn>, ..., out_dims={out_repr})(<inputs>): out_dims is not compatible with the structure \
             of `outputs`. out_dims has {} entries but outputs has {}.",
            out_dims.len(),
            per_output.len()
        )));
    }
    per_output
        .iter()
        .enumerate()
        .map(|(k, slices)| {
            let d = if out_dims.len() == 1 { out_dims[0] } else { out_dims[k] };
            let rank = slices[0].rank() as isize + 1;
            if d < -rank || d >= rank {
                return Err(Error::msg(format!(
                    "Dimension out of range (expected to be in range of [{}, {}], but got {d})",
                    -rank,
                    rank - 1
                )));
            }
            let d = if d < 0 { d + rank } else { d };
            if empty {
                return slices[0].unsqueeze(d)?.narrow(d, 0, 0);
            }
            let refs: Vec<&Tensor> = slices.iter().collect();
            Tensor::stack(&refs, d)
        })
        .collect()
}
