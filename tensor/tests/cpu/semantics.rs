//! torch semantics beyond single ops: promotion rules, in-place rules, creation, randomness,
//! literals and printing.

use oxtorch_tensor::{tensor, DType, Device, Generator, Result, Tensor};

#[test]
fn scalar_promotion_follows_torch() -> Result<()> {
    let i = Tensor::arange(4, DType::I32)?;
    assert_eq!(i.mul(2.5)?.dtype(), DType::F32); // int * float scalar -> default float
    assert_eq!(i.add(5)?.dtype(), DType::I32); // int scalar keeps the tensor's int type
    let h = Tensor::ones([2], DType::F16)?;
    assert_eq!(h.add(1.0)?.dtype(), DType::F16);
    assert_eq!(h.add(&Tensor::ones([2], DType::BF16)?)?.dtype(), DType::F32);
    let u = Tensor::ones([2], DType::U8)?;
    assert_eq!(u.add(&Tensor::ones([2], DType::I8)?)?.dtype(), DType::I16);
    let b = Tensor::ones([2], DType::Bool)?;
    assert_eq!(b.add(1)?.dtype(), DType::I64);
    // A 0-dim tensor does not raise a dimensioned tensor of the same category.
    let z = Tensor::scalar_tensor(1.0, DType::F64)?;
    assert_eq!(Tensor::ones([2], ())?.add(&z)?.dtype(), DType::F32);
    assert_eq!(i.div(2)?.dtype(), DType::F32); // true division
    assert_eq!(i.div(2)?.to_vec::<f32>()?, vec![0.0, 0.5, 1.0, 1.5]);
    assert_eq!(i.eq(2.0)?.dtype(), DType::Bool);
    Ok(())
}

#[test]
fn in_place_ops_follow_torch_rules() -> Result<()> {
    let x = Tensor::arange(3, ())?;
    let e = x.add_(0.5).unwrap_err().to_string();
    assert_eq!(e, "result type Float can't be cast to the desired output type Long");
    let y = Tensor::zeros([3], ())?;
    y.add_(&x)?.mul_(2)?;
    assert_eq!(y.to_vec::<f32>()?, vec![0.0, 2.0, 4.0]);
    let e = y.add_(&Tensor::ones([2, 3], ())?).unwrap_err().to_string();
    assert_eq!(e, "output with shape [3] doesn't match the broadcast shape [2, 3]");
    let expanded = Tensor::zeros([1], ())?.expand([3])?;
    assert!(expanded.fill_(1.0).unwrap_err().to_string().contains("more than one element"));
    // In-place with an overlapping source reads the old values.
    let z = Tensor::arange_step(0.0, 4.0, 1.0, ())?;
    z.narrow(0, 1, 3)?.copy_(&z.narrow(0, 0, 3)?)?;
    assert_eq!(z.to_vec::<f32>()?, vec![0.0, 0.0, 1.0, 2.0]);
    let v0 = z.version();
    z.zero_()?;
    assert_eq!(z.version(), v0 + 1);
    Ok(())
}

#[test]
fn broadcast_errors_are_torch_messages() {
    let a = Tensor::zeros([2, 3], ()).unwrap();
    let b = Tensor::zeros([2, 4], ()).unwrap();
    assert_eq!(
        a.add(&b).unwrap_err().to_string(),
        "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1"
    );
    let r = std::panic::catch_unwind(|| &a + &b);
    let msg = *r.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.starts_with("The size of tensor a (3)"));
    let e = a.matmul(&b).unwrap_err().to_string();
    assert_eq!(e, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x4)");
    assert!(a.sum(3, false).is_err());
    assert!(Tensor::from_vec(vec![1.0f32; 5], [2, 3]).is_err());
}

#[test]
fn creation_functions() -> Result<()> {
    assert_eq!(Tensor::arange_step(1.0, 2.0, 0.25, ())?.to_vec::<f32>()?, vec![1.0, 1.25, 1.5, 1.75]);
    assert_eq!(Tensor::arange(5, ())?.dtype(), DType::I64);
    assert_eq!(Tensor::arange_step(10, 0, -3, ())?.to_vec::<i64>()?, vec![10, 7, 4, 1]);
    let l = Tensor::linspace(0.0, 1.0, 5, DType::F64)?;
    assert_eq!(l.to_vec::<f64>()?, vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    let e = Tensor::eye(2, Some(3), DType::I32)?;
    assert_eq!(e.to_vec2::<i32>()?, vec![vec![1, 0, 0], vec![0, 1, 0]]);
    assert_eq!(Tensor::full([2], true, ())?.dtype(), DType::Bool);
    assert_eq!(Tensor::full([2], 7, ())?.dtype(), DType::I64);
    let like = e.ones_like()?;
    assert_eq!((like.dtype(), like.dims()), (DType::I32, &[2usize, 3][..]));
    assert_eq!(Tensor::zeros([0, 3], ())?.numel(), 0);
    assert_eq!(Tensor::scalar_tensor(2.5, ())?.item::<f64>()?, 2.5);
    assert!(Tensor::ones([2], ())?.item::<f32>().is_err());
    Ok(())
}

#[test]
fn devices_parse_and_missing_backends_refuse_cleanly() -> Result<()> {
    assert_eq!("cpu".parse::<Device>()?, Device::Cpu);
    assert_eq!("tpu".parse::<Device>()?, Device::Tpu(0));
    assert_eq!("tpu:1".parse::<Device>()?, Device::Tpu(1));
    assert_eq!("xla:0".parse::<Device>()?, Device::Xla(0));
    assert!("gpu:0".parse::<Device>().is_err());
    assert!("tpu:x".parse::<Device>().is_err());
    let t = Tensor::ones([2], ())?;
    // xla devices need a PJRT plugin; without one the error says how to get it.
    match t.to("xla:0") {
        Ok(x) => assert_eq!(x.device(), Device::Xla(0)),
        Err(e) => assert!(e.to_string().contains("OXTORCH_PJRT_PLUGIN"), "{e}"),
    }
    // tpu devices need a TPU; without one the error says so (and does not hang).
    match Tensor::zeros([2], Device::Tpu(0)) {
        Ok(x) => assert_eq!(x.device(), Device::Tpu(0)),
        Err(e) => assert!(e.to_string().contains("no TPU found"), "{e}"),
    }
    assert!(t.to("cpu")?.shares_storage(&t));
    Ok(())
}

#[test]
fn random_is_reproducible_and_independent_of_thread_count() -> Result<()> {
    let draw = |threads: usize| -> Vec<f32> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let g = Generator::new(1234);
            let a = Tensor::randn_with([300_000], (), Some(&g)).unwrap();
            let b = Tensor::rand_with([1000], (), Some(&g)).unwrap();
            let mut v = a.to_vec::<f32>().unwrap();
            v.extend(b.to_vec::<f32>().unwrap());
            v
        })
    };
    let one = draw(1);
    assert_eq!(one, draw(2));
    assert_eq!(one, draw(3));
    // The distribution is right: mean ~0, variance ~1 for the normals; [0,1) for the uniforms.
    let n = &one[..300_000];
    let mean = n.iter().map(|&x| x as f64).sum::<f64>() / n.len() as f64;
    let var = n.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n.len() as f64;
    assert!(mean.abs() < 0.01 && (var - 1.0).abs() < 0.01, "mean {mean} var {var}");
    assert!(one[300_000..].iter().all(|&u| (0.0..1.0).contains(&u)));
    // Reseeding restarts the stream; state can be saved and restored.
    let g = Generator::new(7);
    let s = g.get_state();
    let a = Tensor::randint_with(0, 10, [50], (), Some(&g))?.to_vec::<i64>()?;
    g.set_state(s);
    assert_eq!(a, Tensor::randint_with(0, 10, [50], (), Some(&g))?.to_vec::<i64>()?);
    assert!(a.iter().all(|&x| (0..10).contains(&x)));
    let t = Tensor::zeros([1000], DType::F64)?;
    t.uniform_with_(-2.0, 3.0, Some(&g))?;
    assert!(t.to_vec::<f64>()?.iter().all(|&x| (-2.0..3.0).contains(&x)));
    let p = Tensor::full([10_000], 0.3, ())?.bernoulli_with(Some(&g))?;
    let frac = p.mean_all()?.item::<f64>()?;
    assert!((frac - 0.3).abs() < 0.02, "{frac}");
    Ok(())
}

#[test]
fn literals_and_printing_match_torch() -> Result<()> {
    let a = tensor!([[0.1, -2.0]], dtype = DType::F16);
    assert_eq!(a.to_string(), "tensor([[ 0.1000, -2.0000]], dtype=torch.float16)");
    let b = tensor!([1, 2, 3]);
    assert_eq!(b.to_string(), "tensor([1, 2, 3])");
    let c = tensor!([true, false]);
    assert_eq!(c.to_string(), "tensor([ True, False])");
    assert_eq!(tensor!(3.5).to_string(), "tensor(3.5000)");
    assert_eq!(format!("{:?}", b), "Tensor(shape=[3], dtype=torch.int64, device=cpu)");
    let big = Tensor::arange(2000, ())?;
    assert_eq!(big.to_string(), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
    assert!(Tensor::from_literal(vec![vec![1.0], vec![1.0, 2.0]]).is_err());
    Ok(())
}

#[test]
fn reductions_edge_cases() -> Result<()> {
    let e = Tensor::zeros([0], ())?;
    assert_eq!(e.sum_all()?.item::<f32>()?, 0.0);
    assert!(e.max().is_err());
    assert!(e.argmax(None, false).is_err());
    let i = Tensor::arange(4, ())?;
    assert!(i.mean_all().unwrap_err().to_string().contains("Got: Long"));
    let x = tensor!([[1.0, f64::NAN], [3.0, 2.0]]);
    let (v, idx) = x.max_dim(1, false)?;
    assert!(v.to_vec::<f32>()?[0].is_nan());
    assert_eq!(idx.to_vec::<i64>()?, vec![1, 0]);
    assert_eq!(x.argmax(None, false)?.item::<i64>()?, 1);
    // Long contiguous sums stay accurate in f32.
    let ones = Tensor::ones([10_000_000], ())?;
    assert_eq!(ones.sum_all()?.item::<f32>()?, 1.0e7);
    Ok(())
}

#[test]
fn hostile_sizes_and_empty_views_are_errors_not_panics() -> Result<()> {
    // Element counts that overflow usize are refused before any buffer is sized from them.
    let big = (1usize << 62) + 1;
    assert!(Tensor::ones([big, 4], ()).is_err());
    assert!(Tensor::from_vec(vec![0f32; 4], [big, 4]).is_err());
    assert!(Tensor::ones([4], ())?.reshape([big as isize, 4]).is_err());
    assert!(Tensor::ones([1, 4], ())?.expand([big as isize, 4]).is_err());
    let z = Tensor::zeros([4], ())?;
    assert!(z.as_strided(&[3, 1, 1], &[1 << 63, 1, 1], Some(0)).is_err());
    assert!(z.narrow(0, 1, usize::MAX).is_err());
    assert!(Tensor::zeros([3, 3], ())?.diagonal(isize::MIN, 0, 1)?.numel() == 0);
    // Empty views past the end of an empty storage behave like any empty tensor.
    let e = Tensor::zeros([3, 0], ())?.select(0, 2)?;
    assert_eq!(e.to_vec::<f32>()?, Vec::<f32>::new());
    assert_eq!(e.add(1.0)?.numel(), 0);
    e.fill_(1.0)?;
    assert_eq!(Tensor::zeros([4, 0], ())?.unbind(0)?.len(), 4);
    // 0-d tensors have no dim to split.
    let s = Tensor::scalar_tensor(1.0, ())?;
    assert!(s.unbind(0).is_err() && s.split(1, 0).is_err() && s.chunk(2, 0).is_err());
    assert!(s.unflatten(0, [1]).is_err());
    // Sizes and indices beyond isize::MAX saturate into range errors instead of wrapping negative.
    let v = Tensor::arange(4, ())?;
    assert!(v.reshape([usize::MAX]).is_err());
    assert!(v.narrow(0, 0, usize::MAX).is_err());
    assert_eq!(v.slice(0, 0usize..usize::MAX, 1)?.numel(), 4);
    assert!(Tensor::arange_step(0.0, 1e300, 1.0, ()).is_err());
    Ok(())
}

#[test]
fn tensors_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Tensor>();
    check::<Generator>();
}

#[test]
fn empty_views_at_any_offset_multiply_like_torch() -> Result<()> {
    // Views of a [2, 12] tensor that select nothing, starting past the end of smaller buffers,
    // as attention's q/k/v split makes of a zero-length sequence.
    let x = Tensor::ones([2, 12], DType::F32)?;
    let k0 = x.narrow(1, 12, 0)?; // [2, 0], offset 12
    let w = Tensor::ones([0, 3], DType::F32)?;
    let y = k0.matmul(&w)?;
    assert_eq!(y.dims(), &[2, 3]);
    assert_eq!(y.to_vec::<f32>()?, vec![0.0; 6]); // an empty sum is zero
    let rows = Tensor::ones([0, 8], DType::F32)?.narrow(1, 4, 4)?; // [0, 4], offset 4, no storage
    let z = rows.matmul(&Tensor::ones([4, 5], DType::F32)?)?;
    assert_eq!(z.dims(), &[0, 5]);
    Ok(())
}

/// `mean` of f16/bf16 sums in f32 and rounds once, as torch does on the CPU: a half-precision sum of
/// 70 000 ones is infinite, their mean 1.
#[test]
fn half_precision_means_accumulate_in_f32() -> Result<()> {
    for dt in [DType::F16, DType::BF16] {
        let ones = Tensor::ones([70_000], dt)?;
        let m = ones.mean_all()?;
        assert_eq!(m.dtype(), dt);
        assert_eq!(m.to_dtype(DType::F32)?.item::<f32>()?, 1.0, "{dt:?}");
        // Per row, with keepdim, and under autograd (the gradient keeps the input's dtype).
        let x = Tensor::full([3, 70_000], 0.1, dt)?.requires_grad_(true)?;
        let rows = x.mean(1, true)?;
        assert_eq!(rows.dims(), &[3, 1]);
        let want = Tensor::scalar_tensor(0.1, dt)?.to_dtype(DType::F32)?.item::<f32>()?;
        for v in rows.to_dtype(DType::F32)?.to_vec2::<f32>()? {
            assert_eq!(v, vec![want], "{dt:?}");
        }
        rows.sum_all()?.backward()?;
        let g = x.grad().expect("a gradient");
        assert_eq!(g.dtype(), dt);
    }
    Ok(())
}

/// torch's CPU `mul`/`div`/`floor_divide` on f16/bf16 read a scalar second operand in f32 (one
/// rounding of the result), where `add` rounds the scalar to the half type first; values from
/// torch 2.15.
#[test]
fn half_products_with_a_scalar_read_it_in_f32() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f32, 3.0, 100.0], [3])?.to_dtype(DType::BF16)?;
    let v = |t: Tensor| t.to_f64_vec().unwrap();
    assert_eq!(v(x.mul(257)?), vec![256.0, 772.0, 25728.0]);
    assert_eq!(v(x.div(0.3)?), vec![3.328125, 10.0, 334.0]);
    assert_eq!(v(x.to_dtype(DType::F16)?.mul(1.0007)?), vec![1.0009765625, 3.001953125, 100.0625]);
    assert_eq!(v(x.mul(3)?.floor_divide(0.7)?), vec![4.0, 12.0, 428.0]);
    let s = Tensor::full((), 257.0, DType::F64)?;
    let y = x.mul(&s)?;
    assert_eq!((y.dtype(), v(y)), (DType::BF16, vec![256.0, 772.0, 25728.0]));
    assert_eq!(v(x.add(257.3)?), vec![260.0, 260.0, 358.0]);
    // A one-element tensor of rank 1 is a tensor operand: promotion, no special reading.
    assert_eq!(x.mul(&Tensor::from_slice(&[257.0f32], [1])?)?.dtype(), DType::F32);
    // The node is still torch's.
    let w = x.to_dtype(DType::F32)?.requires_grad_(true)?.to_dtype(DType::BF16)?;
    assert_eq!(w.mul(257)?.grad_fn().unwrap().name(), "MulBackward0");
    Ok(())
}

/// Edge values from torch 2.15 on the CPU.
#[test]
fn edge_values_match_torch() -> Result<()> {
    let v = |t: Tensor| t.to_f64_vec().unwrap();
    let nz = Tensor::from_slice(&[-0.0f32], [1])?;
    // sign(-0.0) is +0.0, relu(-0.0) stays -0.0.
    assert_eq!(v(nz.sign()?.reciprocal()?), vec![f64::INFINITY]);
    assert_eq!(v(nz.relu()?.reciprocal()?), vec![f64::NEG_INFINITY]);
    // logcumsumexp adds a tiny term with log1p.
    let l = v(Tensor::from_slice(&[0.0f32, -20.0, -30.0], [3])?.logcumsumexp(0)?);
    assert!((l[1] - 2.0611537e-9).abs() < 1e-15 && (l[2] - 2.0612472e-9).abs() < 1e-15, "{l:?}");
    // f64 -> uint8 goes through int64.
    let big = Tensor::from_slice(&[2f64.powi(31) + 5.0, 2f64.powi(40) + 7.0, -(2f64.powi(31)) - 3.0], [3])?;
    assert_eq!(v(big.to_dtype(DType::U8)?), vec![5.0, 7.0, 253.0]);
    // Half-precision products round after every step.
    let p =
        |n: usize, dt: DType| Tensor::full([n], 1.1, dt).unwrap().prod_all().unwrap().item::<f64>().unwrap();
    assert_eq!(p(8, DType::BF16), 2.15625);
    assert_eq!(p(5, DType::F16), 1.607421875);
    // bincount of nothing is int64 zeros, whatever the weights.
    let empty = Tensor::zeros([0], DType::I64)?;
    let b = empty.bincount(Some(&Tensor::zeros([3], DType::F32)?), 2)?;
    assert_eq!((b.dtype(), v(b)), (DType::I64, vec![0.0, 0.0]));
    Ok(())
}

/// Filling with a value the dtype cannot hold is torch's overflow error (c10's checked_convert);
/// binary ops still wrap. Cases and outcomes from torch 2.15.
#[test]
fn fills_refuse_values_the_dtype_cannot_hold() -> Result<()> {
    let fits =
        |v: oxtorch_tensor::Scalar, dt: DType| Tensor::full([1], v, dt).map(|t| t.to_f64_vec().unwrap());
    use oxtorch_tensor::Scalar::{Float, Int};
    assert_eq!(fits(Int(-1), DType::U8)?, vec![255.0]);
    assert_eq!(fits(Int(-255), DType::U8)?, vec![1.0]);
    assert_eq!(fits(Float(255.9), DType::U8)?, vec![255.0]);
    assert_eq!(fits(Float(65519.0), DType::F16)?, vec![65504.0]);
    assert_eq!(fits(Float(f64::INFINITY), DType::F32)?, vec![f64::INFINITY]);
    for (v, dt, name) in [
        (Int(300), DType::U8, "uint8_t"),
        (Int(-256), DType::U8, "uint8_t"),
        (Float(256.0), DType::U8, "uint8_t"),
        (Float(-0.5), DType::U8, "uint8_t"),
        (Float(f64::NAN), DType::I64, "int64_t"),
        (Float(f64::INFINITY), DType::I32, "int"),
        (Int(1 << 31), DType::I32, "int"),
        (Float(-128.5), DType::I8, "int8_t"),
        (Int(40000), DType::I16, "int16_t"),
        (Float(1e300), DType::F32, "float"),
    ] {
        let e = fits(v, dt).unwrap_err().to_string();
        assert!(
            e.contains(&format!("value cannot be converted to type {name} without overflow")),
            "{v:?} {e}"
        );
    }
    let u = Tensor::zeros([2], DType::U8)?;
    assert!(u.fill_(300).is_err());
    assert!(u.masked_fill(&Tensor::ones([2], DType::Bool)?, 300).is_err());
    assert!(u.index_fill(0, &Tensor::zeros([1], DType::I64)?, 300).is_err());
    // Arithmetic wraps as torch's does.
    assert_eq!(u.add(300)?.to_f64_vec()?, vec![44.0, 44.0]);
    Ok(())
}

/// Legacy `nearest` short-cuts an output as long as (or twice) the input only on 4-D inputs,
/// whatever the scale factor; 3-D/5-D inputs and `nearest-exact` always compute the index
/// (values from torch 2.15).
#[test]
fn nearest_interpolation_picks_torchs_source_indices() -> Result<()> {
    let v = |t: Tensor| t.to_f64_vec().unwrap();
    let r = |shape: &[usize]| {
        Tensor::arange(shape.iter().product::<usize>() as i64, DType::F32)?.reshape(shape.to_vec())
    };
    let x4 = r(&[1, 1, 1, 5])?;
    assert_eq!(
        v(x4.interpolate(None, Some(&[1.0, 2.1]), "nearest", None)?),
        vec![0., 0., 1., 1., 2., 2., 3., 3., 4., 4.]
    );
    let x3 = r(&[1, 1, 5])?;
    assert_eq!(
        v(x3.interpolate(None, Some(&[2.1]), "nearest", None)?),
        vec![0., 0., 0., 1., 1., 2., 2., 3., 3., 4.]
    );
    let y = v(r(&[1, 1, 20])?.interpolate(None, Some(&[1.04]), "nearest", None)?);
    assert_eq!(y[..3], [0., 0., 1.]);
    assert_eq!(y[19], 18.0);
    let y = v(r(&[1, 1, 1, 20])?.interpolate(None, Some(&[1.0, 1.04]), "nearest", None)?);
    assert_eq!(y, (0..20).map(f64::from).collect::<Vec<_>>());
    let y = v(r(&[1, 1, 1, 1, 20])?.interpolate(None, Some(&[1.0, 1.0, 1.04]), "nearest", None)?);
    assert_eq!(y[17..], [16., 17., 18.]);
    for x in [r(&[1, 1, 20])?, r(&[1, 1, 1, 20])?] {
        let scale: Vec<f64> = vec![1.0; x.rank() - 3].into_iter().chain([1.04]).collect();
        assert_eq!(v(x.interpolate(None, Some(&scale), "nearest-exact", None)?)[12..15], [12., 12., 13.]);
    }
    Ok(())
}

/// (bi/tri)linear copies a dimension whose output is as long as its input, whatever the scale
/// factor (torch 2.15: `scale_factor=1.1` on `arange(5)` gives `0..5`; bilinear `(1.6, 1.1)` on a
/// 4×5 `arange` gives rows `0..5`, `2.1875..`, `5.3125..` with unit steps along the columns);
/// bicubic has no such shortcut.
#[test]
fn linear_interpolation_copies_a_dimension_of_unchanged_length() -> Result<()> {
    let v = |t: Tensor| t.to_f64_vec().unwrap();
    let x = Tensor::arange(5, DType::F32)?.reshape([1, 1, 5])?;
    assert_eq!(v(x.interpolate(None, Some(&[1.1]), "linear", None)?), [0., 1., 2., 3., 4.]);
    let x = Tensor::arange(20, DType::F32)?.reshape([1, 1, 4, 5])?;
    let y = v(x.interpolate(None, Some(&[1.6, 1.1]), "bilinear", None)?);
    assert_eq!(y.len(), 30);
    assert_eq!(y[..10], [0., 1., 2., 3., 4., 2.1875, 3.1875, 4.1875, 5.1875, 6.1875]);
    let x = Tensor::arange(5, DType::F64)?.reshape([1, 1, 1, 1, 5])?;
    assert_eq!(v(x.interpolate(None, Some(&[1.0, 1.0, 1.1]), "trilinear", None)?), [0., 1., 2., 3., 4.]);
    let x = Tensor::arange(5, DType::F32)?.reshape([1, 1, 1, 5])?;
    let y = v(x.interpolate(None, Some(&[1.0, 1.1]), "bicubic", None)?);
    assert!((y[0] + 0.0311).abs() < 1e-3, "bicubic resamples: {y:?}");
    Ok(())
}

/// scaled_dot_product_attention takes a bool mask or one of the query's dtype, as torch.
#[test]
fn attention_masks_of_another_dtype_are_refused() -> Result<()> {
    let q = Tensor::randn([1, 3, 4], ())?;
    let m = Tensor::zeros([3, 3], DType::I64)?;
    let e =
        q.scaled_dot_product_attention(&q, &q, Some(&m), 0.0, false, None, false).unwrap_err().to_string();
    assert!(e.contains("Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: long int and  query.dtype: float instead."), "{e}");
    assert!(q
        .scaled_dot_product_attention(&q, &q, Some(&m.to_dtype(DType::F64)?), 0.0, false, None, false)
        .is_err());
    assert!(q
        .scaled_dot_product_attention(&q, &q, Some(&m.to_dtype(DType::F32)?), 0.0, false, None, false)
        .is_ok());
    // A float32 mask goes with a half-precision query too (not a bf16 mask with an f32 query).
    let (qh, m32, mbf) = (q.to_dtype(DType::BF16)?, m.to_dtype(DType::F32)?, m.to_dtype(DType::BF16)?);
    assert!(qh.scaled_dot_product_attention(&qh, &qh, Some(&m32), 0.0, false, None, false).is_ok());
    assert!(q.scaled_dot_product_attention(&q, &q, Some(&mbf), 0.0, false, None, false).is_err());
    Ok(())
}

/// Probability targets refuse `ignore_index` and check the class weights, as torch.
#[test]
fn cross_entropy_with_probabilities_checks_its_options() -> Result<()> {
    let x = Tensor::randn([2, 3], ())?;
    let p = x.softmax(1, None)?;
    let e = x.cross_entropy(&p, None, 0, "mean", 0.0).unwrap_err().to_string();
    assert!(e.contains("ignore_index is not supported for floating point target"), "{e}");
    let w = Tensor::ones([1, 3], ())?;
    let e = x.cross_entropy(&p, Some(&w), -100, "mean", 0.0).unwrap_err().to_string();
    assert!(e.contains("weight tensor should be defined either for all 3 classes or no classes but got weight tensor of shape: [1, 3]"), "{e}");
    assert!(x.cross_entropy(&p, Some(&w.reshape([3])?), -100, "mean", 0.0).is_ok());
    Ok(())
}

/// `div(rounding_mode=...)` and `searchsorted(sorter=...)`, values from torch 2.15.
#[test]
fn div_rounding_modes_and_searchsorted_sorters() -> Result<()> {
    let a = Tensor::from_vec(vec![7i64, -7, 7, -7, 5], [5])?;
    let b = Tensor::from_vec(vec![2i64, 2, -2, -2, 5], [5])?;
    let v = |t: Tensor| t.to_f64_vec().unwrap();
    let trunc = a.div_rounding(&b, Some("trunc"))?;
    assert_eq!((trunc.dtype(), v(trunc)), (DType::I64, vec![3.0, -3.0, -3.0, 3.0, 1.0]));
    assert_eq!(v(a.div_rounding(&b, Some("floor"))?), vec![3.0, -4.0, -4.0, 3.0, 1.0]);
    assert_eq!(v(a.to_dtype(DType::F32)?.div_rounding(&b, Some("trunc"))?), vec![3.0, -3.0, -3.0, 3.0, 1.0]);
    assert_eq!(v(a.div_rounding(2.5, Some("trunc"))?), vec![2.0, -2.0, 2.0, -2.0, 2.0]);
    assert!(a.div_rounding(&Tensor::zeros([5], DType::I64)?, Some("trunc")).is_err());
    // A half tensor over a number truncates in f32 and rounds once (torch: 2, not bf16(2.9967) = 3).
    let h = Tensor::from_slice(&[7.0f32], [1])?.to_dtype(DType::BF16)?;
    assert_eq!(v(h.div_rounding(2.3359375, Some("trunc"))?), vec![2.0]);
    // `number / tensor` is torch's reciprocal times the number: no float32 cut of the number.
    assert_eq!(v(1e39 / &Tensor::ones([2], ())?), vec![f64::INFINITY; 2]);
    let tenth: Tensor = 0.1 / &Tensor::ones([1], DType::F64)?;
    assert_eq!(tenth.item::<f64>()?, 0.1);
    let e = a.div_rounding(&b, Some("round")).unwrap_err().to_string();
    assert!(e.contains("rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"), "{e}");
    let bounds = Tensor::from_slice(&[3.0f32, 1.0, 2.0], [3])?;
    let sorter = Tensor::from_vec(vec![1i64, 2, 0], [3])?;
    let at = bounds.searchsorted_with_sorter(
        &Tensor::from_slice(&[2.5f32, 0.5, 3.0], [3])?,
        false,
        None,
        false,
        &sorter,
    )?;
    assert_eq!(v(at), vec![2.0, 0.0, 2.0]);
    let bounds = Tensor::from_slice(&[3.0f32, 1.0, 2.0, 0.0, 5.0, 4.0], [2, 3])?;
    let sorter = Tensor::from_vec(vec![1i64, 2, 0, 0, 2, 1], [2, 3])?;
    let at = bounds.searchsorted_with_sorter(
        &Tensor::from_slice(&[2.5f32, 4.5], [2, 1])?,
        true,
        None,
        false,
        &sorter,
    )?;
    assert_eq!(v(at), vec![2.0, 2.0]);
    assert!(bounds.searchsorted_with_sorter(&bounds, false, None, false, &sorter.narrow(1, 0, 2)?).is_err());
    Ok(())
}

/// Creation and random edge cases as torch 2.15 gives them.
#[test]
fn creation_and_random_edges_follow_torch() -> Result<()> {
    let v = |t: Tensor| t.to_f64_vec().unwrap();
    assert_eq!(v(Tensor::linspace(0.0, 10.0, 1, ())?), vec![0.0]);
    assert_eq!(v(Tensor::linspace(0.5, 9.7, 5, DType::I64)?), vec![0.0, 2.0, 4.0, 6.0, 9.0]);
    assert_eq!(v(Tensor::arange_step(0.5, 5, 1.5, DType::I64)?), vec![0.0, 1.0, 2.0]);
    assert_eq!(v(Tensor::arange_step(-0.5, 5.5, 1.5, DType::I32)?), vec![0.0, 1.0, 2.0, 3.0]);
    let big = Tensor::arange_step(1i64 << 62, (1i64 << 62) + 10, 3, ())?;
    assert_eq!(big.dims(), &[4]);
    assert_eq!(big.to_vec::<i64>()?[3], (1i64 << 62) + 9);
    let e = Tensor::arange_step(0.0, 1.0, f64::NAN, ()).unwrap_err().to_string();
    assert!(e.contains("step must be finite but got nan"), "{e}");
    assert_eq!(Tensor::scalar_tensor(2, ())?.dtype(), DType::F32);
    assert_eq!(Tensor::scalar_tensor(true, ())?.dtype(), DType::F32);
    // randint bounds the dtype cannot hold.
    for (lo, hi, dt, msg) in [
        (0, 300, DType::U8, "to - 1 is out of bounds for unsigned char"),
        (-5, 5, DType::U8, "from is out of bounds for unsigned char"),
        (0, 3, DType::Bool, "to - 1 is out of bounds for bool"),
        (-129, 0, DType::I8, "from is out of bounds for signed char"),
    ] {
        let e = Tensor::randint(lo, hi, [2], dt).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
    }
    assert!(Tensor::randint(0, 256, [64], DType::U8).is_ok());
    // uniform_ never returns `to`, even where rounding would.
    let x = Tensor::empty([4096], DType::BF16)?;
    x.uniform_(1.0, 2.0)?;
    assert!(x.to_f64_vec()?.iter().all(|&u| (1.0..2.0).contains(&u)));
    // Half draws round a float32 draw: not a 256-point grid holding 0 (torch: ~3000 distinct
    // bf16 values in U(-1, 1) over a million draws, no zero).
    let x = Tensor::empty([100_000], DType::BF16)?;
    x.uniform_(-1.0, 1.0)?;
    let mut v = x.to_f64_vec()?;
    assert!(v.iter().all(|&u| (-1.0..1.0).contains(&u)));
    // (a 256-point grid would give about 390 zeros; a float32 draw about 0.006)
    assert!(v.iter().filter(|&&u| u == 0.0).count() < 5);
    v.sort_by(f64::total_cmp);
    v.dedup();
    assert!(v.len() > 1000, "{} distinct bf16 values", v.len());
    let e = Tensor::empty([2], ())?.uniform_(f64::NAN, 1.0).unwrap_err().to_string();
    assert!(e.contains("from is out of bounds for float"), "{e}");
    let e = Tensor::empty([2], ())?.normal_(0.0, f64::NAN).unwrap_err().to_string();
    assert!(e.contains("normal expects std >= 0.0, but found std nan"), "{e}");
    let e = Tensor::empty([2], ())?.bernoulli_(1.5).unwrap_err().to_string();
    assert!(e.contains("bernoulli_ expects p to be in [0, 1], but got p=1.5"), "{e}");
    Ok(())
}
