//! BERT-style encoders whose layer norms open each branch rather than close it: RoBERTa-PreLayerNorm
//! (model type `roberta-prelayernorm`, andreasmadsen/efficient_mlm_m0.40), XLM-RoBERTa-XL
//! (`xlm-roberta-xl`, facebook/xlm-roberta-xl and -xxl) and Megatron-BERT (`megatron-bert`,
//! nvidia/megatron-bert-*). Each normalises the last block's output once more, and each stores
//! its norms under its own names; otherwise they are RoBERTa's, RoBERTa's and BERT's encoders
//! (positions, heads, prefixes), which they run as.

/// Where a BERT-style encoder's layer norms sit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NormLayout {
    /// BERT's: the summed embeddings normed, each block's branches closed by a norm after their
    /// residuals.
    #[default]
    PostNorm,
    /// Each branch's input normed, its residual left as it is, a norm after the last block.
    PreNorm(PreNormNames),
}

/// The names a pre-norm encoder stores its norms under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreNormNames {
    /// whether the summed embeddings are normed (`embeddings.LayerNorm`)
    pub embedding_norm: bool,
    /// the norm before attention, under a block (`encoder.layer.{i}.`)
    pub attention: &'static str,
    /// the norm before the MLP, under a block
    pub mlp: &'static str,
    /// the norm after the last block, under the encoder's root
    pub last: &'static str,
}

impl NormLayout {
    /// The layout of the model type `model_type` (BERT's for every type but the pre-norm ones).
    pub fn of_model_type(model_type: &str) -> Self {
        let names = match model_type {
            "roberta-prelayernorm" => PreNormNames {
                embedding_norm: true,
                attention: "attention.LayerNorm",
                mlp: "intermediate.LayerNorm",
                last: "LayerNorm",
            },
            "xlm-roberta-xl" => PreNormNames {
                embedding_norm: false,
                attention: "attention.self_attn_layer_norm",
                mlp: "LayerNorm",
                last: "encoder.LayerNorm",
            },
            "megatron-bert" => PreNormNames {
                embedding_norm: false,
                attention: "attention.ln",
                mlp: "ln",
                last: "encoder.ln",
            },
            _ => return NormLayout::PostNorm,
        };
        NormLayout::PreNorm(names)
    }

    /// Whether the summed embeddings are normed.
    pub fn embedding_norm(&self) -> bool {
        match self {
            NormLayout::PostNorm => true,
            NormLayout::PreNorm(names) => names.embedding_norm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_pre_norm_model_types_have_pre_norm_layouts() {
        for model_type in ["bert", "roberta", "xlm-roberta", "ernie", ""] {
            assert_eq!(NormLayout::of_model_type(model_type), NormLayout::PostNorm);
        }
        let roberta = NormLayout::of_model_type("roberta-prelayernorm");
        assert!(matches!(roberta, NormLayout::PreNorm(PreNormNames { last: "LayerNorm", .. })));
        assert!(roberta.embedding_norm());
        for model_type in ["xlm-roberta-xl", "megatron-bert"] {
            let layout = NormLayout::of_model_type(model_type);
            assert!(matches!(layout, NormLayout::PreNorm(_)) && !layout.embedding_norm(), "{model_type}");
        }
    }
}
