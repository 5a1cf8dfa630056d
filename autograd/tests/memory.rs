//! The graph frees itself: 10,000 training steps of a small MLP leave no node, saved tensor or
//! storage behind, and resident memory stays flat.

use oxtorch_autograd::{live_nodes, no_grad};
use oxtorch_tensor::{DType, Result, Tensor};

/// Resident set size in pages (Linux), if readable.
fn rss_pages() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/statm").ok()?;
    s.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn ten_thousand_steps_do_not_grow() -> Result<()> {
    let w1 = Tensor::randn([16, 8], DType::F32)?.mul(0.3)?.requires_grad_(true)?;
    let w2 = Tensor::randn([4, 16], DType::F32)?.mul(0.3)?.requires_grad_(true)?;
    let x = Tensor::randn([32, 8], DType::F32)?;
    let target = Tensor::randint(0, 4, [32], DType::I64)?;
    let baseline_nodes = live_nodes();
    let mut rss_after_warmup = None;
    let mut first_loss = None;
    let mut last_loss = 0.0;
    for step in 0..10_000 {
        let loss = x
            .linear(&w1, None)?
            .relu()?
            .linear(&w2, None)?
            .cross_entropy(&target, None, -100, "mean", 0.0)?;
        loss.backward()?;
        no_grad(|| -> Result<()> {
            for p in [&w1, &w2] {
                p.sub_(&p.grad().unwrap().mul(0.05)?)?;
                p.grad().unwrap().zero_()?;
            }
            Ok(())
        })?;
        last_loss = loss.item::<f32>()?;
        first_loss.get_or_insert(last_loss);
        drop(loss);
        assert_eq!(live_nodes(), baseline_nodes, "graph nodes leaked at step {step}");
        if step == 500 {
            rss_after_warmup = rss_pages();
        }
    }
    assert!(last_loss < first_loss.unwrap(), "training did not reduce the loss");
    if let (Some(a), Some(b)) = (rss_after_warmup, rss_pages()) {
        // 4 KiB pages: allow 8 MiB of allocator noise, far below what a leak of 9,500 steps would cost.
        assert!(b <= a + 2048, "resident memory grew from {a} to {b} pages");
    }
    Ok(())
}
