//! # oxtorch-hf-import
//!
//! Hugging Face models (config.json, safetensors or pytorch_model.bin, tokenizer.json) loaded and run
//! with oxtorch, without Python: a library and the `hf-import` command-line tool. The families and
//! the CLI arrive with the hf-import issue; this crate fixes where they live.
