//! CodeGen (`CodeGenForCausalLM`, `CodeGenModel`: Salesforce/codegen-350M-mono and up): GPT-J's
//! block (attention and the MLP in parallel on `ln_1`, interleaved RoPE over `rotary_dim` of each
//! head, the LM head's bias) and config keys, with one fused `qkv_proj` laid out for four model-
//! parallel shards: each quarter of its rows holds that shard's `[q v k]`. The projection is split
//! into GPT-J's `q_proj`, `k_proj` and `v_proj` at load, and the model is a [`GPTJForCausalLM`].

use oxtorch_tensor::Tensor;

use super::gptj::GPTJForCausalLM;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

/// The shards `qkv_proj` is laid out for (transformers' `mp_num`).
const SHARDS: usize = 4;

/// Loads transformers' `CodeGenForCausalLM` (or, from a base model's names, `CodeGenModel`) as the
/// GPT-J decoder it is.
pub fn load(cfg: &Config, weights: &Weights) -> Result<GPTJForCausalLM> {
    GPTJForCausalLM::load(cfg, &split_qkv(weights)?)
}

/// The checkpoint with each layer's `attn.qkv_proj.weight` (`[3 · hidden, hidden]`) split into
/// `attn.q_proj`, `attn.k_proj` and `attn.v_proj` (`[hidden, hidden]` each); the old
/// `attn.causal_mask` buffers left out; other names kept.
fn split_qkv(weights: &Weights) -> Result<Weights> {
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 64);
    for item in weights.iter() {
        let (name, t) = item?;
        if name.ends_with(".attn.causal_mask") {
            continue;
        }
        let Some(stem) = name.strip_suffix(".attn.qkv_proj.weight") else {
            out.push((name.clone(), t));
            continue;
        };
        let [q, k, v] = shards_to_qkv(name, &t)?;
        out.push((format!("{stem}.attn.q_proj.weight"), q));
        out.push((format!("{stem}.attn.k_proj.weight"), k));
        out.push((format!("{stem}.attn.v_proj.weight"), v));
    }
    Ok(Weights::from_tensors(out))
}

/// `qkv_proj`'s rows `[shard][q v k][rows of the shard]` regrouped into q, k and v.
fn shards_to_qkv(name: &str, t: &Tensor) -> Result<[Tensor; 3]> {
    let (rows, cols) = match t.dims() {
        &[rows, cols] if rows == 3 * cols && cols.is_multiple_of(SHARDS) => (rows, cols),
        d => {
            return Err(Error::Weight(format!(
                "tensor '{name}' of shape {d:?} is not CodeGen's [3 · hidden, hidden] qkv_proj with hidden a multiple of {SHARDS}"
            )))
        }
    };
    let local = rows / (3 * SHARDS);
    let split = t.reshape([SHARDS, 3, local, cols])?;
    let part =
        |i: isize| -> Result<Tensor> { Ok(split.narrow(1, i, 1)?.contiguous()?.reshape([cols, cols])?) };
    Ok([part(0)?, part(2)?, part(1)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each shard's rows are `[q v k]`: q gathers the first block of every shard, k the third, v
    /// the second; a projection of another shape is refused.
    #[test]
    fn shards_regroup_into_q_k_v() {
        // hidden 4, so each shard holds one row of each.
        let t = Tensor::from_vec((0..48).map(|i| i as f32).collect::<Vec<_>>(), [12, 4]).unwrap();
        let [q, k, v] = shards_to_qkv("w", &t).unwrap();
        let first_col =
            |x: &Tensor| x.narrow(1, 0, 1).unwrap().contiguous().unwrap().to_vec::<f32>().unwrap();
        assert_eq!(first_col(&q), vec![0.0, 12.0, 24.0, 36.0]);
        assert_eq!(first_col(&v), vec![4.0, 16.0, 28.0, 40.0]);
        assert_eq!(first_col(&k), vec![8.0, 20.0, 32.0, 44.0]);
        let bad = Tensor::zeros([9, 3], oxtorch_tensor::DType::F32).unwrap();
        assert!(shards_to_qkv("w", &bad).unwrap_err().to_string().contains("is not CodeGen's"));
    }
}
