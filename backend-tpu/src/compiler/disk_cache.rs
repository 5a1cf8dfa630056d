//! The persistent compilation cache: serialized executables in a directory, one file per program.
//!
//! A file holds a magic tag, the program's full [`Fingerprint`] material and the plugin's
//! serialized executable. Loading compares the material byte for byte, so a hash collision, a
//! truncated or corrupt file, or an entry from another plugin build is a miss (the program is
//! compiled again and the entry rewritten), never a wrong executable. Entries are written to a
//! temporary file and renamed into place, so concurrent processes never see half an entry.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::fingerprint::Fingerprint;
use crate::pjrt::{Client, Executable};

const MAGIC: &[u8; 8] = b"OXTXLA01";

/// A directory of serialized executables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiskCache {
    dir: PathBuf,
}

impl DiskCache {
    /// A cache in `dir` (created on the first store).
    pub fn new(dir: impl Into<PathBuf>) -> DiskCache {
        DiskCache { dir: dir.into() }
    }

    /// The cache the environment asks for: `OXTORCH_XLA_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/oxtorch/xla`, else `~/.cache/oxtorch/xla`; `OXTORCH_XLA_CACHE=0` turns it
    /// off.
    pub fn from_env() -> Option<DiskCache> {
        if std::env::var("OXTORCH_XLA_CACHE").is_ok_and(|v| matches!(v.as_str(), "0" | "off" | "false")) {
            return None;
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = var("OXTORCH_XLA_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("oxtorch/xla")))
            .or_else(|| var("HOME").map(|d| d.join(".cache/oxtorch/xla")))?;
        Some(DiskCache::new(dir))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, fingerprint: &Fingerprint) -> PathBuf {
        self.dir.join(format!("{}.xlaexe", fingerprint.hex()))
    }

    /// The executable stored for `fingerprint`, loaded on `client`; `None` on a miss or an entry
    /// that does not belong to this program and plugin build.
    pub fn load(&self, client: &Client, fingerprint: &Fingerprint, text: &str) -> Option<Executable> {
        let bytes = fs::read(self.path(fingerprint)).ok()?;
        let exe = parse_entry(&bytes, fingerprint.material())?;
        Executable::deserialize(client, exe, text).ok()
    }

    /// Stores `exe` under `fingerprint`. Best effort: a cache that cannot be written (read-only
    /// directory, full disk, a plugin that cannot serialize) only means the next process compiles.
    pub fn store(&self, fingerprint: &Fingerprint, exe: &Executable) {
        let Ok(serialized) = exe.serialize() else { return };
        let _ = self.write_entry(fingerprint, &serialized);
    }

    fn write_entry(&self, fingerprint: &Fingerprint, serialized: &[u8]) -> std::io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let path = self.path(fingerprint);
        let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let tmp =
            self.dir.join(format!(".{}.{}.{}.tmp", fingerprint.hex(), std::process::id(), nonce.as_nanos()));
        let result = (|| {
            let mut file = fs::File::create(&tmp)?;
            let material = fingerprint.material();
            file.write_all(MAGIC)?;
            file.write_all(&(material.len() as u64).to_le_bytes())?;
            file.write_all(material)?;
            file.write_all(&(serialized.len() as u64).to_le_bytes())?;
            file.write_all(serialized)?;
            file.sync_all()?;
            fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }
}

/// The serialized executable inside an entry, when the entry is whole and its key material is
/// exactly `material`.
fn parse_entry<'a>(bytes: &'a [u8], material: &[u8]) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let (stored, rest) = take_field(rest)?;
    if stored != material {
        return None;
    }
    let (exe, rest) = take_field(rest)?;
    (rest.is_empty() && !exe.is_empty()).then_some(exe)
}

/// A little-endian u64 length followed by that many bytes.
fn take_field(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = bytes.split_first_chunk::<8>()?;
    let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
    (len <= rest.len()).then(|| rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(material: &[u8], exe: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(material.len() as u64).to_le_bytes());
        out.extend_from_slice(material);
        out.extend_from_slice(&(exe.len() as u64).to_le_bytes());
        out.extend_from_slice(exe);
        out
    }

    #[test]
    fn entries_parse_only_when_whole_and_matching() {
        let good = entry(b"key", b"exe");
        assert_eq!(parse_entry(&good, b"key"), Some(&b"exe"[..]));
        assert_eq!(parse_entry(&good, b"other key"), None);
        for cut in 0..good.len() {
            assert_eq!(parse_entry(&good[..cut], b"key"), None, "truncated at {cut}");
        }
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(parse_entry(&trailing, b"key"), None);
        let mut lying = good.clone();
        lying[8] = 0xff; // a material length far past the end
        assert_eq!(parse_entry(&lying, b"key"), None);
        assert_eq!(parse_entry(&entry(b"key", b""), b"key"), None);
    }
}
