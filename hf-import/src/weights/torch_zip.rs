//! A workaround for a misread of the zip archives `torch.save` writes.
//!
//! `torch.save` always ends its zip with a zip64 end-of-central-directory record and locator
//! (76 bytes) between the central directory and the classic end record, whose fields are not
//! saturated. The `zip` crate (9.8) guesses where the central directory starts as "the end
//! record's offset minus the directory's size": with the zip64 records in between, that guess lands
//! 76 bytes into the directory, and when a directory entry begins exactly there (the first entry's
//! record is 76 bytes long: a 30-character `<stem>/data.pkl`, i.e. any file saved under a
//! 21-character stem such as `model_checkpoint_best.pt`) the crate takes it for the start and
//! rejects the archive ("Invalid Central Directory header").
//!
//! [`patched_zip64_archive`] recognises that layout from the file's tail and a directory entry at
//! the crate's guess, and returns the archive
//! with the classic end record's directory offset set to `0xFFFF_FFFF`, which sends the crate to
//! the zip64 record and its exact offsets. Only the retry after a failed open pays for it (the
//! whole file is read into memory).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Size of the classic end-of-central-directory record without a comment.
const EOCD_LEN: u64 = 22;
/// Size of the zip64 end-of-central-directory locator.
const LOCATOR_LEN: u64 = 20;
const EOCD_MAGIC: [u8; 4] = *b"PK\x05\x06";
const LOCATOR_MAGIC: [u8; 4] = *b"PK\x06\x07";
const CDFH_MAGIC: [u8; 4] = *b"PK\x01\x02";
/// Byte offset of the central directory's offset field inside the classic end record.
const CD_OFFSET_FIELD: usize = 16;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Where the `zip` crate guesses the central directory starts, if the last `LOCATOR_LEN +
/// EOCD_LEN` bytes of an archive are a zip64 locator followed by a comment-less classic end record
/// whose fields are not saturated and whose directory does not end where the zip64 records begin
/// (every `torch.save` archive under 4 GiB); `None` otherwise.
fn misplaced_directory_start(tail: &[u8], file_len: u64) -> Option<u64> {
    let (locator, eocd) = tail.split_at(LOCATOR_LEN as usize);
    if locator[..4] != LOCATOR_MAGIC || eocd[..4] != EOCD_MAGIC || u16_at(eocd, 20) != 0 {
        return None;
    }
    let files = u16_at(eocd, 10);
    let cd_size = u32_at(eocd, 12);
    let cd_offset = u32_at(eocd, CD_OFFSET_FIELD);
    if files == u16::MAX || cd_size == u32::MAX || cd_offset == u32::MAX {
        return None;
    }
    let zip64_end = file_len.saturating_sub(EOCD_LEN + LOCATOR_LEN);
    if u64::from(cd_offset) + u64::from(cd_size) >= zip64_end {
        return None;
    }
    file_len.checked_sub(EOCD_LEN + u64::from(cd_size)).filter(|&guess| guess > u64::from(cd_offset))
}

/// The archive at `path` with its classic end record pointing at the zip64 record, if its tail has
/// the layout described in the module docs; `None` for every other file (or one that cannot be
/// read, whose error the first open already reported).
pub fn patched_zip64_archive(path: &Path) -> Option<Vec<u8>> {
    let mut file = File::open(path).ok()?;
    let file_len = file.metadata().ok()?.len();
    let tail_len = LOCATOR_LEN + EOCD_LEN;
    if file_len < tail_len {
        return None;
    }
    let mut tail = [0u8; (LOCATOR_LEN + EOCD_LEN) as usize];
    file.seek(SeekFrom::Start(file_len - tail_len)).ok()?;
    file.read_exact(&mut tail).ok()?;
    // The crate's mistake needs a directory entry to begin exactly where it guesses.
    let guess = misplaced_directory_start(&tail, file_len)?;
    let mut magic = [0u8; 4];
    file.seek(SeekFrom::Start(guess)).ok()?;
    file.read_exact(&mut magic).ok()?;
    if magic != CDFH_MAGIC {
        return None;
    }
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 != file_len {
        return None;
    }
    let field = bytes.len() - EOCD_LEN as usize + CD_OFFSET_FIELD;
    bytes[field..field + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tail(cd_offset: u32, cd_size: u32) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend_from_slice(&LOCATOR_MAGIC);
        t.extend_from_slice(&[0; 16]);
        t.extend_from_slice(&EOCD_MAGIC);
        t.extend_from_slice(&[0, 0, 0, 0, 8, 0, 8, 0]);
        t.extend_from_slice(&cd_size.to_le_bytes());
        t.extend_from_slice(&cd_offset.to_le_bytes());
        t.extend_from_slice(&[0, 0]);
        assert_eq!(t.len() as u64, LOCATOR_LEN + EOCD_LEN);
        t
    }

    #[test]
    fn recognises_torch_zip64_tails_only() {
        // torch's layout: directory 1208..1843, zip64 record and locator, end record at 1919; the
        // crate's guess is 1919 - 635 = 1284.
        assert_eq!(misplaced_directory_start(&tail(1208, 635), 1941), Some(1284));
        // A directory that ends right at the locator leaves no gap to misplace.
        assert_eq!(misplaced_directory_start(&tail(1264, 635), 1941), None);
        // Saturated fields already send the crate to the zip64 record.
        assert_eq!(misplaced_directory_start(&tail(u32::MAX, 635), 1941), None);
        let mut no_locator = tail(1208, 635);
        no_locator[0] = b'X';
        assert_eq!(misplaced_directory_start(&no_locator, 1941), None);
    }
}
