//! The sizes that transformers' config classes assume when `config.json` leaves a key out.
//!
//! `from_pretrained` builds a config class (`Gemma2Config(**json)`), so a trimmed config.json that
//! omits, say, `num_attention_heads` still loads there with the class's default. These are those
//! defaults (transformers 5.24), per `model_type`, filled in before any model reads the config; a
//! key that is present (even null) is left as it is.

use serde_json::{Map, Value};

/// `model_type` → (key, the config class's default).
const CLASS_DEFAULTS: &[(&str, &[(&str, u64)])] = &[
    (
        "llama",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "bamba",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 128000),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 262144),
        ],
    ),
    (
        "jamba",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 65536),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 262144),
        ],
    ),
    (
        "nemotron_h",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 131072),
            ("num_attention_heads", 32),
            ("intermediate_size", 21504),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "qwen3_5_text",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 248320),
            ("num_attention_heads", 16),
            ("intermediate_size", 12288),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "qwen3_next",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 151936),
            ("num_attention_heads", 16),
            ("intermediate_size", 5632),
            ("num_hidden_layers", 48),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "qwen3_5_moe_text",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 248320),
            ("num_attention_heads", 16),
            ("num_hidden_layers", 40),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "hunyuan_v1_moe",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 290943),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "lfm2",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 65536),
            ("num_attention_heads", 32),
            ("intermediate_size", 12288),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 128000),
        ],
    ),
    (
        "granitemoehybrid",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "mistral",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "qwen2",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 151936),
            ("num_attention_heads", 32),
            ("intermediate_size", 22016),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "qwen3",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 151936),
            ("num_attention_heads", 32),
            ("intermediate_size", 22016),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "gemma",
        &[
            ("hidden_size", 3072),
            ("vocab_size", 256000),
            ("num_attention_heads", 16),
            ("intermediate_size", 24576),
            ("num_hidden_layers", 28),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "gemma2",
        &[
            ("hidden_size", 2304),
            ("vocab_size", 256000),
            ("num_attention_heads", 8),
            ("intermediate_size", 9216),
            ("num_hidden_layers", 26),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "gemma3_text",
        &[
            ("hidden_size", 2304),
            ("vocab_size", 262208),
            ("num_attention_heads", 8),
            ("intermediate_size", 9216),
            ("num_hidden_layers", 26),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "mixtral",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "starcoder2",
        &[
            ("hidden_size", 3072),
            ("vocab_size", 49152),
            ("num_attention_heads", 24),
            ("intermediate_size", 12288),
            ("num_hidden_layers", 30),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "qwen2_moe",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 151936),
            ("num_attention_heads", 16),
            ("intermediate_size", 5632),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "qwen3_moe",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 151936),
            ("num_attention_heads", 32),
            ("intermediate_size", 6144),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "gpt_neox",
        &[
            ("hidden_size", 6144),
            ("vocab_size", 50432),
            ("num_attention_heads", 64),
            ("intermediate_size", 24576),
            ("num_hidden_layers", 44),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "phi",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 51200),
            ("num_attention_heads", 32),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "phi3",
        &[
            ("hidden_size", 3072),
            ("vocab_size", 32064),
            ("num_attention_heads", 32),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "exaone",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 102400),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "internlm3",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 128512),
            ("num_attention_heads", 32),
            ("intermediate_size", 10240),
            ("num_hidden_layers", 48),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "cwm",
        &[
            ("hidden_size", 6144),
            ("vocab_size", 128256),
            ("num_attention_heads", 48),
            ("intermediate_size", 21504),
            ("num_hidden_layers", 64),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "llama4_text",
        &[
            ("hidden_size", 5120),
            ("vocab_size", 202048),
            ("num_attention_heads", 40),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 48),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "hy_v3",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 120832),
            ("num_attention_heads", 64),
            ("intermediate_size", 13312),
            ("num_hidden_layers", 80),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "cohere2_moe",
        &[
            ("hidden_size", 8192),
            ("vocab_size", 256000),
            ("num_attention_heads", 64),
            ("intermediate_size", 22528),
            ("num_hidden_layers", 40),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "granite_swa",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 100352),
            ("num_attention_heads", 20),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "granitemoe_swa",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "minicpm3",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 73448),
            ("num_attention_heads", 40),
            ("intermediate_size", 6400),
            ("num_hidden_layers", 62),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "persimmon",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 262144),
            ("num_attention_heads", 64),
            ("intermediate_size", 16384),
            ("num_hidden_layers", 36),
            ("max_position_embeddings", 16384),
        ],
    ),
    (
        "axk1",
        &[
            ("hidden_size", 7168),
            ("vocab_size", 163840),
            ("num_attention_heads", 64),
            ("intermediate_size", 18432),
            ("num_hidden_layers", 61),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "bitnet",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 128256),
            ("num_attention_heads", 20),
            ("num_key_value_heads", 5),
            ("intermediate_size", 6912),
            ("num_hidden_layers", 30),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "modernbert-decoder",
        &[
            ("hidden_size", 768),
            ("vocab_size", 50368),
            ("num_attention_heads", 12),
            ("intermediate_size", 1152),
            ("num_hidden_layers", 22),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "diffllama",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 16),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "lfm3",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 128000),
            ("num_attention_heads", 16),
            ("intermediate_size", 7680),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 128000),
        ],
    ),
    (
        "kolibri1",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 128000),
            ("num_attention_heads", 48),
            ("num_hidden_layers", 50),
            ("max_position_embeddings", 262144),
        ],
    ),
    (
        "flint",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 150144),
            ("num_attention_heads", 32),
            ("intermediate_size", 6144),
            ("num_hidden_layers", 49),
            ("max_position_embeddings", 262144),
        ],
    ),
    (
        "mistral4",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 131072),
            ("num_attention_heads", 32),
            ("intermediate_size", 12288),
            ("num_hidden_layers", 36),
            ("max_position_embeddings", 1048576),
        ],
    ),
    (
        "gemma3n_text",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 262400),
            ("num_attention_heads", 8),
            ("intermediate_size", 16384),
            ("num_hidden_layers", 35),
            ("max_position_embeddings", 32768),
        ],
    ),
    (
        "gemma4_text",
        &[
            ("hidden_size", 2304),
            ("vocab_size", 262144),
            ("num_attention_heads", 8),
            ("intermediate_size", 9216),
            ("num_hidden_layers", 30),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "mimo_v2_flash",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 152576),
            ("num_attention_heads", 64),
            ("intermediate_size", 16384),
            ("num_hidden_layers", 48),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "mellum",
        &[
            ("hidden_size", 2304),
            ("vocab_size", 98304),
            ("num_attention_heads", 32),
            ("intermediate_size", 7168),
            ("num_hidden_layers", 28),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "laguna",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 100352),
            ("num_attention_heads", 48),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 40),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "afmoe",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 200192),
            ("num_attention_heads", 16),
            ("intermediate_size", 6144),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 16384),
        ],
    ),
    (
        "hyperclovax",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "jais2",
        &[
            ("hidden_size", 3328),
            ("vocab_size", 150272),
            ("num_attention_heads", 26),
            ("intermediate_size", 26624),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 8192),
        ],
    ),
    // (`SolarOpenConfig` has no `intermediate_size`, every layer being the mixture; the decoder
    // reads one.)
    (
        "solar_open",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 196608),
            ("num_attention_heads", 64),
            ("intermediate_size", 1280),
            ("num_hidden_layers", 48),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "youtu",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 128256),
            ("num_attention_heads", 16),
            ("intermediate_size", 6144),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 131072),
            ("num_key_value_heads", 16),
        ],
    ),
    (
        "ministral3",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 131072),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 34),
            ("max_position_embeddings", 262144),
        ],
    ),
    (
        "sarvam_mla",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 262144),
            ("num_attention_heads", 64),
            ("intermediate_size", 16384),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "sarvam_moe",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 262144),
            ("num_attention_heads", 64),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 19),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "nanochat",
        &[
            ("hidden_size", 768),
            ("vocab_size", 50304),
            ("num_attention_heads", 6),
            ("intermediate_size", 8192),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "glm4_moe_lite",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 154880),
            ("num_attention_heads", 20),
            ("num_key_value_heads", 20),
            ("intermediate_size", 10240),
            ("num_hidden_layers", 47),
            ("max_position_embeddings", 202752),
            ("q_lora_rank", 768),
            ("qk_nope_head_dim", 192),
            ("v_head_dim", 256),
        ],
    ),
    (
        "lfm2_moe",
        &[
            ("hidden_size", 2048),
            ("vocab_size", 65536),
            ("num_attention_heads", 32),
            ("intermediate_size", 7168),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 128000),
        ],
    ),
    (
        "minimax_m2",
        &[
            ("hidden_size", 3072),
            ("vocab_size", 200064),
            ("num_attention_heads", 48),
            ("intermediate_size", 1536),
            ("num_hidden_layers", 62),
            ("max_position_embeddings", 196608),
        ],
    ),
    (
        "openai-gpt",
        &[("n_embd", 768), ("vocab_size", 40478), ("n_head", 12), ("n_layer", 12), ("n_positions", 512)],
    ),
    (
        "iquestcoder",
        &[
            ("hidden_size", 5120),
            ("vocab_size", 76800),
            ("num_attention_heads", 40),
            ("intermediate_size", 27648),
            ("num_hidden_layers", 80),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "exaone_moe",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 102400),
            ("num_attention_heads", 32),
            ("intermediate_size", 16384),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "falcon_h1",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 128000),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "phimoe",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32064),
            ("num_attention_heads", 32),
            ("intermediate_size", 6400),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "bert",
        &[
            ("hidden_size", 768),
            ("vocab_size", 30522),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "roberta",
        &[
            ("hidden_size", 768),
            ("vocab_size", 50265),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "roberta-prelayernorm",
        &[
            ("hidden_size", 768),
            ("vocab_size", 50265),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "xlm-roberta-xl",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 250880),
            ("num_attention_heads", 32),
            ("intermediate_size", 10240),
            ("num_hidden_layers", 36),
            ("max_position_embeddings", 514),
            ("type_vocab_size", 1),
        ],
    ),
    (
        "megatron-bert",
        &[
            ("hidden_size", 1024),
            ("vocab_size", 29056),
            ("num_attention_heads", 16),
            ("intermediate_size", 4096),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "eurobert",
        &[
            ("hidden_size", 768),
            ("vocab_size", 128256),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 8192),
        ],
    ),
    (
        "data2vec-text",
        &[
            ("hidden_size", 768),
            ("vocab_size", 30522),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "electra",
        &[
            ("hidden_size", 256),
            ("embedding_size", 128),
            ("vocab_size", 30522),
            ("num_attention_heads", 4),
            ("intermediate_size", 1024),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "ernie",
        &[
            ("hidden_size", 768),
            ("vocab_size", 30522),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "camembert",
        &[
            ("hidden_size", 768),
            ("vocab_size", 30522),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "xlm-roberta",
        &[
            ("hidden_size", 768),
            ("vocab_size", 30522),
            ("num_attention_heads", 12),
            ("intermediate_size", 3072),
            ("num_hidden_layers", 12),
            ("max_position_embeddings", 512),
            ("type_vocab_size", 2),
        ],
    ),
    (
        "distilbert",
        &[
            ("dim", 768),
            ("vocab_size", 30522),
            ("n_heads", 12),
            ("hidden_dim", 3072),
            ("n_layers", 6),
            ("max_position_embeddings", 512),
        ],
    ),
    (
        "deepseek_v2",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 102400),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "deepseek_v3",
        &[
            ("hidden_size", 7168),
            ("vocab_size", 129280),
            ("num_attention_heads", 128),
            ("intermediate_size", 18432),
            ("num_hidden_layers", 61),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "gpt_oss",
        &[
            ("hidden_size", 2880),
            ("vocab_size", 201088),
            ("num_attention_heads", 64),
            ("intermediate_size", 2880),
            ("num_hidden_layers", 36),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "glm4_moe",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 151552),
            ("num_attention_heads", 96),
            ("intermediate_size", 10944),
            ("num_hidden_layers", 46),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "dots1",
        &[
            ("hidden_size", 4608),
            ("vocab_size", 152064),
            ("num_attention_heads", 32),
            ("intermediate_size", 10944),
            ("num_hidden_layers", 62),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "ministral",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 32000),
            ("num_attention_heads", 32),
            ("intermediate_size", 14336),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "seed_oss",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 155136),
            ("num_attention_heads", 80),
            ("intermediate_size", 27648),
            ("num_hidden_layers", 64),
            ("max_position_embeddings", 524288),
        ],
    ),
    (
        "helium",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 48000),
            ("num_attention_heads", 20),
            ("intermediate_size", 7040),
            ("num_hidden_layers", 24),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "exaone4",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 102400),
            ("num_attention_heads", 32),
            ("intermediate_size", 16384),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 2048),
        ],
    ),
    (
        "ernie4_5_moe",
        &[
            ("hidden_size", 2560),
            ("vocab_size", 103424),
            ("num_attention_heads", 20),
            ("intermediate_size", 12288),
            ("num_hidden_layers", 28),
            ("max_position_embeddings", 131072),
        ],
    ),
    (
        "flex_olmo",
        &[
            ("hidden_size", 4096),
            ("vocab_size", 100352),
            ("num_attention_heads", 32),
            ("intermediate_size", 11008),
            ("num_hidden_layers", 32),
            ("max_position_embeddings", 4096),
        ],
    ),
    (
        "vaultgemma",
        &[
            ("hidden_size", 2304),
            ("vocab_size", 256000),
            ("num_attention_heads", 8),
            ("intermediate_size", 9216),
            ("num_hidden_layers", 26),
            ("max_position_embeddings", 8192),
        ],
    ),
];

/// Inserts the config class's default for each size key `json` lacks (by its `model_type`; an
/// unknown or missing type changes nothing).
/// The config keys a class names its own way (its `attribute_map`), as `(own, common)`.
const ALIASES: &[(&str, &[(&str, &str)])] = &[
    ("mimo_v2_flash", &[("num_local_experts", "n_routed_experts")]),
    ("hy_v3", &[("num_local_experts", "num_experts")]),
    (
        "exaone",
        &[
            ("num_layers", "num_hidden_layers"),
            ("layer_norm_epsilon", "rms_norm_eps"),
            ("activation_function", "hidden_act"),
        ],
    ),
    ("internlm3", &[("qkv_bias", "attention_bias"), ("bias", "mlp_bias")]),
    (
        "sarvam_mla",
        &[
            ("num_local_experts", "n_routed_experts"),
            ("num_experts", "n_routed_experts"),
            ("num_shared_experts", "n_shared_experts"),
        ],
    ),
    (
        "sarvam_moe",
        &[
            ("num_local_experts", "n_routed_experts"),
            ("num_experts", "n_routed_experts"),
            ("num_shared_experts", "n_shared_experts"),
            ("use_qkv_bias", "attention_bias"),
        ],
    ),
];

pub(super) fn fill(json: &mut Map<String, Value>) {
    let Some(model_type) = json.get("model_type").and_then(Value::as_str) else { return };
    // The config class's `attribute_map`: its own key read as the common one, which wins when both
    // are set.
    if let Some((_, aliases)) = ALIASES.iter().find(|(t, _)| *t == model_type) {
        for &(own, common) in *aliases {
            if let Some(v) = json.get(own).cloned() {
                json.entry(common).or_insert(v);
            }
        }
    }
    let Some(model_type) = json.get("model_type").and_then(Value::as_str) else { return };
    let Some((_, defaults)) = CLASS_DEFAULTS.iter().find(|(t, _)| *t == model_type) else { return };
    for &(key, value) in *defaults {
        json.entry(key).or_insert(Value::from(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_sizes_take_the_class_defaults_and_present_ones_stay() {
        let mut json: Map<String, Value> =
            serde_json::from_str(r#"{"model_type": "gemma2", "hidden_size": 32, "head_dim": null}"#).unwrap();
        fill(&mut json);
        assert_eq!(json["hidden_size"], 32);
        assert_eq!(json["num_attention_heads"], 8);
        assert_eq!(json["intermediate_size"], 9216);
        assert!(json["head_dim"].is_null());
        let mut other: Map<String, Value> = serde_json::from_str(r#"{"model_type": "t5"}"#).unwrap();
        fill(&mut other);
        assert_eq!(other.len(), 1);
    }
}
