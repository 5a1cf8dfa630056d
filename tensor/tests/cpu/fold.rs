//! `F.unfold` (`Tensor::im2col`) and `F.fold` (`Tensor::col2im`) against torch 2.15: values and
//! input gradients (`tests/golden/make_golden_fold.py`), and torch's argument errors.

use crate::common;

use common::{compare, tensor_of};
use oxtorch_tensor::{Result, Tensor};
use safetensors::SafeTensors;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/golden/fold.safetensors");

/// `(name, is unfold, output size, kernel, dilation, padding, stride)` as in the script.
type Case =
    (&'static str, bool, [usize; 2], &'static [usize], &'static [usize], &'static [usize], &'static [usize]);

const CASES: [Case; 6] = [
    ("unfold_plain", true, [0, 0], &[2, 2], &[1], &[0], &[1]),
    ("unfold_mixed", true, [0, 0], &[2, 3], &[2, 1], &[1, 2], &[2, 1]),
    ("unfold_unbatched", true, [0, 0], &[3], &[1], &[1], &[2]),
    ("fold_plain", false, [4, 5], &[2, 2], &[1], &[0], &[1]),
    ("fold_mixed", false, [5, 6], &[2, 3], &[2, 1], &[1, 0], &[2, 2]),
    ("fold_unbatched", false, [3, 3], &[2], &[1], &[0], &[1]),
];

#[test]
fn unfold_and_fold_match_torch() -> Result<()> {
    let bytes = std::fs::read(GOLDEN).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let get = |k: &str| tensor_of(&st.tensor(k).unwrap_or_else(|_| panic!("golden {k}")));
    for (name, unfold, size, k, d, p, s) in CASES {
        let x = get(&format!("{name}.x")).requires_grad_(true)?;
        let y = if unfold { x.im2col(k, d, p, s)? } else { x.col2im(&size, k, d, p, s)? };
        compare(&y, &get(&format!("{name}.out")), 1e-12, 1e-12).unwrap_or_else(|e| panic!("{name}: {e}"));
        y.mul(get(&format!("{name}.w")))?.sum_all()?.backward()?;
        compare(&x.grad().unwrap(), &get(&format!("{name}.grad")), 1e-12, 1e-12)
            .unwrap_or_else(|e| panic!("{name} grad: {e}"));
    }
    Ok(())
}

#[test]
fn bad_windows_are_torch_errors() -> Result<()> {
    let x = Tensor::zeros([1, 2, 3, 3], ())?;
    let err = |r: Result<Tensor>| r.unwrap_err().to_string();
    let e = err(x.im2col(&[0, 1], &[1], &[0], &[1]));
    assert!(
        e.contains("kernel size should be greater than zero, but got kernel_height: 0 kernel_width: 1"),
        "{e}"
    );
    let e = err(x.im2col(&[1], &[1], &[0], &[0]));
    assert!(
        e.contains("stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
        "{e}"
    );
    let e = err(x.im2col(&[5, 5], &[1], &[0], &[1]));
    assert!(e.contains("calculated shape of the array of sliding blocks as (-1, -1)"), "{e}");
    let cols = Tensor::zeros([1, 5, 4], ())?;
    let e = err(cols.col2im(&[3, 3], &[2, 2], &[1], &[0], &[1]));
    assert!(e.contains("divisible by the product of kernel_size, but got input.size(1)=5"), "{e}");
    let cols = Tensor::zeros([1, 4, 5], ())?;
    let e = err(cols.col2im(&[3, 3], &[2, 2], &[1], &[0], &[1]));
    assert!(e.contains("sliding blocks 2 * 2 = 4, but got input.size(2)=5"), "{e}");
    Ok(())
}

/// An empty batch unfolds to an empty batch of columns, as torch's `[0, C·kh·kw, L]`.
#[test]
fn an_empty_batch_unfolds() -> Result<()> {
    let cols = Tensor::zeros([0, 3, 4, 4], ())?.im2col(&[2], &[1], &[0], &[1])?;
    assert_eq!(cols.dims(), &[0, 12, 9]);
    Ok(())
}
