//! `set_default_dtype` changes what torch's does: float tensors made without a dtype, float
//! numbers promoted with integer tensors, float-only ops on integers, and new layers' parameters.
//! Its own test binary, one test: the setting is process-wide.

use oxtorch as torch;
use torch::nn::ModuleExt;
use torch::{tensor, DType, Tensor};

#[test]
fn default_dtype_drives_creation_promotion_and_layers() -> torch::Result<()> {
    assert_eq!(torch::get_default_dtype(), DType::F32);
    assert_eq!(
        torch::set_default_dtype(DType::I64).unwrap_err().to_string(),
        "only floating-point types are supported as the default type"
    );
    torch::set_default_dtype(DType::F64)?;
    assert_eq!(torch::zeros([2], ())?.dtype(), DType::F64);
    assert_eq!(torch::rand([2], ())?.dtype(), DType::F64);
    assert_eq!(tensor!([1.5, 2.5]).dtype(), DType::F64);
    let ints = Tensor::from_vec(vec![1i64, 2], [2])?;
    assert_eq!(ints.mul(0.5)?.dtype(), DType::F64);
    assert_eq!(ints.exp()?.dtype(), DType::F64);
    assert_eq!(ints.div(&ints)?.dtype(), DType::F64);
    let linear = torch::nn::Linear::new(3, 2, true)?;
    assert!(linear.parameters().iter().all(|p| p.dtype() == DType::F64));
    let norm = torch::nn::LayerNorm::new(&[3], 1e-5, true, true)?;
    assert!(norm.parameters().iter().all(|p| p.dtype() == DType::F64));
    torch::set_default_dtype(DType::F32)?;
    assert_eq!(torch::zeros([2], ())?.dtype(), DType::F32);
    assert_eq!(ints.mul(0.5)?.dtype(), DType::F32);
    assert_eq!(torch::broadcast_shapes(&[&[2, 1], &[3], &[]])?, vec![2, 3]);
    assert!(torch::broadcast_shapes(&[&[2], &[3]]).is_err());
    rng_state_round_trips()
}

/// (Run from the test above: the default generator is process-wide too.)
fn rng_state_round_trips() -> torch::Result<()> {
    torch::manual_seed(3);
    assert_eq!(torch::initial_seed(), 3);
    let state = torch::get_rng_state()?;
    let a = torch::rand([4], ())?.to_vec::<f32>()?;
    torch::set_rng_state(&state)?;
    assert_eq!(torch::rand([4], ())?.to_vec::<f32>()?, a);
    assert!(torch::set_rng_state(&torch::zeros([3], ())?).is_err());
    Ok(())
}
