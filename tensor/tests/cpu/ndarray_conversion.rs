//! Conversion to and from `ndarray` (feature `ndarray`).
#![cfg(feature = "ndarray")]

use ndarray::{array, Array2, ShapeBuilder};
use oxtorch_tensor::{DType, Result, Tensor};

#[test]
fn round_trip_keeps_shape_values_and_dtype() -> Result<()> {
    let a = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let t = Tensor::from_ndarray(&a)?;
    assert_eq!((t.dims(), t.dtype()), (&[2usize, 3][..], DType::F64));
    let back = t.t()?.to_ndarray::<f64>()?;
    assert_eq!(back, a.t().into_dyn());
    // Column-major arrays are read in logical (row-major) order.
    let f = Array2::from_shape_vec((2, 2).f(), vec![1i32, 2, 3, 4]).unwrap();
    let tf = Tensor::try_from(&f)?;
    assert_eq!(tf.to_vec::<i32>()?, vec![1, 3, 2, 4]);
    assert!(t.to_ndarray::<f32>().is_err());
    Ok(())
}
