//! # oxtorch-hf-import
//!
//! Hugging Face models (config.json, safetensors or pytorch_model.bin) loaded and run with oxtorch,
//! without Python: a library and the `hf-import` command-line tool.
//!
//! ```no_run
//! use oxtorch_hf_import::{AutoModel, Config, Weights, resolve_model};
//! use oxtorch_tensor::{DType, Tensor};
//! # fn main() -> oxtorch_hf_import::Result<()> {
//! let dir = resolve_model("org/tiny-llama")?;          // a folder, or an id in the local HF cache
//! let cfg = Config::load(&dir)?;
//! let weights = Weights::load(&dir, Some(DType::F32))?;  // floats read as f32
//! let model = AutoModel::load(&cfg, &weights)?;
//! let lm = model.causal_lm().expect("a decoder");
//! let ids = Tensor::from_vec(vec![1i64, 17, 42], [1, 3])?;
//! let out = lm.forward(&ids, None, None, None, false)?;
//! println!("{:?}", out.logits.dims());
//! # Ok(()) }
//! ```

pub mod audio;
pub mod chat;
pub mod config;
pub mod cross_encoder;
pub mod error;
pub mod generate;
pub mod hub;
pub mod layers;
pub mod models;
pub mod sentence;
pub mod serve;
pub mod tokenizer;
pub mod weights;

pub use chat::{ChatArgs, ChatTemplate, Message};
pub use config::{parse_dtype, Config};
pub use cross_encoder::{CrossEncoder, ScoreActivation};
pub use error::{Error, Result};
pub use generate::{
    generate, generate_recurrent, generate_seq2seq, generate_with_images, generate_with_tokenizer,
    CacheImplementation, EncoderDecoder, GenerationConfig, PromptImages, PromptMedia, Recurrent,
};
pub use hub::resolve_model;
pub use models::{
    AttentionBlocks, AutoModel, Bart, BertForMaskedLM, BertModel, CausalLm, ClassifierEncoder, Clip,
    DecoderForSequenceClassification, DecoderForTokenClassification, DistilBertForMaskedLM, DistilBertModel,
    GPT2LMHeadModel, GPTNeoXForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM,
    Gemma3ForConditionalGeneration, GemmaForCausalLM, ImageInputs, LlamaForCausalLM, Mamba, MambaState,
    MistralForCausalLM, MixtralForCausalLM, Phi3ForCausalLM, PhiForCausalLM, Qwen2ForCausalLM,
    Qwen2MoeForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, ResNet, RobertaForMaskedLM, RobertaModel,
    SequenceClassifier, Starcoder2ForCausalLM, TokenClassifier, TokenTask, ViTForImageClassification,
    ViTModel, Wav2Vec2, T5,
};
pub use sentence::{PoolingMode, Prompts, SentenceTransformer};
pub use tokenizer::HfTokenizer;
pub use weights::Weights;

/// The README's examples, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
