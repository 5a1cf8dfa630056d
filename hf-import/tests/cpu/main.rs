//! hf-import's CPU tests, one binary (each test binary links the whole stack, so fewer binaries
//! build faster and take a fraction of the disk): every family against transformers, generation,
//! sentence embeddings, the embedding service, zero-copy loading and the CLI. The XLA tests are
//! separate binaries (`xla.rs`, `xla_generate.rs`): they read process-wide counters.

#[path = "../common/mod.rs"]
mod common;

mod chat_template_fuzz;
mod cli;
mod cross_encoder;
mod decoder_families;
mod decoder_families_2026;
mod decoder_fixtures;
mod families;
mod generate;
mod images;
mod multiple_choice;
mod packed_decoder;
mod packed_encoder;
mod pretraining_heads;
mod pytorch_checkpoints;
mod robustness;
mod sentence;
mod seq2seq;
mod serve;
mod speech;
mod vision;
mod zero_copy;
