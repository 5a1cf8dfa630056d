//! A GPT-2-style decoder-only transformer (pre-norm blocks, causal self-attention, tanh-GELU MLP,
//! learned positions, lm head tied to the token embedding), built from `oxtorch::nn` modules.
//! Shared by the `train_lm` example and the bench runner's `gpt_small_train_step_b8_s128` case.

use oxtorch as torch;
use torch::nn::{init, Embedding, Forward, LayerNorm, Linear, Module};
use torch::{Result, Tensor};

/// Model sizes (GPT-2's names).
#[derive(Clone, Copy, Debug)]
pub struct GptConfig {
    /// vocabulary size
    pub vocab_size: usize,
    /// longest sequence
    pub n_positions: usize,
    /// model width
    pub n_embd: usize,
    /// number of blocks
    pub n_layer: usize,
    /// attention heads
    pub n_head: usize,
}

/// Causal multi-head self-attention with a fused qkv projection.
#[derive(Module)]
pub struct Attention {
    c_attn: Linear,
    c_proj: Linear,
    #[module(skip)]
    n_head: usize,
}

impl Forward for Attention {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let (b, t, c) = (x.dims()[0] as isize, x.dims()[1] as isize, x.dims()[2] as isize);
        let h = self.n_head as isize;
        let qkv = self.c_attn.forward(x)?.view([b, t, 3, h, c / h])?.permute([2, 0, 3, 1, 4])?;
        let [q, k, v]: [Tensor; 3] = qkv.unbind(0)?.try_into().expect("three views");
        let y = q.scaled_dot_product_attention(&k, &v, None, 0.0, true, None, false)?;
        self.c_proj.forward(&y.transpose(1, 2)?.reshape([b, t, c])?)
    }
}

/// The MLP of a block.
#[derive(Module)]
pub struct Mlp {
    c_fc: Linear,
    c_proj: Linear,
}

impl Forward for Mlp {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.c_proj.forward(&self.c_fc.forward(x)?.gelu("tanh")?)
    }
}

/// One pre-norm transformer block.
#[derive(Module)]
pub struct Block {
    ln_1: LayerNorm,
    attn: Attention,
    ln_2: LayerNorm,
    mlp: Mlp,
}

impl Forward for Block {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let x = x.add(self.attn.forward(&self.ln_1.forward(x)?)?)?;
        x.add(self.mlp.forward(&self.ln_2.forward(&x)?)?)
    }
}

/// The language model: token ids `[B, T]` to logits `[B, T, vocab]`.
#[derive(Module)]
pub struct Gpt {
    wte: Embedding,
    wpe: Embedding,
    h: Vec<Block>,
    ln_f: LayerNorm,
}

impl Gpt {
    /// A model with GPT-2's initialisation (normal(0, 0.02), residual projections scaled down).
    pub fn new(cfg: GptConfig) -> Result<Gpt> {
        let d = cfg.n_embd;
        let linear = |i: usize, o: usize, std: f64| -> Result<Linear> {
            let l = Linear::new(i, o, true)?;
            init::normal_(&l.weight, 0.0, std)?;
            init::zeros_(l.bias.as_ref().expect("bias"))?;
            Ok(l)
        };
        let proj_std = 0.02 / (2.0 * cfg.n_layer as f64).sqrt();
        let h = (0..cfg.n_layer)
            .map(|_| {
                Ok(Block {
                    ln_1: LayerNorm::new(&[d], 1e-5, true, true)?,
                    attn: Attention {
                        c_attn: linear(d, 3 * d, 0.02)?,
                        c_proj: linear(d, d, proj_std)?,
                        n_head: cfg.n_head,
                    },
                    ln_2: LayerNorm::new(&[d], 1e-5, true, true)?,
                    mlp: Mlp { c_fc: linear(d, 4 * d, 0.02)?, c_proj: linear(4 * d, d, proj_std)? },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let wte = Embedding::new(cfg.vocab_size, d, None)?;
        let wpe = Embedding::new(cfg.n_positions, d, None)?;
        init::normal_(&wte.weight, 0.0, 0.02)?;
        init::normal_(&wpe.weight, 0.0, 0.01)?;
        Ok(Gpt { wte, wpe, h, ln_f: LayerNorm::new(&[d], 1e-5, true, true)? })
    }

    /// Logits for token ids `[B, T]`.
    pub fn logits(&self, ids: &Tensor) -> Result<Tensor> {
        let t = ids.dims()[1];
        let pos = Tensor::arange(t as i64, ids.device())?;
        let mut x = self.wte.forward(ids)?.add(self.wpe.forward(&pos)?)?;
        for block in &self.h {
            x = block.forward(&x)?;
        }
        self.ln_f.forward(&x)?.matmul(&self.wte.weight.t()?)
    }

    /// Next-token cross-entropy of `ids` (logits at position t predict token t+1), as
    /// transformers' `GPT2LMHeadModel(ids, labels=ids).loss`.
    pub fn loss(&self, ids: &Tensor) -> Result<Tensor> {
        let logits = self.logits(ids)?;
        let (b, t, v) = (logits.dims()[0], logits.dims()[1], logits.dims()[2]);
        let pred = logits.narrow(1, 0, t - 1)?.reshape([((t - 1) * b) as isize, v as isize])?;
        let target = ids.narrow(1, 1, t - 1)?.reshape([-1])?;
        pred.cross_entropy(&target, None, -100, "mean", 0.0)
    }
}
