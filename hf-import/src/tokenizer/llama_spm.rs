//! A Llama tokenizer folder with a SentencePiece `tokenizer.model` and no `tokenizer.json` (older
//! Llama 2 fine-tunes, OpenLLaMA, Vicuna), built as transformers 5 builds it: a BPE over the
//! model's pieces in id order, with merges generated from them (`generate_merges`: each piece split
//! into two pieces of the vocabulary, the splits ranked by the piece's id, then by the left part's
//! length), fused unknowns and byte fallback; control pieces as special added tokens, user-defined
//! ones as plain added tokens; then `LlamaTokenizer`'s pipeline ([`super::llama::rebuild_pipeline`])
//! and the template `update_post_processor` writes: `bos_token` first with `add_bos_token`,
//! `eos_token` last with `add_eos_token` (both false unless `tokenizer_config.json` says).

use std::collections::HashMap;
use std::path::Path;

use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::{AddedToken, Tokenizer};

use super::folder::Folder;
use super::sentencepiece::{PieceKind, SpmModel, SpmModelType};
use crate::error::{Error, Result};

/// The SentencePiece model's file name in a Llama tokenizer folder.
pub(super) const SPM_FILE: &str = "tokenizer.model";

/// The tokenizer classes built as `LlamaTokenizer`.
const CLASSES: &[&str] = &["LlamaTokenizer", "LlamaTokenizerFast"];

/// Whether the folder's tokenizer is a `LlamaTokenizer`: `tokenizer_config.json` names the class,
/// or names none and `config.json`'s model type is `llama`.
pub(super) fn is_llama(folder: &Folder) -> Result<bool> {
    folder.is_class(CLASSES, &["llama"])
}

/// transformers' `generate_merges` over `pieces` (in id order): for each piece, each split into a
/// left and a right piece that are both in the vocabulary, the pieces in id order and each piece's
/// splits by the left part's length.
fn generate_merges(pieces: &[String], vocab: &HashMap<String, u32>) -> Vec<(String, String)> {
    let mut merges = Vec::new();
    for piece in pieces {
        let bounds: Vec<usize> = piece.char_indices().map(|(i, _)| i).skip(1).collect();
        for at in bounds {
            let (left, right) = piece.split_at(at);
            if vocab.contains_key(left) && vocab.contains_key(right) {
                merges.push((left.to_string(), right.to_string()));
            }
        }
    }
    merges
}

/// A BPE over a SentencePiece BPE model's pieces in id order, with merges generated from them,
/// unknown runs fused (into `unk_token`, when given), with or without byte fallback.
pub(super) fn bpe_model(
    spm: &SpmModel,
    path: &Path,
    byte_fallback: bool,
    unk_token: Option<&str>,
) -> Result<BPE> {
    let pieces: Vec<String> = spm.pieces.iter().map(|p| p.piece.clone()).collect();
    // (As Python's dict of a repeated piece: the last id wins.)
    let vocab: HashMap<String, u32> = pieces.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
    // A piece that is not a key in its own id's place would be merged into a later id's.
    let order: Vec<String> =
        pieces.iter().enumerate().filter(|(i, p)| vocab[*p] == *i as u32).map(|(_, p)| p.clone()).collect();
    let merges = generate_merges(&order, &vocab);
    let mut builder = BPE::builder()
        .vocab_and_merges(vocab.into_iter().collect::<Vocab>(), merges)
        .fuse_unk(true)
        .byte_fallback(byte_fallback);
    if let Some(unk) = unk_token {
        builder = builder.unk_token(unk.to_string());
    }
    builder.build().map_err(|e| Error::format(path, e.to_string()))
}

/// The tokenizer of a Llama folder without `tokenizer.json`, from its `tokenizer.model`; `None`
/// when the folder has no such model or its tokenizer is of another class.
pub(super) fn from_spm(folder: &Folder) -> Result<Option<Tokenizer>> {
    let path = folder.dir.join(SPM_FILE);
    if !path.is_file() || !is_llama(folder)? {
        return Ok(None);
    }
    let spm = SpmModel::read(&path)?;
    if spm.model_type != SpmModelType::Bpe {
        return Err(Error::format(&path, "LlamaTokenizer needs a BPE SentencePiece model"));
    }
    let mut tokenizer = Tokenizer::new(bpe_model(&spm, &path, true, None)?);
    for piece in spm.pieces.iter().filter(|p| matches!(p.kind, PieceKind::Control | PieceKind::UserDefined)) {
        let token = AddedToken::from(piece.piece.clone(), piece.kind == PieceKind::Control).normalized(false);
        if token.special {
            tokenizer.add_special_tokens(&[token]);
        } else {
            tokenizer.add_tokens(&[token]);
        }
    }
    let named = |key: &str, default: &str| -> Result<String> {
        Ok(folder.token(key)?.unwrap_or(default).to_string())
    };
    let (bos, eos) = (named("bos_token", "<s>")?, named("eos_token", "</s>")?);
    let mut specials = vec![
        ("bos_token", bos.clone()),
        ("eos_token", eos.clone()),
        ("unk_token", named("unk_token", "<unk>")?),
    ];
    specials.extend(folder.token("pad_token")?.map(|p| ("pad_token", p.to_string())));
    // The tokens `tokenizer_config.json` (`added_tokens_decoder`) or `added_tokens.json` declare,
    // at their ids, then the special tokens not yet held.
    super::deberta_v2::add_declared_tokens(folder, &mut tokenizer, &specials)?;
    super::llama::rebuild_pipeline(folder, "", &mut tokenizer)?;
    let template = bos_eos_template(folder, &tokenizer, &bos, &eos)?;
    tokenizer.with_post_processor(Some(template));
    Ok(Some(tokenizer))
}

/// The template transformers' `update_post_processor` writes: `bos` first with `add_bos_token`,
/// `eos` last with `add_eos_token` (both false unless `tokenizer_config.json` says), each text of a
/// pair framed alike.
pub(super) fn bos_eos_template(
    folder: &Folder,
    tokenizer: &Tokenizer,
    bos: &str,
    eos: &str,
) -> Result<TemplateProcessing> {
    let (add_bos, add_eos) =
        (folder.flag("add_bos_token")?.unwrap_or(false), folder.flag("add_eos_token")?.unwrap_or(false));
    let id = |t: &str| {
        tokenizer.token_to_id(t).ok_or_else(|| {
            Error::format(&folder.config_path, format!("the special token {t:?} is not in the vocabulary"))
        })
    };
    let mut single = String::new();
    let mut special_ids = Vec::new();
    if add_bos {
        single.push_str(&format!("{bos}:0 "));
        special_ids.push((bos.to_string(), id(bos)?));
    }
    single.push_str("$A:0");
    if add_eos {
        single.push_str(&format!(" {eos}:0"));
        special_ids.push((eos.to_string(), id(eos)?));
    }
    let pair = format!(
        "{single}{} $B:1{}",
        if add_bos { format!(" {bos}:1") } else { String::new() },
        if add_eos { format!(" {eos}:1") } else { String::new() }
    );
    let bad = |e: String| Error::format(&folder.config_path, e);
    TemplateProcessing::builder()
        .try_single(single)
        .and_then(|b| b.try_pair(pair))
        .map_err(bad)?
        .special_tokens(special_ids)
        .build()
        .map_err(|e| bad(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::tokenizer::golden_check::{check_against, golden, golden_folder, texts};
    use crate::tokenizer::HfTokenizer;

    /// A small SentencePiece BPE `tokenizer.model` (byte fallback, a user-defined symbol) alone in
    /// Llama folders under several `tokenizer_config.json`s (legacy or not, with and without a
    /// prefix space, BOS and EOS added or not, added tokens declared), and a small Unigram
    /// `spiece.model` (a cut nmt_nfkc charsmap) alone in T5 folders (100, 3 or 5 sentinels; by
    /// class or by mT5's model type), Pegasus folders (masks and fillers by default, as the hub
    /// names them, an offset of 6 by model type), and XLM-R, CamemBERT and ALBERT folders (fairseq's
    /// and ALBERT's piece layouts; by class or model type, cased or not): single texts, a padded batch and decoded ids as
    /// transformers 5.24 gives them (`make_spm_tokenizer_golden.py`).
    #[test]
    fn sentencepiece_models_alone_tokenize_as_transformers_5() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let golden = golden("spm_tokenizer_expected.json");
        let texts = texts(&golden);
        for name in golden["configs"].as_object().unwrap().keys() {
            let dir = golden_folder(&golden, &fixtures, name, &[]);
            let (from, to) = golden["files"][name].as_str().unwrap().split_once(':').unwrap();
            std::fs::copy(fixtures.join(from), dir.join(to)).unwrap();
            assert!(HfTokenizer::in_folder(&dir).unwrap(), "{name}");
            let tok = HfTokenizer::load(&dir, None).unwrap();
            check_against(&tok, &texts, &golden["ids"][name], name);
            std::fs::remove_dir_all(&dir).ok();
        }
    }
}
