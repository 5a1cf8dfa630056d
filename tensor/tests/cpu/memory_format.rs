//! Memory formats (torch's `memory_format=`): strides, contiguity, suggestions and `*_like`
//! layouts against PyTorch 2.15, errors, and gradients through the conversions. Values never
//! change with the format.
//!
//! The expected strides were printed by torch, e.g.
//! ```python
//! x = torch.empty(2, 3, 4, 5)
//! x.contiguous(memory_format=torch.channels_last).stride()   # (60, 1, 15, 3)
//! x.is_contiguous(memory_format=torch.channels_last)          # False
//! torch.empty_like(x).stride(), x.clone().stride()            # preserve_format
//! x.to(memory_format=torch.channels_last) is x                # suggest_memory_format() == channels_last
//! ```

use oxtorch_tensor::{DType, MemoryFormat, Result, Tensor};

use MemoryFormat::{ChannelsLast as CL, ChannelsLast3d as CL3, Contiguous as C, Preserve as P};

/// A view of `arange(2000)` (float32) with `dims` and `strides` from offset 0.
fn strided(dims: &[usize], strides: &[usize]) -> Tensor {
    Tensor::arange(2000, DType::F32).unwrap().as_strided(dims, strides, Some(0)).unwrap()
}

fn values(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

/// One layout: torch's `is_contiguous()`, `is_contiguous(channels_last)`,
/// `is_contiguous(channels_last_3d)`, `suggest_memory_format()` and the strides of
/// `empty_like(x)` / `x.clone()` (preserve_format).
struct Case {
    what: &'static str,
    dims: &'static [usize],
    strides: &'static [usize],
    contiguous: bool,
    cl: bool,
    cl3: bool,
    suggest: MemoryFormat,
    like: &'static [usize],
}

#[rustfmt::skip]
const CASES: &[Case] = &[
    // torch.empty(2, 3, 4, 5)
    Case { what: "row-major", dims: &[2, 3, 4, 5], strides: &[60, 20, 5, 1], contiguous: true, cl: false, cl3: false, suggest: C, like: &[60, 20, 5, 1] },
    // torch.empty(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    Case { what: "channels last", dims: &[2, 3, 4, 5], strides: &[60, 1, 15, 3], contiguous: false, cl: true, cl3: false, suggest: CL, like: &[60, 1, 15, 3] },
    // torch.empty(2, 1, 4, 5): N×1×H×W row-major is both, suggests row-major
    Case { what: "N1HW row-major", dims: &[2, 1, 4, 5], strides: &[20, 20, 5, 1], contiguous: true, cl: true, cl3: false, suggest: C, like: &[20, 20, 5, 1] },
    // torch.empty(2, 1, 4, 5, memory_format=torch.channels_last)
    Case { what: "N1HW channels last", dims: &[2, 1, 4, 5], strides: &[20, 1, 5, 1], contiguous: true, cl: true, cl3: false, suggest: CL, like: &[20, 1, 5, 1] },
    // torch.empty(1, 3, 1, 1)
    Case { what: "1C11", dims: &[1, 3, 1, 1], strides: &[3, 1, 1, 1], contiguous: true, cl: true, cl3: false, suggest: C, like: &[3, 1, 1, 1] },
    // torch.empty(2, 3, 1, 1)
    Case { what: "NC11", dims: &[2, 3, 1, 1], strides: &[3, 1, 1, 1], contiguous: true, cl: true, cl3: false, suggest: C, like: &[3, 1, 1, 1] },
    // torch.empty(2, 1, 1, 1)
    Case { what: "N111", dims: &[2, 1, 1, 1], strides: &[1, 1, 1, 1], contiguous: true, cl: true, cl3: false, suggest: C, like: &[1, 1, 1, 1] },
    // torch.empty(2, 1, 1, 4)[..., :1]: N11W sliced on W
    Case { what: "N11W sliced", dims: &[2, 1, 1, 1], strides: &[4, 4, 4, 1], contiguous: false, cl: false, cl3: false, suggest: C, like: &[1, 1, 1, 1] },
    // torch.empty(1, 4, 1, 3).transpose(1, 3)
    Case { what: "1C1W transposed", dims: &[1, 3, 1, 4], strides: &[12, 1, 3, 3], contiguous: false, cl: true, cl3: false, suggest: C, like: &[12, 1, 3, 3] },
    // torch.empty(3, 1, 4, 1).as_strided((3, 1, 4, 1), (4, 1, 1, 1))
    Case { what: "N1H1 channels-last strides", dims: &[3, 1, 4, 1], strides: &[4, 1, 1, 1], contiguous: true, cl: true, cl3: false, suggest: CL, like: &[4, 1, 1, 1] },
    // torch.empty(3, 1, 4, 1).as_strided((3, 1, 4, 1), (4, 4, 1, 1))
    Case { what: "N1H1 row-major strides", dims: &[3, 1, 4, 1], strides: &[4, 4, 1, 1], contiguous: true, cl: true, cl3: false, suggest: C, like: &[4, 4, 1, 1] },
    // torch.empty(2, 5, 3, 4).permute(0, 2, 3, 1)
    Case { what: "other permutation", dims: &[2, 3, 4, 5], strides: &[60, 4, 1, 12], contiguous: false, cl: false, cl3: false, suggest: C, like: &[60, 4, 1, 12] },
    // channels_last[:, :, :, ::2]
    Case { what: "channels last, W stepped", dims: &[2, 3, 4, 3], strides: &[60, 1, 15, 6], contiguous: false, cl: false, cl3: false, suggest: C, like: &[36, 1, 9, 3] },
    // channels_last[:, :2]
    Case { what: "channels last, C narrowed", dims: &[2, 2, 4, 5], strides: &[60, 1, 15, 3], contiguous: false, cl: false, cl3: false, suggest: CL, like: &[40, 1, 10, 2] },
    // torch.empty(2, 4, 10, 3).permute(0, 3, 1, 2)[:, :, :, ::2]
    Case { what: "channels-last order, not dense", dims: &[2, 3, 4, 5], strides: &[120, 1, 30, 6], contiguous: false, cl: false, cl3: false, suggest: CL, like: &[60, 1, 15, 3] },
    // torch.empty(1, 3, 1, 1).expand(2, 3, 4, 5)
    Case { what: "expanded", dims: &[2, 3, 4, 5], strides: &[0, 1, 0, 0], contiguous: false, cl: false, cl3: false, suggest: C, like: &[60, 20, 5, 1] },
    // torch.empty(2, 1, 4, 5).expand(2, 3, 4, 5)
    Case { what: "C expanded", dims: &[2, 3, 4, 5], strides: &[20, 0, 5, 1], contiguous: false, cl: false, cl3: false, suggest: C, like: &[60, 20, 5, 1] },
    // torch.empty(4, 6).t()
    Case { what: "transposed matrix", dims: &[6, 4], strides: &[1, 6], contiguous: false, cl: false, cl3: false, suggest: C, like: &[1, 6] },
    // torch.empty(4, 6).t()[::2]
    Case { what: "stepped transposed matrix", dims: &[3, 4], strides: &[2, 6], contiguous: false, cl: false, cl3: false, suggest: C, like: &[1, 3] },
    // torch.empty(2, 3, 8).permute(2, 0, 1)[::2]
    Case { what: "stepped 3-d permutation", dims: &[4, 2, 3], strides: &[2, 24, 8], contiguous: false, cl: false, cl3: false, suggest: C, like: &[1, 12, 4] },
    // torch.empty(10)[::2]
    Case { what: "stepped vector", dims: &[5], strides: &[2], contiguous: false, cl: false, cl3: false, suggest: C, like: &[1] },
    // torch.tensor(1.0)
    Case { what: "0-d", dims: &[], strides: &[], contiguous: true, cl: false, cl3: false, suggest: C, like: &[] },
    // torch.empty(2, 0, 3, 3)
    Case { what: "empty", dims: &[2, 0, 3, 3], strides: &[9, 9, 3, 1], contiguous: true, cl: false, cl3: false, suggest: C, like: &[9, 9, 3, 1] },
    // torch.empty(2, 0, 3, 3, memory_format=torch.channels_last)
    Case { what: "empty channels last", dims: &[2, 0, 3, 3], strides: &[0, 1, 0, 0], contiguous: true, cl: true, cl3: false, suggest: C, like: &[0, 1, 0, 0] },
    // torch.empty(2, 3, 4, 5, 6)
    Case { what: "5-d row-major", dims: &[2, 3, 4, 5, 6], strides: &[360, 120, 30, 6, 1], contiguous: true, cl: false, cl3: false, suggest: C, like: &[360, 120, 30, 6, 1] },
    // torch.empty(2, 3, 4, 5, 6).contiguous(memory_format=torch.channels_last_3d)
    Case { what: "5-d channels last", dims: &[2, 3, 4, 5, 6], strides: &[360, 1, 90, 18, 3], contiguous: false, cl: false, cl3: true, suggest: CL3, like: &[360, 1, 90, 18, 3] },
    // torch.empty(2, 1, 4, 5, 6)
    Case { what: "5-d N1DHW", dims: &[2, 1, 4, 5, 6], strides: &[120, 120, 30, 6, 1], contiguous: true, cl: false, cl3: true, suggest: C, like: &[120, 120, 30, 6, 1] },
    // channels_last_3d[:, :, ::2]
    Case { what: "5-d channels last, D stepped", dims: &[2, 3, 2, 5, 6], strides: &[360, 1, 180, 18, 3], contiguous: false, cl: false, cl3: false, suggest: CL3, like: &[180, 1, 90, 18, 3] },
    // torch.empty_strided((6, 5, 4, 3, 2), (6, 0, 120, 0, 1)): stride-0 dims stay put
    Case { what: "5-d with stride-0 dims", dims: &[6, 5, 4, 3, 2], strides: &[6, 0, 120, 0, 1], contiguous: false, cl: false, cl3: false, suggest: C, like: &[6, 36, 180, 2, 1] },
];

#[test]
fn contiguity_suggestions_and_preserved_strides_follow_torch() -> Result<()> {
    for c in CASES {
        let x = strided(c.dims, c.strides);
        let w = c.what;
        assert_eq!(x.is_contiguous_format(C), c.contiguous, "{w}: is_contiguous");
        assert_eq!(x.is_contiguous_format(CL), c.cl, "{w}: is_contiguous(channels_last)");
        assert_eq!(x.is_contiguous_format(CL3), c.cl3, "{w}: is_contiguous(channels_last_3d)");
        assert_eq!(x.suggest_memory_format(), c.suggest, "{w}: suggest_memory_format");
        // torch.empty_like / zeros_like / ones_like / full_like / rand_like / clone with
        // preserve_format all lay out their result alike.
        assert_eq!(x.empty_like_format(P)?.strides(), c.like, "{w}: empty_like");
        assert_eq!(x.zeros_like_format(P)?.strides(), c.like, "{w}: zeros_like");
        let ones = x.ones_like_format(P)?;
        assert_eq!(ones.strides(), c.like, "{w}: ones_like");
        assert!(values(&ones).iter().all(|&v| v == 1.0), "{w}: ones_like values");
        let full = x.full_like_format(2.5, P)?;
        assert_eq!(full.strides(), c.like, "{w}: full_like");
        assert!(values(&full).iter().all(|&v| v == 2.5), "{w}: full_like values");
        let r = x.rand_like_format(P)?;
        assert_eq!(r.strides(), c.like, "{w}: rand_like");
        assert!(values(&r).iter().all(|&v| (0.0..1.0).contains(&v)), "{w}: rand_like values");
        assert_eq!(x.randn_like_format(P)?.strides(), c.like, "{w}: randn_like");
        let y = x.clone_format(P)?;
        assert_eq!(y.strides(), c.like, "{w}: clone");
        assert!(!y.shares_storage(&x), "{w}: clone copies");
        assert_eq!(values(&y), values(&x), "{w}: clone values");
        // The preserved layouts are dense.
        assert!(y.is_non_overlapping_and_dense(), "{w}: clone is dense");
        // x.to(memory_format=fmt) is x exactly when x suggests fmt.
        let same = x.to_memory_format(c.suggest)?;
        assert!(same.is_same(&x), "{w}: to(memory_format=suggested) aliases");
    }
    Ok(())
}

#[test]
fn contiguous_with_a_format_copies_only_when_needed() -> Result<()> {
    // (dims, torch's x.contiguous(memory_format=torch.channels_last).stride(), is x)
    #[rustfmt::skip]
    let cases: &[(&[usize], &[usize], bool)] = &[
        (&[2, 3, 4, 5], &[60, 1, 15, 3], false),
        (&[2, 1, 4, 5], &[20, 20, 5, 1], true),
        (&[1, 3, 1, 1], &[3, 1, 1, 1], true),
        (&[2, 3, 1, 1], &[3, 1, 1, 1], true),
        (&[1, 1, 1, 1], &[1, 1, 1, 1], true),
        (&[2, 1, 1, 1], &[1, 1, 1, 1], true),
        (&[1, 3, 4, 1], &[12, 1, 3, 3], false),
        (&[2, 3, 1, 5], &[15, 1, 15, 3], false),
        (&[2, 0, 3, 3], &[0, 1, 0, 0], false),
        (&[0, 3, 2, 2], &[12, 1, 6, 3], false),
    ];
    for &(dims, want, aliases) in cases {
        let n: usize = dims.iter().product();
        let x = Tensor::arange(n, DType::F32)?.reshape(dims.to_vec())?;
        let y = x.contiguous_format(CL)?;
        assert_eq!(y.strides(), want, "{dims:?}");
        assert_eq!(y.is_same(&x), aliases, "{dims:?}: returns self");
        assert!(y.is_contiguous_format(CL), "{dims:?}");
        assert_eq!(values(&y), values(&x), "{dims:?}: values");
        // And back: row-major again, the same values.
        let z = y.contiguous_format(C)?;
        assert!(z.is_contiguous_format(C));
        assert_eq!(values(&z), values(&x));
    }
    // torch.empty(shape, memory_format=torch.channels_last).stride()
    assert_eq!(Tensor::empty_format([2, 3, 4, 5], DType::F32, CL)?.strides(), [60, 1, 15, 3]);
    assert_eq!(Tensor::empty_format([2, 1, 4, 5], DType::F32, CL)?.strides(), [20, 1, 5, 1]);
    assert_eq!(Tensor::empty_format([1, 3, 1, 1], DType::F32, CL)?.strides(), [3, 1, 3, 3]);
    assert_eq!(Tensor::empty_format([2, 0, 3, 3], DType::F32, CL)?.strides(), [0, 1, 0, 0]);
    // torch.empty(2, 1, 4, 5, 6, memory_format=torch.channels_last_3d).stride()
    assert_eq!(Tensor::empty_format([2, 1, 4, 5, 6], DType::F32, CL3)?.strides(), [120, 1, 30, 6, 1]);
    assert_eq!(Tensor::empty_format([2, 3, 4, 5, 6], DType::F32, CL3)?.strides(), [360, 1, 90, 18, 3]);

    // 5-d through channels_last_3d and back.
    let x = Tensor::arange(720, DType::F64)?.reshape([2, 3, 4, 5, 6])?;
    let y = x.contiguous_format(CL3)?;
    assert_eq!(y.strides(), [360, 1, 90, 18, 3]);
    assert_eq!(y.to_vec::<f64>()?, x.to_vec::<f64>()?);
    assert_eq!(y.suggest_memory_format(), CL3);
    assert!(y.contiguous_format(CL3)?.is_same(&y));
    // An integer tensor converts too.
    let i = Tensor::arange(24, DType::I64)?.reshape([1, 2, 3, 4])?.contiguous_format(CL)?;
    assert_eq!(i.strides(), [24, 1, 8, 2]);
    assert_eq!(i.to_vec::<i64>()?, (0..24).collect::<Vec<i64>>());
    Ok(())
}

#[test]
fn explicit_formats_for_clone_like_and_to() -> Result<()> {
    // x = torch.empty(2, 3, 4, 5).transpose(1, 2): (2, 4, 3, 5) with strides (60, 5, 20, 1)
    let x = Tensor::arange(120, DType::F32)?.reshape([2, 3, 4, 5])?.transpose(1, 2)?;
    assert_eq!(x.strides(), [60, 5, 20, 1]);
    // x.clone(memory_format=torch.channels_last).stride() == (60, 1, 20, 4)
    let y = x.clone_format(CL)?;
    assert_eq!(y.strides(), [60, 1, 20, 4]);
    assert_eq!(values(&y), values(&x));
    // torch.empty_like(x, memory_format=torch.contiguous_format).stride() == (60, 15, 5, 1)
    assert_eq!(x.empty_like_format(C)?.strides(), [60, 15, 5, 1]);
    assert_eq!(x.zeros_like_format(CL)?.strides(), [60, 1, 20, 4]);
    // torch: x.to(memory_format=torch.contiguous_format) is x (x suggests contiguous_format)
    assert!(x.to_memory_format(C)?.is_same(&x));
    assert!(x.to_memory_format(P)?.is_same(&x));
    let z = x.to_memory_format(CL)?;
    assert_eq!(z.strides(), [60, 1, 20, 4]);
    assert_eq!(values(&z), values(&x));
    // A channels-last tensor back to row-major.
    let r = z.to_memory_format(C)?;
    assert_eq!(r.strides(), [60, 15, 5, 1]);
    assert_eq!(values(&r), values(&x));
    Ok(())
}

#[test]
fn formats_of_the_wrong_rank_are_torchs_errors() -> Result<()> {
    let rank4 = "required rank 4 tensor to use channels_last format";
    let rank5 = "required rank 5 tensor to use channels_last_3d format";
    let t3 = Tensor::zeros([2, 3, 4], DType::F32)?;
    let t4 = Tensor::zeros([2, 3, 4, 5], DType::F32)?;
    let t5 = Tensor::zeros([2, 3, 4, 5, 6], DType::F32)?;
    for (t, fmt, msg) in [(&t3, CL, rank4), (&t4, CL3, rank5), (&t5, CL, rank4)] {
        assert_eq!(t.contiguous_format(fmt).unwrap_err().to_string(), msg);
        assert_eq!(t.to_memory_format(fmt).unwrap_err().to_string(), msg);
        assert_eq!(t.clone_format(fmt).unwrap_err().to_string(), msg);
        assert_eq!(t.empty_like_format(fmt).unwrap_err().to_string(), msg);
        assert_eq!(Tensor::empty_format(t.dims(), DType::F32, fmt).unwrap_err().to_string(), msg);
        // is_contiguous(memory_format=...) of the wrong rank is just false.
        assert!(!t.is_contiguous_format(fmt));
    }
    // torch: preserve_format is refused by contiguous() unless the tensor is contiguous already.
    let tr = t4.transpose(1, 2)?;
    assert_eq!(
        tr.contiguous_format(P).unwrap_err().to_string(),
        "preserve memory format is unsupported by the contiguous operator"
    );
    assert!(!tr.is_contiguous_format(P));
    assert!(t4.contiguous_format(P)?.is_same(&t4));
    // torch: x.clone(memory_format=torch.preserve_format).stride() == (60, 5, 20, 1)
    assert_eq!(tr.clone_format(P)?.strides(), [60, 5, 20, 1]);
    // torch.empty(2, 3, memory_format=torch.preserve_format)
    assert_eq!(
        Tensor::empty_format([2, 3], DType::F32, P).unwrap_err().to_string(),
        "unsupported memory format Preserve"
    );
    Ok(())
}

#[test]
fn gradients_flow_through_format_conversions_unchanged() -> Result<()> {
    let w = Tensor::arange(120, DType::F32)?.reshape([2, 3, 4, 5])?;
    let want = values(&w);

    // torch: x.contiguous(memory_format=torch.channels_last).grad_fn is CloneBackward0
    let x = Tensor::zeros([2, 3, 4, 5], DType::F32)?.requires_grad_(true)?;
    let y = x.contiguous_format(CL)?;
    assert_eq!(y.strides(), [60, 1, 15, 3]);
    assert!(y.requires_grad());
    assert_eq!(y.grad_fn().expect("recorded").name(), "CloneBackward0");
    y.mul(&w)?.sum_all()?.backward()?;
    assert_eq!(values(&x.grad().expect("x.grad")), want);

    // torch: x.to(memory_format=torch.channels_last).grad_fn is ToCopyBackward0
    let x = Tensor::zeros([2, 3, 4, 5], DType::F32)?.requires_grad_(true)?;
    let y = x.to_memory_format(CL)?;
    assert_eq!(y.grad_fn().expect("recorded").name(), "ToCopyBackward0");
    y.mul(&w)?.sum_all()?.backward()?;
    assert_eq!(values(&x.grad().expect("x.grad")), want);

    // Back from channels last, and a preserving clone of a channels-last tensor.
    let x = Tensor::zeros([2, 3, 4, 5], DType::F32)?.contiguous_format(CL)?.requires_grad_(true)?;
    let y = x.clone_format(P)?;
    assert_eq!(y.strides(), [60, 1, 15, 3]);
    let z = y.contiguous_format(C)?;
    assert_eq!(z.strides(), [60, 20, 5, 1]);
    z.mul(&w)?.sum_all()?.backward()?;
    assert_eq!(values(&x.grad().expect("x.grad")), want);

    // Nothing is recorded without requires_grad.
    let plain = Tensor::zeros([2, 3, 4, 5], DType::F32)?.contiguous_format(CL)?;
    assert!(!plain.requires_grad() && plain.grad_fn().is_none());
    Ok(())
}

#[test]
fn channels_last_tensors_work_in_elementwise_ops_and_in_place() -> Result<()> {
    let x = Tensor::arange(120, DType::F32)?.reshape([2, 3, 4, 5])?;
    let xc = x.contiguous_format(CL)?;
    let want: Vec<f32> = values(&x).iter().map(|v| (v * 2.0 + 1.0).sqrt()).collect();
    assert_eq!(values(&xc.mul(2.0)?.add(1.0)?.sqrt()?), want);
    assert_eq!(values(&xc.add(&x)?), values(&x.mul(2.0)?));
    assert_eq!(values(&x.add(&xc)?), values(&x.mul(2.0)?));
    assert_eq!(values(&xc.relu()?), values(&x));
    // Writes go through the channels-last layout.
    let z = x.zeros_like_format(P)?.contiguous_format(CL)?;
    z.copy_(&x)?;
    assert_eq!(z.strides(), [60, 1, 15, 3]);
    assert_eq!(values(&z), values(&x));
    z.add_(1.0)?;
    assert_eq!(values(&z), values(&x.add(1.0)?));
    // Reshapes read channels-last order correctly.
    assert_eq!(values(&xc.reshape([6, 20])?), values(&x));
    assert_eq!(values(&xc.flatten(1, -1)?), values(&x));
    Ok(())
}
