//! `torch.gradient` (central differences inside, one-sided first- or second-order differences at
//! the edges, for uniform spacings or coordinate tensors, as ATen's `gradient_helper`), the
//! `igamma`/`igammac` aliases of `special.gammainc`/`gammaincc` (and their in-place forms) and
//! `torch.nonzero_static`.

use oxtorch_core::{wrap_dim, DType, Error, Result};

use crate::Tensor;

/// How `torch.gradient` is told the sample spacing of each dim.
#[derive(Clone, Copy)]
enum Spacing<'a> {
    /// A scalar (one spacing for every dim); `checked` when given by the caller.
    Uniform(f64, bool),
    /// One spacing per dim.
    Scalars(&'a [f64]),
    /// One 1-d coordinate tensor per dim.
    Coordinates(&'a [Tensor]),
}

impl Tensor {
    /// `torch.gradient(self, spacing=spacing, dim=dim, edge_order=edge_order)` with a scalar (or
    /// unspecified, `None`: 1) spacing for every dim: one tensor per dim of `dim` (every dim when
    /// `None`), the derivative estimated by central differences `(x[i+1] - x[i-1]) / 2h` inside
    /// and one-sided differences of order `edge_order` (1 or 2) at both ends. Each dim must have
    /// at least `edge_order + 1` elements. Integer inputs give the default float dtype.
    pub fn gradient(
        &self,
        spacing: Option<f64>,
        dim: Option<&[isize]>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        self.gradient_impl(Spacing::Uniform(spacing.unwrap_or(1.0), spacing.is_some()), dim, edge_order)
    }

    /// `torch.gradient(self, spacing=[h0, h1, ...], dim=dim, edge_order=edge_order)`: one
    /// uniform spacing per dim of `dim` (per dim of `self` when `dim` is `None`), the list's
    /// length checked as torch's.
    pub fn gradient_spacings(
        &self,
        spacing: &[f64],
        dim: Option<&[isize]>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        self.gradient_impl(Spacing::Scalars(spacing), dim, edge_order)
    }

    /// `torch.gradient(self, spacing=[x0, x1, ...], dim=dim, edge_order=edge_order)`: one 1-d
    /// tensor of sample coordinates per dim (non-uniform spacing, second-order accurate inside);
    /// the result dtype is the promotion of `self` and the coordinates. Differentiable in `self`
    /// and in the coordinates.
    pub fn gradient_coordinates(
        &self,
        coordinates: &[Tensor],
        dim: Option<&[isize]>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        self.gradient_impl(Spacing::Coordinates(coordinates), dim, edge_order)
    }

    fn gradient_impl(
        &self,
        spacing: Spacing<'_>,
        dim: Option<&[isize]>,
        edge_order: i64,
    ) -> Result<Vec<Tensor>> {
        if self.dtype() == DType::U8 {
            return Err(Error::msg("torch.gradient does not support uint8 input."));
        }
        let rank = self.rank();
        let given = match spacing {
            Spacing::Uniform(_, true) => Some(dim.map_or(rank, <[isize]>::len)),
            Spacing::Uniform(_, false) => None,
            Spacing::Scalars(s) => Some(s.len()),
            Spacing::Coordinates(c) => Some(c.len()),
        };
        if let Some(len) = given {
            match dim {
                None if len != rank => {
                    return Err(Error::msg(format!(
                        "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to 'self.dim() = {rank}', since dim argument was not given, but got a list of length {len}"
                    )))
                }
                Some(d) if len != d.len() => {
                    return Err(Error::msg(format!(
                        "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have the same length, but got a spacing argument of length {len} and a dim argument of length {}.",
                        d.len()
                    )))
                }
                _ => {}
            }
        }
        if edge_order != 1 && edge_order != 2 {
            return Err(Error::msg("torch.gradient only supports edge_order=1 and edge_order=2."));
        }
        let dims: Vec<usize> = match dim {
            Some(d) => {
                let mut seen = vec![false; rank.max(1)];
                let mut out = Vec::with_capacity(d.len());
                for &x in d {
                    let w = wrap_dim(x, rank)?;
                    if seen[w] {
                        return Err(Error::msg(format!(
                            "dim {w} appears multiple times in the list of dims"
                        )));
                    }
                    seen[w] = true;
                    out.push(w);
                }
                out
            }
            None => (0..rank).collect(),
        };
        let need = edge_order as usize + 1;
        for &d in &dims {
            if self.dims().get(d).copied().unwrap_or(1) < need {
                return Err(Error::msg(
                    "torch.gradient expected each dimension size to be at least edge_order+1",
                ));
            }
        }
        let mut out = Vec::with_capacity(dims.len());
        for (i, &d) in dims.iter().enumerate() {
            out.push(match spacing {
                Spacing::Uniform(h, _) => self.gradient_uniform(d as isize, h, edge_order)?,
                Spacing::Scalars(s) => self.gradient_uniform(d as isize, s[i], edge_order)?,
                Spacing::Coordinates(c) => self.gradient_coords(d, &c[i], edge_order)?,
            });
        }
        Ok(out)
    }

    /// ATen's `gradient_helper_float` along `d` with spacing `h`.
    fn gradient_uniform(&self, d: isize, h: f64, edge_order: i64) -> Result<Tensor> {
        let n = self.size(d)?;
        let at = |start: usize, len: usize| self.narrow(d, start as isize, len);
        let center = at(2, n - 2)?.sub(&at(0, n - 2)?)?.div(h)?;
        let (prepend, append) = if edge_order == 1 {
            (at(1, 1)?.sub(&at(0, 1)?)?.div(h)?, at(n - 1, 1)?.sub(&at(n - 2, 1)?)?.div(h)?)
        } else {
            let prepend = at(0, 1)?.mul(-1.5)?.add(&at(1, 1)?.mul(2)?)?.sub(&at(2, 1)?.mul(0.5)?)?;
            let append =
                at(n - 3, 1)?.mul(0.5)?.add(&at(n - 2, 1)?.mul(-2)?)?.add(&at(n - 1, 1)?.mul(1.5)?)?;
            (prepend.div(h)?, append.div(h)?)
        };
        join(&center.div(2)?, &prepend, &append, d)
    }

    /// ATen's `gradient_helper` along `d` with the 1-d sample coordinates `x`.
    fn gradient_coords(&self, d: usize, x: &Tensor, edge_order: i64) -> Result<Tensor> {
        if x.rank() != 1 {
            return Err(Error::msg(format!(
                "torch.gradient expected each element of spacing to have one dimension, but got an element with {} dimensions!",
                x.rank()
            )));
        }
        let di = d as isize;
        let n = self.size(di)?;
        let at = |start: usize, len: usize| self.narrow(di, start as isize, len);
        let mut shape = vec![1isize; self.rank()];
        shape[d] = -1;
        let dx = x.diff(1, 0, None, None)?;
        let k = dx.size(0)?;
        let dx1 = dx.narrow(0, 0, k.saturating_sub(1))?;
        let dx2 = dx.narrow(0, 1, k.saturating_sub(1))?;
        let a = dx2.neg()?.div(&dx1.mul(&dx1.add(&dx2)?)?)?.reshape(shape.clone())?;
        let b = dx2.sub(&dx1)?.div(&dx1.mul(&dx2)?)?.reshape(shape.clone())?;
        let c = dx1.div(&dx2.mul(&dx1.add(&dx2)?)?)?.reshape(shape)?;
        let center = a.mul(&at(0, n - 2)?)?.add(&b.mul(&at(1, n - 2)?)?)?.add(&c.mul(&at(2, n - 2)?)?)?;
        let (prepend, append) = if edge_order == 1 {
            (
                at(1, 1)?.sub(&at(0, 1)?)?.div(&dx.select(0, 0)?)?,
                at(n - 1, 1)?.sub(&at(n - 2, 1)?)?.div(&dx.select(0, -1)?)?,
            )
        } else {
            let (h0, h1) = (dx.select(0, 0)?, dx.select(0, 1)?);
            let s = h0.add(&h1)?;
            let a = h0.mul(2.0)?.add(&h1)?.div(&h0.mul(&s)?)?.neg()?;
            let b = s.div(&h0.mul(&h1)?)?;
            let c = h0.neg()?.div(&h1.mul(&s)?)?;
            let prepend = a.mul(&at(0, 1)?)?.add(&b.mul(&at(1, 1)?)?)?.add(&c.mul(&at(2, 1)?)?)?;
            let (hl, hm) = (dx.select(0, -1)?, dx.select(0, -2)?);
            let s = hl.add(&hm)?;
            let a = hl.div(&hm.mul(&s)?)?;
            let b = s.div(&hl.mul(&hm)?)?.neg()?;
            let c = hl.mul(2)?.add(&hm)?.div(&hl.mul(&s)?)?;
            let append = a.mul(&at(n - 3, 1)?)?.add(&b.mul(&at(n - 2, 1)?)?)?.add(&c.mul(&at(n - 1, 1)?)?)?;
            (prepend, append)
        };
        join(&center, &prepend, &append, di)
    }

    /// `torch.igamma(self, other)`: the same as [`Tensor::special_gammainc`].
    pub fn igamma(&self, other: &Tensor) -> Result<Tensor> {
        self.special_gammainc(other)
    }

    /// `torch.igammac(self, other)`: the same as [`Tensor::special_gammaincc`].
    pub fn igammac(&self, other: &Tensor) -> Result<Tensor> {
        self.special_gammaincc(other)
    }

    /// In-place [`Tensor::igamma`] (torch's `igamma_`): computed in the promoted dtype and
    /// written into `self` (a result that cannot be cast into `self`'s dtype is torch's error).
    pub fn igamma_(&self, other: &Tensor) -> Result<&Tensor> {
        self.apply_(&[other], |x| x.special_gammainc(other))
    }

    /// In-place [`Tensor::igammac`] (torch's `igammac_`), as [`Tensor::igamma_`].
    pub fn igammac_(&self, other: &Tensor) -> Result<&Tensor> {
        self.apply_(&[other], |x| x.special_gammaincc(other))
    }

    /// `torch.nonzero_static(self, size=size, fill_value=fill_value)`: [`Tensor::nonzero`]'s
    /// coordinates `[size, rank]` int64, truncated to the first `size` non-zero elements or padded
    /// with rows of `fill_value`.
    pub fn nonzero_static(&self, size: i64, fill_value: i64) -> Result<Tensor> {
        if size < 0 {
            return Err(Error::msg("nonzero_static: 'size' must be an non-negative integer"));
        }
        let size = size as usize;
        let nz = self.nonzero()?;
        let found = nz.size(0)?;
        if found >= size {
            return nz.narrow(0, 0, size)?.contiguous();
        }
        let cols = nz.size(1)?;
        let pad = Tensor::full([size - found, cols], fill_value, (DType::I64, self.device()))?;
        Tensor::cat(&[&nz, &pad], 0)
    }
}

/// `cat([prepend, center, append], dim)` in the widest dtype of the three (torch's `cat`
/// promotion; `center` always has it).
fn join(center: &Tensor, prepend: &Tensor, append: &Tensor, dim: isize) -> Result<Tensor> {
    let dtype = center.dtype();
    let prepend = prepend.to_dtype(dtype)?;
    let append = append.to_dtype(dtype)?;
    Tensor::cat(&[&prepend, center, &append], dim)
}
