//! Indexing edge cases as torch 2.15 has them: reduced-precision scatter sums and products
//! accumulated in f32, index_select on a 0-d tensor, 0-d index tensors of any signed integer type.

use oxtorch_tensor::{tensor, DType, Result, Tensor};

fn half(v: &[f64], dt: DType) -> Tensor {
    Tensor::from_vec(v.to_vec(), [v.len()]).unwrap().to_dtype(dt).unwrap()
}

/// `zeros(1, f16).scatter_add(0, [0, 0, 0], [2048, 1, 1])` is 2050 (torch sums in f32; per-step
/// rounding gives 2048), bf16 `256 + 1 + 1` is 258, the f16 product of ten 1.0009766 and five 1.3
/// is 3.74609375, index_add on a matrix sums in f32 (a vector's rounds each step: 2048), and
/// gather's gradient is 2050 too.
#[test]
fn reduced_precision_scatter_sums_round_once() -> Result<()> {
    let idx = Tensor::from_vec(vec![0i64; 3], [3])?;
    let out = Tensor::zeros([1], DType::F16)?.scatter_add(0, &idx, &half(&[2048.0, 1.0, 1.0], DType::F16))?;
    assert_eq!((out.dtype(), out.to_f64_vec()?), (DType::F16, vec![2050.0]));
    let out =
        Tensor::zeros([1], DType::BF16)?.scatter_add(0, &idx, &half(&[256.0, 1.0, 1.0], DType::BF16))?;
    assert_eq!(out.to_f64_vec()?, [258.0]);
    let factors: Vec<f64> = [1.0009766; 10].into_iter().chain([1.3; 5]).collect();
    let prod = Tensor::ones([1], DType::F16)?.scatter_reduce(
        0,
        &Tensor::zeros([15], DType::I64)?,
        &half(&factors, DType::F16),
        "prod",
        true,
    )?;
    assert_eq!(prod.to_f64_vec()?, [3.74609375]);
    let rows = half(&[2048.0, 2048.0, 1.0, 1.0, 1.0, 1.0], DType::F16).reshape([3, 2])?;
    let m = Tensor::zeros([1, 2], DType::F16)?.index_add(0, &idx, &rows, 1)?;
    assert_eq!(m.to_f64_vec()?, [2050.0, 2050.0]);
    let v = Tensor::zeros([2], DType::F16)?.index_add(0, &idx, &half(&[2048.0, 1.0, 1.0], DType::F16), 1)?;
    assert_eq!(v.to_f64_vec()?, [2048.0, 0.0]);
    let x = Tensor::zeros([1, 2], DType::F16)?.requires_grad_(true)?;
    x.gather(0, &Tensor::zeros([3, 2], DType::I64)?)?.backward_with(Some(&rows), false, false)?;
    assert_eq!(x.grad().unwrap().to_f64_vec()?, [2050.0, 2050.0]);
    Ok(())
}

/// `tensor(5.).index_select(0, [0])` is 0-d; two indices are torch's error.
#[test]
fn index_select_on_a_scalar_takes_one_index() -> Result<()> {
    let x = Tensor::scalar_tensor(5.0, DType::F32)?;
    let one = x.index_select(0, &Tensor::from_vec(vec![0i64], [1])?)?;
    assert_eq!((one.dims().to_vec(), one.to_f64_vec()?), (vec![], vec![5.0]));
    let e = x.index_select(0, &Tensor::from_vec(vec![0i64, 0], [2])?).unwrap_err().to_string();
    assert!(e.contains("Index to scalar can have only 1 value, got 2 value(s)"), "{e}");
    Ok(())
}

/// `arange(6.)[tensor(1, dtype=int16)]` is `tensor(1.)` (int8 too): a 0-d integer index of any
/// signed type selects.
#[test]
fn zero_dim_index_tensors_of_small_int_types_select() -> Result<()> {
    let x = tensor!([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    for dt in [DType::I8, DType::I16] {
        let ix = Tensor::scalar_tensor(1, dt)?;
        let y = x.i(&ix)?;
        assert_eq!((y.dims().to_vec(), y.to_f64_vec()?), (vec![], vec![1.0]), "{dt:?}");
    }
    Ok(())
}
