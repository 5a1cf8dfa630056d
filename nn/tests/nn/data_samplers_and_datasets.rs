//! `torch.utils.data` beyond the basic loader: samplers, `Subset`/`random_split`,
//! `ConcatDataset`/`StackDataset`, `collate_fn`, `IterableDataset`, and worker threads that give
//! exactly the batches of the single-threaded loader, in order, with errors and panics at their
//! batch and no thread left behind.
//!
//! torch's values (split lengths and error messages) are hard-coded: they were checked with
//! torch 2.15 (`/work/.refenv/bin/python`), e.g.
//! `[len(s) for s in torch.utils.data.random_split(range(7), [0.33, 0.33, 0.34])] == [3, 2, 2]`.
//! Random streams are oxtorch's (Philox), so only their properties are tested.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use oxtorch_nn::data::*;
use oxtorch_tensor::{Result, Tensor};

/// `0..n` as a dataset of one field, sample `i` being `[i]`.
fn ids(n: i64) -> Result<TensorDataset> {
    TensorDataset::new(vec![Tensor::arange(n, ())?.reshape([n as isize, 1])?])
}

/// The first field of a batch as integers.
fn field0(batch: &[Tensor]) -> Result<Vec<i64>> {
    batch[0].to_vec::<i64>()
}

fn err_text<T>(r: Result<T>) -> String {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn sequential_and_random_samplers() -> Result<()> {
    let seq = SequentialSampler::new(5);
    assert_eq!(seq.len(), 5);
    assert_eq!(seq.indices(0)?, vec![0, 1, 2, 3, 4]);
    assert_eq!(seq.indices(9)?, vec![0, 1, 2, 3, 4]);

    let rs = RandomSampler::new(20, false, None, 11)?;
    assert_eq!(rs.len(), 20);
    let (a, b, c) = (rs.indices(0)?, rs.indices(0)?, rs.indices(1)?);
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..20).collect::<Vec<_>>(), "a permutation");
    assert_eq!(a, b, "reproducible from the seed and the epoch");
    assert_ne!(a, c, "another epoch gives another order");
    assert_eq!(RandomSampler::new(20, false, None, 11)?.indices(0)?, a);
    assert_ne!(RandomSampler::new(20, false, None, 12)?.indices(0)?, a, "another seed");

    // More samples than the dataset without replacement: whole permutations, then part of one.
    let long = RandomSampler::new(10, false, Some(25), 3)?.indices(0)?;
    assert_eq!(long.len(), 25);
    for part in [&long[..10], &long[10..20]] {
        let mut p = part.to_vec();
        p.sort_unstable();
        assert_eq!(p, (0..10).collect::<Vec<_>>());
    }
    assert_eq!(long[20..].iter().collect::<HashSet<_>>().len(), 5);

    let with = RandomSampler::new(4, true, Some(50), 5)?.indices(2)?;
    assert_eq!(with.len(), 50);
    assert!(with.iter().all(|&i| i < 4));
    assert_eq!(with.iter().collect::<HashSet<_>>().len(), 4, "50 draws of 4 reach each index");

    let e = err_text(RandomSampler::new(3, false, Some(0), 0));
    assert_eq!(e, "num_samples should be a positive integer value, but got num_samples=0");
    let e = err_text(RandomSampler::new(0, false, None, 0));
    assert_eq!(e, "num_samples should be a positive integer value, but got num_samples=0");

    let sub = SubsetRandomSampler::new(vec![3, 8, 5, 1], 4);
    let (a, c) = (sub.indices(0)?, sub.indices(1)?);
    assert_eq!(a.iter().copied().collect::<HashSet<_>>(), HashSet::from([1, 3, 5, 8]));
    assert_eq!(a, sub.indices(0)?);
    let differs = (1..6).any(|e| sub.indices(e).unwrap() != a);
    assert!(differs || a != c, "epochs reorder the subset");
    Ok(())
}

#[test]
fn weighted_random_sampler() -> Result<()> {
    let weights = vec![0.0, 1.0, 3.0, 0.0, 6.0];
    let n = 20_000;
    let draws = WeightedRandomSampler::new(weights.clone(), n, true, 7)?.indices(0)?;
    assert_eq!(draws.len(), n);
    let mut counts = [0usize; 5];
    for &d in &draws {
        counts[d] += 1;
    }
    assert_eq!((counts[0], counts[3]), (0, 0), "zero weights are never drawn: {counts:?}");
    for (k, p) in [(1, 0.1), (2, 0.3), (4, 0.6)] {
        let f = counts[k] as f64 / n as f64;
        assert!((f - p).abs() < 0.03, "index {k}: frequency {f}, expected about {p}");
    }
    let s = WeightedRandomSampler::new(weights, 100, true, 7)?;
    assert_eq!(s.indices(0)?, s.indices(0)?);
    assert_ne!(s.indices(0)?, s.indices(1)?);

    let distinct = WeightedRandomSampler::new(vec![1.0, 2.0, 3.0, 4.0, 5.0], 5, false, 1)?;
    for epoch in 0..5 {
        let d = distinct.indices(epoch)?;
        assert_eq!(d.iter().collect::<HashSet<_>>().len(), 5, "without replacement: {d:?}");
    }
    let three = WeightedRandomSampler::new(vec![0.0, 2.0, 0.0, 4.0, 5.0], 3, false, 1)?.indices(0)?;
    assert_eq!(three.iter().copied().collect::<HashSet<_>>(), HashSet::from([1, 3, 4]));

    let bad = "probability tensor contains either `inf`, `nan` or element < 0";
    for w in [vec![-1.0, 1.0], vec![f64::NAN, 1.0], vec![f64::INFINITY, 1.0]] {
        assert_eq!(err_text(WeightedRandomSampler::new(w, 1, true, 0)), bad);
    }
    assert_eq!(
        err_text(WeightedRandomSampler::new(vec![1.0, 1.0], 3, false, 0)),
        "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
    );
    assert_eq!(
        err_text(WeightedRandomSampler::new(vec![1.0], 0, true, 0)),
        "num_samples should be a positive integer value, but got num_samples=0"
    );
    assert_eq!(
        err_text(WeightedRandomSampler::new(vec![0.0, 0.0], 1, true, 0)),
        "invalid multinomial distribution (sum of probabilities <= 0)"
    );
    Ok(())
}

#[test]
fn batch_sampler_groups_a_sampler() -> Result<()> {
    let bs = BatchSampler::new(SequentialSampler::new(10), 3, false)?;
    assert_eq!(bs.len(), 4);
    assert_eq!(bs.batches(0)?, vec![vec![0, 1, 2], vec![3, 4, 5], vec![6, 7, 8], vec![9]]);
    let bs = BatchSampler::new(SequentialSampler::new(10), 3, true)?;
    assert_eq!(bs.len(), 3);
    assert_eq!(bs.batches(0)?.len(), 3);
    let e = err_text(BatchSampler::new(SequentialSampler::new(10), 0, false));
    assert_eq!(e, "batch_size should be a positive integer value, but got batch_size=0");
    Ok(())
}

#[test]
fn random_split_lengths_match_torch() -> Result<()> {
    // torch 2.15: [len(s) for s in random_split(range(n), lengths)].
    let cases: [(i64, Vec<f64>, Vec<usize>); 5] = [
        (10, vec![0.3, 0.3, 0.4], vec![3, 3, 4]),
        (7, vec![0.33, 0.33, 0.34], vec![3, 2, 2]),
        (7, vec![0.1; 10], vec![1, 1, 1, 1, 1, 1, 1, 0, 0, 0]),
        (9, vec![0.25, 0.25, 0.5], vec![3, 2, 4]),
        (10, vec![2.0, 3.0, 5.0], vec![2, 3, 5]),
    ];
    for (n, lengths, expected) in cases {
        let ds = Arc::new(ids(n)?);
        let parts = random_split(ds.clone(), &lengths, 42)?;
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), expected, "{lengths:?} of {n}");
        let mut all: Vec<usize> = parts.iter().flat_map(|p| p.indices().to_vec()).collect();
        all.sort_unstable();
        assert_eq!(all, (0..n as usize).collect::<Vec<_>>(), "disjoint and covering");
        let again = random_split(ds, &lengths, 42)?;
        for (p, q) in parts.iter().zip(&again) {
            assert_eq!(p.indices(), q.indices(), "reproducible from the seed");
        }
        // A subset reads its dataset's samples, alone and in batches.
        if let Some(p) = parts.iter().find(|p| p.len() >= 2) {
            let want: Vec<i64> = p.indices().iter().map(|&i| i as i64).collect();
            assert_eq!(p.get(1)?[0].to_vec::<i64>()?, vec![want[1]]);
            assert_eq!(field0(&p.get_batch(&(0..p.len()).collect::<Vec<_>>())?)?, want);
        }
    }
    let ds = Arc::new(ids(10)?);
    assert_eq!(
        err_text(random_split(ds.clone(), &[3.0, 3.0], 0)),
        "Sum of input lengths does not equal the length of the input dataset!"
    );
    let e = err_text(random_split(ds.clone(), &[1.2, -0.2], 0));
    assert_eq!(e, "Fraction at index 0 is not between 0 and 1");
    let sub = Subset::new(ds, vec![4, 2]);
    assert_eq!(err_text(sub.get(2)), "index 2 is out of range for a dataset of 2 samples");
    Ok(())
}

#[test]
fn concat_and_stack_datasets() -> Result<()> {
    let a: Arc<dyn Dataset> = Arc::new(ids(3)?);
    let b: Arc<dyn Dataset> =
        Arc::new(TensorDataset::new(vec![Tensor::arange(4i64, ())?.add(100)?.reshape([4, 1])?])?);
    let cat = ConcatDataset::new(vec![a.clone(), b.clone()])?;
    assert_eq!(cat.len(), 7);
    assert_eq!(cat.cumulative_sizes(), &[3, 7]);
    let mut seen = Vec::new();
    for i in 0..7 {
        seen.extend(cat.get(i)?[0].to_vec::<i64>()?);
    }
    assert_eq!(seen, vec![0, 1, 2, 100, 101, 102, 103]);
    assert_eq!(err_text(cat.get(7)), "index 7 is out of range for a dataset of 7 samples");
    assert_eq!(field0(&cat.get_batch(&[4, 6])?)?, vec![101, 103], "within one dataset");
    assert_eq!(field0(&cat.get_batch(&[6, 0, 3])?)?, vec![103, 0, 100], "across datasets");
    let none: Arc<dyn Dataset> = Arc::new(ids(0)?);
    let empty = ConcatDataset::new(vec![a.clone(), none, b.clone()])?;
    assert_eq!(empty.cumulative_sizes(), &[3, 3, 7]);
    assert_eq!(empty.get(3)?[0].to_vec::<i64>()?, vec![100], "an empty dataset is skipped");
    assert_eq!(err_text(ConcatDataset::new(vec![])), "datasets should not be an empty iterable");

    let c: Arc<dyn Dataset> = Arc::new(TensorDataset::new(vec![Tensor::arange(3i64, ())?.mul(10)?])?);
    let stack = StackDataset::new(vec![a.clone(), c])?;
    assert_eq!(stack.len(), 3);
    let s = stack.get(2)?;
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].to_vec::<i64>()?, s[1].to_vec::<i64>()?), (vec![2], vec![20]));
    let batch = stack.get_batch(&[2, 0])?;
    assert_eq!((field0(&batch)?, batch[1].to_vec::<i64>()?), (vec![2, 0], vec![20, 0]));
    assert_eq!(err_text(StackDataset::new(vec![a, b])), "Size mismatch between datasets");
    assert_eq!(err_text(StackDataset::new(vec![])), "At least one dataset should be passed");
    Ok(())
}

#[test]
fn loader_samplers_collate_and_option_checks() -> Result<()> {
    // A sampler gives the order; a batch sampler whole batches.
    let loader = DataLoader::new(ids(6)?, 4)?.sampler(SubsetRandomSampler::new(vec![5, 1, 3], 0));
    assert_eq!(loader.len(), 1);
    let batches: Vec<Vec<Tensor>> = loader.epoch(0)?.collect::<Result<_>>()?;
    let mut got = field0(&batches[0])?;
    got.sort_unstable();
    assert_eq!(got, vec![1, 3, 5]);
    let batches = BatchSampler::new(SequentialSampler::new(7), 3, true)?;
    let loader = DataLoader::new(ids(7)?, 1)?.batch_sampler(batches);
    assert_eq!(loader.len(), 2);
    let got: Vec<Vec<i64>> = loader.epoch(0)?.map(|b| field0(&b?)).collect::<Result<_>>()?;
    assert_eq!(got, vec![vec![0, 1, 2], vec![3, 4, 5]]);

    // A collate_fn receives the samples of a batch.
    let loader = DataLoader::new(ids(5)?, 2)?.collate_fn(|samples| {
        let n = samples.len() as i64;
        let total: i64 = samples.iter().map(|s| s[0].to_vec::<i64>().unwrap()[0]).sum();
        Ok(vec![Tensor::from_vec(vec![n, total], [2])?])
    });
    let got: Vec<Vec<i64>> = loader.epoch(0)?.map(|b| field0(&b?)).collect::<Result<_>>()?;
    assert_eq!(got, vec![vec![2, 1], vec![2, 5], vec![1, 4]]);

    // default_collate stacks fields; samples must have equally many.
    let x = Tensor::from_vec(vec![1i64, 2], [2])?;
    let y = Tensor::from_vec(vec![3i64, 4], [2])?;
    let out = default_collate(vec![vec![x.clone(), y.clone()], vec![y.clone(), x.clone()]])?;
    assert_eq!(out[0].dims(), &[2, 2]);
    assert_eq!(out[1].to_vec::<i64>()?, vec![3, 4, 1, 2]);
    assert_eq!(
        err_text(default_collate(vec![vec![x.clone(), y], vec![x]])),
        "each element in list of batch should be of equal size"
    );

    // torch's checks of the options, at `epoch`.
    let exclusive =
        "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last";
    let bs = || BatchSampler::new(SequentialSampler::new(4), 2, false);
    assert_eq!(err_text(DataLoader::new(ids(4)?, 2)?.batch_sampler(bs()?).epoch(0)), exclusive);
    assert_eq!(err_text(DataLoader::new(ids(4)?, 1)?.shuffle(0).batch_sampler(bs()?).epoch(0)), exclusive);
    let l = DataLoader::new(ids(4)?, 1)?.drop_last(true).batch_sampler(bs()?);
    assert_eq!(err_text(l.epoch(0)), exclusive);
    let l = DataLoader::new(ids(4)?, 1)?.sampler(SequentialSampler::new(4)).batch_sampler(bs()?);
    assert_eq!(err_text(l.validate()), exclusive);
    let l = DataLoader::new(ids(4)?, 2)?.sampler(SequentialSampler::new(4)).shuffle(1);
    assert_eq!(err_text(l.epoch(0)), "sampler option is mutually exclusive with shuffle");
    let e = err_text(DataLoader::new(ids(4)?, 2)?.prefetch_factor(2).epoch(0));
    assert!(e.starts_with("prefetch_factor option could only be specified in multiprocessing"), "{e}");
    DataLoader::new(ids(4)?, 2)?.num_workers(2).prefetch_factor(3).validate()?;
    Ok(())
}

/// A dataset whose samples take a while (later samples of a batch sooner, so workers finish out of
/// order), counting its reads; sample `fail` is an error and sample `panic` panics.
struct Slow {
    n: usize,
    fail: Option<usize>,
    panic: Option<usize>,
    reads: Arc<AtomicUsize>,
}

impl Slow {
    fn new(n: usize) -> Self {
        Slow { n, fail: None, panic: None, reads: Arc::new(AtomicUsize::new(0)) }
    }
}

impl Dataset for Slow {
    fn len(&self) -> usize {
        self.n
    }

    fn get(&self, index: usize) -> Result<Vec<Tensor>> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_micros(300 * (7 - index as u64 % 7)));
        if self.fail == Some(index) {
            return Err(oxtorch_tensor::Error::msg(format!("sample {index} is unreadable")));
        }
        assert!(self.panic != Some(index), "sample {index} is corrupt");
        let x = Tensor::from_vec(vec![index as i64], [1])?;
        Ok(vec![x.clone(), x.mul(2)?])
    }
}

fn values(batches: Batches) -> Result<Vec<(Vec<i64>, Vec<i64>)>> {
    batches.map(|b| b.and_then(|b| Ok((field0(&b)?, b[1].to_vec::<i64>()?)))).collect()
}

#[test]
fn workers_give_the_batches_of_one_thread_in_order() -> Result<()> {
    for (shuffle, drop_last, bs) in [(false, false, 3), (true, false, 4), (true, true, 5)] {
        let make = |workers: usize| -> Result<DataLoader<Slow>> {
            let mut l = DataLoader::new(Slow::new(37), bs)?.drop_last(drop_last).num_workers(workers);
            l.prefetch = 0;
            Ok(if shuffle { l.shuffle(9) } else { l })
        };
        let single = make(0)?;
        for epoch in 0..2 {
            let want = values(single.epoch(epoch)?)?;
            assert_eq!(want.len(), single.len());
            for workers in [1, 3, 4] {
                let got = values(make(workers)?.epoch(epoch)?)?;
                assert_eq!(got, want, "{workers} workers, shuffle {shuffle}, epoch {epoch}");
            }
            let factor = values(make(2)?.prefetch_factor(1).epoch(epoch)?)?;
            assert_eq!(factor, want);
            let mut background = make(0)?;
            background.prefetch = 3;
            assert_eq!(values(background.epoch(epoch)?)?, want, "the prefetch thread");
        }
    }
    // A collate_fn runs on the workers too.
    let sum = |s: Vec<Vec<Tensor>>| -> Result<Vec<Tensor>> {
        let t: i64 = s.iter().map(|x| x[0].to_vec::<i64>().unwrap()[0]).sum();
        Ok(vec![Tensor::from_vec(vec![t], [1])?, Tensor::from_vec(vec![s.len() as i64], [1])?])
    };
    let got = values(DataLoader::new(Slow::new(10), 4)?.collate_fn(sum).num_workers(3).epoch(0)?)?;
    assert_eq!(got, vec![(vec![6], vec![4]), (vec![22], vec![4]), (vec![17], vec![2])]);
    Ok(())
}

#[test]
fn worker_errors_and_panics_surface_at_their_batch() -> Result<()> {
    // Sample 13 is in batch 3 (batches of 4): that batch is the error, the others come through.
    let ds = Slow { fail: Some(13), ..Slow::new(24) };
    let results: Vec<Result<Vec<Tensor>>> = DataLoader::new(ds, 4)?.num_workers(3).epoch(0)?.collect();
    assert_eq!(results.len(), 6);
    for (i, r) in results.iter().enumerate() {
        match r {
            Ok(b) => {
                assert_ne!(i, 3, "batch 3 must fail");
                assert_eq!(field0(b)?, (4 * i as i64..4 * i as i64 + 4).collect::<Vec<_>>());
            }
            Err(e) => {
                assert_eq!(i, 3, "only batch 3 fails: {e}");
                assert!(e.to_string().contains("sample 13 is unreadable"), "{e}");
            }
        }
    }
    // A panic of sample 9 (batch 2) is raised again when batch 2 is taken, not before.
    let ds = Slow { panic: Some(9), ..Slow::new(24) };
    let mut it = DataLoader::new(ds, 4)?.num_workers(4).epoch(0)?;
    for i in 0..2i64 {
        let b = it.next().unwrap()?;
        assert_eq!(field0(&b)?, (4 * i..4 * i + 4).collect::<Vec<_>>());
    }
    let third = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| it.next()));
    assert!(third.is_err(), "the panic of sample 9 must surface at batch 2");
    let b = it.next().unwrap()?;
    assert_eq!(field0(&b)?, vec![12, 13, 14, 15], "the epoch goes on after the panic");
    Ok(())
}

#[test]
fn dropping_a_worker_epoch_early_stops_its_threads() -> Result<()> {
    let ds = Slow::new(10_000);
    let reads = ds.reads.clone();
    let loader = DataLoader::new(ds, 8)?.num_workers(4);
    let start = Instant::now();
    let mut it = loader.epoch(0)?;
    assert_eq!(field0(&it.next().unwrap()?)?, (0..8).collect::<Vec<_>>());
    // Prefetching is bounded: the batch taken and at most 4 workers × 2 batches ahead.
    std::thread::sleep(Duration::from_millis(300));
    let ahead = reads.load(Ordering::SeqCst);
    assert!(ahead <= (1 + 4 * 2) * 8, "{ahead} samples read after one batch");
    drop(it);
    let after = reads.load(Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(reads.load(Ordering::SeqCst), after, "no worker reads after the drop");
    assert!(start.elapsed() < Duration::from_secs(20), "dropping the epoch must not wait for it");
    Ok(())
}

/// `0..n` as a stream, sample `i` being `[i]`; sample `fail` is an error.
struct Stream {
    n: i64,
    fail: Option<i64>,
}

impl IterableDataset for Stream {
    fn iter(&self) -> Box<dyn Iterator<Item = Result<Vec<Tensor>>> + Send> {
        let fail = self.fail;
        Box::new((0..self.n).map(move |i| -> Result<Vec<Tensor>> {
            if fail == Some(i) {
                return Err(oxtorch_tensor::Error::msg(format!("sample {i} is unreadable")));
            }
            Ok(vec![Tensor::from_vec(vec![i], [1])?])
        }))
    }
}

#[test]
fn iterable_datasets_are_batched_in_stream_order() -> Result<()> {
    let loader = IterableLoader::new(Stream { n: 10, fail: None }, 4)?;
    let got: Vec<Vec<i64>> = loader.iter()?.map(|b| field0(&b?)).collect::<Result<_>>()?;
    assert_eq!(got, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]]);
    let loader = loader.drop_last(true);
    assert_eq!(loader.iter()?.count(), 2);
    let exact = IterableLoader::new(Stream { n: 8, fail: None }, 4)?.drop_last(true);
    assert_eq!(exact.iter()?.count(), 2);
    let sums = IterableLoader::new(Stream { n: 5, fail: None }, 2)?.collate_fn(|s| {
        let t: i64 = s.iter().map(|x| x[0].to_vec::<i64>().unwrap()[0]).sum();
        Ok(vec![Tensor::from_vec(vec![t], [1])?])
    });
    let got: Vec<Vec<i64>> = sums.iter()?.map(|b| field0(&b?)).collect::<Result<_>>()?;
    assert_eq!(got, vec![vec![1], vec![5], vec![4]]);
    // An error of the stream takes its batch's place and ends the pass.
    let failing = IterableLoader::new(Stream { n: 10, fail: Some(5) }, 2)?;
    let results: Vec<Result<Vec<Tensor>>> = failing.iter()?.collect();
    assert_eq!(results.len(), 3);
    assert!(results[0].is_ok() && results[1].is_ok());
    let e = results[2].as_ref().err().map(ToString::to_string).unwrap_or_default();
    assert!(e.contains("sample 5 is unreadable"), "{e}");
    let e = err_text(IterableLoader::new(Stream { n: 1, fail: None }, 0));
    assert_eq!(e, "batch_size should be a positive integer value, but got batch_size=0");
    Ok(())
}
