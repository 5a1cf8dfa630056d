//! `Conv1d`, `Conv2d`, `Conv3d` (torch's defaults and initialisation).

use oxtorch_tensor::{DType, Error, Padding, Result, Tensor};

use crate::init;
use crate::module::{Forward, Member, MemberMut, Module};

/// Hyper-parameters of a convolution beyond the channel counts and kernel size, with torch's
/// defaults (`stride 1, padding 0, dilation 1, groups 1, bias true`).
#[derive(Clone, Debug)]
pub struct ConvOptions {
    /// stride per spatial dim (one value broadcasts)
    pub stride: Vec<usize>,
    /// zero padding per spatial dim, or "same"/"valid"
    pub padding: Padding,
    /// dilation per spatial dim
    pub dilation: Vec<usize>,
    /// channel groups
    pub groups: usize,
    /// whether the layer has a bias
    pub bias: bool,
    /// how the padding is filled: "zeros" (torch's default), "reflect", "replicate" or "circular"
    pub padding_mode: &'static str,
    /// parameter dtype
    pub dtype: DType,
}

/// The padding modes a convolution layer accepts (torch's `padding_mode`).
const PADDING_MODES: [&str; 4] = ["zeros", "reflect", "replicate", "circular"];

impl Default for ConvOptions {
    fn default() -> Self {
        ConvOptions {
            stride: vec![1],
            padding: Padding::Explicit(vec![0]),
            dilation: vec![1],
            groups: 1,
            bias: true,
            padding_mode: "zeros",
            dtype: DType::default_float(),
        }
    }
}

/// An N-d convolution layer: `weight [out, in / groups, *kernel]`, `bias [out]`.
pub struct ConvNd<const N: usize> {
    /// the filters
    pub weight: Tensor,
    /// the per-channel bias
    pub bias: Option<Tensor>,
    /// the other hyper-parameters
    pub options: ConvOptions,
}

/// torch's `nn.Conv1d`.
pub type Conv1d = ConvNd<1>;
/// torch's `nn.Conv2d`.
pub type Conv2d = ConvNd<2>;
/// torch's `nn.Conv3d`.
pub type Conv3d = ConvNd<3>;

impl<const N: usize> ConvNd<N> {
    /// A layer with torch's initialisation (`kaiming_uniform_(a=√5)` weights, `U(±1/√fan_in)` bias).
    pub fn new(
        in_channels: usize,
        out_channels: usize,
        kernel_size: &[usize],
        options: ConvOptions,
    ) -> Result<Self> {
        if !PADDING_MODES.contains(&options.padding_mode) {
            return Err(Error::msg(format!(
                "padding_mode must be one of {{'reflect', 'replicate', 'zeros', 'circular'}}, but got padding_mode='{}'",
                options.padding_mode
            )));
        }
        if matches!(options.padding, Padding::Same) && options.stride.iter().any(|&s| s != 1) {
            return Err(Error::msg("padding='same' is not supported for strided convolutions"));
        }
        let g = options.groups;
        // torch's checks, in its order
        if g == 0 {
            return Err(Error::msg("groups must be a positive integer"));
        }
        if !in_channels.is_multiple_of(g) {
            return Err(Error::msg("in_channels must be divisible by groups"));
        }
        if !out_channels.is_multiple_of(g) {
            return Err(Error::msg("out_channels must be divisible by groups"));
        }
        let kernel: Vec<usize> = match kernel_size.len() {
            1 => vec![kernel_size[0]; N],
            n if n == N => kernel_size.to_vec(),
            n => return Err(Error::msg(format!("kernel_size must have 1 or {N} values, got {n}"))),
        };
        let mut shape = vec![out_channels, in_channels / g];
        shape.extend(&kernel);
        let weight = Tensor::empty(shape, options.dtype)?;
        init::kaiming_uniform_(&weight, 5f64.sqrt(), "fan_in", "leaky_relu")?;
        let bias = if options.bias {
            let (fan_in, _) = init::calculate_fan_in_and_fan_out(&weight)?;
            let bound = if fan_in > 0 { 1.0 / (fan_in as f64).sqrt() } else { 0.0 };
            let b = Tensor::empty([out_channels], options.dtype)?;
            init::uniform_(&b, -bound, bound)?;
            Some(b.requires_grad_(true)?)
        } else {
            None
        };
        Ok(ConvNd { weight: weight.requires_grad_(true)?, bias, options })
    }
}

impl<const N: usize> Forward for ConvNd<N> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let o = &self.options;
        if o.padding_mode == "zeros" {
            return x.conv_nd(
                N,
                &self.weight,
                self.bias.as_ref(),
                &o.stride,
                o.padding.clone(),
                &o.dilation,
                o.groups,
            );
        }
        // As torch: pad with the mode first, then convolve without padding.
        let padded = x.pad(&self.mode_padding()?, o.padding_mode, None)?;
        let none = Padding::Explicit(vec![0]);
        padded.conv_nd(N, &self.weight, self.bias.as_ref(), &o.stride, none, &o.dilation, o.groups)
    }
}

impl<const N: usize> ConvNd<N> {
    /// The `(before, after)` pairs, last spatial dim first, that a non-zero `padding_mode` pads
    /// (torch's `_reversed_padding_repeated_twice`; "same" puts the odd one on the right).
    fn mode_padding(&self) -> Result<Vec<isize>> {
        let o = &self.options;
        let per_dim = |v: &[usize], what: &str| -> Result<Vec<usize>> {
            match v.len() {
                1 => Ok(vec![v[0]; N]),
                n if n == N => Ok(v.to_vec()),
                n => Err(Error::msg(format!("{what} must have 1 or {N} values, got {n}"))),
            }
        };
        let pairs: Vec<(usize, usize)> = match &o.padding {
            Padding::Valid => vec![(0, 0); N],
            Padding::Explicit(p) => per_dim(p, "padding")?.into_iter().map(|p| (p, p)).collect(),
            Padding::Same => {
                let dilation = per_dim(&o.dilation, "dilation")?;
                let kernel = &self.weight.dims()[2..];
                (0..N)
                    .map(|d| {
                        let total = dilation[d] * kernel[d].saturating_sub(1);
                        (total / 2, total - total / 2)
                    })
                    .collect()
            }
        };
        Ok(pairs.iter().rev().flat_map(|&(a, b)| [a as isize, b as isize]).collect())
    }
}

impl<const N: usize> Module for ConvNd<N> {
    fn visit<'m>(&'m self, f: &mut dyn FnMut(&str, Member<'m>)) {
        f("weight", Member::Param(&self.weight));
        if let Some(b) = &self.bias {
            f("bias", Member::Param(b));
        }
    }
    fn visit_mut(&mut self, f: &mut dyn FnMut(&str, MemberMut<'_>)) {
        f("weight", MemberMut::Param(&mut self.weight));
        if let Some(b) = &mut self.bias {
            f("bias", MemberMut::Param(b));
        }
    }
    fn type_name(&self) -> &'static str {
        ["Conv1d", "Conv2d", "Conv3d"].get(N.wrapping_sub(1)).copied().unwrap_or("ConvNd")
    }
    fn extra_repr(&self) -> String {
        let dims = self.weight.dims();
        conv_extra_repr::<N>(
            dims.get(1).copied().unwrap_or(0) * self.options.groups,
            dims.first().copied().unwrap_or(0),
            dims.get(2..).unwrap_or_default(),
            &self.options,
            self.bias.is_some(),
        )
    }
}

/// torch's `_ConvNd.extra_repr` for `N` spatial dims: `3, 8, kernel_size=(3, 3), stride=(1, 1)`
/// and the settings other than the defaults (shared with the lazy convolutions, which print
/// `in_channels` 0 before materialization).
pub(crate) fn conv_extra_repr<const N: usize>(
    in_channels: usize,
    out_channels: usize,
    kernel_size: &[usize],
    o: &ConvOptions,
    bias: bool,
) -> String {
    let per_dim =
        |v: &[usize]| -> Vec<usize> { (0..N).map(|d| v.get(d).or(v.last()).copied().unwrap_or(0)).collect() };
    let mut s = format!(
        "{in_channels}, {out_channels}, kernel_size={}, stride={}",
        crate::module::py_tuple(&per_dim(kernel_size)),
        crate::module::py_tuple(&per_dim(&o.stride))
    );
    match &o.padding {
        Padding::Explicit(p) if p.iter().all(|&x| x == 0) => {}
        Padding::Explicit(p) => s += &format!(", padding={}", crate::module::py_tuple(&per_dim(p))),
        Padding::Same => s += ", padding=same",
        Padding::Valid => s += ", padding=valid",
    }
    if o.dilation.iter().any(|&d| d != 1) {
        s += &format!(", dilation={}", crate::module::py_tuple(&per_dim(&o.dilation)));
    }
    if o.groups != 1 {
        s += &format!(", groups={}", o.groups);
    }
    if !bias {
        s += ", bias=False";
    }
    if o.padding_mode != "zeros" {
        s += &format!(", padding_mode={}", o.padding_mode);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs of torch 2.15's `Conv2d(1, 1, (2, 3), padding="same", padding_mode=mode,
    /// bias=False)` with weights `arange(6)` on `arange(12).reshape(1, 1, 3, 4)`, and of
    /// `Conv1d(1, 1, 3, padding=2, padding_mode=mode, bias=False)` with weights `[1, 10, 100]` on
    /// `arange(4)`.
    #[test]
    fn padding_modes_match_torch() -> Result<()> {
        // (The layers' initialisation draws from the global generator that seeded tests replay.)
        let _rng = crate::rng_lock();
        let cases: [(&str, [f32; 12], [f32; 6]); 3] = [
            (
                "reflect",
                [58., 67., 82., 83., 118., 127., 142., 143., 82., 91., 106., 107.],
                [12., 101., 210., 321., 232., 123.],
            ),
            (
                "replicate",
                [55., 67., 82., 90., 115., 127., 142., 150., 127., 139., 154., 162.],
                [0., 100., 210., 321., 332., 333.],
            ),
            (
                "circular",
                [64., 67., 82., 69., 124., 127., 142., 129., 40., 43., 58., 45.],
                [32., 103., 210., 321., 32., 103.],
            ),
        ];
        for (mode, want2, want1) in cases {
            let opts =
                |padding| ConvOptions { padding, padding_mode: mode, bias: false, ..Default::default() };
            let mut c2 = Conv2d::new(1, 1, &[2, 3], opts(Padding::Same))?;
            c2.weight = Tensor::arange(6, DType::F32)?.reshape([1, 1, 2, 3])?;
            let y = c2.forward(&Tensor::arange(12, DType::F32)?.reshape([1, 1, 3, 4])?)?;
            assert_eq!(y.dims(), &[1, 1, 3, 4]);
            assert_eq!(y.reshape([-1])?.to_vec::<f32>()?, want2, "{mode}, 2-d");
            let mut c1 = Conv1d::new(1, 1, &[3], opts(Padding::Explicit(vec![2])))?;
            c1.weight = Tensor::from_slice(&[1f32, 10., 100.], [1, 1, 3])?;
            let y = c1.forward(&Tensor::arange(4, DType::F32)?.reshape([1, 1, 4])?)?;
            assert_eq!(y.reshape([-1])?.to_vec::<f32>()?, want1, "{mode}, 1-d");
        }
        let strided = ConvOptions {
            padding: Padding::Same,
            stride: vec![2],
            padding_mode: "reflect",
            ..Default::default()
        };
        let err = Conv2d::new(1, 1, &[3], strided).err().unwrap().to_string();
        assert!(err.contains("padding='same' is not supported for strided convolutions"), "{err}");
        let bad = ConvOptions { padding_mode: "mirror", ..Default::default() };
        let err = Conv2d::new(1, 1, &[3], bad).err().unwrap().to_string();
        assert!(err.contains("padding_mode must be one of") && err.contains("'mirror'"), "{err}");
        Ok(())
    }
}
