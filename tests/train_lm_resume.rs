//! Checkpoint/resume of the `train_lm` example is exact: 6 steps straight equal 3 steps, a
//! checkpoint, a fresh process state restored from it, and 3 more steps (parameters bit-equal).

#[path = "../examples/common/gpt.rs"]
#[allow(dead_code)]
mod gpt;
#[path = "../examples/common/reverse_task.rs"]
#[allow(dead_code)]
mod reverse_task;

use oxtorch::nn::ModuleExt;
use reverse_task::Trainer;

#[test]
fn resumed_training_equals_uninterrupted_training() -> oxtorch::Result<()> {
    let base = std::env::temp_dir().join(format!("oxtorch-train-lm-{}", std::process::id()));
    let (a, b) = (base.join("straight"), base.join("resumed"));
    let mut straight = Trainer::new(&a, 3e-3)?;
    for _ in 0..6 {
        straight.train_step(8)?;
    }
    let mut first = Trainer::new(&b, 3e-3)?;
    for _ in 0..3 {
        first.train_step(8)?;
    }
    first.checkpoint()?;
    drop(first);
    let mut resumed = Trainer::new(&b, 3e-3)?;
    assert_eq!(resumed.step, 3);
    for _ in 0..3 {
        resumed.train_step(8)?;
    }
    for ((n, x), (_, y)) in
        straight.model.named_parameters().iter().zip(resumed.model.named_parameters().iter())
    {
        assert!(x.equal(y)?, "{n} differs after resuming");
    }
    std::fs::remove_dir_all(&base).ok();
    Ok(())
}
