//! The `train_lm` task: a decoder-only transformer learns to reverse digit strings
//! (`3 1 4 1 5 9 2 6 | 6 2 9 5 1 4 1 3`). Training checkpoints the model, the optimizer and the
//! step atomically; batches are a pure function of the step, so a run resumed from a checkpoint
//! continues exactly as an uninterrupted one would.

use std::path::{Path, PathBuf};

use oxtorch as torch;
use torch::nn::optim::{AdamOptions, AdamW, Optimizer, OptimizerState};
use torch::nn::{ModuleExt, StateDict};
use torch::{DType, Device, Error, Generator, Result, Tensor};

use crate::gpt::{Gpt, GptConfig};

/// Digits per string.
pub const N_DIGITS: usize = 8;
/// The separator token (digits are 0..=9).
pub const SEP: i64 = 10;
/// Sequence length: digits, separator, reversed digits.
pub const SEQ: usize = 2 * N_DIGITS + 1;

/// The model for the task.
pub fn model_config() -> GptConfig {
    GptConfig { vocab_size: 11, n_positions: SEQ, n_embd: 64, n_layer: 2, n_head: 4 }
}

/// `batch` random strings and their reversals, from a generator seeded with `seed`.
pub fn batch(batch: usize, seed: u64) -> Result<(Tensor, Tensor)> {
    let gen = Generator::new(seed);
    let digits = Tensor::randint_with(0, 10, [batch, N_DIGITS], DType::I64, Some(&gen))?;
    let sep = Tensor::full([batch, 1], SEP, DType::I64)?;
    let ids = Tensor::cat(&[&digits, &sep, &digits.flip([1])?], 1)?;
    // Only the reversed half is predicted: targets elsewhere are ignored (-100).
    let ignore = Tensor::full([batch, N_DIGITS], -100i64, DType::I64)?;
    let targets = Tensor::cat(&[&ignore, &digits.flip([1])?], 1)?;
    Ok((ids, targets))
}

/// Mean cross-entropy of the reversed half (logits at t predict token t + 1).
pub fn loss(model: &Gpt, ids: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let logits = model.logits(&ids.narrow(1, 0, SEQ - 1)?)?;
    let v = logits.dims()[2] as isize;
    logits.reshape([-1, v])?.cross_entropy(&targets.reshape([-1])?, None, -100, "mean", 0.0)
}

/// Fraction of strings reversed exactly by greedy decoding (on the model's device).
pub fn exact_match(model: &Gpt, n: usize, seed: u64) -> Result<f64> {
    let device = model.parameters()[0].device();
    torch::no_grad(|| {
        let ids = batch(n, seed)?.0.to(device)?;
        let mut seq = ids.narrow(1, 0, N_DIGITS + 1)?;
        for _ in 0..N_DIGITS {
            let next = model.logits(&seq)?.select(1, -1)?.argmax(Some(-1), true)?;
            seq = Tensor::cat(&[&seq, &next], 1)?;
        }
        let correct = seq.eq(&ids)?.all_dim([1], false)?.to_dtype(DType::F64)?.mean_all()?;
        correct.item::<f64>()
    })
}

/// A training run that checkpoints into `dir`.
pub struct Trainer {
    /// the model
    pub model: Gpt,
    /// its optimizer
    pub opt: torch::nn::optim::Adam,
    /// steps done
    pub step: u64,
    /// where the model trains
    pub device: Device,
    dir: PathBuf,
}

impl Trainer {
    /// A fresh run on cpu, or the one checkpointed in `dir` if there is one.
    pub fn new(dir: &Path, lr: f64) -> Result<Trainer> {
        Trainer::new_on(dir, lr, Device::Cpu)
    }

    /// [`Trainer::new`] with the model and its optimizer on `device` (checkpoints are the same
    /// files on every device).
    pub fn new_on(dir: &Path, lr: f64, device: Device) -> Result<Trainer> {
        torch::manual_seed(0);
        let mut model = Gpt::new(model_config())?;
        let resume = dir.join("step.txt").exists();
        if resume {
            model.load_state_dict(&StateDict::load(dir.join("model.safetensors"))?, true)?;
        }
        model.to(device)?;
        let mut opt =
            AdamW::new(model.parameters(), AdamOptions { lr, weight_decay: 0.0, ..Default::default() })?;
        let mut step = 0;
        if resume {
            opt.load_state_dict(&OptimizerState::load(dir.join("optim.safetensors"))?)?;
            let text =
                std::fs::read_to_string(dir.join("step.txt")).map_err(|e| Error::msg(e.to_string()))?;
            step = text.trim().parse().map_err(|_| Error::msg("bad step.txt"))?;
        }
        Ok(Trainer { model, opt, step, device, dir: dir.to_path_buf() })
    }

    /// One optimisation step on the batch of this step; returns the loss.
    pub fn train_step(&mut self, batch_size: usize) -> Result<f32> {
        let (ids, targets) = batch(batch_size, 1_000_000 + self.step)?;
        let (ids, targets) = (ids.to(self.device)?, targets.to(self.device)?);
        self.opt.zero_grad()?;
        let l = loss(&self.model, &ids, &targets)?;
        l.backward()?;
        self.opt.step()?;
        self.step += 1;
        l.item::<f32>()
    }

    /// Saves model, optimizer and step (each file atomically; the step file last).
    pub fn checkpoint(&self) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| Error::msg(format!("{}: {e}", self.dir.display())))?;
        self.model.state_dict().save(self.dir.join("model.safetensors"))?;
        self.opt.state_dict()?.save(self.dir.join("optim.safetensors"))?;
        torch::nn::write_atomic(&self.dir.join("step.txt"), self.step.to_string().as_bytes())
    }
}
