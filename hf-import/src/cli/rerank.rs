//! `hf-import rerank MODEL --query TEXT PASSAGE...`: a cross-encoder's scores of each passage
//! against the query, as JSON on stdout.

use oxtorch_hf_import::{resolve_model, CrossEncoder, Error, Result};
use oxtorch_tensor::DType;

/// Scores `(query, passage)` for each passage with the cross-encoder `model` and prints one JSON
/// object: `"scores"` (one score per passage, or one list per passage for several labels) and,
/// for one label, `"ranking"` (passage indices, best first).
pub fn run(model: &str, query: &str, passages: &[String], dtype: Option<DType>) -> Result<()> {
    if passages.is_empty() {
        return Err(Error::Input("rerank: give at least one passage".into()));
    }
    let ce = CrossEncoder::load(&resolve_model(model)?, dtype)?;
    let pairs: Vec<(&str, &str)> = passages.iter().map(|p| (query, p.as_str())).collect();
    let scores = ce.predict(&pairs)?;
    let json = if ce.num_labels() == 1 {
        let scores = scores.to_vec::<f32>()?;
        let mut ranking: Vec<usize> = (0..scores.len()).collect();
        ranking.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        serde_json::json!({ "scores": scores, "ranking": ranking })
    } else {
        serde_json::json!({ "scores": scores.to_vec2::<f32>()? })
    };
    outln!("{json}");
    Ok(())
}
