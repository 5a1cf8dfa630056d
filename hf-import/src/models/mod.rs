//! The model families, and [`AutoModel`], which picks one from `config.json`.

mod albert;
mod apertus;
mod bamba;
mod bart;
mod bert;
mod biogpt;
mod bloom;
pub(crate) mod bucketing;
mod classification;
mod clip;
mod codegen;
mod cohere;
mod deberta_v2;
pub mod decoder;
mod decoder_classifier;
mod decoder_token_classifier;
mod deepseek;
mod dinov2;
mod distilbert;
mod dots1;
mod electra;
mod encoder_inputs;
mod ernie4_5;
mod ernie4_5_moe;
mod esm;
mod exaone4;
mod falcon;
mod family;
mod gemma;
mod gemma3_multimodal;
mod glm;
mod glm4_moe;
mod gpt2;
mod gpt_bigcode;
mod gpt_neo;
mod gpt_neox;
mod gpt_oss;
mod gptj;
mod granite;
mod headless;
mod helium;
mod hunyuan;
mod jamba;
mod lfm2;
mod llama;
mod load_architecture;
mod mamba;
mod ministral;
mod mistral;
mod modernbert;
mod moe;
mod mpnet;
mod mpt;
mod multiple_choice;
mod nemotron;
mod nemotron_h;
mod nomic_bert;
mod olmo;
mod opt;
mod phi;
mod phi3;
mod qwen2;
mod qwen3;
mod qwen3_5;
mod registry;
mod roberta;
mod seed_oss;
mod seq2seq_io;
mod siglip;
mod smollm3;
mod stablelm;
mod starcoder2;
mod t5;
mod token_classification;
mod vision;
mod vision_models;
mod vit;
mod whisper;
mod xglm;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

pub use self::albert::{load_albert, AlbertForMaskedLM};
pub use self::apertus::ApertusForCausalLM;
pub use self::bamba::BambaForCausalLM;
pub use self::bart::{Bart, BartConfig, BartStack};
pub use self::bert::{BertConfig, BertForMaskedLM, BertModel, BertOutput, Positions};
pub use self::biogpt::BioGptForCausalLM;
pub use self::bloom::BloomForCausalLM;
pub use self::classification::{
    label_names, num_labels, BertForSequenceClassification, ClassifierEncoder,
    DistilBertForSequenceClassification, MPNetForSequenceClassification, ModernBertForSequenceClassification,
    RobertaForSequenceClassification, SequenceClassifier,
};
pub use self::clip::{Clip, ClipTextConfig, ClipTextTower, ClipVisionConfig, ClipVisionTower, TowerOutput};
pub use self::cohere::{Cohere2ForCausalLM, CohereForCausalLM};
pub use self::deberta_v2::{
    log_bucket_position, ConvConfig, DebertaV2Config, DebertaV2ForMaskedLM, DebertaV2Model, RelativeConfig,
};
pub use self::decoder::{CausalLm, DecoderOutput, DecoderSpec, MoeSpec};
pub use self::decoder_classifier::DecoderForSequenceClassification;
pub use self::decoder_token_classifier::DecoderForTokenClassification;
pub use self::deepseek::{DeepseekV2ForCausalLM, DeepseekV3ForCausalLM};
pub use self::dinov2::{Dinov2ForImageClassification, Dinov2Model};
pub use self::distilbert::{DistilBertForMaskedLM, DistilBertModel};
pub use self::dots1::Dots1ForCausalLM;
pub use self::electra::{load_electra, ElectraWithHead};
pub use self::ernie4_5::Ernie4_5ForCausalLM;
pub use self::ernie4_5_moe::Ernie4_5MoeForCausalLM;
pub use self::esm::{EsmForMaskedLM, EsmModel};
pub use self::exaone4::Exaone4ForCausalLM;
pub use self::falcon::FalconForCausalLM;
pub use self::gemma::{Gemma2ForCausalLM, Gemma3ForCausalLM, GemmaForCausalLM, VaultGemmaForCausalLM};
pub use self::gemma3_multimodal::Gemma3ForConditionalGeneration;
pub use self::glm::GlmForCausalLM;
pub use self::glm4_moe::Glm4MoeForCausalLM;
pub use self::gpt2::GPT2LMHeadModel;
pub use self::gpt_bigcode::GPTBigCodeForCausalLM;
pub use self::gpt_neo::GPTNeoForCausalLM;
pub use self::gpt_neox::GPTNeoXForCausalLM;
pub use self::gpt_oss::GptOssForCausalLM;
pub use self::gptj::GPTJForCausalLM;
pub use self::granite::{GraniteForCausalLM, GraniteMoeForCausalLM};
pub use self::helium::HeliumForCausalLM;
pub use self::hunyuan::HunYuanDenseV1ForCausalLM;
pub use self::jamba::JambaForCausalLM;
pub use self::lfm2::Lfm2ForCausalLM;
pub use self::llama::{ArceeForCausalLM, LlamaForCausalLM};
pub use self::mamba::{Mamba, MambaState};
pub use self::ministral::MinistralForCausalLM;
pub use self::mistral::MistralForCausalLM;
pub use self::modernbert::{ModernBertForMaskedLM, ModernBertModel};
pub use self::moe::{MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM};
pub use self::mpnet::{MPNetForMaskedLM, MPNetModel};
pub use self::mpt::MptForCausalLM;
pub use self::nemotron::NemotronForCausalLM;
pub use self::nemotron_h::NemotronHForCausalLM;
pub use self::nomic_bert::NomicBertModel;
pub use self::olmo::{
    FlexOlmoForCausalLM, Olmo2ForCausalLM, Olmo3ForCausalLM, OlmoForCausalLM, OlmoeForCausalLM,
};
pub use self::opt::OPTForCausalLM;
pub use self::phi::PhiForCausalLM;
pub use self::phi3::Phi3ForCausalLM;
pub use self::qwen2::Qwen2ForCausalLM;
pub use self::qwen3::Qwen3ForCausalLM;
pub use self::qwen3_5::{Qwen3NextForCausalLM, Qwen3_5ForCausalLM, Qwen3_5MoeForCausalLM};
pub use self::roberta::{RobertaForMaskedLM, RobertaModel};
pub use self::seed_oss::SeedOssForCausalLM;
pub use self::siglip::{Siglip, SiglipTextTower, SiglipVisionTower};
pub use self::smollm3::SmolLM3ForCausalLM;
pub use self::stablelm::StableLmForCausalLM;
pub use self::starcoder2::Starcoder2ForCausalLM;
pub use self::t5::{StackConfig, StackOutput, T5Config, T5Stack, T5};
pub use self::token_classification::{TokenClassifier, TokenTask};
pub use self::vit::{ViTConfig, ViTForImageClassification, ViTModel};
pub use self::whisper::{Whisper, WhisperConfig};
pub use self::xglm::XGLMForCausalLM;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

pub use self::registry::{DECODER_TOKEN_CLASSIFIERS, MODEL_TYPES, SUPPORTED_ARCHITECTURES};

/// Any supported model, chosen from `model_type` and `architectures`.
#[derive(Debug, Clone)]
pub enum AutoModel {
    /// `BertModel`
    Bert(BertModel),
    /// `BertForMaskedLM`
    BertForMaskedLM(BertForMaskedLM),
    /// `DistilBertModel`
    DistilBert(DistilBertModel),
    /// `DistilBertForMaskedLM`
    DistilBertForMaskedLM(DistilBertForMaskedLM),
    /// `RobertaModel` (also `XLMRobertaModel` and `CamembertModel`: the same network)
    Roberta(RobertaModel),
    /// `RobertaForMaskedLM` (also `XLMRobertaForMaskedLM`, `CamembertForMaskedLM`)
    RobertaForMaskedLM(RobertaForMaskedLM),
    /// `MPNetModel`
    MPNet(MPNetModel),
    /// `MPNetForMaskedLM`
    MPNetForMaskedLM(MPNetForMaskedLM),
    /// `ModernBertModel`
    ModernBert(ModernBertModel),
    /// `ModernBertForMaskedLM`
    ModernBertForMaskedLM(ModernBertForMaskedLM),
    /// `AlbertForMaskedLM` (`AlbertModel` is a [`AutoModel::Bert`])
    AlbertForMaskedLM(AlbertForMaskedLM),
    /// `ElectraForPreTraining` or `ElectraForMaskedLM` (`ElectraModel` is a [`AutoModel::Bert`])
    ElectraWithHead(ElectraWithHead),
    /// `NomicBertModel`
    NomicBert(NomicBertModel),
    /// `EsmModel`
    Esm(EsmModel),
    /// `EsmForMaskedLM`
    EsmForMaskedLM(EsmForMaskedLM),
    /// `DebertaV2Model` (and v1's `DebertaModel`)
    DebertaV2(DebertaV2Model),
    /// `DebertaV2ForMaskedLM` (and v1's `DebertaForMaskedLM`)
    DebertaV2ForMaskedLM(DebertaV2ForMaskedLM),
    /// `BertForSequenceClassification`, `RobertaForSequenceClassification`,
    /// `XLMRobertaForSequenceClassification`, `DistilBertForSequenceClassification`,
    /// `MPNetForSequenceClassification` or `ModernBertForSequenceClassification`
    SequenceClassifier(SequenceClassifier),
    /// An encoder's `*ForTokenClassification` or `*ForQuestionAnswering`
    TokenClassifier(TokenClassifier),
    /// `GemmaForCausalLM`
    Gemma(GemmaForCausalLM),
    /// `Gemma2ForCausalLM`
    Gemma2(Gemma2ForCausalLM),
    /// `Gemma3ForCausalLM`
    Gemma3(Gemma3ForCausalLM),
    /// `Gemma3ForConditionalGeneration`: its language model, on text (image inputs are refused)
    Gemma3ForConditionalGeneration(Gemma3ForConditionalGeneration),
    /// `LlamaForCausalLM`
    Llama(LlamaForCausalLM),
    /// `MistralForCausalLM`
    Mistral(MistralForCausalLM),
    /// `Phi3ForCausalLM`
    Phi3(Phi3ForCausalLM),
    /// `GPT2LMHeadModel`
    Gpt2(GPT2LMHeadModel),
    /// `GPTNeoXForCausalLM`
    GptNeoX(GPTNeoXForCausalLM),
    /// `FalconForCausalLM`
    Falcon(FalconForCausalLM),
    /// `OlmoForCausalLM`
    Olmo(OlmoForCausalLM),
    /// `Olmo2ForCausalLM`
    Olmo2(Olmo2ForCausalLM),
    /// `Olmo3ForCausalLM`
    Olmo3(Olmo3ForCausalLM),
    /// `GraniteForCausalLM`
    Granite(GraniteForCausalLM),
    /// `SmolLM3ForCausalLM`
    SmolLM3(SmolLM3ForCausalLM),
    /// `CohereForCausalLM`
    Cohere(CohereForCausalLM),
    /// `OPTForCausalLM`
    Opt(OPTForCausalLM),
    /// `GPTJForCausalLM`
    GptJ(GPTJForCausalLM),
    /// `GPTNeoForCausalLM`
    GptNeo(GPTNeoForCausalLM),
    /// `BloomForCausalLM`
    Bloom(BloomForCausalLM),
    /// `GPTBigCodeForCausalLM`
    GptBigCode(GPTBigCodeForCausalLM),
    /// `MptForCausalLM`
    Mpt(MptForCausalLM),
    /// `OlmoeForCausalLM`
    Olmoe(OlmoeForCausalLM),
    /// `GraniteMoeForCausalLM`
    GraniteMoe(GraniteMoeForCausalLM),
    /// `NemotronForCausalLM`
    Nemotron(NemotronForCausalLM),
    /// `GlmForCausalLM`, `Glm4ForCausalLM`
    Glm(GlmForCausalLM),
    /// `BioGptForCausalLM`
    BioGpt(BioGptForCausalLM),
    /// `XGLMForCausalLM`
    Xglm(XGLMForCausalLM),
    /// `ArceeForCausalLM`
    Arcee(ArceeForCausalLM),
    /// `Ernie4_5ForCausalLM`
    Ernie4_5(Ernie4_5ForCausalLM),
    /// `DeepseekV2ForCausalLM`
    DeepseekV2(DeepseekV2ForCausalLM),
    /// `DeepseekV3ForCausalLM`
    DeepseekV3(DeepseekV3ForCausalLM),
    /// `GptOssForCausalLM`
    GptOss(GptOssForCausalLM),
    /// `Glm4MoeForCausalLM`
    Glm4Moe(Glm4MoeForCausalLM),
    /// `Dots1ForCausalLM`
    Dots1(Dots1ForCausalLM),
    /// `ApertusForCausalLM`
    Apertus(ApertusForCausalLM),
    /// `HunYuanDenseV1ForCausalLM`
    HunYuanDense(HunYuanDenseV1ForCausalLM),
    /// `VaultGemmaForCausalLM`
    VaultGemma(VaultGemmaForCausalLM),
    /// `FlexOlmoForCausalLM`
    FlexOlmo(FlexOlmoForCausalLM),
    /// `Ernie4_5_MoeForCausalLM`
    Ernie4_5Moe(Ernie4_5MoeForCausalLM),
    /// `MinistralForCausalLM`
    Ministral(MinistralForCausalLM),
    /// `SeedOssForCausalLM`
    SeedOss(SeedOssForCausalLM),
    /// `HeliumForCausalLM`
    Helium(HeliumForCausalLM),
    /// `Exaone4ForCausalLM`
    Exaone4(Exaone4ForCausalLM),
    /// `StableLmForCausalLM`
    StableLm(StableLmForCausalLM),
    /// `Cohere2ForCausalLM`
    Cohere2(Cohere2ForCausalLM),
    /// `MixtralForCausalLM`
    Mixtral(MixtralForCausalLM),
    /// `Qwen3MoeForCausalLM`
    Qwen3Moe(Qwen3MoeForCausalLM),
    /// `Qwen2MoeForCausalLM`
    Qwen2Moe(Qwen2MoeForCausalLM),
    /// `Starcoder2ForCausalLM`
    Starcoder2(Starcoder2ForCausalLM),
    /// `PhiForCausalLM`
    Phi(PhiForCausalLM),
    /// `Qwen2ForCausalLM`
    Qwen2(Qwen2ForCausalLM),
    /// `Qwen3ForCausalLM`
    Qwen3(Qwen3ForCausalLM),
    /// `BambaForCausalLM`
    Bamba(BambaForCausalLM),
    /// `Lfm2ForCausalLM`
    Lfm2(Lfm2ForCausalLM),
    /// `JambaForCausalLM`
    Jamba(JambaForCausalLM),
    /// `NemotronHForCausalLM`
    NemotronH(NemotronHForCausalLM),
    /// `Qwen3_5ForCausalLM`
    Qwen3_5(Qwen3_5ForCausalLM),
    /// `Qwen3NextForCausalLM`
    Qwen3Next(Qwen3NextForCausalLM),
    /// `Qwen3_5MoeForCausalLM`
    Qwen3_5Moe(Qwen3_5MoeForCausalLM),
    /// A decoder family's base model (`LlamaModel`, `Qwen3Model`, EmbeddingGemma's
    /// `Gemma3TextModel`, ...): its `last_hidden_state` and `hidden_states`, no logits.
    BaseDecoder(CausalLm),
    /// A decoder's sequence classifier (`LlamaForSequenceClassification`,
    /// `Qwen3ForSequenceClassification`, ...: reward models)
    DecoderClassifier(DecoderForSequenceClassification),
    /// A decoder's token classifier (`LlamaForTokenClassification`, `GPT2ForTokenClassification`,
    /// ...)
    DecoderTokenClassifier(DecoderForTokenClassification),
    /// `ViTModel`
    ViT(ViTModel),
    /// `ViTForImageClassification`
    ViTForImageClassification(ViTForImageClassification),
    /// `CLIPModel`, its towers alone (`CLIPTextModel`, `CLIPVisionModel`, with or without their
    /// projections) or `CLIPForImageClassification`
    Clip(Clip),
    /// `T5ForConditionalGeneration`, `T5Model`, `T5EncoderModel` (and their `MT5*` names)
    T5(T5),
    /// `BartForConditionalGeneration`, `BartModel` (and their `MBart*` names)
    Bart(Bart),
    /// `WhisperForConditionalGeneration`, `WhisperModel`
    Whisper(Whisper),
    /// `SiglipModel`, `SiglipTextModel`, `SiglipVisionModel`
    Siglip(Siglip),
    /// `Dinov2Model` (and `Dinov2WithRegistersModel`)
    Dinov2(Dinov2Model),
    /// `Dinov2ForImageClassification` (and `Dinov2WithRegistersForImageClassification`)
    Dinov2ForImageClassification(Dinov2ForImageClassification),
    /// `MambaForCausalLM`, `MambaModel` (and their `FalconMamba*` and `Mamba2*` names): state-space models,
    /// which generate with a recurrent state rather than a KV cache
    Mamba(Mamba),
}

/// The input names each kind of model accepts.
const ENCODER_INPUTS: &[&str] = &["input_ids", "attention_mask", "token_type_ids", "position_ids"];
const DECODER_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids"];
const DISTILBERT_INPUTS: &[&str] = &["input_ids", "attention_mask", "position_ids"];
const IDS_AND_MASK: &[&str] = &["input_ids", "attention_mask"];

/// Inputs that index a table (token, token type and position ids): integer tensors, not bool, as
/// torch's embedding lookup requires. `attention_mask` may also be bool.
const ID_INPUTS: &[&str] = &["input_ids", "token_type_ids", "position_ids"];

/// Checks that input `name` may hold ids: an integer tensor (bool and float ones are an error, not
/// cast), or for `attention_mask` also a bool or float one.
pub(crate) fn check_input_dtype(name: &str, t: &Tensor) -> Result<()> {
    let dtype = t.dtype();
    // A float attention mask (ones and zeros) is accepted, as transformers does.
    if (dtype.is_float() && name != "attention_mask") || (dtype == DType::Bool && ID_INPUTS.contains(&name)) {
        return Err(Error::Input(format!("input '{name}' must be an integer tensor, got {dtype:?}")));
    }
    Ok(())
}

/// Checks the inputs' shapes against `input_ids` (`[batch, seq]`, `seq` > 0): `attention_mask`
/// and `token_type_ids` are `[batch, seq]`, `position_ids` `[batch, seq]`, `[1, seq]` or `[seq]`; the error
/// names the input.
pub(super) fn check_input_shapes(inputs: &BTreeMap<String, Tensor>) -> Result<()> {
    let Some(ids) = inputs.get("input_ids") else { return Ok(()) };
    let (b, s) = match ids.dims() {
        &[b, s] if s > 0 => (b, s),
        d => {
            return Err(Error::Input(format!(
                "input 'input_ids' must be [batch, seq] with seq > 0, got {d:?}"
            )))
        }
    };
    for (name, t) in inputs {
        let fits = match (name.as_str(), t.dims()) {
            ("input_ids", _) => true,
            ("position_ids", &[rows, cols]) => cols == s && (rows == b || rows == 1),
            ("position_ids", &[cols]) => cols == s,
            (_, &[rows, cols]) => rows == b && cols == s,
            _ => false,
        };
        if !fits {
            return Err(Error::Input(format!(
                "input '{name}' has shape {:?}, which does not fit input_ids of shape [{b}, {s}]",
                t.dims()
            )));
        }
    }
    Ok(())
}

/// Ids input `name` as int64, after [`check_input_dtype`].
pub(crate) fn ids_as_i64(name: &str, t: &Tensor) -> Result<Tensor> {
    check_input_dtype(name, t)?;
    Ok(t.to_dtype(DType::I64)?)
}

impl AutoModel {
    /// The architecture `cfg` names, checked against its `model_type`: `architectures[0]`, or the
    /// family's default (`BertModel`, `*ForCausalLM`) when the config names none. A causal LM head
    /// (`*ForCausalLM`, `*ForConditionalGeneration`) is the model type's own causal LM, as
    /// `AutoModelForCausalLM` picks it: `gemma3` runs `Gemma3ForConditionalGeneration`, `gemma3_text`
    /// `Gemma3ForCausalLM`, whichever of the two the config names.
    pub fn architecture_of(cfg: &Config) -> Result<String> {
        let model_type = cfg.model_type()?;
        let Some((_, default)) = MODEL_TYPES.iter().find(|(t, _)| *t == model_type) else {
            let names: Vec<&str> = MODEL_TYPES.iter().map(|(t, _)| *t).collect();
            return Err(Error::Unsupported(format!(
                "model_type \"{model_type}\" is not supported (supported: {})",
                names.join(", ")
            )));
        };
        // As transformers' Auto classes: the family comes from `model_type`, the head from the
        // architecture's name (a qwen2 config naming `LlamaForCausalLM` runs Qwen2, biases and all).
        // (GPT-2's causal LM is `GPT2LMHeadModel`.)
        const HEADS: [&str; 9] = [
            "ForCausalLM",
            "ForImageClassification",
            "ForConditionalGeneration",
            "ForMaskedLM",
            "ForSequenceClassification",
            "ForTokenClassification",
            "ForQuestionAnswering",
            "LMHeadModel",
            "Model",
        ];
        let head_of = |a: &str| HEADS.iter().copied().find(|h| a.ends_with(h));
        let causal =
            |h: Option<&str>| matches!(h, Some("ForCausalLM" | "ForConditionalGeneration" | "LMHeadModel"));
        let family = &default[..default.len() - head_of(default).map_or(0, str::len)];
        let named = cfg.architectures().into_iter().next().unwrap_or_else(|| default.to_string());
        // Only a known family's head is mapped (`BertLMHeadModel` is not `BertModel`).
        let known_family = |a: &str, head: &str| {
            let prefix = &a[..a.len() - head.len()];
            MODEL_TYPES.iter().any(|(_, d)| head_of(d).is_some_and(|h| &d[..d.len() - h.len()] == prefix))
        };
        let arch = match head_of(&named) {
            Some(head) if known_family(&named, head) && causal(Some(head)) && causal(head_of(default)) => {
                default.to_string()
            }
            Some(head) if known_family(&named, head) => format!("{family}{head}"),
            _ => named,
        };
        if !SUPPORTED_ARCHITECTURES.contains(&arch.as_str()) {
            return Err(Error::Unsupported(format!(
                "architecture \"{arch}\" is not supported (supported: {})",
                SUPPORTED_ARCHITECTURES.join(", ")
            )));
        }
        Ok(arch)
    }

    /// Builds the architecture `cfg` names from `weights`.
    pub fn load(cfg: &Config, weights: &Weights) -> Result<Self> {
        Self::load_architecture(&Self::architecture_of(cfg)?, cfg, weights)
    }

    /// The base model of `cfg`'s family, whatever head its `architectures` names, as
    /// sentence-transformers loads a model (transformers' `AutoModel`): `BertModel` for a
    /// `BertForMaskedLM` config (whose checkpoint need not hold the head), `MPNetModel` for
    /// all-mpnet-base-v2's `MPNetForMaskedLM`; a decoder as its model type's causal LM (for
    /// EmbeddingGemma's `Gemma3TextModel` too), whose hidden states never run the LM head, which
    /// a base model's checkpoint may lack.
    pub fn load_base(cfg: &Config, weights: &Weights) -> Result<Self> {
        let model_type = cfg.model_type()?;
        match MODEL_TYPES.iter().find(|(t, _)| *t == model_type) {
            Some((_, base)) => Self::load_architecture(base, cfg, weights),
            None => Self::load(cfg, weights),
        }
    }

    /// Builds the architecture `cfg` names from `weights` moved to `device` (each weight uploaded
    /// once; `weights` itself stays where it is). The model then runs on `device`: its forward
    /// passes move their inputs there and return outputs there.
    pub fn load_on_device(cfg: &Config, weights: &Weights, device: Device) -> Result<Self> {
        Self::load(cfg, &Self::weights_used(cfg, weights.clone()).to_device(device)?)
    }

    /// The part of `weights` that the architecture `cfg` names reads: for a Gemma 3 multimodal
    /// checkpoint its language model (renamed as [`AutoModel::load`] reads it), without the vision
    /// tower and projector, so that moving the result to a device or casting it never touches them;
    /// every tensor otherwise. [`AutoModel::load`] takes either.
    pub fn weights_used(cfg: &Config, weights: Weights) -> Weights {
        match Self::architecture_of(cfg).as_deref() {
            Ok("Gemma3ForCausalLM" | "Gemma3ForConditionalGeneration") => {
                gemma3_multimodal::language_model_weights(weights)
            }
            _ => weights,
        }
    }

    /// The BERT-style encoder inside a BERT, RoBERTa, XLM-R, DistilBERT, MPNet or ELECTRA model (`None` for
    /// ModernBERT and the decoders).
    pub fn encoder(&self) -> Option<&BertModel> {
        match self {
            AutoModel::Bert(m) => Some(m),
            AutoModel::BertForMaskedLM(m) => Some(&m.bert),
            AutoModel::DistilBert(m) => Some(&m.0),
            AutoModel::DistilBertForMaskedLM(m) => Some(&m.distilbert.0),
            AutoModel::Roberta(m) => Some(&m.0),
            AutoModel::MPNet(m) => Some(&m.0),
            AutoModel::MPNetForMaskedLM(m) => Some(&m.mpnet.0),
            AutoModel::RobertaForMaskedLM(m) => Some(&m.roberta.0),
            AutoModel::ElectraWithHead(m) => Some(&m.electra),
            AutoModel::AlbertForMaskedLM(m) => Some(&m.albert),
            AutoModel::SequenceClassifier(m) => m.encoder.bert(),
            AutoModel::TokenClassifier(m) => m.encoder.bert(),
            _ => None,
        }
    }

    /// The size of a learned position table (encoders, GPT-2); rotary positions have none.
    pub(crate) fn max_positions(&self) -> Option<usize> {
        if let Some(lm) = self.decoder() {
            return lm.position_table_len();
        }
        if let Some(deberta) = self.deberta() {
            return deberta.max_positions();
        }
        let enc = self.encoder()?;
        // RoBERTa's positions start after its padding id.
        let skipped = match enc.positions() {
            Positions::AfterPadding { padding_idx } => padding_idx.max(0) as usize + 1,
            Positions::Absolute => 0,
        };
        Some(enc.config().max_positions.saturating_sub(skipped))
    }

    /// The token id padding slots get: RoBERTa's padding id (its positions skip it), else 0.
    pub(crate) fn padding_token(&self) -> i64 {
        match self.encoder().map(BertModel::positions) {
            Some(Positions::AfterPadding { padding_idx }) => padding_idx,
            _ => 0,
        }
    }

    /// The device of the weights, where the model runs.
    pub fn device(&self) -> Device {
        match self {
            AutoModel::Bert(m) => m.device(),
            AutoModel::BertForMaskedLM(m) => m.bert.device(),
            AutoModel::DistilBert(m) => m.device(),
            AutoModel::DistilBertForMaskedLM(m) => m.distilbert.device(),
            AutoModel::Roberta(m) => m.device(),
            AutoModel::MPNet(m) => m.device(),
            AutoModel::MPNetForMaskedLM(m) => m.mpnet.device(),
            AutoModel::ModernBert(m) => m.device(),
            AutoModel::ModernBertForMaskedLM(m) => m.model.device(),
            AutoModel::RobertaForMaskedLM(m) => m.roberta.device(),
            AutoModel::ElectraWithHead(m) => m.electra.device(),
            AutoModel::AlbertForMaskedLM(m) => m.albert.device(),
            AutoModel::DebertaV2(m) => m.device(),
            AutoModel::NomicBert(m) => m.device(),
            AutoModel::Esm(m) => m.device(),
            AutoModel::EsmForMaskedLM(m) => m.esm.device(),
            AutoModel::DebertaV2ForMaskedLM(m) => m.deberta.device(),
            AutoModel::SequenceClassifier(m) => m.encoder.device(),
            AutoModel::TokenClassifier(m) => m.encoder.device(),
            _ if self.runs_own_inputs() => self.own_device(),
            _ => self.decoder().expect("decoder variants").device(),
        }
    }

    /// The ModernBERT encoder inside, for its models.
    fn modernbert(&self) -> Option<&ModernBertModel> {
        match self {
            AutoModel::ModernBert(m) => Some(m),
            AutoModel::ModernBertForMaskedLM(m) => Some(&m.model),
            AutoModel::SequenceClassifier(m) => m.encoder.modernbert(),
            AutoModel::TokenClassifier(m) => m.encoder.modernbert(),
            _ => None,
        }
    }

    /// The DeBERTa-v2 encoder inside, for its models.
    fn deberta(&self) -> Option<&DebertaV2Model> {
        match self {
            AutoModel::DebertaV2(m) => Some(m),
            AutoModel::DebertaV2ForMaskedLM(m) => Some(&m.deberta),
            AutoModel::SequenceClassifier(m) => match &m.encoder {
                ClassifierEncoder::DebertaV2(e) => Some(e),
                _ => None,
            },
            AutoModel::TokenClassifier(m) => match &m.encoder {
                ClassifierEncoder::DebertaV2(e) => Some(e),
                _ => None,
            },
            _ => None,
        }
    }

    /// The decoder stack inside: a causal LM's, a base decoder, a decoder classifier's.
    fn decoder(&self) -> Option<&CausalLm> {
        match self {
            AutoModel::DecoderClassifier(m) => Some(&m.model),
            AutoModel::DecoderTokenClassifier(m) => Some(&m.model),
            _ => self.causal_lm(),
        }
    }

    /// The decoder inside, for the causal LMs (and the decoders' base models).
    pub fn causal_lm(&self) -> Option<&CausalLm> {
        match self {
            AutoModel::Gemma(m) => Some(m),
            AutoModel::Gemma2(m) => Some(m),
            AutoModel::Gemma3(m) => Some(m),
            AutoModel::Gemma3ForConditionalGeneration(m) => Some(m),
            AutoModel::Llama(m) => Some(m),
            AutoModel::Phi3(m) => Some(m),
            AutoModel::Gpt2(m) => Some(m),
            AutoModel::GptNeoX(m) => Some(m),
            AutoModel::Falcon(m) => Some(m),
            AutoModel::Olmo(m) => Some(m),
            AutoModel::Olmo2(m) => Some(m),
            AutoModel::Olmo3(m) => Some(m),
            AutoModel::Granite(m) => Some(m),
            AutoModel::SmolLM3(m) => Some(m),
            AutoModel::Cohere(m) => Some(m),
            AutoModel::Opt(m) => Some(m),
            AutoModel::GptJ(m) => Some(m),
            AutoModel::GptNeo(m) => Some(m),
            AutoModel::Bloom(m) => Some(m),
            AutoModel::GptBigCode(m) => Some(m),
            AutoModel::Mpt(m) => Some(m),
            AutoModel::Olmoe(m) => Some(m),
            AutoModel::GraniteMoe(m) => Some(m),
            AutoModel::Nemotron(m) => Some(m),
            AutoModel::Glm(m) => Some(m),
            AutoModel::BioGpt(m) => Some(m),
            AutoModel::Xglm(m) => Some(m),
            AutoModel::Arcee(m) => Some(m),
            AutoModel::Ernie4_5(m) => Some(m),
            AutoModel::DeepseekV2(m) => Some(m),
            AutoModel::DeepseekV3(m) => Some(m),
            AutoModel::GptOss(m) => Some(m),
            AutoModel::Glm4Moe(m) => Some(m),
            AutoModel::Dots1(m) => Some(m),
            AutoModel::Apertus(m) => Some(m),
            AutoModel::Bamba(m) => Some(m),
            AutoModel::Lfm2(m) => Some(m),
            AutoModel::Jamba(m) => Some(m),
            AutoModel::NemotronH(m) => Some(m),
            AutoModel::Qwen3_5(m) => Some(m),
            AutoModel::Qwen3Next(m) => Some(m),
            AutoModel::Qwen3_5Moe(m) => Some(m),
            AutoModel::HunYuanDense(m) => Some(m),
            AutoModel::VaultGemma(m) => Some(m),
            AutoModel::FlexOlmo(m) => Some(m),
            AutoModel::Ernie4_5Moe(m) => Some(m),
            AutoModel::Ministral(m) => Some(m),
            AutoModel::SeedOss(m) => Some(m),
            AutoModel::Helium(m) => Some(m),
            AutoModel::Exaone4(m) => Some(m),
            AutoModel::StableLm(m) => Some(m),
            AutoModel::Cohere2(m) => Some(m),
            AutoModel::Mixtral(m) => Some(m),
            AutoModel::Qwen3Moe(m) => Some(m),
            AutoModel::Qwen2Moe(m) => Some(m),
            AutoModel::Starcoder2(m) => Some(m),
            AutoModel::Phi(m) => Some(m),
            AutoModel::Mistral(m) => Some(m),
            AutoModel::Qwen2(m) => Some(m),
            AutoModel::Qwen3(m) => Some(m),
            AutoModel::BaseDecoder(m) => Some(m),
            _ => None,
        }
    }

    /// The input names this model takes.
    pub fn input_names(&self) -> &'static [&'static str] {
        match self {
            AutoModel::DistilBert(_)
            | AutoModel::DistilBertForMaskedLM(_)
            | AutoModel::MPNet(_)
            | AutoModel::MPNetForMaskedLM(_)
            | AutoModel::ModernBert(_)
            | AutoModel::ModernBertForMaskedLM(_)
            | AutoModel::Esm(_)
            | AutoModel::EsmForMaskedLM(_) => DISTILBERT_INPUTS,
            AutoModel::SequenceClassifier(m) if !m.takes_token_types() => DISTILBERT_INPUTS,
            AutoModel::TokenClassifier(m) if !m.takes_token_types() => DISTILBERT_INPUTS,
            AutoModel::DecoderClassifier(m) if !m.takes_position_ids() => IDS_AND_MASK,
            AutoModel::DecoderTokenClassifier(m) if !m.takes_position_ids() => IDS_AND_MASK,
            AutoModel::Gemma3ForConditionalGeneration(_) => gemma3_multimodal::INPUTS,
            _ if self.runs_own_inputs() => self.own_input_names(),
            _ if self.decoder().is_some() => DECODER_INPUTS,
            _ => ENCODER_INPUTS,
        }
    }

    /// The token embeddings `[batch, seq, hidden]`: an encoder's `last_hidden_state`, or a decoder's
    /// last hidden state (after its final norm). `token_type_ids` is ignored by models without them.
    pub fn last_hidden_state(
        &self,
        input_ids: &Tensor,
        attention_mask: Option<&Tensor>,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.runs_own_inputs() {
            return self.own_last_hidden_state(input_ids, attention_mask);
        }
        let ids = ids_as_i64("input_ids", input_ids)?;
        if let Some(types) = token_type_ids {
            check_input_dtype("token_type_ids", types)?;
        }
        let (mask, types) = (attention_mask, token_type_ids);
        let enc = match self {
            AutoModel::Bert(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::BertForMaskedLM(m) => m.bert.forward(&ids, mask, types, None, false)?,
            AutoModel::Roberta(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::MPNet(m) => m.forward(&ids, mask, None, None, false)?,
            AutoModel::MPNetForMaskedLM(m) => m.mpnet.forward(&ids, mask, None, None, false)?,
            AutoModel::ModernBert(m) => m.forward(&ids, mask, None, false)?,
            AutoModel::ModernBertForMaskedLM(m) => m.model.forward(&ids, mask, None, false)?,
            AutoModel::RobertaForMaskedLM(m) => m.roberta.forward(&ids, mask, types, None, false)?,
            AutoModel::ElectraWithHead(m) => m.electra.forward(&ids, mask, types, None, false)?,
            AutoModel::AlbertForMaskedLM(m) => m.albert.forward(&ids, mask, types, None, false)?,
            AutoModel::DebertaV2(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::NomicBert(m) => m.forward(&ids, mask, types, None, false)?,
            AutoModel::Esm(m) => m.forward(&ids, mask, None, false)?,
            AutoModel::EsmForMaskedLM(m) => m.esm.forward(&ids, mask, None, false)?,
            AutoModel::DebertaV2ForMaskedLM(m) => m.deberta.forward(&ids, mask, types, None, false)?,
            AutoModel::DistilBert(m) => m.forward(&ids, mask, None, None, false)?,
            AutoModel::DistilBertForMaskedLM(m) => m.distilbert.forward(&ids, mask, None, None, false)?,
            AutoModel::SequenceClassifier(m) => m.encode(&ids, mask, types, None, false)?,
            AutoModel::TokenClassifier(m) => m.encode(&ids, mask, types, None, false)?,
            _ => return self.decoder().expect("decoder variants").last_hidden_state(&ids, mask, None),
        };
        Ok(enc.last_hidden_state)
    }

    /// The last hidden state `[batch, seq, hidden]` where pooling reads it: at the tokens
    /// `attention_mask` keeps. On the CPU every family computes it without the padding
    /// ([`BertModel::last_hidden_state_packed`] for BERT, RoBERTa, XLM-R, DistilBERT and MPNet,
    /// [`ModernBertModel::last_hidden_state_packed`], [`CausalLm::last_hidden_state_packed`]: the
    /// same values at kept tokens, zeros at padded ones); other devices give
    /// [`AutoModel::last_hidden_state`].
    pub fn last_hidden_state_at_tokens(
        &self,
        input_ids: &Tensor,
        attention_mask: &Tensor,
        token_type_ids: Option<&Tensor>,
    ) -> Result<Tensor> {
        if self.device() != Device::Cpu {
            return self.last_hidden_state(input_ids, Some(attention_mask), token_type_ids);
        }
        let ids = ids_as_i64("input_ids", input_ids)?;
        check_input_dtype("attention_mask", attention_mask)?;
        if let Some(bert) = self.encoder() {
            // DistilBERT and MPNet have no token types (`last_hidden_state` ignores them too).
            let types = token_type_ids.filter(|_| self.input_names().contains(&"token_type_ids"));
            if let Some(types) = types {
                check_input_dtype("token_type_ids", types)?;
            }
            return bert.last_hidden_state_packed(&ids, attention_mask, types);
        }
        if let Some(modernbert) = self.modernbert() {
            return modernbert.last_hidden_state_packed(&ids, attention_mask);
        }
        match self.decoder() {
            Some(lm) => lm.last_hidden_state_packed(&ids, attention_mask),
            None => self.last_hidden_state(input_ids, Some(attention_mask), token_type_ids),
        }
    }

    /// Runs the model on named inputs (`input_ids` required; integer tensors, `attention_mask` also
    /// bool) and returns its outputs under transformers' field names, per-layer tuples flattened as
    /// `hidden_states.0`, ....
    pub fn forward_named(
        &self,
        inputs: &BTreeMap<String, Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        if self.runs_own_inputs() {
            return self.forward_own_inputs(inputs, output_hidden_states);
        }
        if let AutoModel::Gemma3ForConditionalGeneration(_) = self {
            // Image inputs get their own error (before the float `pixel_values` would get the dtype's).
            gemma3_multimodal::check_text_only(inputs)?;
        }
        let accepted = self.input_names();
        for (name, t) in inputs {
            if !accepted.contains(&name.as_str()) {
                return Err(Error::Input(format!(
                    "unexpected input '{name}' (this model takes {})",
                    accepted.join(", ")
                )));
            }
            check_input_dtype(name, t)?;
        }
        let ids = inputs.get("input_ids").ok_or_else(|| Error::Input("missing input 'input_ids'".into()))?;
        if matches!(self, AutoModel::SequenceClassifier(m) if m.is_multiple_choice()) {
            multiple_choice::check_input_shapes(inputs)?;
        } else {
            check_input_shapes(inputs)?;
        }
        // A float or bool mask as the int64 ones and zeros the models read.
        let mask_i64 = match inputs.get("attention_mask") {
            Some(m) if m.dtype() != DType::I64 => Some(m.ne(0.0)?.to_dtype(DType::I64)?),
            _ => None,
        };
        // Position ids `[seq]` or `[1, seq]` as one row per sequence: every input then has the
        // ids' batch (which a compiling device marks dynamic for all of them alike).
        let pos_rows = match (inputs.get("position_ids"), ids.dims()) {
            (Some(p), &[b, s]) if p.dims() != [b, s] => Some(p.broadcast_to(&[b, s])?.contiguous()?),
            _ => None,
        };
        let (mask, types, pos) = (
            mask_i64.as_ref().or(inputs.get("attention_mask")),
            inputs.get("token_type_ids"),
            pos_rows.as_ref().or(inputs.get("position_ids")),
        );
        // On a compiling device the sequence is padded to its bucket (and the pass fused), so
        // that every length of a bucket runs the same program; per-token outputs are cut back.
        // The batch is marked dynamic (`Tensor::mark_dynamic`), so batch sizes share them too.
        let device = self.device();
        let (batch, seq) = match ids.dims() {
            &[b, s] => (b, s),
            _ => (0, 0),
        };
        let width = bucketing::padded_width(device, seq, self.max_positions());
        let _fused = bucketing::fuse_forward(device);
        // (A decoder classifier reads the padding ids: it runs at the inputs' own length.)
        // (QA's per-token outputs are 2-D, which the cut back below does not know from a
        // classifier's logits: they run at their own length too.)
        // (So are ELECTRA's discriminator logits `[batch, seq]`.)
        let spans = matches!(self, AutoModel::TokenClassifier(m) if m.task() == TokenTask::Spans)
            || matches!(self, AutoModel::ElectraWithHead(m) if m.per_token_scalar());
        if device.is_cpu()
            || ids.dims().len() != 2
            || matches!(self, AutoModel::DecoderClassifier(_))
            || spans
        {
            // (Ids of another rank get the model's own error.)
            return self.forward_exact(&ids.to_dtype(DType::I64)?, mask, types, pos, output_hidden_states);
        }
        // Always with a mask here: a length equal to its bucket runs the padded lengths' program.
        let padded_ids = bucketing::pad_columns(ids, width, self.padding_token())?;
        let padded_mask = bucketing::padded_mask(mask, batch, seq, width, ids.device())?;
        let padded_types = types.map(|t| bucketing::pad_columns(t, width, 0)).transpose()?;
        let padded_pos = pos.map(|t| bucketing::pad_columns(t, width, 0)).transpose()?;
        // The batch too: every batch size of a bucket runs the same programs.
        let padded_ids = bucketing::batch_on(&padded_ids, device)?;
        let padded_mask = bucketing::batch_on(&padded_mask, device)?;
        let padded_types = padded_types.map(|t| bucketing::batch_on(&t, device)).transpose()?;
        let padded_pos = padded_pos.map(|t| bucketing::batch_on(&t, device)).transpose()?;
        let out = self.forward_exact(
            &padded_ids,
            Some(&padded_mask),
            padded_types.as_ref(),
            padded_pos.as_ref(),
            output_hidden_states,
        )?;
        out.into_iter().map(|(k, t)| Ok((k, bucketing::trim(t, seq, width)?))).collect()
    }

    /// [`Self::forward_named`] on validated inputs at their own length.
    fn forward_exact(
        &self,
        ids: &Tensor,
        mask: Option<&Tensor>,
        types: Option<&Tensor>,
        pos: Option<&Tensor>,
        output_hidden_states: bool,
    ) -> Result<Vec<(String, Tensor)>> {
        let mut out = Vec::new();
        let push_hidden = |out: &mut Vec<(String, Tensor)>, hs: Vec<Tensor>| {
            out.extend(hs.into_iter().enumerate().map(|(i, h)| (format!("hidden_states.{i}"), h)));
        };
        if let AutoModel::BaseDecoder(lm) = self {
            let (h, hidden_states) = lm.hidden_states(ids, mask, pos, output_hidden_states)?;
            out.push(("last_hidden_state".into(), h));
            push_hidden(&mut out, hidden_states);
            return Ok(out);
        }
        if let AutoModel::TokenClassifier(m) = self {
            let (named, enc) = m.forward(ids, mask, types, pos, output_hidden_states)?;
            out.extend(named);
            push_hidden(&mut out, enc.hidden_states);
            return Ok(out);
        }
        if let AutoModel::DecoderClassifier(m) = self {
            let (logits, hidden_states) = m.forward(ids, mask, pos, output_hidden_states)?;
            out.push(("logits".into(), logits));
            push_hidden(&mut out, hidden_states);
            return Ok(out);
        }
        if let AutoModel::DecoderTokenClassifier(m) = self {
            let (logits, hidden_states) = m.forward(ids, mask, pos, output_hidden_states)?;
            out.push(("logits".into(), logits));
            push_hidden(&mut out, hidden_states);
            return Ok(out);
        }
        if let Some(lm) = self.causal_lm() {
            let o = lm.forward(ids, mask, pos, None, output_hidden_states)?;
            out.push(("logits".into(), o.logits));
            push_hidden(&mut out, o.hidden_states);
            return Ok(out);
        }
        let h = output_hidden_states;
        let (logits, enc) = match self {
            AutoModel::Bert(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::Roberta(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::MPNet(m) => (None, m.forward(ids, mask, None, pos, h)?),
            AutoModel::MPNetForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::ModernBert(m) => (None, m.forward(ids, mask, pos, h)?),
            AutoModel::ModernBertForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::DistilBert(m) => (None, m.forward(ids, mask, None, pos, h)?),
            AutoModel::BertForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::RobertaForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::DistilBertForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::ElectraWithHead(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::AlbertForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::DebertaV2(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::NomicBert(m) => (None, m.forward(ids, mask, types, pos, h)?),
            AutoModel::Esm(m) => (None, m.forward(ids, mask, pos, h)?),
            AutoModel::EsmForMaskedLM(m) => m.forward(ids, mask, pos, h).map(|(l, o)| (Some(l), o))?,
            AutoModel::DebertaV2ForMaskedLM(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            AutoModel::SequenceClassifier(m) => {
                m.forward(ids, mask, types, pos, h).map(|(l, o)| (Some(l), o))?
            }
            _ => unreachable!("decoders are handled above"),
        };
        match logits {
            Some(l) => out.push(("logits".into(), l)),
            None => {
                out.push(("last_hidden_state".into(), enc.last_hidden_state));
                if let Some(p) = enc.pooler_output {
                    out.push(("pooler_output".into(), p));
                }
            }
        }
        push_hidden(&mut out, enc.hidden_states);
        Ok(out)
    }
}

#[cfg(test)]
mod architecture_tests;
