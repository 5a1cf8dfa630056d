//! `AutoModel::architecture_of`: which model type and architecture name give which model.

use super::*;

fn arch(json: &str) -> Result<String> {
    AutoModel::architecture_of(&Config::from_json_str(json).unwrap())
}

/// The family comes from `model_type`, the head from `architectures[0]`, as the Auto classes.
#[test]
fn the_model_type_picks_the_family() {
    assert_eq!(
        arch(r#"{"model_type": "qwen2", "architectures": ["LlamaForCausalLM"]}"#).unwrap(),
        "Qwen2ForCausalLM"
    );
    assert_eq!(arch(r#"{"model_type": "qwen2"}"#).unwrap(), "Qwen2ForCausalLM");
    assert_eq!(
        arch(r#"{"model_type": "roberta", "architectures": ["BertForMaskedLM"]}"#).unwrap(),
        "RobertaForMaskedLM"
    );
    assert_eq!(arch(r#"{"model_type": "bert", "architectures": ["BertModel"]}"#).unwrap(), "BertModel");
    // As AutoModelForCTC: the family from the model type.
    let ctc = arch(r#"{"model_type": "wav2vec2", "architectures": ["HubertForCTC"]}"#);
    assert_eq!(ctc.unwrap(), "Wav2Vec2ForCTC");
    let nsp = arch(r#"{"model_type": "bert", "architectures": ["BertForNextSentencePrediction"]}"#);
    assert_eq!(nsp.unwrap(), "BertForNextSentencePrediction");
    let e = arch(r#"{"model_type": "bert", "architectures": ["BertForCausalLMWithValueHead"]}"#);
    assert!(e.unwrap_err().to_string().contains("BertForCausalLMWithValueHead"));
    assert_eq!(
        arch(r#"{"model_type": "bert", "architectures": ["BertForMultipleChoice"]}"#).unwrap(),
        "BertForMultipleChoice"
    );
    assert_eq!(arch(r#"{"model_type": "llama", "architectures": ["LlamaModel"]}"#).unwrap(), "LlamaModel");
    assert_eq!(
        arch(r#"{"model_type": "gemma3_text", "architectures": ["Gemma3TextModel"]}"#).unwrap(),
        "Gemma3TextModel"
    );
    assert!(arch(r#"{"model_type": "bert", "architectures": ["BertLMHeadModel"]}"#).is_err());
    assert_eq!(arch(r#"{"model_type": "vit"}"#).unwrap(), "ViTModel");
    let vit_cls = arch(r#"{"model_type": "vit", "architectures": ["ViTForImageClassification"]}"#);
    assert_eq!(vit_cls.unwrap(), "ViTForImageClassification");
    assert!(arch(r#"{"model_type": "vit", "architectures": ["ViTForMaskedImageModeling"]}"#).is_err());
    assert!(arch(r#"{"model_type": "bert", "architectures": ["ViTForImageClassification"]}"#).is_err());
    assert!(arch(r#"{"model_type": "vit", "architectures": ["BertForMaskedLM"]}"#).is_err());
    // Encoder-decoders: the generation model by default; base models, encoders and classifiers by name.
    assert_eq!(arch(r#"{"model_type": "t5"}"#).unwrap(), "T5ForConditionalGeneration");
    assert_eq!(
        arch(r#"{"model_type": "mt5", "architectures": ["MT5EncoderModel"]}"#).unwrap(),
        "MT5EncoderModel"
    );
    assert_eq!(arch(r#"{"model_type": "umt5"}"#).unwrap(), "UMT5ForConditionalGeneration");
    assert_eq!(
        arch(r#"{"model_type": "umt5", "architectures": ["UMT5EncoderModel"]}"#).unwrap(),
        "UMT5EncoderModel"
    );
    assert_eq!(arch(r#"{"model_type": "t5", "architectures": ["T5Model"]}"#).unwrap(), "T5Model");
    assert_eq!(arch(r#"{"model_type": "bart", "architectures": ["BartModel"]}"#).unwrap(), "BartModel");
    let mnli = arch(r#"{"model_type": "bart", "architectures": ["BartForSequenceClassification"]}"#);
    assert_eq!(mnli.unwrap(), "BartForSequenceClassification");
    assert_eq!(arch(r#"{"model_type": "mbart"}"#).unwrap(), "MBartForConditionalGeneration");
    assert_eq!(arch(r#"{"model_type": "whisper"}"#).unwrap(), "WhisperForConditionalGeneration");
    assert_eq!(arch(r#"{"model_type": "marian"}"#).unwrap(), "MarianMTModel");
    assert_eq!(arch(r#"{"model_type": "marian", "architectures": ["MarianModel"]}"#).unwrap(), "MarianModel");
    assert_eq!(arch(r#"{"model_type": "pegasus"}"#).unwrap(), "PegasusForConditionalGeneration");
    assert_eq!(arch(r#"{"model_type": "m2m_100"}"#).unwrap(), "M2M100ForConditionalGeneration");
    let base = arch(r#"{"model_type": "m2m_100", "architectures": ["M2M100Model"]}"#);
    assert_eq!(base.unwrap(), "M2M100Model");
    assert_eq!(arch(r#"{"model_type": "plbart"}"#).unwrap(), "PLBartForConditionalGeneration");
    assert_eq!(arch(r#"{"model_type": "blenderbot"}"#).unwrap(), "BlenderbotForConditionalGeneration");
    let small = arch(r#"{"model_type": "blenderbot-small", "architectures": ["BlenderbotSmallModel"]}"#);
    assert_eq!(small.unwrap(), "BlenderbotSmallModel");
    let qa = arch(r#"{"model_type": "t5", "architectures": ["T5ForQuestionAnswering"]}"#);
    assert_eq!(qa.unwrap(), "T5ForQuestionAnswering");
    assert!(arch(r#"{"model_type": "t5", "architectures": ["T5WithLMHeadModel"]}"#).is_err());
    assert!(arch(r#"{"model_type": "whisper", "architectures": ["WhisperForAudioClassification"]}"#).is_err());
    // State-space models: Mamba and Falcon-Mamba's causal LMs and base models only.
    assert_eq!(arch(r#"{"model_type": "mamba"}"#).unwrap(), "MambaForCausalLM");
    assert_eq!(arch(r#"{"model_type": "mamba", "architectures": ["MambaModel"]}"#).unwrap(), "MambaModel");
    let falcon = arch(r#"{"model_type": "falcon_mamba", "architectures": ["MambaForCausalLM"]}"#);
    assert_eq!(falcon.unwrap(), "FalconMambaForCausalLM");
    assert!(arch(r#"{"model_type": "mamba", "architectures": ["MambaForSequenceClassification"]}"#).is_err());
    assert_eq!(arch(r#"{"model_type": "mamba2", "architectures": ["Mamba2Model"]}"#).unwrap(), "Mamba2Model");
    let qwen3_5 = arch(r#"{"model_type": "qwen3_5_text", "architectures": ["Qwen3_5TextModel"]}"#);
    assert_eq!(qwen3_5.unwrap(), "Qwen3_5TextModel");
    assert_eq!(arch(r#"{"model_type": "clip"}"#).unwrap(), "CLIPModel");
    assert_eq!(arch(r#"{"model_type": "siglip"}"#).unwrap(), "SiglipModel");
    assert_eq!(arch(r#"{"model_type": "dinov2"}"#).unwrap(), "Dinov2Model");
    let dino = arch(r#"{"model_type": "dinov2", "architectures": ["Dinov2ForImageClassification"]}"#);
    assert_eq!(dino.unwrap(), "Dinov2ForImageClassification");
    assert_eq!(arch(r#"{"model_type": "dinov2_with_registers"}"#).unwrap(), "Dinov2WithRegistersModel");
    assert_eq!(arch(r#"{"model_type": "siglip_vision_model"}"#).unwrap(), "SiglipVisionModel");
    assert_eq!(arch(r#"{"model_type": "clip_text_model"}"#).unwrap(), "CLIPTextModel");
    assert_eq!(arch(r#"{"model_type": "clip_vision_model"}"#).unwrap(), "CLIPVisionModel");
    for named in
        ["CLIPTextModelWithProjection", "CLIPVisionModelWithProjection", "CLIPForImageClassification"]
    {
        let got = arch(&format!(r#"{{"model_type": "clip", "architectures": ["{named}"]}}"#));
        assert_eq!(got.unwrap(), named);
    }
}

/// A CLIP architecture reads its model type's config: with another model type it is refused when
/// loading, naming both.
#[test]
fn clip_architectures_need_a_clip_config() {
    let cfg =
        Config::from_json_str(r#"{"model_type": "bert", "architectures": ["CLIPTextModelWithProjection"]}"#);
    let err = AutoModel::load(&cfg.unwrap(), &Weights::from_tensors([])).unwrap_err().to_string();
    assert!(err.contains("CLIPTextModelWithProjection") && err.contains("\"bert\""), "{err}");
    let cfg =
        Config::from_json_str(r#"{"model_type": "clip_text_model", "architectures": ["CLIPVisionModel"]}"#);
    assert_eq!(AutoModel::architecture_of(cfg.as_ref().unwrap()).unwrap(), "CLIPTextModel");
    let cfg = r#"{"model_type": "clip_text_model", "architectures": ["CLIPVisionModelWithProjection"]}"#;
    let err = AutoModel::load(&Config::from_json_str(cfg).unwrap(), &Weights::from_tensors([])).unwrap_err();
    assert!(err.to_string().contains("clip_text_model"), "{err}");
}

/// Every supported model type with every supported family's name for a head: the model type's
/// class for that head, as transformers 5.24's Auto classes map model types (checked:
/// `MODEL_FOR_CAUSAL_LM_MAPPING_NAMES`, `MODEL_FOR_MASKED_LM_MAPPING_NAMES`, `MODEL_MAPPING_NAMES`;
/// `architectures` is not read by them), or an error where it has none that hf-import runs
/// (`BertLMHeadModel`, `RobertaForCausalLM`, `Gemma3Model`, ...). A decoder's base model
/// (`LlamaModel`, ...) is its model type's for any `*Model` name.
#[test]
fn the_model_type_decides_the_family_for_every_pair() {
    let causal = [
        ("gemma", "GemmaForCausalLM"),
        ("gemma2", "Gemma2ForCausalLM"),
        ("gemma3", "Gemma3ForConditionalGeneration"),
        ("mistral3", "Mistral3ForConditionalGeneration"),
        ("llama4", "Llama4ForConditionalGeneration"),
        ("gemma4", "Gemma4ForConditionalGeneration"),
        ("gemma3n", "Gemma3nForConditionalGeneration"),
        ("fuyu", "FuyuForCausalLM"),
        ("gemma3_text", "Gemma3ForCausalLM"),
        ("llama", "LlamaForCausalLM"),
        ("mistral", "MistralForCausalLM"),
        ("phi3", "Phi3ForCausalLM"),
        ("qwen2", "Qwen2ForCausalLM"),
        ("qwen3", "Qwen3ForCausalLM"),
        ("gpt2", "GPT2LMHeadModel"),
        ("gpt_neox", "GPTNeoXForCausalLM"),
        ("mixtral", "MixtralForCausalLM"),
        ("qwen3_moe", "Qwen3MoeForCausalLM"),
        ("phi", "PhiForCausalLM"),
        ("qwen2_moe", "Qwen2MoeForCausalLM"),
        ("starcoder2", "Starcoder2ForCausalLM"),
        ("falcon", "FalconForCausalLM"),
        ("olmo", "OlmoForCausalLM"),
        ("olmo2", "Olmo2ForCausalLM"),
        ("olmo3", "Olmo3ForCausalLM"),
        ("granite", "GraniteForCausalLM"),
        ("smollm3", "SmolLM3ForCausalLM"),
        ("cohere", "CohereForCausalLM"),
        ("opt", "OPTForCausalLM"),
        ("gptj", "GPTJForCausalLM"),
        ("gpt_neo", "GPTNeoForCausalLM"),
        ("bloom", "BloomForCausalLM"),
        ("gpt_bigcode", "GPTBigCodeForCausalLM"),
        ("mpt", "MptForCausalLM"),
        ("codegen", "CodeGenForCausalLM"),
        ("olmoe", "OlmoeForCausalLM"),
        ("granitemoe", "GraniteMoeForCausalLM"),
        ("nemotron", "NemotronForCausalLM"),
        ("glm", "GlmForCausalLM"),
        ("glm4", "Glm4ForCausalLM"),
        ("biogpt", "BioGptForCausalLM"),
        ("xglm", "XGLMForCausalLM"),
        ("arcee", "ArceeForCausalLM"),
        ("ernie4_5", "Ernie4_5ForCausalLM"),
        ("deepseek_v2", "DeepseekV2ForCausalLM"),
        ("deepseek_v3", "DeepseekV3ForCausalLM"),
        ("gpt_oss", "GptOssForCausalLM"),
        ("glm4_moe", "Glm4MoeForCausalLM"),
        ("dots1", "Dots1ForCausalLM"),
        ("apertus", "ApertusForCausalLM"),
        ("granitemoeshared", "GraniteMoeSharedForCausalLM"),
        ("granitemoehybrid", "GraniteMoeHybridForCausalLM"),
        ("bamba", "BambaForCausalLM"),
        ("lfm2", "Lfm2ForCausalLM"),
        ("lfm2_moe", "Lfm2MoeForCausalLM"),
        ("jamba", "JambaForCausalLM"),
        ("nemotron_h", "NemotronHForCausalLM"),
        ("qwen3_5_text", "Qwen3_5ForCausalLM"),
        ("qwen3_next", "Qwen3NextForCausalLM"),
        ("qwen3_5_moe_text", "Qwen3_5MoeForCausalLM"),
        ("hunyuan_v1_moe", "HunYuanMoEV1ForCausalLM"),
        ("phimoe", "PhimoeForCausalLM"),
        ("falcon_h1", "FalconH1ForCausalLM"),
        ("exaone_moe", "ExaoneMoeForCausalLM"),
        ("exaone", "ExaoneForCausalLM"),
        ("internlm3", "InternLM3ForCausalLM"),
        ("iquestcoder", "IQuestCoderForCausalLM"),
        ("openai-gpt", "OpenAIGPTLMHeadModel"),
        ("minimax_m2", "MiniMaxM2ForCausalLM"),
        ("glm4_moe_lite", "Glm4MoeLiteForCausalLM"),
        ("nanochat", "NanoChatForCausalLM"),
        ("sarvam_mla", "SarvamMLAForCausalLM"),
        ("sarvam_moe", "SarvamMoEForCausalLM"),
        ("cwm", "CwmForCausalLM"),
        ("hyperclovax", "HyperCLOVAXForCausalLM"),
        ("jais2", "Jais2ForCausalLM"),
        ("solar_open", "SolarOpenForCausalLM"),
        ("youtu", "YoutuForCausalLM"),
        ("modernbert-decoder", "ModernBertDecoderForCausalLM"),
        ("bitnet", "BitNetForCausalLM"),
        ("diffllama", "DiffLlamaForCausalLM"),
        ("lfm3", "Lfm3ForCausalLM"),
        ("kolibri1", "Kolibri1ForCausalLM"),
        ("axk1", "AXK1ForCausalLM"),
        ("flint", "FlintForCausalLM"),
        ("mistral4", "Mistral4ForCausalLM"),
        ("gemma3n_text", "Gemma3nForCausalLM"),
        ("gemma4_text", "Gemma4ForCausalLM"),
        ("mimo_v2_flash", "MiMoV2FlashForCausalLM"),
        ("persimmon", "PersimmonForCausalLM"),
        ("dbrx", "DbrxForCausalLM"),
        ("minicpm3", "MiniCPM3ForCausalLM"),
        ("granite_swa", "GraniteSWAForCausalLM"),
        ("granitemoe_swa", "GraniteMoeSWAForCausalLM"),
        ("cohere2_moe", "Cohere2MoeForCausalLM"),
        ("hy_v3", "HYV3ForCausalLM"),
        ("llama4_text", "Llama4ForCausalLM"),
        ("afmoe", "AfmoeForCausalLM"),
        ("laguna", "LagunaForCausalLM"),
        ("mellum", "MellumForCausalLM"),
        ("hunyuan_v1_dense", "HunYuanDenseV1ForCausalLM"),
        ("vaultgemma", "VaultGemmaForCausalLM"),
        ("flex_olmo", "FlexOlmoForCausalLM"),
        ("ernie4_5_moe", "Ernie4_5_MoeForCausalLM"),
        ("ministral", "MinistralForCausalLM"),
        ("ministral3", "Ministral3ForCausalLM"),
        ("seed_oss", "SeedOssForCausalLM"),
        ("helium", "HeliumForCausalLM"),
        ("exaone4", "Exaone4ForCausalLM"),
        ("stablelm", "StableLmForCausalLM"),
        ("cohere2", "Cohere2ForCausalLM"),
    ];
    let encoders = [
        ("bert", "Bert"),
        ("distilbert", "DistilBert"),
        ("roberta", "Roberta"),
        ("xlm-roberta", "XLMRoberta"),
        ("camembert", "Camembert"),
        ("ernie", "Ernie"),
        ("data2vec-text", "Data2VecText"),
        ("roberta-prelayernorm", "RobertaPreLayerNorm"),
        ("xlm-roberta-xl", "XLMRobertaXL"),
        ("megatron-bert", "MegatronBert"),
        ("mpnet", "MPNet"),
        ("electra", "Electra"),
        ("albert", "Albert"),
        ("modernbert", "ModernBert"),
        ("deberta", "Deberta"),
        ("deberta-v2", "DebertaV2"),
    ];
    let encoder_heads = [
        "Model",
        "ForMaskedLM",
        "ForSequenceClassification",
        "ForTokenClassification",
        "ForQuestionAnswering",
    ];
    let config = |t: &str, a: &str| format!(r#"{{"model_type": "{t}", "architectures": ["{a}"]}}"#);
    for (model_type, class) in causal {
        for (_, named) in causal {
            assert_eq!(arch(&config(model_type, named)).unwrap(), class, "{model_type} naming {named}");
        }
        // The base model and the sequence classifier of the model type (neither for Gemma 3's
        // types: their base models are `Gemma3Model` and `Gemma3TextModel`, their classifiers
        // `Gemma3ForSequenceClassification` and `Gemma3TextForSequenceClassification`; nor for
        // Qwen3.5's text model, whose base model is `Qwen3_5TextModel`, nor Llama 4's,
        // `Llama4TextModel`, nor Gemma 4's and 3n's, `Gemma4TextModel` and `Gemma3nTextModel`, nor Fuyu's, whose decoder is a
        // Persimmon model).
        // GPT-2's base model is `GPT2Model`.
        let family = class.strip_suffix("ForCausalLM").or(class.strip_suffix("LMHeadModel"));
        let base = family.map(|f| format!("{f}Model")).filter(|_| {
            !model_type.starts_with("gemma3")
                && !model_type.starts_with("qwen3_5")
                && !matches!(
                    model_type,
                    "llama4_text" | "gemma4_text" | "gemma4" | "gemma3n_text" | "gemma3n" | "fuyu"
                )
        });
        for (_, family) in encoders {
            for head in encoder_heads {
                let got = arch(&config(model_type, &format!("{family}{head}")));
                match (&base, head) {
                    (Some(base), "Model") => assert_eq!(&got.unwrap(), base, "{model_type}"),
                    // (transformers has no `GraniteForSequenceClassification`, nor Granite-MoE's,
                    // Cohere's, CodeGen's, OLMoE's, XGLM's or ERNIE 4.5's.)
                    (Some(base), "ForSequenceClassification")
                        if !matches!(
                            model_type,
                            "granite"
                                | "granitemoe"
                                | "cohere"
                                | "cohere2"
                                | "codegen"
                                | "olmoe"
                                | "xglm"
                                | "ernie4_5"
                                | "glm4_moe"
                                | "dots1"
                                | "apertus"
                                | "granitemoeshared"
                                | "granitemoehybrid"
                                | "bamba"
                                | "lfm2"
                                | "lfm2_moe"
                                | "nemotron_h"
                                | "qwen3_5_text"
                                | "qwen3_next"
                                | "qwen3_5_moe_text"
                                | "hunyuan_v1_moe"
                                | "falcon_h1"
                                | "exaone_moe"
                                | "exaone"
                                | "internlm3"
                                | "iquestcoder"
                                | "minimax_m2"
                                | "glm4_moe_lite"
                                | "nanochat"
                                | "sarvam_mla"
                                | "sarvam_moe"
                                | "cwm"
                                | "hyperclovax"
                                | "jais2"
                                | "solar_open"
                                | "youtu"
                                | "bitnet"
                                | "lfm3"
                                | "kolibri1"
                                | "flint"
                                | "gemma3n_text"
                                | "gemma4_text"
                                | "mimo_v2_flash"
                                | "dbrx"
                                | "granite_swa"
                                | "granitemoe_swa"
                                | "cohere2_moe"
                                | "hy_v3"
                                | "llama4_text"
                                | "afmoe"
                                | "laguna"
                                | "mellum"
                                | "vaultgemma"
                                | "flex_olmo"
                                | "ernie4_5_moe"
                        ) =>
                    {
                        let classifier =
                            format!("{}ForSequenceClassification", base.trim_end_matches("Model"));
                        assert_eq!(got.unwrap(), classifier, "{model_type}");
                    }
                    // The model types whose transformers module has a token classifier.
                    (Some(base), "ForTokenClassification")
                        if matches!(
                            model_type,
                            "apertus"
                                | "arcee"
                                | "biogpt"
                                | "bloom"
                                | "deepseek_v3"
                                | "mistral4"
                                | "axk1"
                                | "diffllama"
                                | "exaone4"
                                | "falcon"
                                | "gemma"
                                | "gemma2"
                                | "glm"
                                | "glm4"
                                | "gpt2"
                                | "gpt_bigcode"
                                | "gpt_neo"
                                | "gpt_neox"
                                | "gpt_oss"
                                | "helium"
                                | "llama"
                                | "ministral"
                                | "ministral3"
                                | "mistral"
                                | "mixtral"
                                | "mpt"
                                | "nemotron"
                                | "phi"
                                | "persimmon"
                                | "phi3"
                                | "qwen2"
                                | "qwen2_moe"
                                | "qwen3"
                                | "qwen3_moe"
                                | "seed_oss"
                                | "smollm3"
                                | "stablelm"
                                | "starcoder2"
                        ) =>
                    {
                        let classifier = format!("{}ForTokenClassification", base.trim_end_matches("Model"));
                        assert_eq!(got.unwrap(), classifier, "{model_type}");
                    }
                    _ => assert!(got.is_err(), "{model_type} naming {family}{head}"),
                }
            }
        }
    }
    for (model_type, own) in encoders {
        for (_, family) in encoders {
            for head in encoder_heads {
                let got = arch(&config(model_type, &format!("{family}{head}"))).unwrap();
                assert_eq!(got, format!("{own}{head}"), "{model_type} naming {family}{head}");
            }
        }
        for (_, named) in causal {
            assert!(arch(&config(model_type, named)).is_err(), "{model_type} naming {named}");
        }
    }
}

/// `gemma3` is the multimodal model and `gemma3_text` the text one, whichever causal LM head the
/// config names (`AutoModelForCausalLM` picks by model type).
#[test]
fn a_causal_lm_head_is_the_model_types_causal_lm() {
    let cg = "Gemma3ForConditionalGeneration";
    assert_eq!(arch(r#"{"model_type": "gemma3"}"#).unwrap(), cg);
    assert_eq!(arch(&format!(r#"{{"model_type": "gemma3", "architectures": ["{cg}"]}}"#)).unwrap(), cg);
    assert_eq!(arch(r#"{"model_type": "gemma3", "architectures": ["Gemma3ForCausalLM"]}"#).unwrap(), cg);
    let text = arch(&format!(r#"{{"model_type": "gemma3_text", "architectures": ["{cg}"]}}"#));
    assert_eq!(text.unwrap(), "Gemma3ForCausalLM");
    let llama = arch(r#"{"model_type": "llama", "architectures": ["LlamaForConditionalGeneration"]}"#);
    assert_eq!(llama.unwrap(), "LlamaForCausalLM");
    assert!(arch(r#"{"model_type": "gemma3", "architectures": ["Gemma3Model"]}"#).is_err());
    // (A known family's head maps to the model type's; an unknown family's stays as named.)
    let pali = arch(r#"{"model_type": "gemma3", "architectures": ["PaliGemmaForConditionalGeneration"]}"#);
    assert_eq!(pali.unwrap(), cg);
    let blip = arch(r#"{"model_type": "gemma3", "architectures": ["Blip2ForConditionalGeneration"]}"#);
    assert!(blip.unwrap_err().to_string().contains("Blip2ForConditionalGeneration"));
    assert!(arch(r#"{"model_type": "bert", "architectures": ["BertForConditionalGeneration"]}"#).is_err());
}
