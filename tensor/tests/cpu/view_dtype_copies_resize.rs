//! `view_dtype` (torch's `x.view(dtype)`), the view-copy functions, `resize_`/`resize_as_`,
//! `frombuffer` and the per-thread default device, against torch (view_dtype_copies_resize_golden.rs, from
//! make_view_dtype_copies_resize_golden.py): every pair of dtypes on one tensor plus strided, offset, expanded,
//! 0-d and empty views (sizes, strides, storage offsets and bit patterns), torch's messages, the
//! copies' values, strides, gradients and node names, and resize_ shrinking and growing.

use oxtorch_tensor::{bf16, f16, DType, Device, Result, Tensor, TensorOptions};

use crate::view_dtype_copies_resize_golden::{COPIES, FROMBUFFER, MULTI_COPIES, RESIZE, VIEW_DTYPE};

fn dtype_of(name: &str) -> DType {
    match name {
        "bool" => DType::Bool,
        "u8" => DType::U8,
        "i8" => DType::I8,
        "i16" => DType::I16,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        "f32" => DType::F32,
        "f64" => DType::F64,
        other => panic!("unknown dtype {other}"),
    }
}

/// A 1-D tensor of `dtype` whose elements have the bit patterns `bits`.
fn from_bits(dtype: DType, bits: &[u64]) -> Result<Tensor> {
    let n = [bits.len()];
    match dtype {
        DType::Bool => Tensor::from_vec(bits.iter().map(|&b| b != 0).collect::<Vec<_>>(), n),
        DType::U8 => Tensor::from_vec(bits.iter().map(|&b| b as u8).collect::<Vec<_>>(), n),
        DType::I8 => Tensor::from_vec(bits.iter().map(|&b| b as u8 as i8).collect::<Vec<_>>(), n),
        DType::I16 => Tensor::from_vec(bits.iter().map(|&b| b as u16 as i16).collect::<Vec<_>>(), n),
        DType::I32 => Tensor::from_vec(bits.iter().map(|&b| b as u32 as i32).collect::<Vec<_>>(), n),
        DType::I64 => Tensor::from_vec(bits.iter().map(|&b| b as i64).collect::<Vec<_>>(), n),
        DType::F16 => Tensor::from_vec(bits.iter().map(|&b| f16::from_bits(b as u16)).collect::<Vec<_>>(), n),
        DType::BF16 => {
            Tensor::from_vec(bits.iter().map(|&b| bf16::from_bits(b as u16)).collect::<Vec<_>>(), n)
        }
        DType::F32 => Tensor::from_vec(bits.iter().map(|&b| f32::from_bits(b as u32)).collect::<Vec<_>>(), n),
        DType::F64 => Tensor::from_vec(bits.iter().map(|&b| f64::from_bits(b)).collect::<Vec<_>>(), n),
    }
}

/// The bit patterns of `t`'s elements in row-major order (bool as 0/1).
fn bits_of(t: &Tensor) -> Result<Vec<u64>> {
    Ok(match t.dtype() {
        DType::Bool => t.to_vec::<bool>()?.into_iter().map(u64::from).collect(),
        DType::U8 => t.to_vec::<u8>()?.into_iter().map(u64::from).collect(),
        DType::I8 => t.to_vec::<i8>()?.into_iter().map(|v| u64::from(v as u8)).collect(),
        DType::I16 => t.to_vec::<i16>()?.into_iter().map(|v| u64::from(v as u16)).collect(),
        DType::I32 => t.to_vec::<i32>()?.into_iter().map(|v| u64::from(v as u32)).collect(),
        DType::I64 => t.to_vec::<i64>()?.into_iter().map(|v| v as u64).collect(),
        DType::F16 => t.to_vec::<f16>()?.into_iter().map(|v| u64::from(v.to_bits())).collect(),
        DType::BF16 => t.to_vec::<bf16>()?.into_iter().map(|v| u64::from(v.to_bits())).collect(),
        DType::F32 => t.to_vec::<f32>()?.into_iter().map(|v| u64::from(v.to_bits())).collect(),
        DType::F64 => t.to_vec::<f64>()?.into_iter().map(f64::to_bits).collect(),
    })
}

fn values(t: &Tensor) -> Result<Vec<f64>> {
    t.to_dtype(DType::F64)?.to_vec::<f64>()
}

fn err<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn view_dtype_matches_torch_geometry_bits_and_messages() -> Result<()> {
    for &(src, storage, size, stride, offset, dst, ref want) in VIEW_DTYPE {
        let what = format!("{src} {size:?} {stride:?} +{offset} as {dst}");
        let base = from_bits(dtype_of(src), storage)?;
        let x = base.as_strided(size, stride, Some(offset))?;
        match (x.view_dtype(dtype_of(dst)), want) {
            (Ok(r), Ok((sizes, strides, off, bits))) => {
                assert_eq!(r.dtype(), dtype_of(dst), "{what}");
                assert_eq!(r.dims(), *sizes, "{what}: sizes");
                assert_eq!(r.strides(), *strides, "{what}: strides");
                assert_eq!(r.storage_offset(), *off, "{what}: storage offset");
                assert_eq!(bits_of(&r)?, *bits, "{what}: bits");
                assert!(!r.requires_grad(), "{what}");
                // Another dtype is a copy here; the same dtype is a shared (detached) view.
                assert_eq!(r.shares_storage(&x), src == dst, "{what}: storage");
            }
            (Err(e), Err(msg)) => assert_eq!(e.to_string(), *msg, "{what}"),
            (Ok(r), Err(msg)) => panic!("{what}: torch raised {msg:?}, got {:?}", r.dims()),
            (Err(e), Ok(_)) => panic!("{what}: torch succeeded, got {e}"),
        }
    }
    Ok(())
}

#[test]
fn view_dtype_is_not_differentiable_and_does_not_write_through() -> Result<()> {
    let x = Tensor::from_slice(&[1.0f32, -2.0, 0.5], [3])?.requires_grad_(true)?;
    let same = x.view_dtype(DType::F32)?;
    assert!(!same.requires_grad() && same.shares_storage(&x));
    let ints = x.view_dtype(DType::I32)?;
    assert!(!ints.requires_grad());
    assert_eq!(ints.to_vec::<i32>()?, vec![0x3f80_0000, 0xc000_0000u32 as i32, 0x3f00_0000]);
    let halves = x.view_dtype(DType::F16)?;
    assert_eq!(halves.dims(), [6]);
    // A copy: a write through it leaves `x` as it was (torch would see it in `x`).
    let y = Tensor::from_slice(&[1.0f32, 2.0], [2])?;
    let yi = y.view_dtype(DType::I32)?;
    yi.fill_(0)?;
    assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0]);
    // Non-zero bytes read as bool are true.
    let b = Tensor::from_slice(&[0u8, 1, 2, 255], [4])?.view_dtype(DType::Bool)?;
    assert_eq!(b.to_vec::<bool>()?, vec![false, true, true, true]);
    Ok(())
}

/// Runs the copy op `name` on `x` with the arguments make_view_dtype_copies_resize_golden.py used.
fn run_copy(name: &str, x: &Tensor) -> Result<Tensor> {
    match name {
        "permute_copy" => x.permute_copy([2, 0, 1]),
        "view_copy" => x.view_copy([6, -1]),
        "squeeze_copy" => x.slice(1, 0..1, 1)?.squeeze_copy(),
        "squeeze_dim_copy" => x.slice(1, 0..1, 1)?.squeeze_dim_copy(1),
        "squeeze_dims_copy" => x.slice(0, 0..1, 1)?.slice(1, 0..1, 1)?.squeeze_dims_copy([0, 1]),
        "unsqueeze_copy" => x.unsqueeze_copy(1),
        "t_copy" => x.select(0, 0)?.t_copy(),
        "transpose_copy" => x.transpose_copy(0, 2),
        "expand_copy" => x.slice(1, 0..1, 1)?.expand_copy([2, 5, 4]),
        "diagonal_copy" => x.diagonal_copy(1, 1, 2),
        "select_copy" => x.select_copy(1, -1),
        "slice_copy" => x.slice_copy(2, 1..4, 2),
        "unfold_copy" => x.unfold_copy(2, 2, 1),
        "alias_copy" => x.alias_copy(),
        "as_strided_copy" => x.as_strided_copy(&[3, 2], &[1, 3], Some(2)),
        "contiguous_view_copy" => x.view_copy([24]),
        other => panic!("unknown copy op {other}"),
    }
}

fn input() -> Result<Tensor> {
    Tensor::from_vec((0..24).map(f64::from).collect::<Vec<_>>(), [2, 3, 4])
}

#[test]
fn view_copies_match_torch_values_strides_and_gradients() -> Result<()> {
    for &(name, sizes, strides, vals, grad, node) in COPIES {
        let plain = input()?;
        let out = run_copy(name, &plain)?;
        assert_eq!(out.dims(), sizes, "{name}: sizes");
        assert_eq!(out.strides(), strides, "{name}: strides");
        assert!(out.is_contiguous() && !out.shares_storage(&plain), "{name}: a fresh tensor");
        assert_eq!(values(&out)?, vals, "{name}: values");

        let x = input()?.requires_grad_(true)?;
        let out = run_copy(name, &x)?;
        assert_eq!(out.grad_fn().expect("a node").name(), node, "{name}: node");
        let w = Tensor::arange_step(1, out.numel() as i64 + 1, 1, DType::F64)?.reshape(out.dims())?;
        out.mul(&w)?.sum_all()?.backward()?;
        assert_eq!(values(&x.grad().expect("a gradient"))?, grad, "{name}: gradient");
    }
    Ok(())
}

fn run_multi(name: &str, x: &Tensor) -> Result<Vec<Tensor>> {
    match name {
        "split_copy" => x.split_copy(3, 2),
        "split_with_sizes_copy" => x.split_with_sizes_copy(&[1, 2], 1),
        "unbind_copy" => x.unbind_copy(0),
        other => panic!("unknown copy op {other}"),
    }
}

#[test]
fn multi_output_copies_match_torch() -> Result<()> {
    for &(name, pieces, grad, node) in MULTI_COPIES {
        let plain = input()?;
        let outs = run_multi(name, &plain)?;
        assert_eq!(outs.len(), pieces.len(), "{name}: pieces");
        for (o, &(sizes, vals)) in outs.iter().zip(pieces) {
            assert_eq!(o.dims(), sizes, "{name}");
            assert!(o.is_contiguous() && !o.shares_storage(&plain), "{name}: a fresh tensor");
            assert_eq!(values(o)?, vals, "{name}");
        }
        let x = input()?.requires_grad_(true)?;
        let outs = run_multi(name, &x)?;
        assert_eq!(outs[0].grad_fn().expect("a node").name(), node, "{name}: node");
        let mut total = Tensor::zeros([], DType::F64)?;
        for (k, o) in outs.iter().enumerate() {
            total = total.add(&o.mul((k + 1) as f64)?.sum_all()?)?;
        }
        total.backward()?;
        assert_eq!(values(&x.grad().expect("a gradient"))?, grad, "{name}: gradient");
    }
    Ok(())
}

#[test]
fn view_copy_errors_are_the_view_ops() -> Result<()> {
    let x = input()?;
    assert!(x.t_copy().is_err());
    assert!(x.view_copy([5, -1]).is_err());
    assert!(x.select_copy(1, 3).is_err());
    assert!(x.split_with_sizes_copy(&[1, 1], 1).is_err());
    let d = input()?.requires_grad_(true)?.detach_copy()?;
    assert!(!d.requires_grad() && d.is_contiguous());
    assert_eq!(values(&d)?, values(&x)?);
    Ok(())
}

#[test]
fn resize_matches_torch_for_shrink_grow_and_strided_views() -> Result<()> {
    for &(size, stride, offset, new, sizes, strides, off, vals, len) in RESIZE {
        let what = format!("{size:?} {stride:?} +{offset} -> {new:?}");
        let base = Tensor::arange(12, DType::F32)?;
        let mut t = base.as_strided(size, stride, Some(offset))?;
        let before = t.version();
        t.resize_(new)?;
        assert_eq!(t.dims(), sizes, "{what}: sizes");
        assert_eq!(t.strides(), strides, "{what}: strides");
        assert_eq!(t.storage_offset(), off, "{what}: storage offset");
        assert_eq!(values(&t)?, vals, "{what}: values");
        assert!(t.version() > before, "{what}: version");
        // The storage grew in place: the base still shares it, sees its old elements as the
        // prefix, and reaches the new length.
        assert!(t.shares_storage(&base), "{what}");
        assert_eq!(values(&base)?, (0..12).map(f64::from).collect::<Vec<_>>(), "{what}: base");
        assert!(base.as_strided(&[len], &[1], Some(0)).is_ok(), "{what}: storage of {len}");
        assert!(base.as_strided(&[len + 1], &[1], Some(0)).is_err(), "{what}: storage of {len}");
    }
    let mut t = Tensor::arange(6, DType::I64)?;
    t.resize_as_(&Tensor::zeros([2, 5], DType::F32)?)?;
    assert_eq!(t.dims(), [2, 5]);
    assert_eq!(t.to_vec::<i64>()?, vec![0, 1, 2, 3, 4, 5, 0, 0, 0, 0]);
    let mut b = Tensor::from_slice(&[true], [1])?;
    b.resize_([3])?;
    assert_eq!(b.dims(), [3]);
    Ok(())
}

#[test]
fn resize_refuses_tensors_that_require_grad() -> Result<()> {
    let msg = "cannot resize variables that require grad";
    let mut leaf = Tensor::zeros([3], DType::F32)?.requires_grad_(true)?;
    assert_eq!(err(leaf.resize_([2])), msg);
    assert_eq!(err(leaf.resize_([3])), msg);
    assert_eq!(err(leaf.resize_as_(&Tensor::zeros([2], DType::F32)?)), msg);
    let mut inner = leaf.mul(2.0)?;
    assert_eq!(err(inner.resize_([2])), msg);
    let r = oxtorch_tensor::no_grad(|| leaf.resize_([2]).map(|_| ()));
    assert_eq!(err(r), msg);
    assert_eq!(leaf.dims(), [3]);
    Ok(())
}

#[test]
fn frombuffer_matches_torch() -> Result<()> {
    for &(data, dt, count, offset, ref want) in FROMBUFFER {
        let what = format!("{data:?} as {dt} count {count} offset {offset}");
        let count = usize::try_from(count).ok();
        match (Tensor::frombuffer(data, dtype_of(dt), count, offset), want) {
            (Ok(t), Ok(bits)) => {
                assert_eq!(t.dtype(), dtype_of(dt), "{what}");
                assert_eq!(t.dims(), [bits.len()], "{what}");
                assert_eq!(t.device(), Device::Cpu, "{what}");
                assert_eq!(bits_of(&t)?, *bits, "{what}");
            }
            (Err(e), Err(msg)) => assert_eq!(e.to_string(), *msg, "{what}"),
            (Ok(t), Err(msg)) => panic!("{what}: torch raised {msg:?}, got {:?}", t.dims()),
            (Err(e), Ok(_)) => panic!("{what}: torch succeeded, got {e}"),
        }
    }
    Ok(())
}

/// Resets this thread's default device when dropped (also on a failed assertion).
struct ResetDevice;

impl Drop for ResetDevice {
    fn drop(&mut self) {
        oxtorch_tensor::set_default_device(None);
    }
}

#[test]
fn the_default_device_fills_creation_options_on_this_thread() {
    let _reset = ResetDevice;
    assert_eq!(oxtorch_tensor::get_default_device(), Device::Cpu);
    oxtorch_tensor::set_default_device(Device::Xla(1));
    assert_eq!(oxtorch_tensor::get_default_device(), Device::Xla(1));
    assert_eq!(TensorOptions::default().device, Device::Xla(1));
    assert_eq!(TensorOptions::from(DType::I64).device, Device::Xla(1));
    assert_eq!(TensorOptions::from((DType::I64, Device::Cpu)).device, Device::Cpu);
    let other = std::thread::spawn(oxtorch_tensor::get_default_device).join().expect("thread");
    assert_eq!(other, Device::Cpu);
    oxtorch_tensor::set_default_device(None);
    assert_eq!(TensorOptions::new().device, Device::Cpu);
}

#[test]
fn view_copy_reshapes_where_a_view_cannot() -> Result<()> {
    // torch: view_copy(randn(2, 3).t(), (6,)) succeeds (it reshapes, then clones).
    let x = Tensor::from_vec((0..6).map(|i| i as f32).collect::<Vec<_>>(), [2, 3])?;
    let y = x.t()?.view_copy([6])?;
    assert_eq!(y.to_vec::<f32>()?, vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    Ok(())
}
