//! DataLoader batching/shuffling/prefetch, and autocast's dtype rules with training through it.

use oxtorch_nn::data::{DataLoader, Dataset, TensorDataset};
use oxtorch_nn::{Forward, Linear, ModuleExt};
use oxtorch_tensor::autocast::autocast;
use oxtorch_tensor::{DType, Result, Tensor};

#[test]
fn loader_batches_shuffles_reproducibly_and_drops_last() -> Result<()> {
    let x = Tensor::arange(10i64, ())?.reshape([10, 1])?;
    let y = Tensor::arange(10i64, ())?.mul(2)?;
    let loader = DataLoader::new(TensorDataset::new(vec![x, y])?, 4)?;
    let batches: Vec<Vec<Tensor>> = loader.epoch(0)?.collect::<Result<_>>()?;
    assert_eq!(loader.len(), 3);
    assert_eq!(batches.len(), 3);
    assert_eq!(batches[0][0].dims(), &[4, 1]);
    assert_eq!(batches[2][1].to_vec::<i64>()?, vec![16, 18]);
    let loader = loader.shuffle(7).drop_last(true);
    let order = |e: u64| -> Result<Vec<i64>> {
        let mut v = Vec::new();
        for b in loader.epoch(e)? {
            v.extend(b?[1].to_vec::<i64>()?);
        }
        Ok(v)
    };
    let (a, b, c) = (order(0)?, order(0)?, order(1)?);
    assert_eq!(a.len(), 8);
    assert_eq!(a, b, "the same epoch gives the same order");
    assert_ne!(a, c, "another epoch gives another order");
    let mut sorted = a.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 8, "no sample repeats within an epoch");
    // Dropping an epoch early does not hang the prefetch thread.
    let mut it = loader.epoch(2)?;
    it.next().unwrap()?;
    drop(it);
    Ok(())
}

/// A dataset with only `get`: batches come from the trait's default (stacking samples).
struct PerSample(TensorDataset);

impl Dataset for PerSample {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        self.0.get(index)
    }
}

#[test]
fn tensor_dataset_gathers_batches_equal_to_stacked_samples() -> Result<()> {
    let x = Tensor::randn([23, 3, 2], ())?;
    let y = Tensor::arange(23i64, ())?;
    let gathered = DataLoader::new(TensorDataset::new(vec![x.clone(), y.clone()])?, 5)?.shuffle(3);
    let stacked = DataLoader::new(PerSample(TensorDataset::new(vec![x, y])?), 5)?.shuffle(3);
    for epoch in 0..2 {
        let a: Vec<Vec<Tensor>> = gathered.epoch(epoch)?.collect::<Result<_>>()?;
        let b: Vec<Vec<Tensor>> = stacked.epoch(epoch)?.collect::<Result<_>>()?;
        assert_eq!(a.len(), 5);
        for (ba, bb) in a.iter().zip(&b) {
            assert_eq!(ba[0].dims(), bb[0].dims());
            assert_eq!(ba[0].to_vec::<f32>()?, bb[0].to_vec::<f32>()?);
            assert_eq!(ba[1].to_vec::<i64>()?, bb[1].to_vec::<i64>()?);
        }
    }
    let ds = TensorDataset::new(vec![Tensor::zeros([3, 2], ())?])?;
    let err = ds.get_batch(&[0, 3]).unwrap_err().to_string();
    assert!(err.contains("index 3 is out of range for a dataset of 3 samples"), "{err}");
    Ok(())
}

#[test]
fn autocast_runs_matmuls_in_bf16_and_losses_in_f32() -> Result<()> {
    let lin = Linear::new(8, 4, true)?;
    let x = Tensor::randn([16, 8], ())?;
    let target = Tensor::randint(0, 4, [16], DType::I64)?;
    let loss = autocast(DType::BF16, || {
        let y = lin.forward(&x)?;
        assert_eq!(y.dtype(), DType::BF16);
        let loss = y.cross_entropy(&target, None, -100, "mean", 0.0)?;
        assert_eq!(loss.dtype(), DType::F32);
        Ok(loss)
    })?;
    assert_eq!(lin.forward(&x)?.dtype(), DType::F32, "autocast ends with its scope");
    loss.backward()?;
    let g = lin.weight.grad().unwrap();
    assert_eq!(g.dtype(), DType::F32, "gradients arrive in the parameter's dtype");
    // The bf16 gradient is close to the f32 one.
    lin.zero_grad()?;
    lin.forward(&x)?.cross_entropy(&target, None, -100, "mean", 0.0)?.backward()?;
    let exact = lin.weight.grad().unwrap();
    let err = g.sub(&exact)?.abs()?.max()?.item::<f64>()?;
    let scale = exact.abs()?.max()?.item::<f64>()?;
    assert!(err <= 0.05 * scale, "bf16 gradient off by {err} (scale {scale})");
    Ok(())
}

/// The dtypes of torch's CPU autocast lists (checked against torch 2.15): convolutions (plain and
/// transposed, 1-3-d) and `addmm`/`baddbmm` run in bf16 and return bf16 even from f32 inputs;
/// every loss runs in f32 and returns f32 even from bf16 inputs. Gradients reach f32 leaves in
/// f32.
#[test]
fn autocast_covers_convolutions_products_and_every_loss() -> Result<()> {
    use oxtorch_nn::loss;
    let bf = DType::BF16;
    let x2 = Tensor::randn([1, 2, 5, 5], ())?.requires_grad_(true)?;
    let w2 = Tensor::randn([3, 2, 3, 3], ())?.requires_grad_(true)?;
    let b3 = Tensor::randn([3], ())?;
    let p = Tensor::rand([4, 3], ())?.to_dtype(bf)?;
    let t = Tensor::rand([4, 3], ())?.to_dtype(bf)?;
    let y = Tensor::ones([4], bf)?;
    autocast(bf, || {
        let conv = x2.conv2d(&w2, Some(&b3), &[1], 1usize, &[1], 1)?;
        assert_eq!(conv.dtype(), bf, "conv2d");
        conv.to_dtype(DType::F32)?.sum_all()?.backward()?;
        let x1 = Tensor::randn([1, 2, 5], ())?;
        let w1 = Tensor::randn([3, 2, 3], ())?;
        assert_eq!(x1.conv1d(&w1, None, &[1], 0usize, &[1], 1)?.dtype(), bf, "conv1d");
        let x3 = Tensor::randn([1, 2, 4, 4, 4], ())?;
        let w3 = Tensor::randn([3, 2, 3, 3, 3], ())?;
        assert_eq!(x3.conv3d(&w3, None, &[1], 0usize, &[1], 1)?.dtype(), bf, "conv3d");
        let wt = Tensor::randn([2, 3, 3, 3], ())?;
        assert_eq!(
            x2.conv_transpose2d(&wt, None, &[1], &[0], &[0], 1, &[1])?.dtype(),
            bf,
            "conv_transpose2d"
        );
        let (m, a, b) = (Tensor::randn([4, 4], ())?, Tensor::randn([4, 3], ())?, Tensor::randn([3, 4], ())?);
        assert_eq!(m.addmm(&a, &b, 1, 1)?.dtype(), bf, "addmm");
        let bm = Tensor::randn([2, 4, 4], ())?;
        let (b1, b2) = (Tensor::randn([2, 4, 3], ())?, Tensor::randn([2, 3, 4], ())?);
        assert_eq!(bm.baddbmm(&b1, &b2, 1, 1)?.dtype(), bf, "baddbmm");
        let losses = [
            ("mse_loss", loss::mse_loss(&p, &t, "mean")?),
            ("l1_loss", loss::l1_loss(&p, &t, "sum")?),
            ("smooth_l1_loss", loss::smooth_l1_loss(&p, &t, "mean", 1.0)?),
            ("huber_loss", loss::huber_loss(&p, &t, "none", 1.0)?),
            ("binary_cross_entropy", loss::binary_cross_entropy(&t, &t, None, "mean")?),
            (
                "binary_cross_entropy_with_logits",
                loss::binary_cross_entropy_with_logits(&p, &t, None, "mean", None)?,
            ),
            ("kl_div", loss::kl_div(&p, &t, "batchmean", false)?),
            ("cosine_embedding_loss", loss::cosine_embedding_loss(&p, &t, &y, 0.0, "mean")?),
            ("margin_ranking_loss", loss::margin_ranking_loss(&y, &y, &y, 0.0, "mean")?),
        ];
        for (name, l) in losses {
            assert_eq!(l.dtype(), DType::F32, "{name}");
        }
        Ok(())
    })?;
    assert_eq!(w2.grad().expect("a gradient").dtype(), DType::F32);
    assert_eq!(x2.grad().expect("a gradient").dtype(), DType::F32);
    // Outside the scope, f32 stays f32.
    assert_eq!(x2.conv2d(&w2, None, &[1], 1usize, &[1], 1)?.dtype(), DType::F32);
    Ok(())
}

/// A dataset whose sample 5 panics and whose sample 2 has a field too few.
struct Faulty;

impl Dataset for Faulty {
    fn len(&self) -> usize {
        8
    }
    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        assert!(index != 5, "sample 5 is corrupt");
        let x = Tensor::full([2], index as f64, ())?;
        Ok(if index == 2 { vec![x] } else { vec![x.clone(), x] })
    }
}

/// A panic on the prefetch thread reaches the caller (as without prefetching), never a short
/// epoch; samples with different numbers of fields are torch's collate error.
#[test]
fn dataset_failures_reach_the_caller() -> Result<()> {
    let mut loader = DataLoader::new(Faulty, 2)?;
    let mut it = loader.epoch(0)?;
    it.next().unwrap()?;
    let e = it.next().unwrap().unwrap_err().to_string();
    assert!(e.contains("each element in list of batch should be of equal size"), "{e}");
    let drained = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| it.by_ref().count()));
    assert!(drained.is_err(), "the panic of sample 5 must surface");
    loader.prefetch = 0;
    let inline = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| loader.epoch(0).unwrap().count()));
    assert!(inline.is_err());
    Ok(())
}
