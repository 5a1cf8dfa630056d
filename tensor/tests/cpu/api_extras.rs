//! torch's smaller conveniences, checked against torch 2.15's values and messages (quoted):
//! h/v/dsplit, column_stack, logspace, isin, fill_diagonal_, is_nonzero, inner, mT, deg2rad,
//! sub(alpha), the `*_like` dtype forms and `normal` with tensor parameters.

use oxtorch_tensor::{manual_seed, DType, Result, Tensor};

fn ints(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_vec(v.to_vec(), shape).unwrap()
}

#[test]
fn splits_and_stacks() -> Result<()> {
    let m = Tensor::zeros([2, 4], DType::F32)?;
    let e = m.hsplit(3).unwrap_err().to_string();
    assert_eq!(
        e,
        "torch.hsplit attempted to split along dimension 1, but the size of the dimension 4 is not divisible by the split_size 3!"
    );
    let parts: Vec<Vec<usize>> = m.hsplit(2)?.iter().map(|t| t.dims().to_vec()).collect();
    assert_eq!(parts, vec![vec![2, 2], vec![2, 2]]);
    assert_eq!(Tensor::zeros([6], DType::F32)?.hsplit(3)?.len(), 3);
    assert_eq!(
        Tensor::zeros([6], DType::F32)?.vsplit(3).unwrap_err().to_string(),
        "torch.vsplit requires a tensor with at least 2 dimension, but got a tensor with 1 dimensions!"
    );
    assert_eq!(
        m.dsplit(3).unwrap_err().to_string(),
        "torch.dsplit requires a tensor with at least 3 dimension, but got a tensor with 2 dimensions!"
    );
    // torch.column_stack([tensor([1, 2]), tensor([[3], [4]])]) == [[1, 3], [2, 4]]
    let c = Tensor::column_stack(&[&ints(&[1, 2], &[2]), &ints(&[3, 4], &[2, 1])])?;
    assert_eq!(c.to_vec2::<i64>()?, vec![vec![1, 3], vec![2, 4]]);
    Ok(())
}

#[test]
fn logspace_and_isin() -> Result<()> {
    assert_eq!(Tensor::logspace(0.0, 2.0, 3, 10.0, ())?.to_vec::<f32>()?, vec![1.0, 10.0, 100.0]);
    assert_eq!(Tensor::logspace(0.0, 2.0, 3, 2.0, DType::I64)?.to_vec::<i64>()?, vec![1, 2, 4]);
    // torch.isin(tensor([1, 2, 3]), tensor([2.0, 3.5])) == [False, True, False]
    let x = ints(&[1, 2, 3], &[3]);
    let t = Tensor::from_vec(vec![2.0f32, 3.5], [2])?;
    assert_eq!(x.isin(&t, false)?.to_vec::<bool>()?, vec![false, true, false]);
    assert_eq!(x.isin(&ints(&[2, 3], &[2]), true)?.to_vec::<bool>()?, vec![true, false, false]);
    assert_eq!(x.isin(&ints(&[], &[0]), false)?.to_vec::<bool>()?, vec![false; 3]);
    let f = Tensor::from_vec(vec![f32::NAN, 1.0, 5.0], [3])?;
    assert_eq!(
        f.isin(&Tensor::from_vec(vec![f32::NAN, 5.0], [2])?, false)?.to_vec::<bool>()?,
        vec![false, false, true]
    );
    assert_eq!(x.isin_scalar(3, false)?.to_vec::<bool>()?, vec![false, false, true]);
    Ok(())
}

#[test]
fn fill_diagonal_follows_torch() -> Result<()> {
    let t = Tensor::zeros([5, 2], DType::F32)?;
    t.fill_diagonal_(5, true)?;
    let want = [[5.0, 0.0], [0.0, 5.0], [0.0, 0.0], [5.0, 0.0], [0.0, 5.0]];
    assert_eq!(t.to_vec2::<f32>()?, want.iter().map(|r| r.to_vec()).collect::<Vec<_>>());
    let t = Tensor::zeros([5, 2], DType::F32)?;
    t.fill_diagonal_(5, false)?;
    assert_eq!(t.sum_all()?.item::<f32>()?, 10.0);
    let t = Tensor::zeros([2, 3], DType::F32)?;
    t.fill_diagonal_(5, true)?;
    assert_eq!(t.to_vec2::<f32>()?, vec![vec![5.0, 0.0, 0.0], vec![0.0, 5.0, 0.0]]);
    let cube = Tensor::zeros([2, 2, 2], DType::I64)?;
    cube.fill_diagonal_(5, false)?;
    assert_eq!(cube.reshape([-1])?.to_vec::<i64>()?, vec![5, 0, 0, 0, 0, 0, 0, 5]);
    let e = Tensor::zeros([2, 3, 2], DType::F32)?.fill_diagonal_(5, false).unwrap_err();
    assert_eq!(e.to_string(), "all dimensions of input must be of equal length");
    let e = Tensor::zeros([3], DType::F32)?.fill_diagonal_(5, false).unwrap_err();
    assert_eq!(e.to_string(), "dimensions must larger than 1");
    Ok(())
}

#[test]
fn small_conveniences() -> Result<()> {
    assert!(Tensor::from_vec(vec![3.0f32], [1])?.is_nonzero()?);
    assert_eq!(
        Tensor::from_vec(vec![3.0f32, 1.0], [2])?.is_nonzero().unwrap_err().to_string(),
        "Boolean value of Tensor with more than one value is ambiguous"
    );
    assert_eq!(
        Tensor::zeros([0], DType::F32)?.is_nonzero().unwrap_err().to_string(),
        "Boolean value of Tensor with no values is ambiguous"
    );
    assert_eq!(Tensor::ones([2, 3], DType::F32)?.inner(&Tensor::ones([4, 3], DType::F32)?)?.dims(), &[2, 4]);
    assert_eq!(Tensor::zeros([5, 2, 3], DType::F32)?.mt()?.dims(), &[5, 3, 2]);
    assert!(Tensor::zeros([3], DType::F32)?.mt().is_err());
    let r = ints(&[180], &[1]).deg2rad()?;
    assert_eq!((r.dtype(), r.to_vec::<f32>()?), (DType::F32, vec![std::f32::consts::PI]));
    // torch.sub(tensor([1, 2]), tensor([1, 1]), alpha=2) == [-1, 0]
    assert_eq!(ints(&[1, 2], &[2]).sub_scaled(&ints(&[1, 1], &[2]), 2)?.to_vec::<i64>()?, vec![-1, 0]);
    let x = Tensor::zeros([2, 3], DType::F32)?;
    assert_eq!(x.zeros_like_dtype(DType::Bool)?.dtype(), DType::Bool);
    assert_eq!(x.full_like_dtype(7, DType::I32)?.to_vec2::<i32>()?, vec![vec![7; 3]; 2]);
    assert_eq!(x.nbytes(), 24);
    assert!(!ints(&[1], &[1]).to_dtype(DType::U8)?.is_signed());
    Ok(())
}

#[test]
fn normal_with_tensor_parameters() -> Result<()> {
    manual_seed(5);
    let mean = Tensor::from_vec(vec![-100.0f64, 100.0], [2, 1])?;
    let draws = Tensor::normal(&mean, &Tensor::full([2, 4000], 2.0, DType::F64)?)?;
    assert_eq!(draws.dims(), &[2, 4000]);
    let rows = draws.mean(1, false)?.to_vec::<f64>()?;
    assert!((rows[0] + 100.0).abs() < 0.2 && (rows[1] - 100.0).abs() < 0.2, "{rows:?}");
    let sd = draws.std(1, 1.0, false)?.to_vec::<f64>()?;
    assert!(sd.iter().all(|s| (s - 2.0).abs() < 0.1), "{sd:?}");
    assert!(Tensor::normal(0.0, &Tensor::full([2], -1.0, DType::F32)?).is_err());
    let r = Tensor::zeros([1000], DType::I64)?.randint_like(0, 3)?.to_vec::<i64>()?;
    assert!(r.iter().all(|v| (0..3).contains(v)) && r.contains(&2));
    let l = Tensor::zeros([100], DType::F32)?;
    l.log_normal_(0.0, 1.0)?;
    assert!(l.to_vec::<f32>()?.iter().all(|&v| v > 0.0));
    Ok(())
}

#[test]
fn unravel_index_and_scatter_reduce_argument() -> Result<()> {
    // torch.unravel_index(tensor([4, -1, 7, 8]), (2, 4)) == ([1, 1, 1, 0], [0, 3, 3, 0])
    let parts = ints(&[4, -1, 7, 8], &[4]).unravel_index(&[2, 4])?;
    assert_eq!(parts[0].to_vec::<i64>()?, vec![1, 1, 1, 0]);
    assert_eq!(parts[1].to_vec::<i64>()?, vec![0, 3, 3, 0]);
    let e = Tensor::zeros([1], DType::F32)?.unravel_index(&[2]).unwrap_err();
    assert_eq!(e.to_string(), "expected 'indices' to be integer dtype, but got torch.float32");
    // torch.zeros(3).scatter(0, tensor([0, 0, 2]), tensor([1., 2., 3.]), reduce='add') == [3, 0, 3]
    let src = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3])?;
    let idx = ints(&[0, 0, 2], &[3]);
    let out = Tensor::zeros([3], DType::F32)?.scatter_with_reduce(0, &idx, &src, "add")?;
    assert_eq!(out.to_vec::<f32>()?, vec![3.0, 0.0, 3.0]);
    let out = Tensor::ones([3], DType::F32)?.scatter_with_reduce(0, &idx, &src, "multiply")?;
    assert_eq!(out.to_vec::<f32>()?, vec![2.0, 1.0, 3.0]);
    let e = Tensor::zeros([3], DType::F32)?.scatter_with_reduce(0, &idx, &src, "max").unwrap_err();
    assert_eq!(e.to_string(), "reduce argument must be either add or multiply.");
    assert_eq!(Tensor::concatenate(&[&src, &src], 0)?.dims(), &[6]);
    Ok(())
}
