//! Falcon (`FalconForCausalLM`, `FalconModel`): layer norms, RoPE, an ungated MLP
//! (`dense_h_to_4h`, `dense_4h_to_h`), one fused `query_key_value` laid out three ways —
//! multi-query (Falcon-7B: all query heads, then the one key and value head), grouped
//! (`new_decoder_architecture`, Falcon-40B/180B: per key-value group its query heads, key and
//! value) or per head (`[q k v]` for each head) — and attention and MLP in parallel on one norm
//! (`parallel_attn`), on two (`ln_attn`, `ln_mlp`) or in sequence. The checkpoint
//! (`transformer.*`, or a base model's bare names) and the config (`n_head`, `n_layer`,
//! `num_kv_heads`, `layer_norm_epsilon`, ...) are read into the decoder's layout. ALiBi Falcons
//! (falcon-rw) are refused.

use oxtorch_tensor::Tensor;
use serde_json::Value;

use super::decoder::{CausalLm, DecoderSpec};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::layers::Activation;
use crate::weights::Weights;

/// transformers' `FalconForCausalLM`.
#[derive(Debug, Clone)]
pub struct FalconForCausalLM(pub CausalLm);

impl std::ops::Deref for FalconForCausalLM {
    type Target = CausalLm;
    fn deref(&self) -> &CausalLm {
        &self.0
    }
}

/// How a Falcon lays out its blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    /// `new_decoder_architecture`: grouped `query_key_value`, always parallel
    grouped: bool,
    /// `multi_query` (outside the new architecture): one key-value head after the queries
    multi_query: bool,
    /// attention and MLP both read the layer's input
    parallel: bool,
    /// two norms (`ln_attn`, `ln_mlp`) for the parallel block, else one
    two_norms: bool,
}

impl Layout {
    fn of(cfg: &Config) -> Result<Self> {
        if cfg.bool_or("alibi", false)? {
            return Err(Error::Unsupported(
                "Falcon with ALiBi positions (alibi: true, the falcon-rw models) is not supported".into(),
            ));
        }
        let hidden = cfg.usize_or("hidden_size", 4544)?;
        let heads = cfg.opt_usize("num_attention_heads")?.or(cfg.opt_usize("n_head")?).unwrap_or(71);
        if heads == 0 || !hidden.is_multiple_of(heads) {
            return Err(Error::Config(format!(
                "`hidden_size` must be divisible by num_heads (got `hidden_size`: {hidden} and `num_heads`: {heads})."
            )));
        }
        let grouped = cfg.bool_or("new_decoder_architecture", false)?;
        let multi_query = cfg.bool_or("multi_query", true)?;
        let kv_heads = if grouped {
            cfg.nullable_usize_or("num_kv_heads", None)?.unwrap_or(heads)
        } else if multi_query {
            1
        } else {
            heads
        };
        if kv_heads == 0 || !heads.is_multiple_of(kv_heads) {
            return Err(Error::Config(format!(
                "num_kv_heads ({kv_heads}) must divide num_attention_heads ({heads})"
            )));
        }
        let norms = cfg.nullable_usize_or("num_ln_in_parallel_attn", None)?;
        Ok(Layout {
            heads,
            kv_heads,
            head_dim: hidden / heads,
            grouped,
            multi_query,
            parallel: grouped || cfg.bool_or("parallel_attn", true)?,
            two_norms: grouped && norms.unwrap_or(2) == 2,
        })
    }
}

impl FalconForCausalLM {
    /// Loads the model from a Falcon config and checkpoint.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let layout = Layout::of(cfg)?;
        let dcfg = decoder_config(cfg, &layout)?;
        let weights = decoder_weights(weights, dcfg.layers("num_hidden_layers")?, &layout)?;
        Ok(FalconForCausalLM(CausalLm::load(&dcfg, &weights, spec(cfg, &dcfg, &layout)?)?))
    }
}

/// The config under the decoder's key names.
fn decoder_config(cfg: &Config, layout: &Layout) -> Result<Config> {
    let hidden = cfg.usize_or("hidden_size", 4544)?;
    let layers = match (cfg.get("num_hidden_layers"), cfg.get("n_layer")) {
        (Some(v), _) if !v.is_null() => cfg.layers("num_hidden_layers")?,
        (_, Some(v)) if !v.is_null() => cfg.layers("n_layer")?,
        _ => 32,
    };
    let mut json = cfg.json().clone();
    let mut set = |key: &str, value: Value| {
        json.insert(key.to_string(), value);
    };
    set("hidden_size", hidden.into());
    set("num_hidden_layers", layers.into());
    set("num_attention_heads", layout.heads.into());
    set("num_key_value_heads", layout.kv_heads.into());
    set("head_dim", layout.head_dim.into());
    let ffn = cfg.nullable_usize_or("ffn_hidden_size", None)?.unwrap_or(hidden.saturating_mul(4));
    set("intermediate_size", ffn.into());
    set("rms_norm_eps", cfg.nullable_f64_or("layer_norm_epsilon", Some(1e-5))?.unwrap_or(1e-5).into());
    if cfg.get("vocab_size").is_none() {
        set("vocab_size", 65024.into());
    }
    if cfg.get("max_position_embeddings").is_none() {
        set("max_position_embeddings", 2048.into());
    }
    Ok(Config::from_map(json))
}

/// Falcon's structure as a [`DecoderSpec`].
fn spec(cfg: &Config, dcfg: &Config, layout: &Layout) -> Result<DecoderSpec> {
    let mut spec = DecoderSpec::llama(dcfg)?;
    let bias = cfg.bool_or("bias", false)?;
    (spec.qkv_bias, spec.o_bias, spec.mlp_bias) = (bias, bias, bias);
    spec.layer_norm = true;
    spec.plain_mlp = true;
    spec.parallel_residual = layout.parallel;
    spec.act = Activation::from_name(cfg.str_or("activation", "gelu")?)?;
    spec.tie_word_embeddings = cfg.bool_or("tie_word_embeddings", true)?;
    spec.default_rms_norm_eps = 1e-5;
    Ok(spec)
}

/// The checkpoint's tensors under the decoder's names (with `model.` where the checkpoint has the
/// `transformer.` prefix), `query_key_value` regrouped to `[q; k; v]`, the parallel block's one
/// norm read as both of the decoder's.
fn decoder_weights(weights: &Weights, layers: usize, layout: &Layout) -> Result<Weights> {
    let (prefix, root) = if weights.contains("transformer.word_embeddings.weight") {
        ("transformer.", "model.")
    } else {
        ("", "")
    };
    let mut out: Vec<(String, Tensor)> = Vec::with_capacity(weights.len() + 2 * layers);
    for item in weights.iter() {
        let (name, t) = item?;
        let Some(rest) = name.strip_prefix(prefix) else {
            out.push((name.clone(), t));
            continue;
        };
        let new = match rest {
            "word_embeddings.weight" => vec![format!("{root}embed_tokens.weight")],
            "ln_f.weight" | "ln_f.bias" => vec![format!("{root}norm.{}", &rest["ln_f.".len()..])],
            _ => match layer_names(rest, layers, layout) {
                Some(names) => names.into_iter().map(|n| format!("{root}{n}")).collect(),
                None => vec![name.clone()],
            },
        };
        let t = if rest.ends_with("query_key_value.weight") || rest.ends_with("query_key_value.bias") {
            qkv_to_grouped(name, &t, layout)?
        } else {
            t
        };
        out.extend(new.into_iter().map(|n| (n, t.clone())));
    }
    Ok(Weights::from_tensors(out))
}

/// The decoder's names of `h.{i}.{part}` (one norm can be two of them); `None` for a name outside
/// the blocks.
fn layer_names(rest: &str, layers: usize, layout: &Layout) -> Option<Vec<String>> {
    let after = rest.strip_prefix("h.")?;
    let (index, part) = after.split_once('.')?;
    let i: usize = index.parse().ok().filter(|i| *i < layers)?;
    let (module, param) = part.rsplit_once('.')?;
    let targets: Vec<&str> = match module {
        "self_attention.query_key_value" => vec!["self_attn.qkv_proj"],
        "self_attention.dense" => vec!["self_attn.o_proj"],
        "mlp.dense_h_to_4h" => vec!["mlp.up_proj"],
        "mlp.dense_4h_to_h" => vec!["mlp.down_proj"],
        "ln_attn" => vec!["input_layernorm"],
        "ln_mlp" => vec!["post_attention_layernorm"],
        // The parallel block's one norm feeds attention and MLP alike.
        "input_layernorm" if layout.parallel && !layout.two_norms => {
            vec!["input_layernorm", "post_attention_layernorm"]
        }
        "input_layernorm" | "post_attention_layernorm" => vec![module],
        _ => return None,
    };
    Some(targets.into_iter().map(|t| format!("layers.{i}.{t}.{param}")).collect())
}

/// `query_key_value`'s rows (weight `[rows, hidden]` or bias `[rows]`) as all queries, then all
/// keys, then all values.
fn qkv_to_grouped(name: &str, t: &Tensor, l: &Layout) -> Result<Tensor> {
    let dims = t.dims().to_vec();
    let rows = dims.first().copied().unwrap_or(0);
    let want = (l.heads + 2 * l.kv_heads) * l.head_dim;
    if rows != want || dims.len() > 2 {
        return Err(Error::Weight(format!(
            "tensor '{name}' has shape {dims:?}, but {} query and {} key-value heads of {} need {want} rows",
            l.heads, l.kv_heads, l.head_dim
        )));
    }
    let rest = &dims[1..];
    let with = |lead: &[usize]| -> Vec<usize> { lead.iter().chain(rest).copied().collect() };
    let d = l.head_dim;
    Ok(if l.grouped {
        // Per group: its `heads / kv` query heads, then its key head, then its value head.
        let per = l.heads / l.kv_heads;
        let g = t.reshape(with(&[l.kv_heads, per + 2, d]))?;
        let q = g.narrow(1, 0, per)?.reshape(with(&[l.heads * d]))?;
        let k = g.narrow(1, per as isize, 1)?.reshape(with(&[l.kv_heads * d]))?;
        let v = g.narrow(1, (per + 1) as isize, 1)?.reshape(with(&[l.kv_heads * d]))?;
        Tensor::cat(&[&q, &k, &v], 0)?
    } else if l.multi_query {
        // Already all queries, then the key head, then the value head.
        t.clone()
    } else {
        // Per head: its query, key and value.
        t.reshape(with(&[l.heads, 3, d]))?.transpose(0, 1)?.contiguous()?.reshape(dims)?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(grouped: bool, multi_query: bool, heads: usize, kv_heads: usize) -> Layout {
        Layout { heads, kv_heads, head_dim: 1, grouped, multi_query, parallel: true, two_norms: grouped }
    }

    /// Each layout's rows become `[q; k; v]`.
    #[test]
    fn query_key_value_layouts_are_regrouped() {
        let rows = |v: Vec<f32>| Tensor::from_vec(v.clone(), [v.len()]).unwrap();
        // Grouped, 4 query heads in 2 groups: q0 q1 k0 v0 q2 q3 k1 v1.
        let t = rows(vec![0., 1., 10., 20., 2., 3., 11., 21.]);
        let g = qkv_to_grouped("b", &t, &layout(true, false, 4, 2)).unwrap();
        assert_eq!(g.to_vec::<f32>().unwrap(), [0., 1., 2., 3., 10., 11., 20., 21.]);
        // Per head, 2 heads: q0 k0 v0 q1 k1 v1.
        let t = rows(vec![0., 10., 20., 1., 11., 21.]);
        let g = qkv_to_grouped("b", &t, &layout(false, false, 2, 2)).unwrap();
        assert_eq!(g.to_vec::<f32>().unwrap(), [0., 1., 10., 11., 20., 21.]);
        let err = qkv_to_grouped("b", &t, &layout(false, true, 2, 1)).unwrap_err().to_string();
        assert!(err.contains("need 4 rows"), "{err}");
    }
}
