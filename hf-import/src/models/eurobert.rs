//! EuroBERT (`EuroBertForMaskedLM`, `EuroBertModel`, model type `eurobert`: EuroBERT/EuroBERT-210m,
//! -610m, -2.1b): Llama's layers (RMS norms, RoPE, grouped key/value heads, a SwiGLU MLP) attending
//! both ways over the kept tokens, the final norm, and a masked-LM head `lm_head` (with a bias
//! when `mlp_bias`), untied by default. Its sequence and token classifiers are decoder classifiers
//! (see [`super::decoder_classifier`], [`super::decoder_token_classifier`]).

use super::decoder::{CausalLm, DecoderSpec};
use super::family::causal_lm_newtype;
use crate::config::Config;
use crate::error::Result;
use crate::weights::Weights;

causal_lm_newtype!(
    /// transformers' `EuroBertForMaskedLM` (a bidirectional [`CausalLm`]: its logits are every
    /// token's masked-LM prediction; it does not generate).
    EuroBertForMaskedLM
);

impl EuroBertForMaskedLM {
    /// Loads the model.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        let mut spec = DecoderSpec::llama(cfg)?;
        spec.bidirectional = true;
        spec.lm_head_bias = cfg.bool_or("mlp_bias", false)?;
        // (`EuroBertConfig`'s epsilon, where a config leaves it out.)
        spec.default_rms_norm_eps = 1e-5;
        Ok(EuroBertForMaskedLM(CausalLm::load(cfg, weights, spec)?))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::models::AutoModel;

    /// The model type decides the family; the named head stays (a base model, the masked LM).
    #[test]
    fn eurobert_architectures() {
        let arch = |a: &str| {
            let json = format!(r#"{{"model_type": "eurobert", "architectures": ["{a}"]}}"#);
            AutoModel::architecture_of(&Config::from_json_str(&json).unwrap())
        };
        assert_eq!(arch("EuroBertModel").unwrap(), "EuroBertModel");
        assert_eq!(arch("BertForMaskedLM").unwrap(), "EuroBertForMaskedLM");
        assert_eq!(arch("EuroBertForSequenceClassification").unwrap(), "EuroBertForSequenceClassification");
        assert_eq!(arch("EuroBertForTokenClassification").unwrap(), "EuroBertForTokenClassification");
    }
}
