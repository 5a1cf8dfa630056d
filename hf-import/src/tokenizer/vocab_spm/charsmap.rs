//! SentencePiece's own reading of a precompiled charsmap (`normalizer.cc`): at each place the
//! longest rule of its double-array trie that the text's bytes start with is applied, else one
//! character is kept. The `tokenizers` crate's `Precompiled` step instead looks a whole grapheme
//! up and takes its shortest rule, dropping the rest of the grapheme (`Ａ` and a combining accent
//! give `A`, where SentencePiece's longer rule gives `Á`); the slow tokenizers read here are
//! SentencePiece's. A malformed charsmap is an error when read, and never a panic when used.

/// A charsmap: the trie's units and the replacements they point into (each ends with a NUL).
#[derive(Debug, Clone)]
pub(super) struct Charsmap {
    units: Vec<u32>,
    replacements: Vec<u8>,
}

impl Charsmap {
    /// Reads a `precompiled_charsmap` (the trie's size in bytes as a little-endian `u32`, the trie,
    /// then the replacements).
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        let size = bytes.get(..4).ok_or("the charsmap is shorter than its header")?;
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize;
        let trie = bytes.get(4..4 + size).filter(|t| t.len() % 4 == 0 && !t.is_empty());
        let trie = trie.ok_or_else(|| format!("the charsmap's trie of {size} bytes does not fit in it"))?;
        let units = trie.chunks_exact(4).map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]])).collect();
        Ok(Charsmap { units, replacements: bytes[4 + size..].to_vec() })
    }

    /// The longest rule `key` starts with: its length in bytes and where its replacement starts.
    fn longest_rule(&self, key: &[u8]) -> Option<(usize, usize)> {
        // darts-clone's units: the child offset, the label, and a leaf flag; a leaf unit's value.
        let offset = |u: u32| ((u >> 10) << ((u & (1 << 9)) >> 6)) as usize;
        let label = |u: u32| (u & ((1 << 31) | 0xFF)) as usize;
        let has_leaf = |u: u32| (u >> 8) & 1 == 1;
        let mut node = offset(*self.units.first()?);
        let mut longest = None;
        for (i, &c) in key.iter().enumerate() {
            if c == 0 {
                break;
            }
            node ^= c as usize;
            let unit = *self.units.get(node)?;
            if label(unit) != c as usize {
                break;
            }
            node ^= offset(unit);
            if has_leaf(unit) {
                let value = (*self.units.get(node)? & ((1 << 31) - 1)) as usize;
                longest = Some((i + 1, value));
            }
        }
        longest
    }

    /// `text` with the rules applied as SentencePiece applies them.
    pub fn normalize(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out: Vec<u8> = Vec::with_capacity(bytes.len());
        let mut at = 0;
        while at < bytes.len() {
            match self.longest_rule(&bytes[at..]) {
                Some((len, value)) => {
                    let rest = self.replacements.get(value..).unwrap_or_default();
                    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
                    out.extend_from_slice(&rest[..end]);
                    at += len;
                }
                None => {
                    // (A rule ends inside a character only in a malformed charsmap: then a byte.)
                    let len = match text.is_char_boundary(at) {
                        true => text[at..].chars().next().map_or(1, char::len_utf8),
                        false => 1,
                    };
                    out.extend_from_slice(&bytes[at..at + len]);
                    at += len;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::Charsmap;
    use crate::tokenizer::sentencepiece::SpmModel;

    fn fixture() -> Charsmap {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/tokenizers/marian/source.spm");
        Charsmap::parse(&SpmModel::read(&path).unwrap().precompiled_charsmap).unwrap()
    }

    /// nmt_nfkc's rules as SentencePiece applies them (`SentencePieceProcessor.normalize` before
    /// its space handling): fullwidth letters, ligatures and enclosed numbers folded, spaces of
    /// other widths made spaces, a fullwidth letter and an accent composed by the longer rule, an
    /// accent after a space kept.
    #[test]
    fn applies_the_longest_rule_at_each_place() {
        let charsmap = fixture();
        assert_eq!(charsmap.normalize("ＡＢＣ ﬁ ①"), "ABC fi 1");
        assert_eq!(charsmap.normalize("x\u{3000}y\u{a0}z"), "x y z");
        // (The rule for the pair wins over the fullwidth letter's: SentencePiece's `Á`.)
        assert_eq!(charsmap.normalize("Ａ\u{301}"), "\u{c1}");
        assert_eq!(charsmap.normalize("x\u{3000}\u{301}y"), "x \u{301}y");
        assert_eq!(charsmap.normalize("plain text"), "plain text");
    }

    /// Truncated or lying charsmaps are errors; garbage ones never panic when applied.
    #[test]
    fn malformed_charsmaps_are_errors_or_harmless() {
        assert!(Charsmap::parse(&[1, 0]).is_err());
        assert!(Charsmap::parse(&[255, 255, 255, 255, 0, 0]).is_err());
        assert!(Charsmap::parse(&[0, 0, 0, 0]).is_err());
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..200 {
            let mut bytes = vec![16, 0, 0, 0];
            for _ in 0..40 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                bytes.push(state as u8);
            }
            if let Ok(charsmap) = Charsmap::parse(&bytes) {
                let _ = charsmap.normalize("ab\u{301}c ＡＢ 漢字 \u{0}x");
            }
        }
    }
}
