//! A sentence-embedding HTTP service: the model is loaded once and shared by worker threads.
//!
//! ```text
//! cargo run --release -p oxtorch-hf-import --example embedding_service -- MODEL [ADDR] [WORKERS]
//! curl -s localhost:8080/embed -d '{"sentences": ["A man is eating food."]}'
//! ```
//!
//! MODEL is a sentence-transformers folder or a Hugging Face id in the local cache; ADDR defaults to
//! `127.0.0.1:8080`, WORKERS to the number of CPUs. The protocol is documented in
//! `oxtorch_hf_import::serve`.

use std::sync::Arc;

use oxtorch_hf_import::{resolve_model, serve::EmbeddingServer, SentenceTransformer};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let model = args.next().ok_or("usage: embedding_service MODEL [ADDR] [WORKERS]")?;
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8080".to_string());
    let workers = match args.next() {
        Some(n) => n.parse().map_err(|_| format!("WORKERS must be a number, got {n:?}"))?,
        None => std::thread::available_parallelism().map_or(2, usize::from),
    };
    let model = Arc::new(SentenceTransformer::load(&resolve_model(&model)?, None)?);
    let server = EmbeddingServer::bind(addr.as_str(), model, workers)?;
    eprintln!("embedding service on http://{} ({workers} workers): POST /embed", server.local_addr());
    server.wait();
    Ok(())
}
