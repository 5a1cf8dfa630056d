//! Padding layers: `ZeroPad1d/2d/3d`, `ConstantPad1d/2d/3d`, `ReflectionPad1d/2d/3d`,
//! `ReplicationPad1d/2d/3d` and `CircularPad1d/2d/3d` (stateless wrappers of `F.pad`, with torch's
//! `padding` argument: one value for every side, or the `(left, right, top, bottom, front, back)`
//! list, which torch passes on to `F.pad` as it is).

use oxtorch_tensor::{Error, Result, Tensor};

use crate::module::{Forward, Member, MemberMut, Module};

/// torch's `_pair` / `_quadruple` / `_ntuple(6)` of a padding argument: one value repeated on
/// both sides of each of the `n` padded dims; a list of any other length is kept as given (and
/// checked by `F.pad`, as in torch).
fn sides(padding: &[isize], n: usize) -> Vec<isize> {
    if padding.len() == 1 {
        vec![padding[0]; 2 * n]
    } else {
        padding.to_vec()
    }
}

/// torch's `nn.ConstantPad1d/2d/3d(padding, value)`: pads the last `N` dims with `value`
/// (negative padding crops). Any input with at least `N` dims is accepted, as in torch.
#[derive(Clone, Debug)]
pub struct ConstantPadNd<const N: usize> {
    /// `(left, right)`, then `(top, bottom)`, then `(front, back)`: the last dim first
    pub padding: Vec<isize>,
    /// the fill value
    pub value: f64,
}

/// torch's `nn.ConstantPad1d`.
pub type ConstantPad1d = ConstantPadNd<1>;
/// torch's `nn.ConstantPad2d`.
pub type ConstantPad2d = ConstantPadNd<2>;
/// torch's `nn.ConstantPad3d`.
pub type ConstantPad3d = ConstantPadNd<3>;

impl<const N: usize> ConstantPadNd<N> {
    /// A layer padding by `padding` (one value for every side, or `2 N` values) with `value`.
    pub fn new(padding: &[isize], value: f64) -> Self {
        ConstantPadNd { padding: sides(padding, N), value }
    }
}

impl<const N: usize> Forward for ConstantPadNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.pad(&self.padding, "constant", Some(self.value))
    }
}

/// torch's `nn.ZeroPad1d/2d/3d(padding)`: [`ConstantPadNd`] with zeros.
#[derive(Clone, Debug)]
pub struct ZeroPadNd<const N: usize> {
    /// `(left, right)`, then `(top, bottom)`, then `(front, back)`: the last dim first
    pub padding: Vec<isize>,
}

/// torch's `nn.ZeroPad1d`.
pub type ZeroPad1d = ZeroPadNd<1>;
/// torch's `nn.ZeroPad2d`.
pub type ZeroPad2d = ZeroPadNd<2>;
/// torch's `nn.ZeroPad3d`.
pub type ZeroPad3d = ZeroPadNd<3>;

impl<const N: usize> ZeroPadNd<N> {
    /// A layer padding by `padding` (one value for every side, or `2 N` values) with zeros.
    pub fn new(padding: &[isize]) -> Self {
        ZeroPadNd { padding: sides(padding, N) }
    }
}

impl<const N: usize> Forward for ZeroPadNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.pad(&self.padding, "constant", Some(0.0))
    }
}

/// torch's `nn.ReflectionPad1d/2d/3d(padding)`: pads the last `N` dims with their reflection
/// (without repeating the edge); the input is unbatched (`N + 1` dims) or batched (`N + 2`), and
/// each pad must be smaller than its dim, as `F.pad(mode="reflect")` checks.
#[derive(Clone, Debug)]
pub struct ReflectionPadNd<const N: usize> {
    /// `(left, right)`, then `(top, bottom)`, then `(front, back)`: the last dim first
    pub padding: Vec<isize>,
}

/// torch's `nn.ReflectionPad1d`.
pub type ReflectionPad1d = ReflectionPadNd<1>;
/// torch's `nn.ReflectionPad2d`.
pub type ReflectionPad2d = ReflectionPadNd<2>;
/// torch's `nn.ReflectionPad3d`.
pub type ReflectionPad3d = ReflectionPadNd<3>;

impl<const N: usize> ReflectionPadNd<N> {
    /// A layer padding by `padding` (one value for every side, or `2 N` values).
    pub fn new(padding: &[isize]) -> Self {
        ReflectionPadNd { padding: sides(padding, N) }
    }
}

impl<const N: usize> Forward for ReflectionPadNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.pad(&self.padding, "reflect", None)
    }
}

/// torch's `nn.ReplicationPad1d/2d/3d(padding)`: pads the last `N` dims by repeating the edge
/// values; the input is unbatched (`N + 1` dims) or batched (`N + 2`), as `F.pad` checks.
#[derive(Clone, Debug)]
pub struct ReplicationPadNd<const N: usize> {
    /// `(left, right)`, then `(top, bottom)`, then `(front, back)`: the last dim first
    pub padding: Vec<isize>,
}

/// torch's `nn.ReplicationPad1d`.
pub type ReplicationPad1d = ReplicationPadNd<1>;
/// torch's `nn.ReplicationPad2d`.
pub type ReplicationPad2d = ReplicationPadNd<2>;
/// torch's `nn.ReplicationPad3d`.
pub type ReplicationPad3d = ReplicationPadNd<3>;

impl<const N: usize> ReplicationPadNd<N> {
    /// A layer padding by `padding` (one value for every side, or `2 N` values).
    pub fn new(padding: &[isize]) -> Self {
        ReplicationPadNd { padding: sides(padding, N) }
    }
}

impl<const N: usize> Forward for ReplicationPadNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.pad(&self.padding, "replicate", None)
    }
}

/// torch's `nn.CircularPad1d/2d/3d(padding)`: pads the last `N` dims by wrapping around (the
/// start pads the end and the end the start; negative padding crops). The input must have `N + 1`
/// or `N + 2` dims (torch's own check, before `F.pad`'s).
#[derive(Clone, Debug)]
pub struct CircularPadNd<const N: usize> {
    /// `(left, right)`, then `(top, bottom)`, then `(front, back)`: the last dim first
    pub padding: Vec<isize>,
}

/// torch's `nn.CircularPad1d`.
pub type CircularPad1d = CircularPadNd<1>;
/// torch's `nn.CircularPad2d`.
pub type CircularPad2d = CircularPadNd<2>;
/// torch's `nn.CircularPad3d`.
pub type CircularPad3d = CircularPadNd<3>;

impl<const N: usize> CircularPadNd<N> {
    /// A layer padding by `padding` (one value for every side, or `2 N` values).
    pub fn new(padding: &[isize]) -> Self {
        CircularPadNd { padding: sides(padding, N) }
    }
}

impl<const N: usize> Forward for CircularPadNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        if x.rank() != N + 1 && x.rank() != N + 2 {
            return Err(Error::shape(format!(
                "expected {}D or {}D input (got {}D input)",
                N + 1,
                N + 2,
                x.rank()
            )));
        }
        x.pad(&self.padding, "circular", None)
    }
}

/// Implements `Module` for a parameterless padding layer, with torch's type name per `N` and
/// torch's `extra_repr`: the padding tuple, `(1, 1, 2, 0)` (with `$value`, a constant pad's
/// `padding=(1, 1), value=3.5`).
macro_rules! stateless_pad {
    ($ty:ident, $names:expr) => {
        stateless_pad!($ty, $names, |s: &$ty<N>| crate::module::py_tuple(&sides(&s.padding, N)));
    };
    ($ty:ident, $names:expr, $repr:expr) => {
        impl<const N: usize> Module for $ty<N> {
            fn visit<'m>(&'m self, _: &mut dyn FnMut(&str, Member<'m>)) {}
            fn visit_mut(&mut self, _: &mut dyn FnMut(&str, MemberMut<'_>)) {}
            fn type_name(&self) -> &'static str {
                let names: [&'static str; 3] = $names;
                names.get(N.wrapping_sub(1)).copied().unwrap_or(stringify!($ty))
            }
            fn extra_repr(&self) -> String {
                let repr = $repr;
                repr(self)
            }
        }
    };
}

stateless_pad!(ConstantPadNd, ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d"], |s: &ConstantPadNd<N>| {
    format!(
        "padding={}, value={}",
        crate::module::py_tuple(&sides(&s.padding, N)),
        crate::module::py_float(s.value)
    )
});
stateless_pad!(ZeroPadNd, ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]);
stateless_pad!(ReflectionPadNd, ["ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d"]);
stateless_pad!(ReplicationPadNd, ["ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"]);
stateless_pad!(CircularPadNd, ["CircularPad1d", "CircularPad2d", "CircularPad3d"]);
