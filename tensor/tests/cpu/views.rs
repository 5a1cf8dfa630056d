//! View algebra: views share storage, match a naive index model, and reject invalid arguments.

use oxtorch_tensor::{DType, Result, Tensor};
use proptest::prelude::*;

/// `arange(numel)` as int64 with `shape`: every element's value is its row-major index.
fn iota(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::arange(n as i64, ()).unwrap().reshape(shape.to_vec()).unwrap()
}

/// Row-major flat index of `idx` in `shape`.
fn flat(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// All multi-indices of `shape` in row-major order.
fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut f| {
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = f % shape[d];
                f /= shape[d];
            }
            idx
        })
        .collect()
}

fn shape_strategy() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..5, 1..5)
}

proptest! {
    #[test]
    fn permute_matches_index_model(shape in shape_strategy(), seed in any::<u64>()) {
        let rank = shape.len();
        let mut perm: Vec<usize> = (0..rank).collect();
        // A deterministic shuffle from the seed.
        for i in (1..rank).rev() {
            perm.swap(i, (seed as usize / (i + 1)) % (i + 1));
        }
        let t = iota(&shape);
        let p = t.permute(perm.clone()).unwrap();
        let out_shape: Vec<usize> = perm.iter().map(|&d| shape[d]).collect();
        prop_assert_eq!(p.dims(), &out_shape[..]);
        prop_assert!(p.shares_storage(&t));
        let got = p.to_vec::<i64>().unwrap();
        for (k, idx) in indices(&out_shape).iter().enumerate() {
            let mut src = vec![0; rank];
            for (j, &d) in perm.iter().enumerate() {
                src[d] = idx[j];
            }
            prop_assert_eq!(got[k], flat(&src, &shape) as i64);
        }
    }

    #[test]
    fn slice_with_step_matches_index_model(shape in shape_strategy(), dim_seed in any::<usize>(),
                                           start in 0usize..5, len in 0usize..6, step in 1usize..4) {
        let dim = dim_seed % shape.len();
        let t = iota(&shape);
        let (s, e) = (start as isize, (start + len) as isize);
        let v = t.slice(dim as isize, s..e, step).unwrap();
        let size = shape[dim];
        let picked: Vec<usize> = (start.min(size)..(start + len).min(size)).step_by(step).collect();
        let mut out_shape = shape.clone();
        out_shape[dim] = picked.len();
        prop_assert_eq!(v.dims(), &out_shape[..]);
        let got = v.to_vec::<i64>().unwrap();
        for (k, idx) in indices(&out_shape).iter().enumerate() {
            let mut src = idx.clone();
            src[dim] = picked[idx[dim]];
            prop_assert_eq!(got[k], flat(&src, &shape) as i64);
        }
    }

    #[test]
    fn reshape_keeps_row_major_order_through_transpose(shape in shape_strategy()) {
        let t = iota(&shape);
        let tt = t.transpose(0, -1).unwrap();
        let n = t.numel() as isize;
        let r = tt.reshape([n]).unwrap();
        let expected = tt.contiguous().unwrap().to_vec::<i64>().unwrap();
        prop_assert_eq!(r.to_vec::<i64>().unwrap(), expected);
        // Transposing twice gives the original values and shares storage.
        let back = tt.transpose(0, -1).unwrap();
        prop_assert!(back.shares_storage(&t));
        prop_assert_eq!(back.to_vec::<i64>().unwrap(), t.to_vec::<i64>().unwrap());
    }

    #[test]
    fn expand_then_sum_multiplies(shape in shape_strategy(), reps in 1usize..4) {
        let t = iota(&shape).unsqueeze(0).unwrap();
        let mut target: Vec<isize> = t.dims().iter().map(|&d| d as isize).collect();
        target[0] = reps as isize;
        let e = t.expand(target).unwrap();
        prop_assert!(e.shares_storage(&t));
        if reps > 1 {
            prop_assert_eq!(e.strides()[0], 0);
        }
        let total = e.sum_all().unwrap().item::<i64>().unwrap();
        let base = t.sum_all().unwrap().item::<i64>().unwrap();
        prop_assert_eq!(total, base * reps as i64);
    }

    #[test]
    fn views_of_contiguous_tensors_never_copy(shape in shape_strategy()) {
        let t = iota(&shape);
        let flat_view = t.view([-1]).unwrap();
        prop_assert!(flat_view.shares_storage(&t));
        let un = t.unsqueeze(-1).unwrap().squeeze().unwrap();
        prop_assert!(un.shares_storage(&t));
        prop_assert_eq!(t.flatten(0, -1).unwrap().numel(), t.numel());
    }
}

#[test]
fn writes_through_views_are_visible_in_the_base() -> Result<()> {
    let base = Tensor::zeros([3, 4], ())?;
    base.transpose(0, 1)?.select(0, 2)?.fill_(7.0)?; // column 2
    base.narrow(0, 1, 1)?.add_(1.0)?; // row 1
    base.diagonal(0, 0, 1)?.copy_(&Tensor::full([3], -1.0, ())?)?;
    let v = base.to_vec2::<f32>()?;
    assert_eq!(v[0], vec![-1.0, 0.0, 7.0, 0.0]);
    assert_eq!(v[1], vec![1.0, -1.0, 8.0, 1.0]);
    assert_eq!(v[2], vec![0.0, 0.0, -1.0, 0.0]);
    assert_eq!(base.version(), 3);
    Ok(())
}

#[test]
fn view_errors_are_torch_messages() -> Result<()> {
    let t = Tensor::zeros([2, 3], ())?;
    let e = t.t()?.view([6]).unwrap_err().to_string();
    assert!(e.starts_with("view size is not compatible with input tensor's size and stride"), "{e}");
    assert_eq!(t.t()?.reshape([6])?.dims(), &[6]); // reshape copies instead
    let e = t.view([4, -1]).unwrap_err().to_string();
    assert_eq!(e, "shape '[4, -1]' is invalid for input of size 6");
    let e = t.transpose(0, 2).unwrap_err().to_string();
    assert_eq!(e, "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
    let e = t.select(1, 3).unwrap_err().to_string();
    assert!(e.contains("out of range"), "{e}");
    let e = t.expand([4, 3]).unwrap_err().to_string();
    assert!(e.starts_with("The expanded size of the tensor (4) must match the existing size (2)"), "{e}");
    let e = t.as_strided(&[3, 3], &[3, 1], Some(0)).unwrap_err().to_string();
    assert!(e.contains("out of bounds for storage of size 6"), "{e}");
    assert!(t.permute([0, 0]).is_err());
    assert!(t.narrow(1, 2, 2).is_err());
    Ok(())
}

#[test]
fn split_chunk_unbind_unflatten_and_as_strided() -> Result<()> {
    let t = iota(&[5, 4]);
    let parts = t.split(2, 0)?;
    assert_eq!(parts.iter().map(|p| p.dims()[0]).collect::<Vec<_>>(), vec![2, 2, 1]);
    let chunks = t.chunk(3, 1)?;
    assert_eq!(chunks.iter().map(|p| p.dims()[1]).collect::<Vec<_>>(), vec![2, 2]);
    // An empty dim gives `chunks` empty pieces, as in torch (`torch.empty(0, 4).chunk(3)`).
    let empty = Tensor::zeros([0, 4], DType::F32)?.chunk(3, 0)?;
    assert_eq!(empty.iter().map(|p| p.dims().to_vec()).collect::<Vec<_>>(), vec![vec![0, 4]; 3]);
    assert_eq!(Tensor::zeros([5, 0], DType::F32)?.chunk(2, -1)?.len(), 2);
    let rows = t.unbind(0)?;
    assert_eq!(rows[4].to_vec::<i64>()?, vec![16, 17, 18, 19]);
    let sw = t.split_with_sizes(&[1, 3], 1)?;
    assert_eq!(sw[1].dims(), &[5, 3]);
    let u = t.unflatten(1, [2, -1])?;
    assert_eq!(u.dims(), &[5, 2, 2]);
    // Sliding windows of length 3 with step 1 over the first row.
    let w = t.as_strided(&[2, 3], &[1, 1], Some(0))?;
    assert_eq!(w.to_vec2::<i64>()?, vec![vec![0, 1, 2], vec![1, 2, 3]]);
    assert!(!t.t()?.is_contiguous());
    assert!(t.t()?.contiguous()?.is_contiguous());
    assert_eq!(t.to_dtype(DType::F32)?.dtype(), DType::F32);
    Ok(())
}
