//! Trains a small decoder-only transformer to reverse digit strings, to >= 99 % exact match,
//! checkpointing every 25 steps; killed and restarted, it resumes exactly where it stopped.
//!
//! `cargo run --release --example train_lm [-- --dir DIR] [--stop-after N] [--device xla]`
//! (`--stop-after` exits after N steps of this run without a final checkpoint, as a kill would;
//! on an XLA device each training step runs as one compiled program, unless `OXTORCH_XLA_MODE`
//! says otherwise).

use std::path::PathBuf;

use indicatif::{ProgressBar, ProgressStyle};
use oxtorch as torch;
use torch::Result;

#[path = "common/gpt.rs"]
#[allow(dead_code)] // `loss` (next-token loss) serves the bench runner
mod gpt;
#[path = "common/reverse_task.rs"]
#[allow(dead_code)] // `Trainer::new` (cpu) serves the resume test
mod reverse_task;

use reverse_task::{exact_match, Trainer};

const MAX_STEPS: u64 = 3000;
const BATCH: usize = 64;

fn main() -> Result<()> {
    // Before any thread starts: large per-step blocks then stay faulted in from step to step.
    torch::tune_process_allocator();
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let dir = PathBuf::from(arg("--dir").unwrap_or_else(|| "target/train_lm".into()));
    let stop_after: Option<u64> = arg("--stop-after").and_then(|s| s.parse().ok());
    let device: torch::Device = arg("--device").as_deref().unwrap_or("cpu").parse()?;
    if !device.is_cpu() && std::env::var_os("OXTORCH_XLA_MODE").is_none() {
        torch::xla::set_mode(torch::xla::Mode::Fused);
    }
    let mut t = Trainer::new_on(&dir, 3e-3, device)?;
    if t.step > 0 {
        println!("resuming from step {} (checkpoint in {})", t.step, dir.display());
    }
    let bar = ProgressBar::new(MAX_STEPS);
    bar.set_style(
        ProgressStyle::with_template("[{bar:30}] {pos}/{len} {msg}").expect("template").progress_chars("=> "),
    );
    bar.set_position(t.step);
    let start = t.step;
    let mut acc = 0.0;
    while t.step < MAX_STEPS {
        let loss = t.train_step(BATCH)?;
        bar.set_position(t.step);
        if t.step % 25 == 0 {
            t.checkpoint()?;
        }
        if t.step % 100 == 0 {
            acc = exact_match(&t.model, 256, 7)?;
            bar.set_message(format!("loss {loss:.4}  exact match {:.1} %", 100.0 * acc));
            if acc >= 0.995 {
                break;
            }
        }
        if stop_after.is_some_and(|n| t.step - start >= n) {
            bar.abandon_with_message("stopped (as if killed); run again to resume");
            return Ok(());
        }
    }
    let held_out = exact_match(&t.model, 1000, 12345)?;
    bar.finish_with_message(format!("done at step {}", t.step));
    println!(
        "exact match on 1000 held-out strings: {:.1} % (last check {:.1} %)",
        100.0 * held_out,
        100.0 * acc
    );
    if held_out < 0.99 {
        return Err(torch::Error::msg("exact match below 99 %"));
    }
    Ok(())
}
