//! Marian (OPUS-MT) folders, as transformers' `MarianTokenizer` reads them: two SentencePiece
//! models (`source.spm`, which cuts the texts; `target.spm`, which joins decoded pieces when the
//! vocabularies are separate) and `vocab.json` (`target_vocab.json` too with `separate_vocabs`).

use std::collections::HashMap;

use super::segmenter::{segmenter, PieceJoiner};
use super::{check_unknown, named_tokens, read_vocab, Class, Parts, VocabSpm};
use crate::error::{Error, Result};
use crate::tokenizer::folder::Folder;
use crate::tokenizer::sentencepiece::SpmModel;

/// The source SentencePiece model's file name.
const SOURCE_SPM: &str = "source.spm";
/// The target SentencePiece model's file name.
const TARGET_SPM: &str = "target.spm";

/// Whether the folder holds a `MarianTokenizer`: a `source.spm`, and the class named, or without
/// one, `config.json`'s model type `marian`.
pub(in crate::tokenizer) fn is_marian(folder: &Folder) -> Result<bool> {
    Ok(folder.dir.join(SOURCE_SPM).is_file() && folder.is_class(&["MarianTokenizer"], &["marian"])?)
}

/// The folder's Marian tokenizer, `None` when it holds none.
pub(super) fn load(folder: &Folder) -> Result<Option<VocabSpm>> {
    if !is_marian(folder)? {
        return Ok(None);
    }
    let separate = folder.flag("separate_vocabs")?.unwrap_or(false);
    let source_path = folder.dir.join(SOURCE_SPM);
    let source = SpmModel::read(&source_path)?;
    let target_path = folder.dir.join(TARGET_SPM);
    let vocab_path = folder.dir.join("vocab.json");
    let encoder = read_vocab(&vocab_path)?;
    let decoder: HashMap<u32, String> = if separate {
        let path = folder.dir.join("target_vocab.json");
        if !path.is_file() {
            return Err(Error::format(
                &path,
                "is missing (tokenizer_config.json's separate_vocabs decodes with it)",
            ));
        }
        read_vocab(&path)?.into_iter().map(|(p, i)| (i, p)).collect()
    } else {
        encoder.iter().map(|(p, &i)| (i, p.clone())).collect()
    };
    // Decoded pieces are joined by the target model with separate vocabularies, else the source one.
    let joiner = match separate {
        true if !target_path.is_file() => {
            return Err(Error::format(
                &target_path,
                "is missing (tokenizer_config.json's separate_vocabs decodes with it)",
            ))
        }
        true => PieceJoiner::new(&SpmModel::read(&target_path)?),
        false => PieceJoiner::new(&source),
    };
    let named =
        named_tokens(folder, &[("eos_token", "</s>"), ("unk_token", "<unk>"), ("pad_token", "<pad>")])?;
    let unk = &named[1].1;
    check_unknown(&encoder, &vocab_path, unk)?;
    let parts = Parts {
        class: Class::Marian,
        source: segmenter(&source, &source_path, unk)?,
        encoder,
        decoder,
        languages: Vec::new(),
        joiner,
        named,
    };
    VocabSpm::new(folder, parts).map(Some)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::Value;

    use crate::tokenizer::golden_check::{check_against, golden_folder, texts};
    use crate::tokenizer::vocab_spm::check_decoding;
    use crate::tokenizer::HfTokenizer;

    fn golden() -> Value {
        crate::tokenizer::golden_check::golden("marian_tokenizer_expected.json")
    }

    fn folder(golden: &Value, name: &str) -> std::path::PathBuf {
        let files: Vec<&str> =
            golden["files"][name].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers/marian");
        golden_folder(golden, &source, name, &files)
    }

    /// Marian folders (two small SentencePiece Unigrams, English and German, cut nmt_nfkc
    /// charsmaps; both models' pieces in one `vocab.json` in an order of its own; the target's alone
    /// in `target_vocab.json`) found by `config.json`'s model type or by class, with shared or
    /// separate vocabularies, with added tokens that strip spaces or keep to whole words: texts
    /// with language codes (known, unknown, mid-text, after a special token), pieces only the
    /// target model has, unknown runs, special tokens and odd spaces, single and padded, and ids
    /// decoded with and without special tokens, as transformers 5.24 gives them
    /// (`make_marian_tokenizer_golden.py`).
    #[test]
    fn marian_folders_tokenize_as_transformers_5() {
        let golden = golden();
        let texts = texts(&golden);
        for name in golden["configs"].as_object().unwrap().keys() {
            let dir = folder(&golden, name);
            assert!(HfTokenizer::in_folder(&dir).unwrap(), "{name}");
            let tok = HfTokenizer::load(&dir, None).unwrap();
            check_against(&tok, &texts, &golden["ids"][name], name);
            check_decoding(&tok, &texts, &golden["ids"][name], name);
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// A maximum length keeps the first ids and `</s>`; ids outside both the vocabulary and the
    /// model, a missing vocabulary or an unknown token it lacks are errors naming the file.
    #[test]
    fn truncation_and_bad_folders() {
        let golden = golden();
        let dir = folder(&golden, "marian");
        let full = HfTokenizer::load(&dir, None).unwrap().encode("Hello world again", true).unwrap();
        let cut = HfTokenizer::load(&dir, Some(4)).unwrap().encode("Hello world again", true).unwrap();
        assert_eq!(cut, [&full[..3], &[0]].concat());
        assert!(HfTokenizer::load(&dir, Some(0)).is_err());
        let tok = HfTokenizer::load(&dir, None).unwrap();
        assert!(tok.decode(&[100_000], false).unwrap_err().to_string().contains("100000"));
        std::fs::write(dir.join("vocab.json"), r#"{"</s>": 0, "a": 1}"#).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("vocab.json") && err.contains("<unk>"), "{err}");
        std::fs::write(dir.join("vocab.json"), r#"{"</s>": 0, "<unk>": -1}"#).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("vocab.json") && err.contains("\"<unk>\""), "{err}");
        std::fs::remove_file(dir.join("vocab.json")).unwrap();
        let err = HfTokenizer::load(&dir, None).unwrap_err().to_string();
        assert!(err.contains("vocab.json"), "{err}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
