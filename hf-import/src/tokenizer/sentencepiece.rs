//! The parts of a SentencePiece model file (`spm.model`, `spiece.model`: a `ModelProto` protocol
//! buffer) a tokenizer is built from: each piece with its score and kind, the trainer's model
//! type, unknown-piece id and byte fallback, and the normalizer's charsmap and space handling.
//! Read by hand (a few fields of a simple wire format); malformed files are errors, never panics.

use std::path::Path;

use crate::error::{Error, Result};

/// What a piece is (`SentencePiece.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PieceKind {
    /// an ordinary piece
    Normal,
    /// the unknown piece
    Unknown,
    /// a control symbol (`<s>`, `[CLS]`): never produced from text by the model
    Control,
    /// a user-defined symbol: always one piece
    UserDefined,
    /// unused
    Unused,
    /// a byte-fallback piece (`<0x41>`)
    Byte,
}

/// One vocabulary entry.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Piece {
    /// the piece's text (`▁` for a space)
    pub piece: String,
    /// its log-probability (Unigram) or merge rank (BPE)
    pub score: f32,
    /// what it is
    pub kind: PieceKind,
}

/// `TrainerSpec.ModelType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SpmModelType {
    /// `UNIGRAM` (the default)
    Unigram,
    /// `BPE`
    Bpe,
    /// `WORD` or `CHAR`
    Other,
}

/// A SentencePiece model's vocabulary and trainer settings.
#[derive(Debug, Clone)]
pub(super) struct SpmModel {
    /// the pieces, by id
    pub pieces: Vec<Piece>,
    /// the segmentation algorithm
    pub model_type: SpmModelType,
    /// `unk_id` (default 0)
    pub unk_id: i64,
    /// `byte_fallback`
    pub byte_fallback: bool,
    /// the normalizer's `precompiled_charsmap` (empty without one)
    pub precompiled_charsmap: Vec<u8>,
    /// the normalizer's whitespace handling
    pub whitespace: SpmWhitespace,
}

/// How a SentencePiece normalizer treats spaces (`NormalizerSpec`; each on by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SpmWhitespace {
    /// `add_dummy_prefix`: a space put before the text (and dropped again when decoding)
    pub add_dummy_prefix: bool,
    /// `remove_extra_whitespaces`: leading and trailing spaces dropped, runs made one
    pub remove_extra: bool,
    /// `escape_whitespaces`: spaces written `▁`
    pub escape: bool,
}

impl SpmModel {
    /// Reads the model file at `path`.
    pub fn read(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|e| Error::format(path, e.to_string()))?;
        Self::parse(&bytes).map_err(|e| Error::format(path, format!("not a SentencePiece model: {e}")))
    }

    /// Parses a serialized `ModelProto`.
    pub fn parse(bytes: &[u8]) -> std::result::Result<Self, String> {
        let mut model = SpmModel {
            pieces: Vec::new(),
            model_type: SpmModelType::Unigram,
            unk_id: 0,
            byte_fallback: false,
            precompiled_charsmap: Vec::new(),
            whitespace: SpmWhitespace { add_dummy_prefix: true, remove_extra: true, escape: true },
        };
        for field in Fields::new(bytes) {
            match field? {
                (1, Value::Bytes(b)) => model.pieces.push(parse_piece(b)?),
                (2, Value::Bytes(b)) => {
                    for f in Fields::new(b) {
                        match f? {
                            (3, Value::Varint(t)) => {
                                model.model_type = match t {
                                    1 => SpmModelType::Unigram,
                                    2 => SpmModelType::Bpe,
                                    _ => SpmModelType::Other,
                                }
                            }
                            (35, Value::Varint(v)) => model.byte_fallback = v != 0,
                            // An int32: negative values are sign-extended to 64 bits.
                            (40, Value::Varint(v)) => model.unk_id = v as i64,
                            _ => {}
                        }
                    }
                }
                (3, Value::Bytes(b)) => {
                    for f in Fields::new(b) {
                        match f? {
                            (2, Value::Bytes(map)) => model.precompiled_charsmap = map.to_vec(),
                            (3, Value::Varint(v)) => model.whitespace.add_dummy_prefix = v != 0,
                            (4, Value::Varint(v)) => model.whitespace.remove_extra = v != 0,
                            (5, Value::Varint(v)) => model.whitespace.escape = v != 0,
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        if model.pieces.is_empty() {
            return Err("it has no pieces".into());
        }
        Ok(model)
    }
}

/// A `SentencePiece` message: `piece` (1), `score` (2, float), `type` (3, default NORMAL).
fn parse_piece(bytes: &[u8]) -> std::result::Result<Piece, String> {
    let mut piece = Piece { piece: String::new(), score: 0.0, kind: PieceKind::Normal };
    for field in Fields::new(bytes) {
        match field? {
            (1, Value::Bytes(b)) => {
                piece.piece = String::from_utf8(b.to_vec()).map_err(|_| "a piece is not UTF-8".to_string())?
            }
            (2, Value::Fixed32(bits)) => piece.score = f32::from_bits(bits),
            (3, Value::Varint(t)) => {
                piece.kind = match t {
                    1 => PieceKind::Normal,
                    2 => PieceKind::Unknown,
                    3 => PieceKind::Control,
                    4 => PieceKind::UserDefined,
                    5 => PieceKind::Unused,
                    6 => PieceKind::Byte,
                    other => return Err(format!("unknown piece type {other}")),
                }
            }
            _ => {}
        }
    }
    Ok(piece)
}

/// A field's value by wire type.
enum Value<'a> {
    Varint(u64),
    Fixed64,
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// The `(field number, value)`s of a serialized message, in order.
struct Fields<'a> {
    bytes: &'a [u8],
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Fields { bytes, failed: false }
    }

    fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut value = 0u64;
        for i in 0..10 {
            let (&byte, rest) = self.bytes.split_first().ok_or("truncated varint")?;
            self.bytes = rest;
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err(format!("a field of {n} bytes runs past the end ({} left)", self.bytes.len()));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn field(&mut self) -> std::result::Result<(u64, Value<'a>), String> {
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed64
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| "length overflows")?;
                Value::Bytes(self.take(n)?)
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            other => return Err(format!("unsupported wire type {other}")),
        };
        Ok((key >> 3, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = std::result::Result<(u64, Value<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.bytes.is_empty() || self.failed {
            return None;
        }
        let field = self.field();
        self.failed = field.is_err();
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers/deberta_spm.model");
        std::fs::read(path).unwrap()
    }

    /// The fixture model (`make_deberta_tokenizer_golden.py`): DeBERTa-v3's specials first, the
    /// user-defined symbol, then scored pieces.
    #[test]
    fn reads_the_pieces_and_the_trainer_settings() {
        let m = SpmModel::parse(&fixture()).unwrap();
        assert_eq!(
            (m.pieces.len(), m.model_type, m.unk_id, m.byte_fallback),
            (140, SpmModelType::Unigram, 3, false)
        );
        let kinds: Vec<_> = m.pieces[..6].iter().map(|p| (p.piece.as_str(), p.kind)).collect();
        use PieceKind::*;
        assert_eq!(
            kinds,
            [
                ("[PAD]", Control),
                ("[CLS]", Control),
                ("[SEP]", Control),
                ("[UNK]", Unknown),
                ("<uds>", UserDefined),
                ("▁", Normal)
            ]
        );
        assert!(m.pieces[5..].iter().all(|p| p.score < 0.0 && p.kind == Normal));
        let on = SpmWhitespace { add_dummy_prefix: true, remove_extra: true, escape: true };
        assert_eq!(m.whitespace, on);
        // (Trained with `remove_extra_whitespaces=False`.)
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tokenizers/llama_bpe.model");
        let llama = SpmModel::read(&path).unwrap();
        assert_eq!(llama.whitespace, SpmWhitespace { remove_extra: false, ..on });
    }

    /// Every truncation of the file, bytes flipped anywhere, and garbage are errors (or, cut between
    /// two fields, shorter models), never panics.
    #[test]
    fn malformed_models_are_errors() {
        let bytes = fixture();
        for n in 0..bytes.len() {
            // (A cut between two top-level fields is a shorter, valid model.)
            let _ = SpmModel::parse(&bytes[..n]);
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut flipped = bytes.clone();
            let at = (state % bytes.len() as u64) as usize;
            flipped[at] ^= (state >> 32) as u8 | 1;
            let _ = SpmModel::parse(&flipped);
        }
        assert!(SpmModel::parse(&[]).unwrap_err().contains("no pieces"));
        assert!(SpmModel::parse(&[0x0a, 0x05, 0x0a]).is_err());
        assert!(SpmModel::parse(&[0x0b]).unwrap_err().contains("wire type 3"));
        assert!(SpmModel::parse(&[0xff; 12]).unwrap_err().contains("varint"));
    }
}
