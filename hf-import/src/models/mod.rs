//! The model families, and [`AutoModel`], which picks one from `config.json`.

mod albert;
mod anyres;
mod apertus;
mod audio_spectrogram;
mod auto_forward;
mod auto_inputs;
mod auto_parts;
mod bamba;
mod bart;
mod beit;
mod bert;
mod biogpt;
mod bloom;
pub(crate) mod bucketing;
mod classification;
mod clip;
mod codegen;
mod cohere;
mod conv_bn;
mod convnext;
mod cvt;
mod deberta_v2;
pub mod decoder;
mod decoder_classifier;
mod decoder_token_classifier;
mod deepseek;
mod dinov2;
mod dinov3_vit;
mod distilbert;
mod dots1;
mod dpt;
mod electra;
mod encoder_aliases;
mod encoder_inputs;
mod ernie4_5;
mod ernie4_5_moe;
mod esm;
mod exaone;
mod exaone4;
mod exaone_moe;
mod falcon;
mod falcon_h1;
mod family;
mod gemma;
mod gemma3_images;
mod gemma3_multimodal;
mod glm;
mod glm4_moe;
mod glm4_moe_lite;
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
mod idefics3_images;
mod image_inputs;
mod internvl_vision;
mod jamba;
mod lfm2;
mod lfm2_vl_images;
mod llama;
mod llama_variants;
mod llava_images;
mod llava_projector;
mod load_architecture;
mod mamba;
mod minimax_m2;
mod ministral;
mod ministral3;
mod mistral;
mod mistral3;
mod modernbert;
mod moe;
mod mpnet;
mod mpt;
mod multiple_choice;
mod nanochat;
mod nemotron;
mod nemotron_h;
mod nomic_bert;
mod olmo;
mod openai_gpt;
mod opt;
mod phi;
mod phi3;
mod phimoe;
mod pixtral_vision;
mod pre_norm_bert;
mod pretraining;
mod qwen2;
mod qwen3;
mod qwen3_5;
mod qwen_vl;
mod qwen_vl_images;
mod qwen_vl_vision;
mod registry;
mod resnet;
mod roberta;
mod sarvam;
mod seed_oss;
mod segformer;
mod seq2seq_io;
mod siglip;
mod siglip2_vision;
mod smollm3;
mod stablelm;
mod starcoder2;
mod swin;
mod t5;
mod token_classification;
mod vision;
mod vision_language;
mod vision_models;
mod vision_tower;
mod vit;
mod wav2vec2;
mod whisper;
mod xglm;

use std::collections::BTreeMap;

use oxtorch_tensor::{DType, Device, Tensor};

pub use self::afmoe::AfmoeForCausalLM;
pub use self::albert::{load_albert, AlbertForMaskedLM};
pub use self::apertus::ApertusForCausalLM;
pub use self::audio_spectrogram::AudioSpectrogramTransformer;
pub use self::axk1::AXK1ForCausalLM;
pub use self::bamba::BambaForCausalLM;
pub use self::bart::{Bart, BartConfig, BartStack};
pub use self::beit::Beit;
pub use self::bert::{BertConfig, BertForMaskedLM, BertModel, BertOutput, Positions};
pub use self::biogpt::BioGptForCausalLM;
pub use self::bit::Bit;
pub use self::bitnet::BitNetForCausalLM;
pub use self::bloom::BloomForCausalLM;
pub use self::classification::{
    label_names, num_labels, BertForSequenceClassification, ClassifierEncoder,
    DistilBertForSequenceClassification, MPNetForSequenceClassification, ModernBertForSequenceClassification,
    RobertaForSequenceClassification, SequenceClassifier,
};
pub use self::clip::{Clip, ClipTextConfig, ClipTextTower, ClipVisionConfig, ClipVisionTower, TowerOutput};
pub use self::cohere::{Cohere2ForCausalLM, Cohere2MoeForCausalLM, CohereForCausalLM};
pub use self::convnext::ConvNext;
pub use self::cvt::Cvt;
pub use self::cwm::CwmForCausalLM;
pub use self::dbrx::DbrxForCausalLM;
pub use self::deberta_v2::{
    log_bucket_position, ConvConfig, DebertaV2Config, DebertaV2ForMaskedLM, DebertaV2Model, RelativeConfig,
};
pub use self::decoder::{AttentionBlocks, CausalLm, DecoderOutput, DecoderSpec, MoeSpec, ReplacedRows};
pub use self::decoder_classifier::DecoderForSequenceClassification;
pub use self::decoder_token_classifier::DecoderForTokenClassification;
pub use self::deepseek::{DeepseekV2ForCausalLM, DeepseekV3ForCausalLM};
pub use self::diffllama::DiffLlamaForCausalLM;
pub use self::dinov2::{Dinov2ForImageClassification, Dinov2Model};
pub use self::dinov3_vit::Dinov3Vit;
pub use self::distilbert::{DistilBertForMaskedLM, DistilBertModel};
pub use self::dots1::Dots1ForCausalLM;
pub use self::dpt::{DepthAnything, Dpt};
pub use self::efficientnet::EfficientNet;
pub use self::electra::{load_electra, ElectraWithHead};
pub use self::ernie4_5::Ernie4_5ForCausalLM;
pub use self::ernie4_5_moe::Ernie4_5MoeForCausalLM;
pub use self::esm::{EsmForMaskedLM, EsmModel};
pub use self::eurobert::EuroBertForMaskedLM;
pub use self::exaone::ExaoneForCausalLM;
pub use self::exaone4::Exaone4ForCausalLM;
pub use self::exaone_moe::ExaoneMoeForCausalLM;
pub use self::falcon::FalconForCausalLM;
pub use self::falcon_h1::FalconH1ForCausalLM;
pub use self::flint::FlintForCausalLM;
pub use self::gemma::{Gemma2ForCausalLM, Gemma3ForCausalLM, GemmaForCausalLM, VaultGemmaForCausalLM};
pub use self::gemma3_multimodal::Gemma3ForConditionalGeneration;
pub use self::gemma3n::{Gemma3nForCausalLM, Gemma3nForConditionalGeneration};
pub use self::gemma4::{Gemma4ForCausalLM, Gemma4ForConditionalGeneration};
pub use self::glm::GlmForCausalLM;
pub use self::glm4_moe::Glm4MoeForCausalLM;
pub use self::glm4_moe_lite::Glm4MoeLiteForCausalLM;
pub use self::glpn::Glpn;
pub use self::gpt2::GPT2LMHeadModel;
pub use self::gpt_bigcode::GPTBigCodeForCausalLM;
pub use self::gpt_neo::GPTNeoForCausalLM;
pub use self::gpt_neox::GPTNeoXForCausalLM;
pub use self::gpt_oss::GptOssForCausalLM;
pub use self::gptj::GPTJForCausalLM;
pub use self::granite::{GraniteForCausalLM, GraniteMoeForCausalLM};
pub use self::granite_swa::{GraniteMoeSWAForCausalLM, GraniteSWAForCausalLM};
pub use self::helium::HeliumForCausalLM;
pub use self::hunyuan::{HunYuanDenseV1ForCausalLM, HunYuanMoEV1ForCausalLM};
pub use self::hy_v3::HYV3ForCausalLM;
pub use self::hyperclovax::HyperCLOVAXForCausalLM;
pub use self::image_inputs::ImageInputs;
pub use self::jais2::Jais2ForCausalLM;
pub use self::jamba::JambaForCausalLM;
pub use self::kolibri1::Kolibri1ForCausalLM;
pub use self::laguna::LagunaForCausalLM;
pub use self::levit::Levit;
pub use self::lfm2::{Lfm2ForCausalLM, Lfm2MoeForCausalLM};
pub use self::lfm3::Lfm3ForCausalLM;
pub use self::llama::{ArceeForCausalLM, LlamaForCausalLM};
pub use self::llama4::{Llama4ForCausalLM, Llama4ForConditionalGeneration};
pub use self::llama_variants::{IQuestCoderForCausalLM, InternLM3ForCausalLM};
pub use self::mamba::{Mamba, MambaState};
pub use self::mellum::MellumForCausalLM;
pub use self::mimo_v2_flash::MiMoV2FlashForCausalLM;
pub use self::minicpm3::MiniCPM3ForCausalLM;
pub use self::minimax_m2::MiniMaxM2ForCausalLM;
pub use self::ministral::MinistralForCausalLM;
pub use self::ministral3::Ministral3ForCausalLM;
pub use self::mistral::MistralForCausalLM;
pub use self::mistral3::Mistral3ForConditionalGeneration;
pub use self::mistral4::Mistral4ForCausalLM;
pub use self::mobilenet::MobileNet;
pub use self::mobilevit::MobileVit;
pub use self::modernbert::{ModernBertForMaskedLM, ModernBertModel};
pub use self::modernbert_decoder::ModernBertDecoderForCausalLM;
pub use self::moe::{MixtralForCausalLM, Qwen2MoeForCausalLM, Qwen3MoeForCausalLM};
pub use self::mpnet::{MPNetForMaskedLM, MPNetModel};
pub use self::mpt::MptForCausalLM;
pub use self::nanochat::NanoChatForCausalLM;
pub use self::nemotron::NemotronForCausalLM;
pub use self::nemotron_h::NemotronHForCausalLM;
pub use self::nomic_bert::{GteModel, NomicBertModel};
pub use self::olmo::{
    FlexOlmoForCausalLM, Olmo2ForCausalLM, Olmo3ForCausalLM, OlmoForCausalLM, OlmoeForCausalLM,
};
pub use self::openai_gpt::OpenAIGPTLMHeadModel;
pub use self::opt::OPTForCausalLM;
pub use self::persimmon::{FuyuForCausalLM, PersimmonForCausalLM};
pub use self::phi::PhiForCausalLM;
pub use self::phi3::Phi3ForCausalLM;
pub use self::phimoe::PhimoeForCausalLM;
pub use self::poolformer::PoolFormer;
pub use self::pre_norm_bert::{NormLayout, PreNormNames};
pub use self::pretraining::PreTraining;
pub use self::qwen2::Qwen2ForCausalLM;
pub use self::qwen3::Qwen3ForCausalLM;
pub use self::qwen3_5::{Qwen3NextForCausalLM, Qwen3_5ForCausalLM, Qwen3_5MoeForCausalLM};
pub use self::regnet::RegNet;
pub use self::resnet::ResNet;
pub use self::roberta::{RobertaForMaskedLM, RobertaModel};
pub use self::sarvam::{SarvamMLAForCausalLM, SarvamMoEForCausalLM};
pub use self::seed_oss::SeedOssForCausalLM;
pub use self::segformer::Segformer;
pub use self::siglip::{Siglip, SiglipTextTower, SiglipVisionTower};
pub use self::smollm3::SmolLM3ForCausalLM;
pub use self::solar_open::SolarOpenForCausalLM;
pub use self::stablelm::StableLmForCausalLM;
pub use self::starcoder2::Starcoder2ForCausalLM;
pub use self::swin::Swin;
pub use self::t5::{StackConfig, StackOutput, T5Config, T5Stack, T5};
pub use self::token_classification::{TokenClassifier, TokenTask};
pub use self::vision_language::VisionLanguageForConditionalGeneration;
pub use self::vision_language::{is_vision_language, takes_images};
pub use self::vit::{ViTConfig, ViTForImageClassification, ViTModel};
pub use self::vit_mae::ViTMae;
pub use self::wav2vec2::Wav2Vec2;
pub use self::whisper::{Whisper, WhisperConfig};
pub use self::xglm::XGLMForCausalLM;
pub use self::yolos::Yolos;
pub use self::youtu::YoutuForCausalLM;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::weights::Weights;

use self::auto_inputs::check_input_shapes;
pub(crate) use self::auto_inputs::{check_input_dtype, ids_as_i64};
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
    /// `BertForPreTraining`, `BertForNextSentencePrediction`, `AlbertForPreTraining` (and
    /// Megatron-BERT's and ERNIE's heads of those names)
    PreTraining(PreTraining),
    /// `GemmaForCausalLM`
    Gemma(GemmaForCausalLM),
    /// `Gemma2ForCausalLM`
    Gemma2(Gemma2ForCausalLM),
    /// `Gemma3ForCausalLM`
    Gemma3(Gemma3ForCausalLM),
    /// `Gemma3ForConditionalGeneration`: its language model, on text (image inputs are refused)
    Gemma3ForConditionalGeneration(Gemma3ForConditionalGeneration),
    /// `Mistral3ForConditionalGeneration` (Mistral Small 3.1/3.2, Ministral 3): its language model,
    /// on text (image inputs are refused)
    Mistral3ForConditionalGeneration(Mistral3ForConditionalGeneration),
    /// The vision- and audio-language classes (the LLaVA family, Qwen2/2.5/3-VL, Llama 3.2
    /// Vision, PaliGemma, ...): the language model, on text (media inputs are refused)
    VisionLanguage(VisionLanguageForConditionalGeneration),
    /// `Llama4ForConditionalGeneration` (Llama 4 Scout and Maverick): its language model, run on text
    Llama4ForConditionalGeneration(Llama4ForConditionalGeneration),
    /// `Gemma3nForConditionalGeneration` (Gemma 3n): its language model, run on text
    Gemma3nForConditionalGeneration(Gemma3nForConditionalGeneration),
    /// `Gemma4ForConditionalGeneration` (Gemma 4): its language model, run on text
    Gemma4ForConditionalGeneration(Gemma4ForConditionalGeneration),
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
    /// `Lfm2MoeForCausalLM`
    Lfm2Moe(Lfm2MoeForCausalLM),
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
    /// `HunYuanMoEV1ForCausalLM`
    HunYuanMoe(HunYuanMoEV1ForCausalLM),
    /// `PhimoeForCausalLM`
    Phimoe(PhimoeForCausalLM),
    /// `FalconH1ForCausalLM`
    FalconH1(FalconH1ForCausalLM),
    /// `ExaoneMoeForCausalLM`
    ExaoneMoe(ExaoneMoeForCausalLM),
    /// `ExaoneForCausalLM` (EXAONE 3 and 3.5)
    Exaone(ExaoneForCausalLM),
    /// `InternLM3ForCausalLM`
    InternLM3(InternLM3ForCausalLM),
    /// `IQuestCoderForCausalLM`
    IQuestCoder(IQuestCoderForCausalLM),
    /// `OpenAIGPTLMHeadModel` (GPT-1)
    OpenAIGPT(OpenAIGPTLMHeadModel),
    /// `MiniMaxM2ForCausalLM` (MiniMax-M2)
    MiniMaxM2(MiniMaxM2ForCausalLM),
    /// `Glm4MoeLiteForCausalLM` (GLM-4.7-Flash)
    Glm4MoeLite(Glm4MoeLiteForCausalLM),
    /// `NanoChatForCausalLM` (NanoChat)
    NanoChat(NanoChatForCausalLM),
    /// `SarvamMLAForCausalLM` (Sarvam-MLA)
    SarvamMLA(SarvamMLAForCausalLM),
    /// `SarvamMoEForCausalLM` (Sarvam-MoE)
    SarvamMoE(SarvamMoEForCausalLM),
    /// `Ministral3ForCausalLM` (Ministral 3)
    Ministral3(Ministral3ForCausalLM),
    /// `YoutuForCausalLM` (Youtu-LLM)
    Youtu(YoutuForCausalLM),
    /// `SolarOpenForCausalLM` (Solar Open)
    SolarOpen(SolarOpenForCausalLM),
    /// `Jais2ForCausalLM` (Jais 2)
    Jais2(Jais2ForCausalLM),
    /// `HyperCLOVAXForCausalLM` (HyperCLOVA X)
    HyperCLOVAX(HyperCLOVAXForCausalLM),
    /// `CwmForCausalLM` (Code World Model)
    Cwm(CwmForCausalLM),
    /// `EuroBertForMaskedLM` (EuroBERT: Llama's layers attending both ways, a masked-LM head)
    EuroBert(EuroBertForMaskedLM),
    /// `ModernBertDecoderForCausalLM` (the Ettin decoders: ModernBERT's layers run causally)
    ModernBertDecoder(ModernBertDecoderForCausalLM),
    /// `BitNetForCausalLM` (BitNet b1.58: ternary projections, 8-bit activations)
    BitNet(BitNetForCausalLM),
    /// `DiffLlamaForCausalLM` (DiffLlama)
    DiffLlama(DiffLlamaForCausalLM),
    /// `Lfm3ForCausalLM` (LFM3)
    Lfm3(Lfm3ForCausalLM),
    /// `Kolibri1ForCausalLM` (Kolibri-1)
    Kolibri1(Kolibri1ForCausalLM),
    /// `AXK1ForCausalLM` (A.X-K1)
    AXK1(AXK1ForCausalLM),
    /// `FlintForCausalLM` (Flint)
    Flint(FlintForCausalLM),
    /// `Mistral4ForCausalLM` (Mistral 4)
    Mistral4(Mistral4ForCausalLM),
    /// `Gemma3nForCausalLM` (Gemma 3n's text model)
    Gemma3n(Gemma3nForCausalLM),
    /// `Gemma4ForCausalLM` (Gemma 4's text model)
    Gemma4(Gemma4ForCausalLM),
    /// `MiMoV2FlashForCausalLM` (MiMo-V2-Flash)
    MiMoV2Flash(MiMoV2FlashForCausalLM),
    /// `PersimmonForCausalLM` (Persimmon)
    Persimmon(PersimmonForCausalLM),
    /// `FuyuForCausalLM` (adept/fuyu-8b): its Persimmon language model, run on text
    Fuyu(FuyuForCausalLM),
    /// `DbrxForCausalLM` (DBRX)
    Dbrx(DbrxForCausalLM),
    /// `MiniCPM3ForCausalLM` (MiniCPM3)
    MiniCPM3(MiniCPM3ForCausalLM),
    /// `GraniteSWAForCausalLM` (Granite-SWA)
    GraniteSWA(GraniteSWAForCausalLM),
    /// `GraniteMoeSWAForCausalLM` (Granite-MoE-SWA)
    GraniteMoeSWA(GraniteMoeSWAForCausalLM),
    /// `Cohere2MoeForCausalLM` (Cohere 2 MoE)
    Cohere2Moe(Cohere2MoeForCausalLM),
    /// `HYV3ForCausalLM` (Hunyuan 3)
    HYV3(HYV3ForCausalLM),
    /// `Llama4ForCausalLM` (Llama 4 text)
    Llama4(Llama4ForCausalLM),
    /// `AfmoeForCausalLM` (AFMoE: Arcee Trinity)
    Afmoe(AfmoeForCausalLM),
    /// `LagunaForCausalLM` (Laguna)
    Laguna(LagunaForCausalLM),
    /// `MellumForCausalLM` (Mellum 2)
    Mellum(MellumForCausalLM),
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
    /// `Wav2Vec2Model`, `Wav2Vec2ForCTC`, `Wav2Vec2ForSequenceClassification` and HuBERT's
    Wav2Vec2(Wav2Vec2),
    /// `ResNetModel`, `ResNetForImageClassification`
    ResNet(ResNet),
    /// `ConvNextModel`, `ConvNextForImageClassification` and V2's
    ConvNext(ConvNext),
    /// `SwinModel`, `SwinForImageClassification`
    Swin(Swin),
    /// `BeitModel`, `BeitForImageClassification` and data2vec-vision's
    Beit(Beit),
    /// `DINOv3ViTModel`
    Dinov3Vit(Dinov3Vit),
    /// `SegformerModel`, `SegformerForImageClassification`, `SegformerForSemanticSegmentation`; PVTv2's
    /// model and classifier (SegFormer's encoder under other names)
    Segformer(Segformer),
    /// `DepthAnythingForDepthEstimation`
    DepthAnything(DepthAnything),
    /// `DPTModel`, `DPTForDepthEstimation`, `DPTForSemanticSegmentation`
    Dpt(Dpt),
    /// MobileNet V1's and V2's models, classifiers and V2's segmenter
    MobileNet(MobileNet),
    /// LeViT's model and classifiers
    Levit(Levit),
    /// YOLOS's model and object detector
    Yolos(Yolos),
    /// CvT's model and classifier
    Cvt(Cvt),
    /// ViT-MAE's model and pre-training model
    ViTMae(ViTMae),
    /// MobileViT's (V1's and V2's) model, classifier and segmenter
    MobileVit(MobileVit),
    /// `EfficientNetModel`, `EfficientNetForImageClassification`
    EfficientNet(EfficientNet),
    /// `RegNetModel`, `RegNetForImageClassification`
    RegNet(RegNet),
    /// `GLPNModel`, `GLPNForDepthEstimation`
    Glpn(Glpn),
    /// `BitModel`, `BitForImageClassification`
    Bit(Bit),
    /// `PoolFormerModel`, `PoolFormerForImageClassification`
    PoolFormer(PoolFormer),
    /// `ASTModel`, `ASTForAudioClassification`
    AudioSpectrogram(AudioSpectrogramTransformer),
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
        const HEADS: [&str; 10] = [
            "ForCausalLM",
            "ForCTC",
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

    /// The part of `weights` that the architecture `cfg` names reads: for a multimodal checkpoint
    /// whose images it does not take (Gemma 3 as a causal LM, Llama 4, Gemma 4, ...) its language model (renamed as [`AutoModel::load`] reads it), without the vision
    /// tower and projector, so that moving the result to a device or casting it never touches them;
    /// every tensor otherwise (the vision towers of the models that take images included: see
    /// [`takes_images`]). [`AutoModel::load`] takes either.
    pub fn weights_used(cfg: &Config, weights: Weights) -> Weights {
        match Self::architecture_of(cfg).as_deref() {
            // (They read their vision (or audio) towers and projectors for images (or audio).)
            Ok(arch) if vision_language::takes_images(arch) || vision_language::takes_audio(arch) => weights,
            Ok(
                "Gemma3ForCausalLM"
                | "Llama4ForConditionalGeneration"
                | "Gemma4ForConditionalGeneration"
                | "Gemma3nForConditionalGeneration"
                | "FuyuForCausalLM",
            ) => gemma3_multimodal::language_model_weights(weights),
            Ok(arch) if qwen_vl::ARCHITECTURES.contains(&arch) => qwen_vl::language_model_weights(weights),
            Ok(arch) if vision_language::is_vision_language(arch) => {
                gemma3_multimodal::language_model_weights(weights)
            }
            _ => weights,
        }
    }
}

mod afmoe;
#[cfg(test)]
mod architecture_tests;
mod audio_language;
mod audio_tower;
mod axk1;
mod bit;
mod bitnet;
mod cwm;
mod dbrx;
mod diffllama;
mod efficientnet;
mod eurobert;
mod flint;
mod gemma3n;
mod gemma4;
mod glpn;
mod granite_swa;
mod hy_v3;
mod hyperclovax;
mod jais2;
mod kolibri1;
mod laguna;
mod levit;
mod lfm3;
mod llama4;
mod llava_videos;
mod mellum;
mod mimo_v2_flash;
mod minicpm3;
mod mistral4;
mod mllama;
mod mllama_images;
mod mllama_vision;
mod mobilenet;
mod mobilevit;
mod mobilevit_v2;
mod modernbert_decoder;
mod persimmon;
mod poolformer;
mod pvt_v2;
mod regnet;
mod solar_open;
mod vit_mae;
mod yolos;
mod youtu;
